"""Forward-mode AD in the core: the dual level, the tangents tensors carry at it, and how a recorded op gives
its outputs their tangents.

Design. A tangent lives on its tensor, in ``_fw_grads`` (``{level: tangent Tensor}``), an instance attribute set
only on tensors that have one: an ordinary tensor reads the class default, None, so nothing else pays for it.
Forward mode reuses the graph machinery rather than running a second engine: an op on an input that carries a
tangent is recorded (``record.wants_grad`` asks ``carries_tangent`` once a level is active), and ``record`` hands
the node to ``attach_tangents``, which runs the node's ``jvp`` at once, on the input tangents, and gives each
output its tangent. The node's ``backward`` and ``jvp`` read the same saved values, so each op states what it
saves once. When no input requires grad (or grad mode is off) the node serves the tangent only: the outputs keep
``requires_grad=False`` and ``grad_fn=None``, as in PyTorch.

The jvp computes on arrays (``numpy_ops``) unless its result must itself be differentiable (grad mode on and a
primal or a tangent requires grad: forward-over-reverse, reverse-over-forward), then on recorded Tensors
(``tensor_ops``). Forward mode is switched off while a jvp runs, so the rule's own ops see the primals without
their tangents (PyTorch's formulas read ``_fw_primal``), and a tangent never grows a tangent of its own.

Views and in-place changes follow PyTorch: a view op's jvp returns the view of its input's tangent (NumPy views
alias), a view made before its base had a tangent finds the matching view of the base's tangent when first
asked (``tangent``), and an in-place op writes its new tangent into the tensor's existing one
(``inplace_tangent``), so every view of that memory sees it.

Levels. PyTorch 2.13 allows one dual level at a time through ``forward_ad`` (nesting raises its error), and
``forward_ad`` keeps that refusal; ``torch.func`` needs nested levels (``jacfwd`` of ``jacfwd``, ``jvp`` inside
``jvp``), so ``enter_level(nested=True)`` opens one above the current. An op whose inputs carry tangents at
several levels gets a tangent at each, lowest level first; the rule for level L runs with only the levels below L
visible (``state.visible``), so the tangent it computes carries, at those levels, its own derivative (as
functorch's level stack does), and it reads the output tangents of lower levels that the earlier rules set. Levels
are entered and left in stack order. Views of a base that gets a tangent later, and in-place changes, are handled
at the top visible level only. Leaving a level deletes its tangents: each tensor that got one is remembered
(weakly) in the level's registry.
"""
import weakref

import numpy as np

from . import dtype as dt
from . import grad_mode, rules
from .backward import grad as _grad
from .engine import run_rule
from .layouts import storage_root
from .node import Node, _SavedOutput
from .tensor import Tensor

__all__ = ["state", "tangent", "carries_tangent", "has_tangent", "set_tangent", "attach_tangents", "inplace_tangent",
           "enter_level", "exit_level"]


class _State:
    """``level``: the innermost dual level (-1 for none); ``visible``: the highest level ops see now (``level``,
    or the one below the level whose rule is running); ``enabled``: PyTorch's ``_set_fwd_grad_enabled``; ``on``:
    a level is visible and enabled, the one flag ops read; ``tokens``: a new object per level, so a node's note of
    its outputs' tangents (``_fw_outputs``) from a level since left is recognised as stale."""

    def __init__(self):
        self.level = -1
        self.visible = -1
        self.enabled = True
        self.on = False
        self.tokens: list = []
        self.registries: list = []  # per level, weak references to the tensors that hold a tangent at it

    def refresh(self):
        self.on = self.visible >= 0 and self.enabled


state = _State()
_ref = weakref.ref

is_batched, _array = rules.is_batched, rules.array_of


# --- levels -------------------------------------------------------------------------------------------------

