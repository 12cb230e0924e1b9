"""Indexing: ``x[index]``, ``x[index] = v``, gather/scatter, index_select, masked_fill/masked_select, nonzero.

``x[index]`` follows PyTorch's reading of an index, step by step: integers select, slices slice (both
views, SelectBackward0/SliceBackward0), None unsqueezes, and what remains, tensors, lists and boolean
masks, is one advanced-indexing copy (IndexBackward0). The graph therefore has PyTorch's nodes, and an
integer next to a list means what it means in PyTorch (it selects first), not what it means in NumPy.

``x[index] = v`` is recorded as PyTorch records it: the basic part of the index makes a view of x, and v
is written into that view in place (CopyBackwards, or IndexPutBackward0 for the advanced part), which the
one in-place mechanism (``apply_inplace``) records on x as CopySlices. The write's rule zeroes the region in
the old values' gradient and hands the region's gradient to v.

Every rule that moves a gradient back into a larger tensor uses ``ops.embed`` (zeros with values added at
an index: the adjoint of ``x[index]``); ``embed`` below is that operation on tensors, for create_graph.
"""
import functools
import math

import numpy as np

from ..core import diagnostics, forward_grad, grad_mode
from ..core import dtype as dt
from ..core.creation import is_dense
from ..core.dtype import scalar_name
from ..core.inplace import apply_inplace, make_inplace, needs_grad, untracked_change, writeable_alias
from ..core.meta import NONZERO, is_meta, no_meta_kernel
from ..core.node import Node, tangent_sum
from ..core.record import record, wants_grad, wrap
from ..core.rules import numpy_ops
from ..core.tensor import Tensor, _wrap_dim
from ..core.warnings_at_caller import warn
from .views import AliasBackward0, _fmt, _view, expand, infer_size, select, slice_dim, unsqueeze, view

__all__ = ["argwhere", "embed", "gather", "index_select", "masked_fill", "masked_select", "nonzero", "nonzero_static",
           "scatter", "scatter_add", "take_along_dim", "unravel_index", "take"]

_diagnostics = diagnostics.state
_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
              "(got {})")
_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
             "a 0-dim tensor to a number")
_SEQUENCE_INDEX = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                   "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                   "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result")
_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")


# --- reading an index ------------------------------------------------------------------------------------

def _is_int(obj):
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


def _array_of(obj):
    return obj._data if isinstance(obj, Tensor) else obj


