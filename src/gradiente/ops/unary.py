"""The unary math table: one row per elementwise function, its PyTorch node name, what its rule reads
(the input ``x``, the output ``out``, or both), the rule, and the derivative as a learner writes it.

Integer inputs to a floating function (``exp`` of an int tensor) compute in the default float dtype, as
in PyTorch. Each row becomes a function ``gradiente.<name>``, a method ``Tensor.<name>``, and a node
class named as PyTorch names it.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.grad_mode import state as _grad_state
from ..core.node import Node
from ..core.record import as_result, record, wants_grad
from ..core.rules import numpy_ops, sigmoid_array
from ..core.tensor import Tensor


class UnaryNode(Node):
    """A node of the unary table: reads ``x`` and/or ``out`` and applies the row's rule."""
    __slots__ = ()
    rule = None
    reads = ""

    def backward(self, ops, grad):
        if not self.reads:
            return (type(self).rule(ops, grad, None, None),)
        saved = self.saved(ops)
        x = saved[0] if "x" in self.reads else None
        out = saved[-1] if "out" in self.reads else None
        return (type(self).rule(ops, grad, x, out),)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _sign(a):
    # PyTorch's sign is (0 < x) - (x < 0): 0 for nan, where NumPy gives nan.
    s = np.sign(a)
    return np.where(np.isnan(a), np.zeros((), s.dtype), s) if a.dtype.kind == "f" else s


def _frac(a):
    with np.errstate(invalid="ignore"):     # frac(±inf) is nan, quietly, as in PyTorch
        return a - np.trunc(a)


def _relu(a):
    # PyTorch's relu keeps every x that is not below 0: -0.0 stays -0.0 and nan stays nan (np.maximum would
    # give +0.0 for -0.0). Computed by the rules' branch-free mask, since a ReLU's sign pattern is random.
    if a.dtype.kind != "f":
        return np.maximum(a, np.zeros((), a.dtype))
    return numpy_ops.mask(~(a < 0), a)


def _rsqrt(a):
    return 1 / np.sqrt(a)


def _zero(ops, grad, x, out):
    # zeros, not grad * 0: a nan or inf arriving here must not pass through (PyTorch's zeros_like(grad))
    return ops.zeros_like(grad)