def enter_level(nested=False):
    """Open a new level above the current one and return its number; ``nested``: allowed while one is open
    (``torch.func``), which ``forward_ad`` refuses, as PyTorch 2.13 does."""
    if state.level >= 0 and not nested:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level += 1
    state.visible = state.level
    state.tokens.append(object())
    state.registries.append([])
    state.refresh()
    return state.level


def exit_level(level):
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != state.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    for ref in state.registries.pop():
        t = ref()
        if t is not None:
            grads = t.__dict__.get("_fw_grads")
            if grads is not None:
                grads.pop(level, None)
                if not grads:
                    del t.__dict__["_fw_grads"]
    state.tokens.pop()
    state.level -= 1
    state.visible = state.level
    state.refresh()


# --- the tangent of a tensor --------------------------------------------------------------------------------

def tangent(t, level=None):
    """``t``'s tangent at ``level`` (the highest visible one by default), or None. A view that has none of its own while
    its base has one (the base got it in place, after the view was made) takes the view of the base's."""
    if level is None:
        level = state.visible
    grads = t._fw_grads
    if grads is not None:
        return grads.get(level)
    base = t._base
    if base is None or base._fw_grads is None or "_view_meta" not in t.__dict__:
        return None
    base_tangent = base._fw_grads.get(level)
    if base_tangent is None:
        return None
    if is_batched(base_tangent):
        result = _batched_region_of(base_tangent, base, t)
        if result is None:
            return None
    else:
        view = _region_of(base_tangent._data, base._data, t._data)
        if view is None:
            return None
        result = Tensor._make(view)
    set_tangent(t, result, level)
    return result


def carries_tangent(inputs):
    """Whether some tensor among ``inputs`` has a tangent at a visible level (asked only while one is)."""
    for t in inputs:
        if isinstance(t, Tensor) and (t._fw_grads is not None or t._base is not None) and has_tangent(t):
            return True
    return False


def has_tangent(t):
    """Whether ``t`` has a tangent at some visible level."""
    visible = state.visible
    grads = t._fw_grads
    if grads is not None:
        return any(level <= visible for level in grads)
    return any(tangent(t, level) is not None for level in range(visible + 1))


def set_tangent(t, value, level=None):
    if level is None:
        level = state.visible
    grads = t.__dict__.get("_fw_grads")
    if grads is None or level not in grads:
        if grads is None:
            t.__dict__["_fw_grads"] = {level: value}
        else:
            grads[level] = value
        registry = state.registries[level]
        registry.append(_ref(t))
        if len(registry) >= 1024 and not len(registry) & (len(registry) - 1):
            registry[:] = [r for r in registry if r() is not None]     # at each power of two, forget the dead
    else:
        grads[level] = value


def _region_of(base_tangent, base, view):
    """The view of ``base_tangent`` (laid out as ``base``) that ``view`` is of ``base``: the same byte offset and
    strides. None where the layouts differ (a view of another dtype, or a base with a layout of its own)."""
    if (view.dtype != base.dtype or base_tangent.dtype != base.dtype or base_tangent.strides != base.strides
            or not base.flags.c_contiguous):
        return None
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    flat = base_tangent.reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset // base.itemsize:], view.shape, view.strides)


