"""Pooling: ``max_pool1d/2d``, ``avg_pool1d/2d``, ``adaptive_avg_pool1d/2d``, forward and backward on NumPy arrays.

Pooling sees its input through the strided *window view* ``(N, C, kh, kw, Ho, Wo)`` of the padded input that
convolution uses too (``convolution._windows``): no data is copied to make it, and no Python loop runs per output
pixel. It reduces that view over its kernel axes (max / mean); max pooling keeps the argmax so the backward pass
can route each gradient to its input position.

1-D pooling is the 2-D one on a height-1 image.

Each pooling is linear in its input, out = A x, once its windows (and, for max pooling, the positions of the
maxima, piecewise constant in x) are fixed: a map object holds A on arrays (``forward``) and its adjoint
(``adjoint``), and the node's rule is dx = Aᵀ grad. Under ``create_graph=True`` that gradient is recorded as PyTorch
records it, the output of ``<Pool>BackwardBackward0`` with edges to (grad, x), whose rule is A again (d grad = A ggx;
d x = 0): derivatives of every order follow.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core import layouts
from ...core.creation import c_order
from ...core.dtype import scalar_name
from ...core.meta import is_meta, meta_array
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.tensor import Tensor
from ._array_rules import record_gradients
from .convolution import _check_input_rank, _out_size, _pad, _tuple, _windows

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "max_pool1d_with_indices", "max_pool2d_with_indices"]


def _as_4d(input, n_spatial, name):
    """The input array as ``(N, C, H, W)`` and a function taking results back to the input's layout."""
    _check_input_rank(input, n_spatial, name)
    xa = input._data
    unbatched = xa.ndim == n_spatial + 1
    if unbatched:
        xa = xa[None]
    if n_spatial == 1:
        xa = xa[:, :, None, :]

    def restore(out):
        if n_spatial == 1:
            out = out[:, :, 0, :]
        return out[0] if unbatched else out
    return xa, restore


# --- pooling -------------------------------------------------------------------------------------------

def _pool_geometry(xa, kernel_size, stride, padding, dilation, ceil_mode, n_spatial):
    """Kernel, stride, padding, dilation as pairs, and the output size, with PyTorch's checks."""
    def pair(v, what):
        if n_spatial == 1:
            return (1, _tuple(v, 1, what)[0]) if what != "padding" else (0, _tuple(v, 1, what)[0])
        return _tuple(v, 2, what)
    kernel = pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) else pair(stride,
                                                                                                       "stride")
    pad = pair(padding, "padding")
    dil = pair(dilation, "dilation")
    for p, k in zip(pad, kernel):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation=1")
    h, w = xa.shape[2:]
    out = tuple(_out_size(size, 2 * p, k, s, d, ceil_mode, p) for size, p, k, s, d in zip((h, w), pad, kernel,
                                                                                          stride, dil))
    if out[0] <= 0 or out[1] <= 0:
        raise RuntimeError(f"Given input size: ({xa.shape[1]}x{h}x{w}). Calculated output size: "
                           f"({xa.shape[1]}x{out[0]}x{out[1]}). Output size is too small")
    # ceil_mode windows may run past the right/bottom padding: pad enough to hold every window
    extra = tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - (size + 2 * p))
                  for o, s, d, k, size, p in zip(out, stride, dil, kernel, (h, w), pad))
    pads = ((pad[0], pad[0] + extra[0]), (pad[1], pad[1] + extra[1]))
    return kernel, stride, pad, dil, out, pads


class _PoolBackward(Node):
    """out = A x (A: the pooling, linear in x for fixed windows and maxima);  dx = Aᵀ grad"""
    double: type        # the node of dx under create_graph, ``<Pool>BackwardBackward0``

    def backward(self, ops, grad):
        if ops.recording:
            (x,) = self.saved(ops)
            return record_gradients(self.double, (grad, x), (self.pool.adjoint(grad._data),), pool=self.pool,
                                    first=type(self))
        return (self.pool.adjoint(grad),)


class _PoolBackwardBackward(Node):
    """dx = Aᵀ grad, an op of (grad, x);  d grad = A ggx;  d x = 0 (as PyTorch: A is constant in x where it is
    differentiable)"""
    formula = "∂(Aᵀ grad)/∂grad = Aᵀ, so the gradient's gradient is A applied to it"

    def backward(self, ops, ggx):
        d_x = ops.zeros_like(ggx) if self.next_functions[1][0] is not None else None
        return self.pool.apply(ops, ggx, self.first), d_x


