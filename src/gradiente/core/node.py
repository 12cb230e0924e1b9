"""The recorded graph: backward nodes (``grad_fn``), their edges (``next_functions``), saved values and hooks.

Every differentiable operation that sees an input requiring grad creates one ``Node``. The node knows
the edges to the nodes of its inputs, the values its derivative rule needs (saved with the version of
the tensor they came from, so that a later in-place change is caught) and the shape and dtype of each
input, so that the engine can reduce a broadcast gradient back to the input's shape in one place.

A node holds two rules, side by side, that read the same saved values:

* ``backward(self, ops, grad)``, the vector-Jacobian product (reverse mode): the gradient of the output in,
  one gradient per input out (``None`` for an input that needs none);
* ``jvp(self, ops, *tangents)``, the Jacobian-vector product (forward mode): one tangent per input in
  (``None`` for an input without one), the output's tangent out.

``ops`` is the array namespace a rule computes with: NumPy arrays normally, or gradiente Tensors under
``create_graph=True`` so that the rule's own work is recorded. One rule therefore serves both first- and
higher-order derivatives (see ``core.rules``).
"""
import itertools
import re
import weakref
from typing import Any, Optional

from . import anomaly, diagnostics, dtype, rules, threads
from .dtype import FROM_NUMPY

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "NOT_DIFFERENTIABLE_FORWARD", "tangent_sum",
           "self_adjoint_jvp", "SavedTensor", "saved_hooks"]

_sequence = itertools.count()
diagnostics.clock = _sequence      # cuts take their time from the graph's clock, so they can be ordered with nodes
_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
# PyTorch's words for an op whose forward-mode formula is not written yet (``op`` is the op's ATen name), and for
# an op it defines none for (``op`` as ``aten::heaviside``)
_NO_FORWARD_AD = (
    "Trying to use forward AD with {op} that does not support it because it has not been implemented yet.\n"
    "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
    "so that we can prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
)
NOT_DIFFERENTIABLE_FORWARD = "Trying to use forward AD with {op} that does not support it."


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


class _SavedHooks(threads.local):
    """The saved-tensor hooks of this thread (``autograd.graph.saved_tensors_hooks``): a stack of
    ``(pack, unpack)`` pairs, the innermost last, and the message to raise while they are disabled."""

    def __init__(self):
        self.stack: list = []
        self.disabled: Optional[str] = None


saved_hooks = _SavedHooks()


class _Packed:
    """A tensor a pack hook has turned into something else (``packed``): what ``unpack`` rebuilds it from,
    and the history the rebuilt tensor is given, that of the tensor saved (its ``grad_fn`` or, for a leaf,
    its AccumulateGrad; for an output of the node itself, the node, which is not kept here to avoid a
    cycle). With hooks no version is checked: the hooks decide what backward reads, as in PyTorch."""

    __slots__ = ("packed", "unpack", "history", "output_nr", "accumulator", "requires_grad", "is_output")

    def __init__(self, tensor, node, pack, unpack, grad_free=False):
        self.is_output = tensor.grad_fn is node and node is not None
        self.history = None if self.is_output else tensor.grad_fn
        self.output_nr = tensor._output_nr
        self.requires_grad = tensor._requires_grad
        self.accumulator = None
        if self.history is None and not self.is_output and self.requires_grad:
            self.accumulator = tensor._grad_edge()[0]
        self.unpack = unpack
        if grad_free:
            # hooks registered on a node's saved value after the fact get, as in PyTorch, the value without its
            # history (its memory and version counter): the history stays here, for the unpacked tensor
            from .tensor import Tensor
            alias = Tensor._make(tensor._data, False)
            alias._version_box = tensor._version_box
            tensor = alias
        version = tensor._version_box[0]
        from .grad_mode import state
        recording, state.enabled = state.enabled, False    # a pack hook records nothing, as in PyTorch
        try:
            self.packed = pack(tensor)
        finally:
            state.enabled = recording
        if tensor._version_box[0] != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open "
                "an issue if you need to perform in-place operations on the input to a pack hook.")

    def tensor(self, node):
        """The unpacked tensor, with the saved tensor's history (what a rule under create_graph reads)."""
        from .tensor import Tensor
        value = self.unpack(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(value).__name__}")
        t = Tensor._make(value._data, self.requires_grad)
        t._version_box = value._version_box
        if self.is_output:
            if self.requires_grad:
                t.grad_fn, t._output_nr = node, self.output_nr
        elif self.history is not None:
            t.grad_fn, t._output_nr = self.history, self.output_nr
        elif self.accumulator is not None:
            t._accumulator = weakref.ref(self.accumulator)
        return t


