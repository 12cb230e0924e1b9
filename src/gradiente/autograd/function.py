"""``autograd.Function``: user-defined operations with their own backward, as in PyTorch.

The context ``ctx`` a Function receives *is* its backward node (as in PyTorch), so
``ctx.save_for_backward`` uses the same saved-value mechanism, version checks included, as built-in ops.
A user's ``backward`` always sees Tensors; it runs recorded only under ``create_graph=True``.

What the user's ``backward`` receives: one gradient per output of ``forward``, None for an output that is
not a Tensor; an output that got no gradient gets zeros of its shape and dtype (``ctx.set_materialize_grads``
turns that off; a non-differentiable output keeps None if ``ctx._materialize_non_diff_grads`` is False).

Reentrant backward. A backward that itself calls ``backward`` or ``autograd.grad`` nests one engine walk in
another on the Python stack. Past a depth PyTorch goes on in a worker thread; here, once the stack is deeper
than half the recursion limit, the user's backward runs on a fresh thread with its own stack (and grad
mode), and the calling thread waits for it, so any nesting depth finishes without a RecursionError.
"""
import functools
import inspect
import sys
import warnings
from typing import Any, Callable, Optional

import numpy as np

from ..core import dtype as dt
from ..core import engine, forward_grad, grad_mode, rules
from ..core.inplace import _rebase, mark_custom_function_view, view_base
from ..core.node import _FREED, Node, SavedTensor
from ..core.record import record
from ..core.tensor import Tensor

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
           "NestedIOFunction"]


class FunctionCtx:
    """The methods a Function's ``ctx`` offers (mixed into every Function's backward node)."""

    # Node's saved-value mechanism, which the node this is mixed into provides.
    save: Callable[..., None]
    saved: Callable[..., Any]
    _saved: Any

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.save(*tensors)
        self.__dict__["_count_saved"] = len(tensors)

    def save_for_forward(self, *tensors):
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                 "non-tensors as attributes on ctx.")
        self.__dict__["saved_for_forward"] = tensors

    @property
    def saved_tensors(self):
        if self.__dict__.get("_in_jvp"):        # in ``jvp``, what ``save_for_forward`` kept
            return tuple(self.__dict__.get("saved_for_forward", ()))
        return tuple(self.saved(rules.tensor_ops))

    @property
    def _raw_saved_tensors(self):
        """PyTorch's handles on what ``save_for_backward`` kept, one ``SavedTensor`` each (``None`` included), on
        which pack/unpack hooks can be registered after the fact."""
        if self._saved is None:
            raise RuntimeError(_FREED)
        return tuple(SavedTensor._of(self, i) for i in range(self.__dict__.get("_count_saved", 0)))

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def mark_dirty(self, *tensors):
        self.__dict__["_dirty"] = {id(t) for t in tensors}

    def mark_non_differentiable(self, *tensors):
        self.__dict__["_non_differentiable"] = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        """With False, ``backward`` receives None (not zeros) for outputs that got no gradient."""
        self.__dict__["_user_materialize"] = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of a user Function: named ``<ClassName>Backward``; its rule is the user's ``backward``."""

    formula = "user-defined backward"
    _forward_cls: "type[Function]"      # set on each Function's own node class (see _FunctionMeta)
    # The engine hands this node None for an output that got no gradient; ``_materialized`` decides, as
    # PyTorch does for custom Functions, which of them become zeros.
    _materialize_grads = False

    # a Python class in PyTorch too, so Python's own repr, module path and all:
    # ``<torch.autograd.function.MyFnBackward object at 0x...>`` (the built-in nodes print ``<MulBackward0 ...>``)
    __repr__ = object.__repr__

    def _user_fn(self):
        fn = self._forward_cls
        if fn.backward is not Function.backward and fn.vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                               "You should only implement one of them.")
        return fn.vjp if fn.vjp is not Function.vjp else fn.backward

    def apply(self, *grads):
        """``grad_fn.apply(*grads)``: the user's backward, called directly, as in PyTorch."""
        return self._user_fn()(self, *grads)

    __call__ = apply

    def backward(self, ops, *grads):
        user_backward = self._user_fn()
        if not ops.recording:
            grads = tuple(Tensor._make(g) if g is not None else None for g in grads)
        grads = self._materialized(grads)
        recording = ops.recording
        result = _run_reentrant_safe(lambda: _call_backward(user_backward, self, grads, recording))
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = self.__dict__["_n_inputs"]
        if len(result) != n_inputs:
            if len(result) > n_inputs and all(r is None for r in result[n_inputs:]):
                result = result[:n_inputs]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients "
                                   f"(expected {n_inputs}, got {len(result)})")
        out = self._edge_gradients(result, ops)
        if not ops.recording:
            # The engine must know which gradients user code can still reach: the Tensors this backward was
            # handed or returned that something other than these two names holds once they are dropped.
            watched = engine.watch(grads) + engine.watch(r for r in result if isinstance(r, Tensor))
            del grads, result
            self.__dict__["_held_by_user"] = engine.still_held(watched)
        return out

    def _materialized(self, grads):
        """Zeros for the Tensor outputs that got no gradient (None stays for non-tensor outputs, and for all
        when the user turned materializing off)."""
        outputs = self.__dict__.get("_outputs_info")
        if outputs is None or not self.__dict__.get("_user_materialize", True) or all(g is not None for g in grads):
            return grads
        keep_non_diff = self.__dict__.get("_materialize_non_diff_grads", True)
        filled = []
        for g, info in zip(grads, outputs):
            if g is None and info is not None and (keep_non_diff or info[2]):
                g = Tensor._make(np.zeros(info[0], dtype=info[1]))
            filled.append(g)
        return tuple(filled)

    def _edge_gradients(self, result, ops):
        """One gradient (or None) per input edge, from the user's ``backward``'s result, checked."""
        tensor_positions = self.__dict__["_tensor_positions"]
        out: list[Any] = []
        for pos, (edge, _) in zip(tensor_positions, self.next_functions):
            g = result[pos]
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if g is None or edge is None:
                out.append(None)
            else:
                out.append(g if ops.recording else g._data)
        for pos, g in enumerate(result):
            if pos not in tensor_positions and g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return tuple(out)


