"""The backward pass: an iterative walk over the recorded graph.

The walk
--------
Every tensor that requires grad points at the node that made it (``grad_fn``); every node points at the
nodes of its inputs (``next_functions``). ``backward()`` follows those edges from the output back::

    buffers = {root: root_grad}                     # node -> the gradient that has reached it so far
    while buffers:
        node = the newest node in buffers           # a heap keyed on the node's sequence number
        results = node.backward(ops, buffers.pop(node))         # its rule: one gradient per input
        for (receiver, _), grad in zip(node.next_functions, results):
            buffers[receiver] = buffers[receiver] + grad if receiver in buffers else grad

That is ``_walk``'s loop (a node with several outputs has a list of gradients, one per output). Why the
newest node: every edge leads from a node to an *older* one (an op's inputs exist before its output; a leaf's
AccumulateGrad is made when the leaf is first used, before its consumers). So when the newest node that has
a buffer is popped, every node that could still add to that buffer has run already: its gradient is
complete. It is PyTorch's ready-queue order, so gradients are summed in PyTorch's order and agree to the last
bit, and no recursion is needed: a 100,000-node chain takes no more Python stack than a 3-node one. A leaf's
AccumulateGrad ends the road: it adds what reaches it into the leaf's ``.grad``.

Around the loop, in steps of their own that a plain ``backward()`` never enters (``_step_with_extras``):
tensor and node hooks, ``retain_grad``, the captures of ``autograd.grad``, partial runs (only the nodes that
lead to a captured tensor run) and the complex step: a holomorphic node's rule runs between two conjugations,
and a rule written for real numbers only is refused complex gradients (``run_rule``). A node takes
that path when it is marked ``_hooked`` (every AccumulateGrad is) or the walk captures; every node takes it while
a profiler records, and each step is then timed (``core/profiling.py``; the walk reads that once, so a walk
without a profiler pays nothing for it).

Who owns a gradient array
-------------------------
A leaf may keep the array that reaches it as its ``.grad``, without a copy, only if nothing else can reach
that memory: ``x + y`` hands one array to both leaves, and they must not end up sharing one ``.grad``. The
engine knows who can reach an array from where the array came from; it reads no reference counts. An array
in a buffer is the engine's own unless its slot is marked *shared* (``_walk``'s ``shared``), which happens
when it is

* the caller's (a root gradient), or seen or returned by user code: a hook, a custom Function's backward,
  a capture that ``autograd.grad`` hands back;
* sent by one node along two edges (AddBackward0 hands ``grad`` to both of its inputs);
* a shared incoming gradient passed on, or a view of one (TBackward0 transposes ``grad``).

A mark says "maybe"; a leaf that gets a marked slot settles it (``_engine_only``). The memory is still the
engine's own if no other buffer holds it (of two leaves that one array reached, the second to run may keep
it: the first made its copy) and user code cannot reach it: it is not the caller's, and every Tensor that
user code was handed or returned around it is gone (``still_held``, by weak reference: a Tensor nobody holds
any more is freed). That is PyTorch's rule, which steals a gradient whose Tensor has no other user.

Everything else is memory the engine made (a sum ``a + b``, a reduction or cast to an input's shape and
dtype) or a rule made: built-in rules keep to one contract, that each result is new memory, an incoming
gradient or a view of one, never a value the node keeps (``tests/test_engine_walk.py`` holds every rule of
the op tables to it). A leaf keeps an array of the engine's own that is C-contiguous, writeable, of the
leaf's dtype and spans all the memory it is a view of, and copies anything else (``NumpyOps.accumulate``):
no two leaves, and no leaf and a user's tensor, ever share gradient memory. Under ``create_graph`` a leaf
always copies, as PyTorch does.

Rules: arrays or Tensors
------------------------
Decision (STYLE.md asks for it here): derivative rules compute on raw NumPy arrays in an ordinary backward
pass, and on gradiente Tensors, recorded, under ``create_graph=True``. Each rule is written once against an
``ops`` namespace (``core.rules.namespace(create_graph)``) that provides both. Sharing is tracked for
arrays only.
"""
import gc
import itertools
import weakref
from heapq import heapify, heappop, heappush

import numpy as np

