"""The 3-D pooling layers, ``MaxPool3d``, ``AvgPool3d``, ``AdaptiveAvgPool3d``, ``AdaptiveMaxPool3d``,
``MaxUnpool3d`` (the ops are in ``ops/nn/pooling3d.py``), and the power-average layers ``LPPool1d/2d/3d``
(``ops/nn/lp_pooling.py``)."""
from .. import functional as F
from .module import Module
from .pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolWithDivisor, _MaxPoolNd, _MaxUnpoolNd
from .utils import _triple

__all__ = ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool3d", "LPPool1d", "LPPool2d",
           "LPPool3d"]


class MaxPool3d(_MaxPoolNd):
    """The maximum of each window: ``(N, C, D, H, W) -> (N, C, D_out, H_out, W_out)``."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolWithDivisor):
    """The mean of each window: ``(N, C, D, H, W) -> (N, C, D_out, H_out, W_out)``."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to ``output_size``: ``(N, C, D, H, W) -> (N, C, *output_size)``."""

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to ``output_size`` (None keeps that size): ``(N, C, D, H, W) -> (N, C, *output_size)``."""

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d``: ``forward(input, indices, output_size=None)``."""

    _expand = staticmethod(_triple)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)


class LPPool1d(_LPPoolNd):
    """Power-average pooling, (Σ_window x^p)^(1/p): ``(N, C, L) -> (N, C, L_out)``."""

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling, (Σ_window x^p)^(1/p): ``(N, C, H, W) -> (N, C, H_out, W_out)``."""

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling, (Σ_window x^p)^(1/p): ``(N, C, D, H, W) -> (N, C, D_out, H_out, W_out)``."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)
