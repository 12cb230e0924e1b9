"""Rejection samplers for the Gamma, Dirichlet, binomial and Poisson distributions, drawing PyTorch's numbers.

PyTorch's CPU kernels for ``_standard_gamma``, ``_sample_dirichlet``, ``binomial`` and ``poisson`` visit the
elements one at a time, in order, and draw from the generator as each element needs: a rejection sampler
draws until it accepts, so how many numbers an element takes depends on the numbers themselves. This module
repeats that walk in plain Python loops, one element after the other, with the same draws (a float64 uniform
from one 64-bit word, or a float64 normal from the Box-Muller pairs of ``core/random.py``) and the same arithmetic,
including where PyTorch computes in the tensor's float32 before widening to float64. The algorithms are the
published ones PyTorch uses: Marsaglia and Tsang (2000) for the Gamma, Hörmann's BTRS (1993) and inversion for
the binomial, Hörmann's PTRS (1993) and Knuth's product of uniforms for the Poisson.

These loops are slow next to NumPy's vectorized code (a few microseconds per draw); they are here to give the
same samples, not speed.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core.random import _box_muller_pairs, _generator, _uniform

__all__ = ["binomial", "poisson", "sample_dirichlet", "standard_gamma"]


class _Draws:
    """One float64 at a time from a generator, as PyTorch's ``uniform_real_distribution<double>(0, 1)`` and
    ``normal_distribution<double>(0, 1)`` draw them inside its samplers."""

    def __init__(self, generator):
        self.gen = _generator(generator)

    def uniform(self):
        return float(_uniform(self.gen, 1, np.float64)[0])

    def normal(self):
        return float(_box_muller_pairs(self.gen, 1, 0.0, 1.0)[0])


def _elementwise(sample, arrays, np_dtype):
    """``sample(*values)`` for each element of the broadcast ``arrays``, in C order, as a new array."""
    arrays = np.broadcast_arrays(*arrays)
    out = np.empty(arrays[0].shape, np_dtype)
    flat = out.reshape(-1)
    for i, values in enumerate(zip(*(a.reshape(-1) for a in arrays))):
        flat[i] = sample(*values)
    return out


# --- Gamma: Marsaglia and Tsang --------------------------------------------------------------------------

def _gamma_one(alpha, draws, single):
    """One Gamma(alpha, 1) value by Marsaglia and Tsang's squeeze-and-reject method.

    For alpha < 1, a Gamma(alpha + 1) value is scaled by u^(1/alpha). ``single``: alpha is a float32, and
    PyTorch computes alpha's updates and d = alpha - 1/3 in float32 before the float64 arithmetic.
    """
    real = np.float32 if single else float
    alpha = real(alpha)
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        scale *= math.pow(1 - draws.uniform(), float(real(1) / alpha))
        alpha = real(alpha + real(1))
    d = float(real(alpha - real(_F32_THIRD)))
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = draws.normal()
        y = 1.0 + c * x
        while y <= 0:
            x = draws.normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1 - draws.uniform()
        xx = x * x
        if u < 1.0 - _F32_0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


# PyTorch's C++ writes these constants as float literals (0.0331f, 1.0f / 3.0f), so even its float64 sampler
# computes with their float32 values.
_F32_0331 = float(np.float32(0.0331))
_F32_THIRD = float(np.float32(1) / np.float32(3))


def standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) samples for an array ``alpha`` (float32 or float64), at least the dtype's smallest
    normal number (PyTorch's floor, so that log(sample) stays finite)."""
    np_dtype = alpha.dtype
    tiny = dt.finfo_of(np.dtype(np_dtype)).tiny
    draws = _Draws(generator)
    single = np_dtype == np.float32

    def sample(a):
        return max(tiny, np_dtype.type(_gamma_one(a, draws, single)))
    return _elementwise(sample, [alpha], np_dtype)


def sample_dirichlet(concentration, generator=None):
    """Dirichlet samples: Gamma(α_i) values computed in float64 (whatever the dtype), divided by their sum over
    the last dim, then rounded and kept inside (0, 1) as PyTorch keeps them."""
    np_dtype = concentration.dtype
    draws = _Draws(generator)
    gammas = _elementwise(lambda a: max(np.finfo(np.float64).tiny, _gamma_one(a, draws, False)),
                          [concentration.astype(np.float64)], np.float64)
    ratios = (gammas / gammas.sum(-1, keepdims=True)).astype(np_dtype)
    below_one = np.nextafter(np_dtype.type(1), np_dtype.type(0))
    return np.clip(ratios, dt.finfo_of(np.dtype(np_dtype)).tiny, below_one)


