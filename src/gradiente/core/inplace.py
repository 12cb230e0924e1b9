"""In-place operations (``add_``, ``x += 1``, ``x[i] = v``, ...), all through one mechanism, and what they
do to views.

An in-place op computes the out-of-place result, writes its values into the tensor's own memory (so
views and arrays from ``from_numpy`` see the change), bumps the version counter shared with its views,
and, when recorded, makes the result's backward node the tensor's ``grad_fn``. When recording, the op
reads a copy of the old values: the node may need them (``x.mul_(y)`` needs the old ``x`` for ``dy``).

A view (``h[0]``, ``h.t()``, ``h.diagonal()``, ...) shares its base's memory, so changing the view in place
changes the base, and the graph must say so. As in PyTorch, the change is recorded on the base: its
``grad_fn`` becomes ``CopySlices`` ("the base with the view's region replaced by the op's result"), and the
``grad_fn`` of the view, and of every other live view of that base, becomes ``AsStridedBackward0`` over the
new base. Changing the base itself likewise regenerates its views' ``grad_fn``. Both nodes find the region
from the arrays' memory layout (PyTorch's ``as_strided`` reading of a view), so one mechanism serves every
kind of view, and a view op only has to say that it made one (``track_view``).
"""
import math
import re
import weakref

import numpy as np

from . import diagnostics, forward_grad, grad_mode
from .creation import is_dense
from .dtype import scalar_name
from .engine import run_rule
from .layouts import storage_root
from .meta import MetaArray
from .node import Node
from .tensor import InferenceVersion, Tensor
from .wrapping import wraps

__all__ = ["apply_inplace", "make_inplace", "track_view"]

_state = grad_mode.state
_forward = forward_grad.state
_diagnostics = diagnostics.state
_ref = weakref.ref
_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_OF_LEAF_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}

# How a view was made (PyTorch's CreationMeta), kept as ``view._view_meta``; only DEFAULT views may be
# changed in place while recording.
DEFAULT, NO_GRAD, MULTI_OUTPUT, INFERENCE_MODE = "default", "no_grad", "multi_output", "inference_mode"
IN_CUSTOM_FUNCTION = "in_custom_function"
_BLOCK_ADVICE = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                 "by moving both the view and the inplace either both inside the {} block (if you don't want the "
                 "inplace to be tracked) or both outside (if you want the inplace to be tracked).")
_ADVICE = {
    NO_GRAD: _BLOCK_ADVICE.format("no_grad"),
    INFERENCE_MODE: _BLOCK_ADVICE.format("inference_mode"),
    MULTI_OUTPUT: " This view is the output of a function that returns multiple views. Such functions do not allow "
                  "the output views to be modified inplace. You should replace the inplace operation by an "
                  "out-of-place one.",
    IN_CUSTOM_FUNCTION: " This view was created inside a custom Function (or because an input was returned as-is) "
                        "and the autograd logic to handle view+inplace would override the custom backward "
                        "associated with the custom Function, leading to incorrect gradients. This behavior is "
                        "forbidden. You can fix this by cloning the output of the custom Function.",
}


# --- views: how they are made and what they remember ----------------------------------------------------

