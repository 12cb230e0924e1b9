"""``gradiente.autograd.graph``, PyTorch's ``torch.autograd.graph``: the graph's nodes as the public API names
them, and the hooks on the tensors they save.

The graph itself (nodes, saved values, hooks) is ``gradiente/core/node.py``. A pair of saved-tensor hooks turns
each tensor an op saves for backward into whatever ``pack_hook`` returns, and back with ``unpack_hook`` when
backward (or ``grad_fn._saved_<name>``) reads it: the mechanism under ``save_on_cpu``,
``allow_mutation_on_saved_tensors`` and ``utils.checkpoint``.
"""
import contextlib
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Optional

from ..core import threads
from ..core.backward import GradientEdge
from ..core.engine import current_graph_task
from ..core.node import Node, SavedTensor, saved_hooks
from ..core.tensor import Tensor

__all__ = ["Node", "SavedTensor", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook",
           "increment_version"]


class saved_tensors_hooks:
    """Within this context, ``pack_hook(tensor)`` runs each time an op saves a tensor for backward and its
    result is stored instead; ``unpack_hook(packed)`` runs when the saved tensor is read and must return a
    tensor with the original's values. Contexts nest; the innermost pair applies. Python numbers an op
    keeps (``x * 3``) are not packed."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        saved_hooks.stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc):
        saved_hooks.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to the CPU in forward and come back to their device in backward. gradiente has only
    the CPU, so each saved tensor is kept as it is (no copy), as PyTorch does for a graph already on the CPU."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within this context, setting saved-tensor hooks raises ``RuntimeError(error_message)``; so does
    entering it while hooks are set."""
    previous = saved_hooks.disabled
    try:
        if saved_hooks.stack:
            raise RuntimeError(error_message)
        saved_hooks.disabled = error_message
        yield
    finally:
        saved_hooks.disabled = previous


class _Handle:
    """What ``allow_mutation_on_saved_tensors`` saves in a tensor's place (weakly referenced by its context)."""


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` context, as PyTorch's: ``original`` (handle ->
    the tensor saved), ``cloned`` (handle -> its values as saved, for a saved tensor changed in place since),
    ``tid_to_weakhandle`` ((id, address, version) -> handle). Entries go when the graph that saved them does."""

    def __init__(self):
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.sid_to_tid: defaultdict = defaultdict(set)
        # handle -> (values at save time, version then)
        self._copies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @property
    def cloned(self):
        # gradiente has no dispatcher to clone a saved tensor at the moment it is changed in place, so each
        # saved tensor's values are copied when saved; those whose tensor has changed since count as cloned.
        return {handle: copy for handle, (copy, version) in list(self._copies.items())
                if self.original.get(handle) is not None and self.original[handle]._version != version}

    def clear(self):
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()
        self._copies.clear()


_mutation_context: "list[Optional[_AllowMutationOnSavedContext]]" = [None]
_OUT_OF_CONTEXT = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                   "in which the graph was originally recorded.")


class _save_before_mutation(saved_tensors_hooks):
    def __init__(self, ctx: _AllowMutationOnSavedContext):
        def pack_hook(tensor):
            tid = (id(tensor), tensor.data_ptr(), tensor._version)
            ctx.sid_to_tid[tid[1:]].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
                ctx._copies[handle] = (tensor.detach().clone(), tensor._version)
            return handle

        def unpack_hook(handle):
            if handle not in ctx._copies or _mutation_context[0] is not ctx:
                raise AssertionError(_OUT_OF_CONTEXT)
            copy, version = ctx._copies[handle]
            original = ctx.original.get(handle)
            return original if original is not None and original._version == version else copy

        super().__init__(pack_hook, unpack_hook)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Within this context, a tensor saved for backward may be changed in place afterwards: backward reads
    the values it had when saved. Forward and backward must both run inside the same context. Yields the
    context's state. Unlike PyTorch, which clones a saved tensor only when it is about to be changed,
    gradiente copies each saved tensor when it is saved (it has no dispatcher to intercept the change)."""
    if _mutation_context[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    with _save_before_mutation(ctx):
        try:
            _mutation_context[0] = ctx
            yield ctx
        finally:
            ctx.clear()
            _mutation_context[0] = None


# --- graph introspection: gradient edges, hooks over several tensors, version bumps ---------------------------


def get_gradient_edge(tensor):
    """The edge where ``tensor``'s gradient is computed: ``autograd.grad(loss, get_gradient_edge(x))`` gives
    what ``autograd.grad(loss, x)`` gives, and keeps naming the same place after ``x`` is changed in place."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    node, output_nr = tensor._grad_edge()
    return GradientEdge(node, output_nr)


def increment_version(tensor):
    """Tell autograd that ``tensor`` (or each tensor of an iterable) was changed in place behind its back, so
    that a backward reading a saved copy of it raises the in-place error."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._version_box[0] += 1


class _MultiHandle:
    """The handle of ``register_multi_grad_hook``: ``remove()`` removes the hook from every tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all"):
    """Call ``fn`` once per backward pass over the gradients of several tensors.

    ``mode="all"``: ``fn(grads)``, once the gradient of every tensor that this backward reaches is computed,
    with None for those it does not reach. ``mode="any"``: ``fn(grad)`` with the first of them to be computed.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threads.Lock()
    if mode == "any":
        fired: set = set()

        def first_only(grad):
            task = _running_task()
            with lock:
                if task.id in fired:
                    return
                fired.add(task.id)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors if t.requires_grad))

    nodes = [t._grad_edge()[0] for t in tensors]
    pending: dict = {}          # graph task id -> [the grads so far, how many are still to come]

    def collector(index):
        def hook(grad):
            task = _running_task()
            with lock:
                state = pending.get(task.id)
                if state is None:
                    expected = sum(1 for node in nodes if node is not None and task.will_execute(node))
                    state = pending[task.id] = [[None] * len(nodes), expected]
                state[0][index] = grad
                state[1] -= 1
                done = state[1] == 0
                if done:
                    del pending[task.id]
            if done:
                fn(state[0])
        return hook

    return _MultiHandle(tuple(t.register_hook(collector(i)) for i, t in enumerate(tensors)))


def _running_task():
    task = current_graph_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task