# --- binomial: inversion and BTRS ---------------------------------------------------------------------------

def _log_factorial_tail(k):
    """log k! minus its Stirling approximation, (k + ½) log(k + 1) - (k + 1) + ½ log 2π; BTRS's correction.
    Small k from lgamma, larger k by the series (1/12 - (1/360 - 1/1260 / s) / s) / (k + 1), s = (k + 1)²."""
    if k < 10:
        return _STIRLING_TAILS[int(k)]
    square = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / square) / square) / (k + 1)


_STIRLING_TAILS = [math.lgamma(k + 1) - ((k + 0.5) * math.log(k + 1) - (k + 1) + 0.5 * math.log(2 * math.pi))
                   for k in range(10)]


def _binomial_inversion(count, prob, draws, real):
    """Count geometric waiting times (ceil(log u / log(1 - p))) until they pass ``count``."""
    log_q = float(real(math.log1p(-float(prob))))
    total, successes = 0.0, real(0)
    while True:
        total += math.ceil(math.log(draws.uniform()) / log_q)
        if total > count:
            return successes
        successes = real(successes + real(1))


def _btrs(count, prob, draws, real):
    """Hörmann's transformed rejection with squeeze, for count·prob ≥ 10 (prob ≤ ½)."""
    stddev = float(np.sqrt(real(count * prob * (real(1) - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(real(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(real(prob / (real(1) - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(np.floor(real((count + real(1)) * prob)))
    count_f = float(count)
    while True:
        u = draws.uniform() - 0.5
        v = draws.uniform()
        us = 0.5 - abs(u)
        k = real(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        k_f = float(k)
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count_f - m + 1)))
                 + float(count + real(1)) * math.log((count_f - m + 1) / float(real(count - k + real(1))))
                 + (k_f + 0.5) * math.log(r * float(real(count - k + real(1))) / float(real(k + real(1))))
                 + _log_factorial_tail(m) + _log_factorial_tail(count_f - m)
                 - _log_factorial_tail(k_f) - _log_factorial_tail(float(real(count - k))))
        if v <= bound:
            return k


def _binomial_one(count, prob, draws, real):
    """PyTorch's choice of method: inversion for a small mean, BTRS otherwise, on the rarer outcome."""
    if count <= 0.0 or prob <= 0.0:
        return real(0)
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if real(count * prob) >= 10.0:
            return _btrs(count, prob, draws, real)
        return _binomial_inversion(count, prob, draws, real)
    if prob > 0.5:
        q = real(1.0 - float(prob))
        if real(count * q) >= 10.0:
            return real(count - _btrs(count, q, draws, real))
        return real(count - _binomial_inversion(count, q, draws, real))
    return real(math.nan)


def binomial(count, prob, generator=None):
    """Binomial samples for arrays ``count`` and ``prob`` of one float dtype (PyTorch computes in that dtype)."""
    np_dtype = prob.dtype
    real = np_dtype.type
    draws = _Draws(generator)
    return _elementwise(lambda n, p: _binomial_one(real(n), real(p), draws, real), [count, prob], np_dtype)


# --- Poisson: product of uniforms and PTRS --------------------------------------------------------------------

def _poisson_one(lam, draws):
    """One Poisson(lam) count: Hörmann's PTRS for lam ≥ 10, else the number of uniforms whose running product
    stays above e^-lam."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        v_r = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = draws.uniform() - 0.5
            v = draws.uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= v_r:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    threshold, product, count = math.exp(-lam), 1.0, 0
    while True:
        product *= draws.uniform()
        if product <= threshold:
            return count
        count += 1


def poisson(rate, generator=None):
    """Poisson samples for an array ``rate`` (values in the rate's dtype)."""
    if rate.size and not (rate >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = _Draws(generator)
    return _elementwise(lambda lam: _poisson_one(float(lam), draws), [rate], rate.dtype)
