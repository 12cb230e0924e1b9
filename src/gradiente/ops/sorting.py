"""Sorting and selection by order: sort, argsort, msort, topk, kthvalue, mode, the running extremes cummax
and cummin, unique and unique_consecutive, and the binary searches searchsorted and bucketize.

Order is PyTorch's: NaN sorts as the largest value, and every sort here is stable, ascending or descending
(equal elements keep their input order). PyTorch's default sort is stable in practice only for short rows,
and its topk, kthvalue and mode pick among equal elements by the inner workings of a selection algorithm:
where PyTorch leaves ties unspecified like this, gradiente returns the stable choice, so the values agree
but the index of a tied element may differ. ``topk(sorted=False)`` returns sorted results too.

Every differentiable op here takes elements of x at indices along a dim, so all share one rule: the
gradient goes back to the positions the indices name, added up where several outputs took the same element
(cummax). unique and unique_consecutive have no derivative in PyTorch; backward through them raises, as there.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.creation import c_order, in_layout_of
from ..core.dtype import scalar_name
from ..core.meta import is_meta, no_meta_kernel
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor, _wrap_dim
from .autocast import autocast_entry
from .binary_math import lerp
from .indexing import _along, gather, masked_fill
from .joining import broadcast_tensors
from .nn._common import mul_scalar
from .reductions import _at_least_1d, _check_nonempty_dims, _reduced_shape
from .unary import ceil, floor
from .unary import round as round_half_even
from .views import _fmt, _squeeze_result, flatten, transpose, transpose_, unsqueeze, unsqueeze_, view

__all__ = ["argsort", "bucketize", "cummax", "cummin", "kthvalue", "mode", "msort", "searchsorted", "sort", "topk",
           "unique", "unique_consecutive", "quantile", "nanquantile"]



# --- the rules -------------------------------------------------------------------------------------------

class SortBackward0(Node):
    """out = x[indices] along dim;  dx = zeros with grad added back at indices (along dim)"""
    formula = "∂ out_i/∂x_j = 1 where indices_i = j, else 0"
    keepdim = True          # a reduction (kthvalue, mode) records its own: without keepdim its dim comes back first

    def backward(self, ops, grad):
        indices = self.saved(ops)[0]        # cummax and cummin save x too, as PyTorch (for its version)
        indices, dim, shape = ops.raw(indices), self.dim, self._input_meta[0][0]
        if len(shape) == 0:
            return (grad,)
        if not self.keepdim:
            grad, indices = ops.unsqueeze(grad, dim), np.expand_dims(indices, dim)
        return (ops.embed(grad, shape, _along(indices, dim, shape[dim])),)


class SortBackward1(SortBackward0):
    """sort called with ``stable=``: PyTorch's other overload, the same rule"""


class TopkBackward0(SortBackward0):
    """out = the k largest (smallest) x along dim;  dx = grad at their indices, 0 elsewhere"""


class KthvalueBackward0(SortBackward0):
    """out = the k-th smallest x along dim;  dx = grad at its index, 0 elsewhere"""


class ModeBackward0(SortBackward0):
    """out = the most frequent x along dim;  dx = grad at the index returned, 0 elsewhere"""


class CummaxBackward0(SortBackward0):
    """out_i = max_{j<=i} x_j;  dx_j = Σ grad_i over the i whose maximum is x_j"""
    formula = "∂ out_i/∂x_j = 1 where x_j is the running maximum at i, else 0"


class CumminBackward0(SortBackward0):
    """out_i = min_{j<=i} x_j;  dx_j = Σ grad_i over the i whose minimum is x_j"""
    formula = "∂ out_i/∂x_j = 1 where x_j is the running minimum at i, else 0"


class Unique2Backward0(Node):
    """unique has no derivative in PyTorch: backward raises, as there"""
    formula = "no derivative defined"
    op = "_unique2"

    def backward(self, ops, grad):
        raise NotImplementedError(f"the derivative for '{self.op}' is not implemented.")


class UniqueDimBackward0(Unique2Backward0):
    """unique with a dim: no derivative in PyTorch"""
    op = "unique_dim"


