"""The recorded graph: backward nodes (``grad_fn``), their edges (``next_functions``), saved values and hooks.

Every differentiable operation that sees an input requiring grad creates one ``Node``. The node knows
the edges to the nodes of its inputs, the values its derivative rule needs (saved with the version of
the tensor they came from, so that a later in-place change is caught) and the shape and dtype of each
input, so that the engine can reduce a broadcast gradient back to the input's shape in one place.

A rule is a method ``backward(self, ops, grad)`` returning one gradient per input (``None`` for an input
that needs none). ``ops`` is the array namespace the rule computes with: NumPy arrays normally, or
gradiente Tensors under ``create_graph=True`` so that the backward pass is itself recorded. One rule
therefore serves both first- and higher-order derivatives (see ``rule_ops``).
"""
import itertools
import re
import weakref
from typing import Optional

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]

_sequence = itertools.count()
_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.id = next(RemovableHandle._ids)
        self._hooks = weakref.ref(hooks_dict) if hooks_dict is not None else None

    def remove(self):
        hooks = self._hooks() if self._hooks is not None else None
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that a weakref can point to (plain dicts cannot be weakly referenced)."""
    __slots__ = ("__weakref__",)


class _SavedOutput:
    """An output of the node itself, saved without a reference to the output tensor (which would make a
    cycle tensor -> node -> tensor). Under ``create_graph`` it is rebuilt as a tensor whose grad_fn is
    the node, so that derivatives of the rule flow back through the node."""

    __slots__ = ("array", "version_box", "version", "output_nr", "requires_grad")

    def __init__(self, tensor, output_nr):
        self.array = tensor._data
        self.version_box = tensor._version_box
        self.version = tensor._version_box[0]
        self.output_nr = output_nr
        self.requires_grad = tensor._requires_grad


class Node:
    """A backward function of the graph. ``next_functions`` is ``((node, input_nr), ...)``, one entry per
    differentiable input (``(None, 0)`` for an input that requires no grad)."""

    __slots__ = ("next_functions", "_seq", "_saved", "_saved_versions", "_input_meta", "__dict__", "__weakref__")

    #: one line, the derivative as a learner reads it; shown by the graph drawing and explanations
    formula = ""
    # Rarely set, so kept out of the hot path: class defaults, overridden per node when used.
    _output_meta = None         # (shape, dtype) of each output, for nodes with several outputs
    _hooked = False             # True once any hook or retain_grad involves this node
    _materialize_grads = True   # outputs that got no gradient are given zeros before the rule runs
    #: whether the rule is right for complex tensors under PyTorch's convention (the gradient is the conjugate
    #: Wirtinger derivative): true for rules that only move, sum or copy gradients, and for those written for it;
    #: a rule written for real numbers (grad * f'(x)) would give a silently wrong complex gradient, so the engine
    #: refuses to run it on a node that produced a complex result (see ``record``)
    complex_ok = False
    _pre_hooks = _hooks = _tensor_pre_hooks = _retain_hooks = None

    def __init__(self, next_functions=(), input_meta=None):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._saved = ()
        self._input_meta = input_meta

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def _sequence_nr(self):
        return self._seq

    # --- saved values ----------------------------------------------------------------------------------
    def save(self, *values):
        """Keep ``values`` for the rule. Tensors are kept with their version; an output of this node is kept
        as its array only (see ``_SavedOutput``); anything else (numbers, None) as it is."""
        checks = None                               # (position, version) of the tensors among them
        items: Optional[list] = None                # a copy, made only if an output of this node is saved
        for i, v in enumerate(values):
            cls = v.__class__
            if cls is float or cls is int or v is None:
                continue
            grad_fn = getattr(v, "grad_fn", _MISSING)
            if grad_fn is _MISSING:
                continue
            if checks is None:
                checks = []
            if grad_fn is self:
                if items is None:
                    items = list(values)
                items[i] = _SavedOutput(v, v._output_nr)
                checks.append((i, None))
            else:
                checks.append((i, v._version_box[0]))
        self._saved = values if items is None else tuple(items)
        self._saved_versions = checks or ()

    def saved(self, ops):
        """The saved values as the rule's ``ops`` wants them: arrays, or tensors under create_graph."""
        saved = self._saved
        if not saved:
            if saved is None:
                raise RuntimeError(_FREED)
            return []
        out = list(saved)
        raw = not ops.recording
        for i, version in self._saved_versions:
            item = saved[i]
            if version is not None:
                if item._version_box[0] != version:
                    raise RuntimeError(_modified_message(item, version))
                out[i] = item._data if raw else item
            else:
                if item.version_box[0] != item.version:
                    raise RuntimeError(_modified_message(None, item.version, item, self))
                out[i] = item.array if raw else ops.unpack_output(item, self)
        return out

    # --- the rule --------------------------------------------------------------------------------------
    def backward(self, ops, *grads):
        raise NotImplementedError(f"{self.name()} has no backward rule")

    def apply(self, *grads):
        """Run the rule on tensors, as PyTorch's ``node(grad)`` does; returns a tuple of tensors or None."""
        from .rules import tensor_ops
        result = self.backward(tensor_ops, *grads)
        return result if isinstance(result, tuple) else (result,)

    __call__ = apply

    # --- hooks -----------------------------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the rule; may return replacement grad_inputs."""
        if self._hooks is None:
            self._hooks = _HookDict()
        self._hooked = True
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the rule; may return replacement grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        self._hooked = True
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle


_MISSING = object()


def _modified_message(tensor, expected, saved_output=None, node=None):
    if tensor is not None:
        data, now = tensor._data, tensor._version_box[0]
        origin = ""
        if tensor.grad_fn is not None:
            origin = f", which is output {tensor._output_nr} of {tensor.grad_fn.name()},"
    else:
        data, now = saved_output.array, saved_output.version_box[0]
        # PyTorch names a node's own saved output by the forward op: "output 0 of Exp", not ExpBackward0
        forward_name = re.sub(r"Backward\d*$", "", node.name())
        origin = f", which is output {saved_output.output_nr} of {forward_name},"
    from .dtype import FROM_NUMPY
    kind = FROM_NUMPY[data.dtype]._legacy
    shape = ", ".join(str(s) for s in data.shape)
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[torch.{kind} [{shape}]]{origin} is at version {now}; expected version {expected} instead. "
            "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the gradient that reaches it into ``variable.grad``."""

    __slots__ = ("variable",)
    formula = "leaf.grad += grad"
    _hooked = True              # a leaf's own hooks live on its tensor: always look
    complex_ok = True

    def __init__(self, variable):
        # Created when the leaf is first used by a recorded op, so before every node that feeds it: the
        # engine's newest-first order therefore runs it after all its gradients have been summed.
        Node.__init__(self)
        self.variable = variable

    def backward(self, ops, grad):
        self.accumulate(ops, grad)
        return ()

    def accumulate(self, ops, grad, owned=False):
        """Add ``grad`` into the leaf's ``.grad``, then run its post-accumulate hooks. ``owned``: the engine
        vouches that nothing else can reach ``grad``'s memory, so the leaf may keep the array itself."""
        variable = self.variable
        ops.accumulate(variable, grad, owned)
        post_hooks = variable.__dict__.get("_post_hooks")
        if post_hooks:
            for hook in list(post_hooks.values()):
                hook(variable)
