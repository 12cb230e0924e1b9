"""Adam (Kingma & Ba, 2014), with AMSGrad, and with decoupled weight decay (which is AdamW)."""
import numpy as np

from . import _kernels as K
from ._adam_family import check_adam_args, moment_state, update_moments
from .optimizer import _changed, _SingleTensorOptimizer, _zeros_like

__all__ = ["Adam"]


class Adam(_SingleTensorOptimizer):
    """``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g²``,
    ``p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``; ``amsgrad`` uses the running
    maximum of ``v``; ``decoupled_weight_decay`` multiplies ``p`` by ``1 - lr * weight_decay`` first (AdamW)
    instead of adding ``weight_decay * p`` to ``g``. Same operations, order and rounding as PyTorch's
    single-tensor implementation, except float32 ``sqrt`` (see ``optim._kernels``)."""

    _options_added_later = (("amsgrad", False), ("maximize", False), ("decoupled_weight_decay", False))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = moment_state(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _zeros_like(p)
        return state

    def _update(self, param, grad, state, step, group):
        beta1, beta2 = group["betas"]
        _, exp_avg, exp_avg_sq = update_moments(param, grad, state, group)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = group["lr"] / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if group["amsgrad"]:
            max_sq = state["max_exp_avg_sq"]._data
            np.maximum(max_sq, exp_avg_sq, out=max_sq)
            _changed(state["max_exp_avg_sq"])
            second = max_sq
        else:
            second = exp_avg_sq
        denom = K.sqrt(second) / K.scalar(bias_correction2_sqrt, second)
        denom += K.scalar(group["eps"], denom)
        K.addcdiv_(param, exp_avg, denom, -step_size)
