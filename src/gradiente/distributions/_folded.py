"""The fold of a distribution symmetric about 0 onto [0, inf): what HalfNormal and HalfCauchy share."""
import math

from .. import inf, where, zeros_like


class _Folded:
    """A symmetric distribution about 0 folded onto [0, inf) by |x|: twice the base density there, 0 below."""

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)
