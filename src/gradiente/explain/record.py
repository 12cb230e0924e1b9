"""Run the real backward pass and write down every gradient that flows, node by node.

Nothing is recomputed: a pre-hook on each node records the gradient the engine hands it (already
summed over all the paths that reach it) and a hook records what its rule passes to each input (already
reduced to the input's shape), so the numbers of a walkthrough are the engine's own. The pre-hook also
evaluates the rule of an elementwise node once on a gradient of ones, which gives its local derivative
(the rule is linear in the gradient), before the engine runs it and frees what it saved.
"""
import gc

import numpy as np

from ..core.node import _FREED, AccumulateGrad
from ..core.rules import numpy_ops
from ..core.tensor import Tensor
from ..ops.unary import UnaryNode
from ..viz.walk import reachable

__all__ = ["BackwardRecord", "GraphFreedError", "is_elementwise", "record_backward"]

_ELEMENTWISE = {"AddBackward0", "SubBackward0", "RsubBackward1", "MulBackward0", "DivBackward0",
                "ReciprocalBackward0", "PowBackward0", "PowBackward1", "PowBackward2", "NegBackward0",
                "ToCopyBackward0", "RemainderBackward0", "RemainderBackward1", "FmodBackward0", "FmodBackward1"}


class GraphFreedError(RuntimeError):
    """The graph's saved values were released by an earlier ``backward()``."""


def is_elementwise(node):
    """Whether ``node``'s rule multiplies the gradient elementwise by a local derivative."""
    return isinstance(node, UnaryNode) or type(node).__name__ in _ELEMENTWISE or getattr(node, "elementwise", False)


class BackwardRecord:
    """What one backward pass did. Arrays are copies, indexed by node.

    ``order``: the nodes in the order the engine ran them. ``incoming[node]``: the gradient it received
    (for a node with several outputs, ``incoming_all[node]`` has one per output). ``contributions[node]``:
    ``[(consumer, input_index, gradient), ...]``, one per edge along which a gradient reached it, in the
    order they arrived. ``outgoing[node]``: per input, the gradient passed on (None where none).
    ``local[node]``: per input, the elementwise local derivative in the output's shape, or None.
    ``leaf[id(tensor)]``: the gradient that reached each leaf; ``leaves``: those tensors in order.
    """

    def __init__(self, output, root_grad, accumulated):
        self.output = output
        self.root_grad = root_grad
        self.accumulated = accumulated
        self.order = []
        self.incoming = {}
        self.incoming_all = {}
        self.contributions = {}
        self.outgoing = {}
        self.local = {}
        self.leaf = {}
        self.leaves = []


def record_backward(output, gradient=None, *, accumulate=True, retain_graph=None, local_derivatives=True):
    """Run ``output.backward(gradient)`` (``accumulate=True``) or ``autograd.grad`` of ``output`` with
    respect to every leaf (``accumulate=False``: no ``.grad`` changes) and return a ``BackwardRecord``.
    ``local_derivatives``: True, False, or ``f(index, total)`` saying for which run positions (of
    ``total`` nodes) to compute them."""
    from .. import autograd
    if not isinstance(output, Tensor):
        raise TypeError(f"expected a Tensor, got {type(output).__name__}")
    if not output.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    root = output.grad_fn if output.grad_fn is not None else output._grad_edge()[0]
    nodes = reachable([root])
    if any(node._saved is None for node in nodes):
        raise GraphFreedError(_FREED)
    root_grad = gradient._data if isinstance(gradient, Tensor) else gradient
    if root_grad is None:
        if output._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        root_grad = np.ones(output._data.shape, dtype=output._data.dtype)
    record = BackwardRecord(output, np.array(root_grad, dtype=output._data.dtype), accumulate)
    leaves = [node.variable for node in nodes if isinstance(node, AccumulateGrad)]
    record.leaves = leaves
    if not callable(local_derivatives):
        wanted = bool(local_derivatives)

        def local_derivatives(index, total):
            return wanted
    handles = []
    # Hooks on every node allocate a few objects per node; on a large graph the cyclic collector
    # would rescan the whole graph again and again meanwhile (none of these objects form cycles).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for node in nodes:
            before = _before(record, node, local_derivatives, len(nodes))
            if isinstance(node, AccumulateGrad):
                # a tensor hook, not a node pre-hook: autograd.grad captures a leaf's gradient without running
                # its AccumulateGrad, so (as in PyTorch) the node's own hooks do not run then
                handles.append(node.variable.register_hook(_as_tensor_hook(before)))
            else:
                handles.append(node.register_prehook(before))
                handles.append(node.register_hook(_after(record, node)))
        if accumulate or not leaves:
            autograd.backward(output, gradient, retain_graph=retain_graph)
        else:
            autograd.grad(output, leaves, gradient, retain_graph=retain_graph, allow_unused=True)
    finally:
        for handle in handles:
            handle.remove()
        if collecting:
            gc.enable()
    return record


def _copy(grad):
    return None if grad is None else np.array(grad._data, copy=True)


def _before(record, node, local_derivatives, total):
    def hook(grad_outputs):
        grads = [_copy(g) for g in grad_outputs]
        index = len(record.order)
        record.order.append(node)
        record.incoming_all[node] = grads
        record.incoming[node] = grads[0] if grads else None
        if isinstance(node, AccumulateGrad):
            if grads and grads[0] is not None:
                record.leaf[id(node.variable)] = grads[0]
        elif len(grads) == 1 and grads[0] is not None and local_derivatives(index, total) and is_elementwise(node):
            record.local[node] = _local_derivative(node, grads[0])
    return hook


def _as_tensor_hook(before):
    def hook(grad):
        before((grad,))
    return hook


def _after(record, node):
    def hook(grad_inputs, grad_outputs):
        passed = [_copy(g) for g in grad_inputs]
        record.outgoing[node] = passed
        for i, ((nxt, _), g) in enumerate(zip(node.next_functions, passed)):
            if nxt is not None and g is not None:
                record.contributions.setdefault(nxt, []).append((node, i, g))
    return hook


def _local_derivative(node, grad):
    """The rule applied to a gradient of ones: the elementwise derivative of the output with respect to
    each input, broadcast to the output's shape. None if the rule cannot be evaluated on its own."""
    try:
        results = node.backward(numpy_ops, np.ones_like(grad))
    except Exception:  # the engine runs the rule next and reports any real error itself
        return None
    if type(results) is not tuple:
        results = (results,)
    local = []
    for r in results:
        if r is None:
            local.append(None)
            continue
        r = np.asarray(r)
        try:
            local.append(np.array(np.broadcast_to(r, grad.shape), copy=True))
        except ValueError:
            local.append(None)
    return local
