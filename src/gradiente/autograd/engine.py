"""The backward pass: an iterative walk over the recorded graph.

Decision (STYLE.md asks for it here): derivative rules compute on raw NumPy arrays in an ordinary
backward pass, and on gradiente Tensors, recorded, under ``create_graph=True``. Each rule is written
once against an ``ops`` namespace (``rule_ops``) that provides both.

The walk: count, for every node reachable from the roots, how many edges lead into it; then run nodes
from a ready queue ordered like PyTorch's (the most recently created node first, leaves' AccumulateGrad
as soon as they are ready), so gradients are summed in the same order as in PyTorch and agree to the
last bit. No recursion anywhere: a 100,000-node chain needs no deeper Python stack than a 3-node one.
"""
import heapq

from . import grad_mode
from .graph import AccumulateGrad
from .rule_ops import numpy_ops, tensor_ops

__all__ = ["run_backward"]


def _dependencies(roots):
    """Number of incoming edges of every node reachable from ``roots``."""
    deps = {}
    stack = [r for r in roots if r is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps, seen


def _nodes_to_run(roots, targets):
    """For ``autograd.grad`` and ``backward(inputs=...)``: the nodes whose rules must run because some
    capture target lies below them. Everything else is not run at all."""
    order, stack, seen = [], [r for r in roots if r is not None], set()
    seen.update(stack)
    while stack:                        # iterative post-order: a node after everything it leads to
        node = stack[-1]
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
                break
        else:
            stack.pop()
            order.append(node)
    run = set()
    for node in order:                  # children come before parents in `order`
        if any(n in targets or n in run for n, _ in node.next_functions if n is not None):
            run.add(node)
    return run


def _call_tensor_hooks(hooks, grad, ops):
    """Run tensor hooks (``Tensor.register_hook``) on one gradient; a hook may return a replacement."""
    g = ops.wrap(grad)
    for hook in list(hooks.values()):
        result = hook(g)
        if result is not None:
            g = result
    return ops.unwrap(g)


def run_backward(roots, root_grads, retain_graph=False, create_graph=False, capture=None, accumulate=True):
    """Propagate ``root_grads`` (one per ``(node, output_nr)`` in ``roots``) through the graph.

    ``capture``: optional dict ``{(node, output_nr): slot}``; the gradient flowing into each such
    tensor is returned in a list. With ``accumulate=False`` only the nodes that lead to a captured
    tensor run, and no leaf's ``.grad`` changes (``autograd.grad``).
    """
    ops = tensor_ops if create_graph else numpy_ops
    with grad_mode.set_grad_enabled(create_graph):
        return _walk(roots, root_grads, retain_graph, ops, capture, accumulate)


def _walk(roots, root_grads, retain_graph, ops, capture, accumulate):
    root_nodes = [node for node, _ in roots]
    deps, _ = _dependencies(root_nodes)
    needed = _nodes_to_run(root_nodes, {n for n, _ in capture}) if capture and not accumulate else None
    captured = [None] * (len(capture) if capture else 0)

    buffers = {}                        # node -> list of summed gradients, one per output
    for (node, nr), grad in zip(roots, root_grads):
        if node is None:
            continue
        buf = buffers.setdefault(node, [None] * _num_outputs(node, nr))
        buf[nr] = grad if buf[nr] is None else ops.add_into(buf[nr], grad)

    heap = []
    for node in dict.fromkeys(n for n in root_nodes if n is not None):
        if deps.get(node, 0) == 0:
            heap.append((-node._seq, node))
    heapq.heapify(heap)
    push, pop = heapq.heappush, heapq.heappop

    while heap:
        _, node = pop(heap)
        grads = buffers.pop(node, None)
        if grads is not None:
            grads = _pre_hooks(node, grads, ops, capture, captured)
            if needed is None or node in needed:
                results = _apply(node, grads, ops)
                if not retain_graph:
                    node._release()
                for (nxt, nr), g in zip(node.next_functions, results):
                    if nxt is None or g is None:
                        continue
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * _num_outputs(nxt, nr)
                    elif len(buf) <= nr:
                        buf.extend([None] * (nr + 1 - len(buf)))
                    buf[nr] = g if buf[nr] is None else ops.add_into(buf[nr], g)
        elif not retain_graph and grads is not None:
            node._release()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                push(heap, (-nxt._seq, nxt))
    return captured


def _num_outputs(node, nr):
    meta = node._output_meta
    return max(len(meta) if meta is not None else 1, nr + 1)


def _pre_hooks(node, grads, ops, capture, captured):
    """Tensor hooks of this node's outputs, then retain_grad, then captures, then the node's pre-hooks."""
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if nr < len(grads) and grads[nr] is not None and hooks:
                grads[nr] = _call_tensor_hooks(hooks, grads[nr], ops)
    if isinstance(node, AccumulateGrad):
        hooks = node.variable._hooks
        if hooks and grads[0] is not None:
            grads[0] = _call_tensor_hooks(hooks, grads[0], ops)
    if node._retain_hooks:
        for nr, tensor_ref in node._retain_hooks.items():
            tensor = tensor_ref()
            if tensor is not None and nr < len(grads) and grads[nr] is not None:
                _retain(tensor, grads[nr], ops)
    if capture:
        for nr, g in enumerate(grads):
            slot = capture.get((node, nr))
            if slot is not None and g is not None:
                captured[slot] = g if captured[slot] is None else ops.add_into(captured[slot], g)
    if node._pre_hooks:
        wrapped = tuple(ops.wrap(g) if g is not None else None for g in grads)
        for hook in list(node._pre_hooks.values()):
            result = hook(wrapped)
            if result is not None:
                wrapped = tuple(result)
        grads = [ops.unwrap(g) if g is not None else None for g in wrapped]
    return grads


def _retain(tensor, grad, ops):
    from .._tensor import Tensor
    if ops.recording:
        tensor._grad = grad if tensor._grad is None else tensor._grad + grad
    elif tensor._grad is None:
        tensor._grad = Tensor._make(grad.copy())
    else:
        tensor._grad = Tensor._make(tensor._grad._data + grad)


def _apply(node, grads, ops):
    """Run one node's rule and bring each gradient to its input's shape and dtype (the one central
    un-broadcast: rules never think about broadcasting)."""
    if len(grads) == 1:
        results = node.backward(ops, grads[0])
    else:
        if node._output_meta is not None and any(g is None for g in grads):
            grads = [g if g is not None else _zeros(meta, ops) for g, meta in zip(grads, node._output_meta)]
        results = node.backward(ops, *grads)
    if type(results) is not tuple:
        results = (results,)
    meta = node._input_meta
    if meta is not None:
        fixed = []
        for g, m in zip(results, meta):
            if g is not None and m is not None and (g.shape != m[0] or ops.raw(g).dtype != m[1]):
                g = ops.fix_meta(g, m[0], m[1])
            fixed.append(g)
        results = fixed
    if node._hooks:
        wrapped_in = tuple(ops.wrap(g) if g is not None else None for g in results)
        wrapped_out = tuple(ops.wrap(g) if g is not None else None for g in grads)
        for hook in list(node._hooks.values()):
            replaced = hook(wrapped_in, wrapped_out)
            if replaced is not None:
                wrapped_in = tuple(replaced)
        results = [ops.unwrap(g) if g is not None else None for g in wrapped_in]
    return results


def _zeros(meta, ops):
    import numpy as np
    from .._tensor import Tensor
    zeros = np.zeros(meta[0], dtype=meta[1])
    return Tensor._make(zeros) if ops.recording else zeros
