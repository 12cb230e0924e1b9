"""``gradiente.special``, PyTorch's ``torch.special``: special functions, most of them other names of ops found
at the top level (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``), each recording
the node PyTorch records for it (``special.expit(x).grad_fn`` is ``SigmoidBackward0``), and the functions
only found here (``erfcx``, ``i0e``, ``i1``, ``i1e``, ``ndtr``, ``ndtri``, ``log_ndtr``, ``entr``, ``xlog1py``,
``zeta``). Their array math lives in ``core.special_math``.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core.dtype import get_default_dtype, scalar_name
from ..core.errors import broadcasting
from ..core.node import Node
from ..core.record import as_result, promote_operands, record, wants_grad
from ..core.special_math import (
    _exp_square,
    _in_double,
    erfcx_array,
    gammainc_array,
    i0_array,
    i0e_array,
    i1_array,
    i1e_array,
    lgamma_array,
    ndtri_array,
    zeta_array,
)
from ._table import ElementwiseTable
from .arithmetic import _write_out
from .binary_math import _needs, _with_numbers, xlogy
from .reductions import logsumexp as _logsumexp
from .softmax import log_softmax as _log_softmax
from .softmax import softmax as _softmax
from .unary import (
    RoundBackward1,
    _digamma_of,
    _finish,
    _floating_array,
    _on_floats,
    _rule_fn,
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    i0,
    lgamma,
    log1p,
    logit,
    polygamma,
    sigmoid,
    sinc,
)
from .unary import round as _round

__all__ = ["gammainc", "gammaincc", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]

# Other names of top-level ops: the same functions, so the same nodes (PyTorch records these names too).
expit = sigmoid
gammaln = lgamma
psi = digamma

_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log Σ exp(input) over ``dim`` (``torch.logsumexp``)."""
    result = _logsumexp(input, dim, keepdim)
    return result if out is None else _write_out(result, out, "logsumexp")


def softmax(input, dim, *, dtype=None):
    """e^x / Σ e^x along ``dim`` (``torch.softmax``)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """x - log Σ e^x along ``dim`` (``torch.log_softmax``)."""
    return _log_softmax(input, dim, dtype=dtype)


def round(input, *, decimals=0, out=None):
    """``torch.round``, recorded as ``RoundBackward1`` (the overload with ``decimals``, which this one calls)."""
    result = _round(input.detach(), decimals=decimals)
    if wants_grad(input):
        record(RoundBackward1, (input,), result)
    return result if out is None else _write_out(result, out, "round")


# --- unary functions found only here --------------------------------------------------------------------------

def _tiny(x):
    """Where |x| is within machine epsilon of 0: the derivatives of I₁ and I₁ₑ take their limit 1/2 there."""
    xa = np.asanyarray(x)
    return np.abs(xa) <= dt.finfo_of(xa.dtype).eps


def _i1_derivative(ops, v, x, out):
    """v·(I₀(x) - I₁(x)/x), with the derivative 1/2 at 0."""
    tiny = _tiny(ops.raw(x))
    safe = ops.select(tiny, ops.constant(1.0, x), x)
    slope = _rule_fn(ops, i0_array, i0)(safe) - out / safe
    return v * ops.select(tiny, ops.constant(0.5, v), slope)


def _i1e_derivative(ops, v, x, out):
    """v·(I₀ₑ(x) - I₁ₑ(x)·(sgn x + 1/x)), with the derivative 1/2 at 0."""
    tiny = _tiny(ops.raw(x))
    safe = ops.select(tiny, ops.constant(1.0, x), x)
    slope = _rule_fn(ops, i0e_array, i0e)(safe) - out * (ops.sign(safe) + 1 / safe)
    return v * ops.select(tiny, ops.constant(0.5, v), slope)


def _entr(a):
    """-x·ln x for x > 0, 0 at 0, -inf for x < 0 (nan stays nan)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(a > 0, -a * np.log(a), np.where(a == 0, np.zeros((), a.dtype), -np.inf))
    return np.where(np.isnan(a), a, out).astype(a.dtype, copy=False)


def _log_ndtr_double(x):
    """ln Φ(x), from Φ(x) = erfcx(-x/√2)·e^(-x²/2)/2 (e^(-x²/2) taken from x itself, exactly split): below -1 as
    ln(erfcx(-x/√2)/2) - x²/2, which cannot underflow; above as ln(1 - Φ(-x)), which keeps the tiny negative
    values of the upper tail."""
    t = x / math.sqrt(2)
    lower = np.log(erfcx_array(-t) / 2) - x * x / 2
    upper = np.log1p(-erfcx_array(t) * _exp_square(np.minimum(x, 60.0), -0.5) / 2)
    return np.where(x < -1, lower, upper)


# Each row: name, array function, node name, what the derivative reads, v·f'(x), the formula (see ``_table``).
TABLE = ElementwiseTable(__name__)
erfcx = TABLE.row("erfcx", erfcx_array, "SpecialErfcxBackward0", "x out",
                  lambda ops, v, x, out: v * (2 * x * out - _TWO_OVER_SQRT_PI),
                  "d/dx e^(x²)·erfc x = 2x·erfcx(x) - 2/√π")