def track_view(out, input, node_cls, multi_output=False):
    """Make ``out`` (an array view of ``input``'s memory, already wrapped) a view of ``input``: the same version
    counter and base, how it was made, and, in grad mode, a place in its base's list of views, so that an
    in-place change of the base or of another view can regenerate its ``grad_fn``. Returns whether the view op
    may be recorded: not for a view of an inference tensor, which, as in PyTorch, is no view to autograd, only an
    inference tensor on the same memory."""
    box = out._version_box = input._version_box
    if box.__class__ is InferenceVersion:
        return False
    enabled = _state.enabled
    meta = MULTI_OUTPUT if multi_output else DEFAULT if enabled else INFERENCE_MODE if _state.inference else NO_GRAD
    base = input._base
    if base is None or "_view_meta" not in input.__dict__:
        base = input                            # ``input`` is no view (``detach()`` results have a _base, too)
    else:
        if enabled and _raw_grad_fn(input).__class__ is Error:
            raise RuntimeError(_raw_grad_fn(input).message)   # a stale view: PyTorch raises as it reads its grad_fn
        if meta is DEFAULT:
            meta = input.__dict__["_view_meta"]     # a view of a view keeps how the first one was made
            if meta is not DEFAULT and enabled:
                out._view_op = node_cls             # PyTorch names it in the error, having recorded it
    attrs = out.__dict__
    attrs["_base"] = base
    attrs["_view_meta"] = meta
    if not enabled and input._requires_grad:
        # As in PyTorch, a view made under no_grad (or in inference mode) of a tensor that requires grad requires
        # grad too, though it is a leaf through which no gradient flows.
        out._requires_grad = True
        attrs["_no_edge"] = True
    if enabled:
        # (a leaf's too: it cannot change in place while recording, but it can through a detached alias)
        views = base.__dict__.get("_views")
        if views is None:
            base._views = [_ref(out)]
        else:
            views.append(_ref(out))
            if len(views) >= 64 and not len(views) & (len(views) - 1):
                views[:] = [r for r in views if r() is not None]    # at each power of two, forget dead views
    return True


def mark_custom_function_view(tensor, input=None):
    """A custom Function's output that is a view (or ``input`` returned as-is, which ``tensor`` now aliases): as in
    PyTorch, it may not be changed in place while recording, since the view+inplace logic would bypass the
    Function's own backward."""
    if input is not None:
        if input._version_box.__class__ is InferenceVersion:
            return                                  # an inference tensor has no views
        tensor.__dict__["_base"] = input._base if _view_meta(input) is not None else input
    elif _view_meta(tensor) is None:
        return
    tensor.__dict__["_view_meta"] = IN_CUSTOM_FUNCTION


def view_base(tensor):
    """The tensor whose memory ``tensor`` views: its base if it is a view, else itself."""
    return tensor._base if _view_meta(tensor) is not None else tensor


def _view_meta(tensor):
    """How ``tensor`` was made as a view, or None if it is not one."""
    return tensor.__dict__.get("_view_meta") if tensor._base is not None else None


def needs_grad(tensor):
    """Whether PyTorch counts ``tensor`` as requiring grad when it is changed in place: it does, or it is a view
    of a tensor that does (in PyTorch such a view requires grad even when made under no_grad)."""
    return tensor._requires_grad or (tensor._base is not None and tensor._base._requires_grad
                                     and _view_meta(tensor) is not None)


def _op_name(name):
    """The name of a view op as PyTorch's view errors write it: ``UnbindBackward0`` -> ``Unbind``."""
    return re.sub(r"Backward\d*$", "", name)


def _view_error(view, meta, indirect=False):
    """PyTorch's message for a view made under no_grad or in inference mode, or by an op with several views as
    outputs, that is
    changed in place (or, ``indirect``, used after its base or another view was)."""
    what = "its base or another view of its base has been" if indirect else "is being"
    node = _raw_grad_fn(view)
    if node.__class__ is Error:
        node = node.origin                      # the view's own op, before it went stale
    name = _op_name(node.name()) if node is not None else None
    if name is None and view._base._requires_grad and "_view_op" in view.__dict__:
        name = _op_name(view._view_op.__name__)
    if meta in (NO_GRAD, INFERENCE_MODE) or name is None:
        prefix = (f"Output {view._output_nr} of {name} is a view of a view which was created in" if name
                  else "A view was created in")
        if meta == INFERENCE_MODE:
            message = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            message = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        message = f"Output {view._output_nr} of {name} is a view and {what} modified inplace."
    return message + _ADVICE[meta]


