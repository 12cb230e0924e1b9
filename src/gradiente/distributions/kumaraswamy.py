"""The Kumaraswamy distribution on [0, 1]: like Beta, with a closed-form cdf."""
from typing import ClassVar

from .. import digamma, exp, full_like, lgamma, log, nan
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[Xⁿ] for X ~ Kumaraswamy(a, b): b·B(1 + n/a, b), computed in log space."""
    arg1 = 1 + n / a
    log_value = lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)
    return b * exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution with shapes a = ``concentration1`` and b = ``concentration0``: density
    a·b·x^(a-1)·(1 - x^a)^(b-1), cdf 1 - (1 - x^a)^b.

    Samples push Uniform(0, 1) draws through u^(1/b), 1 - u and u^(1/a), as PyTorch, so they are PyTorch's
    numbers for the same seed.
    """

    arg_constraints: ClassVar[dict] = {"concentration1": constraints.positive,
                                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # In log space for stability; there is no interior mode when either shape is below 1.
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode[(b < 1) | (a < 1)] = nan
        return log_mode.exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - log(self.concentration1) - log(self.concentration0)