from . import anomaly, grad_mode, profiling, rules, threads
from . import dtype as dt
from . import tensor as _tensor  # a module: a cycle within the core, read at call time
from .dtype import FROM_NUMPY
from .node import AccumulateGrad

__all__ = ["run_backward", "current_graph_task", "GraphTask", "nodes_to_run"]


def run_backward(roots, root_grads, retain_graph=False, create_graph=False, capture=None, accumulate=True,
                 inputs=None, made=(), ops=None):
    """Propagate ``root_grads`` (one per ``(node, output_nr)`` in ``roots``) through the graph.

    ``capture``: optional dict ``{(node, output_nr): slot}``; the gradient flowing into each such
    tensor is returned in a list, with a second list saying, per slot, whether that array is the engine's own
    memory that nothing else holds (a leaf or another capture, a root gradient, a hook), so ``autograd.grad``
    can hand it over without a copy. With ``accumulate=False`` only the nodes that lead to a captured
    tensor run, and no leaf's ``.grad`` changes (``autograd.grad``). ``inputs``: the edges of
    ``backward(inputs=...)``: only their nodes and those that lead to them run (PyTorch's rule: a leaf's
    AccumulateGrad among them accumulates, with its hooks). ``made``: per root, True if ``backward`` made its
    gradient itself (an implicit 1), which is then the engine's own memory rather than the caller's. ``ops``:
    the rules' namespace when not the usual one (``rules.batched_ops``, for gradients batched by vmap).
    """
    if ops is None:
        ops = rules.namespace(create_graph)
    # The walk makes no reference cycles, so the cyclic garbage collector has nothing to find; pausing it
    # keeps it from repeatedly scanning a large live graph (PyTorch's nodes are invisible to it).
    collecting = gc.isenabled()
    gc.disable()
    tasks = _running.__dict__.setdefault("tasks", [])
    depth = len(tasks)
    try:
        with grad_mode.set_grad_enabled(create_graph):
            extras = _Extras(roots, capture, accumulate, inputs) if capture or inputs else None
            tasks.append(GraphTask(roots, extras))
            _walk(roots, root_grads, not retain_graph, ops, extras, made)
            return (extras.captured, extras.owned) if extras is not None else ([], [])
    finally:
        del tasks[depth:]
        if collecting:
            gc.enable()


# --- the walk in progress, for hooks that ask about it (autograd.graph.register_multi_grad_hook) ------------

_running = threads.local()        # .tasks: this thread's walks, innermost last
_task_ids = itertools.count()


class GraphTask:
    """One call of ``run_backward`` while it runs: an ``id`` of its own (PyTorch's graph task id) and which
    nodes it will run (``will_execute``, PyTorch's ``_will_engine_execute_node``)."""

    __slots__ = ("id", "roots", "extras", "multithreading", "_reached")

    def __init__(self, roots, extras):
        self.id = next(_task_ids)
        self.roots = roots
        self.extras = extras
        self.multithreading = grad_mode.state.multithreading
        self._reached = None

    def will_execute(self, node):
        if self._reached is None:
            roots = [n for n, _ in self.roots]
            run_only = self.extras.run_only if self.extras is not None else None
            if run_only is None:
                self._reached = _reachable(roots)
            else:           # a partial run: the nodes it runs, and the targets they (or the roots) lead to
                reached = set(run_only)
                for n in list(run_only) + roots:
                    reached.update(nxt for nxt, _ in (n.next_functions if n is not None else ())
                                   if nxt in self.extras.capturing)
                reached.update(n for n in roots if n in self.extras.capturing)
                self._reached = reached
        return node in self._reached

    def execution_order(self):
        """The nodes this walk runs, in the order it runs them (PyTorch's
        ``_current_graph_task_execution_order``): the walk's own order, newest first among the nodes that have
        a gradient, replayed over the graph without running a rule."""
        heap = [(-n._seq, n) for n in dict.fromkeys(n for n, _ in self.roots) if n is not None]
        queued = {n for _, n in heap}
        heapify(heap)
        order = []
        while heap:
            node = heappop(heap)[1]
            if not self.will_execute(node):
                continue
            order.append(node)
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in queued:
                    queued.add(nxt)
                    heappush(heap, (-nxt._seq, nxt))
        return order


def current_graph_task():
    """The innermost walk running on this thread, or None outside a backward pass."""
    tasks = getattr(_running, "tasks", None)
    return tasks[-1] if tasks else None


