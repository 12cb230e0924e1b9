"""Filling and copying in place: ``zero_``, ``fill_`` (and its out-of-place ``fill``), ``copy_``."""
import numpy as np

from ..core.errors import broadcast_shape
from ..core.inplace import apply_inplace
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor

__all__ = [
    "fill",
    "fill_",
    "zero_",
]


class ZeroBackward0(Node):
    """out = 0 (x overwritten);  dx = 0;  out' = 0"""
    complex_ok = True
    formula = "d/dx 0 = 0"

    def backward(self, ops, grad):
        return (ops.zeros_like(grad),)

    def jvp(self, ops, x_t):
        return None


class FillBackward0(Node):
    """out = c everywhere (c a number);  dx = 0;  out' = 0"""
    complex_ok = True
    formula = "d/dx c = 0"

    def backward(self, ops, grad):
        return (ops.zeros_like(grad),)

    def jvp(self, ops, x_t):
        return None


class FillBackward1(Node):
    """out = v everywhere (v a 0-d tensor);  dx = 0;  dv = Σ grad"""
    complex_ok = True
    formula = "∂fill(x, v)/∂x = 0,  ∂fill(x, v)/∂v = Σ grad"

    def backward(self, ops, grad):
        edges = self.next_functions
        return (ops.zeros_like(grad) if edges[0][0] is not None else None,
                ops.sum(grad) if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, v_t):
        return v_t          # a 0-d tangent, broadcast to the output by the forward-mode engine


class FillBackward2(FillBackward0):
    """out = c everywhere (``x.fill_(c)``, c a number);  dx = 0"""


class FillBackward3(FillBackward1):
    """out = v everywhere (``x.fill_(v)``, v a 0-d tensor);  dx = 0;  dv = Σ grad"""


class CopyBackwards(Node):
    """out = src broadcast to x's shape and dtype (``x.copy_(src)``);  dx = 0;  dsrc = grad"""
    complex_ok = True
    formula = "∂copy/∂x = 0,  ∂copy/∂src = 1"

    def name(self):
        return "torch::autograd::CopyBackwards"        # PyTorch's C++ name, as its messages show it

    def backward(self, ops, grad):
        edges = self.next_functions
        return (ops.zeros_like(grad) if edges[0][0] is not None else None,
                grad if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, src_t):
        return src_t


def _filled(input, value, by_number, by_tensor):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        result = wrap(np.full(input._data.shape, value._data, dtype=input._data.dtype))
        if wants_grad(input, value):
            record(by_tensor, (input, value), result)
        return result
    result = wrap(np.full(input._data.shape, value, dtype=input._data.dtype))
    if wants_grad(input):
        record(by_number, (input,), result)
    return result


def fill(input, value):
    """A tensor shaped and typed like ``input``, filled with ``value`` (a number or a 0-d tensor)."""
    return _filled(input, value, FillBackward0, FillBackward1)


def fill_(input, value):
    """Fill ``input`` with ``value`` (a number or a 0-d tensor) in place."""
    return apply_inplace(input, lambda old: _filled(old, value, FillBackward2, FillBackward3))


def _zeros(input):
    result = wrap(np.zeros(input._data.shape, dtype=input._data.dtype))
    if wants_grad(input):
        record(ZeroBackward0, (input,), result)
    return result


def zero_(input):
    """Fill ``input`` with zeros in place and return it; ``p.grad.zero_()`` empties a gradient between training
    steps, since backward adds into ``.grad``."""
    return apply_inplace(input, _zeros)


def _copied(input, src):
    shape = broadcast_shape(input._data.shape, src._data.shape)
    result = wrap(np.broadcast_to(src._data, shape).astype(input._data.dtype, order="C"))
    if wants_grad(input, src):
        record(CopyBackwards, (input, src), result)
    return result


def copy_(input, src, non_blocking=False):
    """Copy the values of ``src`` (broadcast to ``input``'s shape, converted to its dtype) into ``input``.
    The gradient flows to ``src``. A Python number is read as a 0-d tensor, as PyTorch's argument parser reads it."""
    if isinstance(src, (bool, int, float, complex)):
        src = wrap(np.asanyarray(src))
    elif not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    return apply_inplace(input, lambda old: _copied(old, src), (src,))

