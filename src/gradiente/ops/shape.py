"""Shape operations, each next to its derivative rule.

Two kinds. *Views* share their input's memory and version counter (``_view``): ``view``, ``reshape`` (when
the strides allow it), ``squeeze``, ``unsqueeze``, ``permute``, ``transpose``, ``.T``/``.mT``, ``expand``,
``narrow``, ``select``, slicing, ``split``/``chunk``/``unbind`` pieces and ``diagonal``; an in-place change
through a view is seen by its base and by autograd's saved-value check. *Copies* make new memory: ``cat``,
``stack``, ``repeat``, ``flip``, ``roll``, ``clone``, ``tril``/``triu``.

Rules that move a gradient back into a larger tensor (slicing, selecting, the diagonal) use
``ops.embed``: zeros with the gradient placed at an index, the adjoint of indexing.
"""
import math
import warnings

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _size_args, _wrap_dim
from ..autograd.graph import Node
from ._record import record, tensor_method, wants_grad, wrap
from .inplace import track_view

__all__ = ["atleast_1d", "atleast_2d", "broadcast_to", "cat", "chunk", "clone", "concat", "concatenate", "diag",
           "diagonal", "flatten", "flip", "fliplr", "flipud", "hstack", "moveaxis", "movedim", "narrow", "permute",
           "repeat_interleave", "reshape", "roll", "row_stack", "select", "split", "squeeze", "stack", "swapaxes",
           "swapdims", "tile", "transpose", "tril", "triu", "unbind", "unflatten", "unsqueeze", "vstack"]

_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension spans across "
               "two contiguous subspaces). Use .reshape(...) instead.")


def _view(input, array, node_cls, **attrs):
    """``array``, a view of ``input``'s memory, as a tensor sharing ``input``'s version counter and base."""
    out = wrap(array)
    track_view(out, input, node_cls)
    if wants_grad(input):
        record(node_cls, (input,), out, **attrs)
    return out


def _views(input, arrays, node_cls, **attrs):
    """Several views of ``input`` made by one multi-output op (split, chunk, unbind); as in PyTorch, none of
    them may be changed in place while recording."""
    outs = []
    for array in arrays:
        out = wrap(array)
        track_view(out, input, node_cls, multi_output=True)
        outs.append(out)
    if wants_grad(input):
        record(node_cls, (input,), outs, **attrs)
    return tuple(outs)


def _fmt(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _dims(dims, ndim):
    """A dim or sequence of dims (possibly negative) as a tuple of distinct non-negative axes."""
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    axes = tuple(_wrap_dim(int(d), ndim) for d in dims)
    if len(set(axes)) != len(axes):
        seen = set()
        repeated = next(a for a in axes if a in seen or seen.add(a))
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return axes


def infer_size(shape_a, shape_b):
    """The broadcast of two shapes, with PyTorch's message when they do not broadcast."""
    n = max(len(shape_a), len(shape_b))
    pa, pb = (1,) * (n - len(shape_a)) + tuple(shape_a), (1,) * (n - len(shape_b)) + tuple(shape_b)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                               f"non-singleton dimension {i}")
    return tuple(b if a == 1 else a for a, b in zip(pa, pb))


def _input_shape(node):
    return node._input_meta[0][0]


# --- reshaping views -----------------------------------------------------------------------------------

class ViewBackward0(Node):
    """out = x with a new shape (same memory);  dx = grad reshaped to x's shape"""
    __slots__ = ()
    formula = "reshape: gradient reshaped back"

    def backward(self, ops, grad):
        return (ops.reshape(grad, _input_shape(self)),)


class UnsafeViewBackward0(ViewBackward0):
    """out = x with a new shape, as a new tensor (after a copy or a product);  dx = grad reshaped back"""
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    """out = x reshaped as a view of strided (non-contiguous) memory;  dx = grad reshaped back"""
    __slots__ = ()


class AliasBackward0(Node):
    """out = x (``x[...]``, a second tensor on the same memory);  dx = grad"""
    __slots__ = ()
    formula = "identity"

    def backward(self, ops, grad):
        return (grad,)


