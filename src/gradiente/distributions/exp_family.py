"""``ExponentialFamily``: distributions with density p(x; θ) = exp(⟨t(x), θ⟩ - F(θ) + k(x)).

θ are the natural parameters, F the log-normalizer and k the carrier measure. The gradient of F is the mean of
the sufficient statistic t(x), so entropy and KL divergence follow from F and autograd alone (Bregman
divergences of F), with no formula of their own: a family that gives ``_natural_params``, ``_log_normalizer``
and ``_mean_carrier_measure`` gets them for free. The families here also have closed forms, which they use.
"""
from .. import autograd
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family (see the module docstring)."""

    @property
    def _natural_params(self):
        """The natural parameters θ, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """F(θ)."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[k(x)]."""
        raise NotImplementedError

    def entropy(self):
        """H = F(θ) - ⟨θ, ∇F(θ)⟩ - E[k(x)], with ∇F from autograd (kept differentiable by ``create_graph``)."""
        result = -self._mean_carrier_measure
        thetas = [theta.detach().requires_grad_() for theta in self._natural_params]
        log_normalizer = self._log_normalizer(*thetas)
        gradients = autograd.grad(log_normalizer.sum(), thetas, create_graph=True)
        result = result + log_normalizer
        for theta, gradient in zip(thetas, gradients):
            result = result - (theta * gradient).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