def _reachable(roots):
    seen, stack = set(), [r for r in roots if r is not None]
    seen.update(stack)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _walk(roots, root_grads, release, ops, extras, made=()):
    """The loop of the module's docstring, its common cases spelled out: it runs once per node."""
    raw = not ops.recording
    pop, push = heappop, heappush
    anomalous = anomaly.state.enabled
    session = profiling.state.session          # a profiler records: every node takes the timed general step
    # every node takes the general step (a batched walk: there, a rule that cannot batch runs per example)
    everywhere = anomalous or session is not None or ops is rules.batched_ops
    # a walk that captures, or runs only part of the graph, sends just the nodes concerned down the general path
    capturing = extras.capturing if extras is not None else ()
    run_only = extras.run_only if extras is not None else None
    step_with_extras = _step_in_anomaly_mode if anomalous else _step_with_extras
    timed = profiling.TimedSteps(step_with_extras, session) if session is not None else None
    if timed is not None:
        step_with_extras = timed
    node = None
    buffers: dict = {}      # node -> the gradient summed so far; a list, one per output, for a node with several
    shared: dict = {}       # node -> bit nr set when someone besides the engine may hold output nr's gradient
    heap: list = []         # (-sequence number, node) for each node in buffers: the newest pops first
    lent: dict = {}         # id -> memory that user code may hold: a marked slot with it is never a leaf's
    for i, ((node, nr), grad) in enumerate(zip(roots, root_grads)):
        if node is not None:
            _receive(buffers, shared, heap, node, nr, grad)
            if raw and not (i < len(made) and made[i]):
                shared[node] = shared.get(node, 0) | 1 << nr        # the caller's array
                _lend(lent, grad)
    try:
        while heap:
            node = pop(heap)[1]                 # the newest node with a gradient: all of it has arrived
            grad = buffers.pop(node)
            shared_in = shared.pop(node, 0) if shared else 0
            saved = node._saved
            if saved is None or saved:
                node.check_saved()
            # its rule (on the general path, with hooks, captures and the rest around it)
            if everywhere or node._hooked or node in capturing or (run_only is not None and node not in run_only):
                step = step_with_extras(node, grad, shared_in, ops, extras, buffers, lent)
                if step is None:
                    continue
                results, grad, shared_in = step
            elif grad.__class__ is not list:
                results = node.backward(ops, grad)
            elif len(grad) == 1:
                results = node.backward(ops, grad[0])          # a custom Function with one output
            else:
                results = run_rule(node, grad, ops)
            if results.__class__ is not tuple:
                results = (results,)
            if release and node._saved:
                node._saved = None      # free what the rule read; a second backward then raises _FREED
            # each result along its edge, summed into the receiver's buffer
            meta = node._input_meta
            sent = 0
            for i, (receiver, nr) in enumerate(node.next_functions):
                if receiver is None:
                    continue
                g = results[i]
                if g is None:
                    continue
                # the one central un-broadcast: each gradient reaches its input with the input's shape and dtype
                m = meta[i] if meta is not None else None
                if m is not None and ((g.shape != m[0] or g.dtype != m[1]) if raw else
                                      rules.meta_of(g) != m):
                    g = _fit_to_input(node, i, g, m, ops)
                held = buffers.get(receiver)        # the common cases of _receive, spelled out:
                if held is None and nr == 0 and receiver._output_meta is None:
                    buffers[receiver] = g                       # the first gradient opens the buffer
                    push(heap, (-receiver._seq, receiver))
                elif nr == 0 and held is not None and held.__class__ is not list and not shared:
                    buffers[receiver] = held + g                # a later one is summed into new memory
                else:
                    _receive(buffers, shared, heap, receiver, nr, g)
                sent += 1
            # Seldom anything to mark shared: only after a shared gradient came in, or when two results sent might
            # share memory (unless they are two distinct arrays that own their memory, as MulBackward0's are).
            if raw and (shared_in or (sent > 1 and (len(results) > 2 or results[0] is results[1]
                                                    or results[0].base is not None or results[1].base is not None))):
                _mark_shared(node, results, grad, shared_in, buffers, shared, lent)

    except Exception:
        if anomalous and node is not None:
            anomaly.report(node)    # where the failing node was made, as PyTorch warns it
        raise
    finally:
        if timed is not None:
            timed.finish()          # the last node's evaluate_function range ends with the walk

