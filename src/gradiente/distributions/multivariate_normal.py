"""The multivariate normal distribution N(loc, Σ) over vectors."""
import math
from typing import ClassVar

from .. import Size, eye, flip, matmul
from ..ops import linalg
from ..ops.linalg import solve_triangular
from . import constraints
from ._location import _SymmetricAboutLoc
from .distribution import Distribution
from .utils import _standard_normal, broadcast_shapes, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrices, vectors):
    """Matrix-vector products over broadcast batch dims: (..., n, n) with (..., n)."""
    return matmul(matrices, vectors.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(scale_tril, diff):
    """xᵀ Σ⁻¹ x for Σ = L Lᵀ: the squared length of L⁻¹x, by one triangular solve."""
    return solve_triangular(scale_tril, diff.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """L with L Lᵀ = P⁻¹, without inverting P. Flipping rows and columns turns P's lower Cholesky factor into an
    upper one, U with P = U Uᵀ; then Σ = P⁻¹ = U⁻ᵀ U⁻¹, whose lower-triangular factor is U⁻ᵀ."""
    flipped_factor = linalg.cholesky(flip(precision, (-2, -1)))
    inverse_factor = flip(flipped_factor, (-2, -1)).transpose(-2, -1)
    identity = eye(precision.shape[-1], dtype=precision.dtype)
    return solve_triangular(inverse_factor, identity, upper=False)


class MultivariateNormal(_SymmetricAboutLoc, Distribution):
    """Multivariate normal with mean vector ``loc`` and exactly one of ``covariance_matrix`` Σ,
    ``precision_matrix`` Σ⁻¹ or ``scale_tril`` L (lower triangular with positive diagonal, Σ = L Lᵀ).

    Everything is computed from L (a Cholesky factor, if Σ or Σ⁻¹ is given): ``rsample`` draws standard normals
    ε as PyTorch does and returns ``loc + L ε``. Batch dims of loc and the matrix broadcast.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real_vector,
                                       "covariance_matrix": constraints.positive_definite,
                                       "precision_matrix": constraints.positive_definite,
                                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        return self._expanded(new, batch_shape)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        low = self._unbroadcasted_scale_tril
        return matmul(low, low.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """Σ⁻¹ = L⁻ᵀ L⁻¹ (PyTorch: ``cholesky_inverse``, the same function). L is inverted as a full matrix, not
        a triangular one, so that a gradient reaches all of L's entries, as PyTorch's does."""
        inverse = linalg.inv(self._unbroadcasted_scale_tril)
        return matmul(inverse.mT, inverse).expand(self._matrix_shape())

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        """½ log det Σ = Σ_i log L_ii."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        """-½ (n log 2π + (x - loc)ᵀ Σ⁻¹ (x - loc)) - ½ log det Σ."""
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self):
        """½ n (1 + log 2π) + ½ log det Σ."""
        entropy = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return entropy if len(self._batch_shape) == 0 else entropy.expand(self._batch_shape)
