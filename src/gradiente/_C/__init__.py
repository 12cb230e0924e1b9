"""``gradiente._C``: the few names of PyTorch's C extension (``torch._C``) that Python code and PyTorch's own
tests reach for, each one a thin door onto what gradiente already has. PyTorch's ``torch._C`` is its compiled
core; gradiente has none, so this is not a namespace to build on: use the public names (``torch.autograd``,
``torch.autograd.graph``, ``torch.autograd.forward_ad``), which these call."""
import weakref

from ..autograd.forward_ad import _set_fwd_grad_enabled as _fwd_grad_mode
from ..core import engine as _engine
from ..core.grad_mode import is_grad_enabled
from . import _autograd, _functions

__all__ = ["is_grad_enabled", "has_lapack", "_set_fwd_grad_enabled", "_current_graph_task_execution_order",
           "_current_graph_task_id", "_will_engine_execute_node", "_WeakTensorRef", "_autograd",
           "_functions"]

#: linear algebra is NumPy's LAPACK, always there
has_lapack = True


def _set_fwd_grad_enabled(enabled):
    """Forward-mode AD on or off for this thread, until set again (no context manager: PyTorch's C switch)."""
    _fwd_grad_mode(bool(enabled))


def _running_task(who):
    task = _engine.current_graph_task()
    if task is None:
        raise RuntimeError(f"{who} should only be called during the backward pass")
    return task


def _current_graph_task_execution_order():
    """The nodes the backward pass now running will execute, in order (from a hook, within
    ``set_multithreading_enabled(False)``, as PyTorch requires)."""
    task = _running_task("_current_graph_task_execution_order")
    if task.multithreading:
        raise RuntimeError(
            "get_current_graph_task_execution_order expects the current backward to be executed with "
            "multithreading disabled, e.g. by running:\n\n>>> with torch.autograd.set_multithreading_enabled("
            "False):\n...     torch.autograd.grad(...)\n")
    return task.execution_order()


def _current_graph_task_id():
    """The id of the backward pass running on this thread, -1 outside one."""
    task = _engine.current_graph_task()
    return -1 if task is None else task.id


def _will_engine_execute_node(node):
    """Whether the backward pass now running will execute ``node`` (a Node or a GradientEdge)."""
    task = _running_task("_will_engine_execute_node")
    return task.will_execute(getattr(node, "node", node))


class _WeakTensorRef:
    """A weak reference to a tensor that says whether the tensor is gone (``expired()``)."""

    def __init__(self, tensor):
        self._ref = weakref.ref(tensor)

    def expired(self):
        return self._ref() is None
