"""Adam (Kingma & Ba, 2014), with AMSGrad, and with decoupled weight decay (which is AdamW)."""
import numpy as np

from . import _kernels as K
from .optimizer import Optimizer, _changed, _check_nonnegative, _closure_loss, _increment, _step_counter, _zeros_like

__all__ = ["Adam"]


class Adam(Optimizer):
    """``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g²``,
    ``p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``; ``amsgrad`` uses the running
    maximum of ``v``; ``decoupled_weight_decay`` multiplies ``p`` by ``1 - lr * weight_decay`` first (AdamW)
    instead of adding ``weight_decay * p`` to ``g``. Same operations, order and rounding as PyTorch's
    single-tensor implementation, except float32 ``sqrt`` (see ``optim._kernels``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_nonnegative(**{"learning rate": lr, "epsilon value": eps})
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check_nonnegative(**{"weight_decay value": weight_decay})
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)

    def step(self, closure=None):
        """One update of every parameter that has a gradient. ``closure`` re-evaluates and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
            for p, grad in self._params_with_grad(group):
                param = p._data
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_counter()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                step = _increment(state["step"])
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param *= K.scalar(1 - lr * weight_decay, param)
                    else:
                        grad = K.add_scaled(grad, param, weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                K.lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= K.scalar(beta2, exp_avg_sq)
                K.addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    max_sq = state["max_exp_avg_sq"]._data
                    np.maximum(max_sq, exp_avg_sq, out=max_sq)
                    _changed(state["max_exp_avg_sq"])
                    second = max_sq
                else:
                    second = exp_avg_sq
                denom = np.sqrt(second) / K.scalar(bias_correction2_sqrt, second)
                denom += K.scalar(eps, denom)
                K.addcdiv_(param, exp_avg, denom, -step_size)
                _changed(p, state["exp_avg"], state["exp_avg_sq"])
        return loss
