"""Ops linear in their input, ``out = A x`` for a fixed matrix ``A`` that depends only on shapes and arguments.

The gradient is then ``dx = Aᵀ grad``, and the gradient of that is ``A`` again; the tangent is ``out' = A x'``,
the map itself. Each such op is therefore a pair
of array functions, the map and its adjoint, recorded as a pair of nodes named as PyTorch names them
(``UpsampleBilinear2DBackward0`` and ``UpsampleBilinear2DBackwardBackward0``, ``Im2ColBackward0`` and
``Col2ImBackward0``, ...): each node's rule is the other's map, so derivatives of every order follow. Used by
``interpolation``, ``patches`` and ``rrelu``.
"""
from typing import Callable

from ...core.node import Node
from ...core.record import record, wants_grad, wrap

__all__ = ["linear_op"]


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
            return (linear_op(grad, self.adjoint, self.linear, self.adjoint_node),)
        return (self.adjoint(grad),)

    def jvp(self, ops, x_t):
        if ops.recording:
            return linear_op(x_t, self.linear, self.adjoint, type(self))
        return self.linear(x_t)


def linear_op(x, linear, adjoint, node_cls):
    """``linear(x)`` on arrays, recorded as ``node_cls`` whose rule is ``adjoint`` (both array -> array)."""
    out = wrap(linear(x._data))
    if wants_grad(x):
        record(node_cls, (x,), out, linear=linear, adjoint=adjoint)
    return out


def _node_pair(forward_name, backward_name, formula, module):
    """Two ``_LinearBackward`` classes, each the other's adjoint: the op's node and its gradient's node, both
    belonging to ``module`` (the module that defines the op)."""
    forward = type(forward_name, (_LinearBackward,), {"__doc__": formula, "formula": formula, "__module__": module})
    backward = type(backward_name, (_LinearBackward,), {"__doc__": f"the adjoint of {forward_name}",
                                                        "formula": formula, "__module__": module})
    forward.adjoint_node, backward.adjoint_node = backward, forward
    return forward, backward
