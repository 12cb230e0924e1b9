"""The geometric distribution: the number of failures before the first success of Bernoulli(p) trials."""
from typing import ClassVar

from .. import Size, no_grad, zeros_like
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .bernoulli import _BinaryProbs, _expand_probs_or_logits
from .distribution import Distribution
from .utils import _finfo, _is_number, broadcast_all

__all__ = ["Geometric"]


class Geometric(_BinaryProbs, Distribution):
    """Geometric distribution on {0, 1, 2, ...} with success probability ``probs`` (in (0, 1]) or its
    ``logits``: P(k) = (1 - p)^k p.

    ``sample`` draws u ~ Uniform(tiny, 1) and returns ⌊log u / log(1 - p)⌋, as PyTorch, so samples are
    PyTorch's numbers for the same seed.
    """

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

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
        super().__init__(Size() if _is_number(given) else param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # p = 0 is in the unit interval but is no geometric distribution (it never succeeds).
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to be positive but found invalid values:\n"
                                 f"{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = float(_finfo(self.probs).tiny)
        with no_grad():
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        """k·log(1 - p) + log p (with 0·log 0 read as 0 where p = 1)."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