def _receive(buffers, shared, heap, node, nr, grad):
    """Sum ``grad`` into slot ``nr`` of ``node``'s buffer (a list once a slot other than 0 is used); the first
    gradient opens the buffer and queues the node. A sum is new memory, the engine's own."""
    held = buffers.get(node)
    if held is None:
        heappush(heap, (-node._seq, node))
        if node._forward_cls is not None:
            # A custom Function's node (it always has _output_meta, so its buffer is always opened here): the
            # user's backward sees its gradients and may keep what it returns. -1: all of it is shared.
            shared[node] = -1
        if nr == 0 and node._output_meta is None:
            buffers[node] = grad
            return
        held = [None] * _num_outputs(node, nr)
    elif held.__class__ is not list:
        if nr == 0:
            buffers[node] = held + grad
            _summed(shared, node, 0)
            return
        held = [held]
    if len(held) <= nr:
        held.extend([None] * (nr + 1 - len(held)))
    buffers[node] = held
    if held[nr] is None:
        held[nr] = grad
    else:
        held[nr] = held[nr] + grad
        _summed(shared, node, nr)


def _summed(shared, node, nr):
    """Slot ``nr`` of ``node`` now holds a sum: new memory, which nobody else holds."""
    if shared.get(node, 0) > 0:
        shared[node] &= ~(1 << nr)


def _num_outputs(node, nr):
    meta = node._output_meta
    return nr + 1 if meta is None else max(len(meta), nr + 1)


def _mark_shared(node, results, grad, shared_in, buffers, shared, lent):
    """After ``node`` has sent its results, mark each receiving slot that now holds memory someone else may
    hold too: memory sent along two edges, a shared incoming gradient passed on (or a view of one), or any
    result at all when ``shared_in`` is negative (user code saw or made them: a custom Function's backward
    names what it still holds in ``_held_by_user``)."""
    if shared_in < 0:
        for array in node.__dict__.pop("_held_by_user", ()):
            _lend(lent, array)
    sent = [(edge, _memory(g)) for edge, g in zip(node.next_functions, results)
            if edge[0] is not None and g is not None]
    ids = [id(memory) for _, memory in sent]        # all alive here, so an id names one array
    if not shared_in and len(set(ids)) == len(ids):
        return                      # the usual answer: nothing came in shared, each memory went one way
    grads = grad if grad.__class__ is list else [grad]
    passed_on = [id(_memory(g)) for j, g in enumerate(grads) if g is not None and shared_in >> j & 1]
    for (receiver, nr), memory in sent:
        held = buffers[receiver]
        if memory is None or _memory(held[nr] if held.__class__ is list else held) is not memory:
            continue                # unknown owner (a leaf copies it anyway), or summed into new memory since
        if shared_in < 0 or ids.count(id(memory)) > 1 or id(memory) in passed_on:
            shared[receiver] = shared.get(receiver, 0) | 1 << nr


def _lend(lent, array):
    """Note that user code may hold ``array``'s memory."""
    memory = _memory(array)
    if memory is not None:
        lent[id(memory)] = memory       # kept alive by the walk, so the id names it until the walk ends


def _engine_only(array, buffers, lent):
    """Settle a marked slot's "maybe": True if the engine alone holds ``array``'s memory (see the module's
    docstring). Only leaves ask, and only for marked slots."""
    memory = _memory(array)
    if memory is None or id(memory) in lent:
        return False
    for held in buffers.values():
        for g in held if held.__class__ is list else (held,):
            if g is not None and _memory(g) is memory:
                return False
    return True


def watch(tensors):
    """Weak references to the Tensors user code is handed or returns (None entries skipped)."""
    return [weakref.ref(t) for t in tensors if t is not None]


def still_held(watched):
    """The arrays of the watched Tensors that someone still holds, once the engine has dropped its own
    references to them: user code kept them, so their memory is not the engine's alone."""
    return [t._data for t in (r() for r in watched) if t is not None]


