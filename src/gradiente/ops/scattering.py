"""Writing one tensor into a region of another, out of place: ``select_scatter``, ``slice_scatter``,
``diagonal_scatter``, ``as_strided_scatter`` (the region a view would see), ``index_put`` (advanced
indices, as ``x[indices] = v``), ``put`` (flat positions) and ``index_reduce`` (positions along a dim,
reduced with the values already there); ``index_put_``, ``put_`` and ``index_reduce_`` are their in-place
forms.

The rules share one shape: the input's gradient is the incoming one with the written region zeroed (kept
whole when values are added in, ``accumulate=True``), and the written values' gradient is the incoming
one read back at the region.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.errors import broadcast_shape
from ..core.inplace import make_inplace
from ..core.node import Node, tangent_sum
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor, _wrap_dim
from ..core.warnings_at_caller import warn
from . import indexing
from .autocast import autocast_entry
from .indexing import _along, _flat_positions, _index_array, _int_index
from .views import _fmt, diagonal_index, expanded_shape

__all__ = ["as_strided_scatter", "diagonal_scatter", "index_put", "index_put_", "index_reduce", "put",
           "select_scatter", "slice_scatter", "index_add", "index_copy", "index_fill", "masked_scatter",
           "scatter_reduce"]


# --- the region a view sees ------------------------------------------------------------------------------

class SelectScatterBackward0(Node):
    """out = x with out[region] = src;  dx = grad zeroed in the region;  dsrc = grad[region]"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the region;  ∂/∂src: the gradient inside it"

    def backward(self, ops, grad):
        (x_node, _), (src_node, _) = self.next_functions
        return (ops.mask(self.keep, grad) if x_node is not None else None,
                self.read_region(ops, grad) if src_node is not None else None)

    def read_region(self, ops, grad):
        return ops.getitem(grad, self.region)


class SliceScatterBackward0(SelectScatterBackward0):
    """out = x with out[start:end:step] (along dim) = src;  dx = grad outside the slice;  dsrc = grad in it"""
    __slots__ = ()


class DiagonalScatterBackward0(SelectScatterBackward0):
    """out = x with its diagonal (over dim1, dim2) = src;  dx = grad off it;  dsrc = the diagonal of grad"""
    __slots__ = ()

    def read_region(self, ops, grad):
        # the diagonal's dims moved last, so that the diagonal comes out as the last dim (diagonal's layout)
        return ops.getitem(ops.permute(grad, self.order), self.region)


class AsStridedScatterBackward0(SelectScatterBackward0):
    """out = x with the elements at strided positions = src;  dx = grad off them;  dsrc = grad at them"""
    __slots__ = ()

    def read_region(self, ops, grad):
        return ops.getitem(ops.reshape(grad, (-1,)), self.region)


