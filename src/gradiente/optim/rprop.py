"""Rprop (Riedmiller & Braun, 1993): per-weight step sizes that grow while the gradient keeps its sign and shrink
when it flips; only the gradient's sign is used."""
import numpy as np

from ..core.tensor import Tensor
from . import _kernels as K
from .optimizer import _changed, _check_nonnegative, _SingleTensorOptimizer, _zeros_like

__all__ = ["Rprop"]


def _step_size_factors(grad, prev, etaminus, etaplus):
    """``etaplus`` where ``grad`` kept the sign of ``prev``, ``etaminus`` where it flipped, 1 where either is 0."""
    sign = np.sign(grad * prev)
    sign[sign > 0] = K.scalar(etaplus, sign)
    sign[sign < 0] = K.scalar(etaminus, sign)
    sign[sign == 0] = 1
    return sign


class Rprop(_SingleTensorOptimizer):
    """``s *= etaplus`` (or ``etaminus`` after a sign flip), clamped to ``step_sizes``; ``p -= sign(g) * s``,
    except after a flip, where the step is skipped and the gradient forgotten. Same operations, order and
    rounding as PyTorch's single-tensor implementation (float32 runs match bit for bit)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_nonnegative(**{"learning rate": lr})
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"prev": _zeros_like(p), "step_size": Tensor._make(np.full_like(p._data, group["lr"]))}

    def _update(self, param, grad, state, step, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        prev, step_size = state["prev"]._data, state["step_size"]._data
        factors = _step_size_factors(grad, prev, etaminus, etaplus)
        step_size *= factors
        np.clip(step_size, K.scalar(step_size_min, step_size), K.scalar(step_size_max, step_size), out=step_size)
        grad = np.array(grad, copy=True)
        grad[factors == K.scalar(etaminus, factors)] = 0
        K.addcmul_(param, np.sign(grad), step_size, -1)
        prev[...] = grad
        _changed(state["prev"], state["step_size"])
