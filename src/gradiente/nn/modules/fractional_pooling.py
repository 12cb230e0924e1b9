"""``FractionalMaxPool2d`` and ``FractionalMaxPool3d``: max pooling with pseudo-random window steps
(``ops/nn/fractional_pooling.py``)."""
from ...ops.nn.fractional_pooling import fractional_max_pool2d, fractional_max_pool3d
from .module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _repeat(value, dims):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


class _FractionalMaxPoolNd(Module):
    """What the 2-D and 3-D layers share: ``kernel_size``, and ``output_size`` or ``output_ratio`` (each in (0, 1)),
    as tuples; ``_random_samples``, when given, is a buffer that fixes the windows for every call."""

    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    dims: int

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        self.kernel_size = _repeat(kernel_size, self.dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _repeat(output_size, self.dims) if output_size is not None else None
        self.output_ratio = _repeat(output_ratio, self.dims) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def _pool(self, pool, input):
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (``F.fractional_max_pool2d``): ``(N, C, H, W)`` or ``(C, H, W)`` to
    ``output_size``, or to ``output_ratio`` of H and W; with ``return_indices``, also each maximum's flat position
    in its plane."""

    dims = 2

    def forward(self, input):
        return self._pool(fractional_max_pool2d, input)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (``F.fractional_max_pool3d``): ``(N, C, T, H, W)`` or ``(C, T, H, W)``."""

    dims = 3

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)

    def forward(self, input):
        return self._pool(fractional_max_pool3d, input)