def _call_backward(user_backward, ctx, grads, recording):
    with grad_mode.set_grad_enabled(recording):
        return user_backward(ctx, *grads)


# The stack a reentrant backward continues on, once the calling thread's is deep (see the module's docstring).
_THREAD_STACK_BYTES = 64 * 1024 * 1024


def _run_reentrant_safe(call):
    """``call()`` here, or, when the Python stack is already deeper than half the recursion limit (a backward
    nested in backwards), on a fresh thread with an empty stack of its own, waiting for its result."""
    try:
        sys._getframe(sys.getrecursionlimit() // 2)
    except ValueError:
        return call()
    import threading  # (here: only deep nesting starts a thread, and import gradiente need not load threading)

    outcome: dict = {}
    enabled, inference = grad_mode.state.enabled, grad_mode.state.inference

    def run():
        grad_mode.state.enabled, grad_mode.state.inference = enabled, inference      # the mode is per thread
        try:
            outcome["value"] = call()
        except BaseException as error:      # handed to the waiting thread, which raises it
            outcome["error"] = error

    previous = threading.stack_size(_THREAD_STACK_BYTES)
    try:
        worker = threading.Thread(target=run, name="gradiente-reentrant-backward")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class _FunctionMeta(type):
    """Gives every Function subclass its own node class ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call with ``apply``.

    ``forward`` runs on Tensors without recording; ``backward`` returns one gradient per forward argument
    (None for non-tensors and inputs that need none). The ``setup_context`` style of PyTorch 2 is
    supported too: ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``, where ``inputs`` holds
    every argument of ``forward``, defaults included.
    """

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself. Instantiating an autograd function "
                      "will raise an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. "
                           "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        custom_setup = cls.setup_context is not Function.setup_context
        if custom_setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensor_positions]
        if any(t._levels for t in tensors):      # called under vmap with batched arguments
            from ..func._function_vmap import apply_batched
            return apply_batched(cls, args, kwargs)
        recording = grad_mode.state.enabled and any(t._requires_grad for t in tensors)
        edges = tuple(t._grad_edge() if recording else (None, 0) for t in tensors)
        meta = tuple((t._data.shape, t._data.dtype) if t._requires_grad else None for t in tensors)
        ctx = cls._backward_cls(edges, meta)
        ctx.__dict__.update(_n_inputs=len(args), _tensor_positions=tensor_positions)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        dual = forward_grad.state.on and forward_grad.carries_tangent(tensors)
        # As in PyTorch, forward runs with neither mode recording: its derivatives are the user's backward and jvp.
        fw_state = forward_grad.state
        fw_enabled, fw_state.enabled = fw_state.enabled, False
        fw_state.refresh()
        try:
            with grad_mode.no_grad():
                if custom_setup:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            fw_state.enabled = fw_enabled
            fw_state.refresh()
        result = _wrap_outputs(ctx, tensors, output, recording)
        if dual:
            _attach_tangents(cls, ctx, args, result)
        return result