def check_inplace(tensor, others_require_grad=False):
    """The errors PyTorch raises before an in-place change of ``tensor`` that autograd cannot follow; returns
    whether grad mode is on. ``others_require_grad``: another operand of the op requires grad."""
    if not _state.enabled:
        return False
    meta = _view_meta(tensor)
    if meta is None:
        if tensor._requires_grad and tensor.grad_fn is None:
            raise RuntimeError(_LEAF_ERROR)
    elif others_require_grad or needs_grad(tensor):
        if meta != DEFAULT:
            raise RuntimeError(_view_error(tensor, meta))
        if tensor._base._requires_grad and tensor._base.grad_fn is None:
            raise RuntimeError(_VIEW_OF_LEAF_ERROR)
    return True


# --- the mechanism ----------------------------------------------------------------------------------------

def apply_inplace(tensor, compute, inputs=()):
    """Replace ``tensor``'s values by ``compute(old)`` (a function returning a new tensor) in place. ``inputs``:
    the other tensors the op reads, which may not partly overlap ``tensor`` (PyTorch's TensorIterator check)."""
    forward = _forward.on
    before = forward_grad.tangent(tensor) if forward else None
    checked = check_inplace(tensor)
    if inputs:
        refuse_partial_overlap(tensor, inputs)
    if not checked:
        with grad_mode.no_grad():
            result = compute(tensor)
        _write(tensor, result._data)
        untracked_change(tensor)
        if forward:
            forward_grad.inplace_tangent(tensor, result, before)
        return tensor
    old = Tensor._make(_copy_keeping_strides(tensor._data), tensor._requires_grad)
    old.grad_fn, old._output_nr, old._accumulator = tensor.grad_fn, tensor._output_nr, tensor._accumulator
    if before is not None:
        forward_grad.set_tangent(old, before)
    result = compute(old)
    recording = result._requires_grad and result is not old
    view = _view_meta(tensor) is not None
    if recording and view and not tensor._requires_grad:
        check_inplace(tensor, others_require_grad=True)
    _write(tensor, result._data)
    if not recording:
        untracked_change(tensor)
    else:
        if view:
            _rebase(tensor, result.grad_fn)
        else:
            set_history(tensor, result.grad_fn, result._output_nr)
            tensor._accumulator = None
            _regenerate_views(tensor)
            _regenerate_views_of_detached_source(tensor)
        _adopt_saved_output(tensor, result)
        if _diagnostics.sites:      # learner or anomaly mode: name the op of the write just remembered
            diagnostics.name_last_write(tensor, result.grad_fn)
    if forward:
        forward_grad.inplace_tangent(tensor, result, before)
    return tensor


def _copy_keeping_strides(a):
    """A copy of ``a`` laid out in memory as ``a`` is (a chunk's rows as far apart as in its matrix): an in-place
    op computes its new values from this copy, and PyTorch's kernels split their work along memory's runs, so the
    copy's layout must be the tensor's for the values to round as PyTorch's (``rules.in_vector_blocks``)."""
    if a.flags.c_contiguous or a.ndim < 2 or min(a.strides) <= 0:
        return a.copy()
    extent = sum((n - 1) * stride for n, stride in zip(a.shape, a.strides)) + a.itemsize
    copy = np.ndarray(a.shape, a.dtype, buffer=np.empty(extent, np.uint8), strides=a.strides)
    copy[...] = a
    return copy


def _regenerate_views_of_detached_source(alias):
    """After a recorded in-place change of a detached alias (``v.detach().lerp_(w, 0.5)`` with ``w`` requiring
    grad), or of a view of one (``v.detach().select(0, 0).add_(w)``, seed 100714): the memory is also the tensor
    it was detached from, whose views (PyTorch's shared version counter) now read through AsStridedBackward0, as
    after a change autograd does not record (seed 80407)."""
    ref = alias.__dict__.get("_alias_of")
    source = ref() if ref is not None else None
    if source is not None and source is not alias:
        untracked_change(source)