def _scatter_region(node_cls, input, src, region, read, **attrs):
    """``input`` with ``src`` written where ``read(array)`` (a writable view of a copy) points, recorded with
    ``node_cls``; ``region`` is the NumPy index its rule reads the gradient at."""
    out = input._data.copy()
    target = read(out)
    if src._data.shape != target.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{_fmt(src._data.shape)}, slice size = {_fmt(target.shape)}")
    target[...] = src._data
    result = wrap(out)
    if wants_grad(input, src):
        keep = np.ones(out.shape, dtype=bool)
        read(keep)[...] = False
        record(node_cls, (input, src), result, keep=keep, region=region, **attrs)
    return result


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    n, i = a.shape[d], int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size {_fmt(a.shape)} at dimension {d}")
    region = (slice(None),) * d + (i % n, Ellipsis)        # Ellipsis: an array even when it is 0-d
    return _scatter_region(SelectScatterBackward0, input, src, region, lambda array: array[region])


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written at ``input[start:end:step]`` along ``dim``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    region = (slice(None),) * d + (slice(*slice(start, end, step).indices(a.shape[d])),)
    return _scatter_region(SliceScatterBackward0, input, src, region, lambda array: array[region])


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on the diagonal ``input.diagonal(offset, dim1, dim2)``."""
    a = input._data
    d1, d2 = _wrap_dim(dim1, a.ndim), _wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")

    def read(array):
        view = np.diagonal(array, offset, d1, d2)
        view.flags.writeable = True             # NumPy hands out the diagonal read-only; it is a plain view
        return view
    order = tuple(i for i in range(a.ndim) if i not in (d1, d2)) + (d1, d2)
    region = (Ellipsis, *diagonal_index(a.shape[d1], a.shape[d2], offset))
    return _scatter_region(DiagonalScatterBackward0, input, src, region, read, order=order)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written where ``input.as_strided(size, stride, storage_offset)`` would
    look: element (i, j, ...) at flat position offset + i·stride[0] + j·stride[1] + ... of the input read in
    C order. (PyTorch reads the input's storage; the two agree for contiguous inputs, the only ones PyTorch
    differentiates.)"""
    a = input._data
    if input._requires_grad and not a.flags.c_contiguous:
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous inputs")
    size, stride, offset = tuple(size), tuple(stride), storage_offset or 0
    positions = np.full(size, offset, dtype=np.int64)
    for k, (n, step) in enumerate(zip(size, stride)):
        positions += (np.arange(n, dtype=np.int64) * step).reshape((n,) + (1,) * (len(size) - k - 1))
    if positions.size and positions.max() >= a.size:
        needed = (int(positions.max()) + 1) * a.itemsize
        raise RuntimeError(f"setStorage: sizes {_fmt(size)}, strides {_fmt(stride)}, storage offset {offset}, and "
                           f"itemsize {a.itemsize} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {a.size * a.itemsize}")
    region = (positions,)

    def read(array):
        return _FlatRegion(array, positions)
    return _scatter_region(AsStridedScatterBackward0, input, src, region, read)


class _FlatRegion:
    """The elements of an array at flat positions, readable (``.shape``) and writable (``[...] = values``)
    like a view: what ``_scatter_region`` needs from a region that no NumPy view can express."""

    def __init__(self, array, positions):
        self.array, self.positions = array, positions
        self.shape = positions.shape

    def __setitem__(self, key, values):
        np.put(self.array, self.positions, values)     # repeated positions: the last write wins


# --- index_put, put --------------------------------------------------------------------------------------

class IndexPutBackward0(indexing.IndexPutBackward0):
    """out = x with v written at advanced indices (added to what is there if accumulate);
    dx = grad zeroed there (grad itself if accumulate);  dv = grad at those indices"""
    __slots__ = ()

    def backward(self, ops, grad):
        if not self.accumulate:
            return indexing.IndexPutBackward0.backward(self, ops, grad)
        (x_node, _), (v_node, _) = self.next_functions
        return (grad if x_node is not None else None,
                ops.getitem(grad, self.advanced) if v_node is not None else None)

    def jvp(self, ops, x_t, v_t):
        if not self.accumulate:
            return indexing.IndexPutBackward0.jvp(self, ops, x_t, v_t)
        if v_t is None:
            return x_t
        shape = self._input_meta[0][0]
        region = np.empty(shape, dtype=bool)[self.advanced].shape
        return tangent_sum(x_t, ops.embed(ops.expand(v_t, region), shape, self.advanced))     # repeats add up


