"""The multivariate normal with a low-rank-plus-diagonal covariance W Wᵀ + diag(D)."""
import math
from typing import ClassVar

from .. import Size, broadcast_tensors, diag_embed, eye, matmul
from ..ops import linalg
from ..ops.linalg import solve_triangular
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance I + Wᵀ D⁻¹ W (m × m, m the rank)."""
    m = W.size(-1)
    K = matmul(W.mT / D.unsqueeze(-2), W) + eye(m, dtype=W.dtype)
    return linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log |W Wᵀ + D| = log |C| + log |D| (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """xᵀ (W Wᵀ + D)⁻¹ x through the Woodbury identity, solving only with the m × m capacitance."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with mean ``loc`` (..., n) and covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``, ``cov_factor`` (..., n, m), ``cov_diag`` (..., n) positive.

    Log-densities and entropies cost O(n m²) instead of O(n³). ``rsample`` draws the m factor noises, then the
    n diagonal ones, as PyTorch (its numbers for the same seed), and returns loc + W ε_W + √D ε_D.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real_vector,
                                       "cov_factor": constraints.independent(constraints.real, 2),
                                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                 cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """√D · cholesky(I + D^-½ W Wᵀ D^-½): a Cholesky factor of the covariance."""
        n = self._event_shape[0]
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / diag_sqrt
        K = matmul(scaled, scaled.mT) + eye(n, dtype=scaled.dtype)
        return (diag_sqrt * linalg.cholesky(K)).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        covariance = matmul(W, W.mT) + diag_embed(self._unbroadcasted_cov_diag)
        return covariance.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """D⁻¹ - D⁻¹ W C⁻¹ Wᵀ D⁻¹ (Woodbury), with C⁻¹ through the capacitance's Cholesky factor."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps_w = _standard_normal(shape[:-1] + self.cov_factor.shape[-1:], dtype=self.loc.dtype)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _batch_lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _batch_lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
