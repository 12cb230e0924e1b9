"""Special functions NumPy lacks, on arrays: ``lgamma``, ``digamma``, ``polygamma``, the Hurwitz ``zeta``, ``erfc``,
``erfcx``, ``erfinv``, ``ndtri``, the modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e`` and the regularized
incomplete gamma functions P and Q (``erf`` itself is in ``core/erf.py``).

SciPy is not a dependency, so each is computed with textbook methods: Taylor series, recurrences that shift the
argument, asymptotic expansions (with Bernoulli numbers), Chebyshev interpolation and Newton's method. Each works
in float64 and is within a few ulp of the true value; float32 and float16 inputs are computed in float64 and
rounded once. The ops of ``elementwise_extra`` and ``gradiente.special`` (``torch.special``) are built on them.
"""
import functools
import math

import numpy as np

from . import dtype as dt
from .erf import erf as erf_array

__all__ = [
    "lgamma_array",
    "digamma_array",
    "polygamma_array",
    "zeta_array",
    "erfc_array",
    "erfcx_array",
    "erfinv_array",
    "ndtri_array",
    "gammainc_array",
    "i0_array",
    "i0e_array",
    "i1_array",
    "i1e_array",
]

_SQRT_PI = math.sqrt(math.pi)


# numpy.polynomial is reached through the attribute, so that it loads on first use (~2 ms), not with gradiente
def _polyval(x, coef):
    return np.polynomial.polynomial.polyval(x, coef)


def _chebval(x, coef):
    return np.polynomial.chebyshev.chebval(x, coef)
_EULER_GAMMA = 0.57721566490153286061
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _in_double(fn):
    """``fn`` run on a flat float64 copy of its first argument (so it may index and write freely), the result
    given back in the input's shape and floating dtype (integers give float64)."""
    @functools.wraps(fn)
    def on_array(a, *args):
        a = np.asanyarray(a)
        dtype = a.dtype if dt.kind(a.dtype) == "f" else np.dtype(np.float64)
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
    from fractions import Fraction  # here, not at import: fractions loads decimal (~2.5 ms of every import)
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
    series = _polyval(1 / (x * x), coef) / x
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
        return _polyval(y - 2, around_2) + np.log(product)

    return _fill(x, [(x < 1.5, lambda v: _polyval(v - 1, around_1)),
                     ((x >= 1.5) & (x < 2.5), lambda v: _polyval(v - 2, around_2)),
                     ((x >= 2.5) & (x < 8), shifted),
                     (x >= 8, _stirling_lgamma)])


@_in_double
def lgamma_array(x):
    """ln|Γ(x)|: +inf at 0 and the negative integers; for x < -1/2 by the reflection formula
    lgamma(x) = ln(π / |sin πx|) - lgamma(1 - x)."""
    around_1, _ = _lgamma_taylor()
    small = np.abs(x) < 0.5
    negative = (x <= -0.5) & ~_is_integer(x)
    return _fill(x, [(small, lambda v: _polyval(v, around_1) - np.log(np.abs(v))),   # lgamma(1+v) - ln|v|
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
    return total + (np.log(y) - 0.5 / y - t * _polyval(t, coef))


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
    p = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        p = -np.polynomial.Polynomial([1.0, 0.0, 1.0]) * p.deriv()
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
    s, q = np.broadcast_arrays(np.asanyarray(s, dtype=np.float64), np.asanyarray(q, dtype=np.float64))
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
    return _polyval(0.5 / (x * x), coef) / (x * _SQRT_PI)


def _erfcx_from_half(x):
    """erfcx(x) = e^(x²)·erfc(x) for x >= 1/2 (it is smooth and slowly varying there)."""
    cases = [((x >= lo) & (x < hi), lambda v, lo=lo, hi=hi, c=c: _chebval((2 * v - lo - hi) / (hi - lo), c))
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
    central = a * _polyval(w - 2.5, _GILES_CENTRAL)
    tail = a * _polyval(np.sqrt(w) - 3, _GILES_TAIL)
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
        out = _polyval(v * v / 4, coef) * (v / 2) ** order
        return out * np.exp(-v) if scaled else out

    def asymptotic(v):
        mu = 4.0 * order * order
        coef = [(-1) ** k * math.prod(mu - (2 * j - 1) ** 2 for j in range(1, k + 1)) / (math.factorial(k) * 8 ** k)
                for k in range(30)]
        with np.errstate(invalid="ignore"):     # inf·0 at v = inf, nan as in PyTorch
            out = _polyval(1 / v, coef) / np.sqrt(2 * np.pi * v)
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


# --- the incomplete gamma function -----------------------------------------------------------------------

_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
_MAX_STEPS = 10_000


def _gamma_log_prefactor(a, x):
    """log(xᵃ e⁻ˣ / Γ(a))."""
    return a * np.log(x) - x - lgamma_array(a)


def _lower_series(a, x):
    """P = xᵃ e⁻ˣ / Γ(a + 1) · Σ_n xⁿ / ((a+1)···(a+n))."""
    term = np.ones_like(x)
    total = term.copy()
    for n in range(1, _MAX_STEPS):
        term = term * x / (a + n)
        total += term
        if np.all(np.abs(term) <= _EPS * np.abs(total)):
            break
    return np.exp(_gamma_log_prefactor(a, x)) * total / a


def _upper_fraction(a, x):
    """Q = xᵃ e⁻ˣ / Γ(a) · 1/(x+1-a- 1·(1-a)/(x+3-a- 2·(2-a)/(x+5-a- ...))), by Lentz's method."""
    b = x + 1 - a
    c = np.full_like(x, 1 / _TINY)
    d = 1 / b
    fraction = d
    for i in range(1, _MAX_STEPS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        step = d * c
        fraction = fraction * step
        if np.all(np.abs(step - 1) <= _EPS):
            break
    return np.exp(_gamma_log_prefactor(a, x)) * fraction


def gammainc_array(a, x, upper=False):
    """P(a, x), the regularized lower incomplete gamma function ∫₀ˣ tᵃ⁻¹ e⁻ᵗ dt / Γ(a), or with ``upper``
    Q(a, x) = 1 - P(a, x), in float64: P's power series below x = a + 1, where it converges quickly, and above
    that Q's continued fraction (the textbook split, as in Numerical Recipes); each side's other value is one
    minus it. nan outside a > 0, x ≥ 0."""
    a, x = np.broadcast_arrays(np.asanyarray(a, np.float64), np.asanyarray(x, np.float64))
    result = np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0)
    result[valid & (x == 0)] = 1.0 if upper else 0.0
    result[valid & np.isposinf(x)] = 0.0 if upper else 1.0
    inside = valid & (x > 0) & np.isfinite(x)
    series = inside & (x < a + 1)
    fraction = inside & ~series
    lower = _lower_series(a[series], x[series])
    upper_part = _upper_fraction(a[fraction], x[fraction])
    result[series] = 1 - lower if upper else lower
    result[fraction] = upper_part if upper else 1 - upper_part
    return result