def _rebase(view, fn):
    """Record the in-place change of ``view`` (made by ``fn``, the op's node) on its base, as PyTorch does:
    the base's new ``grad_fn`` is CopySlices, which runs ``fn`` on the region's gradient. ``fn``'s first edge
    (to the view's old history) is replaced by the base's old history; its other edges are kept."""
    base = view._base
    base_meta = (base._data.shape, base._data.dtype) if base._requires_grad else None
    input_meta = fn._input_meta or (None,) * len(fn.next_functions)
    node = CopySlices((base._grad_edge(),) + tuple(fn.next_functions[1:]), (base_meta,) + tuple(input_meta[1:]))
    node.save(fn)
    node.view_meta = input_meta[0]
    node.arrays = (view._data, base._data)
    set_history(base, node)
    _regenerate_views(base)
    _regenerate_views_of_detached_source(base)


def set_history(tensor, node, output_nr=0):
    """``tensor`` is now output ``output_nr`` of ``node`` (after an in-place change). A gradient it retains
    follows it, as in PyTorch: ``retain_grad`` then keeps the gradient of the new values."""
    if tensor._retains_grad:
        old = tensor.grad_fn
        if old is not None and old._retain_hooks:
            old._retain_hooks.pop(tensor._output_nr, None)
        tensor._retains_grad = False
        tensor.grad_fn, tensor._output_nr, tensor._requires_grad = node, output_nr, True
        tensor.retain_grad()
    else:
        tensor.grad_fn, tensor._output_nr, tensor._requires_grad = node, output_nr, True


def untracked_change(tensor):
    """After an in-place change autograd did not record (under no_grad, or through a tensor no gradient flows
    to, such as a detached alias): the views of that memory still read the new values, so, as in PyTorch,
    each live view that requires grad now reads through AsStridedBackward0 over its base's history (and a
    view that may not follow in-place changes raises when used)."""
    base = tensor
    while True:     # up to the memory's tracked base: through views, and detached aliases (and views of those)
        if base._base is not None and base._base is not base and not base.__dict__.get("_views"):
            base = base._base
            continue
        alias_of = base.__dict__.get("_alias_of")       # a weak reference: see Tensor.detach
        if alias_of is None or base._requires_grad:
            break
        base = alias_of()
        if base is None:
            return                                      # the tensor it was detached from is gone, with its views
    if base._requires_grad and base.__dict__.get("_views"):
        _regenerate_views(base)


def _regenerate_views(base):
    """After ``base``'s history changed: each live view of it gets a ``grad_fn`` over the new history
    (AsStridedBackward0), or, for a view that may not follow an in-place change, a node that raises."""
    views = base.__dict__.get("_views")
    if not views:
        return
    live = [r for r in views if r() is not None]
    views[:] = live
    edges, meta = (base._grad_edge(),), ((base._data.shape, base._data.dtype),)     # a leaf's: AccumulateGrad
    for ref in live:
        view = ref()
        if _raw_grad_fn(view).__class__ is Error:
            continue                            # already stale, with the message naming its first op
        if view.__dict__["_view_meta"] == DEFAULT:
            strided = AsStridedBackward0(edges, meta)
            strided.arrays = (view._data, base._data)
            set_history(view, strided)
        else:
            error = Error()
            error.message = _view_error(view, view.__dict__["_view_meta"], indirect=True)
            error.origin = view.grad_fn
            view.grad_fn, view._requires_grad = error, True
            if view.__class__ is Tensor:
                view.__class__ = StaleView


# --- where a view lies in its base ------------------------------------------------------------------------

def _addresses(array):
    """The byte address of each element of ``array``."""
    out = np.full(array.shape, array.__array_interface__["data"][0], dtype=np.int64)
    for d, (n, stride) in enumerate(zip(array.shape, array.strides)):
        out += (np.arange(n, dtype=np.int64) * stride).reshape((n,) + (1,) * (array.ndim - d - 1))
    return out


