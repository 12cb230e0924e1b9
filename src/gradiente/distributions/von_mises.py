"""The von Mises distribution: the circular analogue of the normal, on angles."""
import math
from typing import ClassVar

from .. import cos, empty, float64, no_grad, rand, where
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz and Stegun 9.8.1-9.8.4),
# small (x < 3.75) and large arguments, as PyTorch evaluates them, so that log-densities agree to the last bit.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                  -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1,
                  -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y, coef):
    """Σ coef[i] yⁱ by Horner's rule, from the highest coefficient down."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1, x > 0."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) * (x / 3.75)
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's (1979) rejection sampler: rounds of three uniforms per element until every element
    has accepted once; the angles are then wrapped into [-π, π)."""
    done = empty(x.shape, dtype=concentration.dtype).fill_(0).bool()
    while not done.all():
        u1, u2, u3 = rand((3, *x.shape), dtype=loc.dtype).unbind()
        z = cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Von Mises distribution on angles with mean direction ``loc`` and ``concentration`` κ: density
    exp(κ cos(x - loc)) / (2π I0(κ)).

    ``sample`` runs Best and Fisher's rejection sampler in float64 with ``rand``, as PyTorch (its numbers for
    the same seed) and returns the parameters' dtype. There is no ``rsample`` and no entropy, as in PyTorch.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)  # a Taylor form where rho underflows

    def sample(self, sample_shape=()):
        with no_grad():
            x = empty(self._extended_shape(sample_shape), dtype=self._loc.dtype)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """1 - I1(κ)/I0(κ): the circular variance."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
