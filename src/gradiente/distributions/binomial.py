"""The binomial distribution: the number of successes in ``total_count`` independent Bernoulli trials."""
from typing import ClassVar

from .. import Size, arange, exp, lgamma, log1p, no_grad
from ..ops.sampling import binomial
from . import constraints
from .bernoulli import _BinaryProbs, _expand_probs_or_logits
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with the gradient ½ at x = 0 (the average of the two sides), as PyTorch's."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryProbs, Distribution):
    """Binomial distribution of ``total_count`` trials (a number or tensor, broadcast with the probabilities)
    with success probability ``probs`` or log-odds ``logits`` (not both). Samples are float counts, drawn with
    PyTorch's sampler (inversion or BTRS), the same for the same seed."""

    arg_constraints: ClassVar[dict] = {"total_count": constraints.nonnegative_integer,
                                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        total_count, param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = total_count.type_as(param)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        """log C(n, k) + k·logit - n·log(1 + e^logit), with the last term written to stay finite."""
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(n - value + 1)
        # n·log(1 + e^l) = n·max(l, 0) + n·log(1 + e^-|l|)
        normalize_term = n * _clamp_by_zero(logits) + n * log1p(exp(-logits.abs())) - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        """-Σ_k p(k) log p(k) over k = 0..n; needs one total_count for the whole batch, as in PyTorch."""
        _check_homogeneous(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = _check_homogeneous(self.total_count, "enumerate_support")
        values = arange(1 + total_count, dtype=self._param.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values


def _check_homogeneous(total_count, method):
    """The one total count of the batch, or PyTorch's error when counts differ."""
    count = int(total_count.max())
    if not total_count.min() == count:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{method}`.")
    return count
