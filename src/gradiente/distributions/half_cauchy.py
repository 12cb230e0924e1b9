"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""
from typing import ClassVar

from .. import full, inf
from . import constraints
from ._folded import _Folded
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


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
