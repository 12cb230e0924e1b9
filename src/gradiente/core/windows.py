"""Signal windows, tensors made from a formula as the other creation functions are: ``hann_window``,
``hamming_window``, ``blackman_window``, ``bartlett_window``, ``kaiser_window``, computed with PyTorch's
arithmetic (the same operations in the same order, in the window's dtype), so their values agree to the last bit.
"""
import math

import numpy as np

from . import dtype as dt
from .device import check_device
from .dtype import cpp_name
from .meta import meta_array
from .special_math import i0_array
from .tensor import Tensor

__all__ = ["hamming_window", "hann_window", "blackman_window", "bartlett_window", "kaiser_window"]


# --- the windows --------------------------------------------------------------------------------------------

def _window(name, window_length, periodic, dtype, device, requires_grad, symmetric):
    """A window of ``window_length`` points. ``symmetric(n, np_dtype)`` computes the symmetric window of n >= 2
    points; a periodic window is the symmetric one of n + 1 points without its last (PyTorch's way)."""
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    meta = check_device(device, name)
    d = dtype if dtype is not None else dt.get_default_dtype()
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d._legacy[:-len('Tensor')]}'")
    if not d.is_floating_point:
        # PyTorch prints the options without requires_grad, whatever was asked
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={cpp_name(d._np)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if window_length <= 1:
        values = np.ones(window_length, dtype=d._np)
    else:
        values = symmetric(window_length + 1 if periodic else window_length, d._np)[:window_length]
    values = meta_array(values.shape, values.dtype) if meta else np.ascontiguousarray(values)
    return Tensor._make(values, requires_grad=requires_grad)


def _cos(angles):
    # in double, rounded once: within an ulp of PyTorch's vectorized cos (neither is always the other)
    return np.cos(angles.astype(np.float64)).astype(angles.dtype)


def _positions(n, np_dtype, spacing):
    """0, 1, ..., n-1 times ``spacing``, in the window's dtype (the number rounded to it first, as PyTorch
    multiplies a tensor by a number)."""
    return np.arange(n, dtype=np_dtype) * np_dtype.type(spacing)


def _hamming(alpha, beta):
    def symmetric(n, np_dtype):
        angles = _positions(n, np_dtype, 2 * math.pi / (n - 1))
        return _cos(angles) * np_dtype.type(-beta) + np_dtype.type(alpha)
    return symmetric


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """alpha - beta·cos(2πk/(N - 1)), k = 0 .. N-1 (N = window_length, or window_length + 1 if periodic)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _hamming(alpha, beta))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """½ - ½·cos(2πk/(N - 1)): the Hamming window with alpha = beta = ½."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _hamming(0.5, 0.5))


def _blackman(n, np_dtype):
    t = np_dtype.type
    angles = _positions(n, np_dtype, math.pi / (n - 1))
    return _cos(angles * t(4)) * t(0.08) - _cos(angles * t(2)) * t(0.5) + t(0.42)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """0.42 - 0.5·cos(2πk/(N - 1)) + 0.08·cos(4πk/(N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, _blackman)


def _bartlett(n, np_dtype):
    t = np_dtype.type
    values = _positions(n, np_dtype, 2 / (n - 1))
    rising = ((n - 1) >> 1) + 1
    values[rising:] = values[rising:] * t(-1) + t(2)
    return values


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The triangle 2k/(N - 1) rising to 1 at the middle, then falling back to 0."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, _bartlett)


def _kaiser(beta):
    def symmetric(n, np_dtype):
        t = np_dtype.type
        half = t((n - 1) / 2.0)
        ratio = (np.arange(n, dtype=np_dtype) - half) / half
        arguments = t(beta) * np.sqrt(np.abs(t(1) - ratio ** t(2)))
        return (i0_array(arguments) / i0_array(np.asanyarray(t(beta)))).astype(np_dtype)
    return symmetric


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """I₀(β·√(1 - ((k - (N-1)/2) / ((N-1)/2))²)) / I₀(β), I₀ the modified Bessel function of order 0."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, _kaiser(beta))
