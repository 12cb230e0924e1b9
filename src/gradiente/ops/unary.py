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
from ..core.node import Node
from ..core.record import as_result, record, wants_grad
from ..core.rules import numpy_ops, sigmoid_array
from ._table import ElementwiseTable, UnaryNode, no_kernel

__all__ = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "sigmoid", "relu", "abs", "sign", "sgn", "floor", "ceil", "trunc", "frac", "erf", "round", "logit",
]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _sign(a):
    # PyTorch's sign is (0 < x) - (x < 0): 0 for nan, where NumPy gives nan; a bool is its own sign.
    if a.dtype == np.bool_:
        return a.copy()
    s = np.sign(a)
    return np.where(np.isnan(a), np.zeros((), s.dtype), s) if a.dtype.kind == "f" else s


def _frac(a):
    with np.errstate(invalid="ignore"):     # frac(±inf) is nan, quietly, as in PyTorch
        return a - np.trunc(a)


def _relu(a):
    # PyTorch's relu keeps every x that is not below 0: -0.0 stays -0.0 and nan stays nan (np.maximum would
    # give +0.0 for -0.0). Computed by the rules' branch-free mask, since a ReLU's sign pattern is random.
    if a.dtype.kind != "f":
        if a.dtype == np.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        return np.maximum(a, np.zeros((), a.dtype))
    return numpy_ops.mask(~(a < 0), a)


def _rsqrt(a):
    return 1 / np.sqrt(a)


def _erf(a):
    from ..core.erf import erf
    return erf(a)


def _zero(ops, v, x, out):
    # zeros, not v * 0: a nan or inf arriving here must not pass through (PyTorch's zeros_like(grad))
    return ops.zeros_like(v)


# Each row: name, array function, node name, what the derivative reads, v·f'(x), the formula; then options.
TABLE = ElementwiseTable(__name__)
exp = TABLE.row("exp", np.exp, "ExpBackward0", "out", lambda ops, v, x, out: v * out, "d/dx eˣ = eˣ")
exp2 = TABLE.row("exp2", np.exp2, "Exp2Backward0", "out", lambda ops, v, x, out: v * (out * _LN2),
                 "d/dx 2ˣ = 2ˣ·ln 2")
expm1 = TABLE.row("expm1", np.expm1, "Expm1Backward0", "out", lambda ops, v, x, out: v * (out + 1),
                  "d/dx (eˣ - 1) = eˣ")
log = TABLE.row("log", np.log, "LogBackward0", "x", lambda ops, v, x, out: v / x, "d/dx ln x = 1/x")
log2 = TABLE.row("log2", np.log2, "Log2Backward0", "x", lambda ops, v, x, out: v / (x * _LN2),
                 "d/dx log₂ x = 1/(x·ln 2)")
log10 = TABLE.row("log10", np.log10, "Log10Backward0", "x", lambda ops, v, x, out: v / (x * _LN10),
                  "d/dx log₁₀ x = 1/(x·ln 10)")
log1p = TABLE.row("log1p", np.log1p, "Log1PBackward0", "x", lambda ops, v, x, out: v / (x + 1),
                  "d/dx ln(1 + x) = 1/(1 + x)")
sqrt = TABLE.row("sqrt", np.sqrt, "SqrtBackward0", "out", lambda ops, v, x, out: v / (2 * out), "d/dx √x = 1/(2√x)")
rsqrt = TABLE.row("rsqrt", _rsqrt, "RsqrtBackward0", "out", lambda ops, v, x, out: -0.5 * v * out ** 3,
                  "d/dx x^(-1/2) = -1/(2·x^(3/2))")
sin = TABLE.row("sin", np.sin, "SinBackward0", "x", lambda ops, v, x, out: v * ops.cos(x), "d/dx sin x = cos x")
cos = TABLE.row("cos", np.cos, "CosBackward0", "x", lambda ops, v, x, out: v * -ops.sin(x), "d/dx cos x = -sin x")
tan = TABLE.row("tan", np.tan, "TanBackward0", "out", lambda ops, v, x, out: v * (1 + out * out),
                "d/dx tan x = 1 + tan² x")
asin = TABLE.row("asin", np.arcsin, "AsinBackward0", "x", lambda ops, v, x, out: v / ops.sqrt(1 - x * x),
                 "d/dx asin x = 1/√(1 - x²)")
acos = TABLE.row("acos", np.arccos, "AcosBackward0", "x", lambda ops, v, x, out: -v / ops.sqrt(1 - x * x),
                 "d/dx acos x = -1/√(1 - x²)")
