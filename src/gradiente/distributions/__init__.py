"""``torch.distributions``: probability distributions with sampling, log-densities and KL divergences.

    import gradiente as torch
    from gradiente.distributions import Normal, kl_divergence
    torch.manual_seed(0)
    q = Normal(torch.zeros(2, requires_grad=True), torch.ones(2))
    z = q.rsample()                      # the numbers PyTorch draws for seed 0; differentiable in loc, scale
    q.log_prob(z), q.entropy(), kl_divergence(q, Normal(0.0, 1.0))

Modules: ``distribution`` (the base class: shapes, validation, repr), ``constraints`` (parameter and
support sets), ``utils`` (broadcasting, probs/logits), ``exp_family``, one module per distribution, ``kl``
(the closed forms and ``register_kl``). Samplers that need more than one call to the generator per element
(Gamma, Dirichlet, binomial, Poisson) live in ``_samplers``, with their gradients in ``_reparam``.

Every sampler draws the random numbers PyTorch draws for the same seed, in the same order. Intended
differences from PyTorch: the gradients of Gamma/Beta/Dirichlet ``rsample`` are exact where PyTorch's are
approximations (they agree to about 1e-3, see ``_reparam``); transforms,
``TransformedDistribution`` and the distributions not listed in ``__all__`` are not written yet.
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "Gamma", "Independent", "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "Uniform", "constraints", "kl_divergence", "register_kl"]
