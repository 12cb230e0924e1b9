"""``CrossMapLRN2d``: PyTorch's legacy local response normalisation across channels (``_functions.CrossMapLRN2d``)."""
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .normalization import _ChannelWindowNorm

__all__ = ["CrossMapLRN2d"]


class CrossMapLRN2d(_ChannelWindowNorm):
    """Legacy local response normalisation over channels of an (N, C, H, W) input:
    x / (k + α/size · Σ x²)^β, the sum over a running window of channels, computed (and differentiated) exactly as
    PyTorch's legacy implementation does, whose gradient is not the derivative of its forward (see
    ``_functions``). ``LocalResponseNorm`` is the layer to use in new programs. Its default ``k`` is the int 1, as
    PyTorch's (it shows in the repr)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)