class UniqueConsecutiveBackward0(Unique2Backward0):
    """unique_consecutive: no derivative in PyTorch"""
    op = "unique_consecutive"


# --- shared pieces ---------------------------------------------------------------------------------------

def _refuse_complex(a, message):
    if a.dtype.kind == "c":
        raise RuntimeError(message)


def _not_implemented_for(np_dtype, kernel, kinds):
    """PyTorch's error for a dtype its kernel has no version for (``kinds``: NumPy kind letters)."""
    if np_dtype.kind in kinds:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(np_dtype)}\'')


def _stable_order(a, dim, descending):
    """The indices that sort ``a`` along ``dim``, equal elements in input order; NaN is the largest value
    (NumPy's order too)."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    # Sorting the reversed rows ascending, then reversing the result, puts the largest first while equal
    # elements keep their input order (negating would overflow integers and would still leave NaN last).
    flipped = np.argsort(np.flip(a, dim), axis=dim, kind="stable")
    return (a.shape[dim] - 1) - np.flip(flipped, dim)


def _taken(input, indices, dim, shape, node_cls, pair, *, preserve_layout=False, save_input=False, **attrs):
    """The ``(values, indices)`` pair of an op that takes the elements of ``input`` at ``indices`` along
    ``dim`` (the result reshaped to ``shape``), recorded with ``node_cls`` if input requires grad.
    ``preserve_layout``: both laid out as ``input`` (sort's results, as PyTorch's)."""
    values = np.take_along_axis(_at_least_1d(input._data), indices, dim).reshape(shape)
    indices = indices.reshape(shape).astype(np.int64, copy=False)
    if preserve_layout:
        values, indices = in_layout_of(values, input._data), in_layout_of(indices, input._data)
    values, indices = wrap(values), wrap(indices)
    if wants_grad(input):
        # The indices are saved as a tensor, so that changing them in place before backward is caught.
        record(node_cls, (input,), values, (indices, input) if save_input else (indices,), dim=dim, **attrs)
    return pair(values, indices)


def _run_starts(ordered):
    """True where an element differs from the one before it along the last axis (and at the first): the
    starts of runs of equal values. NaN equals nothing, so each NaN is a run of its own, as in PyTorch."""
    starts = np.ones(ordered.shape, dtype=bool)
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    return starts


# --- sort, argsort, msort --------------------------------------------------------------------------------

# PyTorch has two overloads, sort(dim, descending) and sort(*, stable, dim, descending); passing `stable` at
# all, even None or False, selects the second, whose node is SortBackward1. This marks "not passed".
_NOT_GIVEN = object()


def sort(input, dim=-1, descending=False, *, stable=_NOT_GIVEN):
    """``(values, indices)``: ``input`` sorted along ``dim``, and where each value was. Always stable (equal
    elements keep their order); NaN sorts as the largest value."""
    a = input._data
    _refuse_complex(a, " Sort does not support complex dtypes on CPU")
    d = _wrap_dim(dim, a.ndim)
    order = _stable_order(_at_least_1d(a), d, descending)
    node_cls = SortBackward0 if stable is _NOT_GIVEN else SortBackward1
    return _taken(input, order, d, a.shape, node_cls, return_types.sort, preserve_layout=True)


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (int64). Always stable, as ``sort``: ``stable`` is
    accepted for PyTorch's signature and changes nothing."""
    a = input._data
    _refuse_complex(a, " Sort does not support complex dtypes on CPU")
    d = _wrap_dim(dim, a.ndim)
    order = _stable_order(_at_least_1d(a), d, descending).reshape(a.shape).astype(np.int64, copy=False)
    return wrap(in_layout_of(order, a))


def msort(input):
    """``input`` sorted along its first dim: ``sort(input, 0).values``."""
    return sort(input, 0).values


# --- topk, kthvalue, mode --------------------------------------------------------------------------------

