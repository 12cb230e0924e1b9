"""Adadelta (Zeiler, 2012): steps scaled by the ratio of running RMS of past updates to that of gradients."""

from . import _kernels as K
from .optimizer import _changed, _check_nonnegative, _SingleTensorOptimizer, _zeros_like

__all__ = ["Adadelta"]


class Adadelta(_SingleTensorOptimizer):
    """``v = rho * v + (1 - rho) * g²``, ``delta = sqrt(u + eps) / sqrt(v + eps) * g``,
    ``u = rho * u + (1 - rho) * delta²``, ``p -= lr * delta``. Same operations, order and rounding as
    PyTorch's single-tensor implementation, except float32 ``sqrt``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_nonnegative(**{"learning rate": lr})
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(**{"epsilon value": eps, "weight_decay value": weight_decay})
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"square_avg": _zeros_like(p), "acc_delta": _zeros_like(p)}

    def _update(self, param, grad, state, step, group):
        rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
        if weight_decay != 0:
            grad = K.add_scaled(grad, param, weight_decay)
        square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
        square_avg *= K.scalar(rho, square_avg)
        K.addcmul_(square_avg, grad, grad, 1 - rho)
        std = K.sqrt(square_avg + K.scalar(eps, square_avg))
        delta = K.sqrt(acc_delta + K.scalar(eps, acc_delta))
        delta /= std
        delta *= grad
        acc_delta *= K.scalar(rho, acc_delta)
        K.addcmul_(acc_delta, delta, delta, 1 - rho)
        K.add_scaled(param, delta, -group["lr"], out=param)
        _changed(state["square_avg"], state["acc_delta"])
