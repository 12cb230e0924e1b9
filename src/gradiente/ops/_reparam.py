"""Pathwise derivatives of Gamma and Beta samples with respect to their concentrations, in NumPy.

A Gamma or Beta sample is no simple function of its parameters and some noise, but it is one implicitly: a
sample x is the u-quantile of its distribution, F(x; α) = u, for a uniform u that does not depend on α. Holding
u fixed, dx/dα = -(∂F/∂α)(x; α) / p(x; α) (the implicit reparameterization gradient, Figurnov et al. 2018).
Both functions below compute it from a power series of the CDF, summed until the terms no longer matter, so
the result is exact to floating-point accuracy.

Intended difference from PyTorch: PyTorch evaluates the same derivative with fitted approximations
(Taylor series, saddle-point expansions and rational fits) accurate to about 1e-3 relative; so gradients of
``Gamma.rsample``, ``Beta.rsample`` and ``Dirichlet.rsample`` agree with PyTorch's to that accuracy only.
"""
import numpy as np

from ..core.special_math import digamma_array

__all__ = ["beta_grad", "standard_gamma_grad"]

_MAX_TERMS = 200_000
_TOLERANCE = 1e-17


def _sum_series(first, ratio, dlog_ratio, start):
    """Σ c_n and Σ ∂c_n/∂α over n ≥ 0, where c_0 = ``first``, c_n = c_(n-1)·ratio(n) and ∂(log c_n)/∂α grows
    by dlog_ratio(n) at each step from ``start``. Stops when every element's next term is negligible."""
    term, dlog = first, start
    total, dtotal = term.copy(), term * dlog
    for n in range(1, _MAX_TERMS):
        term = term * ratio(n)
        dlog = dlog + dlog_ratio(n)
        total += term
        dtotal += term * dlog
        if np.all(np.abs(term) <= _TOLERANCE * np.abs(total)) and np.all(np.abs(term * dlog) <= _TOLERANCE *
                                                                          np.abs(dtotal)):
            break
    return total, dtotal


def standard_gamma_grad(alpha, x):
    """dx/dα for x ~ Gamma(α, 1), arrays of one float dtype.

    The lower incomplete gamma function is x^α e^-x S with S = Σ_k x^k / (α(α+1)···(α+k)), so the derivative is
    dx/dα = -x (S (log x - ψ(α)) + ∂S/∂α): every term of S is positive, so the sum does not cancel.
    """
    a, z = alpha.astype(np.float64), x.astype(np.float64)
    series, dseries = _sum_series(1 / a, lambda k: z / (a + k), lambda k: -1 / (a + k), -1 / a)
    result = -z * (series * (np.log(z) - digamma_array(a)) + dseries)
    return np.where(z > 0, result, 0.0).astype(x.dtype)


def beta_grad(x, alpha, total):
    """dx/dα / (1 - x) for x ~ Beta(α, β), β = total - α held fixed: the factor of the Dirichlet's gradient
    (PyTorch's ``_dirichlet_grad``).

    The regularized incomplete beta function is I_x(a, b) = x^a (1-x)^b / (a B(a, b)) · F with the
    hypergeometric series F = Σ_n [(a+b)_n / (a+1)_n] x^n. Its terms fall fastest on one side of the mean, so
    each element takes I_x(α, β) directly or as 1 - I_(1-x)(β, α), whichever series shrinks sooner.
    """
    x64, a, t = x.astype(np.float64), alpha.astype(np.float64), total.astype(np.float64)
    b = t - a
    flipped = _slower_directly(x64, a, b)
    # The series' own parameters: (p, q, z) = (α, β, x) directly, (β, α, 1 - x) flipped.
    p, q, z = np.where(flipped, b, a), np.where(flipped, a, b), np.where(flipped, 1 - x64, x64)
    # c_n = (p+q)_n / (p+1)_n z^n. Directly, α is p and enters both rising factorials; flipped, α is q and
    # enters only the numerator's.
    series, dseries = _sum_series(np.ones_like(z), lambda n: z * (p + q + n - 1) / (p + n),
                                  lambda n: 1 / (p + q + n - 1) - np.where(flipped, 0.0, 1 / (p + n)),
                                  np.zeros_like(z))
    log_shift = np.log(x64) - digamma_array(a) + digamma_array(t)
    direct = -x64 / a * (series * (log_shift - 1 / a) + dseries)
    reflected = x64 / b * (series * log_shift + dseries)
    return np.where(flipped, reflected, direct).astype(x.dtype)


def _slower_directly(x, a, b):
    """Whether the series in 1 - x converges faster: compare the largest term ratio of each series."""
    direct = np.maximum(x * (a + b) / (a + 1), x)
    reflected = np.maximum((1 - x) * (a + b) / (b + 1), 1 - x)
    return reflected < direct
