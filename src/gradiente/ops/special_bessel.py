"""Bessel functions of ``torch.special`` that gradiente computes so far: ``modified_bessel_i0``/``i1`` (the
values of ``i0``/``special.i1``), ``spherical_bessel_j0`` (sin x / x) and ``modified_bessel_k0``/``k1`` with
their scaled forms e^x·K(x). As in PyTorch they are not differentiable: the result records no node. Pure NumPy
(see ``special_polynomials`` for why not scipy).

K₀ and K₁ come from their integral K_n(x) = ∫₀^∞ e^(-x·cosh t)·cosh(nt) dt by the trapezoid rule: for this
analytic integrand the error falls like e^(-2π²/(x·h²)), so a step h = 0.1 is exact to float64 rounding up to x =
50; above it Hankel's asymptotic series is. Neither needs a table of approximation coefficients.
J₀, J₁, Y₀, Y₁ and Ai are in ``special_bessel_j``."""
import numpy as np

from ..core.special_math import i0_array, i1_array
from ..core.tensor import Tensor
from .arithmetic import _write_out
from .unary import _floating_array, _on_floats

__all__ = ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0", "modified_bessel_k0",
           "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]

_STEP = 0.1
#: nodes of the trapezoid rule; beyond t = 710 cosh t overflows and the integrand is 0 for every x > 0
_NODES = np.arange(0.0, 710.0, _STEP)
_WEIGHTS = np.where(_NODES == 0, _STEP / 2, _STEP)
_CHUNK = 256


#: above this the integrand is too narrow for the step (its width is about 1/√x); Hankel's series is exact there
_ASYMPTOTIC_FROM = 50.0


def _large_argument(order, x):
    """e^x·K_order(x) for x > 50 from Hankel's asymptotic series √(π/2x)·Σ aₖ(n)/xᵏ, 30 terms (the last is below
    1e-29 of the first at x = 50)."""
    mu = 4.0 * order * order
    term, total = np.ones_like(x), np.ones_like(x)
    for k in range(1, 31):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total = total + term
    return np.sqrt(np.pi / (2 * x)) * total


def _bessel_k(order, scaled):
    """K_order(x), or e^x·K_order(x) when ``scaled``, by the trapezoid rule (see the module docstring)."""
    def kernel(x):
        flat = np.asanyarray(x, dtype=np.float64).reshape(-1)
        result = np.empty_like(flat)
        cosh_t = np.cosh(_NODES)
        shift = cosh_t - 1 if scaled else cosh_t
        weights = _WEIGHTS * np.cosh(order * _NODES)
        with np.errstate(all="ignore"):
            for start in range(0, flat.size, _CHUNK):
                part = flat[start:start + _CHUNK, None]
                terms = np.where(weights > 0, np.exp(-part * shift) * weights, 0.0)
                # scaled: e^x·K(x) is the integral of e^(-x(cosh t - 1)), exact where e^x alone overflows
                result[start:start + _CHUNK] = terms.sum(axis=1)
            large = flat > _ASYMPTOTIC_FROM
            if large.any():
                value = _large_argument(order, flat[large])
                result[large] = value if scaled else value * np.exp(-flat[large])
        inside = flat > 0
        edge = np.where(flat == 0, np.inf, np.where(flat == np.inf, 0.0, np.nan))
        return np.where(inside & np.isfinite(flat), result, edge).reshape(np.shape(x)).astype(np.asanyarray(x).dtype)
    return kernel


def _spherical_j0(x):
    with np.errstate(all="ignore"):
        small = np.abs(x) < 1e-4
        # the Taylor series near 0, where sin(x)/x loses digits; 0 at ±inf, where sin(x) has no value
        series = 1 - x * x / 6 * (1 - x * x / 20 * (1 - x * x / 42))
        value = np.where(small, series, np.sin(x) / x)
        return np.where(np.isinf(x), 0.0, value).astype(x.dtype)


def _not_differentiable(name, array_fn):
    def function(input, *, out=None):

        result = Tensor._make(np.asanyarray(_on_floats(array_fn, _floating_array(input))))
        return result if out is None else _write_out(result, out, name)

    function.__name__ = function.__qualname__ = name.removeprefix("special_")
    function.__doc__ = f"``torch.special.{function.__name__}`` elementwise, same shape; no derivative, as in PyTorch."
    return function


modified_bessel_i0 = _not_differentiable("special_modified_bessel_i0", i0_array)
modified_bessel_i1 = _not_differentiable("special_modified_bessel_i1", i1_array)
spherical_bessel_j0 = _not_differentiable("special_spherical_bessel_j0", _spherical_j0)
modified_bessel_k0 = _not_differentiable("special_modified_bessel_k0", _bessel_k(0, scaled=False))
modified_bessel_k1 = _not_differentiable("special_modified_bessel_k1", _bessel_k(1, scaled=False))
scaled_modified_bessel_k0 = _not_differentiable("special_scaled_modified_bessel_k0", _bessel_k(0, scaled=True))
scaled_modified_bessel_k1 = _not_differentiable("special_scaled_modified_bessel_k1", _bessel_k(1, scaled=True))

