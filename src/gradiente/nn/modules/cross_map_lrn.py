"""``CrossMapLRN2d``: PyTorch's legacy local response normalisation across channels (``_functions.CrossMapLRN2d``)."""
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .module import Module

__all__ = ["CrossMapLRN2d"]


class CrossMapLRN2d(Module):
    """Legacy local response normalisation over channels of an (N, C, H, W) input:
    x / (k + α/size · Σ x²)^β, the sum over a running window of channels, computed (and differentiated) exactly as
    PyTorch's legacy implementation does, whose gradient is not the derivative of its forward (see
    ``_functions``). ``LocalResponseNorm`` is the layer to use in new programs."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
