"""Arithmetic: ``+ - * / // % **``, ``neg``, ``reciprocal`` and their named forms; the shared body of binary
ops (``_binary``) and the ``out=`` keyword (``_write_out``); dtype casts.

Each op is a forward function next to its node class; each node's docstring is its math. The gradients
of broadcast inputs are reduced by the engine, never here.
"""
import re
from typing import ClassVar

import numpy as np

from ..core import dtype as dt
from ..core import layouts
from ..core.creation import empty_in_layout_of, in_iteration_layout, is_dense
from ..core.diagnostics import state as _diagnostics
from ..core.dtype import scalar_name
from ..core.errors import _require_tensor, broadcast_error, broadcast_shape, broadcasting
from ..core.forward_grad import has_tangent
from ..core.forward_grad import state as _forward
from ..core.fused import fma
from ..core.grad_mode import state as _grad_state
from ..core.inplace import apply_inplace, make_inplace, needs_grad, refuse_partial_overlap, untracked_change
from ..core.node import NOT_DIFFERENTIABLE_FORWARD, Node, tangent_sum
from ..core.power import power, rounded_power
from ..core.record import as_result, needs_derivative, promote_operands, record, wants_grad, wrap
from ..core.tensor import Tensor
from ..core.warnings_at_caller import warn

__all__ = ["add", "div", "divide", "float_power", "floor_divide", "fmod", "mul", "multiply", "neg", "negative",
           "positive", "pow", "reciprocal", "remainder", "rsub", "square", "sub", "subtract", "true_divide",
           "addcmul", "addcdiv"]

_FLOAT_DEFAULT = dt.get_default_dtype


# --- binary arithmetic ---------------------------------------------------------------------------------

class AddBackward0(Node):
    """out = x + alpha * y;  dx = grad;  dy = alpha * grad;  out' = x' + alpha * y'"""
    complex_ok = True
    __slots__ = ()
    formula = "∂(x + y)/∂x = 1,  ∂(x + y)/∂y = 1"
    alpha: float = 1

    def backward(self, ops, grad):
        alpha = self.alpha
        return grad, (grad if alpha == 1 else grad * alpha)

    def jvp(self, ops, x_t, y_t):
        return tangent_sum(x_t, None if y_t is None else y_t * self.alpha)


class SubBackward0(Node):
    """out = x - alpha * y;  dx = grad;  dy = -alpha * grad;  out' = x' - alpha * y'"""
    complex_ok = True
    __slots__ = ()
    formula = "∂(x - y)/∂x = 1,  ∂(x - y)/∂y = -1"
    alpha: float = 1

    def backward(self, ops, grad):
        return grad, -grad * self.alpha

    def jvp(self, ops, x_t, y_t):
        return tangent_sum(x_t, None if y_t is None else -y_t * self.alpha)


class RsubBackward1(Node):
    """out = c - alpha * x;  dx = -alpha * grad;  out' = -alpha * x'"""
    complex_ok = True
    __slots__ = ()
    formula = "∂(c - x)/∂x = -1"
    alpha: float = 1

    def backward(self, ops, grad):
        alpha = self.alpha
        return (-grad if alpha == 1 else -grad * alpha,)

    def jvp(self, ops, x_t):
        return -x_t * self.alpha


