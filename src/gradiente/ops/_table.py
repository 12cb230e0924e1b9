"""Elementwise tables: how one row (a function, its PyTorch node name and its derivative) becomes an op.

A row states its derivative once, as ``derivative(ops, v, x, out)``: ``v`` times f'(x), for a ``v`` of the
input's shape, computed with the rule namespace ``ops`` (see ``core.rules``). The Jacobian of an elementwise
function is diagonal, so that one product is both rules of the row's node: ``backward`` applies it to the
gradient (the VJP, grad·f'(x)) and ``jvp`` to the input's tangent (the JVP, x'·f'(x)). The row names what its
derivative reads, the input ``x``, the output ``out``, both or neither, and the forward saves just that.

For complex numbers the two differ: the VJP is grad·conj(f'(z)) and the JVP x'·f'(z). A row whose f is
holomorphic says so (``holomorphic``): the engine then runs its backward as conj(rule(conj(grad))), and its jvp
is right as it stands. abs, whose derivative PyTorch takes as a function of two reals, has rules of its own
(``complex_ok``); the other rows refuse complex gradients.
"""
import numpy as np

from ..core import dtype as dt
from ..core.creation import keep_layout, once_per_element
from ..core.diagnostics import state as _diagnostics
from ..core.dtype import scalar_name
from ..core.forward_grad import state as _forward
from ..core.grad_mode import state as _grad_state
from ..core.node import Node
from ..core.record import as_result, record, wants_grad
from ..core.tensor import Tensor
from .arithmetic import _write_out

__all__ = ["ElementwiseTable", "UnaryNode", "no_kernel"]


class UnaryNode(Node):
    """The node of a table row: its rules apply the row's ``derivative`` to the gradient and to the tangent."""
    __slots__ = ()
    #: what ``derivative`` reads: "x", "out", "x out" or "" (the forward saves them in that order)
    reads = ""

    @staticmethod
    def derivative(ops, v, x, out):
        """``v·f'(x)``; each row's node class has its own."""
        raise NotImplementedError

    def backward(self, ops, grad):
        return (self.times_derivative(ops, grad),)

    def jvp(self, ops, x_t):
        return self.times_derivative(ops, x_t)

    def times_derivative(self, ops, v):
        """``v·f'(x)``, with the saved ``x`` and ``out`` the row reads."""
        reads = self.reads
        if not reads:
            return self.derivative(ops, v, None, None)
        saved = self.saved(ops)
        return self.derivative(ops, v, saved[0] if "x" in reads else None, saved[-1] if "out" in reads else None)


def _own_jvp(rule):
    """A row's own forward rule, ``rule(ops, t, x, out)``, as its node's ``jvp``."""
    def jvp(self, ops, x_t):
        reads = self.reads
        saved = self.saved(ops) if reads else ()
        return rule(ops, x_t, saved[0] if "x" in reads else None, saved[-1] if "out" in reads else None)
    return jvp


def no_kernel(kernel, np_dtype):
    """PyTorch's error for a dtype that an op has no CPU kernel for."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(np_dtype)}\'')


class ElementwiseTable:
    """The rows of one module's elementwise table, in order: ``row`` makes each op, ``functions`` maps the
    names to them."""

    def __init__(self, module):
        self.module = module
        self.functions = {}

    def row(self, name, array_fn, node_name, reads, derivative, formula, *, keeps_integers=False,
            kernel_missing_for=None, complex_ok=False, holomorphic=False, jvp=None):
        """The op ``name``: ``array_fn`` on arrays, recorded as a ``UnaryNode`` class ``node_name`` whose rules
        are ``derivative(ops, v, x, out)``, reading the saved ``x`` and/or ``out`` (``reads``).

        Integer and bool inputs compute in the default float dtype (``exp`` of an int tensor), unless
        ``keeps_integers``; ``kernel_missing_for = (dtype kinds, kernel name)`` names the kinds PyTorch has no
        kernel for. float16 and bfloat16 compute in float32, rounded once, as in PyTorch. ``complex_ok``: the backward
        rule is PyTorch's for complex inputs too; ``holomorphic``: f is, and the engine conjugates around the
        backward rule for complex gradients (``Node.holomorphic``). ``jvp(ops, t, x, out)``: the forward rule,
        where it is not ``derivative`` (abs of a complex number)."""
        node_cls = type(node_name, (UnaryNode,), {
            "__slots__": (), "__doc__": formula, "__module__": self.module, "formula": formula, "reads": reads,
            "derivative": staticmethod(derivative), "complex_ok": complex_ok,
            "holomorphic": holomorphic})
        if jvp is not None:
            node_cls.jvp = _own_jvp(jvp)
        forward = _elementwise_forward(name, array_fn, node_cls, keeps_integers, kernel_missing_for)
        forward.__module__ = self.module
        self.functions[name] = forward
        return forward


def _elementwise_forward(name, array_fn, node_cls, keeps_integers, kernel_missing_for):
    saves_x, saves_out = "x" in node_cls.reads, "out" in node_cls.reads
    missing_kinds, kernel = kernel_missing_for or ("", "")

    def to_save(input, result):
        return (input,) * saves_x + (result,) * saves_out

    def forward(input, *, out=None):
        xa = input._data
        dtype = xa.dtype
        if dtype.kind in "fc" and dtype.itemsize != 2:
            # float32/64 and complex (the fast path of every call): NumPy's result already has PyTorch's dtype,
            # the input's, or the real dtype for abs of a complex input
            values = array_fn(xa) if 0 not in xa.strides or xa.size == 0 else once_per_element(array_fn, xa)
            if values.__class__ is np.ndarray:
                result = Tensor._make(keep_layout(values, xa))
            else:       # a NumPy scalar, from a 0-d input: the input's dtype, but abs of a complex number is real
                result = as_result(values, dtype if values.dtype.kind == dtype.kind else values.dtype)
        else:
            result = _other_dtypes(xa)
        if (input._requires_grad and _grad_state.enabled) or \
                ((_forward.on or _diagnostics.sites) and wants_grad(input)):     # (wants_grad notes a no_grad cut)
            record(node_cls, (input,), result, to_save(input, result))
        if out is not None:
            return _write_out(result, out, name)
        return result

    def _other_dtypes(xa):
        """Integers and bools (computed in the default float dtype, or in their own where the row keeps them),
        and float16 and bfloat16 (computed in float32 and rounded once, as PyTorch does)."""
        if dt.kind(xa.dtype) not in "fc":
            if not keeps_integers:
                xa = xa.astype(dt.get_default_dtype()._np)
            elif xa.dtype.kind in missing_kinds:
                raise no_kernel(kernel, xa.dtype)
        if xa.dtype in dt.REDUCED_FLOATS:
            return as_result(keep_layout(array_fn(xa.astype(np.float32)), xa), xa.dtype)
        values = keep_layout(array_fn(xa), xa)
        if values.__class__ is np.ndarray and values.dtype == xa.dtype:
            return Tensor._make(values)
        return as_result(values, xa.dtype)
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = f"Elementwise {name}. Backward: {node_cls.formula}"
    return forward

