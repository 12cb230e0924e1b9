"""The unary math table: one row per elementwise function, each a module-level name made by one call to
``TABLE.row`` (see ``_table``): its PyTorch node name, what its derivative reads (the input ``x``, the output
``out``, both or neither), the derivative as ``v·f'(x)`` (which gives the node both its backward rule and its
forward-mode rule), and the derivative as a learner writes it.

Integer inputs to a floating function (``exp`` of an int tensor) compute in the default float dtype, as in
PyTorch; the rows marked ``keeps_integers`` compute in the input's dtype. Each row becomes a function
``gradiente.<name>``, a method ``Tensor.<name>``, and a node class named as PyTorch names it.
"""
import math
from typing import Optional

import numpy as np

from ..core import dtype as dt
from ..core import return_types, rounded_math, vml_sqrt
from ..core.erf import erf as erf_array
from ..core.node import Node
from ..core.record import as_result, record, wants_grad, wrap
from ..core.rules import numpy_ops, sigmoid_backward_array, sigmoid_kernel_array, tanh_backward_array
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
from ._table import ElementwiseTable, UnaryNode, no_kernel
from .arithmetic import _write_out

__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin",
           "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu", "abs", "sign",
           "sgn", "floor", "ceil", "trunc", "frac", "erf", "round", "logit", "sinc", "deg2rad", "rad2deg", "erfc",
           "erfinv", "lgamma", "digamma", "i0", "fix", "nan_to_num", "frexp", "polygamma"]

_DEG_TO_RAD, _RAD_TO_DEG = math.pi / 180, 180 / math.pi
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _sign(a):
    # PyTorch's sign is (0 < x) - (x < 0): 0 for nan, where NumPy gives nan; a bool is its own sign.
    if a.dtype == np.bool_:
        return a.copy()
    s = np.sign(a)
    return np.where(np.isnan(a), np.zeros((), s.dtype), s) if dt.kind(a.dtype) == "f" else s


def _frac(a):
    with np.errstate(invalid="ignore"):     # frac(±inf) is nan, quietly, as in PyTorch
        return a - np.trunc(a)


def _relu(a):
    # PyTorch's relu keeps every x that is not below 0: -0.0 stays -0.0 and nan stays nan (np.maximum would
    # give +0.0 for -0.0). Computed by the rules' branch-free mask, since a ReLU's sign pattern is random.
    if dt.kind(a.dtype) != "f":
        if a.dtype == np.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        return np.maximum(a, np.zeros((), a.dtype))
    return numpy_ops.mask(~(a < 0), a)


def _rsqrt(a):
    return 1 / np.sqrt(a)


def _zero(ops, v, x, out):
    # zeros, not v * 0: a nan or inf arriving here must not pass through (PyTorch's zeros_like(grad))
    return ops.zeros_like(v)


def _sgn_derivative(ops, v, x, out):
    """sgn(z) = z/|z|: 0 for real x; for complex z, (v - s²·conj(v)) / (2|z|) (0 at z = 0), PyTorch's
    sgn_backward, which is its own adjoint in the real inner product, so it serves the backward and the jvp."""
    if ops.raw(x).dtype.kind != "c":
        return ops.zeros_like(v)
    absolute = ops.abs(x)
    nonzero = ops.raw(absolute) != 0
    return ops.mask(nonzero, (v - out * out * ops.conj(v)) / (2 * ops.select(nonzero, absolute, 1.0)))


# Each row: name, array function, node name, what the derivative reads, v·f'(x), the formula; then options.
TABLE = ElementwiseTable(__name__)
exp = TABLE.row("exp", rounded_math.exp, "ExpBackward0", "out", lambda ops, v, x, out: v * out, "d/dx eˣ = eˣ",
                holomorphic=True)
exp2 = TABLE.row("exp2", rounded_math.exp2, "Exp2Backward0", "out", lambda ops, v, x, out: v * (out * _LN2),
                 "d/dx 2ˣ = 2ˣ·ln 2", holomorphic=True)
expm1 = TABLE.row("expm1", rounded_math.expm1, "Expm1Backward0", "out", lambda ops, v, x, out: v * (out + 1),
                  "d/dx (eˣ - 1) = eˣ", holomorphic=True)
log = TABLE.row("log", rounded_math.log, "LogBackward0", "x", lambda ops, v, x, out: v / x, "d/dx ln x = 1/x",
                holomorphic=True)
log2 = TABLE.row("log2", rounded_math.log2, "Log2Backward0", "x", lambda ops, v, x, out: v / (x * _LN2),
                 "d/dx log₂ x = 1/(x·ln 2)", holomorphic=True)
