"""Ops that assemble tensors from pieces of others, each next to its derivative rule where it has its own.

Most are compositions of differentiable ops, recorded as PyTorch records them (so the graph shows the same
nodes): ``diff`` (slices and a subtraction per order), ``tensor_split``/``vsplit``/``hsplit``/``dsplit``
(slices), ``meshgrid``/``cartesian_prod``/``combinations``/``broadcast_tensors`` (views, expands, masked
selects), ``atleast_3d``/``column_stack``/``dstack`` (reshapes and a cat), ``vander`` (a cumprod copied into
a slice), ``nanmean`` (a nansum divided by a count). The rest have a node of their own, as in PyTorch:
``rot90``, ``take``, ``index_add``/``index_copy``/``index_fill`` (and their in-place forms),
``masked_scatter``, ``scatter_reduce``, ``nansum`` and the scan ``logcumsumexp``. ``tril_indices``,
``triu_indices`` and ``histc`` make integer positions or counts and are not differentiable.
"""
import math
import operator
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.errors import broadcast_shape
from ..core.inplace import make_inplace
from ..core.node import Node
from ..core.record import as_result, record, wants_grad, wrap
from ..core.tensor import Tensor, _wrap_dim
from .comparison import logical_xor
from .fill import copy_
from .indexing import _along, _int_index, masked_select
from .rearranging import _common_dtype, _each, _unpack, cat, flip, hstack, stack
from .reductions import _sum_dtype, cumprod, expand_reduced, normalize_dims
from .views import _fmt, expand, expanded_shape, flatten, narrow, reshape, slice_dim, unsqueeze, view

__all__ = ["atleast_3d", "broadcast_tensors", "cartesian_prod", "column_stack", "combinations", "diff", "dsplit",
           "dstack", "histc", "hsplit", "index_add", "index_copy", "index_fill", "logcumsumexp", "masked_scatter",
           "meshgrid", "nanmean", "nansum", "rot90", "scatter_reduce", "take", "tensor_split", "tril_indices",
           "triu_indices", "vander", "vsplit"]


# --- differences and rotations ------------------------------------------------------------------------

def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i+1] - x[i]``, ``logical_xor`` for bools),
    taken after joining ``prepend`` and ``append`` to ``input`` along ``dim``."""
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input._data.ndim)
    if prepend is not None or append is not None:
        input = cat([t for t in (_diff_operand(prepend, input, d, "prepend"), input,
                                 _diff_operand(append, input, d, "append")) if t is not None], d)
    if n == 0:
        return copy_(wrap(np.zeros_like(input._data)), input)       # a copy, recorded as PyTorch's CopyBackwards
    result = input
    for _ in range(min(n, input._data.shape[d])):                  # differences beyond the length are empty
        length = result._data.shape[d] - 1
        later, earlier = narrow(result, d, 1, length), narrow(result, d, 0, length)
        result = logical_xor(later, earlier) if result._data.dtype == np.bool_ else later - earlier
    return result


def _diff_operand(t, input, d, name):
    """``prepend`` or ``append``, checked against ``input``'s shape as PyTorch checks it."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
    shape, wanted = t._data.shape, input._data.shape
    if len(shape) != len(wanted):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i, (got, want) in enumerate(zip(shape, wanted)):
        if i != d and got != want:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input except "
                               f"along the differencing dimension; input.size({i}) = {want}, but got "
                               f"tensor.size({i}) = {got}")
    return t


class Rot90Backward0(Node):
    """out = x turned k quarter turns in the plane of dims;  dx = grad turned -k quarter turns"""
    __slots__ = ()
    formula = "rot90: gradient rotated back"

    def backward(self, ops, grad):
        return (_rotated(ops, grad, -self.k, self.dims),)


def _rotated(ops, t, k, dims):
    """``t`` turned ``k`` quarter turns from ``dims[0]`` towards ``dims[1]``: a flip and a transpose (a view)."""
    d0, d1 = dims
    k %= 4
    if k == 0:
        return t
    if k == 2:
        return ops.flip(t, (d0, d1))
    return ops.transpose(ops.flip(t, (d1,) if k == 1 else (d0,)), d0, d1)


