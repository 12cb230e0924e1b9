"""Convolution and pooling (``conv1d``, ``conv2d``, ``max_pool1d/2d``, ``avg_pool1d/2d``, ``adaptive_avg_pool2d``),
forward and backward on NumPy arrays.

Every op here sees its input through one strided *window view* ``(N, C, kh, kw, Ho, Wo)`` of the padded
input (``_windows``): no data is copied to make it, and no Python loop runs per output pixel.

* convolution = im2col + one matrix product per group: the window view is copied once into the column
  matrix ``(C·kh·kw, N·Ho·Wo)`` and multiplied by the weight ``(O, C·kh·kw)``. The backward pass multiplies
  the gradient by the saved columns (weight gradient) and by the weight (column gradient), then folds the
  columns back onto the input (``_col2im``: one strided add per kernel offset, kh·kw of them).
* pooling reduces the window view over its kernel axes (max / mean); max pooling keeps the argmax so the
  backward pass can route each gradient to its input position.

1-D ops are the 2-D ones on a height-1 image. The rules compute on arrays only: a double backward
(``create_graph=True``) through these ops raises instead of silently giving wrong second derivatives.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...core.dtype import scalar_name
from ...core.node import Node
from ...core.record import record, wants_grad
from ...core.tensor import Tensor
from ._array_rules import arrays_only

__all__ = ["conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d"]

def _tuple(value, n, name="argument"):
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return tuple(int(value[0]) for _ in range(n))
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _out_size(size, pad_total, kernel, stride, dilation, ceil_mode=False, pad_left=0):
    """Output length along one axis (PyTorch's formula, ceil_mode included)."""
    span = size + pad_total - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + pad_left:       # the last window must start inside the input or left pad
            out -= 1
        return out
    return span // stride + 1


def _pad(array, pads, value=0):
    """Pad the last two axes by ``pads = ((top, bottom), (left, right))``."""
    (pt, pb), (pl, pr) = pads
    if not (pt or pb or pl or pr):
        return array
    n, c, h, w = array.shape
    out = np.full((n, c, h + pt + pb, w + pl + pr), value, dtype=array.dtype)
    out[:, :, pt:pt + h, pl:pl + w] = array
    return out


def _windows(xp, kernel, stride, dilation, out_hw):
    """The strided view ``(N, C, kh, kw, Ho, Wo)``: ``view[n, c, i, j, y, x] = xp[n, c, y·sh + i·dh, x·sw + j·dw]``."""
    sn, sc, sh, sw = xp.strides
    return as_strided(xp, shape=xp.shape[:2] + tuple(kernel) + tuple(out_hw),
                      strides=(sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
                      writeable=False)


def _col2im(dwin, padded_shape, stride, dilation):
    """The reverse of ``_windows``: sum window gradients ``(N, C, kh, kw, Ho, Wo)`` back onto the padded input."""
    out = np.zeros(padded_shape, dtype=dwin.dtype)
    kh, kw, ho, wo = dwin.shape[2:]
    for i in range(kh):
        y0 = i * dilation[0]
        for j in range(kw):
            x0 = j * dilation[1]
            out[:, :, y0:y0 + stride[0] * (ho - 1) + 1:stride[0], x0:x0 + stride[1] * (wo - 1) + 1:stride[1]] += \
                dwin[:, :, i, j]
    return out


def _as_4d(input, n_spatial, name):
    """The input array as ``(N, C, H, W)`` and a function taking results back to the input's layout."""
    xa = input._data
    batched_dims = n_spatial + 2
    if xa.ndim not in (batched_dims - 1, batched_dims):
        raise RuntimeError(f"Expected {batched_dims - 1}D (unbatched) or {batched_dims}D (batched) input to {name}, "
                           f"but got input of size: {list(xa.shape)}")
    unbatched = xa.ndim == batched_dims - 1
    if unbatched:
        xa = xa[None]
    if n_spatial == 1:
        xa = xa[:, :, None, :]

    def restore(out):
        if n_spatial == 1:
            out = out[:, :, 0, :]
        return out[0] if unbatched else out
    return xa, restore


# --- convolution ---------------------------------------------------------------------------------------

class ConvolutionBackward0(Node):
    """out = conv(x, w) + b;  dw = grad · colsᵀ;  dx = col2im(wᵀ · grad);  db = Σ grad"""
    formula = "∂conv/∂w = grad ⋆ x,  ∂conv/∂x = grad ⋆ flip(w) (transposed convolution)"

    def backward(self, ops, grad):
        arrays_only(ops, "convolution")
        x_shape, w_shape, spatial_1d = self.x_shape, self.w_shape, self.spatial_1d
        g = grad
        if spatial_1d:
            g = g[:, :, None, :]
        n, o, ho, wo = g.shape
        groups = self.groups
        # (G, O/G, N·Ho·Wo): the gradient laid out like the forward product's result
        g2 = np.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(groups, o // groups, n * ho * wo)
        edges = self.next_functions
        dx = dw = db = None
        # the weight, and the im2col columns of the input (None when the weight needs no gradient): both are
        # saved values, so the engine frees them after backward like any other
        w, cols = self.saved(ops)
        if edges[0][0] is not None:
            w2 = w.reshape(groups, o // groups, -1)
            dcols = np.matmul(w2.transpose(0, 2, 1), g2)
            c = self.padded_shape[1]
            kh, kw = self.kernel
            dwin = dcols.reshape(c, kh, kw, n, ho, wo).transpose(3, 0, 1, 2, 4, 5)
            dxp = _col2im(dwin, self.padded_shape, self.stride, self.dilation)
            (pt, _), (pl, _) = self.pads
            h, wid = self.hw
            dx = dxp[:, :, pt:pt + h, pl:pl + wid].reshape(x_shape)
        if edges[1][0] is not None:
            dw = np.matmul(g2, cols.transpose(0, 2, 1)).reshape(w_shape)
        if len(edges) > 2 and edges[2][0] is not None:
            db = g.sum(axis=(0, 2, 3))
        return dx, dw, db


def _conv(input, weight, bias, stride, padding, dilation, groups, n_spatial):
    name = f"conv{n_spatial}d"
    xa, restore = _as_4d(input, n_spatial, name)
    wa = weight._data
    if wa.ndim != n_spatial + 2:
        raise RuntimeError("weight should have at least three dimensions" if wa.ndim < 3 else
                           f"Expected {n_spatial + 2}-dimensional weight for {n_spatial + 2}-dimensional input "
                           f"{list(input.shape)}, but got {wa.ndim}-dimensional weight of size {list(wa.shape)} "
                           "instead")
    if input._data.ndim == n_spatial + 1:
        # An unbatched input: PyTorch convolves a batch of one and records the unsqueeze and squeeze
        return _conv(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, n_spatial).squeeze(0)
    if n_spatial == 1:
        wa = wa[:, :, None, :]
    if xa.dtype != wa.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(xa.dtype)} but found "
                           f"{scalar_name(wa.dtype)}")
    n, c, h, w = xa.shape
    o, cg, kh, kw = wa.shape
    if cg * groups != c:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {cg * groups} channels, but got {c} channels instead")
    if o % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size {list(weight.shape)} instead")
    if n_spatial == 1:
        stride, dilation = (1, _tuple(stride, 1, "stride")[0]), (1, _tuple(dilation, 1, "dilation")[0])
    else:
        stride, dilation = _tuple(stride, 2, "stride"), _tuple(dilation, 2, "dilation")
    kernel = (kh, kw)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0), (0, 0))
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for d, k in zip(dilation, kernel))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        p = (0,) + _tuple(padding, 1, "padding") if n_spatial == 1 else _tuple(padding, 2, "padding")
        pads = ((p[0], p[0]), (p[1], p[1]))
    ho = _out_size(h, sum(pads[0]), kh, stride[0], dilation[0])
    wo = _out_size(w, sum(pads[1]), kw, stride[1], dilation[1])
    if ho <= 0 or wo <= 0:
        ph, pw = h + sum(pads[0]), w + sum(pads[1])
        sizes = f"({pw})" if n_spatial == 1 else f"({ph} x {pw})"
        ks = f"({dilation[1] * (kw - 1) + 1})" if n_spatial == 1 else \
            f"({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1})"
        raise RuntimeError(f"Calculated padded input size per channel: {sizes}. Kernel size: {ks}. Kernel size "
                           "can't be greater than actual input size")

    xp = _pad(xa, pads)
    win = _windows(xp, kernel, stride, dilation, (ho, wo))
    # im2col: the one copy, laid out (G, C/G·kh·kw, N·Ho·Wo) for the product with the weight
    cols = np.ascontiguousarray(win.transpose(1, 2, 3, 0, 4, 5)).reshape(groups, cg * kh * kw, n * ho * wo)
    out = np.matmul(wa.reshape(groups, o // groups, cg * kh * kw), cols)
    result = np.empty((n, o, ho, wo), dtype=xa.dtype)
    out4 = out.reshape(o, n, ho, wo).transpose(1, 0, 2, 3)
    if bias is not None:
        np.add(out4, bias._data[:, None, None], out=result)
    else:
        result[...] = out4
    result = Tensor._make(restore(result))
    inputs = (input, weight) if bias is None else (input, weight, bias)
    if wants_grad(*inputs):
        record(ConvolutionBackward0, inputs, result, saved=(weight, cols if weight._requires_grad else None),
               x_shape=input._data.shape, w_shape=weight._data.shape, spatial_1d=n_spatial == 1,
               groups=groups, kernel=kernel, stride=stride,
               dilation=dilation, pads=pads, hw=(h, w), padded_shape=xp.shape)
    return result


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation. ``input (N, C, H, W)`` or ``(C, H, W)``, ``weight (O, C/groups, kh, kw)``,
    ``bias (O,)``; ``padding`` an int, a pair, ``'valid'`` or ``'same'``. Output ``(N, O, Ho, Wo)``."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation. ``input (N, C, L)`` or ``(C, L)``, ``weight (O, C/groups, k)``. Output ``(N, O, Lo)``."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


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


class MaxPool2DWithIndicesBackward0(Node):
    """out = max over each window;  dx[argmax] += grad"""
    formula = "∂max/∂x = 1 at the window's maximum, 0 elsewhere"

    def backward(self, ops, grad):
        arrays_only(ops, "max_pool")
        g = grad.reshape(self.flat_index.shape)
        if self.overlapping:
            dx = np.bincount(self.flat_index.ravel(), weights=g.ravel(), minlength=self.size).astype(g.dtype)
        else:                       # every input element lies in at most one window: plain scatter
            dx = np.zeros(self.size, dtype=g.dtype)
            dx[self.flat_index.ravel()] = g.ravel()
        return (dx.reshape(self.x_shape),)


def _window_argmax(win):
    """The maximum over the kernel axes of ``win`` and its flat kernel offset, as PyTorch's kernel finds them
    (the first of equal maxima; a NaN wins, the last NaN if there are several), by passes over output-sized
    views (no copy of the windows)."""
    kh, kw = win.shape[2:4]
    views = [win[:, :, k // kw, k % kw] for k in range(kh * kw)]
    out = views[0].copy()
    for value in views[1:]:
        np.maximum(out, value, out=out)
    if out.dtype.kind == "f" and np.isnan(out).any():
        return _window_argmax_nan(views)
    # The offset of the first view equal to the maximum: start from the last offset and, going backwards,
    # move to each offset whose value equals the maximum. Arithmetic on small integers, with no branch per
    # element (np.copyto(..., where=) mispredicts on random data and costs several times more).
    small = np.int8 if len(views) < 127 else np.int64
    arg = np.full(out.shape, len(views) - 1, dtype=small)
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
    lowest = -np.inf if xa.dtype.kind == "f" else np.iinfo(xa.dtype).min
    xp = _pad(xa, pads, lowest)
    win = _windows(xp, kernel, stride, dil, (ho, wo))
    kh, kw = kernel
    out, arg = _window_argmax(win)
    # The input position (in the unpadded image) of each maximum: where its window starts, plus the offset
    # of kernel element `arg` within the image (one small table, looked up once per output).
    window_start = ((np.arange(ho) * stride[0] - pad[0])[:, None] * w + (np.arange(wo) * stride[1] - pad[1])[None, :])
    offsets = ((np.arange(kh) * dil[0])[:, None] * w + (np.arange(kw) * dil[1])[None, :]).ravel()
    indices = offsets[arg] + window_start
    result = Tensor._make(restore(out))
    if wants_grad(input):
        base = (np.arange(n * c) * (h * w)).reshape(n, c, 1, 1)
        overlapping = any(s < d * (k - 1) + 1 for s, d, k in zip(stride, dil, kernel))
        record(MaxPool2DWithIndicesBackward0, (input,), result, flat_index=base + indices, size=n * c * h * w,
               x_shape=input._data.shape, overlapping=overlapping)
    indices = Tensor._make(restore(indices.astype(np.int64)))
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


class AvgPool2DBackward0(Node):
    """out = Σ window / divisor;  dx[window] += grad / divisor"""
    formula = "∂mean/∂x = 1/divisor for each element of the window"

    def backward(self, ops, grad):
        arrays_only(ops, "avg_pool")
        g = grad.reshape(self.out_shape) / self.divisor
        n, c, ho, wo = g.shape
        kh, kw = self.kernel
        dwin = np.broadcast_to(g[:, :, None, None], (n, c, kh, kw, ho, wo))
        dxp = _col2im(dwin, self.padded_shape, self.stride, (1, 1))
        (pt, _), (pl, _) = self.pads
        h, w = self.hw
        return (dxp[:, :, pt:pt + h, pl:pl + w].reshape(self.x_shape),)


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
    xp = _pad(xa, pads)
    win = _windows(xp, kernel, stride, (1, 1), (ho, wo))
    total = win.sum(axis=(2, 3))
    if divisor_override:
        divisor = np.asarray(divisor_override, dtype=xa.dtype)
    else:
        dh = _avg_divisor(h, ho, kernel[0], stride[0], pad[0], count_include_pad)
        dw = _avg_divisor(w, wo, kernel[1], stride[1], pad[1], count_include_pad)
        divisor = (dh[:, None] * dw[None, :]).astype(xa.dtype)
    result = Tensor._make(restore(total / divisor))
    if wants_grad(input):
        record(AvgPool2DBackward0, (input,), result, divisor=divisor, kernel=kernel, stride=stride, pads=pads,
               hw=(h, w), padded_shape=xp.shape, out_shape=(n, c, ho, wo), x_shape=input._data.shape)
    return result.squeeze(-2) if n_spatial == 1 else result


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each ``kernel_size`` window: ``(N, C, H, W) -> (N, C, Ho, Wo)``."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The mean of each window along the last axis: ``(N, C, L) -> (N, C, Lo)`` (the 2-D pool over height 1)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


class AdaptiveAvgPool2DBackward0(Node):
    """out = A_h · x · A_wᵀ (A: the window-averaging matrices);  dx = A_hᵀ · grad · A_w"""
    formula = "∂mean/∂x = 1/window size for each element of the window"

    def backward(self, ops, grad):
        arrays_only(ops, "adaptive_avg_pool")
        g = grad.reshape(self.out_shape)
        dx = np.matmul(np.matmul(self.a_h.T, g), self.a_w)
        return (dx.reshape(self.x_shape),)


def _averaging_matrix(size, out, dtype):
    """``(out, size)``: row i averages the input range [floor(i·size/out), ceil((i+1)·size/out))."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    cols = np.arange(size)
    inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


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
    if xa.dtype.kind not in "fc":
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for \'{scalar_name(xa.dtype)}\'')
    a_h = _averaging_matrix(h, out_hw[0], xa.dtype)
    a_w = _averaging_matrix(w, out_hw[1], xa.dtype)
    result = Tensor._make(restore(np.matmul(np.matmul(a_h, xa), a_w.T)))
    if wants_grad(input):
        record(AdaptiveAvgPool2DBackward0, (input,), result, a_h=a_h, a_w=a_w, out_shape=(n, c) + out_hw,
               x_shape=input._data.shape)
    return result.squeeze(-2) if n_spatial == 1 else result


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed ``output_size`` (an int, a pair, None keeps that size): ``(N, C, H, W) ->
    (N, C, *output_size)``. Window i along an axis covers [floor(i·size/out), ceil((i+1)·size/out))."""
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed length: ``(N, C, L) -> (N, C, output_size)``."""
    return _adaptive_avg_pool(input, output_size, 1)
