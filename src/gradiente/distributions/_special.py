"""``gammainc``, the regularized lower incomplete gamma function P(a, x), for ``Gamma.cdf``.

P(a, x) = ∫₀ˣ tᵃ⁻¹ e⁻ᵗ dt / Γ(a). Below x = a + 1 its power series converges quickly; above,
the continued fraction of Q = 1 - P does (the textbook split, as in Numerical Recipes). Computed in float64.
As in PyTorch (``torch.special.gammainc``), it is differentiable in x only: dP/dx = xᵃ⁻¹ e⁻ˣ / Γ(a).
"""
import numpy as np

from ..core.errors import broadcasting
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.special_math import lgamma_array

__all__ = ["gammainc"]

_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
_MAX_STEPS = 10_000


def _log_prefactor(a, x):
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
    return np.exp(_log_prefactor(a, x)) * total / a


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
    return np.exp(_log_prefactor(a, x)) * fraction


def _gammainc_array(a, x):
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    result = np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0)
    result[valid & (x == 0)] = 0.0
    result[valid & np.isposinf(x)] = 1.0
    inside = valid & (x > 0) & np.isfinite(x)
    series = inside & (x < a + 1)
    fraction = inside & ~series
    result[series] = _lower_series(a[series], x[series])
    result[fraction] = 1 - _upper_fraction(a[fraction], x[fraction])
    return result


class IgammaBackward0(Node):
    """out = P(a, x);  dx = grad · xᵃ⁻¹ e⁻ˣ / Γ(a);  da is not implemented (as in PyTorch)"""
    __slots__ = ()
    formula = "∂P(a, x)/∂x = xᵃ⁻¹ e⁻ˣ / Γ(a)"

    def backward(self, ops, grad):
        if self.next_functions[0][0] is not None:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        a, x = (ops.raw(v) for v in self.saved(ops))
        density = np.exp((a - 1) * np.log(x) - x - lgamma_array(a))
        return None, grad * ops.constant(density.astype(np.result_type(grad.dtype, np.float32)), grad)


def gammainc(a, x):
    """P(a, x) for tensors ``a`` and ``x`` of one floating dtype (broadcast), differentiable in ``x``."""
    dtype = np.result_type(a._data.dtype, x._data.dtype)
    out = wrap(broadcasting(_gammainc_array, a._data, x._data).astype(dtype))
    if wants_grad(a, x):
        record(IgammaBackward0, (a, x), out, (a, x))
    return out