#: name, forward, node name, reads, rule(ops, grad, x, out), formula, integer inputs become float
TABLE = [
    ("exp", np.exp, "ExpBackward0", "out", lambda ops, g, x, out: g * out, "d/dx eˣ = eˣ", True),
    ("exp2", np.exp2, "Exp2Backward0", "out", lambda ops, g, x, out: g * (out * _LN2), "d/dx 2ˣ = 2ˣ·ln 2", True),
    ("expm1", np.expm1, "Expm1Backward0", "out", lambda ops, g, x, out: g * (out + 1), "d/dx (eˣ - 1) = eˣ", True),
    ("log", np.log, "LogBackward0", "x", lambda ops, g, x, out: g / x, "d/dx ln x = 1/x", True),
    ("log2", np.log2, "Log2Backward0", "x", lambda ops, g, x, out: g / (x * _LN2), "d/dx log₂ x = 1/(x·ln 2)", True),
    ("log10", np.log10, "Log10Backward0", "x", lambda ops, g, x, out: g / (x * _LN10),
     "d/dx log₁₀ x = 1/(x·ln 10)", True),
    ("log1p", np.log1p, "Log1PBackward0", "x", lambda ops, g, x, out: g / (x + 1), "d/dx ln(1 + x) = 1/(1 + x)", True),
    ("sqrt", np.sqrt, "SqrtBackward0", "out", lambda ops, g, x, out: g / (2 * out), "d/dx √x = 1/(2√x)", True),
    ("rsqrt", _rsqrt, "RsqrtBackward0", "out", lambda ops, g, x, out: -0.5 * g * out ** 3,
     "d/dx x^(-1/2) = -1/(2·x^(3/2))", True),
    ("sin", np.sin, "SinBackward0", "x", lambda ops, g, x, out: g * ops.cos(x), "d/dx sin x = cos x", True),
    ("cos", np.cos, "CosBackward0", "x", lambda ops, g, x, out: g * -ops.sin(x), "d/dx cos x = -sin x", True),
    ("tan", np.tan, "TanBackward0", "out", lambda ops, g, x, out: g * (1 + out * out), "d/dx tan x = 1 + tan² x", True),
    ("asin", np.arcsin, "AsinBackward0", "x", lambda ops, g, x, out: g / ops.sqrt(1 - x * x),
     "d/dx asin x = 1/√(1 - x²)", True),
    ("acos", np.arccos, "AcosBackward0", "x", lambda ops, g, x, out: -g / ops.sqrt(1 - x * x),
     "d/dx acos x = -1/√(1 - x²)", True),
    ("atan", np.arctan, "AtanBackward0", "x", lambda ops, g, x, out: g / (x * x + 1), "d/dx atan x = 1/(1 + x²)", True),
    ("sinh", np.sinh, "SinhBackward0", "x", lambda ops, g, x, out: g * ops.cosh(x), "d/dx sinh x = cosh x", True),
    ("cosh", np.cosh, "CoshBackward0", "x", lambda ops, g, x, out: g * ops.sinh(x), "d/dx cosh x = sinh x", True),
    ("tanh", np.tanh, "TanhBackward0", "out", lambda ops, g, x, out: g * (1 - out * out),
     "d/dx tanh x = 1 - tanh² x", True),
    ("asinh", np.arcsinh, "AsinhBackward0", "x", lambda ops, g, x, out: g / ops.sqrt(x * x + 1),
     "d/dx asinh x = 1/√(x² + 1)", True),
    ("acosh", np.arccosh, "AcoshBackward0", "x", lambda ops, g, x, out: g / ops.sqrt(x * x - 1),
     "d/dx acosh x = 1/√(x² - 1)", True),
    ("atanh", np.arctanh, "AtanhBackward0", "x", lambda ops, g, x, out: g / (1 - x * x),
     "d/dx atanh x = 1/(1 - x²)", True),
    ("sigmoid", sigmoid_array, "SigmoidBackward0", "out", lambda ops, g, x, out: g * (out * (1 - out)),
     "d/dx σ(x) = σ(x)·(1 - σ(x))", True),
    ("relu", _relu, "ReluBackward0", "out", lambda ops, g, x, out: ops.mask(~(ops.raw(out) <= 0), g),
     "d/dx max(0, x) = 1 if x > 0 else 0", False),
    ("abs", np.abs, "AbsBackward0", "x", lambda ops, g, x, out: g * ops.sign(x), "d/dx |x| = sign(x)", False),
    ("sign", _sign, "SignBackward0", "", _zero, "d/dx sign(x) = 0", False),
    ("sgn", _sign, "SgnBackward0", "", _zero, "d/dx sign(x) = 0", False),
    ("floor", np.floor, "FloorBackward0", "", _zero, "d/dx ⌊x⌋ = 0", False),
    ("ceil", np.ceil, "CeilBackward0", "", _zero, "d/dx ⌈x⌉ = 0", False),
    ("trunc", np.trunc, "TruncBackward0", "", _zero, "d/dx trunc(x) = 0", False),
    ("frac", _frac, "FracBackward0", "", lambda ops, g, x, out: g, "d/dx frac(x) = 1", False),
    ("erf", None, "ErfBackward0", "x", lambda ops, g, x, out: g * (2 / math.sqrt(math.pi)) * ops.exp(-(x * x)),
     "d/dx erf x = 2/√π·e^(-x²)", True),
]


def _erf(a):
    from ..core.erf import erf
    return erf(a)


#: the functions PyTorch has no kernel for on some non-float dtypes: name -> (dtype kinds, kernel name)
_NO_KERNEL = {"floor": ("b", "floor_vml_cpu"), "ceil": ("b", "ceil_vml_cpu"), "trunc": ("b", "trunc_vml_cpu"),
              "round": ("b", "round_vml_cpu"), "frac": ("biu", "frac_cpu"), "abs": ("b", "abs_cpu")}


def _check_kernel(name, a):
    """PyTorch's errors for dtypes a function has no kernel for (``floor`` of a bool tensor ...)."""
    kinds, kernel = _NO_KERNEL.get(name, ("", ""))
    if a.dtype.kind in kinds:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a.dtype)}\'')
    if name == "relu" and a.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")


