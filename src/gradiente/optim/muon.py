"""Muon (Jordan et al., 2024): SGD momentum whose update is orthogonalised by a Newton-Schulz iteration in
bfloat16, for 2-D parameters, as ``torch.optim.Muon``."""
import math

import gradiente

from ..core.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.775, 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix with ``grad``'s singular vectors: ``ns_steps`` rounds of the
    quintic Newton-Schulz map ``X ← aX + (bG + cG²)X``, ``G = XXᵀ``, on ``grad / ‖grad‖`` in bfloat16 (the wide
    side last)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = gradiente.addmm(gram, gram, gram, beta=b, alpha=c)
        x = gradiente.addmm(x, gram_update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """``lr`` scaled for the matrix's shape (A, B): ``sqrt(max(1, A/B))`` ("original", the default) or
    ``0.2 * sqrt(max(A, B))`` ("match_rms_adamw")."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """For each 2-D parameter: ``buf = lerp(buf, g, 1 - momentum)``, the update ``lerp(g, buf, momentum)``
    (Nesterov) or ``buf`` orthogonalised by Newton-Schulz in bfloat16, then decoupled weight decay
    ``p *= 1 - lr * weight_decay`` and ``p -= adjusted_lr * update``. Parameters must be 2-D."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not momentum >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        """One Muon update of every parameter that has a gradient."""
        loss = _closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    grad = p.grad
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = gradiente.zeros_like(grad)
                    buf = state["momentum_buffer"]
                    buf.lerp_(grad, 1 - momentum)
                    update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                         group["eps"])
                    adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                    p.mul_(1 - lr * group["weight_decay"])
                    # Widened first (exact): gradiente's add_ of a bfloat16 tensor with alpha rounds the product
                    # to bfloat16, where PyTorch computes it in the parameter's dtype.
                    p.add_(update.to(p.dtype), alpha=-adjusted_lr)
        return loss
