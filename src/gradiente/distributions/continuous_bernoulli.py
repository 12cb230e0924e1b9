"""The continuous Bernoulli distribution on [0, 1]: density ∝ p^x (1 - p)^(1-x)."""
import math
from typing import ClassVar

from .. import Size, expm1, no_grad, ones_like, rand, where, zeros_like
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .bernoulli import _expand_probs_or_logits
from .exp_family import ExponentialFamily
from .utils import _is_number, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Continuous Bernoulli distribution (Loaiza-Ganem and Cunningham, 2019) with ``probs`` λ or ``logits``:
    density C(λ) λ^x (1 - λ)^(1-x) on [0, 1], C(λ) its normalizing constant.

    Near λ = ½ the closed forms divide 0 by 0, so for λ inside ``lims`` they are replaced by Taylor
    expansions, at the same points and to the same order as PyTorch. Samples are ``icdf(rand(...))``,
    PyTorch's numbers for the same seed, differentiable in λ through ``rsample``.
    """

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            # PyTorch checks before clamping, and only when validate_args was given explicitly.
            if validate_args is not None and not self.arg_constraints["probs"].check(param).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(param)
            self._param = self.probs
        else:
            self.logits = param
            self._param = param
        self._lims = lims
        super().__init__(Size() if _is_number(given) else param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, batch_shape)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _outside_unstable_region(self):
        return self.probs.le(self._lims[0]) | self.probs.gt(self._lims[1])

    def _cut_probs(self):
        """λ where the closed forms are stable, lims[0] elsewhere (so that those branches stay finite)."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(λ) = log |log(1 - λ) - log λ| - log |1 - 2λ|."""
        cut = self._cut_probs()
        below_half = where(cut.le(0.5), cut, zeros_like(cut))
        above_half = where(cut.ge(0.5), cut, ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut.le(0.5), (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    def sample(self, sample_shape=()):
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value.le(0.0), zeros_like(value), where(value.ge(1.0), ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        closed_form = (((-cut) + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return where(self._outside_unstable_region(), closed_form, value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logits), with its own Taylor branch near 0."""
        outside = x.le(self._lims[0] - 0.5) | x.gt(self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = expm1(cut).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