#: the saved operands PyTorch packs, and unpacks, before the node's others (``Node._pack_order``)
_PACKED_FIRST = frozenset({"other", "exponent", "mat2"})


def _pack_all(node, values, checks, pack, unpack, grad_free=False):
    """``values`` with each tensor among them (``checks``' positions) replaced by its ``_Packed`` form
    (``grad_free``: ``pack`` sees each without its history). Python numbers and None are not packed (PyTorch skips
    its wrapped numbers too)."""
    items = list(values)
    packed = []
    for i, _ in checks:
        item = items[i]
        if item.__class__ is _Packed:
            continue
        if item.__class__ is _SavedOutput:
            item = _output_tensor(item, node)
        items[i] = _Packed(item, node, pack, unpack, grad_free)
        packed.append(i)
    return tuple(items), packed


def _output_tensor(item, node):
    """A node's saved output as a tensor: its memory and version counter, the node as its grad_fn."""
    from .tensor import Tensor
    t = Tensor._make(item.array, item.requires_grad)
    t._version_box = item.version_box
    if item.requires_grad:
        t.grad_fn, t._output_nr = node, item.output_nr
    return t


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved value of a node, on which a pair of pack/unpack hooks can be
    registered after the fact (``register_hooks``). Made by the node only, as in PyTorch."""

    __slots__ = ("_node", "_index")
    _node: "Node"
    _index: int
    __module__ = "gradiente._C._autograd"      # where PyTorch's repr says it lives (``_C/_autograd.py`` has it)

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _of(cls, node, index):
        raw = object.__new__(cls)
        raw._node, raw._index = node, index
        return raw

    def register_hooks(self, *hooks):
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: Callable, arg1: "
                            "Callable) -> None")
        pack_hook, unpack_hook = hooks
        node = self._node
        saved = node._saved
        if saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of "
                "the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                "you need to backward through the graph a second time or if you need to access saved variables "
                "after calling backward.")
        item: Any = saved[self._index]
        if item is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if item.__class__ is _Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        node._pack_positions(((self._index, None),), pack_hook, unpack_hook, grad_free=True)


class Node:
    """A backward function of the graph. ``next_functions`` is ``((node, input_nr), ...)``, one entry per
    differentiable input (``(None, 0)`` for an input that requires no grad).

    A subclass states its derivative as two rules that read the same saved values (``self.saved(ops)``) and
    the same declared fields (class-level annotations: what ``record`` was given for the rule to read):

    ``backward(ops, grad)`` (VJP): the gradient of the output in; one gradient per input out, in the order
    of ``next_functions`` (``None`` where an input needs none). The engine sums each to its input's shape.

    ``jvp(ops, *tangents)`` (JVP): one tangent per input in, in the same order (``None`` for an input with
    no tangent; it is called only when some input has one); the output's tangent out (``None`` if zero), or
    a tuple of them for a node with several outputs. A result may be smaller than the output where
    broadcasting makes it the output (the tangent of ``x + y`` for ``y`` alone is ``y'``): the forward-mode
    engine broadcasts it to the output's shape and dtype in one place, as the backward engine reduces. The
    default raises PyTorch's error for an op with no forward-mode formula."""

    __slots__ = ("next_functions", "_seq", "_saved", "_versions_saved", "_input_meta", "__dict__", "__weakref__")

    #: one line, the derivative as a learner reads it; shown by the graph drawing and explanations
    #: a stale view's history (``inplace.Error``): recording an op on the view raises its message at once, as
    #: PyTorch raises when it reads the view's grad_fn, rather than at backward
    stale = False
    formula = ""
    #: the op's name in PyTorch's messages, where the node's name does not give it (see ``_aten_name``)
    aten_name = ""
    #: the ``autograd.Function`` whose backward this node runs (None for a built-in op's node); read by the
    #: engine on every node, so declared here rather than looked up with a default (``__getattr__`` below would
    #: run on every miss)
    _forward_cls: Any = None
    # Rarely set, so kept out of the hot path: class defaults, overridden per node when used.
    _output_meta = None         # (shape, dtype) of each output, for nodes with several outputs
    _packed: Optional[tuple] = None     # positions of saved values a saved-tensor pack hook has packed
    _packed_outputs: tuple = ()         # those of them that are outputs of the node (named even once freed)
    _hooked = False             # True once any hook or retain_grad involves this node
    _materialize_grads = True   # outputs that got no gradient are given zeros before the rule runs
    #: whether the rule is right for complex tensors under PyTorch's convention (the gradient is the conjugate
    #: Wirtinger derivative): true for rules that only move, sum or copy gradients, and for those written for it;
    #: a rule written for real numbers (grad * f'(x)) would give a silently wrong complex gradient, so the engine
    #: refuses to run it on a node that produced a complex result (see ``record``)
    complex_ok = False
    #: whether the rule is written as the plain transposed Jacobian, ``grad · f'(z)``, of a function that is
    #: holomorphic in every input (a product, a quotient, exp, matmul ...): for complex gradients the engine then
    #: runs it as ``conj(rule(conj(grad)))``, which is ``grad · conj(f'(z))``, PyTorch's convention, and a real
    #: input keeps the real part. Its ``jvp``, ``t · f'(z)``, is right for complex tangents as it stands.
    holomorphic = False
    _pre_hooks: Optional[dict] = None          # node pre-hooks: fn(grad_outputs), may replace them
    _hooks: Optional[dict] = None              # node post-hooks: fn(grad_inputs, grad_outputs)
    _tensor_pre_hooks: Optional[dict] = None   # output_nr -> the hooks of that output tensor (register_hook)
    _retain_hooks: Optional[dict] = None       # output_nr -> weakref of an output tensor that retains its grad

    def __init__(self, next_functions=(), input_meta=None):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._saved = ()
        self._input_meta = input_meta
        if diagnostics.state.sites:
            if anomaly.state.enabled:
                anomaly.remember(self)
            diagnostics.remember_site(self)

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
        # (position, version) of the tensors among them, kept in a tuple: a graph holds one per node, and a list
        # would stay tracked by the cyclic garbage collector for the graph's whole life. The pairs are shared, not
        # made per node (a tuple inside a tuple takes the collector two passes to untrack, a tuple of shared pairs
        # one), and so is the whole tuple of the commonest case, one tensor saved at version 0 or one output.
        checks: tuple = ()
        items: Optional[list] = None                # a copy, made only if an output of this node is saved
        for i, v in enumerate(values):
            cls = v.__class__
            if cls is float or cls is int or v is None:
                continue
            grad_fn = getattr(v, "grad_fn", _MISSING)
            if grad_fn is _MISSING:
                continue
            if grad_fn is self:
                if items is None:
                    items = list(values)
                items[i] = _SavedOutput(v, v._output_nr)
                if i < _SHARED_POSITIONS:
                    checks = checks + (_OUTPUT_CHECKS[i],) if checks else _ALONE_OUTPUT_CHECKS[i]
                else:
                    checks += (_shared_check((i, None)),)
            else:
                version = v._version_box[0]
                if version == 0 and i < _SHARED_POSITIONS:
                    checks = checks + (_UNCHANGED_CHECKS[i],) if checks else _ALONE_UNCHANGED_CHECKS[i]
                else:
                    checks += (_shared_check((i, version)),)
        self._saved = values if items is None else tuple(items)
        self._versions_saved = checks
        if saved_hooks.stack and checks:
            pack, unpack = saved_hooks.stack[-1]
            self._pack_positions(checks, pack, unpack)

    def _pack_positions(self, checks, pack, unpack, grad_free=False):
        """Replace the saved tensors at ``checks``' positions by what ``pack`` makes of them, in the order
        PyTorch packs them (and later unpacks them: ``_packed`` keeps that order)."""
        order = self._pack_order
        saved, packed = _pack_all(self, self._saved, sorted(checks, key=lambda c: order(c[0])), pack, unpack,
                                  grad_free)
        self._saved = saved
        self._versions_saved = tuple(c for c in self._versions_saved if c[0] not in packed)
        self._packed = tuple(sorted(set(self._packed or ()) | set(packed), key=order))
        self._packed_outputs = self._packed_outputs + tuple(i for i in packed if saved[i].is_output)

    def _pack_order(self, position):
        """Where the saved value at ``position`` comes in PyTorch's packing: the second operand (``other``,
        ``exponent``, ``mat2``) before ``self``, because PyTorch saves what the formula of ``self`` reads first
        (a pack hook that prints shows it: ``a * b`` packs ``b``, then ``a``; addmm's mat1 and mat2 keep
        their order)."""
        names = self._names_of_saved()
        first = position < len(names) and names[position] in _PACKED_FIRST and "self" in names
        return (not first, position)

    def check_saved(self):
        """Raise PyTorch's error if a saved tensor has changed in place since (or the values were freed). The
        engine calls it before every rule that saved something, because PyTorch unpacks all of a node's saved
        values before its formula runs: a changed value raises even where the rule needs no gradient from it."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED + diagnostics.learner_explanation("graph_freed"))
        for i, version in self._versions_saved:
            item: Any = saved[i]
            if version is not None:
                if item._version_box[0] != version:
                    raise RuntimeError(_modified_message(item, version, node=self))
            elif item.version_box[0] != item.version:
                raise RuntimeError(_modified_message(None, item.version, item, self))

    def saved(self, ops):
        """The saved values as the rule's ``ops`` wants them: arrays, or tensors under create_graph."""
        saved = self._saved
        if not saved:
            if saved is None:
                raise RuntimeError(_FREED + diagnostics.learner_explanation("graph_freed"))
            return []
        out = list(saved)
        raw = not ops.recording
        for i, version in self._versions_saved:
            item = saved[i]
            if version is not None:
                if item._version_box[0] != version:
                    raise RuntimeError(_modified_message(item, version, node=self))
                out[i] = item._data if raw else item
            else:
                if item.version_box[0] != item.version:
                    raise RuntimeError(_modified_message(None, item.version, item, self))
                out[i] = item.array if raw else ops.unpack_output(item, self)
        if self._packed is not None:
            for i in self._packed:
                t = saved[i].tensor(self)
                out[i] = t._data if raw else t
        return out

    def _tensor_saved_at(self, index):
        """Saved value ``index`` as ``grad_fn._saved_<name>`` shows it: a tensor input as the very object saved,
        an output of the node or an unpacked value as a new tensor with its history, a number as a 0-d tensor."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        item: Any = saved[index]
        if item is None:
            return None
        if item.__class__ is _Packed:
            return item.tensor(self)
        if item.__class__ is _SavedOutput:
            if item.version_box[0] != item.version:
                raise RuntimeError(_modified_message(None, item.version, item, self))
            return _output_tensor(item, self)
        for i, version in self._versions_saved:
            if i == index and item._version_box[0] != version:
                raise RuntimeError(_modified_message(item, version, node=self))
        if getattr(item, "_version_box", None) is None:
            import numpy as np

            from .tensor import Tensor
            return Tensor._make(np.asanyarray(item))
        return item

    def _names_of_saved(self):
        """PyTorch's name of each saved position: a row of ``_SAVED_NAMES``, else inputs ``self``, ``other``,
        ``other1``... in order and an output of the node ``result``."""
        row = _SAVED_NAMES.get(type(self).__name__)
        saved = self._saved
        if row is not None:
            return row if saved is None else row[:len(saved)]
        if saved is None:
            # freed: the tensors' positions are still known (numbers an op saved are not, and go unnamed)
            outputs = {i for i, version in self._versions_saved if version is None} | set(self._packed_outputs)
            positions = sorted({i for i, _ in self._versions_saved} | set(self._packed or ()))
            saved = [_SavedOutput if i in outputs else None for i in positions]
        names = []
        inputs = 0
        item: Any
        for item in saved:
            if item is _SavedOutput or item.__class__ is _SavedOutput or (item.__class__ is _Packed and item.is_output):
                names.append("result")
            else:
                names.append(("self", "other")[inputs] if inputs < 2 else f"other{inputs - 1}")
                inputs += 1
        return names

    def __dir__(self):
        """The attributes, with the ``_saved_<name>`` (and, for a tensor, ``_raw_saved_<name>``) that
        ``__getattr__`` resolves: what ``dir(grad_fn)`` lists in PyTorch, and what torchviz's ``show_saved``
        reads."""
        names = set(super().__dir__())
        if isinstance(self, AccumulateGrad) or type(self)._forward_cls is not None:
            return sorted(names)
        for key in self._names_of_saved():
            if key is not None:
                names.update((f"_saved_{key}", f"_raw_saved_{key}"))
        # of the node's other fields, those known to carry PyTorch's name (a node's private bookkeeping, such as
        # the strides of an operand it did not save, is no attribute of PyTorch's node)
        names.update(f"_saved_{_RENAMED[attr]}" for attr in self.__dict__ if attr in _RENAMED)
        names.update(f"_saved_{attr}" for attr in _SCALARS if self._scalar(attr) is not None)
        return sorted(names)

    def _scalar(self, attr):
        """A scalar of the op (``alpha``, ``beta``) that PyTorch's node always keeps: the node's own value, or
        its class's default (``x + y`` records no alpha: it is 1)."""
        return self.__dict__.get(attr, getattr(type(self), attr, None))

    def __getattr__(self, name):
        # PyTorch's ``_saved_<name>`` and ``_raw_saved_<name>``: which exist depends on what the op saved, so
        # they are resolved here rather than declared; every other missing name is an ordinary AttributeError.
        raw = name.startswith("_raw_saved_")
        if not (raw or name.startswith("_saved_")) or isinstance(self, AccumulateGrad) or \
                type(self)._forward_cls is not None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
        names = list(self._names_of_saved())
        if key in names:
            index = names.index(key)
            if self._saved is None:
                if raw:
                    return SavedTensor._of(self, index)
                raise RuntimeError(_FREED)
            return SavedTensor._of(self, index) if raw else self._tensor_saved_at(index)
        if not raw:
            for attr, value in self.__dict__.items():
                if not attr.startswith("_") and attr != "needs_input_grad" and _RENAMED.get(attr, attr) == key:
                    return tuple(int(v) for v in value) if attr == "shape" else value
            if key in _SCALARS and self._scalar(key) is not None:
                return self._scalar(key)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # --- the rules: backward (the VJP) and jvp (the forward-mode rule) ----------------------------------
    def backward(self, ops, *grads):
        raise NotImplementedError(f"{self.name()} has no backward rule")

    def jvp(self, ops, *tangents):
        raise NotImplementedError(_NO_FORWARD_AD.format(op=self.aten_name or _aten_name(self.name())))

    def apply(self, *grads):
        """Run the rule on tensors, as PyTorch's ``node(grad)`` does: one gradient per input (None where an input
        needs none), a tuple of them, or the one gradient itself for a node with one input."""
        expected = 1 if self._output_meta is None else len(self._output_meta)
        if len(grads) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
        result = self.backward(rules.tensor_ops, *grads)
        if isinstance(result, tuple) and len(result) == 1:
            return result[0]
        return result

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

    def _register_hook_dict(self, tensor):
        """Call the dict of hooks given to ``tensor._backward_hooks`` (an output of this node) with its gradient,
        as ``register_hook`` does for one hook (PyTorch's private wiring, used by old module hook code)."""
        hooks = tensor.__dict__.pop("_hooks_given", None)
        if hooks is not None:
            if self._tensor_pre_hooks is None:
                self._tensor_pre_hooks = {}
            self._tensor_pre_hooks[tensor._output_nr] = hooks
            self._hooked = True

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the rule; may return replacement grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        self._hooked = True
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle


_MISSING = object()
# the (position, version) checks most saved values have, shared by all nodes (see ``Node.save``)
_SHARED_POSITIONS = 8
_UNCHANGED_CHECKS = tuple((i, 0) for i in range(_SHARED_POSITIONS))
_OUTPUT_CHECKS = tuple((i, None) for i in range(_SHARED_POSITIONS))
_ALONE_UNCHANGED_CHECKS = tuple((check,) for check in _UNCHANGED_CHECKS)
_ALONE_OUTPUT_CHECKS = tuple((check,) for check in _OUTPUT_CHECKS)
_OTHER_CHECKS: dict = {}        # the others met so far (a parameter is at version 1 or more after its init)


def _shared_check(check):
    """The shared copy of a (position, version) pair; the table is emptied when large (versions grow)."""
    shared = _OTHER_CHECKS.get(check)
    if shared is None:
        if len(_OTHER_CHECKS) >= 1024:
            _OTHER_CHECKS.clear()
        shared = _OTHER_CHECKS[check] = check
    return shared


# Saved positions whose PyTorch names the general rule of ``Node._names_of_saved`` does not give.
_SAVED_NAMES = {
    "PowBackward1": ("self", "exponent", "result"),
    "MmBackward0": ("self", "mat2"),
    "AddmmBackward0": ("mat1", "mat2"),
    "BmmBackward0": ("self", "mat2"),
    "DotBackward0": ("self", "tensor"),
    "MvBackward0": ("self", "vec"),
    **dict.fromkeys(("MaxBackward0", "MinBackward0", "MedianBackward1", "SortBackward0", "SortBackward1",
                     "TopkBackward0", "KthvalueBackward0", "ModeBackward0"), ("indices",)),
}
#: the op's scalars a node shows as ``_saved_<name>`` whether or not the op was given them
_SCALARS = ("alpha", "beta")
# Node fields that PyTorch shows as ``_saved_<name>`` under another name.
_RENAMED = {"shape": "self_sym_sizes", "axes": "dim", "count": "self_sym_numel"}


def _aten_name(node_name):
    """The op's name as PyTorch's messages give it, read from its node's name: ``special_zeta`` from
    ``SpecialZetaBackward0``, ``log1p`` from ``Log1PBackward0`` (a node whose op is named otherwise, such as
    ``_cdist_forward``'s ``CdistBackward0``, states ``aten_name``)."""
    base = re.sub(r"Backward\d*$", "", node_name)
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", base).lower()


def tangent_sum(*terms):
    """The sum of the terms of a tangent that are not None (None if all are): the tangent of an output of
    several inputs, each term the contribution of one input's tangent."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total


def self_adjoint_jvp(self, ops, x_t):
    """The forward-mode rule of a one-input node whose Jacobian is symmetric (an elementwise op on real numbers,
    where it is diagonal; softmax, where it is diag(s) - s sᵀ): J·t = Jᵀ·t, so the JVP is the node's own VJP run on
    the tangent. A class states it as ``jvp = self_adjoint_jvp`` beside its ``backward``."""
    result = self.backward(ops, x_t)
    return result[0] if result.__class__ is tuple else result


def _forward_name(node_name):
    """The forward op's name as PyTorch's version-check message writes it: ``MulBackward0`` -> ``Mul``, but the
    overload number stays, ``ProdBackward1`` -> ``Prod1``; a C++ name (``torch::autograd::CopyBackwards``) stays."""
    return re.sub(r"Backward(\d*)$", lambda m: "" if m.group(1) in ("", "0") else m.group(1), node_name)


def _type_string(np_dtype):
    """The tensor's type as PyTorch's message names it: the legacy name (torch.FloatTensor) where there is one,
    else ATen's (CPUBoolType, CPUBFloat16Type, CPUComplexFloatType)."""
    if np_dtype.kind in "bc" or np_dtype == dtype.BFLOAT16:
        return f"CPU{dtype.scalar_name(np_dtype)}Type"
    return "torch." + FROM_NUMPY[np_dtype]._legacy


def _modified_message(tensor, expected, saved_output=None, node=None):
    if tensor is not None:
        data, now, counter = tensor._data, tensor._version_box[0], tensor._version_box
        origin = ""
        if tensor.grad_fn is not None:     # PyTorch 2.13 names the forward op: "output 0 of Mul", not MulBackward0
            forward_name = _forward_name(tensor.grad_fn.name())
            origin = f", which is output {tensor._output_nr} of {forward_name},"
    else:
        data, now, counter = saved_output.array, saved_output.version_box[0], saved_output.version_box
        # PyTorch names a node's own saved output by the forward op: "output 0 of Exp", not ExpBackward0
        forward_name = _forward_name(node.name())
        origin = f", which is output {saved_output.output_nr} of {forward_name},"
    kind = _type_string(data.dtype)
    shape = ", ".join(str(s) for s in data.shape)
    hint = (_HINT_IN_ANOMALY_MODE if anomaly.state.enabled else
            "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    message = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
               f"[{kind} [{shape}]]{origin} is at version {now}; expected version {expected} instead. {hint}")
    if diagnostics.state.sites:     # learner or anomaly mode recorded the lines: name both
        message += diagnostics.modified_addendum(node, counter, expected, now)
    return message


# in anomaly mode the engine has just warned with the failing node's forward traceback
_HINT_IN_ANOMALY_MODE = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                         "The variable in question was changed in there or anywhere later. Good luck!")