_DIRTY_VIEW = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more "
    "than one Tensor. This is not supported by the current autograd engine. You should either make sure the input "
    "is not a view (using .clone() for example) or make your Function only return one Tensor (potentially splitting "
    "it into two Functions: one doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change.")
_LEAF_IN_PLACE = "a leaf Variable that requires grad has been used in an in-place operation."


def _wrap_outputs(ctx, inputs, output, recording):
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dirty = ctx.__dict__.get("_dirty", set())
    non_diff = ctx.__dict__.get("_non_differentiable", set())
    input_ids = {id(t) for t in inputs}
    if any(d not in input_ids for d in dirty):
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                      "mutated should be passed to ctx.mark_dirty().", UserWarning, stacklevel=3)
    output_ids = {id(o) for o in outputs}
    if any(d not in output_ids for d in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    if recording and sum(isinstance(o, Tensor) for o in outputs) > 1 and any(
            id(o) in dirty and o._base is not None for o in outputs if isinstance(o, Tensor)):
        raise RuntimeError(_DIRTY_VIEW)
    wrapped = []
    rebased: list = []
    info: list[Optional[tuple]] = []        # (shape, dtype, differentiable) of each output, None for non-tensors
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wrapped.append(out)
            info.append(None)
            continue
        is_dirty = id(out) in dirty
        if is_dirty and recording and out._requires_grad and out.grad_fn is None:
            raise RuntimeError(_LEAF_IN_PLACE)
        if id(out) in input_ids and not is_dirty:
            alias = Tensor._make(out._data)          # an input returned as is: a new tensor on the same memory
            alias._version_box = out._version_box
            mark_custom_function_view(alias, out)
            out = alias
        elif not is_dirty:
            mark_custom_function_view(out)
        if is_dirty:
            out._version_box[0] += 1
        differentiable = recording and id(out) not in non_diff and dt.kind(out._data.dtype) in "fc"
        if differentiable and is_dirty and out._base is not None and "_view_meta" in out.__dict__:
            rebased.append(out)     # a view changed in place: its base's history is rebased below, as for ops
        elif differentiable:
            out.grad_fn, out._output_nr, out._requires_grad = ctx, nr, True
        elif not is_dirty and (recording or "_no_edge" not in out.__dict__):
            out._requires_grad = False          # (a view made under no_grad of an input that requires grad does)
        wrapped.append(out)
        info.append((out._data.shape, out._data.dtype, differentiable))
    if recording:
        ctx.__dict__["_outputs_info"] = tuple(info)
        ctx._output_meta = tuple((m[0], m[1]) if m is not None else ((), np.float32) for m in info)
        # saved outputs must not keep the output tensors alive through the node (a cycle)
        if ctx._saved:
            ctx.save(*ctx._saved)
        for view in rebased:
            # As PyTorch's CopySlices: the base's new history runs this node on the region's gradient, its first
            # input standing for the view (PyTorch's assumption too: the Function may return one tensor only).
            _rebase(view, ctx)
    return wrapped[0] if single else tuple(wrapped)


def _attach_tangents(cls, ctx, args, result):
    """Forward mode: the user's ``jvp`` gets one tangent per argument of ``forward`` (None for non-tensors and
    tensors without one) and returns one per output; each differentiable Tensor output gets its tangent."""
    materialize = ctx.__dict__.get("_user_materialize", True)
    tangents = tuple(_tangent_or_zeros(a, materialize) if isinstance(a, Tensor) else None for a in args)
    versions = tuple(t._version_box[0] if t is not None else None for t in tangents)
    ctx.__dict__["_in_jvp"] = True
    try:
        out_tangents = cls.jvp(ctx, *tangents)
    finally:
        ctx.__dict__["_in_jvp"] = False
    single = not isinstance(result, tuple)
    outputs = (result,) if single else result
    if not isinstance(out_tangents, tuple):
        out_tangents = (out_tangents,)
    if len(out_tangents) != len(outputs):
        raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of forward gradients "
                           f"(expected {len(outputs)}, got {len(out_tangents)})")
    non_diff = ctx.__dict__.get("_non_differentiable", set())
    dirty = ctx.__dict__.get("_dirty", set())
    for i, (out, tangent) in enumerate(zip(outputs, out_tangents)):
        if not isinstance(out, Tensor) or tangent is None:
            continue
        if id(out) in non_diff or dt.kind(out._data.dtype) not in "fc":
            raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding forward "
                               "output is not a differentiable Tensor.You should return None at that position "
                               "instead.")
        if id(out) in dirty:
            _check_inplace_tangent(out, tangent, args, tangents, versions)
        else:
            _check_view_tangent(out, tangent, args, tangents)
        if tangent.shape != out.shape:
            tangent = tangent.expand(out.shape)
        forward_grad.set_tangent(out, tangent)


