"""More elementwise functions: special functions (``lgamma``, ``digamma``, ``polygamma``, ``erfc``, ``erfinv``,
``i0``...), binary ops with rules of their own (``logaddexp``, ``copysign``, ``ldexp``...), and the integer ops
``gcd`` and ``lcm`` (no gradients).

NumPy has none of the special functions and SciPy is not a dependency, so the first half of this module
computes them on arrays with textbook methods: Taylor series, recurrences that shift the argument, asymptotic
expansions (with Bernoulli numbers), Chebyshev interpolation and Newton's method. Each works in float64 and
is within a few ulp of the true value; float32 and float16 inputs are computed in float64 and rounded once.
``torch.special`` (``gradiente.special``) uses the same array functions.

The second half turns them into ops: each a function ``gradiente.<name>``, a method ``Tensor.<name>`` and,
where PyTorch has one, an in-place method ``Tensor.<name>_``, recorded under PyTorch's node name.
"""
import functools
import math
from fractions import Fraction

import numpy as np
from numpy.polynomial import Polynomial
from numpy.polynomial import chebyshev as _cheb
from numpy.polynomial import polynomial as _poly

from .. import _dtype as dt
from .. import return_types
from .._dtype import scalar_name
from .._tensor import Tensor
from ..autograd.graph import Node
from ._errors import _require_tensor, broadcasting
from ._record import as_result, promote_operands, record, wants_grad
from ._special import erf as erf_array
from ._table import install
from .arithmetic import _write_out
from .inplace import make_inplace
from .unary import UnaryNode, _make_forward, exp2, trunc

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

_SQRT_PI = math.sqrt(math.pi)
_EULER_GAMMA = 0.57721566490153286061
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LN2 = math.log(2.0)


# =============================================================================================================
# Array math: special functions on float64 arrays
# =============================================================================================================

def _in_double(fn):
    """``fn`` run on a flat float64 copy of its first argument (so it may index and write freely), the result
    given back in the input's shape and floating dtype (integers give float64)."""
    @functools.wraps(fn)
    def on_array(a, *args):
        a = np.asarray(a)
        dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
        with np.errstate(all="ignore"):         # inf and nan arise as in PyTorch, silently; so does overflow to
            out = fn(a.astype(np.float64).reshape(-1), *args)       # inf when rounding to float32
            return out.reshape(a.shape).astype(dtype, copy=False)
    return on_array


def _fill(x, cases, default=np.nan):
    """An array like ``x`` holding ``fn(x[mask])`` for each ``(mask, fn)`` (masks disjoint), ``default`` elsewhere."""
    out = np.full_like(x, default)
    for mask, fn in cases:
        if mask.any():
            out[mask] = fn(x[mask])
    return out


