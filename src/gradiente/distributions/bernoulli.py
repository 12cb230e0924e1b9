"""The Bernoulli distribution: 1 with probability p, 0 with probability 1 - p."""
import math
from typing import ClassVar

from .. import Size, arange, bernoulli, log1p, logit, no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _is_number, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class _BinaryProbs:
    """A binary event's probability given as ``probs`` or ``logits``: the other is computed on first use
    (``probs = σ(logits)``; ``logits = log(p / (1 - p))`` with p clamped away from 0 and 1)."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()


class Bernoulli(_BinaryProbs, ExponentialFamily):
    """Bernoulli distribution given by ``probs`` (the probability of 1) or ``logits`` (its log-odds), not both.

    The parameterization not given is computed on first use. Samples are 0. or 1. in the parameter's dtype.
    """

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        batch_shape = Size() if _is_number(given) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where p > ½, 0 where p < ½, nan where p = ½ (no single mode)."""
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        """x log p + (1 - x) log(1 - p), computed from the logits as minus the binary cross-entropy."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (logit(self.probs),)

    def _log_normalizer(self, x):
        return log1p(x.exp())


def _expand_probs_or_logits(old, new, param_shape):
    """Give ``new`` the expanded ``probs`` and/or ``logits`` that ``old`` has computed, and its ``_param``."""
    if "probs" in old.__dict__:
        new.probs = old.probs.expand(param_shape)
        new._param = new.probs
    if "logits" in old.__dict__:
        new.logits = old.logits.expand(param_shape)
        new._param = new.logits
