"""SparseAdam: Adam whose moments and parameters move only where a sparse gradient has entries (the rows an
``nn.Embedding(sparse=True)`` looked up), in PyTorch's order of operations."""
import math

import numpy as np

from ..core.tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, _changed, _closure_loss

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam restricted to the entries a sparse gradient holds (``betas``, ``eps``, ``maximize`` as Adam's): only
    those rows of the moments and of the parameter change. Parameters must be dense and real; a dense gradient is
    refused, as in PyTorch."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not lr > 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps > 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        sparse_params, complex_params = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse_params.append([index, d_index])
                if p.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure=None):
        """One masked Adam update; a dense gradient raises RuntimeError, as in PyTorch."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = p.grad
                if not grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                self._sparse_update(p, grad.coalesce(), group)
        return loss

    def _sparse_update(self, p, grad, group):
        """PyTorch's ``_single_tensor_sparse_adam`` on the stored entries: the moments move towards the gradient
        there (their other entries stay), then the parameter takes the bias-corrected step there."""
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._make(np.zeros_like(p._data))
            state["exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
        state["step"] += 1
        rows = tuple(grad._sparse_indices)
        values = -grad._data if group["maximize"] else grad._data
        beta1, beta2 = group["betas"]
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        avg_update = (values - exp_avg[rows]) * (1 - beta1)
        exp_avg[rows] += avg_update
        sq_update = (values * values - exp_avg_sq[rows]) * (1 - beta2)
        exp_avg_sq[rows] += sq_update
        numer = exp_avg[rows]             # (old + update, rounded once, as PyTorch's numer)
        denom = K.sqrt(exp_avg_sq[rows]) + group["eps"]
        bias_correction1 = 1 - beta1 ** state["step"]
        bias_correction2 = 1 - beta2 ** state["step"]
        step_size = group["lr"] * math.sqrt(bias_correction2) / bias_correction1
        p._data[rows] += (-step_size * (numer / denom)).astype(p._data.dtype)
        _changed(p)
