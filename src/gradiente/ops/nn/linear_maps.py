"""Ops linear in their input, ``out = A x`` for a fixed matrix ``A`` that depends only on shapes and arguments.

The gradient is then ``dx = Aᵀ grad``, and the gradient of that is ``A`` again; the tangent is ``out' = A x'``,
the map itself. Each such op is therefore a pair
of array functions, the map and its adjoint, recorded as a pair of nodes named as PyTorch names them
(``UpsampleBilinear2DBackward0`` and ``UpsampleBilinear2DBackwardBackward0``, ``Im2ColBackward0`` and
``Col2ImBackward0``, ...): each node's rule is the other's map, so derivatives of every order follow. Used by
``interpolation``, ``patches`` and ``rrelu``.
"""
from typing import Callable

from ...core.meta import kept_meta
from ...core.node import Node
from ...core.record import record, wants_grad, wrap

__all__ = ["linear_op", "linear_op_reading"]


class _LinearBackward(Node):
    """The node of an op linear in its input, ``out = A x``: ``dx = Aᵀ grad`` (``self.adjoint`` on arrays);
    ``out' = A x'`` (``self.linear``).

    Under ``create_graph`` each is itself recorded: the adjoint as ``adjoint_node`` with ``A`` as its rule, the
    map as this node's own class, so a derivative of a derivative is again one of these nodes."""

    linear: Callable        # A, array -> array
    adjoint: Callable       # Aᵀ, array -> array
    adjoint_node: type

    def backward(self, ops, grad):
        if ops.recording:
            if _reads_input(self.adjoint_node):
                (x,) = self.saved(ops)
                return (linear_op_reading(grad, x, self.adjoint, self.linear, self.adjoint_node),)
            return (linear_op(grad, self.adjoint, self.linear, self.adjoint_node),)
        return (kept_meta(self.adjoint(grad), grad),)

    def jvp(self, ops, x_t):
        if ops.recording:
            return linear_op(x_t, self.linear, self.adjoint, type(self))
        return self.linear(x_t)


def linear_op(x, linear, adjoint, node_cls):
    """``linear(x)`` on arrays, recorded as ``node_cls`` whose rule is ``adjoint`` (both array -> array)."""
    out = wrap(kept_meta(linear(x._data), x._data))
    if wants_grad(x):
        saved = (x,) if _reads_input(node_cls.adjoint_node) else ()     # the input the gradient's node reads
        record(node_cls, (x,), out, saved, linear=linear, adjoint=adjoint)
    return out


class _LinearGradientOfInput(_LinearBackward):
    """The node of ``A grad`` where PyTorch's kernel also takes the op's input ``x`` (which the value does not
    depend on): edges to grad and to x, as PyTorch's; ``dgrad = Aᵀ g``, ``dx = 0``; ``out' = A grad'``. It keeps
    x (its second edge's tensor) for the nodes its own rules record."""

    def backward(self, ops, grad):
        (dgrad,) = _LinearBackward.backward(self, ops, grad)
        x_node = self.next_functions[1][0]
        return dgrad, (None if x_node is None else ops.zeros(self._input_meta[1][0], grad))

    def jvp(self, ops, grad_t, x_t):
        if grad_t is None:
            return None
        if ops.recording:
            (x,) = self.saved(ops)
            return linear_op_reading(grad_t, x, self.linear, self.adjoint, type(self))
        return self.linear(grad_t)


def _reads_input(node_cls):
    """Whether ``node_cls`` has PyTorch's second edge, to the input of the op whose gradient it computes."""
    return issubclass(node_cls, _LinearGradientOfInput)


def linear_op_reading(x, input, linear, adjoint, node_cls):
    """``linear(x)`` recorded as ``node_cls`` (a ``_LinearGradientOfInput``) with a second edge, to ``input``."""
    out = wrap(kept_meta(linear(x._data), x._data))
    if wants_grad(x, input):
        record(node_cls, (x, input), out, (input,), linear=linear, adjoint=adjoint)
    return out


def _node_pair(forward_name, backward_name, formula, module, backward_reads_input=False):
    """Two ``_LinearBackward`` classes, each the other's adjoint: the op's node and its gradient's node, both
    belonging to ``module`` (the module that defines the op). ``backward_reads_input``: PyTorch's gradient node
    also has an edge to the op's input (see ``_LinearGradientOfInput``)."""
    forward = type(forward_name, (_LinearBackward,), {"__doc__": formula, "formula": formula, "__module__": module})
    backward = type(backward_name, (_LinearGradientOfInput if backward_reads_input else _LinearBackward,),
                    {"__doc__": f"the adjoint of {forward_name}", "formula": formula, "__module__": module})
    forward.adjoint_node, backward.adjoint_node = backward, forward
    return forward, backward