@functools.cache
def _bernoulli(count):
    """B₂, B₄, ..., B₂ₖ (k = ``count``) as exact fractions, by the Akiyama-Tanigawa algorithm."""
    row, even = [], []
    for m in range(2 * count + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        if m >= 2 and m % 2 == 0:
            even.append(row[0])
    return even


def _is_integer(x):
    return x == np.floor(x)


def _reduce(x):
    """``x = n + r`` with n the nearest integer and |r| <= 1/2, exactly (no rounding happens), and n's parity."""
    n = np.round(x)
    return x - n, np.remainder(n, 2) == 1


def _sin_cos_pi(x):
    """sin(πx) and cos(πx) with the argument reduced exactly first (to |r| <= 1/4, by the symmetries of sin and
    cos), so that they are exactly 0 at the integers and half-integers and keep their digits near them."""
    r, odd = _reduce(x)
    outer = np.abs(r) > 0.25
    near = np.pi * np.where(outer, np.copysign(0.5, r) - r, r)        # exact: the difference is in [0, 1/4]
    s = np.where(outer, np.copysign(np.cos(near), r), np.sin(near))
    c = np.where(outer, np.abs(np.sin(near)), np.cos(near))
    return np.where(odd, -s, s), np.where(odd, -c, c)


def _sinpi(x):
    return _sin_cos_pi(x)[0]


def _cot_pi(x):
    """cot(πx)."""
    s, c = _sin_cos_pi(x)
    return c / s


# --- log-gamma ------------------------------------------------------------------------------------------------

@functools.cache
def _lgamma_taylor():
    """Taylor coefficients (lowest power first) of lgamma(1 + z) and lgamma(2 + z), for |z| <= 1/2:
    lgamma(1 + z) = -c·z + Σₖ₌₂ (-1)ᵏ ζ(k)/k zᵏ  and  lgamma(2 + z) = (1 - c)·z + Σₖ₌₂ (-1)ᵏ (ζ(k) - 1)/k zᵏ, with c
    Euler's constant. The second converges twice as fast; each keeps the terms that can still move a double."""
    k = np.arange(2, 58, dtype=np.float64)
    zeta_minus_1 = _hurwitz_zeta(k, np.full_like(k, 2.0))        # ζ(k) - 1 = ζ(k, 2)
    sign = np.where(k % 2 == 0, 1.0, -1.0)
    around_1 = np.concatenate([[0.0, -_EULER_GAMMA], sign * (1 + zeta_minus_1) / k])
    around_2 = np.concatenate([[0.0, 1 - _EULER_GAMMA], (sign * zeta_minus_1 / k)[:27]])
    return around_1, around_2


def _stirling_lgamma(x):
    """lgamma for x >= 8: (x - ½)·ln x - x + ½ln 2π + Σₖ B₂ₖ / (2k(2k-1)·x²ᵏ⁻¹)."""
    coef = [float(b / ((2 * k + 2) * (2 * k + 1))) for k, b in enumerate(_bernoulli(10))]
    series = _poly.polyval(1 / (x * x), coef) / x
    with np.errstate(invalid="ignore"):         # inf - inf at x = inf, replaced below
        out = (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + series
    return np.where(x == np.inf, np.inf, out)


def _lgamma_from_half(x):
    """lgamma for x >= 1/2: Taylor series around 1 and 2 (exact near the zeros of lgamma at 1 and 2), a
    downward shift into [1.5, 2.5) for x < 8 (lgamma(x) = lgamma(x - n) + ln((x-1)···(x-n))), Stirling above."""
    around_1, around_2 = _lgamma_taylor()

    def shifted(v):
        n = np.floor(v - 1.5)                   # 1..6; v - n in [1.5, 2.5), and each v - k is exact
        y = v - n
        product = np.ones_like(v)
        for j in range(6):
            product *= np.where(j < n, y + j, 1.0)
        return _poly.polyval(y - 2, around_2) + np.log(product)

    return _fill(x, [(x < 1.5, lambda v: _poly.polyval(v - 1, around_1)),
                     ((x >= 1.5) & (x < 2.5), lambda v: _poly.polyval(v - 2, around_2)),
                     ((x >= 2.5) & (x < 8), shifted),
                     (x >= 8, _stirling_lgamma)])


@_in_double
def lgamma_array(x):
    """ln|Γ(x)|: +inf at 0 and the negative integers; for x < -1/2 by the reflection formula
    lgamma(x) = ln(π / |sin πx|) - lgamma(1 - x)."""
    around_1, _ = _lgamma_taylor()
    small = np.abs(x) < 0.5
    negative = (x <= -0.5) & ~_is_integer(x)
    return _fill(x, [(small, lambda v: _poly.polyval(v, around_1) - np.log(np.abs(v))),   # lgamma(1+v) - ln|v|
                     (x >= 0.5, _lgamma_from_half),
                     (negative, lambda v: np.log(np.pi / np.abs(_sinpi(v))) - _lgamma_from_half(1 - v)),
                     ((x <= -0.5) & _is_integer(x), lambda v: np.full_like(v, np.inf))])


# --- digamma and polygamma ----------------------------------------------------------------------------------

def _digamma_positive(x):
    """ψ(x) for x > 0: shift up to y >= 10 (ψ(x) = ψ(x + 1) - 1/x), then the asymptotic series
    ψ(y) = ln y - 1/(2y) - Σₖ B₂ₖ / (2k·y²ᵏ)."""
    y = x.copy()
    total = np.zeros_like(x)
    for _ in range(10):
        below = y < 10
        total -= np.where(below, 1 / y, 0.0)
        y = np.where(below, y + 1, y)
    coef = [float(b / (2 * k + 2)) for k, b in enumerate(_bernoulli(9))]
    t = 1 / (y * y)
    return total + (np.log(y) - 0.5 / y - t * _poly.polyval(t, coef))


@_in_double
def digamma_array(x):
    """ψ(x) = Γ'(x)/Γ(x); -inf at +0 and +inf at -0 (as PyTorch), nan at the negative integers; for x < 0 by the
    reflection formula ψ(x) = ψ(1 - x) - π·cot(πx)."""
    negative = (x < 0) & ~_is_integer(x)
    return _fill(x, [(x > 0, _digamma_positive),
                     (x == 0, lambda v: np.copysign(np.inf, -v)),
                     (negative, lambda v: _digamma_positive(1 - v) - np.pi * _cot_pi(v))])


def _hurwitz_zeta(s, q):
    """ζ(s, q) = Σₖ (q + k)⁻ˢ for s > 1 and q > 0 (arrays of one shape): the terms summed directly until
    q + k >= 10 + s, the rest by the Euler-Maclaurin formula
    a¹⁻ˢ/(s - 1) + a⁻ˢ/2 + Σⱼ B₂ⱼ/(2j)!·s(s+1)···(s+2j-2)·a⁻ˢ⁻²ʲ⁺¹, whose terms are then below rounding."""
    n_terms = np.maximum(np.ceil(10 + np.minimum(s, 1000) - q), 0)
    total = np.zeros(np.broadcast(s, q).shape)
    for k in range(int(n_terms.max(initial=0))):
        total += np.where(k < n_terms, (q + k) ** -s, 0.0)
    a = q + n_terms
    power = a ** -s
    tail = a * power / (s - 1) + 0.5 * power
    factor = s * power / a                      # s(s+1)···(s+2j-2)·a^(-s-2j+1), for j = 1
    for j, b in enumerate(_bernoulli(12), start=1):
        tail += float(b / math.factorial(2 * j)) * factor
        factor = factor * (s + 2 * j - 1) * (s + 2 * j) / (a * a)
    return total + np.where(s > 1000, 0.0, tail)    # past s = 1000 the 1010 direct terms are the whole sum


@functools.cache
def _cot_derivative(n):
    """The polynomial Cₙ with dⁿ/dθⁿ cot θ = Cₙ(cot θ), from C₀(c) = c and Cₙ₊₁(c) = -(1 + c²)·Cₙ'(c)."""
    p = Polynomial([0.0, 1.0])
    for _ in range(n):
        p = -Polynomial([1.0, 0.0, 1.0]) * p.deriv()
    return p


def _polygamma_positive(n, x):
    """ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n!·ζ(n + 1, x) for n >= 1 and x > 0."""
    factorial = float(math.factorial(n)) if n <= 170 else math.inf
    return (-1) ** (n + 1) * factorial * _hurwitz_zeta(np.full_like(x, n + 1.0), x)


def _polygamma(x, n):
    """ψ⁽ⁿ⁾ of a float64 array (``polygamma_array`` with the arguments in ``_in_double``'s order)."""
    if n == 0:
        return digamma_array(x)
    pole = (-1) ** (n + 1) * np.inf

    def reflected(v):
        # ψ⁽ⁿ⁾(x) = (-1)ⁿ ψ⁽ⁿ⁾(1 - x) - πⁿ⁺¹·Cₙ(cot πx): the n-th derivative of ψ(1 - x) - ψ(x) = π·cot(πx)
        return (-1) ** n * _polygamma_positive(n, 1 - v) - np.pi ** (n + 1) * _cot_derivative(n)(_cot_pi(v))

    finite = np.isfinite(x)
    out = _fill(x, [((x > 0) & finite, lambda v: _polygamma_positive(n, v)),
                    ((x < 0) & finite & ~_is_integer(x), reflected),
                    ((x <= 0) & _is_integer(x), lambda v: np.full_like(v, pole))])
    # PyTorch's values at infinity: trigamma is 0 at +inf and nan at -inf; higher orders nan at +inf
    if n == 1:
        out[x == np.inf] = 0.0
        out[x == -np.inf] = np.nan
    return out


_polygamma_in_double = _in_double(_polygamma)


def polygamma_array(n, a):
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function (n >= 0): ±inf at 0 and the negative integers."""
    return _polygamma_in_double(a, n)


def zeta_array(s, q):
    """The Hurwitz zeta function ζ(s, q) = Σₖ (q + k)⁻ˢ, with PyTorch's values off its domain: inf at s = 1 and at
    q = 0 or a negative integer, nan for s < 1. A negative q needs an integer s (else nan): then ζ(s, q) =
    (-1)ˢ ψ⁽ˢ⁻¹⁾(q)/(s - 1)!, which the reflection formula of ψ⁽ⁿ⁾ computes."""
    s, q = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(q, dtype=np.float64))
    shape = s.shape
    s, q = s.reshape(-1), q.reshape(-1)
    out = np.full(s.shape, np.nan)
    with np.errstate(all="ignore"):
        regular = (s > 1) & np.isfinite(s) & (q > 0) & np.isfinite(q)
        out[regular] = _hurwitz_zeta(s[regular], q[regular])
        out[(s == 1) | ((s > 1) & (q <= 0) & _is_integer(q))] = np.inf
        negative = (s > 1) & (s <= 171) & (q < 0) & ~_is_integer(q) & _is_integer(s)
        for order in np.unique(s[negative]).astype(int):
            at = negative & (s == order)
            out[at] = (-1) ** order * _polygamma(q[at], order - 1) / math.factorial(order - 1)
        # PyTorch's values at s = inf: ζ(inf, 1) = 1, inf for 0 < q < 1, nan otherwise
        at_inf = (s == np.inf) & (q > 0)
        out[at_inf] = np.where(q[at_inf] == 1, 1.0, np.where(q[at_inf] < 1, np.inf, np.nan))
    return out.reshape(shape)


# --- erfc, erfcx, erfinv ------------------------------------------------------------------------------------

def _exp_square(x, sign):
    """exp(sign·x²) for |x| < 64, to full relative accuracy: x² is carried as hi² (exact: hi has 26 bits) plus a
    small correction, because rounding x² itself would change exp(-x²) by x²·2⁻⁵³ (1e-13 at x = 26)."""
    hi = np.round(x * 2.0 ** 20) / 2.0 ** 20
    lo = x - hi
    return np.exp(sign * hi * hi) * np.exp(sign * lo * (x + hi))


#: the pieces of [1/2, 8) on which erfcx(x) = e^(x²)·erfc(x) is a Chebyshev series; beyond 8, the asymptotic one
_ERFCX_PIECES = ((0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0))


@functools.cache
def _erfcx_tables():
    """Chebyshev coefficients of erfcx on each piece, by interpolation at 48 Chebyshev points of values from
    ``math.erfc`` (the C library's, accurate to an ulp), cut where they reach the rounding noise."""
    n = 48
    k = np.arange(n)
    points_u = np.cos(np.pi * (k + 0.5) / n)
    # cos(jθₖ) with the angle reduced in integers first: jθₖ itself would carry an error of j·θₖ·2⁻⁵³
    basis = np.cos(np.pi * (np.outer(k, 2 * k + 1) % (4 * n)) / (2 * n))
    tables = []
    for lo, hi in _ERFCX_PIECES:
        points = (lo + hi) / 2 + (hi - lo) / 2 * points_u
        values = np.array([math.erfc(p) for p in points]) * _exp_square(points, 1.0)
        coef = 2 / n * basis @ values
        coef[0] /= 2
        noise = np.abs(coef) < 1e-16 * coef[0]
        tables.append((lo, hi, coef[:np.argmax(noise)] if noise.any() else coef))
    return tables


def _erfcx_asymptotic(x):
    """erfcx(x) for x >= 8: 1/(x√π)·Σₖ (-1)ᵏ (2k-1)!!/(2x²)ᵏ; the 24 terms used fall to 1e-19 of the sum."""
    coef = [(-1) ** k * float(math.prod(range(1, 2 * k, 2))) for k in range(24)]
    return _poly.polyval(0.5 / (x * x), coef) / (x * _SQRT_PI)


def _erfcx_from_half(x):
    """erfcx(x) = e^(x²)·erfc(x) for x >= 1/2 (it is smooth and slowly varying there)."""
    cases = [((x >= lo) & (x < hi), lambda v, lo=lo, hi=hi, c=c: _cheb.chebval((2 * v - lo - hi) / (hi - lo), c))
             for lo, hi, c in _erfcx_tables()]
    return _fill(x, [*cases, (x >= 8, _erfcx_asymptotic)])


@_in_double
def erfc_array(x):
    """1 - erf(x), without the cancellation: e^(-x²)·erfcx(x) for x > 1/2, 2 - erfc(-x) for x < -1/2."""
    def tail(v):                                # v >= 1/2: erfc(v); it underflows to 0 past 27
        v = np.minimum(v, 30.0)
        return _erfcx_from_half(v) * _exp_square(v, -1.0)

    return _fill(x, [(np.abs(x) <= 0.5, lambda v: 1 - erf_array(v)),
                     (x > 0.5, tail),
                     (x < -0.5, lambda v: 2 - tail(-v))])


@_in_double
def erfcx_array(x):
    """e^(x²)·erfc(x), the scaled complementary error function: finite where erfc underflows (x large), and
    overflowing to inf below x ≈ -26.6."""
    def negative(v):                            # v < -1/2: 2e^(v²) - erfcx(-v)
        v = np.maximum(v, -30.0)
        return 2 * _exp_square(v, 1.0) - _erfcx_from_half(-v)

    return _fill(x, [(np.abs(x) <= 0.5, lambda v: (1 - erf_array(v)) * _exp_square(v, 1.0)),
                     (x > 0.5, _erfcx_from_half),
                     (x < -0.5, negative)])


#: Giles's single-precision approximation of erfinv ("Approximating the erfinv function", 2010), a first guess
_GILES_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
                  -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844,
               0.00134934322, 0.000100950558, -0.000200214257)


def _erfinv_guess(a, y):
    """A first guess of z >= 0 with erf(z) = a (y = 1 - a), to about 1e-7 where Giles's fit holds (w < 16) and
    1e-4 from the asymptotic erfc(z) ≈ e^(-z²)/(z√π)·(1 - 1/(2z²)) beyond."""
    w = -np.log(y * (1 + a))
    central = a * _poly.polyval(w - 2.5, _GILES_CENTRAL)
    tail = a * _poly.polyval(np.sqrt(w) - 3, _GILES_TAIL)
    z = np.sqrt(-np.log(y))
    for _ in range(3):
        z = np.sqrt(-np.log(y * z * _SQRT_PI / (1 - 0.5 / (z * z))))
    return np.where(w < 5, central, np.where(w < 16, tail, z))


def _erfinv_core(a, y):
    """z >= 0 with erf(z) = a, for a in [0, 1) and y = 1 - a (exact, and y alone known to full precision for
    inputs near 1: ``ndtri`` passes y = 2p for tiny p). Newton's method from Giles's guess: on erf(z) - a (with
    Halley's correction) for a <= 1/2; on ln erfc(z) - ln y for a > 1/2, where erf(z) has no digits left to
    compare (erfc(z) = e^(-z²)·erfcx(z), so its logarithm needs no exponential and cannot underflow)."""
    z = _erfinv_guess(a, y)
    central = a <= 0.5
    zc, ac = z[central], a[central]
    for _ in range(2):                          # cubic convergence: 1e-7, 1e-21
        step = (erf_array(zc) - ac) * (_SQRT_PI / 2) * np.exp(zc * zc)
        zc = zc - step / (1 + zc * step)
    zt, yt = z[~central], y[~central]
    for _ in range(3):                          # quadratic: from 1e-4 at worst, 1e-8, 1e-16, rounding
        scaled = erfcx_array(zt)
        zt = zt + (np.log(scaled) - np.log(yt) - zt * zt) * scaled * (_SQRT_PI / 2)
    z[central], z[~central] = zc, zt
    return z


@_in_double
def erfinv_array(x):
    """The inverse of erf on [-1, 1]: ±inf at ±1, nan outside."""
    a = np.abs(x)
    inside = a < 1
    out = np.where(a == 1, np.inf, np.nan)
    out[inside] = _erfinv_core(a[inside], 1 - a[inside])
    return np.copysign(out, x)


@_in_double
def ndtri_array(p):
    """The inverse of the standard normal CDF: ndtri(p) = √2·erfinv(2p - 1) = -√2·erfcinv(2p), taken on the side
    where the argument of erfinv is exact (2p for p < 1/4, 2(1 - p) for p > 3/4), so tiny p keep their digits."""
    low, high = (p > 0) & (p < 0.25), (p > 0.75) & (p < 1)
    middle = (p >= 0.25) & (p <= 0.75)
    out = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, np.nan))
    out[low] = -_erfinv_core(1 - 2 * p[low], 2 * p[low])
    out[high] = _erfinv_core(2 * p[high] - 1, 2 * (1 - p[high]))
    x = 2 * p[middle] - 1
    out[middle] = np.copysign(_erfinv_core(np.abs(x), 1 - np.abs(x)), x)
    return math.sqrt(2) * out


