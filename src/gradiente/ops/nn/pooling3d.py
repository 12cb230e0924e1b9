"""3-D pooling: ``max_pool3d``, ``avg_pool3d``, ``adaptive_avg_pool3d``, ``adaptive_max_pool3d`` (and the
``_with_indices`` forms) and ``max_unpool3d``, on ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)`` input.

The same construction as the 2-D pools of ``pooling.py``, whose nodes and linear maps these reuse: the strided
window view of the padded input (``convolution._windows``, written for any number of spatial dims) reduced over
its kernel axes; for fixed windows (and fixed maxima) each pool is a linear map A, and the rule is dx = Aᵀ grad,
recorded under ``create_graph`` as ``<Pool>BackwardBackward0`` whose rule is A again.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core.dtype import scalar_name
from ...core.record import record, wants_grad, wrap
from ..autocast import autocast_entry
from ._common import shape_text
from .convolution import _col2im, _out_size, _pad, _tuple, _windows
from .max_pooling import MaxUnpool2DBackward0, _adaptive_taps, _unpool_output_size, scatter_unpooled
from .pooling import _averaging_matrix, _avg_divisor, _LinearPoolMap, _MaxPoolMap, _pool_pair, _pooled, _window_argmax

__all__ = ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "max_unpool3d"]

MaxPool3DWithIndicesBackward0, MaxPool3DWithIndicesBackwardBackward0 = _pool_pair(
    "MaxPool3DWithIndices", "∂max/∂x = 1 at the window's maximum, 0 elsewhere", __name__)
AvgPool3DBackward0, AvgPool3DBackwardBackward0 = _pool_pair(
    "AvgPool3D", "∂mean/∂x = 1/divisor for each element of the window", __name__)
AdaptiveAvgPool3DBackward0, AdaptiveAvgPool3DBackwardBackward0 = _pool_pair(
    "AdaptiveAvgPool3D", "∂mean/∂x = 1/window size for each element of the window", __name__)
AdaptiveMaxPool3DBackward0, AdaptiveMaxPool3DBackwardBackward0 = _pool_pair(
    "AdaptiveMaxPool3D", "∂max/∂x = 1 at the adaptive window's maximum, 0 elsewhere", __name__)


def _as_5d(input):
    """The input array as ``(N, C, D, H, W)`` (an unbatched one as a batch of one) and whether it was batched."""
    if input.dim() not in (4, 5) or 0 in input.shape[1:]:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    xa = input._data
    return (xa, True) if xa.ndim == 5 else (xa[None], False)


def _geometry(xa, kernel_size, stride, padding, dilation, ceil_mode):
    """Kernel, stride, padding, dilation as triples, the output size and the pads that hold every window."""
    kernel = _tuple(kernel_size, 3, "kernel_size")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _tuple(stride, 3,
                                                                                                         "stride")
    pad, dil = _tuple(padding, 3, "padding"), _tuple(dilation, 3, "dilation")
    for p, k in zip(pad, kernel):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation=1")
    sizes = xa.shape[2:]
    out = tuple(_out_size(size, 2 * p, k, s, d, ceil_mode, p) for size, p, k, s, d in zip(sizes, pad, kernel,
                                                                                          stride, dil))
    if min(out) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, xa.shape[1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (xa.shape[1], *out)))}). Output size is too small")
    # ceil_mode windows may run past the far padding: pad enough to hold every window
    extra = tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - (size + 2 * p))
                  for o, s, d, k, size, p in zip(out, stride, dil, kernel, sizes, pad))
    pads = tuple((p, p + e) for p, e in zip(pad, extra))
    return kernel, stride, pad, dil, out, pads


def _flat_argmax(win):
    """The maximum over the three kernel axes of ``win (N, C, kd, kh, kw, Do, Ho, Wo)`` and its flat (C-order)
    kernel offset, with ``_window_argmax``'s tie and NaN rules (it reads one kernel row of length kd·kh·kw)."""
    n, c = win.shape[:2]
    taps, out_size = math.prod(win.shape[2:5]), win.shape[5:]
    rows = np.ascontiguousarray(win).reshape(n, c, 1, taps, math.prod(out_size))
    out, arg = _window_argmax(rows)
    return out.reshape(n, c, *out_size), arg.reshape(n, c, *out_size)


def _record_max(node_cls, input, out, plane_index, restore):
    """The max pool's result tensor, recorded as ``node_cls`` gathering each maximum at ``plane_index`` (its
    flat position in its ``D·H·W`` volume), and the indices tensor."""
    result = wrap(restore(out))
    if wants_grad(input):
        n, c = plane_index.shape[:2]
        volume = math.prod(input.shape[-3:])
        base = (np.arange(n * c) * volume).reshape(n, c, 1, 1, 1)
        record(node_cls, (input,), result, saved=(input,),
               pool=_MaxPoolMap(base + plane_index, input._data.shape, result._data.shape, overlapping=True))
    return result, wrap(restore(plane_index.astype(np.int64)))


