"""The KL pairs of PyTorch's table that involve the distributions added with the transforms (Cauchy,
ContinuousBernoulli, Geometric, Gumbel, HalfNormal, LowRankMultivariateNormal, Pareto,
TransformedDistribution), registered into
``kl``'s table on import. The closed forms are PyTorch's, term for term, so that the numbers agree."""
import math

from .. import diag_embed, exp, inf, ones_like, where
from ..ops.linalg import solve_triangular
from .beta import Beta
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .kl import _kl_normal_normal, _register_infinite_kl, _x_log_x, kl_divergence, register_kl
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _batch_lowrank_logdet, _batch_lowrank_mahalanobis
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .pareto import Pareto
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import broadcast_shapes
from .utils import euler_constant as _euler_gamma

__all__ = []

# q has no mass where p has some: [0, 1] or a half-line against a wider support.
_register_infinite_kl(Beta, Pareto, batch_param="concentration1")
_register_infinite_kl(ContinuousBernoulli, Pareto, batch_param="probs")
_register_infinite_kl(Exponential, ContinuousBernoulli, Pareto, batch_param="rate")
_register_infinite_kl(Gamma, ContinuousBernoulli, Pareto, batch_param="concentration")
_register_infinite_kl(Gumbel, Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform, batch_param="loc")
_register_infinite_kl(Laplace, ContinuousBernoulli, Pareto, batch_param="loc")
_register_infinite_kl(Normal, ContinuousBernoulli, Pareto, batch_param="loc")
_register_infinite_kl(Pareto, Beta, ContinuousBernoulli, Uniform, batch_param="scale")


# --- same family --------------------------------------------------------------------------------------------

@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen (2019): log(((s_p + s_q)² + (m_p - m_q)²) / (4 s_p s_q)).
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _euler_gamma
    t3 = exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + _euler_gamma)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    result[p.support.lower_bound < q.support.lower_bound] = inf
    return result


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # The same bijections on both sides leave the divergence of the bases unchanged.
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


# --- across families ----------------------------------------------------------------------------------------

def _kl_to_continuous_bernoulli(p, q):
    """-H(p) - E_p[x]·logits_q - log(1 - λ_q) - log C(λ_q), for p on [0, 1]."""
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _kl_to_continuous_bernoulli(p, q)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = q.low.ge(p.support.lower_bound) | q.high.le(p.support.upper_bound)  # PyTorch's test, as written
    return where(outside, ones_like(result) * inf, result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    a = p.concentration
    t1 = (a - 1) * a.digamma() - a.lgamma() - a
    t2 = beta_scale_prod.log() + a / beta_scale_prod
    t3 = exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-a) - loc_scale_ratio
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _euler_gamma - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_euler_gamma + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    result = t1 - t2 + t3 - 1
    result[p.alpha <= 1] = inf
    return result


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = t1 + t2 + t3 + t4 - 1
    result[p.alpha <= 1] = inf
    return result


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    result = t1 - t2 + (t3 + t4) / var_normal - 1
    result[p.alpha <= 2] = inf
    return result


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _kl_to_continuous_bernoulli(p, q)
    outside = p.high.ge(q.support.upper_bound) | p.low.le(q.support.lower_bound)
    return where(outside, ones_like(result) * inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (exp(-high_loc_diff) - exp(-low_loc_diff))
    return t1 - t2


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    result = t2 * (q.alpha + 1) - t1
    result[p.low < q.support.lower_bound] = inf
    return result




# --- low-rank multivariate normals ----------------------------------------------------------------------------

def _event_shapes_must_match(p, q, names):
    if p.event_shape != q.event_shape:
        # PyTorch's message, spaces and all (its source continues the string on an indented line)
        raise ValueError(f"KL-divergence between two {names} with" + " " * 26 + "different event shapes "
                         "cannot be computed")


def _batch_trace_xxt(x):
    """tr(X Xᵀ) over the last two dims: the squared Frobenius norm."""
    return x.pow(2).sum((-2, -1))


def _lowrank_precision_factor(q):
    """A with Σq⁻¹ = Dq⁻¹ - Aᵀ A (Woodbury): Cq⁻¹ᐟ² Wqᵀ Dq⁻¹, Cq the capacitance."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _lowrank_mahalanobis_to(q, p):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p.loc,
                                      q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _event_shapes_must_match(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis_to(q, p)
    # tr(Σq⁻¹ Σp) with Σq⁻¹ = Dq⁻¹ - AᵀA and Σp = Dp + Wp Wpᵀ, one trace per product
    A = _lowrank_precision_factor(q)
    term21 = (p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_xxt(p._unbroadcasted_cov_factor * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(A * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(A.matmul(p._unbroadcasted_cov_factor))
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _event_shapes_must_match(p, q, "(Low Rank) Multivariate Normals")
    term1 = _lowrank_logdet(q) - 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis_to(q, p)
    A = _lowrank_precision_factor(q)
    term21 = _batch_trace_xxt(p._unbroadcasted_scale_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_xxt(A.matmul(p._unbroadcasted_scale_tril))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _event_shapes_must_match(p, q, "(Low Rank) Multivariate Normals")
    term1 = 2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    batch = broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2])
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_cov_factor = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_cov_diag = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_xxt(solve_triangular(q_scale_tril, p_cov_factor, upper=False))
    term22 = _batch_trace_xxt(solve_triangular(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