def _advanced_index(shape, indices):
    """``index_put``'s indices as a NumPy index of int64 arrays (masks spelled as their positions), with
    PyTorch's checks."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 2) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    arrays = []
    for position, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 1, but got {type(t).__name__}")
        array = _index_array(t)
        arrays.extend(np.nonzero(array) if array.dtype == np.bool_ else [array])
    if len(arrays) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {len(arrays)})")
    for dim, array in enumerate(arrays):
        bad = (array < -shape[dim]) | (array >= shape[dim])
        if bad.any():
            raise IndexError(f"index {int(array[bad].flat[0])} is out of bounds for dimension {dim} with size "
                             f"{shape[dim]}")
    return tuple(arrays)


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` (broadcast) written at ``input[indices]`` (a tuple of integer or
    boolean tensors), or added there if ``accumulate`` (repeated positions then add up)."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 3) must be Tensor, not {type(values).__name__}")
    out = input._data.copy()
    advanced = _advanced_index(out.shape, indices)
    indexing.check_put_dtype(values, advanced, out.dtype)
    # The values broadcast to the region as they are (no leading size-1 dims dropped, unlike ``x[i] = v``), so
    # the node's edge leads straight to them, as PyTorch's does.
    region_shape = out[advanced].shape
    try:
        written = np.broadcast_to(values._data, region_shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {_fmt(values._data.shape)} cannot be broadcast "
                           f"to indexing result of shape {_fmt(region_shape)}") from None
    if accumulate:
        np.add.at(out, advanced, written)
    else:
        indexing._assign(out, advanced, written)
    result = wrap(out)
    if wants_grad(input, values):
        record(IndexPutBackward0, (input, values), result, advanced=advanced, accumulate=accumulate)
    return result


class PutBackward0(Node):
    """out = x with source written at flat positions (added if accumulate);  dx = grad zeroed there (grad if
    accumulate);  dsource = grad at those positions"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient off the positions written;  ∂/∂source: the gradient at them"

    def backward(self, ops, grad):
        (x_node, _), (source_node, _) = self.next_functions
        dx = dsource = None
        if x_node is not None:
            dx = grad if self.keep is None else ops.mask(self.keep, grad)
        if source_node is not None:
            taken = ops.getitem(ops.reshape(grad, (-1,)), (self.positions,))
            dsource = ops.reshape(taken, self._input_meta[1][0])
        return dx, dsource


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with the elements of ``source`` written at the flat (C-order) positions ``index``
    (negative ones count from the end), or added there if ``accumulate``."""
    a, s = input._data, source._data
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {scalar_name(idx.dtype)}")
    if s.dtype != a.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{scalar_name(a.dtype)} and source.dtype = {scalar_name(s.dtype)}")
    if s.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {s.size}, index.numel() = {idx.size}")
    n = a.size
    positions = _flat_positions(idx, n, "put_(): Tried to put elements into an empty tensor")
    flat = a.reshape(-1).copy()
    if accumulate:
        np.add.at(flat, positions, s.reshape(-1))
    else:
        flat[positions] = s.reshape(-1)
    result = wrap(flat.reshape(a.shape))
    if wants_grad(input, source):
        keep = None
        if not accumulate:
            keep = np.ones(n, dtype=bool)
            keep[positions] = False
            keep = keep.reshape(a.shape)
        record(PutBackward0, (input, source), result, positions=positions, keep=keep)
    return result


# --- index_add, index_copy, index_fill: writes along a dim --------------------------------------------------

def _in_bounds(idx, size, dim, error, prefix="", negative=False):
    """``idx`` checked against a dim of ``size``; with ``negative``, negative positions count from the end."""
    bad = (idx < (-size if negative else 0)) | (idx >= size)
    if bad.any():
        raise error(f"{prefix}index {int(idx[bad][0])} is out of bounds for dimension {dim} with size {size}")
    return np.where(idx < 0, idx + size, idx) if negative else idx


def _lifted(t):
    """A 0-d array or rule value as a 1-element vector: the index ops treat a 0-d tensor as one of length 1
    (their rules get a 0-d gradient back in that shape; the engine reshapes what they return)."""
    return t.reshape((1,)) if len(t.shape) == 0 else t


def _at(d, idx):
    """The NumPy index of positions ``idx`` along dim ``d`` (``index_select``'s pattern)."""
    return (slice(None),) * d + (idx,)


class IndexAddBackward0(Node):
    """out = x with alpha * source added at positions index along dim;  dx = grad;  dsource = alpha * grad there"""
    holomorphic = True
    __slots__ = ()
    formula = "∂/∂x = 1;  ∂/∂source: alpha times the gradient at the positions added to"

    def backward(self, ops, grad):
        (x_node, _), (source_node, _) = self.next_functions
        dsource = None
        if source_node is not None:
            dsource = ops.getitem(_lifted(grad), self.where)
            if self.alpha != 1:
                dsource = dsource * self.alpha
        return grad if x_node is not None else None, dsource


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at positions ``index`` (1-D) along ``dim``; slice i of
    ``source`` goes to position ``index[i]``, and repeated positions add up."""
    a, s = input._data, source._data
    d = _wrap_dim(dim, a.ndim)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{scalar_name(idx.dtype)} and size: {_fmt(idx.shape)}")
    if idx.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {scalar_name(idx.dtype)}")
    if a.ndim == 0:
        a, s = _lifted(a), _lifted(s)
    if d >= max(s.ndim, 1):
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim {s.ndim}")
    if s.ndim and s.shape[d] != idx.size:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({s.shape[d]}), for dim: {d}")
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_name(a.dtype)}) and source ({scalar_name(s.dtype)}) must have "
                           "the same scalar type")
    if s.ndim != a.ndim or any(k != d and s.shape[k] != a.shape[k] for k in range(a.ndim)):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {_fmt(a.shape)} source.shape = {_fmt(s.shape)}")
    where = _at(d, _in_bounds(idx.reshape(-1).astype(np.int64), a.shape[d], d, RuntimeError))
    out = a.copy()
    np.add.at(out, where, s if alpha == 1 else (s * alpha).astype(a.dtype))
    result = wrap(out.reshape(input._data.shape))
    if wants_grad(input, source):
        record(IndexAddBackward0, (input, source), result, where=where, alpha=alpha)
    return result


class IndexCopyBackward0(Node):
    """out = x with source's slices written at positions index along dim;  dx = grad zeroed there;
    dsource = grad at those positions"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the written positions;  ∂/∂source: the gradient at them"

    def backward(self, ops, grad):
        (x_node, _), (source_node, _) = self.next_functions
        return (ops.mask(self.keep, grad) if x_node is not None else None,
                ops.getitem(_lifted(grad), self.where) if source_node is not None else None)


@autocast_entry
def index_copy(input, dim, index, source):
    """A copy of ``input`` with slice i of ``source`` written at position ``index[i]`` along ``dim``. Which
    write wins at a repeated position is left unspecified, as in PyTorch."""
    a, s = input._data, source._data
    d = _wrap_dim(dim, a.ndim)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {scalar_name(idx.dtype)}")
    a = _lifted(a)
    if s.ndim == 0:
        s = s.reshape(1)                        # one value for one position
    if d < s.ndim and s.shape[d] != idx.size:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                         f"({s.shape[d]})")
    rest_a, rest_s = a.shape[:d] + a.shape[d + 1:], s.shape[:d] + s.shape[d + 1:]
    if rest_a != rest_s:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, rest_a))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, rest_s))} at dimension 0.")
    if s.dtype != a.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{scalar_name(a.dtype)} and (source) {scalar_name(s.dtype)}")
    where = _at(d, _in_bounds(idx.reshape(-1), a.shape[d], d, IndexError, "index_copy_(): "))
    out = a.copy()
    out[where] = s
    result = wrap(out.reshape(input._data.shape))
    if wants_grad(input, source):
        keep = np.ones(a.shape, dtype=bool)
        keep[where] = False
        record(IndexCopyBackward0, (input, source), result, where=where, keep=keep.reshape(input._data.shape))
    return result


