"""The backward pass: an iterative walk over the recorded graph.

Decision (STYLE.md asks for it here): derivative rules compute on raw NumPy arrays in an ordinary
backward pass, and on gradiente Tensors, recorded, under ``create_graph=True``. Each rule is written
once against an ``ops`` namespace (``core.rules``) that provides both.

The walk needs no recursion and no separate dependency count. Every edge of the graph leads from a node
to an *older* one (an op's inputs exist before its output; a leaf's AccumulateGrad is made when the leaf
is first used, before its consumers). So if we always run, among the nodes that have received some
gradient, the newest one, every node that can still send it a gradient has already run: its gradient is
complete. That is exactly PyTorch's ready-queue order, so gradients are summed in the same order and agree
to the last bit. A 100,000-node chain needs no deeper Python stack than a 3-node one.
"""
import gc
import heapq

from . import grad_mode, rules

__all__ = ["run_backward"]


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
    ops = rules.namespace(create_graph)
    # The walk makes no reference cycles, so the cyclic garbage collector has nothing to find; pausing it
    # keeps it from repeatedly scanning a large live graph (PyTorch's nodes are invisible to it).
    collecting = gc.isenabled()
    gc.disable()
    try:
        with grad_mode.set_grad_enabled(create_graph):
            return _walk(roots, root_grads, retain_graph, ops, capture, accumulate)
    finally:
        if collecting:
            gc.enable()


def _walk(roots, root_grads, retain_graph, ops, capture, accumulate):
    run_only = _nodes_to_run([n for n, _ in roots], {n for n, _ in capture}) if capture and not accumulate else None
    captured = [None] * (len(capture) if capture else 0)
    raw = not ops.recording
    push, pop = heapq.heappush, heapq.heappop

    buffers: dict = {}                  # node -> gradients summed so far, one per output
    heap: list = []                     # (-sequence number, node) of the nodes in `buffers`
    for (node, nr), grad in zip(roots, root_grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * _num_outputs(node, nr)
            push(heap, (-node._seq, node))
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad

    # Hooks, captures and partial runs are rare: one flag, computed once, sends every node of such a
    # walk through the general path; otherwise only a node with hooks of its own takes it.
    general = bool(capture) or run_only is not None
    release = not retain_graph
    while heap:
        node = pop(heap)[1]
        grads = buffers.pop(node)
        if general or node._hooked:
            grads = _pre_hooks(node, grads, ops, capture, captured)
            if run_only is not None and node not in run_only:
                continue
            results = _apply(node, grads, ops)
        elif len(grads) == 1:
            results = node.backward(ops, grads[0])          # the common case, without _apply's generality
            if results.__class__ is not tuple:
                results = (results,)
        else:
            results = _apply(node, grads, ops)
        if release and node._saved:
            node._saved = None          # free what the rule read; a second backward then raises _FREED
        meta = node._input_meta
        for i, (nxt, nr) in enumerate(node.next_functions):
            if nxt is None:
                continue
            g = results[i]
            if g is None:
                continue
            m = meta[i] if meta is not None else None
            if m is not None and (g.shape != m[0] or (g.dtype if raw else g._data.dtype) != m[1]):
                g = ops.fix_meta(g, m[0], m[1])
            buf = buffers.get(nxt)
            if buf is None:
                buffers[nxt] = [g] if nr == 0 and nxt._output_meta is None else _new_buffer(nxt, nr, g)
                push(heap, (-nxt._seq, nxt))
            else:
                if len(buf) <= nr:
                    buf.extend([None] * (nr + 1 - len(buf)))
                previous = buf[nr]
                buf[nr] = g if previous is None else previous + g
                previous = None
        # Drop this step's references, so a gradient array's only holder is its buffer (see accumulate).
        results = g = None
    return captured


def _new_buffer(node, nr, grad):
    buf = [None] * _num_outputs(node, nr)
    buf[nr] = grad
    return buf


def _num_outputs(node, nr):
    meta = node._output_meta
    return nr + 1 if meta is None else max(len(meta), nr + 1)


def _pre_hooks(node, grads, ops, capture, captured):
    """Tensor hooks of this node's outputs, then retain_grad, then captures, then the node's pre-hooks."""
    from .node import AccumulateGrad
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
                captured[slot] = g if captured[slot] is None else captured[slot] + g
    if node._pre_hooks:
        wrapped = tuple(ops.wrap(g) if g is not None else None for g in grads)
        for hook in list(node._pre_hooks.values()):
            result = hook(wrapped)
            if result is not None:
                wrapped = tuple(result)
        grads = [ops.unwrap(g) if g is not None else None for g in wrapped]
    return grads


def _retain(tensor, grad, ops):
    from .tensor import Tensor
    if ops.recording:
        tensor._grad = grad if tensor._grad is None else tensor._grad + grad
    elif tensor._grad is None:
        tensor._grad = Tensor._make(grad.copy())
    else:
        tensor._grad = Tensor._make(tensor._grad._data + grad)


def _apply(node, grads, ops):
    """Run one node's rule (and its post-hooks). The engine then brings each gradient to its input's shape
    and dtype: the one central un-broadcast, so rules never think about broadcasting."""
    if not node.complex_ok and _produced_complex(grads, ops):
        raise NotImplementedError(
            f"gradiente does not compute gradients of complex tensors through {node.name()} yet: its rule is "
            "written for real numbers, and PyTorch's convention for complex ones (the conjugate Wirtinger "
            "derivative) would give a different gradient. Real and imaginary parts can be differentiated "
            "separately (torch.view_as_real).")
    if len(grads) == 1:
        results = node.backward(ops, grads[0])
    else:
        if node._output_meta is not None and node._materialize_grads and any(g is None for g in grads):
            grads = [g if g is not None else _zeros(meta, ops) for g, meta in zip(grads, node._output_meta)]
        results = node.backward(ops, *grads)
    if type(results) is not tuple:
        results = (results,)
    if node._hooks:
        meta = node._input_meta
        fixed = tuple(ops.fix_meta(g, m[0], m[1]) if g is not None and m is not None else g
                      for g, m in zip(results, meta or (None,) * len(results)))
        wrapped_in = tuple(ops.wrap(g) if g is not None else None for g in fixed)
        wrapped_out = tuple(ops.wrap(g) if g is not None else None for g in grads)
        for hook in list(node._hooks.values()):
            replaced = hook(wrapped_in, wrapped_out)
            if replaced is not None:
                wrapped_in = tuple(replaced)
        results = tuple(ops.unwrap(g) if g is not None else None for g in wrapped_in)
    return results


def _produced_complex(grads, ops):
    return any(g is not None and (g._data.dtype if ops.recording else g.dtype).kind == "c" for g in grads)


def _zeros(meta, ops):
    import numpy as np

    from .tensor import Tensor
    zeros = np.zeros(meta[0], dtype=meta[1])
    return Tensor._make(zeros) if ops.recording else zeros
