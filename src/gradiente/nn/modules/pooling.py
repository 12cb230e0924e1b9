"""Pooling layers: ``MaxPool1d/2d``, ``AvgPool1d/2d``, ``AdaptiveAvgPool1d/2d`` (the ops are in ``ops/nn/pooling.py``),
``AdaptiveMaxPool1d/2d`` and ``MaxUnpool1d/2d`` (see ``ops.nn.max_pooling``)."""
from .. import functional as F
from .module import Module
from .utils import _pair, _single

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxUnpool1d", "MaxUnpool2d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class MaxPool1d(_MaxPoolNd):
    """The maximum of each window along the last axis: ``(N, C, L) -> (N, C, L_out)``."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """The maximum of each window: ``(N, C, H, W) -> (N, C, H_out, W_out)``."""

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean of each window along the last axis: ``(N, C, L) -> (N, C, L_out)``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolWithDivisor(_AvgPoolNd):
    """What AvgPool2d and AvgPool3d share: their arguments, ``divisor_override`` among them."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPoolWithDivisor):
    """The mean of each window: ``(N, C, H, W) -> (N, C, H_out, W_out)``."""

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to length ``output_size``: ``(N, C, L) -> (N, C, output_size)``."""

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to ``output_size``: ``(N, C, H, W) -> (N, C, *output_size)``."""

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to length ``output_size``: ``(N, C, L) -> (N, C, output_size)``."""

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to ``output_size`` (None keeps that size): ``(N, C, H, W) -> (N, C, *output_size)``."""

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    _expand = staticmethod(_single)     # an int (or a sequence) as one value per spatial dim

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = self._expand(kernel_size)
        self.stride = self._expand(stride if stride is not None else kernel_size)
        self.padding = self._expand(padding)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``."""

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d``: ``forward(input, indices, output_size=None)``."""

    _expand = staticmethod(_pair)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