class IndexFillBackward0(Node):
    """out = x with a number at positions index along dim;  dx = grad zeroed there"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the filled positions"

    def backward(self, ops, grad):
        return (ops.mask(self.keep, grad),)


class IndexFillBackward1(Node):
    """out = x with the 0-d tensor v at positions index along dim;  dx = grad zeroed there;
    dv = Σ grad at those positions"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the filled positions;  ∂/∂v: its sum inside them"

    def backward(self, ops, grad):
        (x_node, _), (v_node, _) = self.next_functions
        return (ops.mask(self.keep, grad) if x_node is not None else None,
                ops.sum(ops.mask(~self.keep, grad)) if v_node is not None else None)


def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) at positions ``index`` along ``dim``
    (negative positions count from the end)."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    idx = index._data
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    size = a.shape[d] if a.ndim else 1
    positions = _in_bounds(idx.reshape(-1), size, d, IndexError, negative=True)
    keep = np.ones(a.shape or (1,), dtype=bool)
    keep[_at(d, positions)] = False
    keep = keep.reshape(a.shape)
    fill = value._data if isinstance(value, Tensor) else value
    result = wrap(np.where(keep, a, np.asanyarray(fill).astype(a.dtype)))
    if wants_grad(input, value):
        if isinstance(value, Tensor):
            record(IndexFillBackward1, (input, value), result, keep=keep)
        else:
            record(IndexFillBackward0, (input,), result, keep=keep)
    return result


