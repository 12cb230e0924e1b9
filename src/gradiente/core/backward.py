"""The two ways into the backward pass: ``backward`` accumulates the gradients into the leaves' ``.grad``,
``grad`` returns them. Both check their arguments as PyTorch does (with its messages), make the starting
gradient of each output (1 for a scalar), and hand the walk to the engine (``engine.run_backward``).
"""
import warnings
from typing import Any, NamedTuple, cast

import numpy as np

from . import diagnostics, rules
from . import dtype as dt
from .engine import nodes_to_run, run_backward
from .size import Size
from .tensor import Tensor

__all__ = ["backward", "grad", "tensor_backward", "GradientEdge", "grad_of_batched", "use_vmapped_grad"]


class GradientEdge(NamedTuple):
    """PyTorch's ``torch.autograd.graph.GradientEdge``: where the gradient of a tensor is computed, the node
    and which of its outputs. ``backward(inputs=...)`` and ``grad`` accept one in place of a tensor, and
    ``grad`` as an output."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (tuple, list)) and not isinstance(x, GradientEdge):
        return tuple(x)
    return (x,)


def _root_grads(outputs, grad_outputs, create_graph, what="grad"):
    """The starting gradient of each output: given, or 1 for a scalar (PyTorch's checks and messages); and, per
    output, whether the gradient was made here (the engine's own memory) rather than given by the caller."""
    grads, made = [], []
    if len(grad_outputs) != len(outputs):
        if grad_outputs:
            raise RuntimeError(f"{what} requires grad_outputs to be the same length as outputs "
                               f"(got {len(grad_outputs)} and {len(outputs)})")
        grad_outputs = (None,) * len(outputs)
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(out, GradientEdge):
            grads.append(_edge_root_grad(out, g, create_graph))
            made.append(False)
            continue
        if not isinstance(out, Tensor):
            raise TypeError(f"{what}(): argument 'outputs' must be tuple of Tensors, not {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs"
                                   + diagnostics.learner_explanation("non_scalar_backward", tensor=out))
            if dt.kind(out._data.dtype) != "f":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            arr = np.ones_like(out._data, order="C")        # (a meta output's seed is meta: core/meta.py)
            grads.append(Tensor._make(arr) if create_graph else arr)
            made.append(True)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(np.asanyarray(g, dtype=out._data.dtype))
        if g._data.shape != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)!r} and "
                               f"output[{i}] has a shape of {Size(out._data.shape)!r}.")
        if (g._data.dtype.kind == "c") != (out._data.dtype.kind == "c"):    # else cast, as PyTorch (long too)
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same "
                               f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] "
                               f"has a dtype of {out.dtype}.")
        if g._data.dtype != out._data.dtype:
            g = g.to(out.dtype)
        grads.append(g if create_graph else g._data)
        made.append(False)
    return grads, made


def _edge_root_grad(edge, g, create_graph):
    """The starting gradient at an output given as a GradientEdge: ``g``, or 1 where the edge's value is known to
    be a scalar (a leaf's)."""
    if g is None:
        variable = getattr(edge.node, "variable", None)
        if variable is None or variable._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        arr = np.ones_like(variable._data, order="C")
        return Tensor._make(arr) if create_graph else arr
    if not isinstance(g, Tensor):
        raise TypeError(f"grad_outputs must be Tensors, not {type(g).__name__}")
    return g if create_graph else g._data


def _root(out):
    return (out.node, out.output_nr) if isinstance(out, GradientEdge) else out._grad_edge()


def _capture(inputs):
    """The engine's ``capture`` dict, ``{edge: slot}`` with one slot per distinct input, and each input's slot."""
    capture: dict[tuple, int] = {}
    slots: list[int] = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            slots.append(capture.setdefault((t.node, t.output_nr), len(capture)))
            continue
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        slots.append(capture.setdefault(t._grad_edge(), len(capture)))
    return capture, slots


_CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak.")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate into the ``.grad`` of the graph's leaves the gradient of ``tensors`` (weighted by
    ``grad_tensors``, the vector of a vector-Jacobian product; implicit 1 for a scalar)."""
    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads, made = _root_grads(outputs, _as_tuple(grad_tensors) if not isinstance(grad_tensors, Tensor)
                              else (grad_tensors,), create_graph, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    if diagnostics.state.learner is not None:   # learner mode: count passes, mark the graphs they use up
        diagnostics.state.learner.backward_started(outputs, retain_graph)
    if create_graph:
        # PyTorch's warning (Python's filters decide how often it shows, as for every warning of gradiente)
        warnings.warn(_CREATE_GRAPH_CYCLE, UserWarning, stacklevel=3)
    roots = [_root(t) for t in outputs]
    if inputs is None:
        run_backward(roots, grads, retain_graph, create_graph, made=made)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            edges.append((t.node, t.output_nr))     # a leaf's edge accumulates into the leaf; others into nothing
            continue
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        t.retain_grad()         # as PyTorch: a non-leaf input keeps its .grad from now on (a no-op on a leaf)
        edges.append(t._grad_edge())
    # only the inputs' nodes and those that lead to them run: a leaf's AccumulateGrad accumulates, with its hooks
    run_backward(roots, grads, retain_graph, create_graph, inputs=edges, made=made)

def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated into ``.grad``).

    ``is_grads_batched``: each of ``grad_outputs`` has a leading batch dimension, and each result gets one: the
    gradients for each batch entry, stacked. As in PyTorch, this is one backward pass vmapped over the batch,
    each node's rule running once on the batched gradient (``grad_of_batched``); a rule vmap cannot batch runs
    once per entry."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads, made = _root_grads(outputs, _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor)
                              else (grad_outputs,), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise TypeError(f"grad(): argument 'inputs' must be tuple of Tensors, not {type(t).__name__}")
    capture, slots = _capture(inputs)
    roots = [_root(t) for t in outputs]
    captured, owned = run_backward(roots, grads, retain_graph, create_graph, capture=capture, accumulate=False,
                            made=made)
    result = []
    for index, (t, slot) in enumerate(zip(inputs, slots)):
        g = captured[slot]
        if g is None:
            result.append(_unused_input_grad(index, t, allow_unused, materialize_grads, create_graph))
            continue
        if create_graph:
            result.append(g)
        elif owned[slot]:
            owned[slot] = False         # handed over once: an input listed twice gets a copy the second time
            result.append(Tensor._make(g))
        else:
            result.append(Tensor._make(np.array(g, copy=True)))
    return tuple(result)


#: ``is_grads_batched`` through vmap, handed down by ``gradiente.autograd`` (vmap stands on the API floor)
_vmapped_grad = None


def use_vmapped_grad(function):
    global _vmapped_grad  # noqa: PLW0603 - set once, at import, by gradiente.autograd
    _vmapped_grad = function


def grad_of_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``grad`` with vmap-batched ``grad_outputs`` over a graph recorded without batching (``outputs`` and
    ``inputs`` are plain): one walk, each node's rule computing on the batched gradient through vmap's dispatch
    (``rules.batched_ops``; a rule that cannot runs per example there). Returns the gradients (batched), or None
    when the walk met a value it cannot batch outside a rule (a hook's, say): the graph is then intact (the walk
    keeps it and frees it only once it succeeded), for a walk per example. Other errors are the caller's."""
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor) or g is None or not rules.is_batched(g):
            return None
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if tuple(g.shape) != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)!r} and "
                               f"output[{i}] has a shape of {Size(out._data.shape)!r}.")
    if any(not isinstance(t, Tensor) for t in inputs) or len(grad_outputs) != len(outputs):
        return None
    grads = [g if rules.meta_of(g)[1] == out._data.dtype else g.to(out.dtype) for out, g in zip(outputs, grad_outputs)]
    capture, slots = _capture(inputs)
    roots = [_root(t) for t in outputs]
    try:
        captured, _ = run_backward(roots, grads, True, create_graph, capture=capture, accumulate=False,
                                   ops=rules.batched_ops)
    except RuntimeError as error:
        if not rules.batched_ops.cannot_batch(error):
            raise
        return None
    if not (create_graph if retain_graph is None else retain_graph):
        for node in nodes_to_run([n for n, _ in roots], {n for n, _ in capture}):
            node._saved = None      # freed as a plain walk frees them: a second backward raises
    return tuple(_unused_input_grad(index, t, allow_unused, materialize_grads, create_graph)
                 if captured[slot] is None else captured[slot] for index, (t, slot) in enumerate(zip(inputs, slots)))