def _index_array(obj):
    """A tensor, array or (nested) list used as an index, as an int64 or bool NumPy array of its own (a rule
    reads it at backward time, after the caller may have changed the tensor it came from)."""
    arr = obj._data if isinstance(obj, Tensor) else np.asanyarray(obj)
    kind = arr.dtype.kind
    if kind == "b":
        return arr.copy()
    if kind == "u" and arr.dtype.itemsize == 1:
        return arr.astype(bool)                 # a byte mask, as in (older) PyTorch
    if kind in "iu":
        return arr.astype(np.int64)
    if arr.size == 0 and not isinstance(obj, (Tensor, np.ndarray)):
        return arr.astype(np.int64)             # ``x[[]]``: an empty list of positions
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _as_tuple(index):
    """PyTorch's rule for a list index: read as a tuple of indices if it holds sequences, slices, None or
    Ellipsis (``x[[0, 1], [1, 2]]`` and ``x[[[0, 1], [1, 2]]]`` mean the same), else as one tensor."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(o, (Tensor, np.ndarray, list, tuple, slice)) or o is None or o is Ellipsis for o in index):
        warn(_SEQUENCE_INDEX, UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


class _Index:
    """An index as PyTorch reads it, against a tensor of a given shape.

    ``steps``: the basic part, in order, as ``(kind, dim, arg)`` with kind ``select``/``slice``/``unsqueeze``
    (slices that keep a whole dim are dropped, as PyTorch drops them); ``basic``: the same as one NumPy
    basic index; ``advanced``: what remains after the basic part, a NumPy index of slices and arrays (no
    integers, so NumPy and PyTorch read it alike), or None."""

    __slots__ = ("advanced", "basic", "steps")

    def __init__(self, shape, index, keep_full_slices=False):
        items, consumed = [], 0
        for obj in _as_tuple(index):
            if obj is None or obj is Ellipsis:
                pass
            elif isinstance(obj, (bool, np.bool_)):
                obj = bool(obj)
            elif _is_int(obj) or isinstance(obj, slice):
                consumed += 1
            elif isinstance(obj, (Tensor, np.ndarray)) and np.ndim(_array_of(obj)) == 0 \
                    and _array_of(obj).dtype.kind in "iu":
                obj = int(_array_of(obj))       # a 0-d integer tensor or array selects, like an int
                consumed += 1
            elif isinstance(obj, (Tensor, np.ndarray, list, tuple, range)):
                obj = _index_array(list(obj) if isinstance(obj, range) else obj)    # a range is a list of ints
                if obj.ndim == 0:               # a 0-d boolean tensor acts like a Python bool
                    obj = bool(obj)
                else:
                    consumed += obj.ndim if obj.dtype == np.bool_ else 1
            else:
                raise IndexError(_BAD_INDEX.format(type(obj).__name__))
            items.append(obj)
        ndim = len(shape)
        if consumed > ndim:
            # PyTorch words a 0-d tensor's error by the index's form: a lone number, a lone slice, or a tuple
            if ndim == 0 and not isinstance(index, tuple):
                raise IndexError("slice() cannot be applied to a 0-dim tensor." if isinstance(index, slice)
                                 else _ZERO_DIM)
            raise IndexError(f"too many indices for tensor of dimension {ndim}")
        if sum(o is Ellipsis for o in items) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")

        shape = list(shape)
        steps, basic, arrays = [], [], []
        dim = 0
        for position, obj in enumerate(items):
            if obj is None or isinstance(obj, bool):
                steps.append(("unsqueeze", dim, None))
                basic.append(None)
                shape.insert(dim, 1)
                if isinstance(obj, bool):       # True keeps the new dim's one entry, False none of it
                    arrays.append((dim, np.array([obj])))
                dim += 1
            elif obj is Ellipsis:
                basic.extend([slice(None)] * (ndim - consumed))
                dim += ndim - consumed
            elif isinstance(obj, slice):
                if obj.step is not None and obj.step <= 0:
                    raise ValueError("step must be greater than zero" if obj.step < 0 else "slice step cannot be zero")
                n = shape[dim]
                bounds = slice(*obj.indices(n))
                # PyTorch keeps the tensor itself for a slice written to cover the whole dim (``:``, ``0:``,
                # ``:n`` or beyond), judged on the numbers as written: ``-n:`` still records a slice.
                whole = (obj.start or 0) == 0 and (obj.stop is None or obj.stop >= n) and obj.step in (None, 1)
                if keep_full_slices or not whole:
                    steps.append(("slice", dim, bounds))
                basic.append(bounds)
                shape[dim] = len(range(bounds.start, bounds.stop, bounds.step))
                dim += 1
            elif isinstance(obj, np.ndarray):
                arrays.append((dim, obj))
                k = obj.ndim if obj.dtype == np.bool_ else 1
                basic.extend([slice(None)] * k)
                dim += k
            else:
                i, n = int(obj), shape[dim]
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for dimension {position} with size {n}")
                steps.append(("select", dim, i + n if i < 0 else i))
                basic.append(i + n if i < 0 else i)
                shape.pop(dim)
        self.steps = steps
        self.basic = tuple(basic) + (Ellipsis,)     # the Ellipsis keeps a full selection a 0-d view
        self.advanced = _advanced_index(arrays, shape) if arrays else None


def _advanced_index(arrays, shape):
    """The advanced part as one NumPy index over the tensor left by the basic steps, checked as PyTorch
    checks it."""
    index, pos, shapes, where = [], 0, [], []
    for dim, arr in arrays:
        index.extend([slice(None)] * (dim - pos))
        where.append(len(index))
        if arr.dtype == np.bool_:
            for j, s in enumerate(arr.shape):
                if s != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {_fmt(arr.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {_fmt(shape)} at index {dim + j}")
            if is_meta(arr):
                raise NotImplementedError(NONZERO)      # a meta mask's positions are values it does not have
            shapes.extend([(int(arr.sum()),)] * arr.ndim)   # a mask stands for its nonzero positions
            pos = dim + arr.ndim
        else:
            shapes.append(arr.shape)
            pos = dim + 1
        index.append(arr)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(_fmt(s) for s in shapes)) from None
    nth, empty = 0, 0 in shape
    for (dim, arr), at in zip(arrays, where):
        if arr.dtype == np.bool_:
            nth += arr.ndim
            continue
        n = shape[dim]
        bad = (arr >= n) | (arr < -n)
        if empty and n:                         # nothing is read from an empty tensor; PyTorch does not check
            index[at] = np.clip(arr, -n, n - 1)
        elif bad.any():
            raise IndexError(f"index {int(arr[bad].flat[0])} is out of bounds for dimension {nth} with size {n}")
        nth += 1
    return tuple(index)


# --- x[index] --------------------------------------------------------------------------------------------

class IndexBackward0(Node):
    """out = x[index] (advanced indexing, a copy);  dx = zeros with grad added at index (repeats add up)"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ x[idx]/∂x: the gradient added back at idx, zeros elsewhere"

    def backward(self, ops, grad):
        return (ops.embed(grad, self._input_meta[0][0], self.index),)

    def jvp(self, ops, x_t):
        return ops.getitem(x_t, self.index)