def _memory(array):
    """The NumPy array that owns ``array``'s memory (itself, or the base of a view); None if that is not a
    plain array (a Python buffer, or the stand-in that ``as_strided`` leaves as base)."""
    if array.__class__ is not np.ndarray:
        return None
    base = array.base
    if base is None:
        return array
    return base if base.__class__ is np.ndarray and base.base is None else None


# --- the general steps: hooks, retain_grad, captures, partial runs, the complex guard ---------------------

class _Extras:
    """What a walk for ``autograd.grad`` or ``backward(inputs=...)`` adds: captures, and which nodes run. A node
    captured but not run gets its tensor hooks, retain_grad and the capture, not its own hooks or rule, as in
    PyTorch; a node neither captured nor run gets nothing."""

    __slots__ = ("capture", "captured", "owned", "capturing", "run_only")

    def __init__(self, roots, capture, accumulate, inputs=None):
        self.capture = capture or {}
        self.captured = [None] * len(self.capture)
        self.owned = [False] * len(self.capture)
        self.capturing = {n for n, _ in self.capture}
        root_nodes = [n for n, _ in roots]
        if inputs:
            targets = {n for n, _ in inputs}
            run = nodes_to_run(root_nodes, targets)
            # the inputs' own nodes run too, those the walk reaches (one no root leads to is not executed)
            reached = {n for r in run for n, _ in r.next_functions if n in targets}
            self.run_only = run | reached | (targets & set(root_nodes))
        else:
            self.run_only = None if accumulate else nodes_to_run(root_nodes, self.capturing)


def _step_with_extras(node, grad, shared_in, ops, extras, buffers, lent):
    """Run one node with everything around its rule. Returns ``(results, grads, shared_in)``, the incoming
    gradients as the rule saw them, or None when the node is not to run (a partial run) or is a leaf."""
    grads = grad if grad.__class__ is list else [grad]
    runs = extras is None or extras.run_only is None or node in extras.run_only
    if not runs and node not in extras.capturing:
        return None
    watched: list = []
    grads, shared_in = _before_rule(node, grads, shared_in, ops, extras, watched, lent, runs)
    for array in still_held(watched):
        _lend(lent, array)
    if not runs:
        return None
    if node.__class__ is AccumulateGrad:
        owned = not ops.recording and (not shared_in & 1 or _engine_only(grads[0], buffers, lent))
        node.accumulate(ops, grads[0], owned=owned)
        if node._hooks:             # as PyTorch: after the leaf's own post-accumulate hooks, with no results
            _post_hooks(node, (), grads, ops, [])
        return None
    results = run_rule(node, grads, ops)
    if node._hooks:
        results = _post_hooks(node, results, grads, ops, watched)
        shared_in = -1              # the hooks saw every gradient here, and may keep them
        for array in still_held(watched):
            _lend(lent, array)
    return results, grads, shared_in


def _step_in_anomaly_mode(node, grad, shared_in, ops, extras, buffers, lent):
    """``_step_with_extras`` in anomaly mode: the nodes the rule makes remember this one as their parent, and,
    with ``check_nan``, results with a NaN in them are refused."""
    state = anomaly.state
    parent, state.running = state.running, node
    try:
        step = _step_with_extras(node, grad, shared_in, ops, extras, buffers, lent)
    finally:
        state.running = parent
    if step is not None and state.check_nan:
        results = step[0]
        anomaly.check_nan(node, results if results.__class__ is tuple else (results,), not ops.recording)
    return step


def _fit_to_input(node, i, g, meta, ops):
    """Bring result ``i`` of ``node`` to its input's shape (summing over broadcast dims) and dtype, or refuse it
    with PyTorch's messages: a shape the input's cannot be expanded to, or a custom Function's complex gradient
    for a real input."""
    shape, dtype = meta
    got = tuple(g.shape)
    if got != shape and not _expandable(shape, got):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got {list(got)} "
                           f"but expected shape compatible with {list(shape)}")
    got_dtype = g.dtype if not ops.recording else rules.meta_of(g)[1]
    # (a built-in rule may hand a real input a complex gradient: its real part is kept, PyTorch's handle_r_to_c)
    if (dt.kind(got_dtype) != "f" and (got_dtype.kind == "c") != (dtype.kind == "c")
            and node._forward_cls is not None):
        raise RuntimeError("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) "
                           "to be true, but got false.  (Could this error message be improved?  If so, please "
                           "report an enhancement request to PyTorch.)")
    return ops.fix_meta(g, shape, dtype)


