"""RAdam (Liu et al., 2019): Adam whose adaptive step is switched on, and scaled, once the variance of the
second moment estimate is tractable."""
import numpy as np

from . import _kernels as K
from ._adam_family import apply_weight_decay, check_adam_args, update_moments
from .optimizer import Optimizer, _changed, _closure_loss, _increment, _step_counter, _zeros_like

__all__ = ["RAdam"]


def _rectification(rho_t, rho_inf):
    """``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``."""
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5


class RAdam(Optimizer):
    """Adam's moments; with ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)``,
    ``p -= lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)`` while ``rho_t > 5``, else ``p -= lr * m_hat``
    (SGD with momentum). ``decoupled_weight_decay`` scales ``p`` by ``1 - lr * weight_decay`` instead (RAdamW).
    Same operations, order and rounding as PyTorch's single-tensor implementation, except float32 ``sqrt``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", False)

    def step(self, closure=None):
        """One update of every parameter that has a gradient. ``closure`` re-evaluates and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            for p, grad in self._params_with_grad(group):
                param = p._data
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_counter()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                step = _increment(state["step"])
                grad = apply_weight_decay(param, grad, lr, weight_decay, group["decoupled_weight_decay"])
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                update = exp_avg / K.scalar(bias_correction1, exp_avg)
                update *= K.scalar(lr, update)
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    denom = np.sqrt(exp_avg_sq)
                    denom += K.scalar(eps, denom)
                    # PyTorch computes ``number / tensor`` as ``tensor.reciprocal() * number``: two roundings.
                    adaptive_lr = np.reciprocal(denom, out=denom)
                    adaptive_lr *= K.scalar(bias_correction2 ** 0.5, adaptive_lr)
                    update *= adaptive_lr
                    update *= K.scalar(_rectification(rho_t, rho_inf), update)
                param -= update
                _changed(p, state["exp_avg"], state["exp_avg_sq"])
        return loss
