"""The Laplace (double exponential) distribution: density exp(-|x - loc| / scale) / (2 scale)."""
from typing import ClassVar

from .. import empty, expm1, log, log1p
from . import constraints
from ._location import _LocScale
from .distribution import Distribution
from .utils import _finfo

__all__ = ["Laplace"]


class Laplace(_LocScale, Distribution):
    """Laplace distribution with location ``loc`` and scale ``scale``.

    ``rsample`` inverts the CDF: u uniform on (-1, 1) (``uniform_(eps - 1, 1)``, as PyTorch, so that |u| < 1),
    then ``loc - scale·sign(u)·log(1 - |u|)``.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = float(_finfo(self.loc).eps)
        u = empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        """-log(2 scale) - |x - loc| / scale."""
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        return 0.5 - 0.5 * diff.sign() * expm1(-diff.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        return 1 + log(2 * self.scale)
