"""Matrix products and transposes: matmul, mm, t (others are added by the linear-algebra family)."""
import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from ._record import as_result, promote_operands, record, tensor_method, wants_grad

__all__ = ["matmul", "mm", "t"]


class MmBackward0(Node):
    """out = x @ y (2-D);  dx = grad @ yᵀ;  dy = xᵀ @ grad"""
    __slots__ = ()
    formula = "∂(XY)/∂X = G·Yᵀ,  ∂(XY)/∂Y = Xᵀ·G"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (ops.matmul(grad, y.T) if edges[0][0] is not None else None,
                ops.matmul(x.T, grad) if edges[1][0] is not None else None)


class DotBackward0(Node):
    """out = x · y (1-D);  dx = grad * y;  dy = grad * x"""
    __slots__ = ()
    formula = "∂(x·y)/∂x = y,  ∂(x·y)/∂y = x"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (grad * y if edges[0][0] is not None else None, grad * x if edges[1][0] is not None else None)


class MvBackward0(Node):
    """out = A @ v;  dA = outer(grad, v);  dv = Aᵀ @ grad"""
    __slots__ = ()
    formula = "∂(Av)/∂A = g·vᵀ,  ∂(Av)/∂v = Aᵀ·g"

    def backward(self, ops, grad):
        a, v = self.saved(ops)
        edges = self.next_functions
        return (ops.matmul(ops.unsqueeze(grad, 1), ops.unsqueeze(v, 0)) if edges[0][0] is not None else None,
                ops.matmul(a.T, grad) if edges[1][0] is not None else None)


class UnsafeViewBackward0(Node):
    """out = x reshaped (after a batched product);  dx = grad reshaped back"""
    __slots__ = ()
    formula = "reshape: gradient reshaped back"

    def backward(self, ops, grad):
        return (ops.reshape(grad, self._input_meta[0][0]),)


class BmmBackward0(Node):
    """out = x @ y (batched 3-D);  dx = grad @ yᵀ;  dy = xᵀ @ grad"""
    __slots__ = ()
    formula = "∂(XY)/∂X = G·Yᵀ,  ∂(XY)/∂Y = Xᵀ·G (per batch)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (ops.matmul(grad, ops.transpose(y, -1, -2)) if edges[0][0] is not None else None,
                ops.matmul(ops.transpose(x, -1, -2), grad) if edges[1][0] is not None else None)


def _check_matmul(xa, ya, name):
    if xa.ndim == 0 or ya.ndim == 0:
        raise RuntimeError(f"both arguments to {name} need to be at least 1D, but they are {xa.ndim}D and {ya.ndim}D")


@tensor_method("matmul", "__matmul__")
def matmul(input, other):
    """Matrix product with NumPy/PyTorch broadcasting rules (1-D operands are vectors)."""
    xa, ya, target = promote_operands(input, other)
    _check_matmul(xa, ya, "matmul")
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {input.dtype} != {other.dtype}")
    if xa.ndim == 1 and ya.ndim == 1:
        return dot(input, other)
    if xa.ndim == 2 and ya.ndim == 2:
        return mm(input, other)
    if xa.ndim == 2 and ya.ndim == 1:
        return mv(input, other)
    if xa.ndim == 1 and ya.ndim == 2:
        # PyTorch records this as unsqueeze -> mm -> squeeze.
        return mm(input.unsqueeze(0), other).squeeze(0)
    _check_inner(xa.shape[-1], ya.shape[-2] if ya.ndim > 1 else ya.shape[0], xa, ya)
    out = as_result(np.matmul(xa, ya), target)
    if wants_grad(input, other):
        record(BmmBackward0, (input, other), out, (input, other))
    return out


@tensor_method("__rmatmul__")
def _rmatmul(self, other):
    return matmul(other, self)


def _check_inner(k1, k2, xa, ya):
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, xa.shape[-2:] if xa.ndim > 1 else (1, xa.shape[0])))}"
                           f" and {'x'.join(map(str, ya.shape[-2:] if ya.ndim > 1 else ya.shape))})")


@tensor_method("mm")
def mm(input, mat2):
    """2-D matrix product."""
    xa, ya = input._data, mat2._data
    if xa.ndim != 2:
        raise RuntimeError(f"self must be a matrix")
    if ya.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix")
    if xa.shape[1] != ya.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({xa.shape[0]}x{xa.shape[1]} and "
                           f"{ya.shape[0]}x{ya.shape[1]})")
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {input.dtype} != {mat2.dtype}")
    out = as_result(np.matmul(xa, ya), xa.dtype)
    if wants_grad(input, mat2):
        record(MmBackward0, (input, mat2), out, (input, mat2))
    return out


@tensor_method("mv")
def mv(input, vec):
    """Matrix-vector product."""
    xa, va = input._data, vec._data
    if xa.shape[1] != va.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({xa.shape[0]}), mat ({xa.shape[0]}x{xa.shape[1]}), "
                           f"vec ({va.shape[0]})")
    out = as_result(np.matmul(xa, va), xa.dtype)
    if wants_grad(input, vec):
        record(MvBackward0, (input, vec), out, (input, vec))
    return out


@tensor_method("dot", "inner")
def dot(input, other):
    """Inner product of two 1-D tensors."""
    xa, ya = input._data, other._data
    if xa.ndim != 1 or ya.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {xa.ndim}D and {ya.ndim}D tensors")
    if xa.shape[0] != ya.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of "
                           "elements, but got %d and %d elements respectively" % (xa.shape[0], ya.shape[0],
                                                                                  xa.shape[0], ya.shape[0]))
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {input.dtype.__repr__()[10:].capitalize()} and {other.dtype.__repr__()[10:].capitalize()}")
    out = as_result(np.dot(xa, ya), xa.dtype)
    if wants_grad(input, other):
        record(DotBackward0, (input, other), out, (input, other))
    return out


class TBackward0(Node):
    """out = xᵀ;  dx = gradᵀ"""
    __slots__ = ()
    formula = "transpose: gradient transposed back"

    def backward(self, ops, grad):
        return (grad.T,)


@tensor_method("t")
def t(input):
    """Transpose of a tensor of at most 2 dims (a view)."""
    a = input._data
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    out = Tensor._make(a.T)
    out._version_box, out._base = input._version_box, input if input._base is None else input._base
    if wants_grad(input):
        record(TBackward0, (input,), out)
    return out
