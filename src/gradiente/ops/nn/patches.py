"""Ops that move whole blocks of pixels: ``pixel_shuffle``/``pixel_unshuffle`` (channels to r×r blocks and back)
and ``unfold``/``fold`` (im2col/col2im: sliding blocks to columns and back). Each is linear in its input and
recorded with its adjoint (see ``linear_maps``)."""
import numpy as np

from ._common import scalar_name
from .convolution import _col2im, _pad, _windows
from .linear_maps import _node_pair, linear_op

__all__ = ["fold", "pixel_shuffle", "pixel_unshuffle", "unfold"]

PixelShuffleBackward0, PixelUnshuffleBackward0 = _node_pair(
    "PixelShuffleBackward0", "PixelUnshuffleBackward0", "a permutation of the elements;  dx = grad permuted back",
    __name__)
Im2ColBackward0, Col2ImBackward0 = _node_pair(
    "Im2ColBackward0", "Col2ImBackward0", "im2col copies each window to a column;  col2im sums columns back",
    __name__)


# --- pixel_shuffle, pixel_unshuffle -------------------------------------------------------------------------

def _shuffle_array(a, r):
    """(*, C·r², H, W) -> (*, C, H·r, W·r): channel c·r² + i·r + j becomes pixel (h·r + i, w·r + j) of channel c."""
    *lead, c, h, w = a.shape
    blocks = a.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    order = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    # np.array copies even when the permutation is the identity (r = 1): the result never aliases the input
    return np.array(blocks.transpose(order), order="C").reshape(*lead, c // (r * r), h * r, w * r)


def _unshuffle_array(a, r):
    """The inverse of ``_shuffle_array``: (*, C, H·r, W·r) -> (*, C·r², H, W)."""
    *lead, c, h, w = a.shape
    blocks = a.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    order = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return np.array(blocks.transpose(order), order="C").reshape(*lead, c * r * r, h // r, w // r)


def _check_factor(name, factor, what):
    if not isinstance(factor, (int, np.integer)) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{what}' (position 2) must be int, not {type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _check_at_least_3d(name, input):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           "dimension(s)")


def pixel_shuffle(input, upscale_factor):
    """Rearrange ``(*, C·r², H, W)`` into ``(*, C, H·r, W·r)`` (r = ``upscale_factor``): each group of r²
    channels becomes an r×r block of pixels (sub-pixel convolution)."""
    _check_factor("pixel_shuffle", upscale_factor, "upscale_factor")
    _check_at_least_3d("pixel_shuffle", input)
    r = int(upscale_factor)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return linear_op(input, lambda a: _shuffle_array(a, r), lambda g: _unshuffle_array(g, r), PixelShuffleBackward0)


def pixel_unshuffle(input, downscale_factor):
    """The inverse of ``pixel_shuffle``: ``(*, C, H·r, W·r)`` -> ``(*, C·r², H, W)``."""
    _check_factor("pixel_unshuffle", downscale_factor, "downscale_factor")
    _check_at_least_3d("pixel_unshuffle", input)
    r = int(downscale_factor)
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                               f"input.size({dim})={input.shape[dim]} is not divisible by {r}")
    return linear_op(input, lambda a: _unshuffle_array(a, r), lambda g: _shuffle_array(g, r),
                     PixelUnshuffleBackward0)


# --- unfold (im2col), fold (col2im) -------------------------------------------------------------------------

def _pair(value, name):
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
        return tuple(int(v) for v in value)
    return (int(value), int(value))


def _block_geometry(kernel_size, dilation, padding, stride):
    """The four pairs, checked as PyTorch's im2col and col2im check them."""
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    for what, (a, b), names, bad in (
            ("kernel size", kernel, ("kernel_height", "kernel_width"), lambda v: v <= 0),
            ("stride", stride, ("stride_height", "stride_width"), lambda v: v <= 0),
            ("dilation", dilation, ("dilation_height", "dilation_width"), lambda v: v <= 0),
            ("padding", padding, ("pad_height", "pad_width"), lambda v: v < 0)):
        if bad(a) or bad(b):
            rule = "be non-negative" if what == "padding" else "be greater than zero"
            raise RuntimeError(f"{what} should {rule}, but got {names[0]}: {a} {names[1]}: {b}")
    return kernel, dilation, padding, stride


def _blocks(size, kernel, dilation, padding, stride):
    """How many positions a kernel takes along each axis (floor division, as PyTorch's messages show)."""
    return tuple((s + 2 * p - (d * (k - 1) + 1)) // st + 1
                 for s, k, d, p, st in zip(size, kernel, dilation, padding, stride))


def _check_block_dtype(a, kernel):
    if a.dtype.kind in "iu":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a.dtype)}\'')