log10 = TABLE.row("log10", rounded_math.log10, "Log10Backward0", "x", lambda ops, v, x, out: v / (x * _LN10),
                  "d/dx log₁₀ x = 1/(x·ln 10)", holomorphic=True)
log1p = TABLE.row("log1p", rounded_math.log1p, "Log1PBackward0", "x", lambda ops, v, x, out: v / (x + 1),
                  "d/dx ln(1 + x) = 1/(1 + x)", holomorphic=True)
sqrt = TABLE.row("sqrt", vml_sqrt.sqrt, "SqrtBackward0", "out", lambda ops, v, x, out: v / (2 * out),
                 "d/dx √x = 1/(2√x)", holomorphic=True)
rsqrt = TABLE.row("rsqrt", _rsqrt, "RsqrtBackward0", "out",
                  lambda ops, v, x, out: ops.times_number(v, -0.5) * ops.pow(out, 3),      # (PyTorch's result.pow(3))
                  "d/dx x^(-1/2) = -1/(2·x^(3/2))", holomorphic=True)
sin = TABLE.row("sin", rounded_math.sin, "SinBackward0", "x", lambda ops, v, x, out: v * ops.cos(x),
                "d/dx sin x = cos x", holomorphic=True)
cos = TABLE.row("cos", rounded_math.cos, "CosBackward0", "x", lambda ops, v, x, out: v * -ops.sin(x),
                "d/dx cos x = -sin x", holomorphic=True)
tan = TABLE.row("tan", rounded_math.tan, "TanBackward0", "out", lambda ops, v, x, out: v * (1 + out * out),
                "d/dx tan x = 1 + tan² x", holomorphic=True)
asin = TABLE.row("asin", rounded_math.asin, "AsinBackward0", "x", lambda ops, v, x, out: v / ops.sqrt(1 - x * x),
                 "d/dx asin x = 1/√(1 - x²)", holomorphic=True)
acos = TABLE.row("acos", rounded_math.acos, "AcosBackward0", "x", lambda ops, v, x, out: -v / ops.sqrt(1 - x * x),
                 "d/dx acos x = -1/√(1 - x²)", holomorphic=True)
atan = TABLE.row("atan", rounded_math.atan, "AtanBackward0", "x", lambda ops, v, x, out: v / (x * x + 1),
                 "d/dx atan x = 1/(1 + x²)", holomorphic=True)
sinh = TABLE.row("sinh", rounded_math.sinh, "SinhBackward0", "x", lambda ops, v, x, out: v * ops.cosh(x),
                 "d/dx sinh x = cosh x", holomorphic=True)
cosh = TABLE.row("cosh", rounded_math.cosh, "CoshBackward0", "x", lambda ops, v, x, out: v * ops.sinh(x),
                 "d/dx cosh x = sinh x", holomorphic=True)
tanh = TABLE.row("tanh", rounded_math.tanh, "TanhBackward0", "out", lambda ops, v, x, out: ops.tanh_backward(v, out),
                 "d/dx tanh x = 1 - tanh² x", holomorphic=True)
asinh = TABLE.row("asinh", np.arcsinh, "AsinhBackward0", "x", lambda ops, v, x, out: v / ops.sqrt(x * x + 1),
                  "d/dx asinh x = 1/√(x² + 1)", holomorphic=True)
acosh = TABLE.row("acosh", np.arccosh, "AcoshBackward0", "x", lambda ops, v, x, out: v / ops.sqrt(x * x - 1),
                  "d/dx acosh x = 1/√(x² - 1)")
atanh = TABLE.row("atanh", rounded_math.atanh, "AtanhBackward0", "x", lambda ops, v, x, out: v / (1 - x * x),
                  "d/dx atanh x = 1/(1 - x²)", holomorphic=True)
sigmoid = TABLE.row("sigmoid", sigmoid_kernel_array, "SigmoidBackward0", "out",
                    lambda ops, v, x, out: ops.sigmoid_backward(v, out), "d/dx σ(x) = σ(x)·(1 - σ(x))",
                    holomorphic=True)


# --- tanh's and sigmoid's derivatives as ops of their own, for second derivatives ---------------------------
# Under create_graph PyTorch records each of these derivatives as one node (TanhBackwardBackward0,
# SigmoidBackwardBackward0), and computes it with the same kernel as the first-order backward, so the gradient's
# values do not depend on create_graph. Complex values take the composite formula.