i0e = TABLE.row("i0e", i0e_array, "SpecialI0EBackward0", "x out",
                lambda ops, v, x, out: v * (_rule_fn(ops, i1e_array, i1e)(x) - ops.sign(x) * out),
                "d/dx e^(-|x|)·I₀(x) = I₁ₑ(x) - sgn(x)·I₀ₑ(x)")
i1 = TABLE.row("i1", i1_array, "SpecialI1Backward0", "x out", _i1_derivative, "d/dx I₁(x) = I₀(x) - I₁(x)/x")
i1e = TABLE.row("i1e", i1e_array, "SpecialI1EBackward0", "x out", _i1e_derivative,
                "d/dx I₁ₑ(x) = I₀ₑ(x) - I₁ₑ(x)·(sgn x + 1/x)")
ndtri = TABLE.row("ndtri", ndtri_array, "SpecialNdtriBackward0", "out",
                  lambda ops, v, x, out: v * _SQRT_2PI * ops.exp(out * out / 2), "d/dp Φ⁻¹(p) = √(2π)·e^(Φ⁻¹(p)²/2)")
log_ndtr = TABLE.row("log_ndtr", _in_double(_log_ndtr_double), "SpecialLogNdtrBackward0", "x out",
                     lambda ops, v, x, out: v * ops.exp(-(out + x * x / 2)) / _SQRT_2PI, "d/dx ln Φ(x) = φ(x)/Φ(x)")
entr = TABLE.row("entr", _entr, "SpecialEntrBackward0", "x", lambda ops, v, x, out: v * -(1 + ops.log(x)),
                 "d/dx (-x·ln x) = -(1 + ln x)")


def ndtr(input, *, out=None):
    """Φ(x), the standard normal CDF, composed as PyTorch composes it: (1 + erf(x/√2))·0.5, with the nodes it
    records (``MulBackward1`` ← ``AddBackward1`` ← ``ErfBackward0`` ← ``MulBackward1``). So, as in PyTorch, it is 0
    below about -8.3 (-5.4 in float32), where erf rounds to -1; ``log_ndtr`` keeps the lower tail."""
    from .nn._common import add_scalar, mul_scalar
    if dt.kind(input._data.dtype) not in "fc":
        input = input.to(get_default_dtype())
    result = mul_scalar(add_scalar(erf(mul_scalar(input, 1 / math.sqrt(2))), 1), 0.5)
    return result if out is None else _write_out(result, out, "special_ndtr")


# --- xlog1py -----------------------------------------------------------------------------------------------------

def _xlog1py_array(xa, ya):
    """x·ln(1 + y), 0 where x is 0 unless y is nan (PyTorch's convention, as for xlogy)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(xa == 0, 0, xa * np.log1p(ya))
    return np.where(np.isnan(ya), np.nan, out)


class SpecialXlog1PyBackward0(Node):
    """out = x·ln(1 + y);  dx = grad·ln(1 + y) (0 where x = 0 and y <= -1);  dy = grad·x/(1 + y)"""
    formula = "∂(x·ln(1 + y))/∂x = ln(1 + y),  ∂/∂y = x/(1 + y)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        dx = None
        if _needs(self, 0):
            dx = ops.mask(~((ops.raw(x) == 0) & (ops.raw(y) <= -1)), _rule_fn(ops, _xlog1py_array, xlog1py)(grad, y))
        return dx, (grad * x / (1 + y) if _needs(self, 1) else None)


class SpecialXlog1PyBackward1(Node):
    """out = c·ln(1 + y) with a number c;  dy = grad·c/(1 + y)"""
    formula = "∂(c·ln(1 + y))/∂y = c/(1 + y)"

    def backward(self, ops, grad):
        (y,) = self.saved(ops)
        return (grad * self.x / (1 + y),)


class SpecialXlog1PyBackward2(Node):
    """out = x·ln(1 + c) with a number c;  dx = grad·ln(1 + c) (0 where x = 0 if c <= -1)"""
    formula = "∂(x·ln(1 + c))/∂x = ln(1 + c)"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        dx = _rule_fn(ops, _xlog1py_array, xlog1py)(grad, self.y)
        return (dx if self.y > -1 else ops.mask(ops.raw(x) != 0, dx),)


def xlog1py(input, other, *, out=None):
    """input·ln(1 + other), with 0 where input is 0 (unless other is nan); one side may be a number."""
    nodes = (SpecialXlog1PyBackward0, SpecialXlog1PyBackward1, SpecialXlog1PyBackward2)
    return _with_numbers(_xlog1py_array, nodes, input, other, out)


# --- zeta --------------------------------------------------------------------------------------------------------

def _zeta_not_differentiable():
    return NotImplementedError("the derivative for 'zeta' is not implemented.")


class SpecialZetaBackward0(Node):
    """out = ζ(x, q);  dq = -grad·x·ζ(x + 1, q);  PyTorch defines no derivative in x (backward raises)"""
    formula = "∂ζ(x, q)/∂q = -x·ζ(x + 1, q)"

    def backward(self, ops, grad):
        x, q = self.saved(ops)
        if _needs(self, 0):
            raise _zeta_not_differentiable()
        return None, -grad * x * _rule_fn(ops, zeta_array, zeta)(x + 1, q)


class SpecialZetaBackward1(Node):
    """out = ζ(c, q) with a number c;  dq = -grad·c·ζ(c + 1, q)"""
    formula = "∂ζ(c, q)/∂q = -c·ζ(c + 1, q)"

    def backward(self, ops, grad):
        (q,) = self.saved(ops)
        return (-grad * self.x * _rule_fn(ops, zeta_array, zeta)(self.x + 1, q),)


class SpecialZetaBackward2(Node):
    """out = ζ(x, c) with a number c: PyTorch defines no derivative in x (backward raises)"""
    formula = "no derivative defined in x"

    def backward(self, ops, grad):
        raise _zeta_not_differentiable()


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ζ(input, other) = Σₖ (other + k)^(-input); ``zeta(s, 1)`` is Riemann's ζ(s)."""
    nodes = (SpecialZetaBackward0, SpecialZetaBackward1, SpecialZetaBackward2)
    return _with_numbers(zeta_array, nodes, input, other, out)


