"""Adafactor (Shazeer & Stern, 2018): second moments kept as row and column factors of a matrix's squared
gradient, relative step sizes and update clipping, as PyTorch's ``torch.optim.Adafactor``."""
import math

import numpy as np

from . import _kernels as K
from .optimizer import _changed, _SingleTensorOptimizer

__all__ = ["Adafactor"]


def _norm(array, axis=None, keepdims=False):
    """The 2-norm, accumulated in the array's dtype as PyTorch's float32 kernel does."""
    return np.sqrt(np.sum(array * array, axis=axis, keepdims=keepdims))


class Adafactor(_SingleTensorOptimizer):
    """PyTorch's single-tensor Adafactor: for a gradient of 2 or more dims, running means of its squared
    rows (``row_var``, shape ``(..., m, 1)``) and columns (``col_var``, ``(..., 1, n)``) stand for the
    second moment; a vector keeps a full ``variance``. ``beta2_t = 1 - t^beta2_decay``, the step is
    ``max(eps2, RMS(param)) * min(lr, 1/sqrt(t))``, the update is clipped to RMS ``d``, and ``lr`` also scales
    the decoupled weight decay. ``eps=(None, 1e-3)``: eps1 None is the dtype's machine epsilon. The norms
    are summed by NumPy, so the last bit can differ from PyTorch's."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not eps[1] >= 0.0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _params_with_state(self, group):
        for p, grad, state, step in super()._params_with_state(group):
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            yield p, grad, state, step

    def _init_state(self, p, group):
        from ..core.tensor import Tensor
        g = p._grad._data
        if g.ndim > 1:
            return {"row_var": Tensor._make(np.zeros(g.shape[:-1] + (1,), g.dtype)),
                    "col_var": Tensor._make(np.zeros(g.shape[:-2] + (1, g.shape[-1]), g.dtype))}
        return {"variance": Tensor._make(np.zeros_like(g))}

    def _update(self, param, grad, state, step, group):
        lr, d, weight_decay = group["lr"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(param.dtype).eps)
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, float(_norm(param)) / (param.size ** 0.5)) * rho_t
        if weight_decay != 0:
            param *= K.scalar(1 - lr * weight_decay, param)
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = _norm(grad, -1, True)
            row_mean *= row_mean
            row_mean /= K.scalar(grad.shape[-1], row_mean)
            K.lerp_(row_var._data, row_mean, one_minus_beta2_t)
            col_mean = _norm(grad, -2, True)
            col_mean *= col_mean
            col_mean /= K.scalar(grad.shape[-2], col_mean)
            K.lerp_(col_var._data, col_mean, one_minus_beta2_t)
            var_estimate = row_var._data @ col_var._data
            var_estimate /= np.maximum(row_var._data.mean(axis=-2, keepdims=True), K.scalar(eps1, var_estimate))
            _changed(row_var, col_var)
        else:
            variance = state["variance"]
            K.lerp_(variance._data, grad * grad, one_minus_beta2_t)
            var_estimate = variance._data.copy()
            _changed(variance)
        np.maximum(var_estimate, K.scalar(eps1 * eps1, var_estimate), out=var_estimate)
        update = 1 / np.sqrt(var_estimate)
        update *= grad
        denom = max(1.0, float(_norm(update)) / (math.sqrt(update.size) * d))
        K.add_scaled(param, update, -alpha / denom, out=param)