# Accumulation into a leaf's .grad is a read-add-write that NumPy runs without the GIL on large arrays, so two
# threads' backward passes into one leaf would lose gradient. PyTorch gives each AccumulateGrad a mutex; here the
# lock is chosen by the leaf's identity from a fixed table: one leaf always gets the same lock, even when two threads
# race to make its AccumulateGrad, and nothing is allocated or stored per leaf. Two leaves may share a lock, which
# costs only waiting; an RLock, so that a hook run while recording under create_graph may accumulate again.
_LEAF_LOCKS = tuple(threads.RLock() for _ in range(64))


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the gradient that reaches it into ``variable.grad``, atomically per leaf
    (threads backpropagating into one leaf at once each add all of theirs)."""

    __slots__ = ("variable",)
    formula = "leaf.grad += grad"
    _hooked = True              # a leaf's own hooks live on its tensor: always look
    complex_ok = True

    def __init__(self, variable):
        # Created when the leaf is first used by a recorded op, so before every node that feeds it: the
        # engine's newest-first order therefore runs it after all its gradients have been summed.
        Node.__init__(self)
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"        # PyTorch's C++ name for it (its class prints short)

    def backward(self, ops, grad):
        self.accumulate(ops, grad)
        return ()

    def accumulate(self, ops, grad, owned=False):
        """Add ``grad`` into the leaf's ``.grad``, then run its post-accumulate hooks. ``owned``: the engine
        vouches that nothing else can reach ``grad``'s memory, so the leaf may keep the array itself."""
        variable = self.variable
        with _LEAF_LOCKS[(id(variable) >> 4) & 63]:
            ops.accumulate(variable, grad, owned)
        post_hooks = variable.__dict__.get("_post_hooks")
        if post_hooks:
            for hook in list(post_hooks.values()):
                if hook(variable) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
