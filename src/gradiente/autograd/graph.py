"""``gradiente.autograd.graph``, PyTorch's ``torch.autograd.graph``: the graph's nodes as the public API names
them. The graph itself (nodes, saved values, hooks) is ``gradiente/core/node.py``."""
from ..core.node import Node

__all__ = ["Node"]


# --- graph introspection: gradient edges, hooks over several tensors, version bumps ---------------------------
import threading
from collections.abc import Callable, Sequence

from ..core.backward import GradientEdge
from ..core.engine import current_graph_task
from ..core.tensor import Tensor

__all__ += ["GradientEdge", "get_gradient_edge", "register_multi_grad_hook", "increment_version"]


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
    lock = threading.Lock()
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