def _make_forward(name, np_fn, node_cls, reads, to_float):
    saves_x, saves_out = "x" in reads, "out" in reads

    def to_save(input, result):
        return (input,) * saves_x + (result,) * saves_out

    def forward(input, *, out=None):
        xa = input._data
        dtype = xa.dtype
        if dtype.kind in "fc" and dtype.itemsize != 2:
            # float32/64 and complex (the fast path of every call): NumPy's result already has PyTorch's dtype,
            # the input's, or the real dtype for abs of a complex input
            values = np_fn(xa)
            result = Tensor._make(values) if values.__class__ is np.ndarray else as_result(values, dtype)
        else:
            result = _other_dtypes(input, xa)
        if input._requires_grad and _grad_state.enabled:
            record(node_cls, (input,), result, to_save(input, result))
        if out is not None:
            from .arithmetic import _write_out
            return _write_out(result, out)
        return result

    def _other_dtypes(input, xa):
        """Integers and bools (computed in the default float dtype, or refused where PyTorch has no kernel),
        and float16 (computed in float32 and rounded once, as PyTorch does)."""
        if xa.dtype.kind not in "fc":
            if to_float:
                xa = xa.astype(dt.get_default_dtype()._np)
            else:
                _check_kernel(name, xa)
                if xa.dtype == np.bool_ and name in ("sign", "sgn"):
                    xa = xa.astype(np.int8)
        if xa.dtype == np.float16:
            return as_result(np_fn(xa.astype(np.float32)), np.float16)
        values = np_fn(xa)
        if values.__class__ is np.ndarray and values.dtype == xa.dtype and xa.dtype != np.int8:
            return Tensor._make(values)
        return as_result(values, np.bool_ if xa.dtype == np.int8 and input._data.dtype == np.bool_ else xa.dtype)
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = f"Elementwise {name}. Backward: {node_cls.formula}"
    return forward


FUNCTIONS = {}
for _name, _fn, _node, _reads, _rule, _formula, _to_float in TABLE:
    if _fn is None:
        _fn = _erf
    _cls = type(_node, (UnaryNode,), {"__slots__": (), "rule": staticmethod(_rule), "reads": _reads,
                                       "formula": _formula, "__doc__": _formula,
                                       # abs's rule, grad·sgn(z), is PyTorch's for complex z as well
                                       "complex_ok": _name == "abs"})
    FUNCTIONS[_name] = _make_forward(_name, _fn, _cls, _reads, _to_float)

globals().update(FUNCTIONS)
__all__ = list(FUNCTIONS)


_NOT_GIVEN = object()


def _round(input, *, decimals=_NOT_GIVEN, out=None):
    """Round half to even (as PyTorch does), to ``decimals`` places; gradient zero. PyTorch records the
    overload with ``decimals`` (RoundBackward1) whenever the argument is given, even as 0."""
    node_cls = RoundBackward0 if decimals is _NOT_GIVEN else RoundBackward1
    decimals = 0 if decimals is _NOT_GIVEN else decimals
    a = input._data
    if a.dtype.kind in "biu":
        _check_kernel("round", a)
        if decimals != 0:
            raise NotImplementedError(f'"round_cpu" not implemented for \'{scalar_name(a.dtype)}\'')
    work = a.astype(np.float32) if a.dtype == np.float16 else a
    result = as_result(np.round(work, decimals), a.dtype)
    if wants_grad(input):
        record(node_cls, (input,), result)
    if out is not None:
        from .arithmetic import _write_out
        return _write_out(result, out)
    return result


RoundBackward0 = type("RoundBackward0", (UnaryNode,), {"__slots__": (), "rule": staticmethod(_zero), "reads": "",
                                                       "formula": "d/dx round(x) = 0"})
RoundBackward1 = type("RoundBackward1", (RoundBackward0,), {"__slots__": ()})
round = _round
__all__.append("round")


class LogitBackward0(Node):
    """out = log(x / (1 - x));  dx = grad / (x * (1 - x)), 0 outside [eps, 1 - eps] when eps is given
    (nan outside [0, 1] without it)"""
    formula = "d/dx logit(x) = 1/(x·(1 - x))"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        xa, eps = ops.raw(x), self.eps
        d = grad / (x * (1 - x))
        if eps is None:
            return (ops.select((xa < 0) | (xa > 1), ops.constant(np.nan, grad), d),)
        return (ops.mask(~((xa < eps) | (xa > 1 - eps)), d),)


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


__all__.append("logit")
