"""Views: shape ops whose result shares its input's memory and version counter (``_view``): ``view``,
``reshape`` (when the strides allow it), ``flatten``, ``squeeze``, ``unsqueeze``, ``permute``, ``transpose``,
``.T``/``.mT``, ``expand``, ``narrow``, ``select`` and ``diagonal``, with the copies the reshape family falls back
to (``clone``, ``contiguous``). An in-place change through a view is seen by its base and by autograd's
saved-value check. The pieces of ``split``/``chunk``/``unbind`` are views too; they live in ``rearranging``,
next to the ``cat`` and ``stack`` they undo.

Rules that move a gradient back into a larger tensor (slicing, selecting, the diagonal) use
``ops.embed``: zeros with the gradient placed at an index, the adjoint of indexing.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core import forward_grad, layouts
from ..core.creation import empty_in_layout_of, is_dense
from ..core.forward_grad import state as _forward
from ..core.inplace import AsStridedBackward0, check_inplace, track_view
from ..core.meta import MetaArray
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.size import Size
from ..core.storage import storage_root
from ..core.tensor import _is_size, _size_args, _type_name, _wrap_dim
from ..core.warnings_at_caller import warn

__all__ = ["adjoint", "as_strided", "broadcast_to", "clone", "diagonal", "flatten", "moveaxis", "movedim", "narrow",
           "permute", "reshape", "select", "squeeze", "swapaxes", "swapdims", "transpose", "unflatten", "unsqueeze",
           "ravel"]

_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension spans across "
               "two contiguous subspaces). Use .reshape(...) instead.")


def _view(input, array, node_cls, **attrs):
    """``array``, a view of ``input``'s memory, as a tensor sharing ``input``'s version counter and base."""
    if type(input._data) is MetaArray and type(array) is not MetaArray:
        array = array.view(MetaArray)       # (a view made from the memory's owner: still of the one shared zero)
    out = wrap(array)
    if track_view(out, input, node_cls) and wants_grad(input):
        record(node_cls, (input,), out, **attrs)
    return out


def _shape_view(input, array, node_cls):
    """``_view`` for the ops that change only the shape (view, reshape, squeeze, unsqueeze): the node keeps the
    new shape, which its tangent takes. (Set on the node rather than passed to ``record``: keyword arguments
    through ``_view`` and ``record`` made a reshape about 15% slower.)"""
    if _forward.on:
        return _view(input, array, node_cls, _out_shape=array.shape)  # the jvp runs inside record, and reads it
    out = _view(input, array, node_cls)
    if out.grad_fn is not None:
        out.grad_fn._out_shape = array.shape
    return out


def _views(input, arrays, node_cls, **attrs):
    """Several views of ``input`` made by one multi-output op (split, chunk, unbind); as in PyTorch, none of
    them may be changed in place while recording."""
    outs = []
    tracked = True
    for array in arrays:
        if type(input._data) is MetaArray and type(array) is not MetaArray:
            array = array.view(MetaArray)
        out = wrap(array)
        tracked = track_view(out, input, node_cls, multi_output=True)
        outs.append(out)
    if tracked and wants_grad(input):
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
    """out = x with a new shape (same memory);  dx = grad reshaped to x's shape;  out' = x' reshaped to out's"""
    complex_ok = True
    __slots__ = ()
    formula = "reshape: gradient reshaped back"
    _out_shape: tuple    # out's, for the tangent (not a value PyTorch saves, so not shown as one)

    def backward(self, ops, grad):
        return (ops.reshape(grad, _input_shape(self)),)

    def jvp(self, ops, x_t):
        return ops.reshape(x_t, self._out_shape)


class UnsafeViewBackward0(ViewBackward0):
    """out = x with a new shape, as a new tensor (after a copy or a product);  dx = grad reshaped back"""
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    """out = x reshaped as a view of strided (non-contiguous) memory;  dx = grad reshaped back"""
    __slots__ = ()


class AliasBackward0(Node):
    """out = x (``x[...]``, a second tensor on the same memory);  dx = grad;  out' = x'"""
    complex_ok = True
    __slots__ = ()
    formula = "identity"

    def backward(self, ops, grad):
        return (grad,)

    def jvp(self, ops, x_t):
        return x_t


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
    if shape and not isinstance(shape[0], (tuple, list, Size)) and not _is_size(shape[0], True):
        got = ", ".join(_type_name(s) for s in shape)
        why = ("" if len(shape) > 1 else
               f"      didn't match because some of the arguments have invalid types: (!{got}!)\n")
        raise TypeError(f"view() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        f" * (torch.dtype dtype)\n{why} * (tuple of ints size)\n{why}")
    array, shared = _reshaped(a, _infer_shape(_size_args(shape, "view"), a.size))
    if not shared:
        raise RuntimeError(_VIEW_ERROR)
    return _shape_view(input, array, ViewBackward0)


def _view_dtype(input, dtype):
    """The same bytes read as ``dtype``: shared memory and version counter, but, as in PyTorch, no ``_base``
    and no graph (a reinterpretation of bits has no derivative)."""
    out = wrap(input._data.view(dtype._np))
    out._version_box = input._version_box
    return out


def view_as(input, other):
    """``input.view(other.shape)``: the same memory seen with ``other``'s shape (a view, no copy)."""
    return view(input, other._data.shape)


