"""The Cauchy (Lorentz) distribution."""
import math
from typing import ClassVar

from .. import atan, empty, full, inf, nan, tan
from . import constraints
from ._location import _LocScale
from .distribution import Distribution

__all__ = ["Cauchy"]


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