def _index(input, index):
    out = wrap(input._data[index])
    if wants_grad(input):
        record(IndexBackward0, (input,), out, index=index)
    return out


def getitem(self, index):
    """``x[index]`` with PyTorch's meaning and graph (see the module docstring)."""
    if type(index) is int:
        a = self._data
        if a.ndim == 0:
            raise IndexError(_ZERO_DIM)
        n = a.shape[0]
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {n}")
        return select(self, 0, index)
    parsed = _Index(self._data.shape, index, keep_full_slices=type(index) is slice)
    result = _basic_view(self, parsed)
    if parsed.advanced is not None:
        return _index(result, parsed.advanced)
    return _view(self, self._data.view(), AliasBackward0) if result is self else result


def _basic_view(tensor, parsed):
    """The view the basic steps of an index make (select, slice, unsqueeze), or ``tensor`` if there are none."""
    result = tensor
    for kind, dim, arg in parsed.steps:
        if kind == "select":
            result = select(result, dim, arg)
        elif kind == "slice":
            result = slice_dim(result, dim, arg.start, arg.stop, arg.step)
        else:
            result = unsqueeze(result, dim)
    return result


# --- x[index] = v ----------------------------------------------------------------------------------------

class IndexPutBackward0(Node):
    """out = x with out[indices] = v (advanced indices);  dx = grad zeroed there;  dv = grad[indices]"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the written places;  ∂/∂v: the gradient at them"

    def backward(self, ops, grad):
        (x_node, _), (v_node, _) = self.next_functions
        dx = dv = None
        if x_node is not None:
            keep = np.ones(tuple(grad.shape), dtype=bool)
            _assign(keep, self.advanced, False)
            dx = ops.mask(keep, grad)
        if v_node is not None:
            dv = grad if self.advanced is None else ops.getitem(grad, self.advanced)
        return dx, dv

    def jvp(self, ops, x_t, v_t):
        shape = self._input_meta[0][0]
        kept = None
        if x_t is not None:
            keep = np.ones(shape, dtype=bool)
            _assign(keep, self.advanced, False)
            kept = ops.mask(keep, x_t)
        if v_t is None:
            return kept
        put = ops.expand(v_t, shape) if self.advanced is None else ops.embed(v_t, shape, self.advanced)
        return tangent_sum(kept, put)


class CopyBackwards(IndexPutBackward0):
    """out = v copied over all of x;  dx = 0;  dv = grad"""
    __slots__ = ()

    def name(self):
        return "torch::autograd::CopyBackwards"       # PyTorch's C++ name, as copy_'s node (ops/fill.py) gives it


class FillBackward3(IndexPutBackward0):
    """out = x with every element set to a number;  dx = 0"""
    __slots__ = ()


def _assign(region, advanced, values):
    if not region.flags.writeable:
        alias = writeable_alias(region)
        region = region if alias is None else alias
    try:
        if advanced is None:
            region[...] = values
        else:
            region[advanced] = values
    except ValueError:
        if not region.flags.writeable:
            raise RuntimeError(_OVERLAP) from None
        shape = np.shape(values)
        target = region[advanced].shape if advanced is not None else region.shape
        raise RuntimeError(f"shape mismatch: value tensor of shape {_fmt(shape)} cannot be broadcast to indexing "
                           f"result of shape {_fmt(target)}") from None


def check_put_dtype(value, advanced, dtype):
    """PyTorch's refusal to write values of another dtype at advanced indices (a single mask fills, casting)."""
    arrays = [i for i in advanced if isinstance(i, np.ndarray)]
    mask_fill = len(arrays) == 1 and arrays[0].dtype == np.bool_ and value._data.size == 1
    if value._data.dtype != dtype and not mask_fill:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_name(dtype)} for the destination and {scalar_name(value._data.dtype)} "
                           "for the source.")