# --- modified Bessel functions I₀ and I₁ ----------------------------------------------------------------------

def _bessel_i(x, order, scaled):
    """Iₙ(x) for n = 0 or 1 (times e^(-|x|) if ``scaled``): the power series Σₖ (x/2)²ᵏ⁺ⁿ / (k!(k+n)!) below 20
    (all terms positive: no cancellation), the asymptotic series e^x/√(2πx)·Σₖ (-1)ᵏ aₖ(n)/xᵏ above."""
    ax = np.abs(x)

    def series(v):
        coef = [1 / (math.factorial(k) * math.factorial(k + order)) for k in range(42)]
        out = _poly.polyval(v * v / 4, coef) * (v / 2) ** order
        return out * np.exp(-v) if scaled else out

    def asymptotic(v):
        mu = 4.0 * order * order
        coef = [(-1) ** k * math.prod(mu - (2 * j - 1) ** 2 for j in range(1, k + 1)) / (math.factorial(k) * 8 ** k)
                for k in range(30)]
        with np.errstate(invalid="ignore"):     # inf·0 at v = inf, nan as in PyTorch
            out = _poly.polyval(1 / v, coef) / np.sqrt(2 * np.pi * v)
            if scaled:
                return out
            half = np.exp(v / 2)                # e^v in two halves: I₀ is finite up to 713.98, e^v only to 709.78
            return half * out * half

    out = _fill(ax, [(ax < 20, series), (ax >= 20, asymptotic)])
    return np.copysign(out, x) if order == 1 else out