_NOT_INPLACE = ("An inplace custom Function is not modifying the forward mode gradients inplace. If the forward is "
                "modifying an input inplace, then the jvp function must modify the corresponding gradient inplace.")


def _check_inplace_tangent(out, tangent, args, tangents, versions):
    """An input changed in place (``mark_dirty``) must have its tangent changed in place too, as in PyTorch."""
    for a, a_t, version in zip(args, tangents, versions):
        if a is out and a_t is not None and (tangent is not a_t or a_t._version_box[0] == version):
            raise RuntimeError(_NOT_INPLACE)


def _check_view_tangent(out, tangent, args, tangents):
    """An output that is a view of an input (or the input returned as-is) must get a tangent that is the same view
    of the input's tangent, as PyTorch checks: a view, and of the same base."""
    if view_base(out) is out:
        return
    for a, a_t in zip(args, tangents):
        if not isinstance(a, Tensor) or a_t is None or view_base(a) is not view_base(out):
            continue
        if view_base(tangent) is tangent:
            raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp is "
                               "not returning a view.")
        if view_base(tangent) is not view_base(a_t):
            if view_base(a) is a or a.__dict__.get("_dual_view"):
                raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                                   "given grad input.")
            raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                               "same base as the given grad input.")
        return


def _tangent_or_zeros(t, materialize):
    tangent = forward_grad.tangent(t)
    if tangent is None and materialize and dt.kind(t._data.dtype) in "fc":
        return Tensor._make(np.zeros_like(t._data))
    return tangent


_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class Error(Node):
    """PyTorch's ``DelayedError``, named ``Error`` as there: the node that a ``once_differentiable`` backward's
    results get under ``create_graph``, so that differentiating them again fails with a clear message."""

    formula = "no derivative: " + _TWICE

    def name(self):
        return "torch::autograd::Error"

    def backward(self, ops, *grads):
        raise RuntimeError(_TWICE)


def once_differentiable(fn):
    """Marks a backward that cannot itself be differentiated: it runs without recording, and where its
    gradients would have had to be differentiable (grad mode on, an incoming gradient requiring grad), they
    are given an ``Error`` node that refuses a second differentiation."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.state.enabled or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        stand_ins = tuple(o.detach().requires_grad_(True)
                          if isinstance(o, Tensor) and dt.kind(o._data.dtype) in "fc" else None for o in outs)
        results = tuple(Tensor._make(o._data) if s is not None else o for o, s in zip(outs, stand_ins))
        record(Error, stand_ins, tuple(r if s is not None else None for r, s in zip(results, stand_ins)))
        return results[0] if single else results
    return wrapper


class InplaceFunction(Function):
    """Kept for compatibility, as in PyTorch; use ``Function``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
