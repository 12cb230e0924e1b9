"""Power-average pooling, ``lp_pool1d/2d/3d``: (Σ_window x^p)^(1/p), composed as PyTorch composes it (an average
pool of x^p, scaled back to a sum, its sign kept through ``relu(abs(.))``), so it records PyTorch's nodes
(``PowBackward0`` over ``MulBackward0`` ... over ``AvgPool2DBackward0``) and needs no rule of its own."""
import math

from .activations import relu
from .convolution import _tuple
from .pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from .pooling3d import avg_pool3d, max_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]

# the average and max pools of each number of spatial dims
_POOLS = {1: (avg_pool1d, max_pool1d), 2: (avg_pool2d, max_pool2d), 3: (avg_pool3d, max_pool3d)}


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n_spatial):
    average, maximum = _POOLS[n_spatial]
    if norm_type == math.inf:           # the limit p -> inf: the largest magnitude of each window
        return maximum(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:          # p -> -inf: the smallest
        return -maximum(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = average(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    window = math.prod(_tuple(kernel_size, n_spatial, "kernel_size"))
    return (out.sign() * relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(Σ x^p)^(1/p) over each window along the last axis: ``(N, C, L) -> (N, C, L_out)``; ``norm_type`` p,
    ``±inf`` giving the largest (smallest) magnitude."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(Σ x^p)^(1/p) over each window: ``(N, C, H, W) -> (N, C, H_out, W_out)``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(Σ x^p)^(1/p) over each window: ``(N, C, D, H, W) -> (N, C, D_out, H_out, W_out)``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
