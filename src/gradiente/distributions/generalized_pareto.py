"""The generalized Pareto distribution: exceedances over a threshold (extreme-value statistics)."""
import math
from typing import ClassVar

from .. import Size, broadcast_to, expm1, inf, isclose, nan, ones_like, rand, where, zeros_like
from . import constraints
from .distribution import Distribution
from .utils import _is_number, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with ``loc`` μ, ``scale`` σ and shape ``concentration`` ξ: survival
    (1 + ξ(x - μ)/σ)^(-1/ξ) (exp(-(x - μ)/σ) at ξ = 0), on [μ, μ - σ/ξ] for ξ < 0 and [μ, inf) otherwise.

    ``rsample`` is ``icdf(rand(...))``, as PyTorch (its numbers for the same seed). ξ within ``isclose`` of 0
    takes the exponential branch of each formula.

    Intended difference: PyTorch's ``log_prob`` and ``log_survival_function`` compare ξ with a float32 zero
    and raise "Double did not match Float" for float64 parameters; here they compare with a zero of ξ's dtype
    and work in float64 too.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive,
                                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        all_numbers = _is_number(loc) and _is_number(scale) and _is_number(concentration)
        super().__init__(Size() if all_numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration")

    def rsample(self, sample_shape=()):
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _safe_concentration(self):
        """(whether ξ ≈ 0, ξ with those entries replaced by 1 so that the ξ ≠ 0 branch stays finite)."""
        eq_zero = isclose(self.concentration, zeros_like(self.concentration))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + ones_like(z)
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        log_scale = math.log(self.scale) if _is_number(self.scale) else self.scale.log()
        return -log_scale - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return where(eq_zero, -z, -(safe_conc * z).log1p() / safe_conc)

    def log_cdf(self, value):
        """log P(X ≤ value)."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero = isclose(self.concentration, zeros_like(self.concentration))
        safe_conc = where(eq_zero, ones_like(self.concentration), self.concentration)
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * expm1(-safe_conc * logu)
        return where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        return where(valid, self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), nan)

    def entropy(self):
        return broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, inf)
        return constraints.interval(lower, upper)