def _im2col_array(a, kernel, dilation, padding, stride, blocks):
    """(N, C, H, W) -> (N, C·kh·kw, L): each block's window as a column, channels first, then kernel rows."""
    n, c = a.shape[:2]
    win = _windows(_pad(a, ((padding[0],) * 2, (padding[1],) * 2)), kernel, stride, dilation, blocks)
    cols = np.empty((n, c * kernel[0] * kernel[1], blocks[0] * blocks[1]), dtype=a.dtype)
    cols.reshape(win.shape)[...] = win          # always a copy: the window view may alias the input
    return cols


def _col2im_array(cols, size, kernel, dilation, padding, stride, blocks):
    """(N, C·kh·kw, L) -> (N, C, H, W): the sum of every column put back where its window lies."""
    n, ckk = cols.shape[:2]
    kh, kw = kernel
    windows = cols.reshape(n, ckk // (kh * kw), kh, kw, *blocks)
    (ph, pw), (h, w) = padding, size
    padded = _col2im(windows, (n, ckk // (kh * kw), h + 2 * ph, w + 2 * pw), stride, dilation)
    return np.ascontiguousarray(padded[:, :, ph:ph + h, pw:pw + w])


def _unbatched(fn):
    """``fn`` on a batch of arrays, also taking (and giving back) a single one without the batch axis."""
    def apply(a, batched_dims):
        return fn(a) if a.ndim == batched_dims else fn(a[None])[0]
    return apply


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: ``(N, C, H, W)`` -> ``(N, C·kh·kw, L)``, each column one sliding ``kernel_size`` block (its
    values channel by channel, row by row); L = the number of blocks. ``(C, H, W)`` input gives
    ``(C·kh·kw, L)``."""
    kernel, dilation, padding, stride = _block_geometry(kernel_size, dilation, padding, stride)
    shape = list(input.shape)
    if input.dim() < 3:
        for dim in (1, 2):
            if dim >= input.dim():
                if input.dim() == 0:
                    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
                raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                                 f"{input.dim() - 1}], but got {dim})")
    if input.dim() not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {shape}")
    size = tuple(shape[-2:])
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, but its "
                           "components must be at least one.")
    _check_block_dtype(input._data, "im2col_out_cpu")
    geometry = (kernel, dilation, padding, stride, blocks)
    im2col = _unbatched(lambda a: _im2col_array(a, *geometry))
    col2im = _unbatched(lambda g: _col2im_array(g, size, *geometry))
    return linear_op(input, lambda a: im2col(a, 4), lambda g: col2im(g, 3), Im2ColBackward0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, the adjoint of ``unfold``: ``(N, C·kh·kw, L)`` -> ``(N, C, *output_size)``, each column added
    onto its block (overlapping blocks sum). ``(C·kh·kw, L)`` input gives ``(C, *output_size)``."""
    size = _pair(output_size, "output_size")
    kernel, dilation, padding, stride = _block_geometry(kernel_size, dilation, padding, stride)
    shape = list(input.shape)
    if input.dim() not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {shape}")
    kk = kernel[0] * kernel[1]
    if shape[-2] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size={kernel}.")
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"stride={stride}, expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={shape[-1]}.")
    _check_block_dtype(input._data, "col2im_out_cpu")
    geometry = (kernel, dilation, padding, stride, blocks)
    im2col = _unbatched(lambda g: _im2col_array(g, *geometry))
    col2im = _unbatched(lambda a: _col2im_array(a, size, *geometry))
    return linear_op(input, lambda a: col2im(a, 3), lambda g: im2col(g, 4), Col2ImBackward0)
