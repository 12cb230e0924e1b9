"""The Poisson distribution: P(k) = rate^k e^(-rate) / k!."""
from typing import ClassVar

from .. import exp, log, no_grad
from ..ops.sampling import poisson
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson distribution with ``rate`` λ. Samples are float counts drawn with PyTorch's sampler (a product
    of uniforms for λ < 10, Hörmann's PTRS above), the same for the same seed."""

    arg_constraints: ClassVar[dict] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        super().__init__(self._set_broadcast_params(rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        """k log λ - λ - log k!."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)