class CloneBackward0(AliasBackward0):
    """out = a copy of x;  dx = grad"""
    __slots__ = ()


def _infer_shape(shape, numel):
    """``shape`` with its one ``-1`` filled in, checked against ``numel`` with PyTorch's messages."""
    infer, known = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {_fmt(shape)}")
        else:
            known *= s
    if infer is None:
        if known != numel:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        return shape
    if known == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the unspecified "
                           "dimension size -1 can be any value and is ambiguous")
    if numel % known:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return shape[:infer] + (numel // known,) + shape[infer + 1:]


def _reshaped(a, shape):
    """``a`` reshaped, and whether the result shares ``a``'s memory (NumPy copies only when it must)."""
    out = a.reshape(shape)
    return out, a.flags.c_contiguous or a.size == 0 or np.may_share_memory(out, a)


@tensor_method("view")
def view(input, *shape, dtype=None):
    """The same memory with a new shape (one entry may be -1); fails, as in PyTorch, when the strides do not
    allow it. ``view(dtype)`` reinterprets the bytes (not differentiable)."""
    if len(shape) == 1 and isinstance(shape[0], dt.dtype):
        dtype = shape[0]
    a = input._data
    if dtype is not None:
        if dtype._np != a.dtype:
            return _view_dtype(input, dtype)
        shape = a.shape
    array, shared = _reshaped(a, _infer_shape(_size_args(shape), a.size))
    if not shared:
        raise RuntimeError(_VIEW_ERROR)
    return _view(input, array, ViewBackward0)


def _view_dtype(input, dtype):
    """The same bytes read as ``dtype``: shared memory and version counter, but, as in PyTorch, no ``_base``
    and no graph (a reinterpretation of bits has no derivative)."""
    out = wrap(input._data.view(dtype._np))
    out._version_box = input._version_box
    return out


@tensor_method("view_as")
def view_as(input, other):
    return view(input, other._data.shape)


@tensor_method("reshape")
def reshape(input, *shape):
    """A view with the new shape when the strides allow it; otherwise a copy. As in PyTorch, the view of a
    contiguous tensor is ViewBackward0, of a strided one ReshapeAliasBackward0, and a copy is recorded as
    CloneBackward0 then UnsafeViewBackward0."""
    a = input._data
    array, shared = _reshaped(a, _infer_shape(_size_args(shape), a.size))
    if shared:
        return _view(input, array, ViewBackward0 if a.flags.c_contiguous else ReshapeAliasBackward0)
    return _unsafe_view(_copy(input, array.reshape(a.shape)), array)


@tensor_method("reshape_as")
def reshape_as(input, other):
    return reshape(input, other._data.shape)


def _unsafe_view(input, array):
    """``array`` (``input``'s values in a new shape) as a new tensor, not a view: the last step of a reshape
    that had to copy, and of the batched products in ``matmul``."""
    out = wrap(array)
    if wants_grad(input):
        record(UnsafeViewBackward0, (input,), out)
    return out


def _copy(input, array):
    out = wrap(array)
    if wants_grad(input):
        record(CloneBackward0, (input,), out)
    return out


@tensor_method("clone")
def clone(input, *, memory_format=None):
    """A copy with its own memory, recorded as CloneBackward0. The copy keeps the input's layout (strides)
    unless ``memory_format`` asks for a contiguous one, as in PyTorch."""
    order = "C" if "contiguous" in str(memory_format) else "K"
    return _copy(input, input._data.copy(order=order))


@tensor_method("contiguous")
def contiguous(input, memory_format=None):
    """The tensor itself when already contiguous, else a contiguous copy."""
    a = input._data
    if a.flags.c_contiguous:
        return input
    return _copy(input, np.ascontiguousarray(a))


@tensor_method("flatten")
def flatten(input, start_dim=0, end_dim=-1):
    """Dims ``start_dim..end_dim`` merged into one (a view when possible, like ``reshape``)."""
    a = input._data
    if a.ndim == 0:
        return reshape(input, 1)
    start, end = _wrap_dim(start_dim, a.ndim), _wrap_dim(end_dim, a.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = math.prod(a.shape[start:end + 1])
    return reshape(input, a.shape[:start] + (merged,) + a.shape[end + 1:])


@tensor_method("unflatten")
def unflatten(input, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (one may be -1); always a view."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    sizes = tuple(int(s) for s in sizes)
    try:
        sizes = _infer_shape(sizes, a.shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the size of dim {dim} "
                           f"({a.shape[d]}) in the input tensor") from None
    return view(input, a.shape[:d] + sizes + a.shape[d + 1:])


# --- squeeze, unsqueeze ---------------------------------------------------------------------------------

class SqueezeBackward0(ViewBackward0):
    """out = x without its size-1 dims;  dx = grad reshaped back"""
    __slots__ = ()


class SqueezeBackward1(ViewBackward0):
    """out = x without dim d (if it has size 1);  dx = grad reshaped back"""
    __slots__ = ()


class SqueezeBackward2(ViewBackward0):
    """out = x without the size-1 dims among ``dims``;  dx = grad reshaped back"""
    __slots__ = ()


class SqueezeBackward4(ViewBackward0):
    """in place: x loses dim d (if it has size 1);  dx = grad reshaped back"""
    __slots__ = ()


class UnsqueezeBackward0(ViewBackward0):
    """out = x with a new size-1 dim;  dx = grad reshaped back"""
    __slots__ = ()


@tensor_method("squeeze")
def squeeze(input, dim=None):
    """Remove size-1 dims: all of them, or those among ``dim`` (an int or a tuple). A view."""
    a = input._data
    if dim is None:
        axes, node = tuple(i for i, s in enumerate(a.shape) if s == 1), SqueezeBackward0
    elif isinstance(dim, (tuple, list)):
        axes, node = tuple(i for i in _dims(dim, a.ndim) if a.ndim and a.shape[i] == 1), SqueezeBackward2
    else:
        d = _wrap_dim(dim, a.ndim)
        axes, node = ((d,) if a.ndim and a.shape[d] == 1 else ()), SqueezeBackward1
    return _view(input, np.squeeze(a, axis=axes), node)


@tensor_method("unsqueeze")
def unsqueeze(input, dim):
    """A new size-1 dim at ``dim`` (in ``-ndim-1 .. ndim``). A view."""
    a = input._data
    return _view(input, a[(slice(None),) * _wrap_dim(dim, a.ndim + 1) + (None,)], UnsqueezeBackward0)


def _squeeze_result(input, dim):
    """``input.squeeze_(dim)`` on a fresh result, as ``matmul`` does for a vector @ matrix product."""
    out = wrap(np.squeeze(input._data, axis=dim))
    if wants_grad(input):
        record(SqueezeBackward4, (input,), out)
    return out


# --- permuting dims -------------------------------------------------------------------------------------

class PermuteBackward0(Node):
    """out = x with dims reordered by ``dims``;  dx = grad with the inverse order"""
    __slots__ = ()
    formula = "permute: gradient permuted back"

    def backward(self, ops, grad):
        return (ops.permute(grad, tuple(np.argsort(self.dims).tolist())),)


class TransposeBackward0(Node):
    """out = x with dims a and b swapped;  dx = grad with them swapped back"""
    __slots__ = ()
    formula = "transpose: gradient transposed back"

    def backward(self, ops, grad):
        return (ops.transpose(grad, self.dim0, self.dim1),)


@tensor_method("permute")
def permute(input, *dims):
    """The dims reordered: ``out.shape[i] == input.shape[dims[i]]``. A view."""
    a = input._data
    dims = _size_args(dims)
    if len(dims) != a.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    axes = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view(input, a.transpose(axes), PermuteBackward0, dims=axes)


@tensor_method("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    """Dims ``dim0`` and ``dim1`` swapped. A view."""
    a = input._data
    d0, d1 = _wrap_dim(dim0, a.ndim), _wrap_dim(dim1, a.ndim)
    return _view(input, np.swapaxes(a, d0, d1) if a.ndim else a.view(), TransposeBackward0, dim0=d0, dim1=d1)


swapaxes = swapdims = transpose


@tensor_method("movedim", "moveaxis")
def movedim(input, source, destination):
    """Dims ``source`` moved to positions ``destination``, the others keeping their order (a permute)."""
    n = input._data.ndim
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_fmt(src)} dims) should contain "
                           f"the same number of dims as destination ({_fmt(dst)} dims)")
    src, dst = _dims(src, n), _dims(dst, n)
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    return permute(input, tuple(o if o is not None else next(rest) for o in order))


moveaxis = movedim

_T_WARNING = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
              "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
              "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")


def _T(self):
    """All dims reversed (PermuteBackward0); meant for 2-D tensors, as in PyTorch."""
    n = self._data.ndim
    if n == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
    elif n != 2:
        warnings.warn(_T_WARNING, UserWarning, stacklevel=2)
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    """The last two dims swapped: the transpose of a batch of matrices."""
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _H(self):
    """The conjugate transpose of a matrix (for real tensors, the transpose)."""
    n = self._data.ndim
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    return _conj_if_complex(transpose(self, 0, 1))


def _mH(self):
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return _conj_if_complex(transpose(self, -2, -1))


def _conj_if_complex(t):
    return t.conj() if t._data.dtype.kind == "c" else t


for _name, _getter in (("T", _T), ("mT", _mT), ("H", _H), ("mH", _mH)):
    setattr(Tensor, _name, property(_getter))


# --- expand, repeat -------------------------------------------------------------------------------------

class ExpandBackward0(Node):
    """out = x broadcast to a larger shape;  dx = grad summed over the broadcast dims"""
    __slots__ = ()
    formula = "∂ broadcast(x)/∂x: gradient summed over the broadcast dims"

    def backward(self, ops, grad):
        return (ops.sum_to(grad, _input_shape(self)),)


def expanded_shape(input, sizes):
    """The shape ``input.expand(*sizes)`` has (``-1`` keeps a size), with PyTorch's errors."""
    shape = input._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(torch.{input.dtype._legacy}{{{_fmt(shape)}}}, size={_fmt(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions in "
                           f"the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):            # from the last dim, as PyTorch checks
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
        else:
            old = shape[i - lead]
            if s == -1:
                s = old
            elif old not in (1, s):
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({old}) at "
                                   f"non-singleton dimension {i}.  Target sizes: {_fmt(sizes)}.  Tensor sizes: "
                                   f"{_fmt(shape)}")
        target[i] = s
    return tuple(target)


@tensor_method("expand")
def expand(input, *sizes):
    """A view broadcasting size-1 dims (and new leading dims) to ``sizes``; -1 keeps a size. Its memory
    overlaps itself, so in-place writes to it fail, as in PyTorch."""
    a = input._data
    target = expanded_shape(input, _size_args(sizes))
    if math.prod(target) == a.size and a.size:
        array = a.reshape(target)               # only size-1 dims added: an ordinary, writable view
    else:
        array = np.broadcast_to(a, target)
    return _view(input, array, ExpandBackward0)


@tensor_method("expand_as")
def expand_as(input, other):
    return expand(input, other._data.shape)


@tensor_method("broadcast_to")
def broadcast_to(input, size):
    return expand(input, size)


class RepeatBackward0(Node):
    """out = x tiled ``repeats`` times along each dim;  dx = grad summed over the copies"""
    __slots__ = ()
    formula = "∂ tile(x)/∂x: gradient summed over the copies"

    def backward(self, ops, grad):
        shape = _input_shape(self)
        padded = (1,) * (len(self.repeats) - len(shape)) + tuple(shape)
        split = tuple(n for pair in zip(self.repeats, padded) for n in pair)
        summed = ops.sum(ops.reshape(grad, split), tuple(range(0, len(split), 2)))
        return (ops.reshape(summed, shape),)


@tensor_method("repeat")
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


@tensor_method("tile")
def tile(input, dims):
    """``repeat`` with missing leading repetitions taken as 1."""
    reps = _size_args((dims,) if isinstance(dims, (int, np.integer)) else tuple(dims))
    return repeat(input, (1,) * (input._data.ndim - len(reps)) + reps)


@tensor_method("repeat_interleave")
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


# --- joining and splitting ------------------------------------------------------------------------------

class CatBackward0(Node):
    """out = the inputs joined along dim;  dxᵢ = the slice of grad where xᵢ went"""
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
    out = tuple(reshape(t, 1) if t._data.ndim == 0 else t for t in _unpack(tensors))
    return out[0] if len(out) == 1 else out


def atleast_2d(*tensors):
    out = tuple(reshape(t, 1, 1) if t._data.ndim == 0 else unsqueeze(t, 0) if t._data.ndim == 1 else t
                for t in _unpack(tensors))
    return out[0] if len(out) == 1 else out


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
    __slots__ = ()
    formula = "∂ split(x)ᵢ/∂x: the gradients of the pieces joined back"

    def backward(self, ops, *grads):
        return (ops.cat(list(grads), self.dim),)


class SplitWithSizesBackward0(SplitBackward0):
    """outᵢ = pieces of x of the given sizes along dim;  dx = the pieces' gradients joined back"""
    __slots__ = ()


class UnbindBackward0(Node):
    """outᵢ = x selected at i along dim;  dx = the gradients stacked back"""
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


@tensor_method("split")
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


@tensor_method("chunk")
def chunk(input, chunks, dim=0):
    """At most ``chunks`` pieces of equal size (the last may be smaller) along ``dim``."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[_wrap_dim(dim, input._data.ndim)]
    if n == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


@tensor_method("unbind")
def unbind(input, dim=0):
    """The slices along ``dim``, as views, in a tuple (``iter(x)`` is ``x.unbind(0)``)."""
    a = input._data
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, a.ndim)
    lead = (slice(None),) * d
    return _views(input, [a[lead + (i, Ellipsis)] for i in range(a.shape[d])], UnbindBackward0, dim=d)


# --- narrowing and selecting ----------------------------------------------------------------------------

class SliceBackward0(Node):
    """out = x[index] (a slice, a view);  dx = zeros with grad placed at the slice"""
    __slots__ = ()
    formula = "∂ x[a:b]/∂x: the gradient placed back in the slice, zeros elsewhere"

    def backward(self, ops, grad):
        return (ops.embed(grad, _input_shape(self), self.index),)


class SelectBackward0(SliceBackward0):
    """out = x[i] along a dim (a view);  dx = zeros with grad placed at i"""
    __slots__ = ()


def slice_dim(input, dim, start, stop, step):
    """``input[start:stop:step]`` along ``dim``, as PyTorch's ``slice`` (SliceBackward0); a view."""
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    index = (slice(None),) * d + (slice(*slice(start, stop, step).indices(a.shape[d])),)
    return _view(input, a[index], SliceBackward0, index=index)


@tensor_method("narrow")
def narrow(input, dim, start, length):
    """Elements ``start .. start+length-1`` along ``dim`` (a view)."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    n = a.shape[d]
    start = int(start)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return slice_dim(input, d, start, start + length, 1)


@tensor_method("select")
def select(input, dim, index):
    """``input[index]`` along ``dim``: that dim removed (a view)."""
    a = input._data
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, a.ndim)
    n, i = a.shape[d], int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size {_fmt(a.shape)} at dimension {d}")
    index = (slice(None),) * d + (i + n if i < 0 else i,)
    return _view(input, a[index + (Ellipsis,)], SelectBackward0, index=index)   # a 0-d view, not a NumPy scalar


# --- reordering copies ----------------------------------------------------------------------------------

class FlipBackward0(Node):
    """out = x reversed along dims;  dx = grad reversed back"""
    __slots__ = ()
    formula = "flip: gradient flipped back"

    def backward(self, ops, grad):
        return (ops.flip(grad, self.dims),)


class RollBackward0(Node):
    """out = x shifted cyclically;  dx = grad shifted back"""
    __slots__ = ()
    formula = "roll: gradient rolled back"

    def backward(self, ops, grad):
        return (ops.roll(grad, tuple(-s for s in self.shifts), self.dims),)


@tensor_method("flip")
def flip(input, *dims):
    """A copy with the order of elements reversed along ``dims``."""
    a = input._data
    axes = _dims(_size_args(dims), a.ndim) if a.ndim else ()
    out = wrap(np.flip(a, axes).copy() if axes else a.copy())
    if wants_grad(input):
        record(FlipBackward0, (input,), out, dims=axes)
    return out


@tensor_method("fliplr")
def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@tensor_method("flipud")
def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@tensor_method("roll")
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
        axes = tuple(_wrap_dim(int(d), a.ndim) for d in axes)
        out = wrap(np.roll(a, shifts, axes))
    if wants_grad(input):
        record(RollBackward0, (input,), out, shifts=shifts, dims=axes)
    return out


# --- triangles and diagonals ----------------------------------------------------------------------------

class TrilBackward0(Node):
    """out = the lower triangle of x (from diagonal k);  dx = the lower triangle of grad"""
    __slots__ = ()
    formula = "∂ tril(x)/∂x: the gradient's lower triangle"

    def backward(self, ops, grad):
        return (ops.tril(grad, self.k),)


class TriuBackward0(Node):
    """out = the upper triangle of x (from diagonal k);  dx = the upper triangle of grad"""
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


@tensor_method("tril")
def tril(input, diagonal=0):
    """The lower triangle of the last two dims (on and below diagonal ``diagonal``), zeros above."""
    return _triangle(input, diagonal, np.tril, TrilBackward0, "tril")


@tensor_method("triu")
def triu(input, diagonal=0):
    """The upper triangle of the last two dims (on and above diagonal ``diagonal``), zeros below."""
    return _triangle(input, diagonal, np.triu, TriuBackward0, "triu")


def diagonal_index(n_rows, n_cols, offset):
    """Row and column indices of diagonal ``offset`` of an ``n_rows x n_cols`` matrix."""
    length = max(0, min(n_rows + min(offset, 0), n_cols - max(offset, 0)))
    rows = np.arange(length) - min(offset, 0)
    return rows, rows + offset


class DiagonalBackward0(Node):
    """out = the diagonal of x over dims (d1, d2), as a last dim;  dx = zeros with grad on that diagonal"""
    __slots__ = ()
    formula = "∂ diagonal(x)/∂x: the gradient placed on the diagonal, zeros elsewhere"

    def backward(self, ops, grad):
        shape, d1, d2 = _input_shape(self), self.dim1, self.dim2
        rest = [i for i in range(len(shape)) if i not in (d1, d2)]
        moved = tuple(shape[i] for i in rest) + (shape[d1], shape[d2])
        rows, cols = diagonal_index(shape[d1], shape[d2], self.offset)
        placed = ops.embed(grad, moved, (Ellipsis, rows, cols))
        return (ops.permute(placed, tuple(np.argsort(rest + [d1, d2]).tolist())),)


class DiagonalBackward0_copy(DiagonalBackward0):
    """out = the diagonal of matrix x (a copy: ``torch.diag``);  dx = zeros with grad on that diagonal"""
    __slots__ = ()


class DiagEmbedBackward0(Node):
    """out = a matrix with x on diagonal k;  dx = that diagonal of grad"""
    __slots__ = ()
    formula = "∂ diag(x)/∂x: the diagonal of the gradient"

    def backward(self, ops, grad):
        return (ops.getitem(grad, diagonal_index(grad.shape[0], grad.shape[1], self.offset)),)


@tensor_method("diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal over dims ``dim1``, ``dim2`` (``offset`` above the main one), as the last dim. A view."""
    a = input._data
    d1, d2 = _wrap_dim(dim1, a.ndim), _wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    array = np.diagonal(a, offset, d1, d2)
    if a.flags.writeable:
        array.flags.writeable = True            # NumPy's diagonal is read-only; PyTorch's is an ordinary view
    return _view(input, array, DiagonalBackward0, offset=offset, dim1=d1, dim2=d2)


@tensor_method("diag")
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


def _install_inplace():
    from .inplace import make_inplace
    for fn in (tril, triu):
        name = fn.__name__ + "_"
        setattr(Tensor, name, make_inplace(fn, name))


_install_inplace()
