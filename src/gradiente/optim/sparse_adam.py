"""SparseAdam: Adam whose moments and parameters move only where a sparse gradient has entries.

Only the checks are here for now: gradiente's gradients are dense, and a dense gradient gets PyTorch's
error. The masked update needs sparse COO gradients (``nn.Embedding(sparse=True)``), which another part of
the project is adding; the step is to be written on them once they exist.
"""
from .optimizer import Optimizer, _closure_loss

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam restricted to the entries a sparse gradient holds (``betas``, ``eps``, ``maximize`` as Adam's).
    Parameters must be dense and real. Intended difference, for now: gradiente has no sparse gradients yet,
    so ``step()`` with a gradient raises PyTorch's error for dense gradients."""

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
                if p._grad is not None and not p._grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                if p._grad is not None:
                    raise NotImplementedError("SparseAdam: sparse gradients are not supported by gradiente yet")
        return loss
