"""More elementwise functions: special functions (``lgamma``, ``digamma``, ``polygamma``, ``erfc``, ``erfinv``,
``i0``...), binary ops with rules of their own (``logaddexp``, ``copysign``, ``ldexp``...), and the integer ops
``gcd`` and ``lcm`` (no gradients).

NumPy has none of the special functions and SciPy is not a dependency: ``_special_functions`` computes them on
arrays, and ``gradiente.special`` (``torch.special``) uses the same array functions. Here they become ops: each a
function ``gradiente.<name>``, a method ``Tensor.<name>`` and, where PyTorch has one, an in-place method
``Tensor.<name>_``, recorded under PyTorch's node name.
"""
import math
from typing import Optional

import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.dtype import scalar_name
from ..core.errors import _require_tensor, broadcasting
from ..core.node import Node, tangent_sum
from ..core.record import as_result, promote_operands, record, wants_grad
from ..core.special_math import (
    _SQRT_PI,
    digamma_array,
    erfc_array,
    erfinv_array,
    i0_array,
    i1_array,
    lgamma_array,
    polygamma_array,
)
from ..core.tensor import Tensor
from ._table import ElementwiseTable
from .arithmetic import _without_derivative, _write_out
from .unary import exp2, trunc

__all__ = [
    "nan_to_num",
    "logaddexp",
    "logaddexp2",
    "sinc",
    "heaviside",
    "copysign",
    "deg2rad",
    "rad2deg",
    "nextafter",
    "ldexp",
    "frexp",
    "gcd",
    "lcm",
    "fix",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "polygamma",
    "mvlgamma",
    "i0",
]

_LN2 = math.log(2.0)


def _rule_fn(ops, array_fn, op):
    """A function a rule needs that ``core.rules`` lacks: its array version on arrays, the recorded op
    on tensors (``create_graph``), so that each rule is written once and has derivatives of its own."""
    return op if ops.recording else array_fn


def _digamma_of(ops, x):
    return _rule_fn(ops, digamma_array, digamma)(x)


def _polygamma_of(ops, n, x):
    return _rule_fn(ops, polygamma_array, polygamma)(n, x)


def _i1_of(ops, x):
    from .special import i1
    return _rule_fn(ops, i1_array, i1)(x)


def _floating_array(input):
    """The array a floating function computes on: integers and bools in the default float dtype."""
    a = input._data
    return a if a.dtype.kind in "fc" else a.astype(dt.get_default_dtype()._np)


def _on_floats(array_fn, a):
    """``array_fn`` of a floating array, float16 computed in float32 and rounded once (as PyTorch does)."""
    if a.dtype == np.float16:
        with np.errstate(over="ignore"):
            return array_fn(a.astype(np.float32)).astype(np.float16)
    return array_fn(a)


def _finish(result, out):
    return result if out is None else _write_out(result, out)


# --- the unary table ----------------------------------------------------------------------------------------

_DEG_TO_RAD, _RAD_TO_DEG = math.pi / 180, 180 / math.pi