def _fit_value(value, region_shape, advanced, dtype):
    """The value as PyTorch prepares it for writing (``copy_to`` and ``index_put_`` in its indexing code):
    leading size-1 dims dropped by a view, then expanded to the region; a 0-d value fills the region as is."""
    shape = value._data.shape
    stripped = shape[next((i for i, s in enumerate(shape) if s != 1), len(shape)):]
    if advanced is not None:
        check_put_dtype(value, advanced, dtype)
        return view(value, stripped) if stripped != shape else value
    if shape == region_shape or not shape:
        return value
    value = view(value, stripped)
    return expand(value, region_shape) if stripped != region_shape else value


def _setitem_result(old, advanced, value):
    """``old`` with ``value`` written at ``advanced`` (everywhere when None), out of place and recorded."""
    out = old._data.copy()
    if isinstance(value, Tensor):
        value = _fit_value(value, out.shape, advanced, out.dtype)
        _assign(out, advanced, value._data)
        filled = value._data.ndim == 0 and out.ndim > 0
    else:
        _assign(out, advanced, value)
        filled = out.ndim > 0
    node = IndexPutBackward0 if advanced is not None else FillBackward3 if filled else CopyBackwards
    result = wrap(out)
    if wants_grad(old, value):
        record(node, (old, value), result, advanced=advanced)
    return result


def setitem(self, index, value):
    """``x[index] = value`` (a number or a tensor broadcast to the region), in place."""
    if isinstance(value, (list, tuple)):
        raise TypeError(f"can't assign a {type(value).__name__} to a torch.{self.dtype._legacy}")
    if isinstance(value, np.ndarray):
        value = wrap(value)
    parsed = _Index(self._data.shape, index)
    if not ((grad_mode.state.enabled and (needs_grad(self) or getattr(value, "_requires_grad", False)))
            or (forward_grad.state.on and wants_grad(self, value))):
        _write_region(self, parsed, value)
        return
    apply_inplace(_basic_view(self, parsed), lambda old: _setitem_result(old, parsed.advanced, value))


def _write_region(tensor, parsed, value):
    """The unrecorded path: write straight into the tensor's memory."""
    region = tensor._data[parsed.basic]
    if isinstance(value, Tensor):
        value = _fit_value(value, region.shape, parsed.advanced, region.dtype)._data
    _assign(region, parsed.advanced, value)
    tensor._version_box[0] += 1
    if _diagnostics.sites:          # learner or anomaly mode: remember the line (see core/diagnostics.py)
        diagnostics.note_write(tensor)
    untracked_change(tensor)


# --- embed: the adjoint of indexing, on tensors -----------------------------------------------------------