def _positions(view, base):
    """The flat (C-order) position in the array ``base`` of each element of ``view``, an array on its memory:
    what ``as_strided`` reads."""
    if base.flags.c_contiguous:                     # memory order is C order: an address is a position
        base_start = base.__array_interface__["data"][0]
        if view.flags.c_contiguous:                 # a run of consecutive elements (a row, say)
            first = (view.__array_interface__["data"][0] - base_start) // base.itemsize
            return np.arange(first, first + view.size).reshape(view.shape)
        return (_addresses(view) - base_start) // base.itemsize
    addresses = _addresses(view)
    memory = _addresses(base).reshape(-1)
    order = np.argsort(memory, kind="stable")
    ordered = memory[order]
    at = np.minimum(np.searchsorted(ordered, addresses), max(ordered.size - 1, 0))
    if addresses.size and not np.array_equal(ordered[at], addresses):
        raise RuntimeError("a view's elements no longer lie in its base's memory (was the base's .data replaced?)")
    return order[at] if addresses.size else addresses - addresses


def _as_reals(array):
    """A complex array as the real array on its memory (a last dim of 2: real and imaginary parts); a real
    array as it is."""
    return array[..., None].view(array.real.dtype) if array.dtype.kind == "c" else array


def _to_reals(ops, x):
    """A complex gradient as its real and imaginary parts side by side (a last dim of 2); a real one as it is."""
    if ops.raw(x).dtype.kind != "c":
        return x
    return ops.stack([ops.real(x), ops.imag(x)], -1)


def _from_reals(ops, x, complex_like):
    """The inverse of ``_to_reals`` where the gradient is to be complex (``complex_like``'s dtype is)."""
    if complex_like.kind != "c":
        return x
    return ops.getitem(x, (Ellipsis, 0)) + ops.getitem(x, (Ellipsis, 1)) * 1j


class _Strided(Node):
    """A node that knows a view's region of its base (``arrays``: the view's array and the base's, read for
    their memory layout only), computing the positions when backward first needs them. A view of another
    dtype than its base (``view_as_real`` of a complex base, ``view_as_complex`` of a real one) is placed in
    terms of real numbers: both arrays read as reals, and complex gradients as pairs of them (``cross``)."""
    __slots__ = ()
    arrays: tuple       # (the view's array, the base's array)

    @property
    def cross(self):
        view, base = self.arrays
        return view.dtype != base.dtype

    @property
    def positions(self):
        positions = self.__dict__.get("_positions")
        if positions is None:
            view, base = self.arrays
            if view.dtype != base.dtype:
                view, base = _as_reals(view), _as_reals(base)
            positions = self.__dict__["_positions"] = _positions(view, base)
        return positions