i0_array = _in_double(lambda x: _bessel_i(x, 0, False))
i0e_array = _in_double(lambda x: _bessel_i(x, 0, True))
i1_array = _in_double(lambda x: _bessel_i(x, 1, False))
i1e_array = _in_double(lambda x: _bessel_i(x, 1, True))


# =============================================================================================================
# Ops: the functions above as recorded tensor functions
# =============================================================================================================

def _rule_fn(ops, array_fn, op):
    """A function a rule needs that ``rule_ops`` lacks: this module's array version on arrays, the recorded op
    on tensors (``create_graph``), so that each rule is written once and has derivatives of its own."""
    return op if ops.recording else array_fn


def _digamma_of(ops, x):
    return _rule_fn(ops, digamma_array, digamma)(x)


def _polygamma_of(ops, n, x):
    return _rule_fn(ops, polygamma_array, polygamma)(n, x)


def _i1_of(ops, x):
    from ..special import i1
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


def _sinc_rule(ops, g, x, out):
    """d/dx sinc = (πx·cos πx - sin πx)/(πx²), 0 at x = 0."""
    product = x * math.pi
    slope = (ops.cos(product) * product - ops.sin(product)) / (product * x)
    return ops.mask(ops.raw(x) != 0, g * slope)


#: name, array function, node name, what the rule reads, rule(ops, grad, x, out), formula
TABLE = [
    ("sinc", _sinc, "SincBackward0", "x", _sinc_rule, "d/dx sin(πx)/(πx) = (πx·cos πx - sin πx)/(πx²)"),
    ("deg2rad", lambda a: a * np.asarray(_DEG_TO_RAD, a.dtype), "Deg2RadBackward0", "",
     lambda ops, g, x, out: g * _DEG_TO_RAD, "d/dx x·π/180 = π/180"),
    ("rad2deg", lambda a: a * np.asarray(_RAD_TO_DEG, a.dtype), "Rad2DegBackward0", "",
     lambda ops, g, x, out: g * _RAD_TO_DEG, "d/dx x·180/π = 180/π"),
    ("erfc", erfc_array, "ErfcBackward0", "x", lambda ops, g, x, out: g * (-2 / _SQRT_PI) * ops.exp(-(x * x)),
     "d/dx erfc x = -2/√π·e^(-x²)"),
    ("erfinv", erfinv_array, "ErfinvBackward0", "out", lambda ops, g, x, out: g * (_SQRT_PI / 2) * ops.exp(out * out),
     "d/dx erfinv x = √π/2·e^(erfinv(x)²)"),
    ("lgamma", lgamma_array, "LgammaBackward0", "x", lambda ops, g, x, out: g * _digamma_of(ops, x),
     "d/dx ln|Γ(x)| = ψ(x)"),
    ("digamma", digamma_array, "DigammaBackward0", "x", lambda ops, g, x, out: g * _polygamma_of(ops, 1, x),
     "d/dx ψ(x) = ψ⁽¹⁾(x)"),
    ("i0", i0_array, "I0Backward0", "x", lambda ops, g, x, out: g * _i1_of(ops, x), "d/dx I₀(x) = I₁(x)"),
]