def _pool_pair(name, formula, module=__name__):
    """A pooling's node and the node of its gradient under create_graph, named as PyTorch names them, defined in
    ``module`` (the module whose op records them)."""
    double = type(f"{name}BackwardBackward0", (_PoolBackwardBackward,), {"__doc__": _PoolBackwardBackward.__doc__,
                                                                         "__module__": module})
    node = type(f"{name}Backward0", (_PoolBackward,), {"__doc__": f"{_PoolBackward.__doc__};  {formula}",
                                                       "formula": formula, "double": double, "__module__": module})
    return node, double


MaxPool2DWithIndicesBackward0, MaxPool2DWithIndicesBackwardBackward0 = _pool_pair(
    "MaxPool2DWithIndices", "∂max/∂x = 1 at the window's maximum, 0 elsewhere")
AvgPool2DBackward0, AvgPool2DBackwardBackward0 = _pool_pair(
    "AvgPool2D", "∂mean/∂x = 1/divisor for each element of the window")
AdaptiveAvgPool2DBackward0, AdaptiveAvgPool2DBackwardBackward0 = _pool_pair(
    "AdaptiveAvgPool2D", "∂mean/∂x = 1/window size for each element of the window")


def _pooled(node_cls, pool, input, contiguous=False):
    """``pool.forward`` of the input tensor, recorded as ``node_cls``; with ``contiguous``, in C order (PyTorch's
    avg_pool1d result, whatever the input's layout)."""
    if is_meta(input._data):
        pool = _MetaPoolMap(input._data.shape, pool.y_shape)
    values = pool.forward(input._data)
    # (the result follows a channels-last input's layout, as PyTorch's pooling kernels do; avg_pool1d's never)
    result = wrap(c_order(values) if contiguous else layouts.laid_out(values, layouts.suggested_format(input._data)))
    if wants_grad(input):
        record(node_cls, (input,), result, saved=(input,), pool=pool)
    return result


class _MaxPoolMap:
    """A = the gather of each window's maximum, at its flat position ``flat_index`` in x (fixed by the forward);
    Aᵀ = the scatter of each gradient there, summed where windows overlap."""

    def __init__(self, flat_index, x_shape, y_shape, overlapping):
        self.flat_index, self.x_shape, self.y_shape, self.overlapping = flat_index, x_shape, y_shape, overlapping
        self.size = math.prod(x_shape)

    def apply(self, ops, x, node_cls):
        return ops.reshape(ops.getitem(ops.reshape(x, (-1,)), self.flat_index), self.y_shape)

    def adjoint(self, grad):
        g = grad.reshape(self.flat_index.shape)
        if self.overlapping:
            # each input's gradients added one after another in the outputs' order, in the gradient's dtype, as
            # PyTorch's loop adds them (np.add.at is unbuffered and in order; bincount would add in float64)
            dx = np.zeros(self.size, dtype=g.dtype)
            np.add.at(dx, self.flat_index.ravel(), g.ravel())
        else:                       # every input element lies in at most one window: plain scatter
            dx = np.zeros(self.size, dtype=g.dtype)
            dx[self.flat_index.ravel()] = g.ravel()
        return dx.reshape(self.x_shape)


class _LinearPoolMap:
    """An average pooling, ``forward`` and ``adjoint`` on arrays; ``apply`` the forward on the rule's values
    (recorded as the pooling's node under create_graph)."""

    def apply(self, ops, x, node_cls):
        return _pooled(node_cls, self, x) if ops.recording else self.forward(x)


class _MetaPoolMap(_LinearPoolMap):
    """A pooling of a meta tensor (``core/meta.py``): the shapes of its result and its gradient, no arithmetic."""

    def __init__(self, x_shape, y_shape):
        self.x_shape, self.y_shape = x_shape, y_shape

    def forward(self, x):
        return meta_array(self.y_shape, x.dtype)

    def adjoint(self, grad):
        return meta_array(self.x_shape, grad.dtype)


