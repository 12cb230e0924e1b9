"""Shape ops that join, split, repeat or reorder tensors, each next to its derivative rule: ``cat``/``stack``
(and ``hstack``, ``vstack``, ``atleast_*d``), ``split``/``chunk``/``unbind``, ``repeat``/``tile``,
``flip``/``roll``, the triangles ``tril``/``triu`` and ``diag``. All make new memory except the pieces of
``split``/``chunk``/``unbind``, which are views of their input (``_views``).
"""
import numpy as np

from ..core import dtype as dt
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor, _size_args, _wrap_dim
from .views import (
    DiagonalBackward0,
    _dims,
    _fmt,
    _input_shape,
    _views,
    clone,
    diagonal_index,
    expand,
    reshape,
    unsqueeze,
    view,
)

__all__ = ["atleast_1d", "atleast_2d", "cat", "chunk", "concat", "concatenate", "diag", "flip", "fliplr", "flipud",
           "hstack", "repeat_interleave", "roll", "row_stack", "split", "stack", "tile", "tril", "triu", "unbind",
           "vstack"]


# --- joining and splitting ------------------------------------------------------------------------------

class CatBackward0(Node):
    """out = the inputs joined along dim;  dxᵢ = the slice of grad where xᵢ went"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ cat(x₁, x₂, ...)/∂xᵢ: the matching slice of the gradient"

    def backward(self, ops, grad):
        grads, start = [], 0
        for (node, _), size in zip(self.next_functions, self.sizes):
            grads.append(ops.narrow(grad, self.dim, start, size) if node is not None and size is not None else None)
            start += size or 0
        return tuple(grads)


class StackBackward0(Node):
    """out = the inputs stacked along a new dim;  dxᵢ = grad selected at i along that dim"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ stack(x₁, x₂, ...)/∂xᵢ: the i-th slice of the gradient"

    def backward(self, ops, grad):
        lead = (slice(None),) * self.dim
        return tuple(ops.getitem(grad, lead + (i,)) if node is not None else None
                     for i, (node, _) in enumerate(self.next_functions))