class AsStridedBackward0(_Strided):
    """out = the base's elements at a view's memory positions (a view's history after an in-place change);
    dbase = zeros with grad added at those positions"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ view/∂base: the gradient placed back at the view's positions, zeros elsewhere"

    def backward(self, ops, grad):
        shape = self._input_meta[0][0]
        if ops.raw(grad).size == 0 and not self.cross:
            # an empty view reads nothing: PyTorch's as_strided_backward returns fresh zeros, off the graph even
            # under create_graph (seed 42296: the gradient's requires_grad)
            return (ops.zeros(shape, grad),)
        if self.cross:
            base = _as_reals(self.arrays[1])
            placed = ops.embed(_to_reals(ops, grad), (base.size,), (self.positions,))
            return (_from_reals(ops, ops.reshape(placed, base.shape), self.arrays[1].dtype),)
        return (ops.reshape(ops.embed(grad, (math.prod(shape),), (self.positions,)), shape),)

    def jvp(self, ops, x_t):
        view, base = self.arrays
        positions = self.positions
        if positions.size == 0 or positions.max() < base.size:
            return ops.reshape(ops.getitem(ops.reshape(x_t, (-1,)), (positions,)), view.shape)
        # The view reads storage beyond its input (as_strided allows it). The tangent's storage is read the same
        # way: as in PyTorch, a dual tensor's tangent is laid out as its primal (forward_ad.make_dual).
        itemsize = view.itemsize
        offset = (view.__array_interface__["data"][0] - storage_root(base).__array_interface__["data"][0]) // itemsize
        stride = tuple(s // itemsize for s in view.strides)
        if ops.recording:
            return x_t.as_strided(view.shape, stride, offset)
        storage = storage_root(x_t)
        return np.ndarray(view.shape, x_t.dtype, buffer=storage, offset=offset * x_t.itemsize,
                          strides=tuple(s * x_t.itemsize for s in stride)).copy()


class CopySlices(_Strided):
    """out = base with the view's region replaced by fn(view);  dbase = grad with the region replaced by fn's
    gradient for the view;  fn's other inputs get fn's gradients of grad[region]"""
    complex_ok = True           # fn's rule runs as the engine runs it, complex step included
    __slots__ = ()
    formula = "∂/∂base: the gradient outside the view, and the in-place op's gradient inside it"
    view_meta: "tuple | None"       # (shape, dtype) of the view, to which fn's gradient is brought

    def name(self):
        return "torch::autograd::CopySlices"          # PyTorch's C++ name, as its messages show it

    def backward(self, ops, grad):
        fn, = self.saved(ops)
        base = self.arrays[1]
        if any(st == 0 and n > 1 for n, st in zip(base.shape, base.strides)):
            # PyTorch first copies grad into a tensor laid out as the base: an expanded base has no such layout
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        positions = self.positions
        cross = self.cross
        base_grad = _to_reals(ops, grad) if cross else grad
        region = ops.getitem(ops.reshape(base_grad, (-1,)), (positions,))
        if cross:
            region = _from_reals(ops, region, self.arrays[0].dtype)
        results = run_rule(fn, [region], ops)    # with the complex step, as the engine runs fn
        if results.__class__ is not tuple:
            results = (results,)
        d_view, d_base = results[0], None
        if d_view is not None and self.next_functions[0][0] is not None:
            if self.view_meta is not None:
                shape, dtype = self.view_meta
                if tuple(d_view.shape) != shape or (d_view._data.dtype if ops.recording else d_view.dtype) != dtype:
                    d_view = ops.fix_meta(d_view, shape, dtype)
            if cross:
                base = self.arrays[1]
                d_reals = ops.put(base_grad, positions, _to_reals(ops, d_view))
                d_base = _from_reals(ops, ops.reshape(d_reals, _as_reals(base).shape), base.dtype)
            else:
                d_base = ops.put(grad, positions, d_view)
        return (d_base,) + tuple(results[1:])


class Error(Node):
    """The history of a view that cannot follow an in-place change of its base (as PyTorch's ``Error`` node):
    running it raises ``message``. ``origin``: the view's node before it went stale."""
    __slots__ = ()
    formula = "no derivative: raises"
    stale = True
    message: str
    origin: "Node | None"

    def backward(self, ops, grad):
        raise RuntimeError(self.message)


#: a tensor's grad_fn as stored, without StaleView's check
_raw_grad_fn = Tensor.__dict__["grad_fn"].__get__


class StaleView(Tensor):
    """A view made by an op with several views as outputs (split, unbind ...) after its base, or another view of
    it, changed in place: its history is an ``Error`` node, and, as in PyTorch, reading ``grad_fn`` (or
    ``is_leaf``) raises that node's message; anything else reads as on any tensor. Only such a view takes this
    class (in place of Tensor), so ordinary tensors read ``grad_fn`` at no cost."""
    __slots__ = ()

    @property
    def grad_fn(self):
        node = _raw_grad_fn(self)
        if node.__class__ is Error:
            raise RuntimeError(node.message)
        return node

    @grad_fn.setter
    def grad_fn(self, node):
        Tensor.__dict__["grad_fn"].__set__(self, node)


def _adopt_saved_output(tensor, result):
    """A node that saved its output (``exp_`` keeps exp(x)) now saves ``tensor``, which holds those values:
    the same memory and version counter, so a later in-place change of ``tensor`` is caught at backward,
    as in PyTorch, instead of the node silently keeping an outdated copy."""
    from .node import _SavedOutput
    for item in result.grad_fn._saved or ():
        if type(item) is _SavedOutput and item.version_box is result._version_box:
            item.array, item.version_box, item.version = tensor._data, tensor._version_box, tensor._version_box[0]


def writeable_alias(array):
    """``array`` as a writeable array on the same memory, or None if it must stay read-only. An expanded tensor's
    array is read-only because its elements share memory, but a part of it in which each element has memory of
    its own may be written, as in PyTorch (``expanded[0] = 0`` writes the one element). Memory that is read-only
    itself stays so."""
    if any(st == 0 and n > 1 for n, st in zip(array.shape, array.strides)):
        return None
    root = storage_root(array)
    if not root.flags.writeable:
        return None
    offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(array.shape, array.dtype, buffer=root, offset=offset, strides=array.strides)


def _write(tensor, values):
    target = tensor._data
    if values.dtype != target.dtype and _KIND_ORDER[values.dtype.kind] > _KIND_ORDER[target.dtype.kind]:
        raise RuntimeError(f"result type {scalar_name(values.dtype)} can't be cast to the desired output type "
                           f"{scalar_name(target.dtype)}")
    if values.shape != target.shape:
        try:
            shape = np.broadcast_shapes(values.shape, target.shape)
        except ValueError:
            shape = None
        if shape != target.shape:
            raise RuntimeError(f"output with shape [{', '.join(map(str, target.shape))}] doesn't match the broadcast "
                               f"shape [{', '.join(map(str, shape or values.shape))}]")
    # (a meta tensor takes any values and keeps none: NumPy's copyto hands the write to core/meta.py, which drops it)
    if not target.flags.writeable and type(target) is not MetaArray:
        target = writeable_alias(target)
        if target is None:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
    np.copyto(target, values, casting="unsafe")
    tensor._version_box[0] += 1
    if _diagnostics.sites:          # learner or anomaly mode: where each saved value may have been changed
        diagnostics.note_write(tensor)


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                    "single memory location. Please clone() the tensor before performing the operation.")


