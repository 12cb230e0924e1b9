"""The multinomial distribution: counts of ``total_count`` independent draws from a Categorical."""
from typing import ClassVar

from .. import Size, inf, lgamma, ones_like, tensor
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial distribution: vectors of counts over the categories of ``probs`` (or ``logits``, last dim)
    summing to ``total_count`` (one int for the whole batch, as in PyTorch).

    ``sample`` draws ``total_count`` categorical samples (PyTorch's numbers for the same seed) and counts them.
    ``log_prob`` needs no ``total_count``: it reads n from the value's sum.
    """

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        # The draws' first dim runs over the trials: move it last, then count each category along it.
        order = list(range(draws.dim()))
        order.append(order.pop(0))
        draws = draws.permute(*order)
        counts = draws.new_zeros(self._extended_shape(sample_shape))
        counts.scatter_add_(-1, draws, ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        """n·H(categorical) - log n! + Σ_k E[log x_k!], the last from each count's binomial law."""
        n = tensor(self.total_count)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        """log n! - Σ log x_k! + Σ x_k log p_k (0·log 0 read as 0)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -inf)] = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