def _window_argmax(win):
    """The maximum over the kernel axes of ``win`` and its flat kernel offset, as PyTorch's kernel finds them
    (the first of equal maxima; a NaN wins, the last NaN if there are several), by passes over output-sized
    views (no copy of the windows)."""
    kh, kw = win.shape[2:4]
    views = [win[:, :, k // kw, k % kw] for k in range(kh * kw)]
    out = views[0].copy()
    for value in views[1:]:
        np.maximum(out, value, out=out)
    if dt.kind(out.dtype) == "f" and np.isnan(out).any():
        return _window_argmax_nan(views)
    # The offset of the first view equal to the maximum: start from the last offset and, going backwards,
    # move to each offset whose value equals the maximum. Arithmetic on small integers, with no branch per
    # element (np.copyto(..., where=) mispredicts on random data and costs several times more).
    small = np.int8 if len(views) < 127 else np.int64
    arg = np.full_like(out, len(views) - 1, dtype=small, order="C")     # (meta for a meta out: core/meta.py)
    for k in range(len(views) - 2, -1, -1):
        arg -= (arg - small(k)) * (views[k] == out).view(np.int8).astype(small, copy=False)
    return out, arg.astype(np.int64)


def _window_argmax_nan(views):
    """The same with NaNs present: PyTorch's update rule ``val > max || isnan(val)``, one view at a time."""
    out = views[0].copy()
    arg = np.zeros(out.shape, dtype=np.int64)
    better = np.empty(out.shape, dtype=bool)
    for k, value in enumerate(views[1:], start=1):
        np.greater(value, out, out=better)
        better |= np.isnan(value)
        np.copyto(out, value, where=better)
        np.copyto(arg, k, where=better)
    return out, arg


def _as_height_one(input, n_spatial, name):
    """The 4-D array of a pooling input, the tensor to record the 2-D node on, and the function taking
    results back. PyTorch pools 1-D input as 2-D input of height 1 and records it: UnsqueezeBackward0 below
    the 2-D node (and SqueezeBackward1 above it, which the caller adds)."""
    xa, restore = _as_4d(input, n_spatial, name)        # checks the rank, with the 1-D op's name
    if n_spatial == 1:
        input = input.unsqueeze(-2)
        xa, restore = _as_4d(input, 2, name)
    return xa, input, restore


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n_spatial):
    xa, input, restore = _as_height_one(input, n_spatial, f"max_pool{n_spatial}d")
    kernel, stride, pad, dil, (ho, wo), pads = _pool_geometry(xa, kernel_size, stride, padding, dilation,
                                                              ceil_mode, n_spatial)
    n, c, h, w = xa.shape
    if is_meta(xa):         # shapes only (core/meta.py)
        y_shape = restore(meta_array((n, c, ho, wo), xa.dtype)).shape
        result = _pooled(MaxPool2DWithIndicesBackward0, _MetaPoolMap(input._data.shape, y_shape), input)
        indices = Tensor._make(meta_array(y_shape, np.int64))
        if n_spatial == 1:
            result, indices = result.squeeze(-2), indices.squeeze(-2)
        return (result, indices) if return_indices else result
    lowest = -np.inf if dt.kind(xa.dtype) == "f" else np.iinfo(xa.dtype).min
    xp = _pad(xa, pads, lowest)
    win = _windows(xp, kernel, stride, dil, (ho, wo))
    kh, kw = kernel
    out, arg = _window_argmax(win)
    # The input position (in the unpadded image) of each maximum: where its window starts, plus the offset
    # of kernel element `arg` within the image (one small table, looked up once per output).
    window_start = ((np.arange(ho) * stride[0] - pad[0])[:, None] * w + (np.arange(wo) * stride[1] - pad[1])[None, :])
    offsets = ((np.arange(kh) * dil[0])[:, None] * w + (np.arange(kw) * dil[1])[None, :]).ravel()
    indices = offsets[arg] + window_start
    follows = layouts.suggested_format(input._data)          # (a channels-last input: results laid out so)
    result = Tensor._make(layouts.laid_out(restore(out), follows))
    if wants_grad(input):
        base = (np.arange(n * c) * (h * w)).reshape(n, c, 1, 1)
        overlapping = any(s < d * (k - 1) + 1 for s, d, k in zip(stride, dil, kernel))
        pool = _MaxPoolMap(base + indices, input._data.shape, result._data.shape, overlapping)
        record(MaxPool2DWithIndicesBackward0, (input,), result, saved=(input,), pool=pool)
    indices = Tensor._make(layouts.laid_out(restore(indices.astype(np.int64)), follows))
    if n_spatial == 1:
        result, indices = result.squeeze(-2), indices.squeeze(-2)
    return (result, indices) if return_indices else result


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each ``kernel_size`` window. ``(N, C, H, W) -> (N, C, Ho, Wo)``; ``stride`` defaults to
    ``kernel_size``; ``return_indices`` also gives each maximum's flat position in its ``H·W`` plane."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each window along the last axis: ``(N, C, L) -> (N, C, Lo)`` (the 2-D pool over height 1,
    as PyTorch records it)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