def _restorer(batched):
    return (lambda a: a) if batched else (lambda a: a[0])


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool3d`` and each maximum's flat position in its ``D·H·W`` volume (``return_indices`` is ignored,
    as in PyTorch)."""
    xa, batched = _as_5d(input)
    kernel, stride, pad, dil, out_size, pads = _geometry(xa, kernel_size, stride, padding, dilation, ceil_mode)
    lowest = -np.inf if dt.kind(xa.dtype) == "f" else np.iinfo(xa.dtype).min
    win = _windows(_pad(xa, pads, lowest), kernel, stride, dil, out_size)
    out, arg = _flat_argmax(win)
    # each maximum's coordinate along each axis: its window's start plus its kernel tap's offset
    taps = np.unravel_index(arg, kernel)
    coords = [np.arange(o).reshape([-1 if a == axis else 1 for a in range(3)]) * s - p + t * d
              for axis, (o, s, p, t, d) in enumerate(zip(out_size, stride, pad, taps, dil))]
    h_size, w_size = xa.shape[3:]
    plane_index = (coords[0] * h_size + coords[1]) * w_size + coords[2]
    return _record_max(MaxPool3DWithIndicesBackward0, input, out, plane_index, _restorer(batched))


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each ``kernel_size`` window: ``(N, C, D, H, W) -> (N, C, Do, Ho, Wo)``; ``stride`` defaults
    to ``kernel_size``; ``return_indices`` also gives each maximum's flat position in its ``D·H·W`` volume."""
    result, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (result, indices) if return_indices else result


class _AvgPool3dMap(_LinearPoolMap):
    """A = the sum of each (padded) window over its divisor;  Aᵀ spreads each gradient over its window."""

    def __init__(self, divisor, kernel, stride, pads, x_shape, y_shape):
        self.divisor, self.kernel, self.stride, self.pads = divisor, kernel, stride, pads
        self.x_shape, self.y_shape = x_shape, y_shape
        self.x5 = (1,) * (5 - len(x_shape)) + tuple(x_shape)
        self.out_shape = self.x5[:2] + tuple(y_shape[-3:])
        self.padded_shape = self.x5[:2] + tuple(s + b + a for s, (b, a) in zip(self.x5[2:], pads))

    def forward(self, x):
        win = _windows(_pad(x.reshape(self.x5), self.pads), self.kernel, self.stride, (1, 1, 1), self.out_shape[2:])
        return (win.sum(axis=(2, 3, 4)) / self.divisor).reshape(self.y_shape)

    def adjoint(self, grad):
        g = grad.reshape(self.out_shape) / self.divisor
        dwin = np.broadcast_to(g[:, :, None, None, None], g.shape[:2] + self.kernel + g.shape[2:])
        dxp = _col2im(dwin, self.padded_shape, self.stride, (1, 1, 1))
        inside = tuple(slice(b, b + s) for s, (b, _) in zip(self.x5[2:], self.pads))
        return dxp[(slice(None), slice(None), *inside)].reshape(self.x_shape)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each ``kernel_size`` window: ``(N, C, D, H, W) -> (N, C, Do, Ho, Wo)``; the divisor as
    ``avg_pool2d``'s (the window's size, without the padding if ``count_include_pad`` is False, or
    ``divisor_override``)."""
    xa, batched = _as_5d(input)
    kt, kh, kw = _tuple(kernel_size, 3, "kernel_size")
    t, h, w = xa.shape[2:]
    if t < kt or h < kh or w < kw:      # PyTorch checks the unpadded input first
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kt} kH: {kh} kW: {kw})")
    kernel, stride, pad, _, out_size, pads = _geometry(xa, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override:
        divisor = np.asanyarray(divisor_override, dtype=xa.dtype)
    else:
        per_axis = [_avg_divisor(size, o, k, s, p, count_include_pad)
                    for size, o, k, s, p in zip(xa.shape[2:], out_size, kernel, stride, pad)]
        divisor = (per_axis[0][:, None, None] * per_axis[1][None, :, None] * per_axis[2][None, None, :])
        divisor = divisor.astype(xa.dtype)
    y_shape = _restorer(batched)(np.empty(xa.shape[:2] + out_size, dtype=bool)).shape
    return _pooled(AvgPool3DBackward0, _AvgPool3dMap(divisor, kernel, stride, pads, input._data.shape, y_shape),
                   input)


def _adaptive_output_size(output_size, sizes):
    """The output size as a triple: an int for all three axes, None keeping that axis's size."""
    wanted = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 3
    return tuple(size if o is None else int(o) for o, size in zip(wanted, sizes))