def _unused_input_grad(index, t, allow_unused, materialize_grads, create_graph):
    """What ``grad`` gives for an input no output reaches: PyTorch's error, None, or (materialized) zeros."""
    if not allow_unused:
        raise RuntimeError(f"The differentiated Tensor at index {index} appears to not have been used in the "
                           "graph. Set allow_unused=True if this is the desired behavior.")
    if not materialize_grads:
        return None
    if isinstance(t, GradientEdge):
        raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
    return Tensor._make(np.zeros_like(t._data), create_graph)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``grad`` for each entry of the batch dimension of ``grad_outputs``, results stacked along a new dim 0:
    through vmap once ``gradiente.autograd`` has handed it down, else one pass per entry."""
    batched = (grad_outputs,) if isinstance(grad_outputs, Tensor) else _as_tuple(grad_outputs)
    for i, (g, out) in enumerate(zip(batched, outputs)):
        if isinstance(g, Tensor) and isinstance(out, Tensor) and g._data.shape[1:] != out._data.shape:
            # PyTorch's wording, and its sizes: it prints the grad_output's shape less its first two dims
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {Size(g._data.shape[2:])!r} "
                f"and output[{i}] has a shape of {Size(out._data.shape)!r}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap.")
    if _vmapped_grad is not None and all(isinstance(g, Tensor) for g in batched) and len(batched) == len(outputs):
        return _vmapped_grad(outputs, inputs, batched, retain_graph, create_graph, allow_unused, materialize_grads)
    sizes = {g._data.shape[0] for g in batched if isinstance(g, Tensor) and g._data.ndim > 0}
    size = sizes.pop() if len(sizes) == 1 else 0
    per_entry = []
    for b in range(size):
        last = b == size - 1
        per_entry.append(grad(outputs, inputs, tuple(cast(Any, g)[b] if isinstance(g, Tensor) else g for g in batched),
                              retain_graph=retain_graph if last else True, create_graph=create_graph,
                              allow_unused=allow_unused, materialize_grads=materialize_grads))
    result: list[Any] = []
    for i in range(len(inputs)):
        column = [entry[i] for entry in per_entry]
        if not column or any(g is None for g in column):
            result.append(None)
            continue
        stacked = Tensor._make(np.stack([g._data for g in column]))
        if create_graph and any(g._requires_grad for g in column):
            stacked = rules.namespace(True).stack(column, 0)
        result.append(stacked)
    return tuple(result)


def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Run the backward pass from this tensor: the gradient of ``self`` with respect to every leaf of its graph
    that requires grad is *added* into that leaf's ``.grad`` (so empty ``.grad`` between steps).

    ``gradient``: for a non-scalar ``self``, a tensor of its shape, the ``v`` of the vector-Jacobian product
    ``Jᵀv`` that is computed; for a scalar it defaults to 1, and without it a non-scalar raises PyTorch's
    "grad can be implicitly created only for scalar outputs". ``retain_graph``: keep the values the graph saved,
    so that a second backward over it works (by default they are freed). ``create_graph``: record the backward
    pass itself, for higher derivatives. ``inputs``: accumulate only into these tensors.
    ``gradiente.explain(self)`` runs the same pass and tells it step by step."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)