atan = TABLE.row("atan", np.arctan, "AtanBackward0", "x", lambda ops, v, x, out: v / (x * x + 1),
                 "d/dx atan x = 1/(1 + x²)")
sinh = TABLE.row("sinh", np.sinh, "SinhBackward0", "x", lambda ops, v, x, out: v * ops.cosh(x), "d/dx sinh x = cosh x")
cosh = TABLE.row("cosh", np.cosh, "CoshBackward0", "x", lambda ops, v, x, out: v * ops.sinh(x), "d/dx cosh x = sinh x")
tanh = TABLE.row("tanh", np.tanh, "TanhBackward0", "out", lambda ops, v, x, out: v * (1 - out * out),
                 "d/dx tanh x = 1 - tanh² x")
asinh = TABLE.row("asinh", np.arcsinh, "AsinhBackward0", "x", lambda ops, v, x, out: v / ops.sqrt(x * x + 1),
                  "d/dx asinh x = 1/√(x² + 1)")
acosh = TABLE.row("acosh", np.arccosh, "AcoshBackward0", "x", lambda ops, v, x, out: v / ops.sqrt(x * x - 1),
                  "d/dx acosh x = 1/√(x² - 1)")
atanh = TABLE.row("atanh", np.arctanh, "AtanhBackward0", "x", lambda ops, v, x, out: v / (1 - x * x),
                  "d/dx atanh x = 1/(1 - x²)")
sigmoid = TABLE.row("sigmoid", sigmoid_array, "SigmoidBackward0", "out", lambda ops, v, x, out: v * (out * (1 - out)),
                    "d/dx σ(x) = σ(x)·(1 - σ(x))")
relu = TABLE.row("relu", _relu, "ReluBackward0", "out", lambda ops, v, x, out: ops.mask(~(ops.raw(out) <= 0), v),
                 "d/dx max(0, x) = 1 if x > 0 else 0", keeps_integers=True)
# abs's rule, v·sgn(z), is PyTorch's backward for complex z as well
abs = TABLE.row("abs", np.abs, "AbsBackward0", "x", lambda ops, v, x, out: v * ops.sign(x), "d/dx |x| = sign(x)",
                keeps_integers=True, kernel_missing_for=("b", "abs_cpu"), complex_ok=True)
sign = TABLE.row("sign", _sign, "SignBackward0", "", _zero, "d/dx sign(x) = 0", keeps_integers=True)
sgn = TABLE.row("sgn", _sign, "SgnBackward0", "", _zero, "d/dx sign(x) = 0", keeps_integers=True)
floor = TABLE.row("floor", np.floor, "FloorBackward0", "", _zero, "d/dx ⌊x⌋ = 0", keeps_integers=True,
                  kernel_missing_for=("b", "floor_vml_cpu"))
ceil = TABLE.row("ceil", np.ceil, "CeilBackward0", "", _zero, "d/dx ⌈x⌉ = 0", keeps_integers=True,
                 kernel_missing_for=("b", "ceil_vml_cpu"))
trunc = TABLE.row("trunc", np.trunc, "TruncBackward0", "", _zero, "d/dx trunc(x) = 0", keeps_integers=True,
                  kernel_missing_for=("b", "trunc_vml_cpu"))
frac = TABLE.row("frac", _frac, "FracBackward0", "", lambda ops, v, x, out: v, "d/dx frac(x) = 1",
                 keeps_integers=True, kernel_missing_for=("biu", "frac_cpu"))
erf = TABLE.row("erf", _erf, "ErfBackward0", "x", lambda ops, v, x, out: v * _TWO_OVER_SQRT_PI * ops.exp(-(x * x)),
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
    work = a.astype(np.float32) if a.dtype == np.float16 else a
    result = as_result(np.round(work, decimals), a.dtype)
    if wants_grad(input):
        record(node_cls, (input,), result)
    if out is not None:
        from .arithmetic import _write_out
        return _write_out(result, out)
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
    if a.dtype.kind not in "fc":
        a = a.astype(dt.get_default_dtype()._np)
    work = a.astype(np.float32) if a.dtype == np.float16 else a
    z = work if eps is None else np.clip(work, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = as_result(np.log(z / (1 - z)), a.dtype)
    if wants_grad(input):
        record(LogitBackward0, (input,), result, (input,), eps=eps)
    if out is not None:
        from .arithmetic import _write_out
        return _write_out(result, out)
    return result


