"""Tensor-level sampling ops for the distributions: PyTorch's ``_standard_gamma``, ``_sample_dirichlet``,
``binomial`` and ``poisson``, over the element-by-element samplers of ``_samplers``.

The Gamma and Dirichlet samples are differentiable in their concentrations (``rsample``): their backward
rules use the implicit reparameterization gradients of ``_reparam``. Binomial and Poisson samples are counts
and carry no gradient.
"""
import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import Tensor
from . import _reparam
from . import samplers as _samplers

__all__ = ["binomial", "poisson", "sample_dirichlet", "standard_gamma"]


def _float_check(x, kernel):
    if dt.kind(x._data.dtype) != "f" or x._data.dtype.itemsize < 4:
        raise RuntimeError(f"\"{kernel}\" not implemented for '{scalar_name(x._data.dtype)}'")


class StandardGammaBackward0(Node):
    """out ~ Gamma(α, 1);  dα = grad · dout/dα, the implicit reparameterization gradient"""
    __slots__ = ()
    formula = "dx/dα = -(∂F/∂α)(x; α) / p(x; α)"

    def backward(self, ops, grad):
        alpha, out = self.saved(ops)
        return (grad * ops.constant(_reparam.standard_gamma_grad(ops.raw(alpha), ops.raw(out)), grad),)


def standard_gamma(alpha, generator=None):
    """Gamma(α, 1) samples of ``alpha``'s shape (``torch._standard_gamma``), differentiable in ``alpha``."""
    _float_check(alpha, "gamma_cpu")
    out = wrap(_samplers.standard_gamma(alpha._data, generator))
    if wants_grad(alpha):
        record(StandardGammaBackward0, (alpha,), out, (alpha, out))
    return out


class _DirichletBackward(Node):
    """out ~ Dirichlet(α);  dα = f · (grad - Σ out·grad), f the implicit reparameterization gradient of each
    sample's Beta(α_i, Σα - α_i) marginal, the sum corrects for the constraint Σ out = 1. Named as PyTorch names
    it (torch.distributions computes this in an autograd.Function, ``_Dirichlet``); like that Function's
    once-differentiable backward, the rule is a constant under create_graph."""
    __slots__ = ()
    formula = "dx/dα: Beta marginals' implicit gradients, projected onto Σx = 1"

    def backward(self, ops, grad):
        x, concentration = (ops.raw(v) for v in self.saved(ops))
        g = ops.raw(grad)
        total = np.broadcast_to(concentration.sum(-1, keepdims=True), concentration.shape)
        factor = _reparam.beta_grad(x, concentration, total)
        return (ops.constant(factor * (g - (x * g).sum(-1, keepdims=True)), grad),)


def sample_dirichlet(concentration):
    """Dirichlet samples over the last dim of ``concentration`` (``torch._sample_dirichlet``), differentiable."""
    _float_check(concentration, "dirichlet")
    out = wrap(_samplers.sample_dirichlet(concentration._data))
    if wants_grad(concentration):
        record(_DirichletBackward, (concentration,), out, (out, concentration))
    return out


def binomial(count, prob, generator=None):
    """Binomial counts for ``count`` trials of success probability ``prob`` (same shape; ``torch.binomial``),
    as floats of prob's dtype."""
    _float_check(prob, "binomial_cpu")
    return wrap(_samplers.binomial(count._data.astype(prob._data.dtype), prob._data, generator))


def poisson(rate, generator=None):
    """Poisson counts of ``rate`` (``torch.poisson``), as floats of rate's dtype."""
    if not isinstance(rate, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not {type(rate).__name__}")
    _float_check(rate, "poisson_cpu")
    return wrap(_samplers.poisson(rate._data, generator))
