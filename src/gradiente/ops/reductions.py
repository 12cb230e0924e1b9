"""Reductions: sum, mean, and (added by the op-family modules) the rest, each with ``dim``/``keepdim``."""
import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node
from ._record import as_result, record, tensor_method, wants_grad

__all__ = ["sum", "mean", "normalize_dims", "expand_reduced"]


def normalize_dims(dim, ndim):
    """``dim`` (None, an int, or a sequence) as a sorted tuple of non-negative axes; None means all."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (_wrap_dim(int(dim), ndim),)
    dims = tuple(sorted(_wrap_dim(int(d), ndim) for d in dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims or tuple(range(ndim))


def expand_reduced(ops, grad, axes, keepdim, shape):
    """Broadcast a reduced gradient back over the reduced ``axes`` to ``shape``."""
    if not keepdim:
        for a in axes:
            if a < len(shape):
                grad = ops.unsqueeze(grad, a)
    return ops.expand(grad, shape)


class SumBackward0(Node):
    """out = Σ x;  dx = grad broadcast to x's shape"""
    formula = "∂(Σᵢ xᵢ)/∂xⱼ = 1"

    def backward(self, ops, grad):
        return (ops.expand(grad, self.shape),)


class SumBackward1(Node):
    """out = Σ over dims of x;  dx = grad broadcast back over the summed dims"""
    formula = "∂(Σᵢ xᵢ)/∂xⱼ = 1"

    def backward(self, ops, grad):
        return (expand_reduced(ops, grad, self.axes, self.keepdim, self.shape),)


class MeanBackward0(Node):
    """out = (1/n) Σ x;  dx = grad / n broadcast to x's shape"""
    formula = "∂(1/n Σᵢ xᵢ)/∂xⱼ = 1/n"

    def backward(self, ops, grad):
        return (ops.expand(grad / self.count, self.shape),)


class MeanBackward1(Node):
    """out = mean over dims of x;  dx = grad / n broadcast back over the reduced dims"""
    formula = "∂(1/n Σᵢ xᵢ)/∂xⱼ = 1/n"

    def backward(self, ops, grad):
        return (expand_reduced(ops, grad / self.count, self.axes, self.keepdim, self.shape),)


def _sum_dtype(a, dtype):
    if dtype is not None:
        return dtype._np
    return np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype


@tensor_method("sum")
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim`` (an int or a tuple). Integers sum to int64, as in PyTorch."""
    a = input._data
    target = _sum_dtype(a, dtype)
    if dim is None and not keepdim:
        out = as_result(a.sum(dtype=target), target)
        if wants_grad(input):
            record(SumBackward0, (input,), out, shape=a.shape)
        return out
    axes = normalize_dims(dim, a.ndim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else tuple(range(a.ndim))
    out = as_result(a.sum(axis=axes, dtype=target, keepdims=keepdim), target)
    if wants_grad(input):
        record(SumBackward1, (input,), out, shape=a.shape, axes=axes, keepdim=keepdim)
    return out


@tensor_method("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean of all elements, or over ``dim``; floating (or complex) tensors only, as in PyTorch."""
    a = input._data
    if dtype is not None:
        a = a.astype(dtype._np)
    if a.dtype.kind not in "fc":
        name = dt.FROM_NUMPY[a.dtype]._legacy.replace("Tensor", "")
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {name}")
    if dim is None and not keepdim:
        out = as_result(a.mean(), a.dtype)
        if wants_grad(input):
            record(MeanBackward0, (input,), out, shape=a.shape, count=max(a.size, 1) if a.size else 0)
        return out
    axes = normalize_dims(dim, a.ndim)
    out = as_result(a.mean(axis=axes, keepdims=keepdim), a.dtype)
    if wants_grad(input):
        count = int(np.prod([a.shape[i] for i in axes])) if a.ndim else 1
        record(MeanBackward1, (input,), out, shape=a.shape, axes=axes, keepdim=keepdim, count=count)
    return out


Tensor.sum_to_size = lambda self, *size: _sum_to_size(self, size[0] if len(size) == 1 and
                                                            isinstance(size[0], (tuple, list)) else size)


def _sum_to_size(x, shape):
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.dim() - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    out = sum(x, axes, keepdim=True) if axes else x
    return out.reshape(shape) if lead else out