def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest elements along ``dim`` (the smallest with
    ``largest=False``), largest (smallest) first. Among equal elements the earlier comes first; with
    ``sorted=False`` PyTorch returns them in an unspecified order, gradiente still sorted."""
    a = input._data
    if a.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    _refuse_complex(a, " topk does not support complex dtypes on CPU")
    d = _wrap_dim(dim, a.ndim)
    if not 0 <= k <= (a.shape[d] if a.ndim else 1):
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        k = 1               # a 0-d tensor gives its one element, even for k=0, as in PyTorch
    # A full stable sort, then the first k: simpler than a partial selection, and ties come out in order.
    order = np.take(_stable_order(_at_least_1d(a), d, descending=largest), np.arange(k), axis=d)
    shape = a.shape[:d] + (k,) + a.shape[d + 1:] if a.ndim else ()
    return _taken(input, order, d, shape, TopkBackward0, return_types.topk)


def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element along ``dim`` (k counts from 1)."""
    a = input._data
    _not_implemented_for(a.dtype, "kthvalue_cpu", "bc")
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty_dims("kthvalue", a, (d,))
    if not 1 <= k <= (a.shape[d] if a.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    indices = np.take(_stable_order(_at_least_1d(a), d, False), [k - 1], axis=d)
    shape = _reduced_shape(a, (d,), keepdim)
    return _taken(input, indices, d, shape, KthvalueBackward0, return_types.kthvalue, keepdim=keepdim)


def mode(input, dim=-1, keepdim=False):
    """``(values, indices)`` of the most frequent value along ``dim``: the smallest such value if several
    are equally frequent, and the index of its last occurrence."""
    a = input._data
    _not_implemented_for(a.dtype, "mode_cpu", "c")
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty_dims("mode", a, (d,))
    work = _at_least_1d(a)
    index = _mode_index(np.moveaxis(work, d, -1).reshape(-1, work.shape[d]))
    indices = np.expand_dims(index.reshape(tuple(np.delete(work.shape, d))), d)
    shape = _reduced_shape(a, (d,), keepdim)
    return _taken(input, indices, d, shape, ModeBackward0, return_types.mode, keepdim=keepdim)


def _mode_index(rows):
    """For each row, the index of the last occurrence of its most frequent value (the smallest such)."""
    order = np.argsort(rows, axis=1, kind="stable")
    starts = _run_starts(np.take_along_axis(rows, order, 1))
    # Number the runs of equal values across all rows at once, then give each element its run's length.
    run = np.cumsum(starts).reshape(starts.shape) - 1
    length = np.bincount(run.reshape(-1), minlength=1)[run]
    # The first longest run in sorted order holds the smallest most frequent value; with a stable sort its
    # last element is that value's last occurrence.
    first = np.argmax(length, axis=1)
    row = np.arange(len(rows))
    return order[row, first + length[row, first] - 1]


# --- cummax, cummin --------------------------------------------------------------------------------------

def _running_extreme(input, dim, name, accumulate, node_cls, pair):
    """``(values, indices)`` of a running max or min along ``dim``: the index of the latest element equal
    to the running value (a NaN, once one is seen, as the value then stays NaN)."""
    a = input._data
    _not_implemented_for(a.dtype, f"{name}_cpu", "c")
    if a.ndim == 0 and dim not in (0, -1):
        raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    d = _wrap_dim(dim, a.ndim)
    work = _at_least_1d(a)
    running = accumulate(work, axis=d)
    # Where an element equals the running value at its own position, the running value was reached there
    # (and stays until the next such place); a NaN equals nothing, but is the running value from there on.
    reached = (work == running) | (np.isnan(work) if dt.kind(work.dtype) == "f" else False)
    positions = np.arange(work.shape[d]).reshape([-1 if i == d else 1 for i in range(work.ndim)])
    # contiguous, as PyTorch's scan kernels write them (NumPy's accumulate keeps the input's layout)
    indices = c_order(np.maximum.accumulate(np.where(reached, positions, 0), axis=d))
    return _taken(input, indices, d, a.shape, node_cls, pair, save_input=True)


def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and where it was last reached."""
    return _running_extreme(input, dim, "cummax", np.maximum.accumulate, CummaxBackward0, return_types.cummax)


def cummin(input, dim):
    """``(values, indices)``: the running minimum along ``dim`` and where it was last reached."""
    return _running_extreme(input, dim, "cummin", np.minimum.accumulate, CumminBackward0, return_types.cummin)


# --- unique, unique_consecutive --------------------------------------------------------------------------

def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input``, ascending (1-D), or with ``dim`` its distinct slices along
    ``dim``; with ``return_inverse`` also where each element (slice) went, with ``return_counts`` how many
    each one stands for. Sorted whatever ``sorted`` says, as PyTorch's CPU version is. NaNs stay distinct."""
    if is_meta(input._data):
        raise no_meta_kernel("_unique2" if dim is None else "unique_dim")
    return _unique(input, dim, return_inverse, return_counts, consecutive=False)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``unique`` of each run of equal consecutive elements (slices along ``dim``), in input order."""
    return _unique(input, dim, return_inverse, return_counts, consecutive=True)


def _unique(input, dim, return_inverse, return_counts, consecutive):
    """unique and unique_consecutive on rows: each element (with ``dim``, each slice along it) is one row of a
    2-D array. Sort the rows (unique only), find where runs of equal rows start, keep each run's first."""
    a = input._data
    if dim is None:
        _not_implemented_for(a.dtype, "unique", "c")
        rows, node_cls = a.reshape(-1, 1), Unique2Backward0
    else:
        _not_implemented_for(a.dtype, "unique_dim", "c")
        d = _unique_dim(a, dim)
        rest = a.shape[:d] + a.shape[d + 1:]
        rows, node_cls = np.moveaxis(a, d, 0).reshape(a.shape[d], math.prod(rest)), UniqueDimBackward0
    if consecutive:
        order, node_cls = np.arange(len(rows)), UniqueConsecutiveBackward0
    else:
        order = np.lexsort(rows.T[::-1])       # lexsort's last key is its primary one: a row's first element
    ordered = rows[order]
    # A row starts a new run where any of its elements differs from the row before it.
    starts = _run_starts(ordered.T).any(axis=0)
    kept = ordered[starts]
    if dim is None:
        output, inverse_shape = wrap(kept.reshape(-1)), a.shape
    else:
        output, inverse_shape = wrap(np.moveaxis(kept.reshape((len(kept), *rest)), 0, d)), (a.shape[d],)
    if wants_grad(input):
        record(node_cls, (input,), output)
    if not (return_inverse or return_counts):
        return output
    result = (output,)
    if return_inverse:
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.cumsum(starts) - 1
        result += (wrap(inverse.reshape(inverse_shape)),)
    if return_counts:
        counts = np.diff(np.append(np.flatnonzero(starts), len(starts)))
        result += (wrap(counts.astype(np.int64, copy=False)),)
    return result


def _all_outputs(result, return_inverse, return_counts, n):
    """``unique``'s result as ATen's forms return it: always ``n`` tensors, an empty int64 one standing for an
    output that was not asked for."""
    result = result if isinstance(result, tuple) else (result,)
    empty = wrap(np.empty(0, dtype=np.int64))
    output, rest = result[0], list(result[1:])
    inverse = rest.pop(0) if return_inverse else empty
    counts = rest.pop(0) if return_counts else wrap(np.empty(0, dtype=np.int64))
    return (output, inverse, counts)[:n]


def aten_unique(input, sorted=True, return_inverse=False):
    """``torch._unique``: ``(output, inverse)``, the inverse empty unless asked for."""
    return _all_outputs(unique(input, sorted, return_inverse), return_inverse, False, 2)


def aten_unique2(input, sorted=True, return_inverse=False, return_counts=False):
    """``torch._unique2``: ``(output, inverse, counts)``, each one not asked for empty."""
    return _all_outputs(unique(input, sorted, return_inverse, return_counts), return_inverse, return_counts, 3)


def aten_unique_dim(input, dim, sorted=True, return_inverse=False, return_counts=False):
    """``torch._VF.unique_dim``: ``(output, inverse, counts)`` of the slices along ``dim``; the counts always, as
    PyTorch's CPU kernel gives them."""
    return _all_outputs(unique(input, sorted, return_inverse, True, dim), return_inverse, True, 3)


def _unique_dim(a, dim):
    """``dim`` wrapped, with PyTorch's errors: a 0-d tensor has no dims, and a zero-size dim must be the
    one chosen."""
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, a.ndim)
    empty = [i for i, s in enumerate(a.shape) if s == 0]
    if len(empty) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if empty and empty[0] != d:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return d


