"""The Weibull distribution: the law of scale·E^(1/concentration), E standard exponential."""
from typing import ClassVar

from .. import exp, lgamma, log
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull distribution with ``scale`` λ and shape ``concentration`` k: cdf 1 - exp(-(x/λ)^k) on x > 0.

    Samples push Exponential(1) draws through x^(1/k) and λ·x, as PyTorch, so they are PyTorch's numbers.
    """

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(self.scale.new_ones(self.scale.shape), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (exp(lgamma(1 + 2 * self.concentration_reciprocal))
                                    - exp(2 * lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + log(self.scale * self.concentration_reciprocal) + 1)
