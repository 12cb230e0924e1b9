"""Averaged SGD (Polyak & Juditsky, 1992): SGD with a decaying step, and a running average of the iterates."""
import numpy as np

from ..core.tensor import Tensor
from . import _kernels as K
from .optimizer import _changed, _check_nonnegative, _SingleTensorOptimizer, _zeros_like

__all__ = ["ASGD"]


def _float32_scalar(value):
    """A 0-d float32 tensor, the type PyTorch keeps ``eta`` and ``mu`` in."""
    return Tensor._make(np.array(value, dtype=np.float32))


class ASGD(_SingleTensorOptimizer):
    """``p = p * (1 - lambd * eta) - eta * g`` with ``eta_t = lr / (1 + lambd * lr * t)^alpha``; from step ``t0``
    on, ``ax`` averages the iterates (``ax += (p - ax) * mu`` with ``mu_t = 1 / max(1, t - t0)``; before it,
    ``ax = p``). The average is ``state['ax']``: copy it into the parameters to use it. Same operations, order
    and rounding as PyTorch's single-tensor implementation (float32 runs match bit for bit)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_nonnegative(**{"learning rate": lr, "weight_decay value": weight_decay})
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"eta": _float32_scalar(group["lr"]), "mu": _float32_scalar(1.0), "ax": _zeros_like(p)}

    def _update(self, param, grad, state, step, group):
        lr, lambd, alpha, weight_decay = group["lr"], group["lambd"], group["alpha"], group["weight_decay"]
        if weight_decay != 0:
            grad = K.add_scaled(grad, param, weight_decay)
        eta = float(state["eta"]._data)
        param *= K.scalar(1 - lambd * eta, param)
        K.add_scaled(param, grad, -eta, out=param)
        ax, mu = state["ax"]._data, state["mu"]._data
        if float(mu) != 1:
            ax += (param - ax) * mu.astype(ax.dtype)
        else:
            ax[...] = param
        # Both go through a float32 tensor in PyTorch, even when the state was loaded as float64.
        state["eta"]._data[...] = np.float32(lr / ((1 + lambd * lr * step) ** alpha))
        state["mu"]._data[...] = np.float32(1 / max(1, step - group["t0"]))
        _changed(state["ax"], state["eta"], state["mu"])
