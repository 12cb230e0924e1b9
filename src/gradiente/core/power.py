"""Powers of arrays rounded as PyTorch's CPU kernels round them: the forward ``pow`` and its derivative rules
(``x ** (p - 1)``) share them, so a gradient derived by hand with ``**`` is autograd's to the last bit."""
import numpy as np

from . import vml_sqrt
from .vector_exp import sleef_pow
from .vector_loop import in_vector_blocks


def power(xa, p):
    """``xa ** p`` for an array and a number, as PyTorch's CPU kernel computes it."""
    # Small integer powers as products, as PyTorch's kernels do: x**2 must equal x*x to the last bit.
    if p == 2:
        return xa * xa
    if p == 1:
        return xa.copy()
    if p == 0.5:
        return vml_sqrt.sqrt(xa)            # PyTorch's kernel takes its sqrt for this power
    if p == -1:
        return np.reciprocal(xa)
    if p == 3:
        return xa * xa * xa
    if p == -2:
        return np.reciprocal(xa * xa)
    if p == -0.5:
        return np.reciprocal(np.sqrt(xa))
    if xa.dtype == np.float32 and np.ndim(p) == 0 and not isinstance(p, complex):
        # PyTorch's loop: Sleef's powf on its vectors, the C library's powf (correctly rounded here) on the rest
        return in_vector_blocks(xa, lambda v: sleef_pow(v, p), lambda s: rounded_power(s, p))
    return rounded_power(xa, p)


def rounded_power(base, exponent):
    """np.power, but float32 powers computed in double and rounded once, as the C library's powf (PyTorch's scalar
    code) rounds them; NumPy's float32 power agrees in about 80% of elements. (PyTorch's vector code is Sleef's:
    ``power`` takes it there.)"""
    if np.result_type(base, exponent) != np.float32:
        return np.power(base, exponent)
    # a number on either side is a float32 operand, as PyTorch wraps it
    base = np.float32(base) if np.ndim(base) == 0 else base
    exponent = np.float32(exponent) if np.ndim(exponent) == 0 else exponent
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.power(np.asanyarray(base, np.float64), np.asanyarray(exponent, np.float64)).astype(np.float32)
