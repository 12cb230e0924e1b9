"""Adamax (Kingma & Ba, 2014, section 7.1): Adam with the infinity norm in place of the second moment."""
import numpy as np

from . import _kernels as K
from ._adam_family import apply_weight_decay, check_adam_args
from .optimizer import _changed, _SingleTensorOptimizer, _zeros_like

__all__ = ["Adamax"]


class Adamax(_SingleTensorOptimizer):
    """``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u, |g| + eps)``, ``p -= lr / (1 - beta1^t) * m / u``.
    Same operations, order and rounding as PyTorch's single-tensor implementation (no square root, so float32
    runs match PyTorch's bit for bit)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"exp_avg": _zeros_like(p), "exp_inf": _zeros_like(p)}

    def _update(self, param, grad, state, step, group):
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        grad = apply_weight_decay(param, grad, lr, group["weight_decay"], decoupled=False)
        exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
        K.lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= K.scalar(beta2, exp_inf)
        np.maximum(exp_inf, np.abs(grad) + K.scalar(group["eps"], grad), out=exp_inf)
        clr = lr / (1 - beta1 ** step)
        K.addcdiv_(param, exp_avg, exp_inf, -clr)
        _changed(state["exp_avg"], state["exp_inf"])
