"""What the optimizers derived from Adam (Adamax, NAdam, RAdam) share: argument checks, weight decay, moments."""
from . import _kernels as K
from .optimizer import _check_nonnegative

__all__ = ["check_adam_args", "apply_weight_decay", "update_moments"]


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


def update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2):
    """Adam's running moments, in place: ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g²``."""
    K.lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq *= K.scalar(beta2, exp_avg_sq)
    K.addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