def unary_functions(table):
    """The functions of a table of unary rows, made as ``unary`` makes its own (integers computed in the default
    float dtype, float16 through float32), each recording a ``UnaryNode`` class named as PyTorch names it."""
    functions = {}
    for name, array_fn, node_name, reads, rule, formula in table:
        node_cls = type(node_name, (UnaryNode,), {"__slots__": (), "rule": staticmethod(rule), "reads": reads,
                                                  "formula": formula, "__doc__": formula})
        functions[name] = _make_forward(name, array_fn, node_cls, reads, True)
    return functions


FUNCTIONS = unary_functions(TABLE)
install(FUNCTIONS)
sinc, deg2rad, rad2deg = FUNCTIONS["sinc"], FUNCTIONS["deg2rad"], FUNCTIONS["rad2deg"]
erfc, erfinv, lgamma = FUNCTIONS["erfc"], FUNCTIONS["erfinv"], FUNCTIONS["lgamma"]
digamma, i0 = FUNCTIONS["digamma"], FUNCTIONS["i0"]

# fix is PyTorch's other name for trunc (same node, TruncBackward0)
fix = trunc
Tensor.fix, Tensor.fix_ = Tensor.trunc, Tensor.trunc_


# --- polygamma and mvlgamma: unary with an integer parameter --------------------------------------------------