def refuse_partial_overlap(tensor, inputs):
    """PyTorch's checks before an in-place op writes ``tensor``: no element of it may share memory with another
    (a zero stride), and no input may overlap it only in part. An input on the very same bytes with the same
    strides is a full overlap, which is allowed; PyTorch cannot tell for memory that is not dense, and lets it be."""
    a = tensor._data
    if a.size == 0 or type(a) is MetaArray:     # a meta tensor's one shared zero is never written
        return
    if any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    for other in inputs:
        b = other._data
        if other is tensor or b.size == 0 or storage_root(a) is not storage_root(b):
            continue
        if not (is_dense(a) and is_dense(b)):
            continue
        a_start, b_start = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
        a_end, b_end = a_start + a.nbytes, b_start + b.nbytes
        if (a_start, a_end) == (b_start, b_end) and a.strides == b.strides:
            continue
        if a_start < b_end and b_start < a_end:
            raise RuntimeError(_PARTIAL_OVERLAP)


#: fills read their 0-d value as a number before writing (PyTorch's ``value.item()``): no overlap to refuse
_FILLS = frozenset({"index_fill_", "masked_fill_", "fill_", "fill_diagonal_"})


def make_inplace(fn, name, check_arguments=None):
    """``x.name_(...)``: the in-place form of the out-of-place op ``fn``. ``check_arguments(*args, **kwargs)``, where
    given, refuses bad arguments first, in the method's words, as PyTorch's argument parser does before anything
    (the leaf check included)."""
    reads_numbers = name in _FILLS

    @wraps(fn)
    def method(self, *args, **kwargs):
        if check_arguments is not None:
            check_arguments(*args, **kwargs)
        inputs = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)
                  and not (reads_numbers and a._data.ndim == 0)]
        return apply_inplace(self, lambda old: fn(old, *args, **kwargs), inputs)
    method.__name__ = method.__qualname__ = name
    return method
