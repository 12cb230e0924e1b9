"""``autograd.grad(..., is_grads_batched=True)`` as PyTorch computes it: the backward pass vmapped over the first
dimension of ``grad_outputs`` (``torch._vmap_internals._vmap``). Under vmap, ``autograd.grad`` with batched
gradients over a graph recorded without batching runs one walk whose rules compute on the batched gradient
(``core.backward.grad_of_batched``); a rule that vmap cannot batch makes the walk run once per entry instead.

The core calls ``grads_batched`` through ``core.backward.use_vmapped_grad``: vmap stands on this floor.
"""
from ..core import backward, creation

__all__ = ["grads_batched"]


def grads_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """The gradients of ``outputs`` in ``inputs`` for each entry of ``grad_outputs``' first dimension, stacked
    there (``grad_outputs`` already checked against the outputs' shapes)."""
    from .._vmap_internals import _vmap
    from ..func import _dispatch

    def vjp(batched_grad_outputs):
        return _dispatch.dispatch(backward.grad, (outputs, inputs, batched_grad_outputs),
                                  {"retain_graph": retain_graph, "create_graph": create_graph,
                                   "allow_unused": allow_unused})

    result = _vmap(vjp, 0, 0, allow_none_pass_through=True)(tuple(grad_outputs))
    if materialize_grads:
        # as PyTorch: an unused input's gradient is zeros of its own shape, without the batch dimension
        result = tuple(creation.zeros_like(x, requires_grad=True) if g is None else g for g, x in zip(result, inputs))
    return result