class _AdaptiveAvgPool3dMap(_LinearPoolMap):
    """A x = x averaged along each axis by its window matrix (A_d, A_h, A_w);  Aᵀ grad uses their transposes."""

    def __init__(self, mats, x_shape, y_shape):
        self.mats, self.x_shape, self.y_shape = mats, x_shape, y_shape
        self.x5 = (1,) * (5 - len(x_shape)) + tuple(x_shape)
        self.out_shape = self.x5[:2] + tuple(m.shape[0] for m in mats)

    def forward(self, x):
        a_d, a_h, a_w = self.mats
        return np.einsum("ad,bh,ew,ncdhw->ncabe", a_d, a_h, a_w, x.reshape(self.x5)).reshape(self.y_shape)

    def adjoint(self, grad):
        a_d, a_h, a_w = self.mats
        return np.einsum("ad,bh,ew,ncabe->ncdhw", a_d, a_h, a_w, grad.reshape(self.out_shape)).reshape(self.x_shape)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed ``output_size`` (an int, a triple, None keeps that size): ``(N, C, D, H, W) ->
    (N, C, *output_size)``. Window i along an axis covers [floor(i·size/out), ceil((i+1)·size/out))."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    sizes = input.shape[-3:]
    out_size = _adaptive_output_size(output_size, sizes)
    if out_size == (1, 1, 1):
        # PyTorch takes the mean over the three spatial dims (MeanBackward1) for a 1x1x1 output
        return input.mean((-1, -2, -3), keepdim=True)
    xa = input._data
    if dt.kind(xa.dtype) not in "fc":
        raise NotImplementedError(f'"adaptive_avg_pool3d_cpu" not implemented for \'{scalar_name(xa.dtype)}\'')
    mats = [_averaging_matrix(size, o, xa.dtype) for size, o in zip(sizes, out_size)]
    y_shape = tuple(input.shape[:-3]) + out_size
    return _pooled(AdaptiveAvgPool3DBackward0, _AdaptiveAvgPool3dMap(mats, xa.shape, y_shape), input)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` and each maximum's flat position in its ``D·H·W`` volume."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {shape_text(input.shape)}")
    if dt.kind(input._data.dtype) != "f":
        raise NotImplementedError(f'"adaptive_max_pool3d_cpu" not implemented for '
                                  f"'{scalar_name(input._data.dtype)}'")
    xa, batched = (input._data, True) if input.dim() == 5 else (input._data[None], False)
    sizes = xa.shape[2:]
    out_size = _adaptive_output_size(output_size, sizes)
    td, th, tw = (_adaptive_taps(size, o) for size, o in zip(sizes, out_size))
    # the windows gathered as (N, C, Do, kd, Ho, kh, Wo, kw), then in the kernel-first layout of the window view
    win = xa[:, :, td[:, :, None, None, None, None], th[None, None, :, :, None, None], tw[None, None, None, None]]
    win = win.transpose(0, 1, 3, 5, 7, 2, 4, 6)
    out, arg = _flat_argmax(win)
    kd, kh, kw = td.shape[1], th.shape[1], tw.shape[1]
    i_d, i_h, i_w = np.unravel_index(arg, (kd, kh, kw))
    z, y, x = (np.arange(o).reshape([-1 if a == axis else 1 for a in range(3)]) for axis, o in enumerate(out_size))
    plane_index = (td[z, i_d] * sizes[1] + th[y, i_h]) * sizes[2] + tw[x, i_w]
    return _record_max(AdaptiveMaxPool3DBackward0, input, out, plane_index, _restorer(batched))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` (an int, a triple, None keeps that size): ``(N, C, D, H, W) ->
    (N, C, *output_size)``; ``return_indices`` also gives each maximum's flat position in its ``D·H·W`` volume."""
    result, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (result, indices) if return_indices else result


class MaxUnpool3DBackward0(MaxUnpool2DBackward0):
    """out = zeros with out.flat[indices] = x (per volume);  dx = grad.flat[indices]"""


@autocast_entry
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``: each value of ``input`` placed at its ``indices`` (flat positions in
    its ``D·H·W`` volume, as ``max_pool3d(..., return_indices=True)`` gives them) in a zero volume;
    ``(N, C, D, H, W) -> (N, C, Do, Ho, Wo)``."""
    kernel_size = _tuple(kernel_size, 3, "kernel_size")
    stride = kernel_size if stride is None else _tuple(stride, 3, "stride")
    padding = _tuple(padding, 3, "padding")
    out_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    if indices._data.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64")
    if input.dim() not in (4, 5):
        raise RuntimeError("Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({shape_text(input.shape)}) but got indices tensor with shape: "
                           f"{shape_text(indices.shape)}")
    return scatter_unpooled(input, indices, tuple(out_size), MaxUnpool3DBackward0)