def reshape(input, *shape):
    """A view with the new shape when the strides allow it; otherwise a copy. As in PyTorch, the view of a
    contiguous tensor is ViewBackward0, of a strided one ReshapeAliasBackward0, and a copy is recorded as
    CloneBackward0 then UnsafeViewBackward0."""
    a = input._data
    array, shared = _reshaped(a, _infer_shape(_size_args(shape, "reshape", "shape"), a.size))
    if shared:
        return _shape_view(input, array, ViewBackward0 if a.flags.c_contiguous else ReshapeAliasBackward0)
    return _unsafe_view(_copy(input, array.reshape(a.shape)), array)


def reshape_as(input, other):
    """``input.reshape(other.shape)``: a view where the memory allows, else a copy."""
    return reshape(input, other._data.shape)


def _unsafe_view(input, array):
    """``array`` (``input``'s values in a new shape) as a new tensor, not a view: the last step of a reshape
    that had to copy, and of the batched products in ``matmul``."""
    out = wrap(array)
    if wants_grad(input):
        record(UnsafeViewBackward0, (input,), out, _out_shape=array.shape)
    return out


def _copy(input, array):
    out = wrap(array)
    if wants_grad(input):
        record(CloneBackward0, (input,), out)
    return out


def clone(input, *, memory_format=None):
    """A copy with its own memory, recorded as CloneBackward0. The copy keeps the input's layout (strides)
    unless ``memory_format`` asks for a contiguous one, as in PyTorch."""
    if layouts.is_channels_last(memory_format):
        return _copy(input, layouts.in_memory_format(input._data, memory_format))
    a = input._data
    if "contiguous" in str(memory_format) or a.ndim < 2 or is_dense(a):
        return _copy(input, a.copy(order="C" if "contiguous" in str(memory_format) else "K"))
    out = empty_in_layout_of(a, a.dtype)    # PyTorch's layout for memory that is not dense (NumPy's "K" differs)
    out[...] = a
    return _copy(input, out)


def contiguous(input, memory_format=None):
    """The tensor itself when already contiguous (in ``memory_format``, row-major by default), else a copy that
    is."""
    a = input._data
    if layouts.is_channels_last(memory_format):
        if layouts.is_in_memory_format(a, memory_format):
            return input
        return _copy(input, layouts.in_memory_format(a, memory_format))
    if a.flags.c_contiguous or type(a) is MetaArray:     # (a meta tensor is contiguous: core/meta.py)
        return input
    return _copy(input, np.ascontiguousarray(a))


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
    return _shape_view(input, np.squeeze(a, axis=axes), node)


def unsqueeze(input, dim):
    """A new size-1 dim at ``dim`` (in ``-ndim-1 .. ndim``). A view."""
    a = input._data
    d = _wrap_dim(dim, a.ndim + 1)
    return _shape_view(input, _with_unit_dim(a, d), UnsqueezeBackward0)


def _with_unit_dim(a, d):
    """``a`` with a size-1 dim at ``d``, whose stride is PyTorch's: the size times the stride of the dim it goes
    before (one element at the end). NumPy gives it stride 0; no view reads a size-1 dim's stride, but
    TensorIterator does, when it picks the layout of an elementwise result (``in_iteration_layout``)."""
    stride = a.shape[d] * a.strides[d] if d < a.ndim else a.itemsize
    shape, strides = a.shape[:d] + (1,) + a.shape[d:], a.strides[:d] + (stride,) + a.strides[d:]
    root = storage_root(a)      # made on the memory's owner, so that the view's storage is still the base's
    try:
        offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        out = np.ndarray(shape, a.dtype, buffer=root, offset=offset, strides=strides)
    except (TypeError, ValueError):     # an owner that lends no buffer: NumPy's own view (stride 0)
        return a[(slice(None),) * d + (None,)]
    if not a.flags.writeable:
        out.flags.writeable = False
    return out


