"""``autograd.Function``: user-defined operations with their own backward, as in PyTorch.

The context ``ctx`` a Function receives *is* its backward node (as in PyTorch), so
``ctx.save_for_backward`` uses the same saved-value mechanism, version checks included, as built-in ops.
A user's ``backward`` always sees Tensors; it runs recorded only under ``create_graph=True``.
"""
from typing import Any, Callable, Optional

import numpy as np

from ..core import engine, grad_mode, rules
from ..core.node import Node
from ..core.tensor import Tensor

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """The methods a Function's ``ctx`` offers (mixed into every Function's backward node)."""

    # Node's saved-value mechanism, which the node this is mixed into provides.
    save: Callable[..., None]
    saved: Callable[..., Any]

    def save_for_backward(self, *tensors):
        self.save(*tensors)
        self.__dict__["_saved_count"] = len(tensors)

    @property
    def saved_tensors(self):
        return tuple(self.saved(rules.tensor_ops))

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors):
        self.__dict__["_dirty"] = {id(t) for t in tensors}

    def mark_non_differentiable(self, *tensors):
        self.__dict__["_non_differentiable"] = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        """With False, ``backward`` receives None (not zeros) for outputs that got no gradient."""
        self._materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of a user Function: named ``<ClassName>Backward``; its rule is the user's ``backward``."""

    formula = "user-defined backward"
    _forward_cls: "type[Function]"      # set on each Function's own node class (see _FunctionMeta)

    def backward(self, ops, *grads):
        fn = self._forward_cls
        if not ops.recording:
            grads = tuple(Tensor._make(g) if g is not None else None for g in grads)
        with grad_mode.set_grad_enabled(ops.recording):
            result = fn.backward(self, *grads)
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

    def _edge_gradients(self, result, ops):
        """One gradient (or None) per input edge, from the user's ``backward``'s result, checked."""
        tensor_positions = self.__dict__["_tensor_positions"]
        out: list[Any] = []
        for pos, (edge, _) in zip(tensor_positions, self.next_functions):
            g = result[pos]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {type(self).__name__} returned a gradient of type "
                                f"{type(g).__name__}; expected a Tensor or None")
            if g is None or edge is None:
                out.append(None)
            else:
                out.append(g if ops.recording else g._data)
        return tuple(out)


class _FunctionMeta(type):
    """Gives every Function subclass its own node class ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call with ``apply``.

    ``forward`` runs on Tensors without recording; ``backward`` returns one gradient per forward argument
    (None for non-tensors and inputs that need none). The ``setup_context`` style of PyTorch 2 is
    supported too: ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensor_positions]
        recording = grad_mode.state.enabled and any(t._requires_grad for t in tensors)
        edges = tuple(t._grad_edge() if recording else (None, 0) for t in tensors)
        meta = tuple((t._data.shape, t._data.dtype) if t._requires_grad else None for t in tensors)
        ctx = cls._backward_cls(edges, meta)
        ctx.__dict__.update(_n_inputs=len(args), _tensor_positions=tensor_positions)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad and recording for a in args)
        custom_setup = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if custom_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        return _wrap_outputs(ctx, tensors, output, recording)


def _wrap_outputs(ctx, inputs, output, recording):
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dirty = ctx.__dict__.get("_dirty", set())
    non_diff = ctx.__dict__.get("_non_differentiable", set())
    input_ids = {id(t) for t in inputs}
    wrapped = []
    meta: list[Optional[tuple]] = []            # (shape, dtype) of each output, None for non-tensors
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wrapped.append(out)
            meta.append(None)
            continue
        if id(out) in input_ids and id(out) not in dirty:
            alias = Tensor._make(out._data)          # an input returned as is: a new tensor on the same memory
            alias._version_box = out._version_box
            out = alias
        if id(out) in dirty:
            out._version_box[0] += 1
        if recording and id(out) not in non_diff and out._data.dtype.kind in "fc":
            out.grad_fn, out._output_nr, out._requires_grad = ctx, nr, True
        elif id(out) not in dirty and (recording or "_no_edge" not in out.__dict__):
            out._requires_grad = False          # (a view made under no_grad of an input that requires grad does)
        wrapped.append(out)
        meta.append((out._data.shape, out._data.dtype))
    if recording:
        ctx._output_meta = tuple(m if m is not None else ((), np.float32) for m in meta)
        # saved outputs must not keep the output tensors alive through the node (a cycle)
        if ctx._saved:
            ctx.save(*ctx._saved)
    return wrapped[0] if single else tuple(wrapped)


def once_differentiable(fn):
    """Marks a backward that cannot itself be differentiated; it runs without recording."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            return fn(ctx, *args)
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
