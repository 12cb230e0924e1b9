"""Averaged SGD (Polyak & Juditsky, 1992): SGD with a decaying step, and a running average of the iterates."""
import numpy as np

from .._tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, _changed, _check_nonnegative, _closure_loss, _increment, _step_counter, _zeros_like

__all__ = ["ASGD"]


def _float32_scalar(value):
    """A 0-d float32 tensor, the type PyTorch keeps ``eta`` and ``mu`` in."""
    return Tensor._make(np.array(value, dtype=np.float32))


class ASGD(Optimizer):
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

    def step(self, closure=None):
        """One update of every parameter that has a gradient. ``closure`` re-evaluates and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            weight_decay = group["weight_decay"]
            for p, grad in self._params_with_grad(group):
                param = p._data
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_counter()
                    state["eta"] = _float32_scalar(lr)
                    state["mu"] = _float32_scalar(1.0)
                    state["ax"] = _zeros_like(p)
                step = _increment(state["step"])
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
                state["mu"]._data[...] = np.float32(1 / max(1, step - t0))
                _changed(p, state["ax"], state["eta"], state["mu"])
        return loss
