"""Reductions, each with ``dim``/``keepdim``: sum, mean, prod, max/min (full, and along a dim with indices),
amax/amin, argmax/argmin, median, var/std, norm, logsumexp, all/any, count_nonzero; and the scans cumsum
and cumprod.

Numerics follow PyTorch's CPU kernels where NumPy allows: var, std and the scans accumulate float32 in
double; ties in max/amax/median share the gradient as PyTorch shares it.
"""
import math
import warnings

import numpy as np

from ..core import dtype as dt
from ..core import grad_mode, return_types
from ..core.creation import c_order
from ..core.dtype import scalar_name
from ..core.node import Node
from ..core.record import as_result as _as_result
from ..core.record import record, wants_grad
from ..core.record import wrap as _wrap
from ..core.rules import numpy_ops
from ..core.summation import torch_order_sums, vector_row_norms
from ..core.tensor import Tensor, _wrap_dim
from ..core.warnings_at_caller import warn
from .autocast import autocast_entry
from .views import select, slice_dim, view

__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum", "logsumexp",
           "max", "mean", "median", "min", "norm", "prod", "std", "sum", "var", "var_mean", "std_mean", "aminmax",
           "nanmedian", "renorm", "trapezoid", "trapz", "cumulative_trapezoid", "nansum", "nanmean", "logcumsumexp"]


# PyTorch allocates each reduction's (and scan's) output afresh, C-contiguous; NumPy's keeps the layout of a
# transposed input. Every result of this module is wrapped by these two, so their strides are PyTorch's.
def wrap(array):
    return _wrap(c_order(array))


def as_result(array, dtype_np=None):
    return _as_result(c_order(array), dtype_np)


def normalize_dims(dim, ndim):
    """``dim`` (None, an int, or a sequence) as a sorted tuple of non-negative axes; None and () mean all.
    A 0-d tensor accepts dim 0 and -1 (as PyTorch does) and has no axes to reduce: ()."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        d = _wrap_dim(int(dim), ndim)
        return (d,) if ndim else ()
    dims = [_wrap_dim(int(d), ndim) for d in dim]
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if not dims or not ndim:
        return tuple(range(ndim))
    return tuple(sorted(dims))


def expand_reduced(ops, grad, axes, keepdim, shape):
    """Broadcast a reduced gradient back over the reduced ``axes`` to ``shape``."""
    if not keepdim:
        for a in axes:
            if a < len(shape):
                grad = ops.unsqueeze(grad, a)
    return ops.expand(grad, shape)


class SumBackward0(Node):
    """out = Σ x;  dx = grad broadcast to x's shape;  out' = Σ x'"""
    complex_ok = True
    formula = "∂(Σᵢ xᵢ)/∂xⱼ = 1"
    shape: tuple        # x's

    def backward(self, ops, grad):
        return (ops.expand(grad, self.shape),)

    def jvp(self, ops, x_t):
        return ops.sum(x_t)


class SumBackward1(Node):
    """out = Σ over dims of x;  dx = grad broadcast back over the summed dims;  out' = Σ x' over the dims"""
    complex_ok = True
    formula = "∂(Σᵢ xᵢ)/∂xⱼ = 1"
    shape: tuple        # x's
    axes: tuple         # the summed dims, non-negative
    keepdim: bool

    def backward(self, ops, grad):
        return (expand_reduced(ops, grad, self.axes, self.keepdim, self.shape),)

    def jvp(self, ops, x_t):
        return ops.sum(x_t, self.axes, self.keepdim)


class MeanBackward0(Node):
    """out = (1/n) Σ x;  dx = grad / n broadcast to x's shape;  out' = (1/n) Σ x'"""
    complex_ok = True
    formula = "∂(1/n Σᵢ xᵢ)/∂xⱼ = 1/n"
    shape: tuple        # x's
    count: int          # n

    def backward(self, ops, grad):
        return (ops.expand(grad / self.count, self.shape),)

    def jvp(self, ops, x_t):
        return ops.mean(x_t, None)


class MeanBackward1(Node):
    """out = mean over dims of x;  dx = grad / n broadcast back over the reduced dims;  out' = mean of x' over
    the dims"""
    complex_ok = True
    formula = "∂(1/n Σᵢ xᵢ)/∂xⱼ = 1/n"
    shape: tuple        # x's
    axes: tuple         # the reduced dims, non-negative
    keepdim: bool
    count: int          # n, the elements in each mean

    def backward(self, ops, grad):
        if ops.recording:       # PyTorch's formula: the gradient broadcast back, then divided by n (DivBackward1)
            return (ops.over_number(expand_reduced(ops, grad, self.axes, self.keepdim, self.shape), self.count),)
        return (expand_reduced(ops, grad / self.count, self.axes, self.keepdim, self.shape),)

    def jvp(self, ops, x_t):
        return ops.mean(x_t, self.axes, self.keepdim)


def _sum_dtype(a, dtype):
    if dtype is not None:
        return dtype._np
    return np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype


def _accumulator(target):
    """The type a sum accumulates in: float32 for bfloat16 (rounded once at the end, as PyTorch's CPU sum)."""
    return np.float32 if target == dt.BFLOAT16 else target


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim`` (an int or a tuple). Integers sum to int64, as in PyTorch."""
    a = input._data
    target = _sum_dtype(a, dtype)
    # np.add.reduce is what ndarray.sum calls; called from here, an overflow's RuntimeWarning is gradiente's own and
    # silenced (PyTorch gives inf without a word)
    if dim is None and not keepdim:
        out = as_result(_total(a, target), target)
        if wants_grad(input):
            record(SumBackward0, (input,), out, shape=a.shape)
        return out
    if getattr(input, "_sparse_size", None) is not None:
        # torch.sum(sparse, dim): the sparse tensor's own sum (its _data holds only the stored values)
        return input.sum(dim, keepdim, dtype=dtype)
    all_dims = isinstance(dim, (tuple, list)) and len(dim) == 0
    axes = tuple(range(a.ndim)) if all_dims else normalize_dims(dim, a.ndim)
    values = _sums(a, axes, target, keepdim)
    out = as_result(_contiguous_strides(values) if keepdim else values, target)
    if wants_grad(input):
        record(SumBackward1, (input,), out, shape=a.shape, axes=axes, keepdim=keepdim)
    return out


# The sums a program prints, of all of a contiguous float tensor or along its last dim, are added in PyTorch's
# order (core/summation.py), so that they round as PyTorch's do; any other sum is NumPy's.

def _total(a, target):
    """The sum of all of ``a``, as ``target``."""
    values = torch_order_sums(a, tuple(range(a.ndim))) if a.dtype == target else None
    return np.add.reduce(a, axis=None, dtype=_accumulator(target)) if values is None else values[0]


def _sums(a, axes, target, keepdim):
    """``a`` summed over ``axes`` (normalized), as ``target``."""
    values = torch_order_sums(a, axes) if a.dtype == target else None
    if values is None:
        return np.add.reduce(a, axis=axes, dtype=_accumulator(target), keepdims=keepdim)
    return values.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape)) if keepdim else
                          tuple(n for i, n in enumerate(a.shape) if i not in axes))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean of all elements, or over ``dim``; floating (or complex) tensors only, as in PyTorch."""
    a = input._data
    if dtype is not None:
        a = a.astype(dtype._np)
    if dt.kind(a.dtype) not in "fc":
        name = dt.scalar_name(a.dtype)
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {name}")
    if dim is None and not keepdim:
        out = as_result(_mean_values(a, None, False), a.dtype)
        if wants_grad(input):
            record(MeanBackward0, (input,), out, shape=a.shape, count=a.size)
        return out
    axes = normalize_dims(dim, a.ndim)
    out = as_result(_mean_values(a, axes, keepdim), a.dtype)
    if wants_grad(input):
        count = int(np.prod([a.shape[i] for i in axes])) if a.ndim else 1
        record(MeanBackward1, (input,), out, shape=a.shape, axes=axes, keepdim=keepdim, count=count)
    return out