def _sinc(a):
    """sin(πx)/(πx), 1 at 0; computed in the input's precision, as PyTorch computes it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        product = np.pi * a
        return np.where(a == 0, np.ones((), a.dtype), np.sin(product) / product)


def _sinc_derivative(ops, v, x, out):
    """v·(πx·cos πx - sin πx)/(πx²), 0 at x = 0."""
    product = x * math.pi
    slope = (ops.cos(product) * product - ops.sin(product)) / (product * x)
    return ops.mask(ops.raw(x) != 0, v * slope)


# Each row: name, array function, node name, what the derivative reads, v·f'(x), the formula (see ``_table``).
TABLE = ElementwiseTable(__name__)
sinc = TABLE.row("sinc", _sinc, "SincBackward0", "x", _sinc_derivative,
                 "d/dx sin(πx)/(πx) = (πx·cos πx - sin πx)/(πx²)")
deg2rad = TABLE.row("deg2rad", lambda a: a * np.asarray(_DEG_TO_RAD, a.dtype), "Deg2RadBackward0", "",
                    lambda ops, v, x, out: v * _DEG_TO_RAD, "d/dx x·π/180 = π/180")
rad2deg = TABLE.row("rad2deg", lambda a: a * np.asarray(_RAD_TO_DEG, a.dtype), "Rad2DegBackward0", "",
                    lambda ops, v, x, out: v * _RAD_TO_DEG, "d/dx x·180/π = 180/π")
erfc = TABLE.row("erfc", erfc_array, "ErfcBackward0", "x",
                 lambda ops, v, x, out: v * (-2 / _SQRT_PI) * ops.exp(-(x * x)), "d/dx erfc x = -2/√π·e^(-x²)")
erfinv = TABLE.row("erfinv", erfinv_array, "ErfinvBackward0", "out",
                   lambda ops, v, x, out: v * (_SQRT_PI / 2) * ops.exp(out * out),
                   "d/dx erfinv x = √π/2·e^(erfinv(x)²)")
lgamma = TABLE.row("lgamma", lgamma_array, "LgammaBackward0", "x", lambda ops, v, x, out: v * _digamma_of(ops, x),
                   "d/dx ln|Γ(x)| = ψ(x)")
digamma = TABLE.row("digamma", digamma_array, "DigammaBackward0", "x",
                    lambda ops, v, x, out: v * _polygamma_of(ops, 1, x), "d/dx ψ(x) = ψ⁽¹⁾(x)")
i0 = TABLE.row("i0", i0_array, "I0Backward0", "x", lambda ops, v, x, out: v * _i1_of(ops, x), "d/dx I₀(x) = I₁(x)")

FUNCTIONS = TABLE.functions

# fix is PyTorch's other name for trunc (same node, TruncBackward0)
fix = trunc


# --- polygamma and mvlgamma: unary with an integer parameter --------------------------------------------------

class PolygammaBackward0(Node):
    """out = ψ⁽ⁿ⁾(x);  dx = grad·ψ⁽ⁿ⁺¹⁾(x);  out' = x'·ψ⁽ⁿ⁺¹⁾(x)"""
    formula = "d/dx ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x)"
    n: int

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (grad * _polygamma_of(ops, self.n + 1, x),)

    def jvp(self, ops, x_t):
        (x,) = self.saved(ops)
        return x_t * _polygamma_of(ops, self.n + 1, x)


class PolygammaBackward1(PolygammaBackward0):
    """out = ψ⁽ⁿ⁾(x) computed in place (``x.polygamma_(n)``: PyTorch's name for that overload)"""


def polygamma(n, input, *, out=None):
    """ψ⁽ⁿ⁾(input), the n-th derivative of the digamma function (``polygamma(0, x)`` is ``digamma(x)``)."""
    return _finish(_polygamma_op(n, input, PolygammaBackward0), out)


def _polygamma_op(n, input, node_cls):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    result = as_result(_on_floats(lambda a: polygamma_array(n, a), _floating_array(input)))
    if wants_grad(input):
        record(node_cls, (input,), result, (input,), n=n)
    return result


class MvlgammaBackward0(Node):
    """out = Σⱼ lgamma(x - j/2) + p(p-1)/4·ln π (j < p);  dx = grad·Σⱼ ψ(x - j/2);  out' = x'·Σⱼ ψ(x - j/2)"""
    formula = "d/dx ln Γₚ(x) = Σⱼ ψ(x - j/2)"
    p: int

    def backward(self, ops, grad):
        return (grad * self._derivative(ops),)

    def jvp(self, ops, x_t):
        return x_t * self._derivative(ops)

    def _derivative(self, ops):
        (x,) = self.saved(ops)
        total = _digamma_of(ops, x)
        for j in range(1, self.p):
            total = total + _digamma_of(ops, x - j / 2)
        return total


def _mvlgamma_array(a, p):
    # summed from the smallest argument up, as PyTorch sums, then the constant
    total = sum(lgamma_array(a - j / 2) for j in range(p - 1, -1, -1))
    return (total + p * (p - 1) / 4 * math.log(math.pi)).astype(a.dtype, copy=False)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``: ln Γₚ(x) = p(p-1)/4·ln π + Σⱼ₌₀ᵖ⁻¹ lgamma(x - j/2)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    result = as_result(_on_floats(lambda a: _mvlgamma_array(a, p), _floating_array(input)))
    if wants_grad(input):
        record(MvlgammaBackward0, (input,), result, (input,), p=p)
    return _finish(result, out)


def _polygamma_method(self, n):
    """``x.polygamma(n)``: the method takes its arguments in the other order."""
    return polygamma(n, self)


def _polygamma_of_self(self, n):
    """The op behind ``x.polygamma_(n)``, which PyTorch records as PolygammaBackward1."""
    return _polygamma_op(n, self, PolygammaBackward1)


# --- nan_to_num ----------------------------------------------------------------------------------------------

class NanToNumBackward0(Node):
    """out = x with nan and ±inf replaced by numbers;  dx = grad where x is finite, 0 elsewhere;  out' likewise"""
    formula = "d/dx nan_to_num(x) = 1 where x is finite, else 0"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (ops.mask(np.isfinite(ops.raw(x)), grad),)

    def jvp(self, ops, x_t):
        (x,) = self.saved(ops)
        return ops.mask(np.isfinite(ops.raw(x)), x_t)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """``input`` with nan replaced by ``nan`` and ±inf by ``posinf``/``neginf`` (by default the largest and lowest
    finite values of the dtype); integer and bool tensors are copied unchanged."""
    a = input._data
    if a.dtype.kind in "fc":
        with np.errstate(over="ignore"):            # a replacement beyond the dtype's range becomes inf
            values = np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    else:
        values = a.copy()
    result = as_result(values, a.dtype)
    if wants_grad(input):
        record(NanToNumBackward0, (input,), result, (input,))
    return _finish(result, out)



# --- binary ops ----------------------------------------------------------------------------------------------

def _floating_pair(name, input, other):
    """The promoted arrays of two tensors for a kernel PyTorch has for floating dtypes only."""
    _require_tensor(name, other)
    xa, ya, target = promote_operands(input, other)
    if target.kind != "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_name(target)}\'')
    return xa, ya, target


def _needs(node, i):
    """Whether the node's i-th input wants a gradient."""
    return node.next_functions[i][0] is not None


class LogaddexpBackward0(Node):
    """out = ln(eˣ + eʸ);  dx = grad / (1 + e^(y-x));  dy = grad / (1 + e^(x-y));
    out' = x' / (1 + e^(y-x)) + y' / (1 + e^(x-y))"""
    formula = "∂ln(eˣ + eʸ)/∂x = eˣ/(eˣ + eʸ)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):     # nan where both are the same infinity
            return (grad / (1 + ops.exp(y - x)) if _needs(self, 0) else None,
                    grad / (1 + ops.exp(x - y)) if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return tangent_sum(None if x_t is None else x_t / (1 + ops.exp(y - x)),
                               None if y_t is None else y_t / (1 + ops.exp(x - y)))


class Logaddexp2Backward0(Node):
    """out = log₂(2ˣ + 2ʸ);  dx = grad / (1 + 2^(y-x));  dy = grad / (1 + 2^(x-y));
    out' = x' / (1 + 2^(y-x)) + y' / (1 + 2^(x-y))"""
    formula = "∂log₂(2ˣ + 2ʸ)/∂x = 2ˣ/(2ˣ + 2ʸ)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return (grad / (1 + ops.exp((y - x) * _LN2)) if _needs(self, 0) else None,
                    grad / (1 + ops.exp((x - y) * _LN2)) if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return tangent_sum(None if x_t is None else x_t / (1 + ops.exp((y - x) * _LN2)),
                               None if y_t is None else y_t / (1 + ops.exp((x - y) * _LN2)))


def _logaddexp_op(name, np_fn, node_cls, doc):
    def op(input, other, *, out=None):
        xa, ya, target = _floating_pair(name, input, other)
        with np.errstate(invalid="ignore"):     # inf - inf inside, where the result is ±inf or nan as in PyTorch
            result = as_result(broadcasting(np_fn, xa, ya), target)
        if wants_grad(input, other):
            record(node_cls, (input, other), result, (input, other))
        return _finish(result, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


logaddexp = _logaddexp_op("logaddexp", np.logaddexp, LogaddexpBackward0,
                          "ln(e^input + e^other), without overflow: the larger term is taken out first.")
logaddexp2 = _logaddexp_op("logaddexp2", np.logaddexp2, Logaddexp2Backward0, "log₂(2^input + 2^other), stably.")


class NextafterBackward0(Node):
    """out = the next float after x towards y;  dx = grad;  dy = 0;  out' = x' (as PyTorch defines them)"""
    formula = "d/dx nextafter(x, y) = 1"

    def backward(self, ops, grad):
        return (grad if _needs(self, 0) else None, ops.zeros_like(grad) if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        return x_t if x_t is not None else ops.zeros_like(y_t)


def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` in the direction of ``other``, elementwise."""
    xa, ya, target = _floating_pair("nextafter", input, other)
    result = as_result(broadcasting(np.nextafter, xa, ya), target)
    if wants_grad(input, other):
        record(NextafterBackward0, (input, other), result)
    return _finish(result, out)


class CopysignBackward0(Node):
    """out = |x| with the sign of y;  dx = grad·(out/x) (±1; 0 where x = 0);  dy = 0;  out' = x'·(out/x)"""
    formula = "∂copysign(x, y)/∂x = ±1 (1 where the sign is kept)"

    def backward(self, ops, grad):
        dx = grad * self._sign_ratio(ops, grad) if _needs(self, 0) else None
        return (dx, ops.zeros_like(grad)) if len(self.next_functions) == 2 else dx

    def jvp(self, ops, x_t, y_t=None):
        return ops.zeros_like(y_t) if x_t is None else x_t * self._sign_ratio(ops, x_t)

    def _sign_ratio(self, ops, like):
        """out/x: ±1, and 0 where x = 0."""
        x, out = self.saved(ops)
        xa = ops.raw(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ops.constant(np.where(xa == 0, 0, ops.raw(out) / xa), like)


class CopysignBackward1(CopysignBackward0):
    """out = |x| with the sign of the number c;  dx = grad·(out/x) (±1; 0 where x = 0)"""


def copysign(input, other, *, out=None):
    """|input| with the sign of ``other`` (a tensor or a number; the sign of -0.0 counts); a floating result."""
    xa, ya, target = promote_operands(input, other, floating=True)
    result = as_result(broadcasting(np.copysign, xa, ya), target)
    if isinstance(other, Tensor):
        if wants_grad(input, other):
            record(CopysignBackward0, (input, other), result, (input, result))
    elif wants_grad(input):
        record(CopysignBackward1, (input,), result, (input, result))
    return _finish(result, out)


class LdexpBackward0(Node):
    """out = x·2ʸ;  dx = grad·2ʸ;  dy = grad·out·ln 2;  out' = x'·2ʸ + y'·out·ln 2"""
    formula = "∂(x·2ʸ)/∂x = 2ʸ,  ∂(x·2ʸ)/∂y = x·2ʸ·ln 2"
    scale: Optional[np.ndarray]     # 2ʸ, exact, when y is an integer tensor (else computed from y)

    def backward(self, ops, grad):
        y, out = self.saved(ops)
        scale = ops.constant(self.scale, grad) if self.scale is not None else _rule_fn(ops, np.exp2, exp2)(y)
        return (grad * scale if _needs(self, 0) else None,
                grad * out * _LN2 if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        y, out = self.saved(ops)
        through_x = None
        if x_t is not None:
            scale = ops.constant(self.scale, x_t) if self.scale is not None else _rule_fn(ops, np.exp2, exp2)(y)
            through_x = x_t * scale
        return tangent_sum(through_x, None if y_t is None else y_t * out * _LN2)


def ldexp(input, other, *, out=None):
    """input·2^other. With a floating ``input`` and an integer ``other`` the power is exact and never overflows
    on its own (as C's ldexp); otherwise it is computed as input·exp2(other), as PyTorch does."""
    _require_tensor("ldexp", other)
    target = dt.result_type(input, other)._np
    if target.kind != "f":
        target = dt.get_default_dtype()._np
    xa, ea = input._data, other._data
    scale = None
    if ea.dtype.kind in "iub" and xa.dtype.kind == "f":
        if ea.dtype.kind == "b":
            raise NotImplementedError('"ldexp_cpu_exp" not implemented for \'Bool\'')
        exponent = np.clip(ea, -2 ** 20, 2 ** 20).astype(np.int64)
        with np.errstate(over="ignore"):
            values = broadcasting(np.ldexp, xa.astype(target), exponent)
            scale = np.ldexp(np.ones((), target), exponent)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            values = broadcasting(np.multiply, xa.astype(target), np.exp2(ea.astype(target)))
    result = as_result(values, target)
    if wants_grad(input, other):
        record(LdexpBackward0, (input, other), result, (other, result), scale=scale)
    return _finish(result, out)


def heaviside(input, values, *, out=None):
    """The step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0 (same dtypes only)."""
    _require_tensor("heaviside", values, arg="values")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    xa, va = input._data, values._data
    step = broadcasting(lambda a, v: np.where(a == 0, v, a > 0), xa, va)
    result = as_result(step, xa.dtype)
    _without_derivative("heaviside", (input, values), result)
    return _finish(result, out)


frexp_result = return_types.frexp


class FrexpBackward0(Node):
    """(mantissa, exponent) = frexp(x), x = mantissa·2^exponent;  dx = grad / 2^exponent;
    mantissa' = x' / 2^exponent"""
    formula = "∂mantissa/∂x = 2^(-exponent)"
    scale: np.ndarray       # 2^(-exponent)

    def backward(self, ops, grad):
        return (grad * ops.constant(self.scale, grad),)

    def jvp(self, ops, x_t):
        return x_t * ops.constant(self.scale, x_t)


def frexp(input, *, out=None):
    """Mantissas in [0.5, 1) (with the sign) and int32 exponents with input = mantissa·2^exponent; ``frexp(0)`` is
    (0, 0), and nan and ±inf come back as mantissas with exponent 0."""
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa_values, exponent_values = np.frexp(a)
    mantissa = as_result(mantissa_values, a.dtype)
    exponent = as_result(exponent_values, np.int32)
    if wants_grad(input):
        record(FrexpBackward0, (input,), mantissa, scale=np.ldexp(np.ones((), a.dtype), -exponent_values))
    if out is not None:
        _write_out(mantissa, out[0])
        _write_out(exponent, out[1])
        return frexp_result(*out)
    return frexp_result(mantissa, exponent)


def _integer_pair_op(name, np_fn, doc):
    """An op of two integer tensors, with no gradient (the integers have none)."""
    def op(input, other, *, out=None):
        _require_tensor(name, other)
        xa, ya, target = promote_operands(input, other)
        if target.kind not in "iu":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_name(target)}\'')
        return _finish(as_result(broadcasting(np_fn, xa, ya), target), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


gcd = _integer_pair_op("gcd", np.gcd, "The greatest common divisor (non-negative; gcd(0, 0) = 0), elementwise.")
lcm = _integer_pair_op("lcm", np.lcm, "The least common multiple (non-negative; 0 if either is 0), elementwise; it "
                                      "wraps around on overflow, as PyTorch's does.")