# --- masked_scatter and scatter_reduce ----------------------------------------------------------------------

class MaskedScatterBackward0(Node):
    """out = x with source's first k elements written, in order, where mask (k of them) is True;
    dx = grad where mask is False;  dsource = grad's masked elements, in order, zeros after them"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient where the mask is False;  ∂/∂source: the gradient where it is True, in order"

    def backward(self, ops, grad):
        (x_node, _), (source_node, _) = self.next_functions
        dx = dsource = None
        if x_node is not None:
            dx = ops.mask(~self.mask, grad)
        if source_node is not None:
            shape = self._input_meta[1][0]
            written = ops.getitem(grad, (self.mask,))
            dsource = ops.reshape(ops.embed(written, (math.prod(shape),), (slice(0, self.count),)), shape)
        return dx, dsource


def masked_scatter(input, mask, source):
    """A copy of ``input`` (broadcast with ``mask``) with the elements of ``source``, in order, written where
    ``mask`` is True."""
    a, s = input._data, source._data
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_name(m.dtype)}")
    if s.dtype != a.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{scalar_name(a.dtype)} and {scalar_name(s.dtype)}")
    shape = broadcast_shape(m.shape, a.shape)
    m = np.broadcast_to(m, shape).copy()
    count = int(m.sum())
    if count > s.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = np.broadcast_to(a, shape).copy()
    out[m] = s.reshape(-1)[:count]
    result = wrap(out)
    if wants_grad(input, source):
        record(MaskedScatterBackward0, (input, source), result, mask=m, count=count)
    return result


_masked_scatter_in_place = make_inplace(masked_scatter, "masked_scatter_")


def masked_scatter_(self, mask, source):
    """``masked_scatter`` in place: ``mask`` must expand to ``self``'s shape (``self`` itself cannot grow)."""
    expanded_shape(mask, self._data.shape)
    return _masked_scatter_in_place(self, mask, source)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce, np_dtype):
    """The value a reduction starts from when the input's own values are left out (``include_self=False``)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low, high = (-np.inf, np.inf) if dt.kind(np_dtype) in "fc" else (np.iinfo(np_dtype).min, np.iinfo(np_dtype).max)
    return low if reduce == "amax" else high


def _scatter_reduce_array(a, where, values, reduce, include_self):
    """``a`` with ``values`` reduced into it at ``where`` (NumPy arrays); also returns, for ``mean``, how many
    values each position averages."""
    out = a.copy()
    if not include_self:
        out[where] = _identity(reduce, a.dtype)
    _UFUNCS[reduce].at(out, where, values)
    counts = None
    if reduce == "mean":
        counts = np.full(a.shape, int(include_self), dtype=np.int64)
        np.add.at(counts, where, 1)
        counts = np.maximum(counts, 1)
        out = out // counts if a.dtype.kind in "iub" else out / counts.astype(a.dtype)
    return out.astype(a.dtype, copy=False), counts


class ScatterReduceBackward0(Node):
    """out = x with src reduced into it at out[i][index[i][j]] (sum, prod, mean, amax or amin; x's own values
    taking part if include_self);  dx, dsrc = each value's share of the reduction it took part in"""
    __slots__ = ()
    formula = "∂/∂x, ∂/∂src: the derivative of each reduction with respect to each value that took part in it"

    def backward(self, ops, grad):
        x, src, out = (_lifted(t) for t in self.saved(ops))
        grad = _lifted(grad)
        if self.src_region is not None:
            src = ops.getitem(src, self.src_region)
        rule = {"sum": _sum_rule, "mean": _mean_rule, "prod": _prod_rule}.get(self.reduce, _extreme_rule)
        dx, dsrc = rule(self, ops, grad, x, src, out)
        (x_node, _), (src_node, _) = self.next_functions
        if x_node is None:
            dx = None
        elif not self.include_self:
            dx = ops.mask(~self.scattered, dx)
        if src_node is None:
            dsrc = None
        elif self.src_region is not None:
            dsrc = ops.embed(dsrc, self._input_meta[1][0], self.src_region)
        return dx, dsrc