class _AvgPoolMap(_LinearPoolMap):
    """A = the sum of each (padded) window over its divisor;  Aᵀ spreads each gradient over its window."""

    def __init__(self, divisor, kernel, stride, pads, x_shape, y_shape):
        self.divisor, self.kernel, self.stride, self.pads = divisor, kernel, stride, pads
        self.x_shape, self.y_shape = x_shape, y_shape
        self.x4 = _four_d(x_shape)
        self.hw = self.x4[2:]
        self.out_shape = self.x4[:2] + y_shape[-2:]
        self.padded_shape = self.x4[:2] + tuple(s + b + a for s, (b, a) in zip(self.hw, pads))

    def forward(self, x):
        win = _windows(_pad(x.reshape(self.x4), self.pads), self.kernel, self.stride, (1, 1), self.out_shape[2:])
        return (_window_sums_in_order(win) / self.divisor).reshape(self.y_shape)

    def adjoint(self, grad):
        g = grad.reshape(self.out_shape) / self.divisor
        ho, wo = g.shape[2:]
        kh, kw = self.kernel
        sh, sw = self.stride
        # PyTorch's kernel adds each output's share into its window, output after output; where windows overlap,
        # an input value so receives its shares in the order of its window offsets from the last to the first
        dxp = np.zeros(self.padded_shape, g.dtype)
        for i in reversed(range(kh)):
            for j in reversed(range(kw)):
                dxp[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw] += g
        (pt, _), (pl, _) = self.pads
        h, w = self.hw
        return dxp[:, :, pt:pt + h, pl:pl + w].reshape(self.x_shape)


def _window_sums_in_order(win):
    """Each window's sum (``win``: (N, C, kh, kw, Ho, Wo)) as PyTorch's pooling kernels add it: from zero, its values
    one after another, row by row (a window view summed by NumPy adds in another order)."""
    kh, kw = win.shape[2:4]
    total = np.zeros(win.shape[:2] + win.shape[4:], win.dtype)
    for i in range(kh):
        for j in range(kw):
            total += win[:, :, i, j]
    return total


def _four_d(shape):
    """A pooling input's shape as ``(N, C, H, W)`` (an unbatched one as a batch of one)."""
    return (1,) * (4 - len(shape)) + tuple(shape)


