"""``torch.distributions``: probability distributions with sampling, log-densities and KL divergences.

    import gradiente as torch
    from gradiente.distributions import Normal, kl_divergence
    torch.manual_seed(0)
    q = Normal(torch.zeros(2, requires_grad=True), torch.ones(2))
    z = q.rsample()                      # the numbers PyTorch draws for seed 0; differentiable in loc, scale
    q.log_prob(z), q.entropy(), kl_divergence(q, Normal(0.0, 1.0))

Modules: ``distribution`` (the base class: shapes, validation, repr), ``constraints`` (parameter and
support sets), ``utils`` (broadcasting, probs/logits), ``exp_family``, one module per distribution, ``kl``
(the closed forms and ``register_kl``; ``kl_more`` adds the pairs of the later distributions, so that the table
is PyTorch's). Samplers that need more than one call to the generator per element
(Gamma, Dirichlet, binomial, Poisson) live in ``_samplers``, with their gradients in ``_reparam``.

Every sampler draws the random numbers PyTorch draws for the same seed, in the same order. Intended
differences from PyTorch: the gradients of Gamma/Beta/Dirichlet ``rsample`` are exact where PyTorch's are
approximations (they agree to about 1e-3, see ``_reparam``), and so are those of the distributions built on
Gamma (Chi2, StudentT, InverseGamma, FisherSnedecor, Wishart); GeneralizedPareto's float64 ``log_prob`` works
where PyTorch's raises. Every distribution of ``torch.distributions.__all__`` is here.

``transforms`` holds the maps that ``TransformedDistribution`` pushes a base distribution through (LogNormal,
Gumbel, Weibull... are built so); ``constraint_registry`` maps constraints to them (``biject_to``,
``transform_to``).
"""
from . import constraint_registry, constraints, transforms
from . import kl_more as _kl_more  # registers the KL pairs of the distributions added with the transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *
from .transforms import __all__ as _transform_names
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
           "constraints", "kl_divergence", "register_kl", "transform_to"]
__all__.extend(_transform_names)  # PyTorch's namespace has every transform too