def _mean_values(a, axes, keepdim):
    """NumPy's mean (PyTorch's sum then division, for a whole small float array); over nothing it is nan, as in
    PyTorch, without NumPy's "Mean of empty slice" warnings."""
    if a.size == 0:
        shape = np.add.reduce(a, axis=axes, keepdims=keepdim).shape
        return np.full(shape, np.nan, dtype=a.dtype)
    if a.dtype in (np.float32, np.float64):      # (the sum, in PyTorch's order where _sums can, then the division)
        normalized = tuple(range(a.ndim)) if axes is None else axes
        count = math.prod(a.shape[i] for i in normalized)
        return _sums(a, normalized, a.dtype, keepdim) / a.dtype.type(count)
    return dt.widened(a).mean(axis=axes, keepdims=keepdim)


def sum_to_size(self, *size):
    """``x.sum_to_size(*size)``: ``x`` summed down to ``size``, the reverse of broadcasting ``size`` up to x."""
    return _sum_to_size(self, size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size)


def _sum_to_size(x, shape):
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.dim() - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    out = sum(x, axes, keepdim=True) if axes else x
    return out.reshape(shape) if lead else out


# --- shared pieces -------------------------------------------------------------------------------------

def _contiguous_strides(values):
    """A C-ordered result with PyTorch's strides on its size-1 dims too (NumPy's keepdims leaves other ones there,
    which no view reads but TensorIterator does, when it lays out a later elementwise result)."""
    if values.__class__ is not np.ndarray or values.ndim < 2 or not values.flags.c_contiguous:
        return values
    strides, step = [], values.itemsize
    for n in reversed(values.shape):
        strides.append(step)
        step *= n if n else 1
    strides = tuple(reversed(strides))
    if strides == values.strides:
        return values
    return np.lib.stride_tricks.as_strided(values, values.shape, strides, writeable=values.flags.writeable)


def unsqueeze_reduced(ops, t, axes, keepdim, ndim):
    """A reduced result given back its reduced dims (as size 1), so that it broadcasts against the input."""
    if keepdim or ndim == 0:
        return t
    for a in axes:
        t = ops.unsqueeze(t, a)
    return t


def _as_count(ops, count, like):
    """An integer count as an array or tensor of ``like``'s dtype (float32 / int64 would widen in NumPy)."""
    return ops.constant(count, like)


def _no_dim_error(name):
    return RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                        "reduction dim with the 'dim' argument.")


def _check_nonempty_dims(name, a, axes, error=IndexError):
    for d in axes:
        if a.ndim and a.shape[d] == 0:
            raise error(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _at_least_1d(a):
    """0-d arrays as 1-element vectors: PyTorch lets dim 0 (and -1) address a 0-d tensor."""
    return a.reshape(1) if a.ndim == 0 else a


def _evenly_distribute(ops, grad, xa, value):
    """The gradient of a reduction to one value (max, min, median of all elements): shared equally by every
    element equal to it (nan matches nan)."""
    mask = np.isnan(xa) if np.isnan(value) else xa == value
    return ops.mask(mask, grad / int(np.count_nonzero(mask)))


def _value_selecting_backward(ops, grad, indices, dim, keepdim, shape):
    """The gradient of a reduction that picks one element per slice along ``dim`` (max, min, median with a
    dim): each slice's gradient goes to the picked index."""
    if len(shape) == 0:
        return grad
    if not keepdim:
        indices = np.expand_dims(indices, dim)
        grad = ops.unsqueeze(grad, dim)
    positions = np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))])
    return ops.mask(positions == indices, grad)


# --- prod ----------------------------------------------------------------------------------------------

def _product_of_others(ops, grad, x, dim):
    """``grad`` times, for each element, the product of the other elements along ``dim``: the product of the
    elements before it times the product of those after it (exact when some are zero, and differentiable)."""
    n = x.shape[dim]
    if n == 0:
        return ops.expand(grad, x.shape)
    ones = ops.ones_like(ops.narrow(x, dim, 0, 1))
    before = ops.cumprod(ops.cat([ones, ops.narrow(x, dim, 0, n - 1)], dim), dim)
    reversed_after = ops.cat([ones, ops.flip(ops.narrow(x, dim, 1, n - 1), (dim,))], dim)
    after = ops.flip(ops.cumprod(reversed_after, dim), (dim,))
    return grad * (before * after)


class ProdBackward0(Node):
    """out = Π x;  dx = grad * out / x (with zeros in x: grad * the product of the other elements)"""
    holomorphic = True
    formula = "∂(Πᵢ xᵢ)/∂xⱼ = Πᵢ≠ⱼ xᵢ"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        xa = ops.raw(x)
        if xa.ndim == 0:
            return (grad,)
        zeros = int(np.count_nonzero(xa == 0))
        if zeros == 0:
            return (grad * (out / x),)
        if zeros > 1 and not ops.recording:
            return (ops.zeros_like(x),)
        return (ops.reshape(_product_of_others(ops, grad, ops.reshape(x, (-1,)), 0), xa.shape),)


class ProdBackward1(Node):
    """out = Π along dim;  dx = grad * out / x (with zeros in x: grad * the product of the others)"""
    holomorphic = True
    formula = "∂(Πᵢ xᵢ)/∂xⱼ = Πᵢ≠ⱼ xᵢ"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        xa, dim = ops.raw(x), self.dim
        if xa.ndim == 0:
            return (grad,)
        if not self.keepdim:
            grad, out = ops.unsqueeze(grad, dim), ops.unsqueeze(out, dim)
        if not (xa == 0).any():
            return (grad * (out / x),)
        return (_product_of_others(ops, grad, x, dim),)