def _batched_region_of(base_tangent, base, view):
    """``_region_of`` for a batched tangent: the same region of each example, as a view of the physical tangent
    (so that the view's tangent is a view of the base's, as in PyTorch)."""
    values = rules.batched_ops.physical(base_tangent)
    nb = values.dim() - base.dim()
    a, v, p = base._data, view._data, values._data
    if v.dtype != a.dtype or p.dtype != a.dtype or p.strides[nb:] != a.strides or not a.flags.c_contiguous:
        return None
    offset = (v.__array_interface__["data"][0] - a.__array_interface__["data"][0]) // a.itemsize
    strides = tuple(s // a.itemsize for s in v.strides)
    region = values.as_strided(tuple(values.shape[:nb]) + v.shape, values.stride()[:nb] + strides,
                               values.storage_offset() + offset)
    return rules.batched_ops.with_levels_of(region, base_tangent)


# --- a recorded op's tangents -------------------------------------------------------------------------------

def _fit(ops, value, shape, np_dtype):
    """A tangent brought to a tensor's shape and dtype (a broadcast tangent becomes its own memory; a complex
    one for a real tensor, its real part)."""
    if ops.recording:
        if tuple(value.shape) != tuple(shape):
            value = value.expand(shape).clone()
        if _array(value).dtype != np_dtype:
            value = ops.fix_meta(value, tuple(value.shape), np_dtype)
        return value
    if value.__class__ is not np.ndarray:
        value = np.asanyarray(value)
    if value.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        value = value.real          # a real tensor's tangent is the real part (PyTorch's handle_r_to_c)
    if value.shape != shape:
        return np.broadcast_to(value, shape).astype(np_dtype)
    return value if value.dtype == np_dtype else value.astype(np_dtype)


def attach_tangents(node, inputs, outputs):
    """Run ``node.jvp`` on the tangents of ``inputs`` and give each floating output its tangent, at each visible
    level, lowest first (called by ``record`` while a level is visible)."""
    outs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    if not any(o is not None and dt.kind(o._data.dtype) in "fc" for o in outs):
        return                                  # integer and bool results carry no tangent
    top = state.visible
    for level in range(top + 1):
        tangents = [tangent(t, level) if isinstance(t, Tensor) else None for t in inputs]
        if all(t is None for t in tangents):
            continue
        state.visible = level - 1               # the rule's own ops see the levels below, not this one
        state.refresh()
        try:
            _attach_at(level, node, inputs, tangents, outs)
        finally:
            state.visible = top
            state.refresh()


def _attach_at(level, node, inputs, tangents, outs):
    """The tangents at ``level`` of ``node``'s outputs, from its inputs' ``tangents`` at that level."""
    differentiable = grad_mode.state.enabled and (
        any(isinstance(t, Tensor) and t._requires_grad for t in inputs)
        or any(t is not None and t._requires_grad for t in tangents))
    if state.on and not differentiable:     # a lower level differentiates the tangent
        differentiable = carries_tangent(inputs) or carries_tangent(tangents)
    batched = any(t is not None and is_batched(t) for t in tangents)
    ops = rules.batched_ops if batched else rules.tensor_ops if differentiable else rules.numpy_ops
    assert ops is not None, "gradiente.ops hands TensorOps down when it is imported"
    meta = list(node._input_meta)
    args: list = []
    for i, (t, value) in enumerate(zip(inputs, tangents)):
        if meta[i] is None and isinstance(t, Tensor):
            meta[i] = (t._data.shape, t._data.dtype)     # a rule may read the shape of an input without a tangent
        if value is None:
            args.append(None)
            continue
        args.append(_fit(ops, value if ops.recording else value._data, *meta[i]))
    node._input_meta = tuple(meta)
    if batched:
        # batched tangents compute with recorded ops: recorded only where the tangent must be differentiable
        with grad_mode.set_grad_enabled(grad_mode.state.enabled and differentiable):
            results = _batched_jvp(node, args, outs, differentiable)
    elif type(node).jvp is Node.jvp and node._forward_cls is None:
        results = _jvp_by_transposing_the_vjp(node, ops, args, outs)
    else:
        results = node.jvp(ops, *args)
    if results.__class__ is not tuple:
        results = (results,)
    inputs_memory = [_array(a) if ops.recording else a for a in args if a is not None]
    given = {}
    for nr, (out, value) in enumerate(zip(outs, results)):
        if out is None or value is None or dt.kind(out._data.dtype) not in "fc":
            continue
        value = _fit(ops, value, out._data.shape, out._data.dtype)
        array = _array(value) if ops.recording else value
        if "_view_meta" not in out.__dict__ and any(np.may_share_memory(array, m) for m in inputs_memory):
            value = value.clone() if ops.recording else array.copy()   # only a view's tangent aliases its input's
        elif "_view_meta" in out.__dict__ and not ops.recording and len(args) == 1 and args[0] is not None \
                and np.may_share_memory(out._data, inputs[0]._data) \
                and not any(np.may_share_memory(array, m) for m in inputs_memory):
            # a view whose rule computed its tangent afresh (diagonal, as_strided): the same view of the input's
            # tangent instead, so that an in-place change of the view or of its base reaches the other's tangent
            region = _region_of(args[0], inputs[0]._data, out._data)
            if region is not None and region.shape == array.shape:
                value = region
        result = value if ops.recording else Tensor._make(value)
        set_tangent(out, result, level)
        given[nr] = result
    saved = node._saved
    if given and saved and any(item.__class__ is _SavedOutput for item in saved):
        notes = node.__dict__.setdefault("_fw_outputs", {})
        notes[level] = (state.tokens[level], given)    # for the rule's saved output under create_graph


def _batched_jvp(node, tangents, outs, differentiable):
    """``node``'s tangents for batched ``tangents``: its ``jvp`` on them through vmap's dispatch, or, for a node
    whose forward rule is its transposed VJP (which differentiates once more, what batched values cannot), that
    rule once per example."""
    if type(node).jvp is not Node.jvp or node._forward_cls is not None:
        return rules.batched_ops.apply_jvp(node, tangents)
    inner = rules.namespace(differentiable)

    def one_example(*ts):
        found = _jvp_by_transposing_the_vjp(node, inner, [t if t is None or inner.recording else t._data for t in ts],
                                            outs)
        return tuple(r if r is None or inner.recording else Tensor._make(r) for r in found)
    return rules.batched_ops.per_example(one_example, tangents)


def _jvp_by_transposing_the_vjp(node, ops, tangents, outs):
    """The forward-mode rule of a node that states none, read off its backward rule: the VJP u -> Jᵀu is linear in
    u, so Jt = d/du <Jᵀu, t>. The rule runs recorded on a ``u`` that requires grad, and one more backward
    pass gives the derivative in u. Two passes instead of one formula, but every node with a backward rule that
    works under ``create_graph`` gets a correct forward rule; hand-written ``jvp`` rules are the fast path.
    A rule that cannot be recorded raises PyTorch's forward-AD error for the op."""
    tensor_ops = rules.namespace(True)
    complex_case = any(o is not None and o._data.dtype.kind == "c" for o in outs) or any(
        m is not None and m[1].kind == "c" for m in node._input_meta)
    # u's value does not matter (the rule is linear in it); ones keep a rule's shortcut for a zero gradient
    # (svdvals' in LinalgSvdBackward0) from dropping the terms in u
    us = [Tensor._make(np.ones(o._data.shape, o._data.dtype)).requires_grad_()
          if o is not None and dt.kind(o._data.dtype) in "fc" else None for o in outs]
    # A rule computes only the gradients its edges ask for: ask for those of the inputs that carry a tangent
    # (a node made for forward mode alone has no edges).
    edges = node.next_functions
    node.next_functions = tuple(edge if edge[0] is not None or t is None else (_ASKING, 0)
                                for edge, t in zip(edges, tangents))
    try:
        with grad_mode.set_grad_enabled(True):
            # complex: the rule as the engine runs it (PyTorch's convention, or refused), and Jt from the real
            # inner product Re<J*u, t> = Re<u, Jt>, whose gradient in u is Jt
            grads = run_rule(node, us, tensor_ops) if complex_case else node.backward(tensor_ops, *us)
            if grads.__class__ is not tuple:
                grads = (grads,)
            total = None
            for g, t, meta in zip(grads, tangents, node._input_meta):
                if g is None or t is None:
                    continue
                g = tensor_ops.fix_meta(g, *meta)
                t = t if ops.recording else Tensor._make(t)
                term = (tensor_ops.real(tensor_ops.conj(g) * t) if complex_case else g * t).sum()
                total = term if total is None else total + term
            if total is None or not total._requires_grad:
                return (None,) * len(outs)              # no input with a tangent reaches an output
            wrt = [u for u in us if u is not None]
            found = iter(_grad(total, wrt, allow_unused=True, create_graph=ops.recording))
    except (RuntimeError, NotImplementedError) as error:       # e.g. a rule that computes on arrays only
        raise _unsupported(node) from error
    finally:
        node.next_functions = edges
    results = [next(found) if u is not None else None for u in us]
    return tuple(r if r is None or ops.recording else r._data for r in results)


_ASKING = Node()      # stands in for an input's node while a rule runs for forward mode


def _unsupported(node):
    """PyTorch's error for an op without a forward-mode rule."""
    try:
        Node.jvp(node, None)
    except NotImplementedError as error:
        return error
    raise AssertionError("Node.jvp raises for every node")


def saved_output_tangent(node, output_nr):
    """The tangent, at the highest visible level, of ``node``'s output ``output_nr``, as the node saved it (or
    None)."""
    notes = node.__dict__.get("_fw_outputs")
    level = state.visible
    note = notes.get(level) if notes is not None else None
    if note is None or note[0] is not state.tokens[level]:
        return None
    return note[1].get(output_nr)


def inplace_tangent(tensor, result, before):
    """After ``tensor`` took ``result``'s values in place: its tangent becomes ``result``'s, written into the tangent
    it had (``before``) so that its views see the change, or, if it had none, into the matching view of its base's
    tangent (made, zero, if the base had none), as PyTorch does. Where the new tangent is laid out as both the
    view and its base are, the base takes it as it is, and the view shares it (PyTorch's shortcut)."""
    level = state.visible
    new = tangent(result, level) if result is not None else None
    if new is None and before is None:
        return
    if before is None and tensor._base is not None and "_view_meta" in tensor.__dict__:
        base = tensor._base
        if tangent(base, level) is None:
            if new is not None and not new._requires_grad and _same_layout(new, base) and \
                    _same_layout(new, tensor):
                set_tangent(base, new, level)
                set_tangent(tensor, new, level)
                return
            set_tangent(base, _zeros_laid_out_as(base, new), level)
        before = tangent(tensor, level)         # the view of the base's tangent
    if before is None:
        assert new is not None
        set_tangent(tensor, new if tuple(new.shape) == tensor._data.shape else
                    Tensor._make(_fit(rules.numpy_ops, new._data, tensor._data.shape, tensor._data.dtype)), level)
        return
    if new is None:
        _array(before)[...] = 0
    elif new._requires_grad or before._requires_grad or (is_batched(new) and not is_batched(before)):
        set_tangent(tensor, new, level)         # a differentiable tangent: keep its history rather than copy
    else:
        source = rules.batched_ops.as_physical_of(new, before)._data if is_batched(before) else new._data
        np.copyto(_array(before), source, casting="unsafe")
        before._version_box[0] += 1


def _same_layout(value, tensor):
    """Whether the tangent ``value`` is laid out as ``tensor``: shape, strides, offset (and, unbatched, the size of
    the storage), PyTorch's ``has_same_meta``."""
    if tuple(value.shape) != tensor._data.shape or value.stride() != tensor.stride() or \
            value.storage_offset() != tensor.storage_offset():
        return False
    return is_batched(value) or storage_root(value._data).nbytes == storage_root(tensor._data).nbytes


def _zeros_laid_out_as(base, like):
    """A zero tangent for ``base``, batched as ``like`` is (PyTorch's ``_new_zeros_with_same_feature_meta``)."""
    if is_batched(like):
        values = rules.batched_ops.physical(like)
        nb = values.dim() - base.dim()
        zeros = np.zeros(tuple(values.shape[:nb]) + base._data.shape, base._data.dtype)
        return rules.batched_ops.with_levels_of(Tensor._make(zeros), like)
    return Tensor._make(np.zeros_like(base._data, order="C"))
