"""The Wishart distribution over positive-definite matrices."""
import math
import warnings

from .. import Size, arange, cholesky_solve, digamma, einsum, eye, mvlgamma, nan, randn, tensor, tril_indices
from ..ops import linalg
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _finfo, _is_number, broadcast_shapes, lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma Σ_{i<p} ψ(x - i/2), the derivative of ``mvlgamma``."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype).div(2).expand(x.shape + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=float(_finfo(x).eps))


class Wishart(ExponentialFamily):
    """Wishart distribution with ``df`` (nu) degrees of freedom (> p - 1) and a p × p scale given as
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (exactly one): the law of Σ_k x_k x_kᵀ for nu
    normal vectors of that covariance, when nu is an integer.

    ``rsample`` is Bartlett's decomposition: √Chi2(nu - i) on the diagonal and normals below it (its gradients
    go through Chi2's, so through Gamma's). PyTorch's singular-sample check tests the wrong way round and so
    warns "Singular sample detected." and redraws the valid samples once; this does the same, so that the
    draws are PyTorch's numbers for the same seed.
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if _is_number(df):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2_of_bartlett(batch_shape)

    def _chi2_of_bartlett(self, batch_shape):
        """Chi2(nu - i) for i = 0..p-1: the squared diagonal of Bartlett's factor."""
        steps = arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype).expand(batch_shape + (-1,))
        return Chi2(df=self.df.unsqueeze(-1) - steps)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        self._expanded(new, batch_shape)
        new._dist_chi2 = new._chi2_of_bartlett(batch_shape)
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        identity = eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1)
        noise[..., i, j] = randn(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,), dtype=noise.dtype)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None):
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # PyTorch's mask, kept as written: True where the sample is valid (see the class docstring).
        is_singular = self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + mvlgamma(y + (p + 1) / 2, p=p))