class TanhBackwardBackward0(Node):
    """out = grad·(1 - y²);  dgrad = v·(1 - y²),  dy = -2·y·grad·v"""
    formula = "d/dgrad grad·(1 - y²) = 1 - y²;  d/dy = -2·y·grad"

    def backward(self, ops, v):
        grad, y = self.saved(ops)
        return ops.tanh_backward(v, y), -2 * y * grad * v

    def jvp(self, ops, grad_t, y_t):
        grad, y = self.saved(ops)
        parts = [ops.tanh_backward(grad_t, y) if grad_t is not None else None,
                 -2 * y * grad * y_t if y_t is not None else None]
        parts = [p for p in parts if p is not None]
        return None if not parts else parts[0] if len(parts) == 1 else parts[0] + parts[1]


class SigmoidBackwardBackward0(Node):
    """out = grad·(1 - y)·y;  dgrad = v·(1 - y)·y,  dy = v·grad·(1 - 2y)"""
    formula = "d/dgrad grad·(1 - y)·y = (1 - y)·y;  d/dy = grad·(1 - 2y)"

    def backward(self, ops, v):
        grad, y = self.saved(ops)
        return ops.sigmoid_backward(v, y), v * grad * (-2 * y + 1)

    def jvp(self, ops, grad_t, y_t):
        grad, y = self.saved(ops)
        parts = [ops.sigmoid_backward(grad_t, y) if grad_t is not None else None,
                 y_t * grad * (-2 * y + 1) if y_t is not None else None]
        parts = [p for p in parts if p is not None]
        return None if not parts else parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _derivative_op(name, array_fn, node_cls, composite):
    """The differentiable op ``name`` computing ``array_fn(grad, out)``, recorded as ``node_cls``; complex values
    go through ``composite``, the same formula in recorded elementwise ops."""
    def op(grad, out):
        if dt.kind(out._data.dtype) == "c":
            return composite(grad, out)
        result = wrap(array_fn(grad._data, out._data))
        if wants_grad(grad, out):
            record(node_cls, (grad, out), result, (grad, out))
        return result
    op.__name__ = op.__qualname__ = name
    return op


tanh_backward = _derivative_op("tanh_backward", tanh_backward_array, TanhBackwardBackward0,
                               lambda g, y: g * (1 - y * y))
tanh_backward.__doc__ = "``grad·(1 - out²)``, tanh's derivative from its output ``out`` (PyTorch's ``tanh_backward``)."
sigmoid_backward = _derivative_op("sigmoid_backward", sigmoid_backward_array, SigmoidBackwardBackward0,
                                  lambda g, y: g * (1 - y) * y)
sigmoid_backward.__doc__ = ("``grad·(1 - out)·out``, sigmoid's derivative from its output ``out`` (PyTorch's "
                            "``sigmoid_backward``).")
relu = TABLE.row("relu", _relu, "ReluBackward0", "out", lambda ops, v, x, out: ops.threshold_backward(v, out, 0),
                 "d/dx max(0, x) = 1 if x > 0 else 0", keeps_integers=True)
# abs's rule, v·sgn(z), is PyTorch's backward for complex z as well; its tangent is Re(conj(t)·sgn(z)), the
# change of |z| along t (the same as t·sign(x) for real x)
abs = TABLE.row("abs", np.abs, "AbsBackward0", "x", lambda ops, v, x, out: v * ops.sign(x), "d/dx |x| = sign(x)",
                keeps_integers=True, kernel_missing_for=("b", "abs_cpu"), complex_ok=True,
                jvp=lambda ops, t, x, out: ops.real(ops.conj(t) * ops.sign(x)))
sign = TABLE.row("sign", _sign, "SignBackward0", "", _zero, "d/dx sign(x) = 0", keeps_integers=True)
sgn = TABLE.row("sgn", _sign, "SgnBackward0", "x out", _sgn_derivative, "d/dx sign(x) = 0; for z = |z|·s, "
                "ds = (dz - s²·conj(dz)) / (2|z|)", keeps_integers=True, complex_ok=True)
floor = TABLE.row("floor", np.floor, "FloorBackward0", "", _zero, "d/dx ⌊x⌋ = 0", keeps_integers=True,
                  kernel_missing_for=("b", "floor_vml_cpu"))
ceil = TABLE.row("ceil", np.ceil, "CeilBackward0", "", _zero, "d/dx ⌈x⌉ = 0", keeps_integers=True,
                 kernel_missing_for=("b", "ceil_vml_cpu"))
trunc = TABLE.row("trunc", np.trunc, "TruncBackward0", "", _zero, "d/dx trunc(x) = 0", keeps_integers=True,
                  kernel_missing_for=("b", "trunc_vml_cpu"))
