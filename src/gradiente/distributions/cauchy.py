"""The Cauchy distribution and its fold onto [0, inf), HalfCauchy."""
import math
from typing import ClassVar

from .. import atan, empty, full, inf, nan, tan
from . import constraints
from ._folded import _Folded
from ._location import _LocScale
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["Cauchy", "HalfCauchy"]


class Cauchy(_LocScale, Distribution):
    """Cauchy (Lorentz) distribution centred on ``loc`` with half-width ``scale``: density
    1 / (π·scale·(1 + ((x - loc)/scale)²)). It has no mean or variance (they read nan and inf, as in PyTorch).

    ``rsample`` fills a tensor with standard Cauchy draws (``cauchy_()``, PyTorch's numbers) and scales them.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return full(self._extended_shape(), nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        return full(self._extended_shape(), inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """-log π - log(scale) - log(1 + ((x - loc)/scale)²)."""
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(_Folded, TransformedDistribution):
    """The law of |X| for X ~ Cauchy(0, scale), on [0, inf); its mean and variance are infinite."""

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return full(self._extended_shape(), inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