def _common_dtype(tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    target = tensors[0].dtype
    for t in tensors[1:]:
        target = dt.promote_types(target, t.dtype)
    return target._np


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
    result = wrap(np.concatenate(arrays, axis=d))
    if wants_grad(*tensors):
        sizes = [None if skip else t._data.shape[d] for t, skip in zip(tensors, skipped)]
        record(CatBackward0, tensors, result, dim=d, sizes=sizes)
    return result


concat = concatenate = cat


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
    result = wrap(np.stack([t._data if t._data.dtype == target else t._data.astype(target) for t in tensors], axis=d))
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


class SplitBackward0(Node):
    """outᵢ = consecutive pieces of x along dim;  dx = the pieces' gradients joined back"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ split(x)ᵢ/∂x: the gradients of the pieces joined back"

    def backward(self, ops, *grads):
        return (ops.cat(list(grads), self.dim),)


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


def _pieces(a, d, sizes):
    lead, start, out = (slice(None),) * d, 0, []
    for s in sizes:
        out.append(a[lead + (slice(start, start + s),)])
        start += s
    return out


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces along ``dim``: of ``split_size`` each (the last may be smaller), or of the
    listed sizes."""
    a = tensor._data
    d = _wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={_fmt(sizes)}")
        return _views(tensor, _pieces(a, d, sizes), SplitWithSizesBackward0, dim=d)
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    sizes = [min(size, n - s) for s in range(0, n, size)] if n else [0]
    return _views(tensor, _pieces(a, d, sizes), SplitBackward0, dim=d)


def chunk(input, chunks, dim=0):
    """At most ``chunks`` pieces of equal size (the last may be smaller) along ``dim``."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[_wrap_dim(dim, input._data.ndim)]
    if n == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


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


# --- repeating ------------------------------------------------------------------------------------------

class RepeatBackward0(Node):
    """out = x tiled ``repeats`` times along each dim;  dx = grad summed over the copies"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ tile(x)/∂x: gradient summed over the copies"

    def backward(self, ops, grad):
        # PyTorch's repeat_backward: one reshape, splitting each repeated dim in (repeat, size), then one sum over
        # the new leading dims and the repeats (ViewBackward0, SumBackward1 under create_graph)
        shape = _input_shape(self)
        lead = len(self.repeats) - len(shape)
        split, axes = list(self.repeats[:lead]), list(range(lead))
        for repeat, size in zip(self.repeats[lead:], shape):
            if repeat != 1:
                axes.append(len(split))
                split.append(repeat)
            split.append(size)
        if not axes:
            return (grad,)
        return (ops.sum(ops.reshape(grad, tuple(split)), tuple(axes)),)


def repeat(input, *sizes):
    """The tensor tiled ``sizes[i]`` times along dim i (a copy); extra leading sizes add dims."""
    a = input._data
    reps = _size_args(sizes)
    if len(reps) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    out = wrap(np.tile(a, reps) if a.ndim == len(reps) else np.tile(a.reshape((1,) * (len(reps) - a.ndim) + a.shape),
                                                                    reps))
    if wants_grad(input):
        record(RepeatBackward0, (input,), out, repeats=reps)
    return out


def tile(input, dims):
    """``repeat`` with missing leading repetitions taken as 1."""
    reps = _size_args((dims,) if isinstance(dims, (int, np.integer)) else tuple(dims))
    return repeat(input, (1,) * (input._data.ndim - len(reps)) + reps)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Each element repeated ``repeats`` times along ``dim`` (the flattened tensor when None). A number of
    repeats is recorded as PyTorch does it (unsqueeze, expand, copy, view); a tensor of counts as an
    index_select."""
    if dim is None:
        input, dim = reshape(input, -1), 0
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    if isinstance(repeats, Tensor) and repeats._data.ndim > 0:
        from .indexing import index_select
        index = np.repeat(np.arange(a.shape[d]), repeats._data)
        return index_select(input, d, wrap(index.astype(np.int64)))
    r = int(repeats)
    spread = expand(unsqueeze(input, d + 1), a.shape[:d + 1] + (r,) + a.shape[d + 1:])
    return view(clone(spread, memory_format="contiguous_format"), a.shape[:d] + (a.shape[d] * r,) + a.shape[d + 1:])


# --- reordering copies ----------------------------------------------------------------------------------

class FlipBackward0(Node):
    """out = x reversed along dims;  dx = grad reversed back"""
    complex_ok = True
    __slots__ = ()
    formula = "flip: gradient flipped back"

    def backward(self, ops, grad):
        return (ops.flip(grad, self.dims),)


class RollBackward0(Node):
    """out = x shifted cyclically;  dx = grad shifted back"""
    complex_ok = True
    __slots__ = ()
    formula = "roll: gradient rolled back"

    def backward(self, ops, grad):
        return (ops.roll(grad, tuple(-s for s in self.shifts), self.dims),)


def flip(input, *dims):
    """A copy with the order of elements reversed along ``dims``."""
    a = input._data
    axes = _dims(_size_args(dims), a.ndim) if a.ndim else ()
    out = wrap(np.flip(a, axes).copy() if axes else a.copy())
    if wants_grad(input):
        record(FlipBackward0, (input,), out, dims=axes)
    return out


def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def roll(input, shifts, dims=None):
    """A copy with elements shifted cyclically by ``shifts`` along ``dims`` (the flattened tensor when None)."""
    a = input._data
    shifts = (int(shifts),) if isinstance(shifts, (int, np.integer)) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        out = wrap(np.roll(a.reshape(-1), shifts[0]).reshape(a.shape))
        axes = None
    else:
        axes = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
        if len(shifts) != len(axes):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(axes)}")
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {int(axes[0])} but tensor has no dimensions")
        axes = tuple(_wrap_dim(int(d), a.ndim) for d in axes)
        out = wrap(np.ascontiguousarray(np.roll(a, shifts, axes)))     # a fresh tensor, as in PyTorch
    if wants_grad(input):
        record(RollBackward0, (input,), out, shifts=shifts, dims=axes)
    return out


# --- triangles and diag ---------------------------------------------------------------------------------

class TrilBackward0(Node):
    """out = the lower triangle of x (from diagonal k);  dx = the lower triangle of grad"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ tril(x)/∂x: the gradient's lower triangle"

    def backward(self, ops, grad):
        return (ops.tril(grad, self.k),)


class TriuBackward0(Node):
    """out = the upper triangle of x (from diagonal k);  dx = the upper triangle of grad"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ triu(x)/∂x: the gradient's upper triangle"

    def backward(self, ops, grad):
        return (ops.triu(grad, self.k),)


def _triangle(input, diagonal, np_fn, node, name):
    a = input._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    out = wrap(np_fn(a, diagonal))
    if wants_grad(input):
        record(node, (input,), out, k=diagonal)
    return out


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (on and below diagonal ``diagonal``), zeros above."""
    return _triangle(input, diagonal, np.tril, TrilBackward0, "tril")


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (on and above diagonal ``diagonal``), zeros below."""
    return _triangle(input, diagonal, np.triu, TriuBackward0, "triu")


class DiagonalBackward0_copy(DiagonalBackward0):
    """out = the diagonal of matrix x (a copy: ``torch.diag``);  dx = zeros with grad on that diagonal"""
    __slots__ = ()


class DiagEmbedBackward0(Node):
    """out = a matrix with x on diagonal k;  dx = that diagonal of grad"""
    __slots__ = ()
    formula = "∂ diag(x)/∂x: the diagonal of the gradient"

    def backward(self, ops, grad):
        return (ops.getitem(grad, diagonal_index(grad.shape[0], grad.shape[1], self.offset)),)


def diag(input, diagonal=0):
    """A 1-D tensor's values on diagonal ``diagonal`` of a square matrix; or a matrix's diagonal (a copy)."""
    a = input._data
    if a.ndim == 1:
        out = wrap(np.diag(a, diagonal))
        if wants_grad(input):
            record(DiagEmbedBackward0, (input,), out, offset=diagonal)
        return out
    if a.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{a.ndim}D")
    out = wrap(np.diagonal(a, diagonal).copy())
    if wants_grad(input):
        record(DiagonalBackward0_copy, (input,), out, offset=diagonal, dim1=0, dim2=1)
    return out