def _squeeze_result(input, dim):
    """``input.squeeze_(dim)`` on a fresh result, as ``matmul`` does for a vector @ matrix product."""
    out = wrap(np.squeeze(input._data, axis=dim))
    if wants_grad(input):
        record(SqueezeBackward4, (input,), out, _out_shape=out._data.shape)
    return out


# --- permuting dims -------------------------------------------------------------------------------------

class PermuteBackward0(Node):
    """out = x with dims reordered by ``dims``;  dx = grad with the inverse order;  out' = x' reordered by dims"""
    complex_ok = True
    __slots__ = ()
    formula = "permute: gradient permuted back"
    dims: tuple         # non-negative

    def backward(self, ops, grad):
        return (ops.permute(grad, tuple(np.argsort(self.dims).tolist())),)

    def jvp(self, ops, x_t):
        return ops.permute(x_t, self.dims)


class TransposeBackward0(Node):
    """out = x with dims a and b swapped;  dx = grad with them swapped back;  out' = x' with them swapped"""
    complex_ok = True
    __slots__ = ()
    formula = "transpose: gradient transposed back"
    dim0: int           # non-negative, as dim1
    dim1: int

    def backward(self, ops, grad):
        if self.dim0 == self.dim1:          # the identity (always so for a 0-d tensor)
            return (grad,)
        return (ops.transpose(grad, self.dim0, self.dim1),)

    def jvp(self, ops, x_t):
        return x_t if self.dim0 == self.dim1 else ops.transpose(x_t, self.dim0, self.dim1)


def permute(input, *dims):
    """The dims reordered: ``out.shape[i] == input.shape[dims[i]]``. A view."""
    a = input._data
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _size_args(dims, "permute", "dims")
    if len(dims) != a.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    axes = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view(input, a.transpose(axes), PermuteBackward0, dims=axes)


def transpose(input, dim0, dim1):
    """Dims ``dim0`` and ``dim1`` swapped. A view."""
    a = input._data
    d0, d1 = _wrap_dim(dim0, a.ndim), _wrap_dim(dim1, a.ndim)
    return _view(input, np.swapaxes(a, d0, d1) if a.ndim else a.view(), TransposeBackward0, dim0=d0, dim1=d1)


swapaxes = swapdims = transpose


