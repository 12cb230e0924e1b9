"""NAdam (Dozat, 2016): Adam with Nesterov momentum, and a momentum schedule that warms up (``momentum_decay``)."""
import numpy as np

from ..core.tensor import Tensor
from . import _kernels as K
from ._adam_family import check_adam_args, moment_state, update_moments
from .optimizer import _changed, _check_nonnegative, _SingleTensorOptimizer

__all__ = ["NAdam"]


def _momentum(beta1, momentum_decay, step):
    """``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))``, the momentum coefficient at step ``t``."""
    return beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))


class NAdam(_SingleTensorOptimizer):
    """Adam's moments, with the step taken from the gradient and the momentum of the *next* step:
    ``p -= lr * ((1 - mu_t) / (1 - prod mu) * g + mu_{t+1} / (1 - prod mu * mu_{t+1}) * m) / (sqrt(v_hat) + eps)``.
    ``decoupled_weight_decay`` scales ``p`` by ``1 - lr * weight_decay`` instead (NAdamW). Same operations,
    order and rounding as PyTorch's single-tensor implementation, except float32 ``sqrt``."""

    _options_added_later = (("decoupled_weight_decay", False),)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        _check_nonnegative(**{"momentum_decay value": momentum_decay})
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        # The running product of the momentum coefficients, a float32 scalar as in PyTorch.
        return {"mu_product": Tensor._make(np.ones((), dtype=np.float32)), **moment_state(p)}

    def _update(self, param, grad, state, step, group):
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        grad, exp_avg, exp_avg_sq = update_moments(param, grad, state, group)
        mu = _momentum(beta1, group["momentum_decay"], step)
        mu_next = _momentum(beta1, group["momentum_decay"], step + 1)
        mu_product = state["mu_product"]._data
        mu_product *= K.scalar(mu, mu_product)
        _changed(state["mu_product"])
        bias_correction2 = 1 - beta2 ** step
        denom = K.sqrt(exp_avg_sq / K.scalar(bias_correction2, exp_avg_sq))
        denom += K.scalar(group["eps"], denom)
        product = float(mu_product)
        K.addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - product))
        K.addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - product * mu_next))
