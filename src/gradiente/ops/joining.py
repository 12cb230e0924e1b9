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
import operator

import numpy as np

from ..core import dtype as dt
from ..core import layouts
from ..core.dtype import scalar_name
from ..core.errors import broadcast_shape
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor, _wrap_dim
from ..core.warnings_at_caller import warn
from .autocast import autocast_entry
from .indexing import masked_select
from .views import _fmt, _views, expand, flatten, reshape, slice_dim, unsqueeze, view

__all__ = ["atleast_3d", "broadcast_tensors", "cartesian_prod", "column_stack", "combinations", "dsplit", "dstack",
           "hsplit", "meshgrid", "tensor_split", "vsplit", "cat", "concat", "concatenate", "stack", "atleast_1d",
           "atleast_2d", "hstack", "vstack", "row_stack", "split", "chunk", "unbind",
           "split_with_sizes", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]


# --- differences and rotations ------------------------------------------------------------------------


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
        warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
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


# --- masked_scatter and scatter_reduce ------------------------------------------------------------------


# --- NaN-aware reductions -------------------------------------------------------------------------------


# --- logcumsumexp ---------------------------------------------------------------------------------------


# --- vander and histc -----------------------------------------------------------------------------------


# --- cat, stack and their kin -------------------------------------------------------------------------------

class CatBackward0(Node):
    """out = the inputs joined along dim;  dxᵢ = the slice of grad where xᵢ went"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ cat(x₁, x₂, ...)/∂xᵢ: the matching slice of the gradient"

    def backward(self, ops, grad):
        grads, start = [], 0
        for (node, _), size, meta in zip(self.next_functions, self.sizes, self._input_meta):
            if node is None:
                grads.append(None)
            elif meta is not None and tuple(meta[0]) == (0,):  # as PyTorch: a new empty tensor (no grad required)
                grads.append(ops.zeros((0,), grad))
            elif size is None:
                grads.append(None)
            else:
                grads.append(ops.narrow(grad, self.dim, start, size))
            start += size or 0
        return tuple(grads)

    def jvp(self, ops, *tangents):
        given = next(t for t in tangents if t is not None)
        pieces = []
        for t, size in zip(tangents, self.sizes):
            if size is None:
                continue                        # a legacy empty input, skipped by cat itself
            if t is None:
                shape = list(given.shape)
                shape[self.dim] = size
                t = ops.zeros(tuple(shape), given)
            pieces.append(t)
        return ops.cat(pieces, self.dim)


class StackBackward0(Node):
    """out = the inputs stacked along a new dim;  dxᵢ = grad selected at i along that dim"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ stack(x₁, x₂, ...)/∂xᵢ: the i-th slice of the gradient"

    def backward(self, ops, grad):
        lead = (slice(None),) * self.dim
        return tuple(ops.getitem(grad, lead + (i,)) if node is not None else None
                     for i, (node, _) in enumerate(self.next_functions))

    def jvp(self, ops, *tangents):
        given = next(t for t in tangents if t is not None)
        return ops.stack([ops.zeros_like(given) if t is None else t for t in tangents], self.dim)


def _common_dtype(tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    target = tensors[0].dtype
    for t in tensors[1:]:
        target = dt.promote_types(target, t.dtype)
    return target._np


@autocast_entry
def cat(tensors, dim=0, *, out=None):
    """The tensors joined along ``dim``; all other sizes must match. 1-D empty tensors are skipped, as in
    PyTorch."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    target = _common_dtype(tensors)
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    skipped = [t._data.shape == (0,) for t in tensors]
    if all(skipped):
        skipped = [False] * len(tensors)
    kept = [t for t, skip in zip(tensors, skipped) if not skip]
    ref = kept[0]._data
    d = _wrap_dim(dim, ref.ndim)
    for i, (t, skip) in enumerate(zip(tensors, skipped)):
        a = t._data
        if skip:
            continue
        if a.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    arrays = [t._data if t._data.dtype == target else t._data.astype(target) for t in kept]
    joined = np.asanyarray(np.concatenate(arrays, axis=d), order="C")      # C order, as PyTorch's,
    formats = {layouts.suggested_format(a) for a in arrays}
    if len(formats) == 1:           # unless every input is channels-last: then so is the result
        joined = layouts.laid_out(joined, formats.pop())
    result = wrap(joined)
    if wants_grad(*tensors):
        sizes = [None if skip else t._data.shape[d] for t, skip in zip(tensors, skipped)]
        record(CatBackward0, tensors, result, dim=d, sizes=sizes)
    return result


concat = concatenate = cat


@autocast_entry
def stack(tensors, dim=0, *, out=None):
    """The tensors (all of one shape) stacked along a new dim ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    target = _common_dtype(tensors)
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_fmt(shape)} at entry 0 and "
                               f"{_fmt(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1)
    result = wrap(np.asanyarray(np.stack([t._data if t._data.dtype == target else t._data.astype(target)
                                       for t in tensors], axis=d), order="C"))
    if wants_grad(*tensors):
        record(StackBackward0, tensors, result, dim=d)
    return result


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim. One tensor gives a tensor; several, or a list, give a tuple."""
    return _each(tensors, lambda t: reshape(t, 1) if t._data.ndim == 0 else t)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (a 1-D one of n as (1, n))."""
    return _each(tensors, lambda t: reshape(t, 1, 1) if t._data.ndim == 0 else unsqueeze(t, 0) if t._data.ndim == 1
                 else t)