# --- the regularized incomplete gamma functions: ops with rules of their own ----------------------------------

def _gamma_density(ops, a, x):
    """xᵃ⁻¹ e⁻ˣ / Γ(a): the derivative of P(a, x) in x. ``a`` gets no gradient, so log Γ(a) is a constant."""
    return ops.exp((a - 1) * ops.log(x) - x - ops.constant(lgamma_array(ops.raw(a)), x))


class _IncompleteGammaBackward(Node):
    """The rules of P(a, x) and Q(a, x) = 1 - P(a, x): ``sign`` times the gamma density in x; PyTorch defines no
    derivative in a (its message names the op, ``aten_op``)."""
    __slots__ = ()
    sign: float
    aten_op: str

    def _check_a(self, a_has_gradient):
        if a_has_gradient:
            raise NotImplementedError(f"the derivative for '{self.aten_op}: input' is not implemented.")

    def backward(self, ops, grad):
        self._check_a(self.next_functions[0][0] is not None)
        a, x = self.saved(ops)
        return None, grad * (self.sign * _gamma_density(ops, a, x))

    def jvp(self, ops, a_t, x_t):
        # PyTorch 2.13 defines no forward-mode formula for igamma and igammac, in either argument: its error
        return Node.jvp(self, ops, a_t, x_t)


class IgammaBackward0(_IncompleteGammaBackward):
    """out = P(a, x);  dx = grad · xᵃ⁻¹ e⁻ˣ / Γ(a);  no derivative in a (as in PyTorch);  out' = x' · xᵃ⁻¹ e⁻ˣ / Γ(a)"""
    __slots__ = ()
    formula = "∂P(a, x)/∂x = xᵃ⁻¹ e⁻ˣ / Γ(a)"
    sign, aten_op = 1.0, "igamma"


class IgammacBackward0(_IncompleteGammaBackward):
    """out = Q(a, x) = 1 - P(a, x);  dx = -grad · xᵃ⁻¹ e⁻ˣ / Γ(a);  no derivative in a (as in PyTorch)"""
    __slots__ = ()
    formula = "∂Q(a, x)/∂x = -xᵃ⁻¹ e⁻ˣ / Γ(a)"
    sign, aten_op = -1.0, "igammac"


def _incomplete_gamma(input, other, out, upper, node_cls, kernel):
    xa, ya, target = promote_operands(input, other)
    if dt.kind(target) != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(target)}\'')
    result = as_result(broadcasting(lambda a, x: gammainc_array(a, x, upper), xa, ya), target)
    if wants_grad(input, other):
        record(node_cls, (input, other), result, (input, other))
    return result if out is None else _write_out(result, out, node_cls.aten_op)


def igamma(input, other, *, out=None):
    """P(a, x) = ∫₀ˣ tᵃ⁻¹ e⁻ᵗ dt / Γ(a), the regularized lower incomplete gamma function of ``input`` = a and
    ``other`` = x (broadcast; floating results), differentiable in x only, as in PyTorch."""
    return _incomplete_gamma(input, other, out, False, IgammaBackward0, "igamma_cpu")


def igammac(input, other, *, out=None):
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function, differentiable in x only."""
    return _incomplete_gamma(input, other, out, True, IgammacBackward0, "igammac_cpu")


gammainc = igamma
gammaincc = igammac


# --- polygamma and mvlgamma: special functions with an integer parameter ------------------------------------


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
    return _finish(result, out, "mvlgamma")


multigammaln = mvlgamma
