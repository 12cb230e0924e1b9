"""Powers of arrays rounded as PyTorch's CPU kernels round them: the forward ``pow`` and its derivative rules
(``x ** (p - 1)``) share them, so a gradient derived by hand with ``**`` is autograd's to the last bit."""
import numpy as np


def power(xa, p):
    """``xa ** p`` for an array and a number, as PyTorch's CPU kernel computes it."""
    # Small integer powers as products, as PyTorch's kernels do: x**2 must equal x*x to the last bit.
    if p == 2:
        return xa * xa
    if p == 1:
        return xa.copy()
    if p == 0.5:
        return np.sqrt(xa)
    if p == -1:
        return np.reciprocal(xa)
    if p == 3:
        return xa * xa * xa
    if p == -2:
        return np.reciprocal(xa * xa)
    if p == -0.5:
        return np.reciprocal(np.sqrt(xa))
    return rounded_power(xa, p)


def rounded_power(base, exponent):
    """np.power, but float32 powers computed in double and rounded once. PyTorch's float32 pow (SLEEF's, accurate
    to 1 ulp) agrees with the correctly rounded power in about 98% of elements, NumPy's float32 power in about 80%;
    a loop that stops on a threshold (pytorch/examples' regression, x**4) then stops at another step."""
    if np.result_type(base, exponent) != np.float32:
        return np.power(base, exponent)
    # a number on either side is a float32 operand, as PyTorch wraps it
    base = np.float32(base) if np.ndim(base) == 0 else base
    exponent = np.float32(exponent) if np.ndim(exponent) == 0 else exponent
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.power(np.asanyarray(base, np.float64), np.asanyarray(exponent, np.float64)).astype(np.float32)