def movedim(input, source, destination):
    """Dims ``source`` moved to positions ``destination``, the others keeping their order (a permute)."""
    n = input._data.ndim
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_fmt(src)} dims) should contain "
                           f"the same number of dims as destination ({_fmt(dst)} dims)")
    src, dst = _dims(src, n), _dims(dst, n)
    if n == 0:                              # PyTorch returns an alias of a 0-d tensor
        return _view(input, input._data.view(), AliasBackward0)
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
        warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
    elif n != 2:
        warn(_T_WARNING, UserWarning, stacklevel=2)
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    """The last two dims swapped: the transpose of a batch of matrices."""
    if self._data.ndim == 0:
        return _zero_dim_identity(self, "Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                                        "these cases.")
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _H(self):
    """The conjugate transpose of a matrix (for real tensors, the transpose)."""
    n = self._data.ndim
    if n == 0:
        return _zero_dim_identity(self, "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    return _conj_if_complex(transpose(self, 0, 1))


def _mH(self, name="mH"):
    """The conjugate transpose of the last two dimensions (``mH``); for real tensors, ``mT``."""
    if self._data.ndim == 0 and name == "mH":
        return _zero_dim_identity(self, "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().")
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return _conj_if_complex(transpose(self, -2, -1))


def adjoint(input):
    """The conjugate transpose of the last two dims, a view (``x.mH``)."""
    return _mH(input, "adjoint()")


def _zero_dim_identity(t, message):
    """PyTorch's matrix transposes of a 0-d tensor: a deprecation warning, and the tensor itself."""
    warn(message, UserWarning, stacklevel=3)
    return _conj_if_complex(t)


def _conj_if_complex(t):
    return t.conj() if t._data.dtype.kind == "c" else t


# --- expand ---------------------------------------------------------------------------------------------

class ExpandBackward0(Node):
    """out = x broadcast to a larger shape;  dx = grad summed over the broadcast dims;  out' = x' broadcast"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ broadcast(x)/∂x: gradient summed over the broadcast dims"

    def backward(self, ops, grad):
        return (ops.sum_to(grad, _input_shape(self)),)

    def jvp(self, ops, x_t):
        return x_t          # expanding is broadcasting, which the engine does to every tangent


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


def expand(input, *sizes):
    """A view broadcasting size-1 dims (and new leading dims) to ``sizes``; -1 keeps a size. Its memory
    overlaps itself, so in-place writes to it fail, as in PyTorch."""
    a = input._data
    target = expanded_shape(input, _size_args(sizes, "expand"))
    if math.prod(target) == a.size and a.size:
        array = a.reshape(target)               # only size-1 dims added: an ordinary, writable view
    else:
        array = np.broadcast_to(a, target)
    return _view(input, array, ExpandBackward0)


def expand_as(input, other):
    """``input.expand(other.shape)``: dimensions of size 1 repeated, as a view, to ``other``'s shape."""
    return expand(input, other._data.shape)


def broadcast_to(input, size):
    """``input`` broadcast to ``size`` as a view (``expand``); its gradient sums back over the
    broadcast dimensions."""
    return expand(input, size)


# --- narrowing and selecting ----------------------------------------------------------------------------

class SliceBackward0(Node):
    """out = x[index] (a slice, a view);  dx = zeros with grad placed at the slice;  out' = x'[index]"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ x[a:b]/∂x: the gradient placed back in the slice, zeros elsewhere"
    index: tuple        # basic indices (slices, and an integer for select)

    def backward(self, ops, grad):
        return (ops.embed(grad, _input_shape(self), self.index),)

    def jvp(self, ops, x_t):
        return ops.getitem(x_t, self.index + (Ellipsis,))     # an array even where the index picks one element


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


# --- diagonals ------------------------------------------------------------------------------------------

def diagonal_index(n_rows, n_cols, offset):
    """Row and column indices of diagonal ``offset`` of an ``n_rows x n_cols`` matrix."""
    length = max(0, min(n_rows + min(offset, 0), n_cols - max(offset, 0)))
    rows = np.arange(length) - min(offset, 0)
    return rows, rows + offset


class DiagonalBackward0(Node):
    """out = the diagonal of x over dims (d1, d2), as a last dim;  dx = zeros with grad on that diagonal"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ diagonal(x)/∂x: the gradient placed on the diagonal, zeros elsewhere"

    def backward(self, ops, grad):
        shape, d1, d2 = _input_shape(self), self.dim1, self.dim2
        rest = [i for i in range(len(shape)) if i not in (d1, d2)]
        moved = tuple(shape[i] for i in rest) + (shape[d1], shape[d2])
        rows, cols = diagonal_index(shape[d1], shape[d2], self.offset)
        placed = ops.embed(grad, moved, (Ellipsis, rows, cols))
        return (ops.permute(placed, tuple(np.argsort(rest + [d1, d2]).tolist())),)


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


# --- ravel --------------------------------------------------------------------------------------------------

def ravel(input):
    """The elements as a 1-D tensor: a view when ``input`` is contiguous, else a contiguous copy viewed."""
    return view(contiguous(input), -1)


# --- as_strided: a view with strides of its own ---------------------------------------------------------------

def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size`` and ``stride`` (in elements), starting
    ``storage_offset`` elements into the storage (by default where ``input`` starts). Gradients flow to the
    elements of ``input`` the view reads (AsStridedBackward0); an element read twice gets both gradients."""
    a = input._data
    size, stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{_fmt(stride)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root, itemsize = storage_root(a), a.itemsize
    needed = 0 if 0 in size else (offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1) * itemsize
    if needed > root.nbytes:
        raise RuntimeError(f"setStorage: sizes {_fmt(size)}, strides {_fmt(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {root.nbytes}")
    # (an empty view may start past the storage's end, as in PyTorch; NumPy wants its offset inside the buffer)
    array = np.ndarray(size, a.dtype, buffer=root, offset=min(offset * itemsize, root.nbytes),
                       strides=tuple(st * itemsize for st in stride))
    if any(st == 0 and n > 1 for n, st in zip(size, stride)):
        array.flags.writeable = False           # elements that share memory: in-place writes are refused
    return _view(input, array, AsStridedBackward0, arrays=(array, a))


# --- in-place view ops: the tensor itself becomes the view ------------------------------------------------------

class TransposeBackward1(TransposeBackward0):
    """in place: x's dims a and b swapped;  dx = grad with them swapped back"""
    __slots__ = ()


class TBackward1(TransposeBackward0):
    """in place: x transposed (a matrix, or a vector left as it is);  dx = grad transposed back"""
    __slots__ = ()


class SqueezeBackward3(ViewBackward0):
    """in place: x loses its size-1 dims;  dx = grad reshaped back"""
    __slots__ = ()


class SqueezeBackward5(ViewBackward0):
    """in place: x loses the size-1 dims among ``dims``;  dx = grad reshaped back"""
    __slots__ = ()


class UnsqueezeBackward1(ViewBackward0):
    """in place: x gains a size-1 dim;  dx = grad reshaped back"""
    __slots__ = ()


class UnfoldBackward0(AsStridedBackward0):
    """out = the windows of x along a dim, a view;  dx = each window's gradient added back where it was read
    (overlapping windows add up)"""
    __slots__ = ()


def unfold(input, dimension, size, step):
    """``x.unfold(dim, size, step)``: a view holding every window of ``size`` consecutive elements along ``dim``,
    starting ``step`` apart, as a new last dim (windows may overlap; no copy is made)."""
    a = input._data
    dim = _wrap_dim(dimension, a.ndim)
    length = a.shape[dim] if a.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if a.ndim == 0:
        array = a.reshape(1)
    else:
        windows = (length - size) // step + 1
        shape = a.shape[:dim] + (windows,) + a.shape[dim + 1:] + (size,)
        strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
        # overlapping windows share memory: in-place writes into them are refused (read-only), where PyTorch
        # writes them in its own order; one window, or windows apart, may be written, as in PyTorch
        writeable = (size <= step or windows <= 1) and a.flags.writeable
        array = np.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)
    return _view(input, array, UnfoldBackward0, arrays=(array, a))


class AsStridedBackward1(AsStridedBackward0):
    """in place: x becomes a view of its storage with its own sizes and strides;  dx = grad placed back at the
    elements read"""
    __slots__ = ()


def _in_place_view(self, view, node_cls):
    """``self`` becomes ``view`` (an out-of-place view of it) in place: its array, and, when recorded, the view's
    node under PyTorch's name for the in-place form (``node_cls``). Its memory is unchanged, but, as in PyTorch,
    the version counter moves, and a leaf that requires grad is refused."""
    check_inplace(self)
    self._data = view._data
    if _forward.on and forward_grad.tangent(view) is not None:
        forward_grad.set_tangent(self, forward_grad.tangent(view))     # the tangent takes the same new shape
    node = view.grad_fn
    if node is not None and view._requires_grad:
        node.__class__ = node_cls           # the same rule under the in-place op's name
        # (a retained gradient stays with the old node, as in PyTorch: it is the gradient of the tensor as it was)
        self.grad_fn, self._output_nr, self._requires_grad = node, 0, True
    self._version_box[0] += 1               # last: an inference tensor outside the mode raises, changed, as in PyTorch
    return self


def transpose_(self, dim0, dim1):
    """Swaps dimensions ``dim0`` and ``dim1`` of ``self`` in place (also ``swapaxes_``, ``swapdims_``)."""
    return _in_place_view(self, transpose(self, dim0, dim1), TransposeBackward1)


def t_(self):
    """Transposes a tensor of at most 2 dimensions in place."""
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return _in_place_view(self, transpose(self, 0, 1 if self._data.ndim == 2 else 0), TBackward1)


def squeeze_(self, dim=None):
    """Removes size-1 dimensions (all, or ``dim``) from ``self``'s shape in place; returns ``self``."""
    node = SqueezeBackward3 if dim is None else SqueezeBackward5 if isinstance(dim, (tuple, list)) else SqueezeBackward4
    return _in_place_view(self, squeeze(self, dim), node)


def unsqueeze_(self, dim):
    """Inserts a size-1 dimension at ``dim`` into ``self``'s shape in place; returns ``self``."""
    return _in_place_view(self, unsqueeze(self, dim), UnsqueezeBackward1)


def as_strided_(self, size, stride, storage_offset=None):
    """Makes ``self`` show its storage with ``size``, ``stride`` (in elements) and ``storage_offset``, in
    place."""
    return _in_place_view(self, as_strided(self, size, stride, storage_offset), AsStridedBackward1)
