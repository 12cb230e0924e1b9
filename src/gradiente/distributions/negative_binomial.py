"""The negative binomial distribution: failures before ``total_count`` successes."""
from typing import ClassVar

from .. import Size, lgamma, no_grad
from ..nn.functional import logsigmoid
from ..ops.sampling import poisson
from . import constraints
from .bernoulli import _BinaryProbs, _expand_probs_or_logits
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryProbs, Distribution):
    """Negative binomial distribution: the number of successes, each with probability ``probs`` (or from
    ``logits``), before ``total_count`` failures (a real r ≥ 0 is allowed: the Gamma-Poisson mixture).

    ``sample`` draws λ ~ Gamma(r, e^-logits) and then Poisson(λ), as PyTorch, with PyTorch's numbers for the
    same seed.
    """

    arg_constraints: ClassVar[dict] = {"total_count": constraints.greater_than_eq(0),
                                       "probs": constraints.half_open_interval(0.0, 1.0),
                                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        """r·log σ(-logits) + k·log σ(logits) - log B-style normalizer (0 where r + k = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -lgamma(self.total_count + value) + lgamma(1.0 + value) + lgamma(self.total_count)
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