@autocast_entry
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or along ``dim`` (one int). Integers multiply as int64, as in PyTorch."""
    a = input._data
    target = _sum_dtype(a, dtype)
    a = a.astype(target, copy=False)
    if dim is None:
        result = as_result(_product(a.reshape(-1), 0), target)
        if wants_grad(input):
            record(ProdBackward0, (input,), result, (input, result))
        return result
    d = _wrap_dim(dim, a.ndim)
    result = as_result(_product(_at_least_1d(a), d).reshape(_reduced_shape(a, (d,), keepdim)), target)
    if wants_grad(input):
        record(ProdBackward1, (input,), result, (input, result), dim=d, keepdim=keepdim)
    return result


def _product(a, axis):
    if a.dtype == np.float16 and a.shape[axis] > 1:
        # PyTorch multiplies half precision one element after another, rounding each partial product.
        return np.take(np.cumprod(a, axis=axis, dtype=np.float16), -1, axis=axis)
    return np.asanyarray(a.prod(axis=axis))


def _reduced_shape(a, axes, keepdim):
    return tuple(1 if i in axes else s for i, s in enumerate(a.shape)) if keepdim else \
        tuple(s for i, s in enumerate(a.shape) if i not in axes)


# --- max, min, amax, amin, argmax, argmin, median ------------------------------------------------------

class MaxBackward1(Node):
    """out = max of all x;  dx = grad / k at the k elements equal to the max, 0 elsewhere"""
    formula = "∂max(x)/∂xⱼ = 1/k where xⱼ is one of k maxima"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        return (_evenly_distribute(ops, grad, ops.raw(x), ops.raw(out)),)


class MinBackward1(MaxBackward1):
    """out = min of all x;  dx = grad / k at the k elements equal to the min, 0 elsewhere"""
    formula = "∂min(x)/∂xⱼ = 1/k where xⱼ is one of k minima"


class MaxBackward0(Node):
    """out = max along dim (with indices);  dx = grad at each maximum's index, 0 elsewhere"""
    formula = "∂max(x, dim)/∂xⱼ = 1 at the index returned, else 0"

    def backward(self, ops, grad):
        (indices,) = self.saved(ops)
        return (_value_selecting_backward(ops, grad, ops.raw(indices), self.dim, self.keepdim, self.shape),)


class MinBackward0(MaxBackward0):
    """out = min along dim (with indices);  dx = grad at each minimum's index, 0 elsewhere"""
    formula = "∂min(x, dim)/∂xⱼ = 1 at the index returned, else 0"


def _extreme(input, dim, keepdim, name, np_arg, full_node, dim_node):
    """max / min of all elements, or along ``dim`` as (values, indices)."""
    a = input._data
    dt.refuse_unsigned_wide(f"{name}_all" if dim is None else f"{name}_cpu", a.dtype)
    if dim is None:
        if a.size == 0:
            raise _no_dim_error(name)
        result = as_result(a.max() if name == "max" else a.min(), a.dtype)
        if wants_grad(input):
            record(full_node, (input,), result, (input, result))
        return result
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty_dims(name, a, (d,))
    work = _at_least_1d(a)
    indices = np.expand_dims(np_arg(work, axis=d), d)
    values = np.take_along_axis(work, indices, d)
    shape = _reduced_shape(a, (d,), keepdim)
    values, indices = wrap(values.reshape(shape)), wrap(indices.reshape(shape).astype(np.int64, copy=False))
    if wants_grad(input):
        # the indices are saved as a tensor, so that changing them in place before backward is caught
        record(dim_node, (input,), values, (indices,), dim=d, keepdim=keepdim, shape=a.shape)
    return getattr(return_types, name)(values, indices)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``maximum``."""
    if isinstance(dim, Tensor) or other is not None:
        from .selection import maximum
        return maximum(input, other if other is not None else dim)
    return _extreme(input, dim, keepdim, "max", np.argmax, MaxBackward1, MaxBackward0)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """The smallest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``minimum``."""
    if isinstance(dim, Tensor) or other is not None:
        from .selection import minimum
        return minimum(input, other if other is not None else dim)
    return _extreme(input, dim, keepdim, "min", np.argmin, MinBackward1, MinBackward0)


class AmaxBackward0(Node):
    """out = max over dims;  dx = grad / k at the k elements equal to their slice's max, 0 elsewhere"""
    formula = "∂amax(x)/∂xⱼ = 1/k where xⱼ is one of k maxima"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        xa = ops.raw(x)
        axes = self.axes
        value = ops.raw(out) if self.keepdim else np.expand_dims(ops.raw(out), axes)
        grad = unsqueeze_reduced(ops, grad, axes, self.keepdim, xa.ndim)
        mask = xa == value
        count = mask.sum(axis=axes, keepdims=True)
        # A product with the mask, as PyTorch computes it: -0.0 where a negative gradient meets a non-maximum,
        # and nan everywhere in a slice whose maximum is nan (no element equals it, so the count is 0).
        return (grad / _as_count(ops, count, grad) * ops.constant(mask, grad),)


class AminBackward0(AmaxBackward0):
    """out = min over dims;  dx = grad / k at the k elements equal to their slice's min, 0 elsewhere"""
    formula = "∂amin(x)/∂xⱼ = 1/k where xⱼ is one of k minima"


def _amax_amin(input, dim, keepdim, name, np_fn, node_cls):
    a = input._data
    dt.refuse_unsigned_wide(f"{name[1:]}_values_cpu", a.dtype)
    axes = normalize_dims(dim, a.ndim)
    if a.size == 0:
        if len(axes) == a.ndim and not isinstance(dim, int) and not dim:
            raise _no_dim_error(name)
        _check_nonempty_dims(name, a, axes)
    result = as_result(np_fn(a, axis=axes, keepdims=keepdim), a.dtype)
    if wants_grad(input):
        record(node_cls, (input,), result, (input, result), axes=axes, keepdim=keepdim)
    return result


def amax(input, dim=(), keepdim=False):
    """The largest element over ``dim`` (all dims by default); ties share the gradient equally."""
    return _amax_amin(input, dim, keepdim, "amax", np.amax, AmaxBackward0)


def amin(input, dim=(), keepdim=False):
    """The smallest element over ``dim`` (all dims by default); ties share the gradient equally."""
    return _amax_amin(input, dim, keepdim, "amin", np.amin, AminBackward0)


def _arg_extreme(input, dim, keepdim, name, np_arg):
    a = input._data
    dt.refuse_unsigned_wide(f"{name}_cpu", a.dtype)
    if a.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if a.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        index = np.asanyarray(np_arg(a), dtype=np.int64)
        return wrap(index.reshape((1,) * a.ndim) if keepdim else index)
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty_dims(name, a, (d,))
    index = np_arg(_at_least_1d(a), axis=d, keepdims=keepdim)
    return as_result(index.reshape(_reduced_shape(a, (d,), keepdim)), np.int64)


def argmax(input, dim=None, keepdim=False):
    """The index of the largest element (of the flattened tensor, or along ``dim``); the first among ties."""
    return _arg_extreme(input, dim, keepdim, "argmax", np.argmax)


def argmin(input, dim=None, keepdim=False):
    """The index of the smallest element (of the flattened tensor, or along ``dim``); the first among ties."""
    return _arg_extreme(input, dim, keepdim, "argmin", np.argmin)