class SliceBackwardBackward0(Node):
    """out = zeros with out[index] = v;  dv = grad[index]"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ embed(v)/∂v: the gradient read back at the index"

    def backward(self, ops, grad):
        return (ops.getitem(grad, self.index),)


class SelectBackwardBackward0(SliceBackwardBackward0):
    """out = zeros with v placed at an integer position;  dv = grad at that position"""
    __slots__ = ()


class IndexPutImplBackward0(SliceBackwardBackward0):
    """out = zeros with v added at advanced indices;  dv = grad at those indices"""
    __slots__ = ()


def embed(values, shape, index):
    """Zeros of ``shape`` with ``values`` added at ``index`` (a NumPy-style index with no integer next to an
    array): the adjoint of ``x[index]``. Indexing rules call it through ``ops.embed`` under create_graph."""
    out = wrap(numpy_ops.embed(values._data, tuple(shape), index))
    if wants_grad(values):
        if any(type(i) is np.ndarray for i in index):
            node = IndexPutImplBackward0
        elif any(_is_int(i) for i in index):
            node = SelectBackwardBackward0
        else:
            node = SliceBackwardBackward0
        record(node, (values,), out, index=index)
    return out


# --- gather, scatter, index_select -----------------------------------------------------------------------

def _int_index(index, name):
    a = index._data if isinstance(index, Tensor) else np.asanyarray(index)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return a.astype(np.int64)                   # a copy: the rule reads it at backward time


def _along(index, dim, size):
    """The NumPy index that reads ``x[i][j]...[index[i][j]...]...`` along ``dim`` (gather's pattern)."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {int(index[bad].flat[0])} is out of bounds for dimension {dim} with size {size}")
    if index.ndim == 0:             # (a single position, in a tensor of one dim: ``scatter_(0, tensor(3), ...)``)
        return (index,)
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _check_gather_shapes(a, idx, d, name):
    if idx.ndim != a.ndim and not (idx.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    for k in range(idx.ndim):
        if k != d and idx.shape[k] > a.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {_fmt(idx.shape)} to be no "
                               f"larger than self {_fmt(a.shape)} apart from dimension {d}")


class GatherBackward0(Node):
    """out[i][j] = x[i][index[i][j]] (dim 1);  dx = zeros with grad added back at those places"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ gather(x)/∂x: the gradient added back where each element came from"

    def backward(self, ops, grad):
        return (ops.embed(grad, self._input_meta[0][0], self.index),)


def gather(input, dim, index, *, sparse_grad=False):
    """Values of ``input`` along ``dim`` at the positions ``index`` holds (``out`` has ``index``'s shape)."""
    a = input._data
    idx = _int_index(index, "gather")
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return view(gather(view(input, 1), 0, wrap(idx.reshape(1))), ())
    _check_gather_shapes(a, idx, d, "gather")
    where = _along(idx, d, a.shape[d])
    out = wrap(a[where])
    if wants_grad(input):
        # x and index saved as PyTorch saves them, so that changing either in place breaks backward
        record(GatherBackward0, (input,), out, (input, index) if isinstance(index, Tensor) else (input,), index=where)
    return out


class ScatterBackward0(Node):
    """out = x with out[i][index[i][j]] = src[i][j];  dx = grad zeroed there;  dsrc = grad gathered from there"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the written places;  ∂/∂src: the gradient at them"

    def backward(self, ops, grad):
        (x_node, _), (src_node, _) = self.next_functions
        dx = dsrc = None
        if x_node is not None:
            dx = grad if self.add else ops.mask(self.keep, grad)
        if src_node is not None:
            dsrc = ops.getitem(grad, self.index)
            if tuple(dsrc.shape) != self._input_meta[1][0]:
                dsrc = ops.embed(dsrc, self._input_meta[1][0], tuple(slice(0, s) for s in dsrc.shape))
        return dx, dsrc


class ScatterAddBackward0(ScatterBackward0):
    """out = x with src[i][j] added at out[i][index[i][j]];  dx = grad;  dsrc = grad gathered from there"""
    __slots__ = ()


class ScatterBackward1(Node):
    """out = x with a number written at out[i][index[i][j]];  dx = grad zeroed there"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient outside the written places"

    def backward(self, ops, grad):
        return (ops.mask(self.keep, grad),)


def _scatter(input, dim, index, src, add):
    a = input._data
    idx = _int_index(index, "scatter")
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:                 # (as gather: a tensor of one element, and back)
        one = view(src, 1) if isinstance(src, Tensor) and src._data.ndim == 0 else src
        return view(_scatter(view(input, 1), 0, wrap(idx.reshape(1)), one, add), ())
    _check_gather_shapes(a, idx, d, "scatter")
    where = _along(idx, d, a.shape[d])
    out = a.copy()
    if isinstance(src, Tensor):
        if src._data.dtype != a.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        values = src._data[tuple(slice(0, s) for s in idx.shape)]
    else:
        values = src
    if add:
        np.add.at(out, where, values)
    else:
        out[where] = values
    result = wrap(out)
    if wants_grad(input, src):
        keep = None
        if not add:
            keep = np.ones(a.shape, dtype=bool)
            keep[where] = False
        if isinstance(src, Tensor):
            record(ScatterAddBackward0 if add else ScatterBackward0, (input, src), result, index=where, keep=keep,
                   add=add)
        else:
            record(ScatterBackward1, (input,), result, keep=keep)
    return result


def _dense_range(a):
    """The bytes ``[start, end)`` the array fills, if its elements fill them exactly (PyTorch's "non-overlapping
    and dense"), else None."""
    if not is_dense(a):
        return None
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def _assert_no_overlap(written, other):
    """PyTorch's ``assert_no_overlap``: the same tensor, or two dense tensors on overlapping bytes, is refused
    (where either is not dense, PyTorch cannot tell, and lets it pass)."""
    a, b = written._data, other._data
    if other is not written:
        if a.size == 0 or b.size == 0:
            return
        ra, rb = _dense_range(a), _dense_range(b)
        if ra is None or rb is None or not (ra[0] < rb[1] and rb[0] < ra[1]):
            return
    raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                       "a single memory location. Please clone() the tensor before performing the operation.")


def in_place_without_overlap(op, name):
    """The method ``x.name(...)``, the in-place form of ``op``, refusing a tensor argument (index, source, value)
    that shares memory with ``x``, as PyTorch's scatter and index kernels do: what they read would change as they
    write."""
    method = make_inplace(op, name)

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, Tensor):
                _assert_no_overlap(self, arg)
        return method(self, *args, **kwargs)
    return checked


