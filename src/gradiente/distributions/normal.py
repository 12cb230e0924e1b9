"""The normal (Gaussian) distribution N(loc, scale²)."""
import math
from typing import ClassVar

from .. import erf, erfinv, log, no_grad, normal
from . import constraints
from ._location import _LocScale
from .exp_family import ExponentialFamily
from .utils import _is_number, _standard_normal

__all__ = ["Normal"]


class Normal(_LocScale, ExponentialFamily):
    """Normal distribution with mean ``loc`` and standard deviation ``scale`` (numbers or tensors, broadcast
    together).

    ``sample`` draws ``normal(loc, scale)`` of the sample's shape; ``rsample`` draws standard normals ε and
    returns ``loc + ε·scale``, through which gradients reach ``loc`` and ``scale`` (the reparameterization
    trick). Both draw the random numbers PyTorch draws for the same seed.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, _instance, "loc", "scale")

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """-(x - loc)² / (2 scale²) - log(scale) - log(√(2π))."""
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.log(self.scale) if _is_number(self.scale) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * self.scale**2) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        """½ (1 + erf((x - loc) / (scale √2)))."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        """loc + scale · √2 · erfinv(2p - 1)."""
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """½ + ½ log(2π) + log(scale)."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * log(-math.pi / y)