class PolygammaBackward0(Node):
    """out = ψ⁽ⁿ⁾(x);  dx = grad·ψ⁽ⁿ⁺¹⁾(x)"""
    formula = "d/dx ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x)"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (grad * _polygamma_of(ops, self.n + 1, x),)


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
    """out = Σⱼ lgamma(x - j/2) + p(p-1)/4·ln π (j < p);  dx = grad·Σⱼ ψ(x - j/2)"""
    formula = "d/dx ln Γₚ(x) = Σⱼ ψ(x - j/2)"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        total = _digamma_of(ops, x)
        for j in range(1, self.p):
            total = total + _digamma_of(ops, x - j / 2)
        return (grad * total,)


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
    return polygamma(n, self)


Tensor.polygamma = _polygamma_method
Tensor.polygamma_ = make_inplace(lambda self, n: _polygamma_op(n, self, PolygammaBackward1), "polygamma_")
Tensor.mvlgamma = mvlgamma
Tensor.mvlgamma_ = make_inplace(mvlgamma, "mvlgamma_")


# --- nan_to_num ----------------------------------------------------------------------------------------------

class NanToNumBackward0(Node):
    """out = x with nan and ±inf replaced by numbers;  dx = grad where x is finite, 0 elsewhere"""
    formula = "d/dx nan_to_num(x) = 1 where x is finite, else 0"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (ops.mask(np.isfinite(ops.raw(x)), grad),)


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


