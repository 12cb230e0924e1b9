"""RAdam (Liu et al., 2019): Adam whose adaptive step is switched on, and scaled, once the variance of the
second moment estimate is tractable."""
import numpy as np

from . import _kernels as K
from ._adam_family import check_adam_args, moment_state, update_moments
from .optimizer import _SingleTensorOptimizer

__all__ = ["RAdam"]


def _rectification(rho_t, rho_inf):
    """``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``."""
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5


class RAdam(_SingleTensorOptimizer):
    """Adam's moments; with ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)``,
    ``p -= lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)`` while ``rho_t > 5``, else ``p -= lr * m_hat``
    (SGD with momentum). ``decoupled_weight_decay`` scales ``p`` by ``1 - lr * weight_decay`` instead (RAdamW).
    Same operations, order and rounding as PyTorch's single-tensor implementation, except float32 ``sqrt``."""

    _options_added_later = (("decoupled_weight_decay", False),)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return moment_state(p)

    def _update(self, param, grad, state, step, group):
        beta1, beta2 = group["betas"]
        _, exp_avg, exp_avg_sq = update_moments(param, grad, state, group)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg / K.scalar(bias_correction1, exp_avg)
        update *= K.scalar(group["lr"], update)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            denom = K.sqrt(exp_avg_sq)
            denom += K.scalar(group["eps"], denom)
            # PyTorch computes ``number / tensor`` as ``tensor.reciprocal() * number``: two roundings.
            adaptive_lr = np.reciprocal(denom, out=denom)
            adaptive_lr *= K.scalar(bias_correction2 ** 0.5, adaptive_lr)
            update *= adaptive_lr
            update *= K.scalar(_rectification(rho_t, rho_inf), update)
        param -= update