class MulBackward0(Node):
    """out = x * y;  dx = grad * y;  dy = grad * x;  out' = x' * y + x * y'"""
    holomorphic = True
    __slots__ = ()
    formula = "∂(x·y)/∂x = y,  ∂(x·y)/∂y = x"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (grad * y if edges[0][0] is not None else None,
                grad * x if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        return tangent_sum(None if x_t is None else x_t * y, None if y_t is None else x * y_t)


class DivBackward0(Node):
    """out = x / y;  dx = grad / y;  dy = -grad * ((x / y) / y);  out' = x' / y - y' * x / y²"""
    holomorphic = True
    __slots__ = ()
    formula = "∂(x/y)/∂x = 1/y,  ∂(x/y)/∂y = -x/y²"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        # dy in PyTorch's order of operations (div_tensor_other_backward), which bfloat16 rounds step by step
        return (grad / y if edges[0][0] is not None else None,
                -grad * ((x / y) / y) if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        return tangent_sum(None if x_t is None else x_t / y, None if y_t is None else -y_t * x / (y * y))


class ReciprocalBackward0(Node):
    """out = 1 / x;  dx = -grad * out²;  out' = -x' * out²"""
    holomorphic = True
    __slots__ = ()
    formula = "d/dx (1/x) = -1/x²"

    def backward(self, ops, grad):
        (out,) = self.saved(ops)
        return (-grad * (out * out),)

    def jvp(self, ops, x_t):
        (out,) = self.saved(ops)
        return -x_t * (out * out)


class PowBackward0(Node):
    """out = x ** p (p a number);  dx = grad * p * x ** (p - 1);  out' = x' * p * x ** (p - 1)"""
    holomorphic = True
    formula = "d/dx xⁿ = n·xⁿ⁻¹"
    exponent: float

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        p = self.exponent
        if p == 0:
            return (ops.zeros_like(grad),)
        # p · x^(p-1): MulBackward1, as PyTorch's; the power rounded as the forward's (core/power.py)
        return (grad * ops.times_number(ops.pow(x, p - 1), p),)

    def jvp(self, ops, x_t):
        (x,) = self.saved(ops)
        p = self.exponent
        return ops.zeros_like(x_t) if p == 0 else _real_base_share(ops, x,
                                                                   x_t * ops.times_number(ops.pow(x, p - 1), p))


class PowBackward1(Node):
    """out = x ** y;  dx = grad * y * x ** (y - 1);  dy = grad * out * log(x);
    out' = x' * y * x ** (y - 1) + y' * out * log(x)"""
    holomorphic = True
    __slots__ = ()
    formula = "∂(xʸ)/∂x = y·xʸ⁻¹,  ∂(xʸ)/∂y = xʸ·ln x"

    def backward(self, ops, grad):
        x, y, out = self.saved(ops)
        edges = self.next_functions
        return (self._through_x(ops, grad, x, y) if edges[0][0] is not None else None,
                self._through_y(ops, grad, x, y, out) if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, y_t):
        x, y, out = self.saved(ops)
        return tangent_sum(None if x_t is None else _real_base_share(ops, x, self._through_x(ops, x_t, x, y)),
                           None if y_t is None else self._through_y(ops, y_t, x, y, out))

    @staticmethod
    def _through_x(ops, v, x, y):
        # PyTorch's convention: where y == 0 the x-derivative is 0 (not 0·0⁻¹ = nan at x = 0).
        return ops.mask(ops.raw(y) != 0, v * (y * ops.pow(x, y - 1)))

    @staticmethod
    def _through_y(ops, v, x, y, out):
        # PyTorch's convention: where x == 0 and y is real and >= 0 the y-derivative is 0, not nan. A real base
        # with a complex exponent takes its logarithm as a complex number (ln(-1) = iπ), as PyTorch promotes it.
        result = ops.raw(out)
        if result.dtype.kind == "c" and ops.raw(x).dtype.kind != "c":
            x = ops.fix_meta(x, ops.raw(x).shape, result.dtype)
        zero_base = (ops.raw(x) == 0) & _nonnegative_real(ops.raw(y))
        return ops.mask(ops.logical_not(zero_base), v * (out * ops.log(x)))


def _real_base_share(ops, x, term):
    """PyTorch's pow forward formulas keep only the real part of a real base's term when the power is complex
    (its pow_backward ends in handle_r_to_c, and the jvp reuses it), although d(xʸ) = y·xʸ⁻¹·dx is complex there:
    done the same here, so that tangents print as PyTorch's."""
    if ops.raw(x).dtype.kind != "c" and ops.raw(term).dtype.kind == "c":
        return ops.real(term)
    return term


def _nonnegative_real(a):
    """y >= 0 for a real array; for a complex one, a real number >= 0 (PyTorch's test for pow's zero base)."""
    a = np.asanyarray(a)
    return (a.imag == 0) & (a.real >= 0) if a.dtype.kind == "c" else a >= 0


class PowBackward2(Node):
    """out = c ** x (c a number);  dx = grad * out * log(c);  out' = x' * out * log(c)"""
    holomorphic = True
    formula = "d/dx cˣ = cˣ·ln c"
    base: float

    def backward(self, ops, grad):
        return (self._times_derivative(ops, grad),)

    def jvp(self, ops, x_t):
        return self._times_derivative(ops, x_t)

    def _times_derivative(self, ops, v):
        (out,) = self.saved(ops)
        c = self.base
        if ops.raw(out).dtype.kind == "c":
            # ln c as a complex number, for a real base too (ln(-1) = iπ), as PyTorch promotes it
            log_c = np.log(complex(c))
            if c == 0:
                # PyTorch's 0 where the exponent is a real number >= 0, read off the output (0 or 1 there)
                result = ops.raw(out)
                return ops.mask(ops.logical_not((result == 0) | (result == 1)), v * (out * log_c))
            return v * (out * log_c)
        if c == 0:
            # out · ln 0 = out · -inf, with PyTorch's 0 where x >= 0 (out finite): -inf·v where x < 0 (out = inf).
            return ops.mask(ops.raw(out) == np.inf, v * -np.inf)
        return v * (out * float(np.log(c)))


class NegBackward0(Node):
    """out = -x;  dx = -grad;  out' = -x'"""
    complex_ok = True
    __slots__ = ()
    formula = "d/dx (-x) = -1"

    def backward(self, ops, grad):
        return (-grad,)

    def jvp(self, ops, x_t):
        return -x_t


_REAL_NUMBERS = (int, float)


def _binary(x, y, fn, node_cls, floating=False, save=True, unsigned_wide_kernel=None):
    """The shared body of binary ops: promote, compute, wrap, record.

    ``save``: True keeps both operands for the rule, False neither, or a function
    ``save(x, y, x_needs_grad, y_needs_grad)`` returning what to keep: keeping only what the rule will read
    lets the graph release the other operand (as PyTorch does), which matters for long chains.
    ``unsigned_wide_kernel``: the name of PyTorch's kernel, for an op it lacks for uint16/32/64 results."""
    xa, ya, target = promote_operands(x, y, floating)
    if unsigned_wide_kernel is not None and target in dt.UNSIGNED_WIDE_NP:
        dt.refuse_unsigned_wide(unsigned_wide_kernel, target)
    if target == dt.BFLOAT16:
        xa, ya = _in_float32(xa, fn), _in_float32(ya, fn)
    try:
        out = fn(xa, ya)
    except ValueError:
        raise broadcast_error(np.shape(xa), np.shape(ya)) from None
    out = in_iteration_layout(out, x._data if isinstance(x, Tensor) else xa, y._data if isinstance(y, Tensor) else ya)
    out = wrap(out) if out.__class__ is np.ndarray and out.dtype == target else as_result(out, target)
    if (_grad_state.enabled and ((isinstance(x, Tensor) and x._requires_grad) or
                                 (isinstance(y, Tensor) and y._requires_grad))) or \
            ((_forward.on or _diagnostics.sites) and wants_grad(x, y)):   # (wants_grad notes a no_grad cut)
        if dt.kind(out._data.dtype) not in "fc":
            raise RuntimeError("derivative for this operation is not implemented for integer results")
        if save is True:
            saved = (x, y)
        elif save is False:
            saved = ()
        else:
            saved = save(x, y, needs_derivative(x), needs_derivative(y))
        node = record(node_cls, (x, y), out, saved)
        if out._data.dtype.kind == "c" and (x.__class__ in _REAL_NUMBERS or y.__class__ in _REAL_NUMBERS):
            node.complex_ok = True      # a product or quotient with a real number: grad·c is grad·conj(c)
    return out


# PyTorch's CPU kernels compute bfloat16 in float32 and round the result once. A Python number meets them
# rounded to bfloat16 first (it becomes a bfloat16 0-d tensor), except in mul and div, whose kernels read it
# unrounded (``original_scalar_value``): x + 0.3 adds bfloat16(0.3) = 0.30078125, x * 0.3 multiplies by 0.3.
_READS_NUMBER_UNROUNDED = (np.multiply, np.true_divide)


def _in_float32(operand, fn):
    if operand.__class__ is np.ndarray:
        return operand.astype(np.float32)
    if fn in _READS_NUMBER_UNROUNDED or operand.__class__ not in _REAL_NUMBERS:
        return operand
    return float(np.float32(np.asanyarray(operand, dtype=dt.BFLOAT16)))


def _tensor_pair_op(name, np_fn, node_cls, doc, floating=False):
    """An op of two tensors (a number as ``other`` is a TypeError, as in PyTorch), broadcasting."""
    def op(input, other, *, out=None):
        _require_tensor(name, other)
        result = _binary(input, other, np_fn, node_cls, floating=floating)
        return result if out is None else _write_out(result, out, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _mul_saves(x, y, x_needs, y_needs):
    """dx = grad·y needs y; dy = grad·x needs x."""
    return (x if y_needs else None, y if x_needs else None)


def _div_saves(x, y, x_needs, y_needs):
    """dx = grad/y needs y; dy = -grad·x/y² needs x and y."""
    return (x if y_needs else None, y)


def _integer_division_operands(kernel, xa, ya, target):
    """PyTorch's checks before an integer division (``//``, ``%``, fmod, ``div`` with a rounding mode): no
    kernel for bools, and a RuntimeError where NumPy would quietly give 0 for a zero divisor."""
    if target.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    dt.refuse_unsigned_wide(kernel, target)
    if target.kind in "iu" and np.any(np.asanyarray(ya) == 0):
        raise RuntimeError("ZeroDivisionError")


def _is_bool(value):
    return value.__class__ is bool or (isinstance(value, Tensor) and value._data.dtype == np.bool_)


def _check_bool_subtraction(x, y):
    """PyTorch refuses ``-`` when either side is a bool (a tensor or a Python bool)."""
    if _is_bool(x) and _is_bool(y):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(x) or _is_bool(y):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _scale(y, alpha):
    if alpha == 1:
        return y
    return y * alpha


def _carries_alpha(other, alpha):
    """Whether ``add``/``sub`` records alpha on its node, as PyTorch's AddBackward0 and SubBackward0 do, rather
    than scaling ``other`` first: for a tensor and a real alpha (a complex alpha's rule would need its conjugate)."""
    return isinstance(other, Tensor) and alpha.__class__ in _REAL_NUMBERS


def _untracked(t):
    """``t``'s values outside the graph (no edge, no tangent), to compute with before recording by hand."""
    return Tensor._make(t._data) if isinstance(t, Tensor) else t


def _with_alpha(input, other, alpha, ufunc, node_cls):
    """``input ± alpha * other`` as one node that carries alpha: its rule scales other's gradient, so no
    MulBackward0 stands between the node and ``other``."""
    result = _binary(_untracked(input), _scale(_untracked(other), alpha), ufunc, node_cls, save=False)
    if wants_grad(input, other):
        record(node_cls, (input, other), result, alpha=alpha)
    return result


def _checked_alpha(input, other, alpha):
    """``alpha`` as add and sub use it, after PyTorch's checks of it against the result's dtype (a float alpha only
    for floating results, a bool alpha only for bool ones, a complex one only for complex ones). A bool result adds
    in bool arithmetic, where any nonzero alpha is True: the alpha to use is then 1, or 0 (returned as False)."""
    result = dt.result_type(input, other)
    if alpha.__class__ is bool and result is not dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, complex) and not result.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    if isinstance(alpha, float) and not (result.is_floating_point or result.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if result is dt.bool:
        return 1 if alpha else False
    return alpha


def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, broadcasting."""
    if alpha.__class__ is not int or alpha != 1:
        alpha = _checked_alpha(input, other, alpha)
    if alpha is False:                  # bool arithmetic with alpha 0: nothing is added
        other = _binary(_untracked(other), False, np.logical_and, AddBackward0, save=False) \
            if isinstance(other, Tensor) else False
        alpha = 1
    if alpha != 1:
        if _carries_alpha(other, alpha):
            dt.refuse_unsigned_wide_operands("add_stub", input, other)
            result = _with_alpha(input, other, alpha, np.add, AddBackward0)
            return result if out is None else _write_out(result, out, "add")
        other = _scale(other, alpha)
    result = _binary(input, other, np.add, AddBackward0, save=False, unsigned_wide_kernel="add_stub")
    return result if out is None else _write_out(result, out, "add")


def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other, broadcasting."""
    _check_bool_subtraction(input, other)
    dt.refuse_unsigned_wide_operands("add_stub", input, other)
    if alpha.__class__ is not int or alpha != 1:
        alpha = _checked_alpha(input, other, alpha)
    if alpha != 1:
        if isinstance(input, Tensor) and _carries_alpha(other, alpha):
            return _write_out(_with_alpha(input, other, alpha, np.subtract, SubBackward0), out, "sub")
        other = _scale(other, alpha)
    if not isinstance(input, Tensor):
        return rsub(other, input)
    return _write_out(_binary(input, other, np.subtract, SubBackward0, save=False), out, "sub")


subtract = sub


def rsub(input, other, alpha=1):
    """other - alpha * input (``2 - x``)."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    _check_bool_subtraction(other, input)
    xa, ca, target = promote_operands(input, other)
    if target == dt.BFLOAT16:
        xa, ca = _in_float32(xa, np.subtract), _in_float32(ca, np.subtract)
    out = as_result(np.subtract(ca, xa if alpha == 1 else xa * alpha), target)
    if wants_grad(input):
        if alpha == 1:
            record(RsubBackward1, (input,), out)
        else:
            record(RsubBackward1, (input,), out, alpha=alpha)
    return out


def mul(input, other, *, out=None):
    """input * other, broadcasting."""
    result = _binary(input, other, np.multiply, MulBackward0, save=_mul_saves)
    return result if out is None else _write_out(result, out, "mul")


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """input / other; integer inputs give the default float dtype unless a rounding_mode is given."""
    if rounding_mode is not None:
        return _write_out(_rounded_div(input, other, rounding_mode), out, "div")
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    return _write_out(_binary(input, other, np.true_divide, DivBackward0, floating=True, save=_div_saves), out, "div")


divide = true_divide = div


def _rtruediv(self, other):
    """``c / x`` is ``reciprocal(x) * c``, as PyTorch records it."""
    return mul(reciprocal(self), other)


def _rounded_div(x, y, mode):
    xa, ya, target = promote_operands(x, y)
    if mode in ("floor", "trunc"):
        _integer_division_operands(f"div_{mode}_cpu", xa, ya, target)
    if mode == "floor":
        out = _floor_quotient(xa, ya)
    elif mode == "trunc":
        out = np.trunc(np.true_divide(xa, ya)) if target.kind not in "iu" else _int_trunc_div(xa, ya)
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'")
    out = as_result(out, target)
    if wants_grad(x, y):
        record(_ZeroGradBackward.named("DivBackward2"), (x, y), out)      # PyTorch's name, number or tensor
    return out


def _floor_quotient(xa, ya):
    """floor(x / y) as PyTorch's ``div_floor`` computes it for floats: from fmod, (x - fmod(x, y)) / y corrected,
    which is NumPy's floor_divide (plain floor(x / y) is one too many where x / y rounds up to a whole number:
    -0.1438.../-0.01438... is 10.0 in floating point, 9 by this)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(xa, ya)


def _int_trunc_div(xa, ya):
    q = np.floor_divide(xa, ya)
    fix = (np.remainder(xa, ya) != 0) & ((np.asanyarray(xa) < 0) != (np.asanyarray(ya) < 0))
    return q + fix


def floor_divide(input, other):
    """Floor of input / other. Its gradient is zero almost everywhere; PyTorch does not define one."""
    xa, ya, target = promote_operands(input, other)
    _integer_division_operands("div_floor_cpu", xa, ya, target)
    out = broadcasting(_floor_quotient, xa, ya)
    return _without_derivative("floor_divide", (input, other), as_result(out, target))


def _rfloordiv(self, other):
    return floor_divide(other, self) if isinstance(other, Tensor) else floor_divide(_as_tensor_like(other, self), self)


def remainder(input, other):
    """Python-style modulus (sign of the divisor); d/dx = 1, d/dy = -floor(x / y)."""
    xa, ya, target = promote_operands(input, other)
    _integer_division_operands("remainder_cpu", xa, ya, target)
    out = as_result(broadcasting(np.remainder if target.kind in "iu" else _float_remainder, xa, ya), target)
    if wants_grad(input, other):
        record(RemainderBackward1 if isinstance(other, Tensor) else RemainderBackward0, (input, other), out,
               (input, other))
    return out


def _float_remainder(xa, ya):
    """x mod y with the sign of y, as PyTorch computes it: fmod(x, y), plus y where their signs differ. A zero
    keeps fmod's sign (the dividend's), where NumPy's remainder gives it y's."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mod = np.fmod(xa, ya)
        return np.where((mod != 0) & ((np.asanyarray(ya) < 0) != (mod < 0)), mod + ya, mod)


def _rmod(self, other):
    return remainder(_as_tensor_like(other, self), self)


def fmod(input, other):
    """C-style modulus (sign of the dividend)."""
    xa, ya, target = promote_operands(input, other)
    _integer_division_operands("fmod_cpu", xa, ya, target)
    out = as_result(broadcasting(np.fmod, xa, ya), target)
    if wants_grad(input, other):
        record(FmodBackward1 if isinstance(other, Tensor) else FmodBackward0, (input, other), out, (input, other))
    return out


def _rounded_quotient_backward(node, ops, grad, rounding):
    """out = x - rounding(x / y) * y;  dx = grad;  dy = -grad * rounding(x / y) (piecewise constant: under
    create_graph it is recorded, as PyTorch records it, so dy stays connected to x and y with a zero derivative)"""
    x, y = node.saved(ops)
    dy = None
    if node.next_functions[1][0] is not None:
        mode = "floor" if rounding is np.floor else "trunc"
        if ops.recording:               # Tensors here: the rounded division is recorded (DivBackward2)
            dy = -grad * _rounded_div(x, y, mode)
        else:
            xa, ya = ops.raw(x), ops.raw(y)
            with np.errstate(divide="ignore", invalid="ignore"):
                quotient = _floor_quotient(xa, ya) if mode == "floor" else np.trunc(np.true_divide(xa, ya))
            dy = -grad * ops.constant(quotient, grad)
    return grad, dy


class RemainderBackward0(Node):
    """out = x - floor(x / y) * y;  dx = grad;  dy = -grad * floor(x / y)"""
    formula = "∂(x mod y)/∂x = 1,  ∂(x mod y)/∂y = -⌊x/y⌋"

    def backward(self, ops, grad):
        return _rounded_quotient_backward(self, ops, grad, np.floor)


class RemainderBackward1(RemainderBackward0):
    """out = x - floor(x / y) * y with a tensor y (PyTorch's name for the tensor-tensor overload)"""


class FmodBackward0(Node):
    """out = x - trunc(x / y) * y;  dx = grad;  dy = -grad * trunc(x / y)"""
    formula = "∂fmod(x, y)/∂x = 1,  ∂fmod(x, y)/∂y = -trunc(x/y)"

    def backward(self, ops, grad):
        return _rounded_quotient_backward(self, ops, grad, np.trunc)


class FmodBackward1(FmodBackward0):
    """out = x - trunc(x / y) * y with a tensor y (PyTorch's name for the tensor-tensor overload)"""


class _ZeroGradBackward(Node):
    """A piecewise-constant op: its gradient is zero wherever it is defined."""
    formula = "derivative 0 (piecewise constant)"
    _cache: ClassVar[dict] = {}

    @classmethod
    def named(cls, name):
        if name not in cls._cache:
            cls._cache[name] = type(name, (cls,), {"__doc__": cls.__doc__})
        return cls._cache[name]

    def backward(self, ops, grad):
        return tuple(ops.zeros_like(grad) if e[0] is not None else None for e in self.next_functions)


class _NotImplementedBackward(Node):
    """out = op(x, ...), an op PyTorch gives no derivative (floor_divide, bincount, histogram, binomial, ...);
    backward raises PyTorch's error, naming the op (``self.op``)."""
    formula = "no derivative defined"
    op: str

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, ops, *grads):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")

    def jvp(self, ops, *tangents):
        raise NotImplementedError(NOT_DIFFERENTIABLE_FORWARD.format(op=f"aten::{self.op}"))


# PyTorch's class name, grad_fn=<NotImplemented>: a class statement cannot say it without hiding the builtin
_NotImplementedBackward.__name__ = _NotImplementedBackward.__qualname__ = "NotImplemented"


def _without_derivative(op, inputs, outputs):
    """``outputs`` (a tensor or a sequence of them), recorded when an input requires grad as the results of
    ``op``, which has no derivative: backward through them raises, as PyTorch's does."""
    if wants_grad(*inputs):
        record(_NotImplementedBackward, inputs, outputs, op=op)
    return outputs


def _as_tensor_like(value, like):
    return wrap(np.asanyarray(value, dtype=dt.result_type(like, value)._np))


def pow(input, exponent):
    """input ** exponent; tensor or number on either side."""
    if not isinstance(input, Tensor):
        return _pow_scalar_base(input, exponent)
    if isinstance(exponent, Tensor):
        xa, ya, target = promote_operands(input, exponent)
        values = broadcasting(_integer_safe_power if target.kind in "iu" else rounded_power, xa, ya)
        out = as_result(in_iteration_layout(values, input._data, exponent._data), target)     # as _binary's
        if wants_grad(input, exponent):
            record(PowBackward1, (input, exponent), out, (input, exponent, out))
        return out
    xa, p, target = promote_operands(input, exponent)
    if target.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    out = as_result(power(xa, p), target)
    if wants_grad(input):
        record(PowBackward0, (input,), out, (input,), exponent=exponent)
    return out


def _integer_safe_power(xa, ya):
    """Integer powers with tensor exponents as PyTorch computes them: a negative exponent gives 0, except for
    bases 1 (1) and -1 (±1), where NumPy refuses negative integer exponents altogether."""
    ya = np.asanyarray(ya)
    if not (ya < 0).any():
        return np.power(xa, ya)
    xa, ya = np.broadcast_arrays(np.asanyarray(xa), ya)
    result = np.power(xa, np.where(ya < 0, 0, ya))
    negative = ya < 0
    one = np.ones((), result.dtype)
    minus_one_power = np.where(ya % 2 == 0, one, -one) if result.dtype.kind == "i" else one
    at_negative = np.where(xa == 1, one, np.where(xa == -1, minus_one_power, np.zeros((), result.dtype)))
    return np.where(negative, at_negative, result)


def _pow_scalar_base(exponent, base):
    """base ** exponent with a number as the base."""
    if not isinstance(exponent, Tensor):
        exponent, base = base, exponent
    xa, ca, target = promote_operands(exponent, base)
    out = as_result(rounded_power(ca, xa), target)
    if wants_grad(exponent):
        record(PowBackward2, (exponent,), out, (out,), base=base)
    return out


def float_power(input, exponent):
    """``input ** exponent`` computed in double precision, whatever the inputs' dtypes: the result is
    float64 (complex128 for complex inputs)."""
    return pow(input.double() if isinstance(input, Tensor) else input,
               exponent.double() if isinstance(exponent, Tensor) else exponent)


def square(input):
    """input ** 2 (recorded as PowBackward0, as in PyTorch)."""
    if input._data.dtype == np.bool_:
        return pow(input.long(), 2)
    return pow(input, 2)


def neg(input):
    """``-input``, elementwise (also ``negative``); raises for bool tensors, as PyTorch does."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    dt.refuse_unsigned_wide("neg_cpu", input._data.dtype)
    out = np.negative(input._data)
    out = wrap(out) if out.__class__ is np.ndarray else as_result(out)     # NumPy gives 0-d results as scalars
    if wants_grad(input):
        record(NegBackward0, (input,), out)
    return out


negative = neg


def positive(input):
    """``+input``: ``input`` itself, unchanged; raises for bool tensors, as PyTorch does."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def reciprocal(input):
    """1 / input; integer input gives the default float dtype."""
    xa = input._data
    if dt.kind(xa.dtype) not in "fc":
        xa = xa.astype(_FLOAT_DEFAULT()._np)
    out = as_result(np.reciprocal(xa))
    if wants_grad(input):
        record(ReciprocalBackward0, (input,), out, (out,))
    return out


def op_name(node_cls):
    """The op a node class records, as PyTorch names it in messages: ``ClampMinBackward0`` -> ``clamp_min``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", re.sub(r"Backward\d*$", "", node_cls.__name__)).lower()


def _write_out(result, out, name, *, reported=None):
    """Support for the ``out=`` keyword of op ``name``: copy into ``out``. Refused, as in PyTorch, when autograd
    would have to follow it: an input or ``out`` requires grad, or, in forward mode, carries a tangent. The
    refusal names the recorded op, or ``reported`` where PyTorch names another (matmul records an mm)."""
    if out is None:
        return result
    if result.grad_fn is not None or (out._requires_grad and wants_grad(out)):
        recorded = op_name(type(result.grad_fn)) if result.grad_fn is not None else name
        raise RuntimeError(f"{reported or recorded}(): functions "
                           "with out=... arguments don't support automatic differentiation, but one of the "
                           "arguments requires grad.")
    if _forward.on and (has_tangent(result) or has_tangent(out)):
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support it because it is "
                                  "an out= function")
    out._data = np.array(result._data, dtype=out._data.dtype) if out._data.shape != result._data.shape \
        else out._data
    if out._data is not result._data:
        np.copyto(out._data, result._data, casting="unsafe")
    out._bump_version()
    return out


# --- casts ---------------------------------------------------------------------------------------------

class ToCopyBackward0(Node):
    """out = x converted to another dtype;  dx = grad converted back;  out' = x' converted"""
    complex_ok = True
    __slots__ = ()
    formula = "d/dx convert(x) = 1 (converted back to x's dtype)"

    def backward(self, ops, grad):
        return (grad,)      # the engine converts it back to the input's dtype

    def jvp(self, ops, x_t):
        return x_t          # the engine converts it to the output's dtype


def cast(input, dtype, memory_format=None):
    """The tensor converted to ``dtype`` (a copy; recorded when both are floating), laid out in ``memory_format``
    if one is given (``x.to(memory_format=torch.channels_last)``)."""
    data = input._data
    to_real = data.dtype.kind == "c" and not dtype.is_complex
    source = data.real if to_real else data
    if memory_format is not None and layouts.name_of(memory_format) != "preserve_format":
        out = wrap(layouts.laid_out(source, memory_format).astype(dtype._np, order="K"))
    elif source.ndim < 2 or is_dense(source):
        out = wrap(source.astype(dtype._np))
    else:       # PyTorch's layout for memory that is not dense (infer_dense_strides); NumPy's order "K" differs
        values = empty_in_layout_of(source, dtype._np)
        values[...] = source
        out = wrap(values)
    if wants_grad(input) and (dtype.is_floating_point or dtype.is_complex):
        if to_real:     # PyTorch warns where the discarded imaginary part would have had a gradient
            warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        record(ToCopyBackward0, (input,), out)
    return out


# --- in-place forms that need more than the one in-place mechanism ------------------------------------------

def _augmented(op, ufunc, alpha_first=False):
    """``x.add_(y)`` / ``x += y``: ``op`` through the in-place mechanism, or, when nothing is recorded, one
    NumPy ``ufunc`` writing straight into x's memory (the optimizer pattern ``p -= lr * p.grad``). With
    ``alpha_first``, also PyTorch's deprecated order ``x.add_(alpha, other)``."""
    def method(self, other, *deprecated, **kwargs):
        if alpha_first and deprecated:
            other, kwargs["alpha"] = deprecated[0], other
            _warn_alpha_first(op.__name__ + "_")
        elif deprecated:
            raise TypeError(f"{op.__name__}_() takes 2 positional arguments but {2 + len(deprecated)} were given")
        inputs = (other,) if isinstance(other, Tensor) else ()
        if not kwargs and _direct(self, other):
            refuse_partial_overlap(self, inputs)
            ufunc(self._data, other._data if isinstance(other, Tensor) else other, out=self._data)
            self._version_box[0] += 1
            untracked_change(self)
            return self
        return apply_inplace(self, lambda old: op(old, other, **kwargs), inputs)
    method.__name__ = method.__qualname__ = op.__name__ + "_"
    method.__doc__ = f"In-place ``{op.__name__}``."
    return method


def _direct(tensor, other):
    """Whether ``tensor op= other`` can run as one NumPy ufunc with ``out=``: nothing to record, the
    same floating dtype (or a Python number), and no broadcasting of the target."""
    a = tensor._data
    if a.dtype.kind != "f" or not a.flags.writeable:      # (bfloat16's NumPy kind is "V": the general path)
        return False
    if _grad_state.enabled and (needs_grad(tensor) or getattr(other, "_requires_grad", False)):
        return False
    if _forward.on and wants_grad(tensor, other):
        return False
    if not isinstance(other, Tensor):
        return other.__class__ is float or other.__class__ is int
    b = other._data
    if b.dtype != a.dtype:
        return False
    if b.ndim == 0:
        return True
    # only an operand that broadcasts to exactly the target's shape; anything else takes the general path,
    # which raises PyTorch's messages
    if b.shape != a.shape and (b.ndim > a.ndim or any(s not in (1, t) for s, t in zip(b.shape[::-1], a.shape[::-1]))):
        return False
    return not np.may_share_memory(a, b)


#: the overloads PyTorch warned about, once per process for whichever deprecated overload comes first
_alpha_first_warned: set = set()


def _warn_alpha_first(name):
    """PyTorch's warning for ``x.add_(alpha, other)`` (the old tutorials' ``p.data.add_(-lr, p.grad.data)``)."""
    if not _alpha_first_warned:
        _alpha_first_warned.add(name)
        warn(f"This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor other)\nConsider using one of "
             f"the following signatures instead:\n\t{name}(Tensor other, *, Number alpha = 1) (Triggered internally "
             "at /__w/pytorch/pytorch/torch/csrc/utils/python_arg_parser.cpp:1841.)", UserWarning, stacklevel=3)


add_ = _augmented(add, np.add, alpha_first=True)
sub_ = _augmented(sub, np.subtract, alpha_first=True)
mul_ = _augmented(mul, np.multiply)
div_ = _augmented(div, np.true_divide)
_float_power_in_place = make_inplace(float_power, "float_power_")


def float_power_(self, exponent):
    """In-place ``float_power``; the result is double, so PyTorch refuses to narrow it back into a tensor of
    another floating dtype."""
    if dt.kind(self._data.dtype) == "f" and self._data.dtype != np.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {scalar_name(self._data.dtype)} but the "
                           "operation's result requires dtype Double")
    return _float_power_in_place(self, exponent)


# --- addcmul, addcdiv: fused products with a sum ------------------------------------------------------------

class AddcmulBackward0(Node):
    """out = x + v·t1·t2;  dx = grad;  dt1 = grad·v·t2;  dt2 = grad·v·t1"""
    holomorphic = True
    formula = "∂/∂x = 1,  ∂/∂t1 = v·t2,  ∂/∂t2 = v·t1"

    def backward(self, ops, grad):
        t1, t2 = self.saved(ops)
        (_, _), (t1_node, _), (t2_node, _) = self.next_functions
        v = self.value
        return (grad,
                grad * (t2 * v) if t1_node is not None else None,
                grad * (t1 * v) if t2_node is not None else None)


class AddcdivBackward0(Node):
    """out = x + v·t1/t2;  dx = grad;  dt1 = grad·v/t2;  dt2 = -grad·v·t1/t2²"""
    holomorphic = True
    formula = "∂/∂x = 1,  ∂/∂t1 = v/t2,  ∂/∂t2 = -v·t1/t2²"

    def backward(self, ops, grad):
        t1, t2 = self.saved(ops)
        (_, _), (t1_node, _), (t2_node, _) = self.next_functions
        v = self.value
        return (grad,
                grad * v / t2 if t1_node is not None else None,
                -grad * v * t1 / (t2 * t2) if t2_node is not None else None)


_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")


def _addc(name, input, tensor1, tensor2, value, combine, node_cls):
    """``combine(input, value·tensor1, tensor2)`` in the three tensors' common dtype (value cast to it, as
    PyTorch casts it: 0.5 becomes 0 for integer tensors); value·tensor1 first, as PyTorch orders it."""
    for position, (arg, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        _require_tensor(name, t, position, arg)
    target = dt.result_type(input, tensor1, tensor2)._np
    if name == "addcdiv" and tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(_INTEGER_ADDCDIV)
    if target == np.bool_:
        raise NotImplementedError(f'"{name}_cpu_out" not implemented for \'Bool\'')
    x, a, b = (t._data.astype(target, copy=False) for t in (input, tensor1, tensor2))
    v = np.asanyarray(value).astype(target)
    broadcast_shape(x.shape, a.shape, b.shape)
    values = in_iteration_layout(combine(x, v * a, b), input._data, tensor1._data, tensor2._data)
    result = as_result(values, target)
    if wants_grad(input, tensor1, tensor2):
        record(node_cls, (input, tensor1, tensor2), result, (tensor1, tensor2), value=value)
    return result


def _fused_multiply_add(x, scaled, b):
    """x + scaled·b rounded once, as PyTorch's kernel fuses it: ``fused.fma`` for float32; for float64, in long
    double where the platform has one, which agrees with a true fused multiply-add nearly always."""
    if dt.kind(x.dtype) != "f":
        return x + scaled * b
    if x.dtype == np.float32:
        return fma(scaled, b, x, np.float32)
    wide = np.longdouble if x.dtype == np.float64 else np.float64
    return (scaled.astype(wide) * b + x).astype(x.dtype)


def _add_divided(x, scaled, b):
    return x + scaled / b


def addc_method_arguments(name):
    """The argument check of ``addcmul_``/``addcdiv_`` (``name``): PyTorch's parser refuses a non-tensor
    ``tensor1`` or ``tensor2`` in the method's words and positions (``(tensor1, tensor2, *, value)``) before the
    in-place op checks anything. The deprecated ``(value, tensor1, tensor2)`` form is left to the op."""
    def check(*args, **kwargs):
        if len(args) > 2:
            return
        given = dict(zip(("tensor1", "tensor2"), args))
        for position, arg in enumerate(("tensor1", "tensor2"), 1):
            if arg in given or arg in kwargs:
                t = given[arg] if arg in given else kwargs[arg]
                if not isinstance(t, Tensor):
                    where = f" (position {position})" if arg in given else ""
                    raise TypeError(f"{name}(): argument '{arg}'{where} must be Tensor, not {type(t).__name__}")
    return check


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value·tensor1·tensor2, elementwise with broadcasting."""
    return _addc("addcmul", input, tensor1, tensor2, value, _fused_multiply_add, AddcmulBackward0)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value·tensor1/tensor2, elementwise with broadcasting (integer tensor1 and tensor2 are refused)."""
    return _addc("addcdiv", input, tensor1, tensor2, value, _add_divided, AddcdivBackward0)