def _sum_rule(node, ops, grad, x, src, out):
    """out = x + Σ src;  dx = grad;  dsrc = grad at the position each value went to"""
    return grad, ops.getitem(grad, node.where)


def _mean_rule(node, ops, grad, x, src, out):
    """out = (x + Σ src) / n;  dx = grad / n;  dsrc = grad / n at the position each value went to"""
    shared = grad / ops.constant(node.counts, grad)
    return shared, ops.getitem(shared, node.where)


def _extreme_rule(node, ops, grad, x, src, out):
    """out = max (or min) of x and the src values;  the gradient shared equally by the values equal to it"""
    xa, sa, oa = ops.raw(x), ops.raw(src), ops.raw(out)
    # As PyTorch does, x's value counts as a tie even when include_self=False; its share is then dropped.
    self_hit = xa == oa
    src_hit = sa == oa[node.where]
    ties = self_hit.astype(np.int64)
    np.add.at(ties, node.where, src_hit)
    shared = grad / ops.constant(np.maximum(ties, 1), grad)
    return ops.mask(self_hit, shared), ops.mask(src_hit, ops.getitem(shared, node.where))


def _prod_rule(node, ops, grad, x, src, out):
    """out = x · Π src;  dx = grad · Π src;  dsrc = grad times the product of the other values (exact when a
    value is 0: the product is then taken without it)"""
    where, sa = node.where, ops.raw(src)
    ones = ops.ones_like(x)
    dx = grad * _product_into(ops, node, ones, src)
    zero = sa == 0
    zeros_there = np.zeros(ops.raw(x).shape, dtype=np.int64)
    np.add.at(zeros_there, where, zero)
    lone_zero = zero & (zeros_there[where] == 1)
    # A value that is the only zero at its position: the product of the others, with it taken as 1.
    without_it = _product_into(ops, node, x if node.include_self else ones, ops.select(lone_zero, 1.0, src))
    by_division = ops.getitem(grad * out, where) / ops.select(zero, 1.0, src)
    return dx, ops.select(lone_zero, ops.getitem(grad * without_it, where), by_division)


def _product_into(ops, node, base, values):
    """``base`` with ``values`` multiplied in at the node's positions: a recorded ``scatter_reduce`` under
    create_graph, NumPy's ``multiply.at`` otherwise."""
    if ops.recording:
        return scatter_reduce(base, node.dim, wrap(node.index), values, "prod")
    out = base.copy()
    np.multiply.at(out, node.where, values)
    return out