class MedianBackward0(MaxBackward1):
    """out = median of all x;  dx = grad / k at the k elements equal to the median, 0 elsewhere"""
    formula = "∂median(x)/∂xⱼ = 1/k where xⱼ is one of k elements equal to the median"


class MedianBackward1(MaxBackward0):
    """out = median along dim (with indices);  dx = grad at each median's index, 0 elsewhere"""
    formula = "∂median(x, dim)/∂xⱼ = 1 at the index returned, else 0"


def _median(input, dim, keepdim, skip_nan, nodes, pair):
    """The body of ``median`` and ``nanmedian`` (``skip_nan``): the lower median of all elements, or along
    ``dim`` as ``pair(values, indices)``, recorded as ``nodes[0]`` or ``nodes[1]``. NaNs sort last; median gives
    a NaN where a slice holds one, nanmedian the median of the other values (NaN if there are none)."""
    a = input._data
    if a.dtype.kind in "bc":
        raise NotImplementedError(f'"{"median_cpu" if dim is None else "median_out"}" not implemented for '
                                  f"'{scalar_name(a.dtype)}'")
    nan = np.isnan(a) if dt.kind(a.dtype) == "f" else np.zeros(a.shape, dtype=bool)
    if dim is None:
        values = a.reshape(-1)[~nan.reshape(-1)] if skip_nan else a.reshape(-1)
        if values.size == 0 or (not skip_nan and nan.any()):
            with np.errstate(invalid="ignore"):
                value = np.array(np.nan).astype(a.dtype)        # for integers, what the C cast of NaN gives
        else:
            value = np.partition(values, (values.size - 1) // 2)[(values.size - 1) // 2]
        result = as_result(value, a.dtype)
        if wants_grad(input):
            record(nodes[0], (input,), result, (input, result))
        return result
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty_dims("median", a, (d,))                # nanmedian's message says median too, as PyTorch's
    work, nan = _at_least_1d(a), _at_least_1d(nan)
    order = np.argsort(work, axis=d, kind="stable")        # NaNs last, in their order
    n, nans = work.shape[d], nan.sum(axis=d, keepdims=True)
    if skip_nan:
        middle = np.maximum((n - nans - 1) // 2, 0)        # the lower middle of the values that are not NaN
    else:
        middle = np.where(nans > 0, n - nans, (n - 1) // 2)  # the first NaN, else the lower middle
    indices = np.take_along_axis(order, middle, d)
    values = np.take_along_axis(work, indices, d)
    shape = _reduced_shape(a, (d,), keepdim)
    values, indices = wrap(values.reshape(shape)), wrap(indices.reshape(shape).astype(np.int64, copy=False))
    if wants_grad(input):
        record(nodes[1], (input,), values, (indices,), dim=d, keepdim=keepdim, shape=a.shape)
    return pair(values, indices)


def median(input, dim=None, keepdim=False):
    """The lower median (of all elements, or along ``dim`` as ``(values, indices)``); nan if a nan is present.
    Among equal elements the index returned may differ from PyTorch's, which does not specify it."""
    return _median(input, dim, keepdim, False, (MedianBackward0, MedianBackward1), return_types.median)


# --- var, std ------------------------------------------------------------------------------------------

def _var_backward(ops, grad, x, axes, keepdim, dof, whole=False):
    """d var / dx = 2 (x - mean) / dof, with the reduced gradient broadcast back. A variance of everything (or of
    a 0-d x) with no degrees of freedom left has, as in PyTorch, the constant nan where x is its mean and inf
    elsewhere: a gradient that requires grad only where ``grad`` does."""
    xa = ops.raw(x)
    if dof <= 0 and (whole or xa.ndim == 0):
        return grad * ops.constant(np.where(xa == xa.mean(), np.nan, np.inf).astype(xa.real.dtype), grad)
    grad = unsqueeze_reduced(ops, grad, axes, keepdim, xa.ndim)
    scale = 2.0 / dof if dof != 0 else math.inf
    return (scale * grad) * (x - ops.mean(x, axes, keepdim=True))


class VarBackward0(Node):
    """out = Σ (x - mean)² / (n - correction);  dx = grad * 2 (x - mean) / (n - correction)"""
    formula = "∂var(x)/∂xⱼ = 2(xⱼ - x̄)/(n - c)"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (_var_backward(ops, grad, x, self.axes, self.keepdim, self.dof, self.whole),)


class StdBackward0(Node):
    """out = √var(x);  dx = grad / (2 out) * d var/dx (0 where out = 0)"""
    formula = "∂std(x)/∂xⱼ = (xⱼ - x̄)/((n - c)·std(x))"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_var = ops.mask(ops.raw(out) != 0, grad / (out * 2))
        return (_var_backward(ops, grad_var, x, self.axes, self.keepdim, self.dof, self.whole),)


# var, std and their means are computed in double for the narrower floating types, as PyTorch's CPU kernels
#: (by name: bfloat16's NumPy type is imported on first use, core/dtype.py)
_VAR_IN_DOUBLE = frozenset({"float32", "float16", "bfloat16"})


def _var_std(input, dim, unbiased, keepdim, correction, name):
    """The shared forward of var and std: PyTorch's argument forms and checks, computed in double for
    float32 and float16 (as PyTorch's CPU kernels accumulate)."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    a = input._data
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    axes = normalize_dims(dim, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes])) if a.ndim else 1
    dof = n - correction
    work = a.astype(np.float64) if a.dtype.name in _VAR_IN_DOUBLE else a
    if dof > 0:
        value = work.var(axis=axes, ddof=correction, keepdims=keepdim)
    else:
        warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=3)
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's version of the warning just given
            value = work.var(axis=axes, ddof=correction, keepdims=keepdim)
    if name == "std":
        value = np.sqrt(value)
    result = as_result(value, a.real.dtype if a.dtype.kind == "c" else a.dtype)
    if wants_grad(input):
        if name == "std":
            record(StdBackward0, (input,), result, (input, result), axes=axes, keepdim=keepdim, dof=dof,
                   whole=dim is None)
        else:
            record(VarBackward0, (input,), result, (input,), axes=axes, keepdim=keepdim, dof=dof, whole=dim is None)
    return result


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` (all by default), dividing by n - correction (correction 1 unless
    ``unbiased=False`` or ``correction=`` says otherwise)."""
    return _var_std(input, dim, unbiased, keepdim, correction, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over ``dim``: the square root of ``var`` with the same arguments."""
    return _var_std(input, dim, unbiased, keepdim, correction, "std")


# --- norm ----------------------------------------------------------------------------------------------

class LinalgVectorNormBackward0(Node):
    """out = (Σ |x|ᵖ)^(1/p);  dx = grad * sign(x) |x|ᵖ⁻¹ / outᵖ⁻¹ (p = 2: grad * x / out; p = ∞: shared
    equally by the largest |x|; p = 0: no gradient)"""
    formula = "∂‖x‖ₚ/∂xⱼ = sign(xⱼ)·|xⱼ|ᵖ⁻¹ / ‖x‖ₚᵖ⁻¹"

    def backward(self, ops, grad):
        x, norm = self.saved(ops)
        p, axes = self.ord, self.axes
        ndim = ops.raw(x).ndim
        if p == 0:
            return (None,)
        grad = unsqueeze_reduced(ops, grad, axes, self.keepdim, ndim)
        norm = unsqueeze_reduced(ops, norm, axes, self.keepdim, ndim)
        xa, na = ops.raw(x), ops.raw(norm)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 1:
                return (ops.sign(x) * grad,)
            if p == 2:
                return (grad * ops.mask(na != 0, x / norm),)
            if math.isinf(p):
                mask = (np.abs(xa) == na) | np.isnan(xa)
                count = mask.sum(axis=axes, keepdims=True)
                return (ops.sign(x) * ops.mask(mask, grad / _as_count(ops, count, grad)),)
            if p < 1:
                scaled = ops.sign(x) * ops.mask(xa != 0, ops.abs(x) ** (p - 1))
                return (scaled * grad * norm ** (1 - p),)
            scaled = ops.sign(x) * ops.abs(x) ** (p - 1) if p < 2 else x * ops.abs(x) ** (p - 2)
            return (scaled * ops.mask(na != 0, grad / norm ** (p - 1)),)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The p-norm (Σ |x|ᵖ)^(1/p) over ``dim`` (all elements by default); ord may be inf, -inf or 0."""
    a = x._data
    if dtype is not None:
        a = a.astype(dtype._np)
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype)}")
    axes = normalize_dims(dim, a.ndim)
    p = float(ord)
    result = as_result(norm_array(a, p, axes, keepdim), a.real.dtype)     # (a complex tensor's norm is real)
    if wants_grad(x):
        record(LinalgVectorNormBackward0, (x,), result, (x, result), ord=p, axes=axes, keepdim=keepdim)
    return result


def norm_array(a, p, axes, keepdim=False):
    """The p-norm of the array ``a`` over ``axes`` (normalized), the value of ``vector_norm`` (and of
    ``clip_grad_norm_``'s norms). The 2-norm of a contiguous float32 or float64 array over its trailing dims, the
    everyday case (all of it, or its last dim), is computed in PyTorch's order (``summation.vector_row_norms``)."""
    absolute = np.abs(a)
    if absolute.dtype in dt.REDUCED_FLOATS:
        absolute = absolute.astype(np.float32)      # half precision accumulates in float32, as in PyTorch
    if math.isinf(p):
        if a.size == 0:
            raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor because the "
                               "operation does not have an identity")
        return (absolute.max if p > 0 else absolute.min)(axis=axes, keepdims=keepdim)
    if p == 0:
        return (a != 0).sum(axis=axes, keepdims=keepdim)
    if p == 1:
        return _added_in_order(absolute, axes, keepdim)
    if p == 2:
        kept = a.ndim - len(axes)
        if (a.dtype in (np.float32, np.float64) and axes and axes == tuple(range(kept, a.ndim)) and a.size
                and a[(0,) * kept].flags.c_contiguous):
            # (PyTorch's kernel reads each row where it lies: the rows need not be next to one another)
            norms = vector_row_norms(a.reshape(math.prod(a.shape[:kept]), -1))
            return norms.reshape(a.shape[:kept] + (1,) * len(axes) * keepdim)
        return np.sqrt((absolute * absolute).sum(axis=axes, keepdims=keepdim))
    return _added_in_order(absolute ** absolute.dtype.type(p), axes, keepdim) ** (1 / p)


def _added_in_order(values, axes, keepdim):
    """``values`` summed over ``axes``, one element after another in memory order, in their own dtype: PyTorch's norm
    kernel for p other than 2, 0 and ±inf, on one thread (NumPy's pairwise sum differs in the last bits)."""
    if values.dtype not in (np.float32, np.float64) or not values.size or not axes:
        return values.sum(axis=axes, keepdims=keepdim)
    kept = [d for d in range(values.ndim) if d not in axes]
    rows = np.ascontiguousarray(values.transpose(kept + list(axes))).reshape(math.prod(values.shape[d] for d in kept),
                                                                            -1)
    total = np.add.accumulate(rows, axis=1)[:, -1] + values.dtype.type(0)
    shape = tuple(1 if d in axes else n for d, n in enumerate(values.shape)) if keepdim else \
        tuple(values.shape[d] for d in kept)
    return total.reshape(shape)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The vector p-norm over ``dim`` (all elements by default); 'fro' is the 2-norm; 'nuc', the nuclear norm
    (the sum of singular values) of the matrices in the last two dims or in ``dim``."""
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
        if p == "nuc":
            from . import linalg
            return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
        p = 2
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


# --- logsumexp -----------------------------------------------------------------------------------------

class LogsumexpBackward0(Node):
    """out = log Σ exp(x);  dx = grad * exp(x - out) (the softmax of x)"""
    holomorphic = True          # the rule is the plain transposed Jacobian (issue 16: complex inputs)
    formula = "∂ log Σᵢ exp(xᵢ)/∂xⱼ = exp(xⱼ) / Σᵢ exp(xᵢ)"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        ndim = ops.raw(x).ndim
        grad = unsqueeze_reduced(ops, grad, self.axes, self.keepdim, ndim)
        out = unsqueeze_reduced(ops, out, self.axes, self.keepdim, ndim)
        return (grad * ops.exp(x - out),)


def logsumexp(input, dim, keepdim=False):
    """log(Σ exp(input)) over ``dim``, computed stably (the largest element is taken out first)."""
    a = input._data
    if dt.kind(a.dtype) not in "fc":
        a = a.astype(dt.get_default_dtype()._np)
    axes = normalize_dims(dim, a.ndim)
    result_dtype, a = a.dtype, dt.widened(a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a.size:
            top = np.amax(a, axis=axes, keepdims=True)
            top = np.where(np.abs(top) == np.inf, np.zeros((), a.dtype), top)
            value = np.log(np.exp(a - top).sum(axis=axes, keepdims=keepdim))
            value = value + (top if keepdim else top.reshape(value.shape))
        else:
            value = np.log(np.exp(a).sum(axis=axes, keepdims=keepdim))
    result = as_result(value, result_dtype)
    if wants_grad(input):
        record(LogsumexpBackward0, (input,), result, (input, result), axes=axes, keepdim=keepdim)
    return result


# --- cumsum, cumprod -----------------------------------------------------------------------------------

def _reversed_cumsum(ops, t, dim):
    """Σ over j >= i of t_j: the cumulative sum taken from the end."""
    return ops.flip(ops.cumsum(ops.flip(t, (dim,)), dim), (dim,))


class CumsumBackward0(Node):
    """out_i = Σ_{j<=i} x_j along dim;  dx_j = Σ_{i>=j} grad_i"""
    complex_ok = True
    formula = "∂(Σⱼ≤ᵢ xⱼ)/∂xₖ = 1 for i ≥ k"

    def backward(self, ops, grad):
        dim = self.dim
        if ops.raw(grad).size <= 1 or grad.shape[dim] == 1:
            return (grad,)
        return (_reversed_cumsum(ops, grad, dim),)


class CumprodBackward0(Node):
    """out_i = Π_{j<=i} x_j along dim;  dx_j = Σ_{i>=j} grad_i * out_i / x_j (zeros in x handled apart)"""
    holomorphic = True
    formula = "∂(Πⱼ≤ᵢ xⱼ)/∂xₖ = Πⱼ≤ᵢ,ⱼ≠ₖ xⱼ for i ≥ k"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        xa, dim = ops.raw(x), self.dim
        if xa.size <= 1 or xa.shape[dim] == 1:
            return (grad,)
        w = out * grad
        zero = xa == 0
        if not zero.any():
            return (_reversed_cumsum(ops, w, dim) / x,)
        if ops.recording:
            return (_cumprod_backward_pairwise(ops, grad, x, dim),)
        # With zeros, in each slice: before its first zero the formula above holds (later terms vanish);
        # the first zero gets Σ_{i>=k} grad_i * Π_{j<=i, j!=k} x_j; after it every gradient is 0.
        zeros_so_far = np.cumsum(zero, axis=dim)
        before, first = zeros_so_far == 0, zero & (zeros_so_far == 1)
        dx_before = ops.mask(before, _reversed_cumsum(ops, w, dim) / ops.select(before, x, ops.ones_like(x)))
        skipping_first = ops.cumprod(ops.select(first, ops.ones_like(x), x), dim)
        at_first = ops.sum(ops.mask(~before, grad * skipping_first), dim, keepdim=True)
        return (dx_before + ops.mask(first, at_first),)


def _cumprod_backward_pairwise(ops, grad, x, dim):
    """dx_k = Π_{j<k} x_j · Σ_{i>=k} grad_i Π_{k<j<=i} x_j, with every (k, i) pair materialized: O(n²), but
    built from differentiable ops only, so that second derivatives are right when x has zeros (the O(n)
    form above holds constant zeros after a slice's first zero). Used under create_graph, as PyTorch does."""
    n = x.shape[dim]
    xt, gt = ops.transpose(x, dim, -1), ops.transpose(grad, dim, -1)
    k = np.arange(n)
    later = k[None, :] > k[:, None]                         # [k, j]: j > k
    partial = ops.cumprod(ops.select(later, ops.unsqueeze(xt, -2), 1.0), -1)   # [k, i]: Π_{k<j<=i} x_j
    tail = ops.sum(ops.mask(k[None, :] >= k[:, None], ops.unsqueeze(gt, -2) * partial), -1)
    ones = ops.ones_like(ops.narrow(xt, -1, 0, 1))
    before = ops.cumprod(ops.cat([ones, ops.narrow(xt, -1, 0, n - 1)], -1), -1)   # Π_{j<k} x_j
    return ops.transpose(before * tail, dim, -1)


def _scan(input, dim, dtype, node_cls, scan):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    target = _sum_dtype(a, dtype)
    a = a.astype(target, copy=False)
    result = wrap(np.asanyarray(scan(_at_least_1d(a), d).reshape(a.shape), order="C"))
    if wants_grad(input):
        record(node_cls, (input,), result, (input, result) if node_cls is CumprodBackward0 else (), dim=d)
    return result


def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``; integers and bools accumulate as int64."""
    return _scan(input, dim, dtype, CumsumBackward0, numpy_ops.cumsum)


def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``; integers and bools accumulate as int64."""
    return _scan(input, dim, dtype, CumprodBackward0, numpy_ops.cumprod)


# --- all, any, count_nonzero ---------------------------------------------------------------------------

def _test_all(input, dim, keepdim, np_fn):
    a = input._data
    if dim is None:
        axes = None
    elif isinstance(dim, (tuple, list)) and len(dim) == 0:
        axes = ()
    else:
        axes = normalize_dims(dim, a.ndim)
    return as_result(np_fn(a, axis=axes, keepdims=keepdim), np.uint8 if a.dtype == np.uint8 else np.bool_)


def all(input, dim=None, keepdim=False):
    """Whether every element (over ``dim``) is non-zero; bool (uint8 for uint8 input), not recorded."""
    return _test_all(input, dim, keepdim, np.all)


def any(input, dim=None, keepdim=False):
    """Whether some element (over ``dim``) is non-zero; bool (uint8 for uint8 input), not recorded."""
    return _test_all(input, dim, keepdim, np.any)


def count_nonzero(input, dim=None):
    """The number of non-zero elements (over ``dim``), as int64."""
    a = input._data
    axes = None if dim is None else normalize_dims(dim, a.ndim)
    return as_result(np.count_nonzero(a, axis=axes), np.int64)


# --- var_mean, std_mean, aminmax: two results at once -------------------------------------------------------

def _moments_backward(ops, node, x, grad_var, grad_mean):
    """The gradient of (var, mean) over the node's dims, given theirs; an output that got no gradient (None)
    adds no term, as in PyTorch, so a var that is nan (one value, n - c = 0) cannot make the mean's gradient nan."""
    parts = []
    if grad_mean is not None:
        parts.append(expand_reduced(ops, grad_mean / node.count, node.axes, node.keepdim, node.shape))
    if grad_var is not None:
        parts.append(_var_backward(ops, grad_var, x, node.axes, node.keepdim, node.dof, node.whole))
    return parts[0] if len(parts) == 1 else parts[1] + parts[0]


class VarMeanBackward0(Node):
    """(var, mean) of x over dims;  dx = grad_var·2(x - mean)/(n - c) + grad_mean/n"""
    formula = "∂var/∂xⱼ = 2(xⱼ - x̄)/(n - c),  ∂mean/∂xⱼ = 1/n"
    _materialize_grads = False      # an output that got no gradient adds no term

    def backward(self, ops, grad_var, grad_mean):
        x, = self.saved(ops)
        return (_moments_backward(ops, self, x, grad_var, grad_mean),)


class StdMeanBackward0(Node):
    """(std, mean) of x over dims;  dx = grad_std·(x - mean)/((n - c)·std) + grad_mean/n (no std term where
    std = 0)"""
    formula = "∂std/∂xⱼ = (xⱼ - x̄)/((n - c)·std),  ∂mean/∂xⱼ = 1/n"
    _materialize_grads = False      # an output that got no gradient adds no term

    def backward(self, ops, grad_std, grad_mean):
        x, std = self.saved(ops)
        if grad_std is None:
            return (_moments_backward(ops, self, x, None, grad_mean),)
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_var = ops.mask(ops.raw(std) != 0, grad_std / (std * 2))
        return (_moments_backward(ops, self, x, grad_var, grad_mean),)


def _spread_and_mean(name, input, dim, unbiased, keepdim, correction):
    """(var or std, mean) over ``dim`` with var's argument forms, recorded as one node with two outputs."""
    a = input._data
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    spread_fn = var if name == "var_mean" else std
    with grad_mode.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spread = spread_fn(input, dim, unbiased, keepdim, correction=correction)
    for w in caught:                            # var's (or std's) warning, under this function's name
        warn(str(w.message).replace(f"{name[:3]}()", f"{name}()"), w.category, stacklevel=3)
    axes = normalize_dims(dim, a.ndim)
    count = math.prod(a.shape[i] for i in axes)
    # the mean in double for float32, float16 and bfloat16, as var computes, then rounded once
    work = a.astype(np.float64) if a.dtype.name in _VAR_IN_DOUBLE else a
    mean = as_result(work.mean(axis=axes, keepdims=keepdim), a.dtype)
    if wants_grad(input):
        if correction is None:
            correction = 0 if unbiased is False else 1
        node_cls = VarMeanBackward0 if name == "var_mean" else StdMeanBackward0
        # std's rule reads std; var's reads only x, as PyTorch's (so var may then change in place)
        saved = (input,) if name == "var_mean" else (input, spread)
        record(node_cls, (input,), (spread, mean), saved, axes=axes, keepdim=keepdim, shape=a.shape,
               count=count, dof=count - correction, whole=dim is None)
    return spread, mean


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``, with ``var``'s arguments; one node (VarMeanBackward0) for both."""
    return _spread_and_mean("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``, with ``std``'s arguments; one node (StdMeanBackward0) for both."""
    return _spread_and_mean("std_mean", input, dim, unbiased, keepdim, correction)


class AminmaxBackward0(Node):
    """(min, max) over dims;  dx = grad_min shared by the minima + grad_max shared by the maxima"""
    formula = "∂min/∂xⱼ = 1/k at the k minima;  ∂max/∂xⱼ = 1/k at the k maxima"

    def backward(self, ops, grad_min, grad_max):
        x, low, high = self.saved(ops)
        return (self._shared(ops, grad_min, x, low) + self._shared(ops, grad_max, x, high),)

    def _shared(self, ops, grad, x, value):
        xa, axes, value = ops.raw(x), self.axes, ops.raw(value)
        hit = xa == (value if self.keepdim else np.expand_dims(value, axes))
        grad = unsqueeze_reduced(ops, grad, axes, self.keepdim, xa.ndim)
        count = ops.constant(hit.sum(axis=axes, keepdims=True), grad)
        return grad / count * ops.constant(hit, grad)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of all elements, or along ``dim`` (one int); ties share each gradient equally."""
    a = input._data
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        if a.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        axes = tuple(range(a.ndim))
    else:
        axes = normalize_dims(dim, a.ndim)
        if axes and a.shape[axes[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axes[0]} to have non-zero size.")
    low = as_result(np.amin(a, axis=axes, keepdims=keepdim), a.dtype)
    high = as_result(np.amax(a, axis=axes, keepdims=keepdim), a.dtype)
    if wants_grad(input):
        record(AminmaxBackward0, (input,), (low, high), (input, low, high), axes=axes, keepdim=keepdim)
    return return_types.aminmax(low, high)


# --- nanmedian ----------------------------------------------------------------------------------------------

# Named pairs PyTorch returns that ``return_types`` does not list yet.


class NanmedianBackward0(MedianBackward0):
    """out = the median of the non-NaN x;  dx = grad / k at the k elements equal to it"""


class NanmedianBackward1(MedianBackward1):
    """out = the median of the non-NaN x along dim (with indices);  dx = grad at each median's index"""


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values that are not NaN (of all elements, or along ``dim`` as
    ``(values, indices)``); NaN where every value is NaN."""
    return _median(input, dim, keepdim, True, (NanmedianBackward0, NanmedianBackward1),
                   return_types.nanmedian)


# --- renorm -------------------------------------------------------------------------------------------------

class RenormBackward0(Node):
    """out = x·f per slice, f = maxnorm/(‖slice‖ₚ + 1e-7) where the norm exceeds maxnorm, else 1;
    dx = f·grad + f'(‖slice‖ₚ)·(Σ_slice grad·x)·∂‖slice‖ₚ/∂x"""
    formula = "∂(x·f(‖x‖))/∂x = f·grad + f'(‖x‖)·(Σ grad·x)·∂‖x‖/∂x"

    def backward(self, ops, grad):
        # f'(n) = -maxnorm/(n + 1e-7)² on the slices the forward scaled (``active``); elsewhere f = 1, f' = 0
        (x,) = self.saved(ops)
        norm, d_norm = _slice_norm(ops, x, self.p, self.axes)
        active = self.active
        shifted = norm + 1e-7
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = ops.select(active, self.maxnorm / shifted, 1.0)
            d_factor = ops.mask(active, -self.maxnorm / (shifted * shifted))
            through_norm = d_factor * ops.sum(grad * x, self.axes, keepdim=True) * d_norm
        return (grad * factor + ops.mask(np.broadcast_to(active, ops.raw(x).shape), through_norm),)


def _slice_norm(ops, x, p, axes):
    """The p-norm n of each slice (kept dims) and ∂n/∂x, written with ``ops`` so that both are differentiable
    under create_graph; the ∞-norm as the mean of |x| over the slice's maxima (its value, and its gradient
    shared among ties)."""
    magnitude = ops.abs(x)
    if math.isinf(p):
        top = np.abs(ops.raw(x))
        hit = top == top.max(axis=axes, keepdims=True)
        count = ops.constant(hit.sum(axis=axes, keepdims=True), magnitude)
        norm = ops.sum(ops.mask(hit, magnitude), axes, keepdim=True) / count
        return norm, ops.mask(hit, ops.sign(x)) / count
    norm = ops.sum(magnitude ** p, axes, keepdim=True) ** (1.0 / p)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 1:
            return norm, ops.sign(x)
        d_norm = ops.sign(x) * magnitude ** (p - 1) * norm ** (1 - p)
    return norm, ops.mask(ops.raw(x) != 0, d_norm) if p < 1 else d_norm


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` (``input.select(dim, i)``) whose p-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (divided by its norm + 1e-7); the others unchanged."""
    a = input._data
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype)}")
    d = _wrap_dim(dim, a.ndim)
    axes = tuple(i for i in range(a.ndim) if i != d)
    norm = vector_norm(wrap(a), p, axes, keepdim=True)._data
    active = norm > maxnorm
    scale = norm.dtype.type(maxnorm) / (norm + norm.dtype.type(1e-7))
    result = as_result(a * np.where(active, scale, np.ones((), scale.dtype)), a.dtype)
    if wants_grad(input):
        record(RenormBackward0, (input,), result, (input,), p=float(p), axes=axes, maxnorm=float(maxnorm),
               active=active)
    return result


# --- trapezoid, cumulative_trapezoid: integrals as sums -----------------------------------------------------

def _scaled(t, c, by):
    """``t * c`` (``by='mul'``) or ``t / c`` recorded as PyTorch's C++ code records a tensor-number product
    (MulBackward1, DivBackward1); integer tensors become the default float dtype first, as the product would."""
    from .nn._common import div_scalar, mul_scalar
    if t._data.dtype.kind in "biu":
        t = wrap(t._data.astype(dt.get_default_dtype()._np))
    return mul_scalar(t, c) if by == "mul" else div_scalar(t, c)


def _trapezoid_args(name, y, x, dx, dim):
    """The dim, and x or dx, with PyTorch's checks (one of x and dx, never both)."""
    overloads = (f"{name}() received an invalid combination of arguments - got ({{}}), but expected one of:\n"
                 " * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    if x is not None and (not isinstance(x, Tensor) or dx is not None):
        got = ", ".join(["Tensor", type(x).__name__] + (["dx=" + type(dx).__name__] if dx is not None else []))
        raise TypeError(overloads.format(got))
    if y._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, y._data.ndim)


def _sample_spacing(name, y, x, d):
    """The differences of x along dim ``d``, shaped to broadcast against y's intervals."""
    xa = x._data
    if xa.ndim == 1:
        if xa.shape[0] != y._data.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y._data.ndim
        shape[d] = xa.shape[0]
        x = view(x, tuple(shape))
    n = x._data.shape[d]
    return slice_dim(x, d, 1, n, 1) - slice_dim(x, d, 0, n - 1, 1)


def _interval_sums(y, d):
    """y_{i+1} + y_i along dim ``d``: twice each interval's mean height."""
    n = y._data.shape[d]
    return slice_dim(y, d, 1, n, 1) + slice_dim(y, d, 0, n - 1, 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of the samples ``y`` along ``dim`` by the trapezoidal rule, at positions ``x`` (a tensor)
    or a spacing ``dx`` (1 by default)."""
    d = _trapezoid_args("trapezoid", y, x, dx, dim)
    ya = y._data
    if ya.shape[d] == 0:
        target = ya.dtype if dt.kind(ya.dtype) in "fc" else dt.get_default_dtype()._np
        return wrap(np.zeros(ya.shape[:d] + ya.shape[d + 1:], dtype=target))
    if x is not None:
        return _scaled((_interval_sums(y, d) * _sample_spacing("trapezoid", y, x, d)).sum(d), 2.0, "div")
    ends = select(y, d, 0) + select(y, d, -1)
    return _scaled(y.sum(d) - _scaled(ends, 0.5, "mul"), 1 if dx is None else dx, "mul")


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid``, under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule: one value fewer than ``y`` along
    ``dim`` (the integral up to each sample after the first)."""
    d = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if x is not None:
        spaced = _interval_sums(y, d) * _sample_spacing("cumulative_trapezoid", y, x, d)
        return _scaled(spaced.cumsum(d), 2.0, "div")
    return _scaled(_interval_sums(y, d), (1 if dx is None else dx) / 2.0, "mul").cumsum(d)


# --- NaN-aware reductions -----------------------------------------------------------------------------------

class NansumBackward0(Node):
    """out = Σ x over dims, NaNs counted as 0;  dx = grad broadcast back, 0 where x is NaN"""
    complex_ok = True
    __slots__ = ()
    formula = "∂(Σᵢ xᵢ)/∂xⱼ = 1, 0 where xⱼ is NaN"

    def backward(self, ops, grad):
        return (ops.mask(self.kept, expand_reduced(ops, grad, self.axes, self.keepdim, self.kept.shape)),)


def _reduced_axes(dim, ndim):
    return normalize_dims(None if isinstance(dim, (tuple, list)) and not dim else dim, ndim)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all elements by default) with NaNs counted as zero."""
    a = input._data
    if a.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    target = _sum_dtype(a, dtype)
    axes = _reduced_axes(dim, a.ndim)
    kept = ~np.isnan(a) if dt.kind(a.dtype) == "f" else np.ones(a.shape, dtype=bool)
    out = as_result(np.where(kept, a, 0).sum(axis=axes, dtype=target, keepdims=keepdim), target)
    if wants_grad(input):
        # x is saved though the rule reads only its mask: PyTorch saves x, so changing it in place breaks backward
        record(NansumBackward0, (input,), out, (input,), kept=kept, axes=axes, keepdim=keepdim)
    return out


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (all elements by default) of the elements that are not NaN: their ``nansum`` divided
    by their count (NaN where there are none)."""
    a = input._data
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{scalar_name(a.dtype)}")
    if dtype is not None and dt.kind(dtype._np) not in "fc":
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {scalar_name(dtype._np)}")
    counts = (~np.isnan(a)).sum(axis=_reduced_axes(dim, a.ndim), keepdims=keepdim)
    with np.errstate(invalid="ignore"):         # 0 / 0 where a slice is all NaN: the NaN is the answer
        return nansum(input, dim, keepdim, dtype=dtype) / as_result(counts, np.int64)


# --- logcumsumexp -------------------------------------------------------------------------------------------

def _logcumsumexp_array(a, dim):
    """log Σ_{j<=i} exp(a_j) along ``dim``, as PyTorch's CPU scan: float32 and float16 accumulate in double
    (bfloat16 too, as close as float32 would be after its rounding)."""
    work = a.astype(np.float64) if a.dtype.name in _VAR_IN_DOUBLE else a
    # contiguous, as PyTorch's scan kernel writes it (NumPy's accumulate keeps the input's layout)
    return c_order(np.logaddexp.accumulate(work, axis=dim)).astype(a.dtype, copy=False)


def _reversed_logcumsumexp(ops, t, dim):
    """log Σ_{j>=i} exp(t_j): the scan taken from the end (recorded under create_graph)."""
    flipped = ops.flip(t, (dim,))
    scanned = logcumsumexp(flipped, dim) if ops.recording else _logcumsumexp_array(flipped, dim)
    return ops.flip(scanned, (dim,))


class LogcumsumexpBackward0(Node):
    """out_i = log Σ_{j<=i} exp(x_j);  dx_j = Σ_{i>=j} grad_i exp(x_j - out_i)"""
    __slots__ = ()
    formula = "∂ out_i/∂x_j = exp(x_j - out_i) for i ≥ j"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        ga = ops.raw(grad)
        if ga.ndim == 0 or ga.size == 0:
            return (grad,)
        # The sum in log space, so that no exp overflows: positive and negative gradients apart, since only
        # positive numbers have a logarithm; a zero gradient becomes the lowest number (exp of it is 0).
        lowest = float(dt.finfo_of(ga.dtype).min)
        parts = []
        with np.errstate(divide="ignore", over="ignore"):      # log 0 = -inf and lowest - out = -inf are meant
            log_abs = ops.log(ops.abs(grad))
            for sign in (ga > 0, ga < 0):
                log_part = ops.select(sign, log_abs, lowest)
                parts.append(ops.exp(_reversed_logcumsumexp(ops, log_part - out, self.dim) + x))
        return (parts[0] - parts[1],)


def logcumsumexp(input, dim):
    """log Σ_{j<=i} exp(x_j) along ``dim``, computed stably (no exp overflows)."""
    a = input._data
    if dt.kind(a.dtype) not in "fc":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    d = _wrap_dim(dim, a.ndim)
    out = wrap(_logcumsumexp_array(a.reshape(a.shape or (1,)), d).reshape(a.shape))
    if wants_grad(input):
        record(LogcumsumexpBackward0, (input,), out, (input, out), dim=d)
    return out
