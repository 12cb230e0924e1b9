"""float32 2-d convolutions added in the order of oneDNN's kernels, which PyTorch's CPU ``conv2d`` runs, so that a
CNN's outputs, gradients and printed losses round as PyTorch's do.

A convolution sums, for each output, products over input channels and kernel taps; the order of that sum decides
the last bits, and a training run amplifies them (yunjey's CNN tutorial printed losses that differed in their third
decimal). Measured against torch 2.13 (AVX-512 build, one thread) on kernels of 2x2 to 5x5 taps, with padding and
strides (``tests/test_kernel_order.py``), oneDNN adds:

* **forward**: the input channels in blocks of 16; within a block, for each tap (row by row) the block's channels,
  one after another from zero; the bias is added to the first block's sum, and each next block's sum to that;
* **input gradient**: the same with the output channels in blocks of 16 and the taps in the weight's order (the
  gradient is a convolution with the flipped kernel, whose taps it walks backwards); with a stride, all output
  channels in one chain over the taps, except where the stride divides the input's width: then one chain per
  column tap (over its row taps and the channels), the chains added in the taps' order;
* **weight gradient**: one chain over every image, row and column of the output, in that order;
* **bias gradient**: the same chain of additions.

Every chain is a product whose outputs add their terms in order of k (``blas_order.chained``). 1x1 kernels take
other oneDNN kernels, in an order not known here; they keep the plain products.
"""
import numpy as np

from .blas_order import chained

__all__ = ["follows_onednn", "forward", "input_gradient", "weight_gradient", "bias_gradient"]

_CHANNEL_BLOCK = 16


def follows_onednn(x, w, groups, dilation, n_spatial, transposed):
    """Whether this convolution is one that PyTorch hands to oneDNN and whose order is known here: float32, 2-d,
    one group, no dilation, not transposed, a kernel of more than one tap, nothing empty.

    PyTorch keeps a small convolution for its own kernel (im2col and a product per image): one with a kernel
    of at most 3 taps along some dim, applied to a single image of at most 20,480 values. Those keep the plain
    products too."""
    small_kernel = w.ndim == 4 and (w.shape[2] <= 3 or w.shape[3] <= 3)
    if small_kernel and x.shape[0] == 1 and x.size <= 20480:
        return False
    return (n_spatial == 2 and x.size > 0 and w.size > 0 and not transposed and groups == 1
            and x.dtype == np.float32 and w.dtype == np.float32 and all(d == 1 for d in dilation)
            and w.shape[2] * w.shape[3] > 1)


def _tap_windows(xp, kernel, stride, out_size):
    """The padded input ``(N, C, H, W)`` seen as ``(kh, kw, C, N, OH, OW)``: for each tap, the input values it
    multiplies at every output position (a strided view, no copy)."""
    n, c, _, _ = xp.shape
    s0, s1, s2, s3 = xp.strides
    return np.lib.stride_tricks.as_strided(
        xp, (kernel[0], kernel[1], c, n, out_size[0], out_size[1]),
        (s2, s3, s1, s0, s2 * stride[0], s3 * stride[1]), writeable=False)


def forward(xp, w, bias, stride, out_size):
    """conv2d of the padded input ``xp`` with ``w (O, C, kh, kw)``, plus ``bias`` (or None): ``(N, O, OH, OW)``."""
    o, c, kh, kw = w.shape
    n = xp.shape[0]
    windows = _tap_windows(xp, (kh, kw), stride, out_size)
    parts = []
    for start in range(0, c, _CHANNEL_BLOCK):
        block = slice(start, min(c, start + _CHANNEL_BLOCK))
        columns = windows[:, :, block].reshape(-1, n * out_size[0] * out_size[1])     # (taps·channels, positions)
        weights = w[:, block].transpose(0, 2, 3, 1).reshape(o, -1)                    # the same order of k
        parts.append(chained(weights, columns))
    total = parts[0] if bias is None else parts[0] + bias[:, None]
    for part in parts[1:]:
        total += part
    return total.reshape(o, n, *out_size).transpose(1, 0, 2, 3)


def input_gradient(grad, w, stride, pads, x_size):
    """The gradient of the input ``(N, C, H, W)`` from the output's gradient ``(N, O, OH, OW)``; ``pads`` as
    ((top, bottom), (left, right))."""
    n, o, oh, ow = grad.shape
    _, c, kh, kw = w.shape
    # the output gradient spread to stride 1 (zeros between: they add nothing) and framed by kh-1, kw-1 zeros, so
    # that the padded input's gradient at (y, x) is Σ over taps (i, j) of framed[y + kh-1-i, x + kw-1-j]·w[i, j]
    spread_h, spread_w = (oh - 1) * stride[0] + 1, (ow - 1) * stride[1] + 1
    padded_h, padded_w = x_size[0] + sum(pads[0]), x_size[1] + sum(pads[1])
    framed = np.zeros((n, o, padded_h + kh - 1, padded_w + kw - 1), grad.dtype)
    framed[:, :, kh - 1:kh - 1 + spread_h:stride[0], kw - 1:kw - 1 + spread_w:stride[1]] = grad
    # only the rows and columns of the unpadded input are computed
    framed = framed[:, :, pads[0][0]:pads[0][0] + x_size[0] + kh - 1, pads[1][0]:pads[1][0] + x_size[1] + kw - 1]
    flipped = np.ascontiguousarray(framed)[:, :, ::-1, ::-1]    # tap i reads row kh-1-i: walk the taps forwards
    windows = _tap_windows(flipped, (kh, kw), (1, 1), x_size)   # (kh, kw, O, N, H', W'), rows reversed
    # (with a stride, oneDNN's kernel takes every output channel in one chain per tap: measured equal on padded
    # inputs, and on most values of unpadded ones)
    positions = n * x_size[0] * x_size[1]
    if stride[1] > 1 and x_size[1] % stride[1] == 0:
        # an input whose width the stride divides: one chain per column tap (its rows' taps, then the channels),
        # the chains added in the taps' order (measured: widths 8 to 16, kernels 3 to 5, stride 2)
        parts = [chained(w[:, :, :, j].transpose(1, 2, 0).reshape(c, -1), windows[:, j].reshape(-1, positions))
                 for j in range(kw)]
    else:
        channel_block = _CHANNEL_BLOCK if tuple(stride) == (1, 1) else o
        parts = [chained(w[block].transpose(1, 2, 3, 0).reshape(c, -1), windows[:, :, block].reshape(-1, positions))
                 for block in (slice(start, min(o, start + channel_block)) for start in range(0, o, channel_block))]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total.reshape(c, n, *x_size)[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)


def weight_gradient(grad, xp, kernel, stride):
    """The weight's gradient ``(O, C, kh, kw)``: one chain over the batch and the output positions."""
    o, oh, ow = grad.shape[1:]
    c = xp.shape[1]
    windows = _tap_windows(xp, kernel, stride, (oh, ow))            # (kh, kw, C, N, OH, OW)
    columns = windows.transpose(2, 0, 1, 3, 4, 5).reshape(c * kernel[0] * kernel[1], -1)
    rows = grad.transpose(1, 0, 2, 3).reshape(o, -1)
    return chained(rows, columns.T).reshape(o, c, *kernel)


def bias_gradient(grad):
    """The bias's gradient: each output channel's values added in order, image by image, row by row. (NumPy adds
    the rows of an array in order when it reduces along its first axis.)"""
    o = grad.shape[1]
    return np.add.reduce(grad.transpose(0, 2, 3, 1).reshape(-1, o), axis=0)