def scatter(input, dim, index, src=None, *, value=None):
    """A copy of ``input`` with ``src`` (a tensor, or a number) written along ``dim`` at ``index``."""
    return _scatter(input, dim, index, value if src is None else src, add=False)


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added along ``dim`` at ``index`` (repeated positions add up)."""
    return _scatter(input, dim, index, src, add=True)


class IndexSelectBackward0(Node):
    """out = x at positions ``index`` along dim;  dx = zeros with grad added back there"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ index_select(x)/∂x: the gradient added back at the chosen positions"

    def backward(self, ops, grad):
        return (ops.embed(grad, self._input_meta[0][0], self.index),)


def index_select(input, dim, index):
    """The entries of ``input`` at positions ``index`` (a 1-D integer tensor) along ``dim``."""
    a = input._data
    idx = index._data if isinstance(index, Tensor) else np.asanyarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return view(index_select(view(input, 1), 0, idx), idx.shape)
    n = a.shape[d]
    idx = idx.reshape(-1).astype(np.int64)
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        if a.ndim == 2 and d == 1:      # PyTorch's CPU kernel for the columns of a matrix words it so
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(idx[bad][0])} axis_dim={n}")
        raise IndexError("index out of range in self")
    where = (slice(None),) * d + (idx,)
    out = wrap(np.asanyarray(a[where], order="C"))      # contiguous, as PyTorch's (NumPy's take leaves it strided)
    if wants_grad(input):
        record(IndexSelectBackward0, (input,), out, index=where)
    return out


