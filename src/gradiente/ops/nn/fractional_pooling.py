"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d/3d`` and their ``_with_indices`` forms, recorded as
PyTorch's ``FractionalMaxPool2DBackward0`` / ``FractionalMaxPool3DBackward0``.

Each (N, C) plane pools windows of ``kernel_size`` whose starts along an axis of size ``n`` advance by irregular
steps: with ``u`` the plane's random sample for that axis and ``α = (n - k) / (out - 1)``, window i starts at
``int((i + u)·α) - int(u·α)``, and the last window ends at the edge. The samples are ``_random_samples``
(N, C, dims), or drawn as PyTorch draws them (``torch.rand(N, C, dims)`` from the default generator, so the same
seed gives the same windows). The starts are computed in the input's dtype, as PyTorch's kernel computes them, so
that float32 inputs round where PyTorch's do. In the samples, the 2-D pool reads entry 0 for the width and 1 for
the height; the 3-D pool reads 0, 1, 2 for time, height, width (PyTorch's orders).

Once the windows and their maxima are fixed the pool is a gather, so it reuses max pooling's map and rule
(``pooling._MaxPoolMap``, ``_pool_pair``): dx = the scatter of grad at the maxima, and under ``create_graph`` the
node of that gradient is ``FractionalMaxPool2DBackwardBackward0``, as PyTorch's.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core.random import rand
from ...core.record import record, wants_grad, wrap
from ._common import shape_text
from .pooling import _MaxPoolMap, _pool_pair

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

FractionalMaxPool2DBackward0, FractionalMaxPool2DBackwardBackward0 = _pool_pair(
    "FractionalMaxPool2D", "∂max/∂x = 1 at the pseudo-random window's maximum, 0 elsewhere")
FractionalMaxPool3DBackward0, FractionalMaxPool3DBackwardBackward0 = _pool_pair(
    "FractionalMaxPool3D", "∂max/∂x = 1 at the pseudo-random window's maximum, 0 elsewhere")

_AXIS_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _window_starts(samples, size, out, kernel):
    """The start of each window along one axis, per plane: ``samples`` (P,) in the input's dtype -> (P, out)."""
    starts = np.zeros(samples.shape + (out,), dtype=np.int64)
    if out > 1:
        kind = samples.dtype.type
        alpha = kind(size - kernel) / kind(out - 1)
        i = np.arange(out - 1).astype(samples.dtype)
        starts[:, :-1] = (((i[None, :] + samples[:, None]) * alpha).astype(np.float64).astype(np.int64)
                          - (samples * alpha).astype(np.float64).astype(np.int64)[:, None])
    if out > 0:
        starts[:, -1] = size - kernel
    return starts


def _window_maxima(windows):
    """Each window's maximum and its position in the window, on (..., K): the first largest value, unless the
    window holds a nan, then the last nan (PyTorch's kernel keeps any nan it meets)."""
    nan = np.isnan(windows)
    last_nan = windows.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    arg = np.where(nan.any(axis=-1), last_nan, np.argmax(windows, axis=-1) if windows.shape[-1] else 0)
    return np.take_along_axis(windows, arg[..., None], axis=-1)[..., 0], arg


def _pool(input, kernel_size, output_size, samples, dims):
    """ATen's ``fractional_max_pool{dims}d``: (output, indices) with PyTorch's checks and messages."""
    name = f"fractional_max_pool{dims}d" + ("_out" if dims == 3 else "")
    kernel = _sizes(kernel_size, dims, "kernel_size")
    out_size = _sizes(output_size, dims, "output_size")
    xa = input._data
    if xa.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"fractional_max_pool{dims}d(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
                           f"{shape_text(xa.shape)}")
    for d in range(1, xa.ndim):
        if xa.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{shape_text(xa.shape)} with dimension {d} being empty.")
    _check_samples(samples, xa, dims)
    batched = xa.ndim == dims + 2
    x = xa if batched else xa[None]
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    for axis, (o, k, size) in enumerate(zip(out_size, kernel, spatial)):
        if o + k - 1 > size:
            what = _AXIS_NAMES[dims][axis]
            raise RuntimeError(f"{name}(): pool {what} {k} too large relative to input {what} {size}")
    planes = n * c
    u = samples._data[:n].reshape(planes, dims)
    # the sample entry each axis reads: 2-D (width, height) reversed, 3-D in order
    entries = (1, 0) if dims == 2 else (0, 1, 2)
    starts = [_window_starts(u[:, e], size, o, k) for e, size, o, k in zip(entries, spatial, out_size, kernel)]
    # every window's flat positions in its plane: (P, *out, *kernel), axis by axis
    flat = np.zeros((planes,) + tuple(out_size) + tuple(kernel), dtype=np.int64)
    stride = 1
    for axis in reversed(range(dims)):
        shape = [planes] + [1] * (2 * dims)
        shape[1 + axis] = out_size[axis]
        offsets = [1] * (2 * dims + 1)
        offsets[1 + dims + axis] = kernel[axis]
        flat += (starts[axis].reshape(shape) + np.arange(kernel[axis]).reshape(offsets)) * stride
        stride *= spatial[axis]
    window_count, k_total = math.prod(out_size), math.prod(kernel)
    flat = flat.reshape(planes, window_count, k_total)
    values = np.take_along_axis(x.reshape(planes, -1), flat.reshape(planes, -1), axis=1).reshape(flat.shape)
    out, arg = _window_maxima(values)
    indices = np.take_along_axis(flat, arg[..., None], axis=2)[..., 0]
    shape = (n, c) + tuple(out_size) if batched else (c,) + tuple(out_size)
    result = wrap(out.reshape(shape).astype(xa.dtype))
    if wants_grad(input):
        node = FractionalMaxPool2DBackward0 if dims == 2 else FractionalMaxPool3DBackward0
        base = np.arange(planes)[:, None] * math.prod(spatial)
        record(node, (input,), result, saved=(input,),
               pool=_MaxPoolMap(base + indices, xa.shape, result._data.shape, overlapping=True))
    return result, wrap(indices.reshape(shape))


