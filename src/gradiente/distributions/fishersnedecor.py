"""The Fisher-Snedecor (F) distribution: the ratio of two scaled chi-squared variables."""
from typing import ClassVar

from .. import Size, nan
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _finfo, _is_number, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F distribution with ``df1`` and ``df2`` degrees of freedom: (X1/df1)/(X2/df2), Xi ~ Chi2(dfi).

    ``rsample`` draws Gamma(df1/2, df1) and then Gamma(df2/2, df2), as PyTorch (its numbers for the same
    seed), and divides; the gradient in df goes through Gamma's (exact here, approximated by PyTorch). The
    mean is nan for df2 ≤ 2, the variance for df2 ≤ 4, the mode for df1 ≤ 2, as in PyTorch.
    """

    arg_constraints: ClassVar[dict] = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = Size() if _is_number(df1) and _is_number(df2) else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        df2 = self.df2.clone()
        df2[df2 <= 2] = nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = nan
        return mode

    @property
    def variance(self):
        df2 = self.df2.clone()
        df2[df2 <= 4] = nan
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = float(_finfo(x2).tiny)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
