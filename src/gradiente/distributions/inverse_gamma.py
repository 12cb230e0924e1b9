"""The inverse-gamma distribution: the law of 1/X for X ~ Gamma(concentration, rate)."""
from typing import ClassVar

from .. import inf, where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """Inverse-gamma distribution with shape ``concentration`` α and scale ``rate`` β: density
    β^α x^(-α-1) e^(-β/x) / Γ(α) on x > 0. Samples are 1/Gamma draws, PyTorch's numbers for the same seed;
    ``rsample``'s gradient in α is Gamma's (exact here, approximated by PyTorch)."""

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return where(self.concentration > 1, self.rate / (self.concentration - 1), inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return where(self.concentration > 2, result, inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
