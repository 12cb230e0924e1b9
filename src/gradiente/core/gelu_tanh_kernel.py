"""GELU's tanh approximation of float32 arrays, and its derivative, as PyTorch's CPU kernels compute them
(``GeluKernelImpl`` and ``GeluBackwardKernelImpl`` in ATen's ``Activation.cpp``, torch 2.13, one thread), so that a
GPT-2-style model (``nn.GELU(approximate='tanh')``) trains to PyTorch's losses.

With β = √(2/π) and κ = 0.044715, both rounded to float32::

    inner = β·fma(κ, x³, x)                      (x³ as (x·x)·x)
    gelu  = (0.5·x)·(1 + tanh(inner))
    dx    = dy·(0.5·(1 + t) + ((0.5·x)·fma(−t, t, 1))·(β·fma(3κ, x², 1)))     with t = tanh(inner)

(GCC contracts the multiply-adds written so; measured against torch 2.13: every element equal.) ATen's loop takes
its elements two 16-lane vectors at a time, where ``tanh`` is Sleef's (``vector_exp.sleef_tanh``), and the last
``n mod 32`` on their own, where it is the C library's (``c_fdlibm.c_tanhf``); over a dense array in memory order,
else row by row (``_runs``).
"""
import math

import numpy as np

from .c_fdlibm import c_tanhf
from .fused import fma
from .vector_exp import sleef_tanh

__all__ = ["applies", "gelu_tanh", "gelu_tanh_derivative_times"]

_F32 = np.float32
_BETA = _F32(math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5)
_KAPPA = _F32(0.044715)
_THREE_KAPPA = _F32(3) * _KAPPA
_PAIR_OF_VECTORS = 32


def applies(*arrays):
    """Whether these are float32 arrays, as this kernel takes them."""
    return all(a.dtype == np.float32 for a in arrays)


def _runs(*arrays):
    """The operands' elements as rows of ATen's inner loop, and how to give a result the first one's shape.

    ATen's loop runs over dense operands of one layout as one row, in memory order; otherwise row by row along the
    last dimension, vectorized where every operand's elements there are adjacent, else element by element (rows of
    one). (The result is a fresh array either way.)"""
    first = arrays[0]
    if all(a.flags.c_contiguous for a in arrays):
        return [a.reshape(1, -1) for a in arrays], lambda rows: rows.reshape(first.shape)
    if all(a.flags.f_contiguous for a in arrays):
        return [a.T.reshape(1, -1) for a in arrays], lambda rows: rows.reshape(first.shape[::-1]).T
    adjacent = all(a.strides[-1] == a.itemsize or a.shape[-1] == 1 for a in arrays) if first.ndim else True
    width = first.shape[-1] if first.ndim and adjacent else 1
    return ([np.ascontiguousarray(a).reshape(-1, width) for a in arrays],
            lambda rows: rows.reshape(first.shape))


def _tanh(inner):
    """tanh of each row: Sleef's on the pairs of vectors that fill it, the C library's on the rest."""
    body = inner.shape[1] - inner.shape[1] % _PAIR_OF_VECTORS
    if body == inner.shape[1]:
        return sleef_tanh(inner)
    if body == 0:
        return c_tanhf(inner)
    return np.concatenate([sleef_tanh(inner[:, :body]), c_tanhf(inner[:, body:])], axis=1)


def _inner(x):
    return _BETA * fma(_KAPPA, x * x * x, x, _F32)


def gelu_tanh(a):
    """GELU (tanh approximation) of a float32 array, a new array of its shape."""
    (x,), restore = _runs(a)
    with np.errstate(over="ignore", invalid="ignore"):
        out = (_F32(0.5) * x) * (_F32(1) + _tanh(_inner(x)))
    return restore(out)


def gelu_tanh_derivative_times(grad, a):
    """``grad`` times the derivative of GELU (tanh approximation) at ``a`` (float32 arrays of one shape)."""
    (dy, x), restore = _runs(np.broadcast_to(grad, a.shape), a)
    with np.errstate(over="ignore", invalid="ignore"):
        t = _tanh(_inner(x))
        left_derivative = _F32(0.5) * (_F32(1) + t)
        tanh_derivative = fma(-t, t, _F32(1), _F32)
        inner_derivative = _BETA * fma(_THREE_KAPPA, x * x, _F32(1), _F32)
        right_derivative = ((_F32(0.5) * x) * tanh_derivative) * inner_derivative
        return restore(dy * (left_derivative + right_derivative))