def _check_scatter_reduce(a, idx, s, d):
    for other, name in ((a, "self"), (s, "src")):
        if idx.ndim != other.ndim and not (idx.ndim <= 1 and other.ndim <= 1):
            raise RuntimeError(f"Index tensor must have the same number of dimensions as {name} tensor")
    for k in range(idx.ndim):
        if (k != d and idx.shape[k] > a.shape[k]) or idx.shape[k] > s.shape[k]:
            raise RuntimeError(f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(a.shape)} apart "
                               f"from dimension {d} and to be no larger size than src {_fmt(s.shape)}")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``input`` with each ``src[i][j]`` reduced into ``out[i][index[i][j]]`` (for dim 1) by ``reduce``:
    'sum', 'prod', 'mean', 'amax' or 'amin'; ``input``'s own values take part unless ``include_self=False``."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)      # PyTorch accepts the older names too
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    a, s = input._data, src._data
    idx = _int_index(index, "scatter")
    if s.dtype != a.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = _wrap_dim(dim, a.ndim)
    if a.ndim <= 1:
        a, idx, s = _lifted(a), _lifted(idx), _lifted(s)
    _check_scatter_reduce(a, idx, s, d)
    where = _along(idx, d, a.shape[d])
    region = tuple(slice(0, n) for n in idx.shape)
    out, counts = _scatter_reduce_array(a, where, s[region], reduce, include_self)
    result = wrap(out.reshape(input._data.shape))
    if wants_grad(input, src):
        scattered = np.zeros(a.shape, dtype=bool)
        scattered[where] = True
        record(ScatterReduceBackward0, (input, src), result, (input, src, result), reduce=reduce,
               include_self=include_self, dim=d, index=idx, where=where, scattered=scattered, counts=counts,
               src_region=region if idx.shape != s.shape else None)
    return result


# --- index_reduce ----------------------------------------------------------------------------------------

class IndexReduceBackward0(ScatterReduceBackward0):
    """out = x with source's slices reduced in at positions index along dim (prod, mean, amax or amin);
    dx, dsource = each value's share of the reduction it took part in (scatter_reduce's rule)"""
    __slots__ = ()


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _check_index_reduce(a, s, idx, d):
    if idx.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{scalar_name(idx.dtype)} and size: {_fmt(idx.shape)}")
    if idx.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {scalar_name(idx.dtype)}")
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_name(a.dtype)}) and source ({scalar_name(s.dtype)}) must "
                           "have the same scalar type")
    if s.ndim != a.ndim or any(k != d and s.shape[k] != a.shape[k] for k in range(a.ndim)):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {_fmt(a.shape)} source.shape = {_fmt(s.shape)}")
    if s.shape[d] != idx.size:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({s.shape[d]}), for dim: {d}")
    if ((idx < 0) | (idx >= a.shape[d])).any():
        raise IndexError("index out of range in self")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of ``input`` with slice i of ``source`` reduced into position ``index[i]`` along ``dim`` by
    ``reduce`` ('prod', 'mean', 'amax' or 'amin'); ``input``'s own values take part unless
    ``include_self=False``. The same as ``scatter_reduce`` with ``index`` spread along ``dim``."""
    warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    a, s, idx = input._data, source._data, index._data
    if a.ndim == 0 and s.ndim == 0:
        a, s = _lifted(a), _lifted(s)           # one value for one position, as the index ops read a 0-d tensor
    d = _wrap_dim(dim, a.ndim)
    _check_index_reduce(a, s, idx, d)
    spread = np.broadcast_to(idx.reshape([-1 if k == d else 1 for k in range(s.ndim)]).astype(np.int64), s.shape)
    spread = spread.copy()                      # the rule reads it at backward time
    grids = list(np.indices(spread.shape, sparse=True))
    grids[d] = spread
    where = tuple(grids)
    out, counts = _scatter_reduce_array(a, where, s, reduce, include_self)
    result = wrap(out.reshape(input._data.shape))
    if wants_grad(input, source):
        scattered = np.zeros(a.shape, dtype=bool)
        scattered[where] = True
        record(IndexReduceBackward0, (input, source), result, (input, source, result), reduce=reduce,
               include_self=include_self, dim=d, index=spread, where=where, scattered=scattered, counts=counts,
               src_region=None)
    return result


index_put_ = make_inplace(index_put, "index_put_")
