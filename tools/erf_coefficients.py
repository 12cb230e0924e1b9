"""Derives the polynomial of ``core/erf.py`` for |x| < 1 (run with mpmath installed; it is not a dependency):

    erf(x) = x + x·Q(x²),   Q(z) = erf(√z)/√z − 1 = Σ q_k z^k  on  0 ≤ z ≤ 1

Q is interpolated at Chebyshev points in 50-digit arithmetic, the Chebyshev series cut where its terms fall
below float64's rounding of the result, and rewritten in powers of z (exactly, still in 50 digits) so that
gradiente evaluates it by Horner's rule with two NumPy passes a coefficient. Only the final coefficients are
rounded to float64. Prints them, then the largest error in ulps against ``math.erf`` on a dense grid.

    python tools/erf_coefficients.py [degree]
"""
import math
import sys

import mpmath
import numpy as np

mpmath.mp.dps = 50


def q(z):
    if z == 0:
        return 2 / mpmath.sqrt(mpmath.pi) - 1
    r = mpmath.sqrt(z)
    return mpmath.erf(r) / r - 1


def coefficients(degree, nodes=60):
    """The power-series coefficients (in z on [0, 1]) of the Chebyshev interpolant of Q, cut at ``degree``."""
    theta = [mpmath.pi * (k + mpmath.mpf(1) / 2) / nodes for k in range(nodes)]
    values = [q((mpmath.cos(t) + 1) / 2) for t in theta]
    cheb = [2 * mpmath.fsum(v * mpmath.cos(j * t) for v, t in zip(values, theta)) / nodes for j in range(nodes)]
    cheb[0] /= 2
    # T_j(u) with u = 2z - 1, expanded in powers of z by the recurrence T_{j+1} = 2u T_j - T_{j-1}.
    power = [[mpmath.mpf(0)] * (degree + 1) for _ in range(degree + 1)]
    power[0][0] = mpmath.mpf(1)
    if degree:
        power[1][0], power[1][1] = mpmath.mpf(-1), mpmath.mpf(2)
    for j in range(1, degree):
        for k in range(degree + 1):
            shifted = power[j][k - 1] if k else 0
            power[j + 1][k] = 2 * (2 * shifted - power[j][k]) - power[j - 1][k]
    return [float(mpmath.fsum(cheb[j] * power[j][k] for j in range(degree + 1))) for k in range(degree + 1)]


def worst_ulps(coef):
    x = np.linspace(-1, 1, 400_001)
    z = x * x
    acc = np.full_like(z, coef[-1])
    for c in coef[-2::-1]:
        acc = acc * z + c
    ours = x + x * acc
    ref = np.array([math.erf(v) for v in x])
    return (np.abs(ours - ref) / np.spacing(np.maximum(np.abs(ref), 1e-300))).max()


if __name__ == "__main__":
    degrees = [int(sys.argv[1])] if len(sys.argv) > 1 else range(9, 14)
    for d in degrees:
        coef = coefficients(d)
        print(d, worst_ulps(coef))
        print("(" + ",\n ".join(repr(c) for c in coef) + ")")
