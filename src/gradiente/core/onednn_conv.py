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
other kernels, described with ``pointwise_kernel`` below.
"""
import numpy as np

from . import blas_order
from .blas_order import chained
from .summation import down_in_order, sum_as_torch

__all__ = ["follows_onednn", "forward", "input_gradient", "weight_gradient", "bias_gradient", "pointwise_kernel",
           "OWN", "POINTWISE", "GENERAL", "pointwise_forward", "pointwise_input_gradient", "pointwise_weight_gradient",
           "pointwise_bias_gradient"]

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


# --- 1x1 kernels ------------------------------------------------------------------------------------------------
# A 1x1 convolution is a matrix product per image, and PyTorch (one thread) runs it one of three ways, probed as
# above (FPRev's method) and measured against torch 2.13:
#
# * its own kernel (``slow_conv2d``) when the convolution has stride 1 and fewer than 16 images, or is one small
#   image (PyTorch's rule for 1x1 filters: its own kernel is the faster on one thread). Per image, MKL's products:
#   ``W @ X_i`` added to the bias (an ``addmm``), ``Wᵀ @ G_i`` for the input's gradient, and the weight's gradient
#   ``G_i @ X_iᵀ`` added to the sum of the images before (a product with beta = 1: MKL's blocks of the image's
#   positions, ``blas_order.matmul``); the bias's gradient is ``grad.sum((0, 2, 3))``;
# * oneDNN's 1x1 kernel, for the others whose stride divides the input's height and width: each output one chain
#   from the bias over the input channels in order; each input gradient one chain over the output channels; the
#   weight's gradient image by image, each image one chain over its positions (up to 1225 of them), added to the
#   sum of those before; the bias's gradient one chain over every image and position (``bias_gradient``);
# * oneDNN's general kernel (the functions above) where the stride does not divide the input's size.
#
# Measured for 4 or more input channels without padding (own kernel: with padding too); fewer input channels, and
# padding given to oneDNN, take other steps, not known here: those keep the plain products.
OWN, POINTWISE, GENERAL = "own", "pointwise", "general"


def pointwise_kernel(x, w, groups, dilation, stride, pads):
    """How PyTorch runs this 2-d convolution if it is a 1x1 one whose order is known here: ``OWN``, ``POINTWISE``, or
    ``GENERAL`` (oneDNN's general kernel: ``forward`` and the others above); None otherwise."""
    if not (x.ndim == 4 and w.ndim == 4 and w.shape[2:] == (1, 1) and groups == 1 and x.size and w.size
            and x.dtype == np.float32 and w.dtype == np.float32 and all(d == 1 for d in dilation)
            and x.shape[1] >= 4):
        return None
    strided = any(s != 1 for s in stride)
    if not ((strided or x.shape[0] >= 16) and (x.shape[0] > 1 or x.size > 20480)):
        return OWN
    if any(p != (0, 0) for p in pads):
        return None
    fits = all(size % s == 0 for size, s in zip(x.shape[2:], stride))
    return POINTWISE if fits else GENERAL


def pointwise_forward(columns, w, bias, kernel):
    """The output ``(N, O, P)`` of the input's columns ``(N, C, P)`` (the positions the kernel reads) and the weight
    ``(O, C)``, plus ``bias`` (or None), by ``kernel`` (``OWN`` or ``POINTWISE``)."""
    n, _, p = columns.shape
    if kernel == OWN:
        initial = None if bias is None else np.broadcast_to(bias[:, None], (w.shape[0], p))
        return np.stack([blas_order.matmul(w, image, initial) for image in columns])
    # one chain per output: the bias (times 1) first, then the channels in order, all images at once
    if bias is not None:
        w = np.concatenate([bias[:, None], w], axis=1)
        columns = np.concatenate([np.ones((n, 1, p), columns.dtype), columns], axis=1)
    out = chained(w, columns.transpose(1, 0, 2).reshape(-1, n * p))
    return out.reshape(-1, n, p).transpose(1, 0, 2)


def pointwise_input_gradient(grad, w, kernel):
    """The gradient ``(N, C, P)`` of the columns, from the output's ``(N, O, P)`` and the weight ``(O, C)``."""
    if kernel == OWN:
        return np.stack([blas_order.matmul(w.T, image) for image in grad])
    n, o, p = grad.shape
    return chained(w.T, grad.transpose(1, 0, 2).reshape(o, -1)).reshape(-1, n, p).transpose(1, 0, 2)


def pointwise_weight_gradient(grad, columns, kernel):
    """The weight's gradient ``(O, C)`` from the output's ``(N, O, P)`` and the columns ``(N, C, P)``: image by
    image, each image's product added to the sum of those before."""
    positions = grad.shape[2]
    if kernel == POINTWISE and positions > _ONE_CHAIN_MOST:
        return np.einsum("nop,ncp->oc", grad, columns)      # (blocks not known here: NumPy's product)
    total = None
    for g, x in zip(grad, columns):
        if kernel == OWN:           # (a product with beta = 1: each of MKL's blocks added to the sum so far)
            total = blas_order.matmul(g, x.T, total)
        else:
            product = chained(g, x.T)
            total = product if total is None else total + product
    return total


# oneDNN's 1x1 kernel adds an image's positions in one chain up to this many (measured: 16 to 1225); beyond, it
# splits them into blocks whose sizes were not found to follow a rule (1369 positions take blocks of 37, 1521 one)
_ONE_CHAIN_MOST = 1225


def pointwise_bias_gradient(grad, kernel):
    """The bias's gradient from the output's ``(N, O, H, W)``."""
    return sum_as_torch(grad, (0, 2, 3)) if kernel == OWN else bias_gradient(grad)


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
    """The bias's gradient: each output channel's values added in order, image by image, row by row."""
    o = grad.shape[1]
    return down_in_order(grad.transpose(0, 2, 3, 1).reshape(-1, o))
