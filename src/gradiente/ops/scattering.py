"""Writing one tensor into a region of another, out of place: ``select_scatter``, ``slice_scatter``,
``diagonal_scatter``, ``as_strided_scatter`` (the region a view would see), ``index_put`` (advanced
indices, as ``x[indices] = v``), ``put`` (flat positions) and ``index_reduce`` (positions along a dim,
reduced with the values already there); ``index_put_``, ``put_`` and ``index_reduce_`` are their in-place
forms.

The rules share one shape: the input's gradient is the incoming one with the written region zeroed (kept
whole when values are added in, ``accumulate=True``), and the written values' gradient is the incoming
one read back at the region.
"""
import warnings

import numpy as np

from ..core.dtype import scalar_name
from ..core.inplace import make_inplace
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor, _wrap_dim
from . import indexing
from .assembling import ScatterReduceBackward0, _flat_positions, _lifted, _scatter_reduce_array
from .indexing import _fit_value, _index_array
from .views import _fmt, diagonal_index

__all__ = ["as_strided_scatter", "diagonal_scatter", "index_put", "index_put_", "index_reduce", "put", "select_scatter",
           "slice_scatter"]


# --- the region a view sees ------------------------------------------------------------------------------

class SelectScatterBackward0(Node):
    """out = x with out[region] = src;  dx = grad zeroed in the region;  dsrc = grad[region]"""
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
    values = _fit_value(values, None, advanced, out.dtype)
    if accumulate:
        region_shape = out[advanced].shape
        try:
            added = np.broadcast_to(values._data, region_shape)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {_fmt(values._data.shape)} cannot be broadcast "
                               f"to indexing result of shape {_fmt(region_shape)}") from None
        np.add.at(out, advanced, added)
    else:
        indexing._assign(out, advanced, values._data)
    result = wrap(out)
    if wants_grad(input, values):
        record(IndexPutBackward0, (input, values), result, advanced=advanced, accumulate=accumulate)
    return result


class PutBackward0(Node):
    """out = x with source written at flat positions (added if accumulate);  dx = grad zeroed there (grad if
    accumulate);  dsource = grad at those positions"""
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
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
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
