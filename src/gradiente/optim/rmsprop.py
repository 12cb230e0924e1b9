"""RMSprop (Hinton's lecture 6e), optionally centered and with momentum."""

from . import _kernels as K
from .optimizer import _changed, _check_nonnegative, _SingleTensorOptimizer, _zeros_like

__all__ = ["RMSprop"]


class RMSprop(_SingleTensorOptimizer):
    """``v = alpha * v + (1 - alpha) * g²``, ``p -= lr * g / (sqrt(v) + eps)`` (``centered`` subtracts the
    squared running mean of ``g`` from ``v``; ``momentum`` accumulates the step in a buffer). Same operations,
    order and rounding as PyTorch's single-tensor implementation, except float32 ``sqrt``."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_nonnegative(**{"learning rate": lr, "epsilon value": eps, "momentum value": momentum,
                              "weight_decay value": weight_decay, "alpha value": alpha})
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = {"square_avg": _zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)
        return state

    def _update(self, param, grad, state, step, group):
        lr, alpha, weight_decay = group["lr"], group["alpha"], group["weight_decay"]
        if weight_decay != 0:
            grad = K.add_scaled(grad, param, weight_decay)
        square_avg = state["square_avg"]._data
        square_avg *= K.scalar(alpha, square_avg)
        K.addcmul_(square_avg, grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]._data
            K.lerp_(grad_avg, grad, 1 - alpha)
            avg = K.addcmul_(square_avg.copy(), grad_avg, grad_avg, -1)
            K.sqrt(avg, out=avg)
            _changed(state["grad_avg"])
        else:
            avg = K.sqrt(square_avg)
        avg += K.scalar(group["eps"], avg)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]._data
            buf *= K.scalar(group["momentum"], buf)
            K.addcdiv_(buf, grad, avg, 1)
            K.add_scaled(param, buf, -lr, out=param)
            _changed(state["momentum_buffer"])
        else:
            K.addcdiv_(param, grad, avg, -lr)
        _changed(state["square_avg"])