# --- searchsorted, bucketize -----------------------------------------------------------------------------

_PREFIX = "torch.searchsorted(): "


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value of ``input`` (a tensor or a number), the index at which inserting it into
    ``sorted_sequence`` (1-D, or rows along the last dim matching ``input``'s leading dims) keeps it
    sorted: before equal elements, or after them with ``right=True`` / ``side="right"``. ``sorter``: the
    indices that sort an unsorted sequence. int64 indices (int32 with ``out_int32``)."""
    seq = sorted_sequence._data
    values = input._data if isinstance(input, Tensor) else np.asanyarray(input)
    right = _search_side(side, right)
    if sorter is not None:
        seq = _apply_sorter(seq, sorter)
    _check_search_shapes(seq, values)
    common = dt.result_type(sorted_sequence, input)._np
    _not_implemented_for(common, "searchsorted_out_cpu", "bc")
    found = _bisect(seq.astype(common, copy=False), values.astype(common, copy=False), right)
    return wrap(found.astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of ``input`` among the 1-D ``boundaries``: ``searchsorted(boundaries,
    input)``, with the same ``right`` and ``out_int32``."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _search_side(side, right):
    """Whether to search to the right of equal elements, from ``side`` and ``right`` (which must agree)."""
    if side is None:
        return right
    if side not in ("left", "right"):
        raise RuntimeError(f"{_PREFIX}side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError(f"{_PREFIX}side and right can't be set to opposites, got side of left while right was True")
    return side == "right"


def _apply_sorter(seq, sorter):
    """The sequence in the order ``sorter`` gives (a tensor of int64 indices along the last dim)."""
    order = sorter._data
    if order.shape != seq.shape:
        raise RuntimeError(f"{_PREFIX}boundary and sorter must have the same size, but got boundary tensor "
                           f"{_fmt(seq.shape)}and got sorter tensor {_fmt(order.shape)}")
    if order.dtype != np.int64:
        raise RuntimeError(f"{_PREFIX}sorter must be a tensor of long dtype but got dtype {scalar_name(order.dtype)}")
    if seq.ndim == 0:
        return seq              # refused next, by the shape checks (PyTorch fails here with an internal error)
    if order.size and (order.min() < 0 or order.max() >= seq.shape[-1]):
        raise RuntimeError(f"{_PREFIX}sorter index out of range")
    return np.take_along_axis(seq, order, -1)


def _check_search_shapes(seq, values):
    if seq.ndim == 0:
        raise RuntimeError(f"{_PREFIX}boundaries tensor should have positive dimension, but got 0 dimension")
    if seq.ndim > 1 and values.ndim == 0:
        raise RuntimeError(f"{_PREFIX}input value can be a scalar only when boundaries tensor dimension is 1, but we "
                           f"got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim > 1 and seq.shape[:-1] != values.shape[:-1]:
        raise RuntimeError(f"{_PREFIX}boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                           "boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{_fmt(seq.shape)} and input value tensor {_fmt(values.shape)}")


def _bisect(seq, values, right):
    """For every value, the first position in its row of ``seq`` whose element is not below it (``>=``;
    ``>`` with ``right``), by bisection in all rows at once. The same halving as PyTorch's kernel, so NaN
    (compares false) and unsorted rows give PyTorch's answers too."""
    n = seq.shape[-1]
    rows = seq.reshape(1, n) if seq.ndim == 1 else seq     # a 1-D sequence serves every value: one row
    v = values.reshape(1, -1) if seq.ndim == 1 else values
    lo, hi = np.zeros(v.shape, dtype=np.int64), np.full(v.shape, n, dtype=np.int64)
    searching = lo < hi
    while searching.any():
        mid = lo + (hi - lo) // 2
        at = np.take_along_axis(rows, np.minimum(mid, n - 1), -1)
        below = ~(at > v) if right else ~(at >= v)      # not `<`: a NaN on either side sends the search right
        lo = np.where(searching & below, mid + 1, lo)
        hi = np.where(searching & ~below, mid, hi)
        searching = lo < hi
    return lo.reshape(values.shape)


# --- quantile, nanquantile ----------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(input, q, interpolation):
    """PyTorch's checks, in its order (its messages say quantile() for nanquantile too); returns q as an array
    of the input's dtype."""
    a = input._data
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if not isinstance(q, Tensor) and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if a.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    q_array = q._data if isinstance(q, Tensor) else np.asanyarray(q, dtype=a.dtype)
    if q_array.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q_array.dtype != a.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if isinstance(q, Tensor) and not ((q_array >= 0) & (q_array <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return q_array


def _sorted_slices(input, dim, keepdim):
    """The values to take quantiles of, sorted along a last dim, in a tensor of shape ``kept + (n,)`` (``kept``:
    the result's shape without the q dim), recorded as PyTorch records it (sort, then view)."""
    a = input._data
    if dim is None:
        values = sort(flatten(input))[0]
        kept = (1,) * a.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, a.ndim)
        moved = input if d == a.ndim - 1 else transpose(unsqueeze(input, -1), d, -1)
        values = sort(moved, -1)[0]
        kept = _reduced_shape(a, (d,), keepdim)
    return view(values, kept + (values._data.shape[-1],))


def _ranks(sorted_values, q, interpolation, ignore_nan):
    """The fractional position of each quantile in each sorted slice (shape ``kept + (len(q),)``), computed as
    PyTorch computes it, with tensor ops: q receives a gradient through the interpolation weights. NaNs sort
    last: a slice with one has the last position (quantile), or only its other values count (nanquantile;
    position 0 when there are none, which reads the NaN)."""
    s = sorted_values._data
    nan = np.isnan(s)
    # (a 0-d q broadcasts against the slices' size-1 dim as a 1-D one would)
    if ignore_nan:
        counts = wrap((~nan).sum(axis=-1, keepdims=True) - 1)
        ranks = q * counts
        ranks = masked_fill(ranks, ranks._data < 0, 0)
    else:
        last = s.shape[-1] - 1
        ranks, nan_slices = broadcast_tensors(mul_scalar(q, last), wrap(nan.any(axis=-1, keepdims=True)))
        ranks = masked_fill(ranks, nan_slices, last)
    round_to = {"lower": floor, "higher": ceil, "nearest": round_half_even}.get(interpolation)
    return round_to(ranks) if round_to is not None else ranks


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    q_array = _check_quantile(input, q, interpolation)
    sorted_values = _sorted_slices(input, dim, keepdim)
    ranks = _ranks(sorted_values, q if isinstance(q, Tensor) else wrap(q_array), interpolation, ignore_nan)
    below = ranks._data.astype(np.int64)
    result = gather(sorted_values, -1, wrap(below))
    if interpolation in ("linear", "midpoint"):
        weights = wrap(np.full_like(ranks._data, 0.5)) if interpolation == "midpoint" else ranks - wrap(below)
        above = gather(sorted_values, -1, wrap(np.ceil(ranks._data).astype(np.int64)))
        result = lerp(result, above, weights)
    if q_array.ndim == 0:
        return _squeeze_result(result, -1)
    # the q dim first, with PyTorch's in-place steps on the fresh result (UnsqueezeBackward1, TransposeBackward1)
    return _squeeze_result(transpose_(unsqueeze_(result, 0), 0, -1), -1)


@autocast_entry
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q a number or a 1-D tensor, in [0, 1]) of all elements or along ``dim``: between
    the two nearest sorted values, by ``interpolation`` ('linear', 'lower', 'higher', 'midpoint', 'nearest').
    A slice holding a NaN gives NaN. A 1-D q adds a first dim to the result."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


@autocast_entry
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` over the values that are not NaN (NaN for a slice that has none)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)