def rot90(input, k=1, dims=(0, 1)):
    """A copy turned ``k`` quarter turns in the plane of ``dims``, from the first dim towards the second."""
    a = input._data
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    d0, d1 = _wrap_dim(dims[0], a.ndim), _wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    turns = k % 4
    # PyTorch flips into new memory and transposes that as a view: an odd turn gives a non-contiguous result.
    if turns % 2:
        array = np.swapaxes(np.flip(a, d1 if turns == 1 else d0).copy(), d0, d1)
    else:
        array = np.flip(a, (d0, d1) if turns else ()).copy()
    out = wrap(array)
    if wants_grad(input):
        record(Rot90Backward0, (input,), out, k=k, dims=(d0, d1))
    return out


# --- splitting ------------------------------------------------------------------------------------------

def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` split along ``dim``: into ``sections`` pieces as equal as can be (the first ones one
    longer), or at the listed ``indices``. A tensor argument counts as a number (0-d) or a list (1-d)."""
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, a.ndim)
    how = indices_or_sections
    if isinstance(how, Tensor):
        how = _split_tensor_argument(how._data)
    n = a.shape[d]
    if isinstance(how, (list, tuple)):
        starts = [0, *(int(i) for i in how)]
        stops = starts[1:] + [n]
    else:
        sections = int(how)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        stops = list(np.cumsum([size + (i < extra) for i in range(sections)]))
        starts = [0, *stops[:-1]]
    return tuple(slice_dim(input, d, int(start), int(stop), 1) for start, stop in zip(starts, stops))


def _split_tensor_argument(t):
    if t.dtype != np.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{scalar_name(t.dtype)}")
    if t.ndim > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {t.ndim} dims")
    return int(t) if t.ndim == 0 else t.tolist()


def _split_along(name, input, indices_or_sections, dim, min_dims):
    """``vsplit``/``hsplit``/``dsplit``: ``tensor_split`` along ``dim``, where a number of sections must divide
    the dim's size."""
    ndim = input._data.ndim
    if ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with "
                           f"{ndim} dimensions!")
    if isinstance(indices_or_sections, (list, tuple)):
        return tensor_split(input, indices_or_sections, dim)
    sections = operator.index(indices_or_sections)
    size = input._data.shape[dim]
    if sections == 0 or size % sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{size} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 (rows) of a tensor of at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (columns), or dim 0 of a 1-D tensor."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input._data.ndim > 1 else 0, 1)


def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 (depth) of a tensor of at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


# --- grids, broadcasting and combinations ---------------------------------------------------------------

# PyTorch's text, with the C++ location it names, so that the printed warning is the same line.
_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
                     "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors (0-d ones count as length 1): output i holds tensor i's values along
    dim i (``indexing='ij'``); with ``'xy'`` the first two dims are swapped (Cartesian, as in NumPy). Each
    output is an expanded view of its input. Without ``indexing`` PyTorch warns, and uses 'ij'."""
    tensors = _unpack(tensors)
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    _common_dtype(tensors)                      # PyTorch's TypeError for an element that is not a tensor
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0
    grid = [0] * len(tensors)
    for t, axis in zip(tensors, axes):
        grid[axis] = t._data.size
    outs = []
    for t, axis in zip(tensors, axes):
        shape = [1] * len(grid)
        shape[axis] = -1
        outs.append(expand(view(t, tuple(shape)), tuple(grid)))
    return tuple(outs)


def _check_vector(t):
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(t._data.shape)}")


def cartesian_prod(*tensors):
    """Every tuple taking one element from each 1-D tensor, in order, as the rows of a matrix (a single tensor
    is returned as it is)."""
    if tensors:
        _common_dtype(tensors)                  # PyTorch's TypeError for an element that is not a tensor
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-D tensor (with repeats if ``with_replacement``), in
    lexicographic order of position, as the rows of a matrix: a grid of ``r`` copies, its ordered rows selected."""
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return wrap(np.empty(0, dtype=input._data.dtype))
    n = input._data.shape[0]
    positions = np.indices((n,) * r)
    in_order = np.less_equal if with_replacement else np.less
    mask = np.ones((n,) * r, dtype=bool)
    for k in range(r - 1):
        mask &= in_order(positions[k], positions[k + 1])
    mask_tensor = wrap(mask)
    return stack([masked_select(g, mask_tensor) for g in meshgrid(*[input] * r, indexing="ij")], 1)


def broadcast_tensors(*tensors):
    """The tensors expanded (as views) to their common broadcast shape; one already of that shape is returned
    as it is."""
    if not tensors:
        return ()
    _common_dtype(tensors)                      # PyTorch's TypeError for an element that is not a tensor
    shape = broadcast_shape(*(t._data.shape for t in tensors))
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


def _triangle_indices(np_fn, name, row, col, offset, dtype):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    target = np.dtype(np.int64) if dtype is None else dtype._np
    if target not in (np.int32, np.int64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_name(target)}'")
    rows, cols = np_fn(row, offset, col)
    return wrap(np.stack([rows, cols]).astype(target))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) positions of the lower triangle (on and below diagonal ``offset``) of a ``row`` x
    ``col`` matrix, row by row, as a 2 x N tensor."""
    return _triangle_indices(np.tril_indices, "tril_indices", row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) positions of the upper triangle (on and above diagonal ``offset``) of a ``row`` x
    ``col`` matrix, row by row, as a 2 x N tensor."""
    return _triangle_indices(np.triu_indices, "triu_indices", row, col, offset, dtype)


# --- stacking -------------------------------------------------------------------------------------------

def _at_least_3d(t):
    ndim = t._data.ndim
    if ndim == 0:
        return reshape(t, (1, 1, 1))
    if ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if ndim == 2 else t


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: a 0-d one as (1, 1, 1), a 1-D one of n as (1, n, 1), a 2-D one with a
    last dim of 1. One tensor gives a tensor; several, or a list, give a tuple."""
    return _each(tensors, _at_least_3d)


def column_stack(tensors):
    """The tensors side by side as columns: 0-d and 1-D ones become columns, the rest are joined along dim 1."""
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return hstack([reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in tensors])


def dstack(tensors):
    """The tensors joined along dim 2 (depth), after ``atleast_3d``."""
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat([_at_least_3d(t) for t in tensors], 2)


# --- take and the index_* family ------------------------------------------------------------------------

class TakeBackward0(Node):
    """out = x.flatten()[index];  dx = zeros with grad added back at those flat positions (repeats add up)"""
    __slots__ = ()
    formula = "∂ take(x)/∂x: the gradient added back at each flat position taken"

    def backward(self, ops, grad):
        shape = self._input_meta[0][0]
        flat = ops.embed(ops.reshape(grad, (-1,)), (math.prod(shape),), (self.index,))
        return (ops.reshape(flat, shape),)


def _flat_positions(idx, n, empty_message):
    """The flat (C-order) positions ``idx`` into a tensor of ``n`` elements as a vector, negative ones counted
    from the end; PyTorch's errors for an empty tensor (``empty_message``) and a position out of range. What
    take reads and put writes."""
    if n == 0 and idx.size:
        raise IndexError(empty_message)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad].flat[0])} on a tensor of {n} elements.")
    return np.where(idx < 0, idx + n, idx).reshape(-1)


def take(input, index):
    """The elements of ``input``, read as 1-D, at positions ``index`` (negative ones count from the end); the
    result has ``index``'s shape."""
    if not isinstance(index, Tensor):
        raise TypeError(f"take(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    a, idx = input._data, index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {scalar_name(idx.dtype)}")
    flat = _flat_positions(idx, a.size, "take(): tried to take from an empty tensor")
    out = wrap(a.reshape(-1)[flat].reshape(idx.shape))
    if wants_grad(input):
        record(TakeBackward0, (input,), out, index=flat)
    return out


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
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the written positions;  ∂/∂source: the gradient at them"

    def backward(self, ops, grad):
        (x_node, _), (source_node, _) = self.next_functions
        return (ops.mask(self.keep, grad) if x_node is not None else None,
                ops.getitem(_lifted(grad), self.where) if source_node is not None else None)


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
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the filled positions"

    def backward(self, ops, grad):
        return (ops.mask(self.keep, grad),)


class IndexFillBackward1(Node):
    """out = x with the 0-d tensor v at positions index along dim;  dx = grad zeroed there;
    dv = Σ grad at those positions"""
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
    result = wrap(np.where(keep, a, np.asarray(fill).astype(a.dtype)))
    if wants_grad(input, value):
        if isinstance(value, Tensor):
            record(IndexFillBackward1, (input, value), result, keep=keep)
        else:
            record(IndexFillBackward0, (input,), result, keep=keep)
    return result


# --- masked_scatter and scatter_reduce ------------------------------------------------------------------

class MaskedScatterBackward0(Node):
    """out = x with source's first k elements written, in order, where mask (k of them) is True;
    dx = grad where mask is False;  dsource = grad's masked elements, in order, zeros after them"""
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
    low, high = (-np.inf, np.inf) if np_dtype.kind in "fc" else (np.iinfo(np_dtype).min, np.iinfo(np_dtype).max)
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


# --- NaN-aware reductions -------------------------------------------------------------------------------

class NansumBackward0(Node):
    """out = Σ x over dims, NaNs counted as 0;  dx = grad broadcast back, 0 where x is NaN"""
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
    kept = ~np.isnan(a) if a.dtype.kind == "f" else np.ones(a.shape, dtype=bool)
    out = as_result(np.where(kept, a, 0).sum(axis=axes, dtype=target, keepdims=keepdim), target)
    if wants_grad(input):
        record(NansumBackward0, (input,), out, kept=kept, axes=axes, keepdim=keepdim)
    return out


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (all elements by default) of the elements that are not NaN: their ``nansum`` divided
    by their count (NaN where there are none)."""
    a = input._data
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{scalar_name(a.dtype)}")
    if dtype is not None and dtype._np.kind not in "fc":
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {scalar_name(dtype._np)}")
    counts = (~np.isnan(a)).sum(axis=_reduced_axes(dim, a.ndim), keepdims=keepdim)
    with np.errstate(invalid="ignore"):         # 0 / 0 where a slice is all NaN: the NaN is the answer
        return nansum(input, dim, keepdim, dtype=dtype) / as_result(counts, np.int64)


# --- logcumsumexp ---------------------------------------------------------------------------------------

def _logcumsumexp_array(a, dim):
    """log Σ_{j<=i} exp(a_j) along ``dim``, as PyTorch's CPU scan: float32 and float16 accumulate in double."""
    work = a.astype(np.float64) if a.dtype in (np.float32, np.float16) else a
    return np.logaddexp.accumulate(work, axis=dim).astype(a.dtype, copy=False)


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
        lowest = float(np.finfo(ga.dtype).min)
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
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    d = _wrap_dim(dim, a.ndim)
    out = wrap(_logcumsumexp_array(a.reshape(a.shape or (1,)), d).reshape(a.shape))
    if wants_grad(input):
        record(LogcumsumexpBackward0, (input,), out, (input, out), dim=d)
    return out


# --- vander and histc -----------------------------------------------------------------------------------

def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D tensor: column j holds x ** (N - 1 - j) (x ** j if ``increasing``), with
    ``N`` columns (len(x) by default). Integer and bool inputs give int64.

    Recorded as in PyTorch (the powers, a cumprod, copied into a slice of the result, then a flip), with one
    intended difference: PyTorch 2.13 takes the cumprod of that slice and writes back into it, so its
    backward raises ("modified by an inplace operation"); gradiente takes the cumprod of an expanded ``x``,
    and the gradient is there."""
    a = x._data
    if a.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = a.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    target = dt.promote_types(x.dtype, dt.int64)._np
    array = np.zeros((a.shape[0], n), dtype=target)
    if n > 0:
        array[:, 0] = 1
    result = wrap(array)
    if n > 1:
        powers = cumprod(expand(unsqueeze(x, 1), (a.shape[0], n - 1)), 1)
        copy_(slice_dim(result, 1, 1, n, 1), powers)
    return result if increasing else flip(result, 1)


def _cpp_float(value):
    """A float as C++ streams print it in PyTorch's messages: 1, 0.5, inf, -nan."""
    return "-nan" if math.isnan(value) else f"{value:g}"


def histc(input, bins=100, min=0, max=0):
    """Counts of the elements in ``bins`` equal-width bins over [min, max] (the data's own range when both
    are 0), as a tensor of ``input``'s dtype; elements outside the range are ignored. Not differentiable."""
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low == high and a.size:
        low, high = float(a.min()), float(a.max())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{_cpp_float(low)}, {_cpp_float(high)}] is not finite")
    values = a.reshape(-1)
    values = values[(values >= low) & (values <= high)]
    # A value's bin from its place in the range, in the input's precision as PyTorch computes it (so a value
    # that rounding puts beside an edge lands where PyTorch puts it); the maximum goes to the last bin.
    low_, high_ = a.dtype.type(low), a.dtype.type(high)
    bin_of = np.minimum(((values - low_) * bins / (high_ - low_)).astype(np.int64), bins - 1)
    return wrap(np.bincount(bin_of, minlength=bins).astype(a.dtype))

