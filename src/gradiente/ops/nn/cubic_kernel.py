"""Keys' cubic convolution kernel, the weights of bicubic interpolation, and its derivative: shared by
``interpolate`` (its taps) and ``grid_sample`` (its taps, and their slopes for the grid's gradient)."""
from ...core.fused import fma as _fma

_CUBIC_A = -0.75        # PyTorch's (and OpenCV's) bicubic coefficient; antialiasing uses -0.5


# the kernel's two pieces, each multiply-add rounded once as in PyTorch's compiled kernels (FMA)

def _cubic_near(x, a):
    """For |x| <= 1: ((a + 2)·x - (a + 3))·x² + 1."""
    return _fma(_fma(a + 2, x, -(a + 3), x.dtype) * x, x, 1, x.dtype)


def _cubic_far(x, a):
    """For 1 < |x| < 2: ((a·x - 5a)·x + 8a)·x - 4a."""
    return _fma(_fma(_fma(a, x, -5 * a, x.dtype), x, 8 * a, x.dtype), x, -4 * a, x.dtype)


# their derivatives, for grid_sample's gradient with respect to the grid

def _cubic_slope_near(x, a):
    """d/dx of ((a + 2)·x - (a + 3))·x² + 1."""
    return (3 * (a + 2) * x - 2 * (a + 3)) * x


def _cubic_slope_far(x, a):
    """d/dx of ((a·x - 5a)·x + 8a)·x - 4a."""
    return (3 * a * x - 10 * a) * x + 8 * a