def _sizes(value, dims, what):
    sizes = (value,) * dims if isinstance(value, int) else tuple(value)
    if len(sizes) != dims:
        raise RuntimeError(f"fractional_max_pool{dims}d: {what} must either be a single Int or tuple of Ints")
    return tuple(int(s) for s in sizes)


def _check_samples(samples, xa, dims):
    s = samples._data
    if s.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {s.ndim}")
    batched = xa.ndim == dims + 2
    n, c = (xa.shape[0], xa.shape[1]) if batched else (1, xa.shape[0])
    if s.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if s.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if s.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {s.shape[2]}.")
    if s.dtype != xa.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")


def _output_size(input, output_size, output_ratio, dims):
    """The output size from ``output_size`` or ``output_ratio`` (a fraction of each spatial size), as PyTorch's
    ``nn.functional`` computes it."""
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return output_size
    if dims == 2 and len(output_ratio) > 2:
        raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
    ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * dims
    return [int(input.size(d - dims) * r) for d, r in zip(range(dims), ratio)]


def _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, dims):
    output_size = _output_size(input, output_size, output_ratio, dims)
    if _random_samples is None:
        n_batch = 1 if input.dim() == dims + 1 else input.size(0)
        # PyTorch's draw, from the default generator: one sample per (batch, channel, axis)
        _random_samples = rand(n_batch, input.size(-dims - 1), dims, dtype=dt.FROM_NUMPY[input._data.dtype])
    return _pool(input, kernel_size, output_size, _random_samples, dims)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool2d`` returning ``(output, indices)`` whatever ``return_indices`` says; the indices are
    flat positions in each H·W plane, as ``max_unpool2d`` takes them."""
    return _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-D fractional max pooling: ``(N, C, H, W)`` or ``(C, H, W)`` -> ``(..., oH, oW)``, with ``output_size`` or
    ``output_ratio`` (of H and W, in (0, 1)) and ``kernel_size`` windows at pseudo-random steps (module docstring).
    ``_random_samples`` (N, C, 2) in [0, 1) fixes the steps; without it they are drawn as PyTorch draws them."""
    out = _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool3d`` returning ``(output, indices)`` whatever ``return_indices`` says; the indices are
    flat positions in each T·H·W volume."""
    return _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D fractional max pooling: ``(N, C, T, H, W)`` or ``(C, T, H, W)`` -> ``(..., oT, oH, oW)``, as
    ``fractional_max_pool2d`` with one more axis; ``_random_samples`` is (N, C, 3)."""
    out = _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
