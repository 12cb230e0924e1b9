"""The Gumbel distribution (type-I extreme value): the law of loc - scale·log(-log U), U uniform."""
import math
from typing import ClassVar

from .. import full_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _finfo, broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Gumbel distribution with location ``loc`` and scale ``scale``: cdf exp(-exp(-(x - loc)/scale)).

    Built as PyTorch builds it, a Uniform(tiny, 1 - eps) pushed through log⁻¹, negation, log⁻¹ and
    x ↦ loc - scale·x, so samples are PyTorch's numbers for the same seed.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = _finfo(self.loc)
        base_dist = Uniform(full_like(self.loc, float(finfo.tiny)), full_like(self.loc, 1 - float(finfo.eps)),
                            validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-self.scale.new_ones(self.scale.shape)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        """-(x - loc)/scale - exp(-(x - loc)/scale) - log(scale): the closed form, not the transforms'."""
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