def _each(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fn(tensors[0])
    return tuple(fn(t) for t in _unpack(tensors))


def _unpack(tensors):
    return tuple(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors


def hstack(tensors):
    """Joined along dim 1, or dim 0 for 1-D tensors."""
    tensors = [atleast_1d(t) for t in tensors]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def vstack(tensors):
    """Joined along dim 0, 1-D tensors taken as rows."""
    return cat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack


# --- split, chunk, unbind: pieces that are views ------------------------------------------------------------

class SplitBackward0(Node):
    """outᵢ = consecutive pieces of x along dim;  dx = the pieces' gradients joined back"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ split(x)ᵢ/∂x: the gradients of the pieces joined back"

    def backward(self, ops, *grads):
        return (ops.cat(list(grads), self.dim),)

    def jvp(self, ops, x_t):
        lead, start, pieces = (slice(None),) * self.dim, 0, []
        for size in self.sizes:
            pieces.append(ops.getitem(x_t, lead + (slice(start, start + size),)))
            start += size
        return tuple(pieces)


class SplitWithSizesBackward0(SplitBackward0):
    """outᵢ = pieces of x of the given sizes along dim;  dx = the pieces' gradients joined back"""
    __slots__ = ()


class UnbindBackward0(Node):
    """outᵢ = x selected at i along dim;  dx = the gradients stacked back"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ unbind(x)ᵢ/∂x: the gradients stacked back"

    def backward(self, ops, *grads):
        return (ops.stack(list(grads), self.dim),)

    def jvp(self, ops, x_t):
        lead = (slice(None),) * self.dim
        return tuple(ops.getitem(x_t, lead + (i,)) for i in range(x_t.shape[self.dim]))


def _pieces(a, d, sizes):
    lead, start, out = (slice(None),) * d, 0, []
    for s in sizes:
        out.append(a[lead + (slice(start, start + s),)])
        start += s
    return out


class UnsafeSplitBackward0(SplitBackward0):
    """outᵢ = consecutive pieces of x along dim, not tracked as views;  dx = the pieces' gradients joined back"""
    __slots__ = ()


class UnsafeSplitWithSizesBackward0(SplitBackward0):
    """outᵢ = pieces of x of the given sizes, not tracked as views;  dx = the pieces' gradients joined back"""
    __slots__ = ()


def _split_sizes(a, split_size_or_sections, dim):
    """The dim and the sizes of the pieces of ``split`` (PyTorch's checks), and whether sizes were listed."""
    d = _wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={_fmt(sizes)}")
        return d, sizes, True
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    return d, [min(size, n - s) for s in range(0, n, size)] if n else [0], False


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces along ``dim``: of ``split_size`` each (the last may be smaller), or of the
    listed sizes."""
    a = tensor._data
    d, sizes, listed = _split_sizes(a, split_size_or_sections, dim)
    node = SplitWithSizesBackward0 if listed else SplitBackward0
    return _views(tensor, _pieces(a, d, sizes), node, dim=d, sizes=sizes)


def split_with_sizes(input, split_sizes, dim=0):
    """``split`` with the sizes listed."""
    return split(input, list(split_sizes), dim)


def unsafe_split(tensor, split_size_or_sections, dim=0):
    """``split`` whose pieces autograd does not track as views (no ``_base``): they may be changed in place,
    which PyTorch calls unsafe because the pieces still share the input's memory."""
    a = tensor._data
    d, sizes, listed = _split_sizes(a, split_size_or_sections, dim)
    outs = tuple(wrap(piece) for piece in _pieces(a, d, sizes))
    if wants_grad(tensor):
        node = UnsafeSplitWithSizesBackward0 if listed else UnsafeSplitBackward0
        record(node, (tensor,), outs, dim=d, sizes=sizes)
    return outs


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``unsafe_split`` with the sizes listed: pieces sharing ``input``'s memory that autograd does not track as
    views, so they may be changed in place."""
    return unsafe_split(input, list(split_sizes), dim)


def _chunk_size(input, chunks, dim):
    """What ``chunk`` splits by: a size, or, along an empty dim, ``chunks`` empty pieces."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[_wrap_dim(dim, input._data.ndim)]
    return [0] * chunks if n == 0 else -(-n // chunks)


def chunk(input, chunks, dim=0):
    """At most ``chunks`` pieces of equal size (the last may be smaller) along ``dim``."""
    return split(input, _chunk_size(input, chunks, dim), dim)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` with pieces not tracked as views (see ``unsafe_split``)."""
    return unsafe_split(input, _chunk_size(input, chunks, dim), dim)


def iterate(input):
    """``iter(x)``: the slices of x along its first dim, as ``x.unbind(0)`` gives them (with their grad_fn)."""
    if input._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(input, 0))


def unbind(input, dim=0):
    """The slices along ``dim``, as views, in a tuple (``iter(x)`` is ``x.unbind(0)``)."""
    a = input._data
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, a.ndim)
    lead = (slice(None),) * d
    return _views(input, [a[lead + (i, Ellipsis)] for i in range(a.shape[d])], UnbindBackward0, dim=d)
