"""What Adam and the optimizers derived from it (Adamax, NAdam, RAdam) share: argument checks, weight decay, the
running moments and their state."""
from . import _kernels as K
from .optimizer import _changed, _check_nonnegative, _zeros_like

__all__ = ["check_adam_args", "apply_weight_decay", "moment_state", "update_moments"]


def check_adam_args(lr, betas, eps, weight_decay):
    """PyTorch's checks, in its order (so the first bad argument is the one reported)."""
    _check_nonnegative(**{"learning rate": lr, "epsilon value": eps})
    for i, beta in enumerate(betas[:2]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    _check_nonnegative(**{"weight_decay value": weight_decay})


def apply_weight_decay(param, grad, lr, weight_decay, decoupled):
    """The gradient after weight decay: ``g + wd * p``, or ``g`` with ``p`` scaled by ``1 - lr * wd`` in place
    (``decoupled``, as AdamW)."""
    if weight_decay == 0:
        return grad
    if decoupled:
        param *= K.scalar(1 - lr * weight_decay, param)
        return grad
    return K.add_scaled(grad, param, weight_decay)


def moment_state(p):
    """The state entries of Adam's running moments, zeros like ``p``."""
    return {"exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}


def update_moments(param, grad, state, group):
    """Weight decay (decoupled where the group asks for it), then Adam's running moments, in place:
    ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g²``. Returns the gradient after weight
    decay and the arrays ``m`` and ``v``."""
    beta1, beta2 = group["betas"]
    grad = apply_weight_decay(param, grad, group["lr"], group["weight_decay"], group["decoupled_weight_decay"])
    exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
    K.lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq *= K.scalar(beta2, exp_avg_sq)
    K.addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
    _changed(state["exp_avg"], state["exp_avg_sq"])
    return grad, exp_avg, exp_avg_sq
