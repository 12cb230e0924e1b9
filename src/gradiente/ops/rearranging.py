"""Shape ops that join, split, repeat or reorder tensors, each next to its derivative rule: ``cat``/``stack``
(and ``hstack``, ``vstack``, ``atleast_*d``), ``split``/``chunk``/``unbind``, ``repeat``/``tile``,
``flip``/``roll``, the triangles ``tril``/``triu`` and ``diag``. All make new memory except the pieces of
``split``/``chunk``/``unbind``, which are views of their input (``_views``).
"""
import numpy as np

from ..core import dtype as dt
from ..core.creation import c_order, in_layout_of
from ..core.device import check_device
from ..core.dtype import scalar_name
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor, _size_args, _wrap_dim
from .comparison import logical_xor
from .fill import copy_
from .joining import cat
from .reductions import cumprod
from .views import (
    DiagonalBackward0,
    _dims,
    _input_shape,
    clone,
    diagonal,
    expand,
    narrow,
    reshape,
    slice_dim,
    unsqueeze,
    view,
)

__all__ = ["diag", "flip", "fliplr", "flipud", "repeat_interleave", "roll", "tile", "tril", "triu",
           "diff", "rot90", "vander", "tril_indices", "triu_indices"]


# --- joining and splitting ------------------------------------------------------------------------------


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
    reps = _size_args(sizes, "repeat", "repeats")
    if len(reps) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    out = wrap(np.tile(a, reps) if a.ndim == len(reps) else np.tile(a.reshape((1,) * (len(reps) - a.ndim) + a.shape),
                                                                    reps))
    if wants_grad(input):
        record(RepeatBackward0, (input,), out, repeats=reps)
    return out


def tile(input, dims):
    """``repeat`` with missing leading repetitions taken as 1."""
    reps = _size_args((dims,) if not isinstance(dims, (tuple, list)) else (tuple(dims),), "tile", "dims")
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
    axes = _dims(_size_args(dims, "flip", "dims"), a.ndim) if a.ndim else ()
    values = in_layout_of(np.flip(a, axes) if axes else a.copy(), a)     # laid out as the input, as PyTorch's
    if np.may_share_memory(values, a):
        # a flip along dims of size 1 is NumPy's view of ``a`` itself, and a view counts as C-contiguous; the
        # result must be a copy, or a later in-place change of the input would show through it
        values = values.copy()
    out = wrap(values)
    if wants_grad(input):
        record(FlipBackward0, (input,), out, dims=axes)
    return out


def fliplr(input):
    """``input`` with its columns (dimension 1) in reverse order; needs at least 2 dimensions. A copy."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    """``input`` with its rows (dimension 0) in reverse order; needs at least 1 dimension. A copy."""
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
    out = wrap(c_order(np_fn(a, diagonal)))     # PyTorch's kernel writes a contiguous result
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
    """out = zeros with x's last dim on diagonal ``offset`` over dims (dim1, dim2) (``diag_embed``, and ``diag``
    of a vector);  dx = that diagonal of grad"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ diag_embed(x)/∂x: the diagonal of the gradient"

    def backward(self, ops, grad):
        if ops.recording:
            return (diagonal(grad, self.offset, self.dim1, self.dim2),)
        return (np.diagonal(grad, self.offset, self.dim1, self.dim2),)     # the same layout as diagonal's


def diag(input, diagonal=0):
    """A 1-D tensor's values on diagonal ``diagonal`` of a square matrix; or a matrix's diagonal (a copy)."""
    a = input._data
    if a.ndim == 1:
        out = wrap(np.diag(a, diagonal))
        if wants_grad(input):
            record(DiagEmbedBackward0, (input,), out, offset=diagonal, dim1=0, dim2=1)
        return out
    if a.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{a.ndim}D")
    out = wrap(np.diagonal(a, diagonal).copy())
    if wants_grad(input):
        record(DiagonalBackward0_copy, (input,), out, offset=diagonal, dim1=0, dim2=1)
    return out


# --- differences, rotations and Vandermonde matrices --------------------------------------------------------

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
    complex_ok = True
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


# --- the triangles' positions -------------------------------------------------------------------------------

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
    meta = check_device(device, "tril_indices", "aten::tril_indices")
    indices = _triangle_indices(np.tril_indices, "tril_indices", row, col, offset, dtype)
    return indices.to("meta") if meta else indices


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) positions of the upper triangle (on and above diagonal ``offset``) of a ``row`` x
    ``col`` matrix, row by row, as a 2 x N tensor."""
    meta = check_device(device, "triu_indices", "aten::triu_indices")
    indices = _triangle_indices(np.triu_indices, "triu_indices", row, col, offset, dtype)
    return indices.to("meta") if meta else indices