def _expandable(shape, target):
    """Whether ``shape`` broadcasts to ``target`` (PyTorch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return all(s in (t, 1) for s, t in zip(reversed(shape), reversed(target)))


def run_rule(node, grads, ops):
    """The rule of a node with several outputs (those that got no gradient get zeros, unless the node asks
    for None), or of a node on the general path; refused for complex gradients unless it is right for them."""
    if len(grads) > 1 and node._output_meta is not None and node._materialize_grads and any(g is None for g in grads):
        grads = [g if g is not None else _zeros(meta, ops) for g, meta in zip(grads, node._output_meta)]
    if not node.complex_ok and _produced_complex(grads, ops):
        if node.holomorphic:
            return _conjugate_rule(node, grads, ops)
        raise NotImplementedError(
            f"gradiente does not compute gradients of complex tensors through {node.name()} yet: its rule is "
            "written for real numbers, and PyTorch's convention for complex ones (the conjugate Wirtinger "
            "derivative) would give a different gradient. Real and imaginary parts can be differentiated "
            "separately (torch.view_as_real).")
    if ops is rules.batched_ops:
        return ops.apply_rule(node, grads)
    return node.backward(ops, *grads)


def _conjugate_rule(node, grads, ops):
    """A holomorphic node's rule on complex gradients: ``conj(rule(conj(grad)))`` = grad · conj(f'(z)), the
    conjugate Wirtinger convention (see ``Node.holomorphic``)."""
    conj = ops.conj
    results = node.backward(ops, *[None if g is None else conj(g) for g in grads])
    if results.__class__ is not tuple:
        return conj(results) if results is not None else None
    return tuple(None if r is None else conj(r) for r in results)


def _before_rule(node, grads, shared_in, ops, extras, watched, lent, runs):
    """Tensor hooks of this node's outputs (called with None for an output that got no gradient, as PyTorch
    does), then retain_grad, then captures, then, if the node ``runs``, its pre-hooks. A gradient that user code
    has seen is marked shared from then on; the Tensors it saw or returned are ``watched``, and captures are lent
    for good (``autograd.grad`` returns them)."""
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if not hooks:
                continue
            if nr >= len(grads) or grads[nr] is None:
                _call_tensor_hooks_on_none(hooks)
                continue
            grads[nr] = _call_tensor_hooks(hooks, grads[nr], ops, watched)
            shared_in |= 1 << nr
    if node.__class__ is AccumulateGrad and node.variable._hooks and grads[0] is not None:
        grads[0] = _call_tensor_hooks(node.variable._hooks, grads[0], ops, watched)   # a leaf's live on its tensor
        shared_in |= 1
    if node._retain_hooks:
        for nr, tensor_ref in node._retain_hooks.items():
            tensor = tensor_ref()
            if tensor is not None and nr < len(grads) and grads[nr] is not None:
                _retain(tensor, grads[nr], ops)
    if extras is not None:
        captured = extras.captured
        for nr, g in enumerate(grads):
            slot = extras.capture.get((node, nr))
            if slot is not None and g is not None:
                captured[slot] = g if captured[slot] is None else captured[slot] + g
                # the engine's own: a sum, or memory (a view of it included) that came in unmarked and that no
                # user code was lent; once captured it is marked and lent, so the rest of the walk leaves it alone
                memory = _memory(captured[slot])
                extras.owned[slot] = not ops.recording and memory is not None and (
                    captured[slot] is not g or (not shared_in >> nr & 1 and id(memory) not in lent))
                shared_in |= 1 << nr
                if not ops.recording:
                    _lend(lent, g)
    if node._pre_hooks and runs:
        wrapped = tuple(ops.wrap(g) if g is not None else None for g in grads)
        watched += watch(wrapped)
        for hook in list(node._pre_hooks.values()):
            result = hook(wrapped)
            if result is not None:
                wrapped = _checked_replacement(hook, wrapped, result)
                watched += watch(wrapped)
        grads = [ops.unwrap(g) if g is not None else None for g in wrapped]
        shared_in |= (1 << len(grads)) - 1
    return grads, shared_in


def _call_tensor_hooks(hooks, grad, ops, watched):
    """Run tensor hooks (``Tensor.register_hook``) on one gradient; a hook may return a replacement. Each
    Tensor a hook sees or returns is watched."""
    g = ops.wrap(grad)
    watched.append(weakref.ref(g))
    for hook in list(hooks.values()):
        result = hook(g)
        if result is not None:
            _check_replacement(hook, g, result)
            g = result
            watched.append(weakref.ref(g))
    return ops.unwrap(g)


def _call_tensor_hooks_on_none(hooks):
    """Tensor hooks of an output that got no gradient see None, and may not replace it."""
    for hook in list(hooks.values()):
        if hook(None) is not None:
            raise RuntimeError("can't replace a None gradient with a non-None value")


def _retain(tensor, grad, ops):
    """``retain_grad``: the tensor keeps its own copy (C-contiguous, as PyTorch's), summed over backward calls."""
    if tensor._grad is not None:
        tensor._grad = tensor._grad + grad if ops.recording else _tensor.Tensor._make(tensor._grad._data + grad)
    elif ops.recording:
        tensor._grad = grad.clone(memory_format="contiguous_format")
    else:
        tensor._grad = _tensor.Tensor._make(np.array(grad, copy=True, order="C"))


def _post_hooks(node, results, grads, ops, watched):
    """The node's hooks (``register_hook``): they see its results, brought to the inputs' shapes and dtypes,
    and its incoming gradients, and may replace the results. The Tensors they see or return are watched."""
    if results.__class__ is not tuple:
        results = (results,)
    meta = node._input_meta
    # as PyTorch's: brought to the inputs' shapes and dtypes, None for an input that needs no gradient
    fixed = tuple(None if g is None or edge[0] is None else _fit_to_input(node, i, g, m, ops) if m is not None else g
                  for i, (g, m, edge) in enumerate(zip(results, meta or (None,) * len(results), node.next_functions)))
    wrapped_in = tuple(ops.wrap(g) if g is not None else None for g in fixed)
    wrapped_out = tuple(ops.wrap(g) if g is not None else None for g in grads)
    watched += watch(wrapped_in) + watch(wrapped_out)
    for hook in list(node._hooks.values()):
        replaced = hook(wrapped_in, wrapped_out)
        if replaced is not None:
            wrapped_in = _checked_replacement(hook, wrapped_in, replaced)
            watched += watch(wrapped_in)
    return tuple(ops.unwrap(g) if g is not None else None for g in wrapped_in)


def _checked_replacement(hook, grads, result):
    """The gradients a node hook returned in place of ``grads``, checked as PyTorch checks them."""
    if result.__class__ is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(grads):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got {len(result)}, "
                           f"but expected {len(grads)})")
    for original, replacement in zip(grads, result):
        if replacement is not None:
            if original is None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            _check_replacement(hook, original, replacement)
    return result


