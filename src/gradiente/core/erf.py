"""Special functions NumPy lacks, on arrays: ``erf`` (vectorized, float64-accurate).

NumPy has no ``erf`` and SciPy is not a dependency; ``np.frompyfunc(math.erf)`` is accurate but costs a
Python call per element. Here erf is a handful of whole-array passes, within 3 ulp of ``math.erf`` (2 for
|x| < 1; the 3 are just above 1, where ``1 - e^(-x²)R(x)`` cancels a little):

* ``|x| < 1``: ``erf(x) = x + x·Q(x²)`` with ``Q(z) = erf(√z)/√z − 1`` a polynomial of degree 11 in ``z = x²``,
  evaluated by Horner's rule (two NumPy passes a coefficient), within 1 ulp of ``math.erf``. Its coefficients
  (``_SMALL``) are the Chebyshev interpolant of Q on [0, 1], computed in 50-digit arithmetic and rewritten in
  powers of z by ``tools/erf_coefficients.py``: the truncated Taylor series needs 19 terms for the same
  accuracy, because its error piles up at the end of the interval where Chebyshev's is spread evenly. Writing
  ``x + x·Q`` rather than ``x·(1 + Q)`` keeps the polynomial's rounding error a small part of the result
  (``|Q| ≤ 0.16``). This piece is computed for the whole array at once and its values outside |x| < 1
  replaced: selecting the small inputs first would cost more than evaluating the polynomial everywhere;
* ``1 ≤ |x| < 6``: ``erf(x) = 1 - e^(-x²) R(x)`` with ``R(x) = erfc(x) e^(x²)``, a smooth slowly varying
  function, interpolated at Chebyshev points (from ``math.erfc``, once, on first use). Because ``e^(-x²)``
  scales its error down, each piece keeps only the coefficients that can still move the result;
* ``|x| ≥ 6``: ``erf(x) = ±1`` exactly in float64 (``erfc(6) ≈ 2e-17``).
"""
import functools
import math

import numpy as np

from . import dtype as dt

__all__ = ["erf"]

# Q(z) = erf(√z)/√z − 1 = Σ _SMALL[k]·zᵏ on 0 ≤ z ≤ 1 (tools/erf_coefficients.py, degree 11)
_SMALL = (0.12837916709551256,
          -0.37612638903183543,
          0.1128379167094513,
          -0.026866170643256995,
          0.005223977607269946,
          -0.0008548325982543225,
          0.00012055295112667001,
          -1.4924740785377576e-05,
          1.6447471190594618e-06,
          -1.6208829856810202e-07,
          1.3721520406351094e-08,
          -7.798543850549947e-10)
_PIECES = ((1.0, 2.0), (2.0, 6.0))


@functools.cache
def _tables():
    n = 64
    theta = np.pi * (np.arange(n) + 0.5) / n
    pieces = []
    for lo, hi in _PIECES:
        points = lo + (hi - lo) * (np.cos(theta) + 1) / 2
        values = np.array([math.erfc(a) * math.exp(a * a) for a in points])
        # Interpolation at the n Chebyshev points: c_j = 2/n Σ_k R(x_k) cos(j θ_k) (c_0 halved).
        coef = 2 / n * np.cos(np.outer(np.arange(n), theta)) @ values
        coef[0] /= 2
        # The coefficients fall geometrically to a rounding-noise floor; erf's absolute error is
        # e^(-x²)·(error of R), so the series stops at the first coefficient that cannot move erf.
        bound = 5e-17 * math.exp(lo * lo)
        degree = int(np.argmax(np.abs(coef) < bound))
        pieces.append((lo, hi, coef[:degree]))
    return pieces


def _chebval(u, coef):
    """Σ c_j T_j(u) by Clenshaw's recurrence, b ← 2u·b₁ − b₂ + c, in three arrays passed round (a fresh array a
    step cost as much as the arithmetic)."""
    b1 = np.zeros_like(u)
    b2 = np.zeros_like(u)
    step = np.empty_like(u)
    two_u = 2 * u
    for c in coef[:0:-1]:
        np.multiply(two_u, b1, out=step)
        step -= b2
        step += c
        b1, b2, step = step, b1, b2
    return u * b1 - b2 + coef[0]


def erf(a):
    """The error function of a floating array, elementwise, computed in float64 and returned in ``a``'s dtype."""
    a = np.asanyarray(a)
    dtype = a.dtype if dt.kind(a.dtype) == "f" else np.dtype(np.float64)
    x = a.astype(np.float64, copy=False).ravel()     # flat, so that the tail's positions index it directly
    # Outside |x| < 1 the polynomial's values are meaningless (they grow like x²², and overflow for |x| > 1e14)
    # and are replaced below; computing them anyway is cheaper than selecting the small inputs first.
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.multiply(x, x)
        acc = np.full_like(z, _SMALL[-1])
        for c in _SMALL[-2::-1]:
            acc *= z
            acc += c
        acc *= x
        out = np.add(acc, x, out=acc)       # x + x·Q(x²)
    tail = np.flatnonzero(z >= 1)           # NaN compares false: it stays in the polynomial, which keeps it NaN
    if tail.size:
        out[tail] = np.copysign(_erf_tail(np.abs(x[tail])), x[tail])
    return out.reshape(a.shape).astype(dtype, copy=False)


def _erf_tail(ax):
    """erf of ``ax >= 1``: ``1 - e^(-x²) R(x)`` on each Chebyshev piece, exactly 1 from 6 on (and at infinity)."""
    out = np.ones_like(ax)
    for lo, hi, coef in _tables():
        inside = np.flatnonzero((ax >= lo) & (ax < hi))
        av = ax[inside]
        u = (av - (lo + hi) / 2) * (2 / (hi - lo))
        out[inside] = 1 - np.exp(-av * av) * _chebval(u, coef)
    return out