def _avg_divisor(size, out, kernel, stride, pad, count_include_pad):
    """Per output position along one axis: the window length PyTorch divides by."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    full = end - start
    if count_include_pad:
        return full
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, n_spatial):
    xa, input, restore = _as_height_one(input, n_spatial, f"avg_pool{n_spatial}d")
    kernel, stride, pad, _, (ho, wo), pads = _pool_geometry(xa, kernel_size, stride, padding, 1, ceil_mode,
                                                            n_spatial)
    n, c, h, w = xa.shape
    if divisor_override:
        divisor = np.asanyarray(divisor_override, dtype=xa.dtype)
    else:
        dh = _avg_divisor(h, ho, kernel[0], stride[0], pad[0], count_include_pad)
        dw = _avg_divisor(w, wo, kernel[1], stride[1], pad[1], count_include_pad)
        divisor = (dh[:, None] * dw[None, :]).astype(xa.dtype)
    y_shape = restore(np.empty((n, c, ho, wo), dtype=bool)).shape
    pool = _AvgPoolMap(divisor, kernel, stride, pads, input._data.shape, y_shape)
    result = _pooled(AvgPool2DBackward0, pool, input, contiguous=n_spatial == 1)
    return result.squeeze(-2) if n_spatial == 1 else result


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each ``kernel_size`` window: ``(N, C, H, W) -> (N, C, Ho, Wo)``."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The mean of each window along the last axis: ``(N, C, L) -> (N, C, Lo)`` (the 2-D pool over height 1)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


class _AdaptiveAvgPoolMap(_LinearPoolMap):
    """A x = each window's mean;  Aᵀ grad spreads each output's gradient over its window. As PyTorch's kernel
    computes them: a window's values added from zero, row by row, then divided by its height and by its width
    (two roundings); the gradient divided so too, and added into the input output by output."""

    def __init__(self, windows_h, windows_w, x_shape, y_shape):
        self.windows_h, self.windows_w, self.x_shape, self.y_shape = windows_h, windows_w, x_shape, y_shape
        self.x4 = _four_d(x_shape)
        self.out_shape = self.x4[:2] + (len(windows_h[0]), len(windows_w[0]))

    def forward(self, x):
        x = x.reshape(self.x4)
        (start_h, size_h), (start_w, size_w) = self.windows_h, self.windows_w
        total = np.zeros(self.out_shape, x.dtype)
        # the windows' r-th row and s-th column, for all windows at once; a window shorter than r adds nothing
        for r in range(size_h.max()):
            rows = np.minimum(start_h + r, self.x4[2] - 1)
            row_inside = (r < size_h)[:, None]
            for c in range(size_w.max()):
                columns = np.minimum(start_w + c, self.x4[3] - 1)
                inside = row_inside & (c < size_w)[None, :]
                total += np.where(inside, x[:, :, rows[:, None], columns[None, :]], x.dtype.type(0))
        return self._divided(total).reshape(self.y_shape)

    def _divided(self, values):
        (_, size_h), (_, size_w) = self.windows_h, self.windows_w
        dtype = values.dtype
        return values / size_h.astype(dtype)[:, None] / size_w.astype(dtype)[None, :]

    def adjoint(self, grad):
        delta = self._divided(grad.reshape(self.out_shape))
        out = np.zeros(self.x4, delta.dtype)
        (start_h, size_h), (start_w, size_w) = self.windows_h, self.windows_w
        for i in range(len(start_h)):
            for j in range(len(start_w)):
                window = out[:, :, start_h[i]:start_h[i] + size_h[i], start_w[j]:start_w[j] + size_w[j]]
                window += delta[:, :, i, j, None, None]
        return out.reshape(self.x_shape)


def _adaptive_windows(size, out):
    """``(start, length)`` of each of the ``out`` windows along an axis of ``size``: window i covers
    [floor(i·size/out), ceil((i+1)·size/out))."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    return start, end - start


def _averaging_matrix(size, out, dtype):
    """``(out, size)``: row i averages the input range of window i (``_adaptive_windows``); the 3-D pooling's."""
    start, length = _adaptive_windows(size, out)
    cols = np.arange(size)
    inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < (start + length)[:, None])
    return (inside / length[:, None]).astype(dtype)


def _adaptive_avg_pool(input, output_size, n_spatial):
    xa, input, restore = _as_height_one(input, n_spatial, f"adaptive_avg_pool{n_spatial}d")
    n, c, h, w = xa.shape
    if n_spatial == 1:
        out_hw = (1, _tuple(output_size, 1, "output_size")[0])
    else:
        sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
        out_hw = tuple(s if o is None else int(o) for o, s in zip(sizes, (h, w)))
    if out_hw == (1, 1):
        # PyTorch takes the mean over both spatial dims (MeanBackward1) for a 1x1 output
        result = input.mean((-1, -2), keepdim=True)
        return result.squeeze(-2) if n_spatial == 1 else result
    if dt.kind(xa.dtype) not in "fc":
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for \'{scalar_name(xa.dtype)}\'')
    windows_h, windows_w = _adaptive_windows(h, out_hw[0]), _adaptive_windows(w, out_hw[1])
    y_shape = restore(np.empty((n, c) + out_hw, dtype=bool)).shape
    result = _pooled(AdaptiveAvgPool2DBackward0, _AdaptiveAvgPoolMap(windows_h, windows_w, input._data.shape, y_shape),
                     input)
    return result.squeeze(-2) if n_spatial == 1 else result


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed ``output_size`` (an int, a pair, None keeps that size): ``(N, C, H, W) ->
    (N, C, *output_size)``. Window i along an axis covers [floor(i·size/out), ceil((i+1)·size/out))."""
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed length: ``(N, C, L) -> (N, C, output_size)``."""
    return _adaptive_avg_pool(input, output_size, 1)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d`` and each maximum's flat position in its ``H·W`` plane (``return_indices`` is ignored, as in
    PyTorch)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool1d`` and each maximum's position along the last axis."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 1)