frac = TABLE.row("frac", _frac, "FracBackward0", "", lambda ops, v, x, out: v, "d/dx frac(x) = 1",
                 keeps_integers=True, kernel_missing_for=("biu", "frac_cpu"))
erf = TABLE.row("erf", erf_array, "ErfBackward0", "x", lambda ops, v, x, out: v * _TWO_OVER_SQRT_PI * ops.exp(-(x * x)),
                "d/dx erf x = 2/√π·e^(-x²)")

FUNCTIONS = TABLE.functions


_NOT_GIVEN = object()


def _round(input, *, decimals=_NOT_GIVEN, out=None):
    """Round half to even (as PyTorch does), to ``decimals`` places; gradient zero. PyTorch records the
    overload with ``decimals`` (RoundBackward1) whenever the argument is given, even as 0."""
    node_cls = RoundBackward0 if decimals is _NOT_GIVEN else RoundBackward1
    decimals = 0 if decimals is _NOT_GIVEN else decimals
    a = input._data
    if a.dtype.kind in "biu":
        if a.dtype == np.bool_:
            raise no_kernel("round_vml_cpu", a.dtype)
        if decimals != 0:
            raise no_kernel("round_cpu", a.dtype)
    work = a.astype(np.float32) if a.dtype in dt.REDUCED_FLOATS else a
    result = as_result(np.round(work, decimals), a.dtype)
    if wants_grad(input):
        record(node_cls, (input,), result)
    if out is not None:
        from .arithmetic import _write_out
        return _write_out(result, out, "round")
    return result


class RoundBackward0(UnaryNode):
    """out = round(x);  dx = 0;  out' = 0"""
    __slots__ = ()
    formula = "d/dx round(x) = 0"
    derivative = staticmethod(_zero)


class RoundBackward1(RoundBackward0):
    """out = round(x, decimals);  dx = 0;  out' = 0 (PyTorch's name for the overload with ``decimals``)"""
    __slots__ = ()


round = _round


