"""Adagrad (Duchi et al., 2011): per-coordinate learning rates from the sum of squared gradients."""
import numpy as np

from ..core.tensor import Tensor
from . import _kernels as K
from .optimizer import _changed, _check_nonnegative, _SingleTensorOptimizer

__all__ = ["Adagrad"]


class Adagrad(_SingleTensorOptimizer):
    """``s += g²``, ``p -= clr * g / (sqrt(s) + eps)`` with ``clr = lr / (1 + (t - 1) * lr_decay)``. Same
    operations, order and rounding as PyTorch's single-tensor implementation, except float32 ``sqrt``. A sparse
    gradient steps as its dense form, whose rows off the pattern do not move: PyTorch's sparse update."""

    _takes_sparse_gradients = True

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_nonnegative(**{"learning rate": lr, "lr_decay value": lr_decay, "weight_decay value": weight_decay,
                              "initial_accumulator_value value": initial_accumulator_value, "epsilon value": eps})
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        # Unlike the other optimizers, PyTorch's Adagrad makes every parameter's state at once.
        for group in self.param_groups:
            for p in group["params"]:
                self._start_state(p, group)

    def _init_state(self, p, group):
        # PyTorch fills the sum with the constructor's value, not the group's.
        return {"sum": Tensor._make(np.full_like(p._data, self.defaults["initial_accumulator_value"]))}

    def _update(self, param, grad, state, step, group):
        weight_decay = group["weight_decay"]
        if weight_decay != 0:
            grad = K.add_scaled(grad, param, weight_decay)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"]._data
        K.addcmul_(state_sum, grad, grad, 1)
        std = K.sqrt(state_sum)
        std += K.scalar(group["eps"], std)
        K.addcdiv_(param, grad, std, -clr)
        _changed(state["sum"])