Tensor.nan_to_num = nan_to_num
Tensor.nan_to_num_ = make_inplace(nan_to_num, "nan_to_num_")


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
    """out = ln(eˣ + eʸ);  dx = grad / (1 + e^(y-x));  dy = grad / (1 + e^(x-y))"""
    formula = "∂ln(eˣ + eʸ)/∂x = eˣ/(eˣ + eʸ)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):     # nan where both are the same infinity
            return (grad / (1 + ops.exp(y - x)) if _needs(self, 0) else None,
                    grad / (1 + ops.exp(x - y)) if _needs(self, 1) else None)


class Logaddexp2Backward0(Node):
    """out = log₂(2ˣ + 2ʸ);  dx = grad / (1 + 2^(y-x));  dy = grad / (1 + 2^(x-y))"""
    formula = "∂log₂(2ˣ + 2ʸ)/∂x = 2ˣ/(2ˣ + 2ʸ)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return (grad / (1 + ops.exp((y - x) * _LN2)) if _needs(self, 0) else None,
                    grad / (1 + ops.exp((x - y) * _LN2)) if _needs(self, 1) else None)


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
    setattr(Tensor, name, op)
    return op


logaddexp = _logaddexp_op("logaddexp", np.logaddexp, LogaddexpBackward0,
                          "ln(e^input + e^other), without overflow: the larger term is taken out first.")