class LogitBackward0(Node):
    """out = log(x / (1 - x));  dx = grad / (x * (1 - x));  out' = x' / (x * (1 - x)); both 0 outside
    [eps, 1 - eps] when eps is given (nan outside [0, 1] without it)"""
    formula = "d/dx logit(x) = 1/(x·(1 - x))"
    eps: Optional[float]

    def backward(self, ops, grad):
        return (self._times_derivative(ops, grad),)

    def jvp(self, ops, x_t):
        return self._times_derivative(ops, x_t)

    def _times_derivative(self, ops, v):
        (x,) = self.saved(ops)
        xa, eps = ops.raw(x), self.eps
        d = v / (x * (1 - x))
        if eps is None:
            return ops.select((xa < 0) | (xa > 1), ops.constant(np.nan, v), d)
        return ops.mask(~((xa < eps) | (xa > 1 - eps)), d)


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), the inverse of sigmoid; with ``eps``, p is first clamped to [eps, 1 - eps]."""
    a = input._data
    if dt.kind(a.dtype) not in "fc":
        a = a.astype(dt.get_default_dtype()._np)
    work = a.astype(np.float32) if a.dtype in dt.REDUCED_FLOATS else a
    z = work if eps is None else np.clip(work, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = as_result(np.log(z / (1 - z)), a.dtype)
    if wants_grad(input):
        record(LogitBackward0, (input,), result, (input,), eps=eps)
    if out is not None:
        from .arithmetic import _write_out
        return _write_out(result, out, "logit")
    return result


# --- more rows: special functions and angle conversions -----------------------------------------------------

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
    return a if dt.kind(a.dtype) in "fc" else a.astype(dt.get_default_dtype()._np)


def _on_floats(array_fn, a):
    """``array_fn`` of a floating array, float16 and bfloat16 computed in float32 and rounded once (as PyTorch
    does)."""
    if a.dtype in dt.REDUCED_FLOATS:
        with np.errstate(over="ignore"):
            return array_fn(a.astype(np.float32)).astype(a.dtype)
    return array_fn(a)


def _finish(result, out, name):
    return result if out is None else _write_out(result, out, name)


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


sinc = TABLE.row("sinc", _sinc, "SincBackward0", "x", _sinc_derivative,
                 "d/dx sin(πx)/(πx) = (πx·cos πx - sin πx)/(πx²)")


deg2rad = TABLE.row("deg2rad", lambda a: a * np.asanyarray(_DEG_TO_RAD, a.dtype), "Deg2RadBackward0", "",
                    lambda ops, v, x, out: v * _DEG_TO_RAD, "d/dx x·π/180 = π/180")


rad2deg = TABLE.row("rad2deg", lambda a: a * np.asanyarray(_RAD_TO_DEG, a.dtype), "Rad2DegBackward0", "",
                    lambda ops, v, x, out: v * _RAD_TO_DEG, "d/dx x·180/π = 180/π")


erfc = TABLE.row("erfc", erfc_array, "ErfcBackward0", "x",
                 lambda ops, v, x, out: v * (-2 / _SQRT_PI) * ops.exp(-(x * x)), "d/dx erfc x = -2/√π·e^(-x²)")


def _erfinv_of(ops, x):
    return _rule_fn(ops, erfinv_array, erfinv)(x)


# reads x, as PyTorch's rule does (an in-place change of the input is caught, one of the output is not)
erfinv = TABLE.row("erfinv", erfinv_array, "ErfinvBackward0", "x",
                   lambda ops, v, x, out: v * (_SQRT_PI / 2) * ops.exp(_erfinv_of(ops, x) ** 2),
                   "d/dx erfinv x = √π/2·e^(erfinv(x)²)")


lgamma = TABLE.row("lgamma", lgamma_array, "LgammaBackward0", "x", lambda ops, v, x, out: v * _digamma_of(ops, x),
                   "d/dx ln|Γ(x)| = ψ(x)")


digamma = TABLE.row("digamma", digamma_array, "DigammaBackward0", "x",
                    lambda ops, v, x, out: v * _polygamma_of(ops, 1, x), "d/dx ψ(x) = ψ⁽¹⁾(x)")


i0 = TABLE.row("i0", i0_array, "I0Backward0", "x", lambda ops, v, x, out: v * _i1_of(ops, x), "d/dx I₀(x) = I₁(x)")


# fix is PyTorch's other name for trunc (same node, TruncBackward0)
fix = trunc


# --- nan_to_num and frexp: own nodes ------------------------------------------------------------------------

class NanToNumBackward0(Node):
    """out = x with nan and ±inf replaced by numbers;  dx = grad · isfinite(x);  out' likewise"""
    formula = "d/dx nan_to_num(x) = 1 where x is finite, else 0"

    # a product, not a mask, as PyTorch's rule: a nan gradient stays nan where x is not finite (nan · 0), and a
    # negative one gives -0
    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (grad * ops.constant(np.isfinite(ops.raw(x)).astype(ops.raw(grad).dtype), grad),)

    def jvp(self, ops, x_t):
        (x,) = self.saved(ops)
        return x_t * ops.constant(np.isfinite(ops.raw(x)).astype(ops.raw(x_t).dtype), x_t)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """``input`` with nan replaced by ``nan`` and ±inf by ``posinf``/``neginf`` (by default the largest and lowest
    finite values of the dtype); integer and bool tensors are copied unchanged."""
    a = input._data
    if dt.kind(a.dtype) in "fc":
        with np.errstate(over="ignore"):            # a replacement beyond the dtype's range becomes inf
            values = np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    else:
        values = a.copy()
    result = as_result(values, a.dtype)
    if wants_grad(input):
        record(NanToNumBackward0, (input,), result, (input,))
    return _finish(result, out, "nan_to_num")


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
    if dt.kind(a.dtype) != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa_values, exponent_values = np.frexp(a)
    mantissa = as_result(mantissa_values, a.dtype)
    exponent = as_result(exponent_values, np.int32)
    if wants_grad(input):
        record(FrexpBackward0, (input,), mantissa, scale=np.ldexp(np.ones((), a.dtype), -exponent_values))
    if out is not None:
        _write_out(mantissa, out[0], "frexp")
        _write_out(exponent, out[1], "frexp")
        return frexp_result(*out)
    return frexp_result(mantissa, exponent)


# --- polygamma: the derivatives of digamma, with an integer order -------------------------------------------

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
    return _finish(_polygamma_op(n, input, PolygammaBackward0), out, "polygamma")


def _polygamma_op(n, input, node_cls):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    result = as_result(_on_floats(lambda a: polygamma_array(n, a), _floating_array(input)))
    if wants_grad(input):
        record(node_cls, (input,), result, (input,), n=n)
    return result


def _polygamma_method(self, n):
    """``x.polygamma(n)``: the method takes its arguments in the other order."""
    return polygamma(n, self)


def _polygamma_of_self(self, n):
    """The op behind ``x.polygamma_(n)``, which PyTorch records as PolygammaBackward1."""
    return _polygamma_op(n, self, PolygammaBackward1)
