"""Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""
import math
from typing import ClassVar

from .. import digamma, inf, lgamma, nan
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution: loc + scale·X/√(Z/df) for X standard normal and Z ~ Chi2(df).

    ``rsample`` draws X, then Z, as PyTorch does, so samples are PyTorch's numbers for the same seed; the
    gradient in ``df`` goes through Gamma's (see ``Gamma``). The mean is nan for df ≤ 1; the variance is inf for
    1 < df ≤ 2 and nan for df ≤ 1, as in PyTorch.
    """

    arg_constraints: ClassVar[dict] = {"df": constraints.positive, "loc": constraints.real,
                                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        m = self.loc.clone()
        m[self.df <= 1] = nan
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone()
        large = self.df > 2
        m[large] = self.scale[large].pow(2) * self.df[large] / (self.df[large] - 2)
        m[(self.df <= 2) & (self.df > 1)] = inf
        m[self.df <= 1] = nan
        return m

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        normalizer = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                      + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y**2 / self.df).log1p() - normalizer

    def entropy(self):
        log_beta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + log_beta)