logaddexp2 = _logaddexp_op("logaddexp2", np.logaddexp2, Logaddexp2Backward0, "log₂(2^input + 2^other), stably.")


class NextafterBackward0(Node):
    """out = the next float after x towards y;  dx = grad;  dy = 0 (as PyTorch defines them)"""
    formula = "d/dx nextafter(x, y) = 1"

    def backward(self, ops, grad):
        return (grad if _needs(self, 0) else None, ops.zeros_like(grad) if _needs(self, 1) else None)


def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` in the direction of ``other``, elementwise."""
    xa, ya, target = _floating_pair("nextafter", input, other)
    result = as_result(broadcasting(np.nextafter, xa, ya), target)
    if wants_grad(input, other):
        record(NextafterBackward0, (input, other), result)
    return _finish(result, out)


class CopysignBackward0(Node):
    """out = |x| with the sign of y;  dx = grad·(out/x) (±1; 0 where x = 0);  dy = 0"""
    formula = "∂copysign(x, y)/∂x = ±1 (1 where the sign is kept)"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        xa = ops.raw(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(xa == 0, 0, ops.raw(out) / xa)
        dx = grad * ops.constant(ratio, grad) if _needs(self, 0) else None
        return (dx, ops.zeros_like(grad)) if len(self.next_functions) == 2 else dx


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
    """out = x·2ʸ;  dx = grad·2ʸ;  dy = grad·out·ln 2"""
    formula = "∂(x·2ʸ)/∂x = 2ʸ,  ∂(x·2ʸ)/∂y = x·2ʸ·ln 2"

    def backward(self, ops, grad):
        y, out = self.saved(ops)
        scale = ops.constant(self.scale, grad) if self.scale is not None else _rule_fn(ops, np.exp2, exp2)(y)
        return (grad * scale if _needs(self, 0) else None,
                grad * out * _LN2 if _needs(self, 1) else None)


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


class _HeavisideBackward(Node):
    """PyTorch defines no derivative of heaviside: backward through it raises, as in PyTorch."""
    formula = "no derivative defined"

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, ops, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


_HeavisideBackward.__name__ = _HeavisideBackward.__qualname__ = "NotImplemented"


def heaviside(input, values, *, out=None):
    """The step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0 (same dtypes only)."""
    _require_tensor("heaviside", values, arg="values")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    xa, va = input._data, values._data
    step = broadcasting(lambda a, v: np.where(a == 0, v, a > 0), xa, va)
    result = as_result(step, xa.dtype)
    if wants_grad(input, values):
        record(_HeavisideBackward, (input, values), result)
    return _finish(result, out)


frexp_result = return_types.frexp


class FrexpBackward0(Node):
    """(mantissa, exponent) = frexp(x), x = mantissa·2^exponent;  dx = grad / 2^exponent"""
    formula = "∂mantissa/∂x = 2^(-exponent)"

    def backward(self, ops, grad):
        return (grad * ops.constant(self.scale, grad),)


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

for _fn in (nextafter, copysign, ldexp, heaviside, gcd, lcm):
    setattr(Tensor, _fn.__name__, _fn)
    setattr(Tensor, _fn.__name__ + "_", make_inplace(_fn, _fn.__name__ + "_"))
Tensor.frexp = frexp