def take_along_dim(input, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``input`` (over the flattened input when dim is None)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    a, idx = input._data, indices._data
    d = _wrap_dim(dim, a.ndim)
    shape_a, shape_i = list(a.shape), list(idx.shape)
    shape_a[d] = shape_i[d] = 1
    common = list(infer_size(shape_a, shape_i))
    target_a, target_i = list(common), list(common)
    target_a[d], target_i[d] = a.shape[d], idx.shape[d]
    return gather(expand(input, tuple(target_a)), d, expand(indices, tuple(target_i)))



# --- masks -----------------------------------------------------------------------------------------------

class MaskedFillBackward0(Node):
    """out = x with a number where mask;  dx = grad where not mask"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient where the mask is False"

    def backward(self, ops, grad):
        return (ops.mask(~self.mask, grad),)


class MaskedFillBackward1(Node):
    """out = x with the 0-d tensor v where mask;  dx = grad where not mask;  dv = Σ grad where mask"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂x: the gradient where the mask is False;  ∂/∂v: its sum where True"

    def backward(self, ops, grad):
        (x_node, _), (v_node, _) = self.next_functions
        return (ops.mask(~self.mask, grad) if x_node is not None else None,
                ops.sum(ops.mask(self.mask, grad)) if v_node is not None else None)


def _bool_mask(mask, name):
    m = mask._data if isinstance(mask, Tensor) else np.asanyarray(mask)
    if m.dtype != np.bool_:
        kind = {"f": "float", "i": "long", "u": "unsigned char"}.get(m.dtype.kind, str(m.dtype))
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {kind}")
    return m


def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) where ``mask`` (broadcast) is True."""
    a = input._data
    m = _bool_mask(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        fill = value._data.astype(a.dtype)
    else:
        fill = np.asanyarray(value).astype(a.dtype)
    infer_size(m.shape, a.shape)
    out = wrap(np.asanyarray(np.where(m, fill, a), order="C"))     # C order, as PyTorch's clone
    if wants_grad(input, value):
        if isinstance(value, Tensor):
            record(MaskedFillBackward1, (input, value), out, mask=m.copy())
        else:
            record(MaskedFillBackward0, (input,), out, mask=m.copy())
    return out


class MaskedSelectBackward0(Node):
    """out = the elements of x where mask (a 1-D copy);  dx = zeros with grad put back at those places"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ masked_select(x)/∂x: the gradient put back where the mask is True"

    def backward(self, ops, grad):
        return (ops.embed(grad, self.mask.shape, (self.mask,)),)


def masked_select(input, mask):
    """The elements of ``input`` (broadcast with ``mask``) where ``mask`` is True, as a 1-D tensor."""
    a = input._data
    m = mask._data if isinstance(mask, Tensor) else np.asanyarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if is_meta(a) or is_meta(m):
        raise no_meta_kernel("masked_select")
    shape = infer_size(a.shape, m.shape)
    m = np.broadcast_to(m, shape).copy()
    out = wrap(np.broadcast_to(a, shape)[m])
    if wants_grad(input):
        # x and the mask are saved as PyTorch saves them, so that changing either in place breaks backward
        saved = (input, mask) if isinstance(mask, Tensor) else (input,)
        record(MaskedSelectBackward0, (input,), out, saved, mask=m)
    return out


def nonzero(input, *, as_tuple=False):
    """Positions of the non-zero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    a = input._data
    if is_meta(a):
        raise NotImplementedError(NONZERO)      # (as many positions as non-zero values, which a meta tensor lacks)
    if as_tuple:
        return tuple(wrap(i.astype(np.int64)) for i in np.nonzero(a.reshape(a.shape or (1,))))
    return wrap(np.argwhere(a).astype(np.int64))


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero`` padded or cut to exactly ``size`` rows (a shape known in advance, for compilers), the
    missing rows filled with ``fill_value``."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size}")
    found = np.argwhere(input._data).astype(np.int64)[:size]
    out = np.full((size, input._data.ndim), fill_value, np.int64)
    out[:len(found)] = found
    return wrap(out)


def argwhere(input):
    """The indices of the nonzero elements, one row per element: shape ``(count, input.dim())``, int64."""
    return nonzero(input)


# --- unravel_index ------------------------------------------------------------------------------------------

def unravel_index(indices, shape):
    """The coordinates, in a tensor of ``shape``, of each flat (C-order) position in ``indices``: a tuple of
    int64 tensors, one per dim. Positions wrap around as Python's ``//`` and ``%`` make them."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{indices.dtype._name}")
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for size in shape:
        if not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
    shape = tuple(shape)
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides = np.array([math.prod(shape[i + 1:]) for i in range(len(shape))], dtype=np.int64)
    flat = indices._data.astype(np.int64)[..., None]
    coordinates = np.floor_divide(flat, strides) % np.array(shape, dtype=np.int64)
    return wrap(coordinates).unbind(-1)


# --- take ---------------------------------------------------------------------------------------------------

class TakeBackward0(Node):
    """out = x.flatten()[index];  dx = zeros with grad added back at those flat positions (repeats add up)"""
    complex_ok = True
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
        record(TakeBackward0, (input,), out, (input,), index=flat)     # saved as PyTorch saves it (versions)
    return out