def _check_replacement(hook, original, result):
    """A hook may replace a gradient only by a Tensor of the same dtype and shape (PyTorch's messages)."""
    if not isinstance(result, _tensor.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    was, got = original._data, result._data
    if was.dtype != got.dtype:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"torch.{FROM_NUMPY[was.dtype]._legacy} got torch.{FROM_NUMPY[got.dtype]._legacy})")
    if was.shape != got.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _hook_name(hook):
    return getattr(hook, "__name__", "<unknown>")


def nodes_to_run(roots, targets):
    """For ``autograd.grad`` and ``backward(inputs=...)``: the nodes whose rules must run because some
    capture target lies below them. Everything else is not run at all."""
    run: set = set()
    seen: set = set()
    for root in roots:
        if root is None or root in seen:
            continue
        seen.add(root)
        # an iterative post-order walk (a node is settled after everything it leads to); each stack entry keeps
        # its place in the node's edges, so no edge is looked at twice
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, edges = stack[-1]
            for nxt, _ in edges:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                for n, _ in node.next_functions:
                    if n is not None and (n in targets or n in run):
                        run.add(node)
                        break
    return run


def _produced_complex(grads, ops):
    return any(g is not None and (rules.meta_of(g)[1] if ops.recording else g.dtype).kind == "c" for g in grads)


def _zeros(meta, ops):
    zeros = np.zeros(meta[0], dtype=meta[1])
    return _tensor.Tensor._make(zeros) if ops.recording else zeros
