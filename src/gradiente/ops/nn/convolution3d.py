"""3-D convolution, ``conv3d``: the depth axis folded into the batch, ``nn._conv``'s 2-D windows run once per
kernel depth offset, recorded as PyTorch's ``ConvolutionBackward0``."""
import numpy as np

from .convolution import _col2im, _out_size, _tuple, _windows
from .convolution_core import _check_weight, _convolve, _from_groups, _spread, _unbatched, _weight_adjoint

__all__ = ["conv3d"]


class _Conv3d:
    """A 3-D convolution ``x (N, C, D, H, W) -> y (N, O, Do, Ho, Wo)``, weight ``(O, C/G, kd, kh, kw)``. The 2-D
    windows serve it: kernel depth offset ``a`` reads the depth slices ``a·dd + z·sd`` of the padded input,
    which, with depth folded into the batch, is a 2-D image batch ``(N·Do, C, H, W)``."""

    def __init__(self, x_shape, w_shape, out_size, groups, stride, pads, dilation):
        self.x_shape, self.w_shape, self.out_size = x_shape, w_shape, out_size
        self.groups, self.stride, self.dilation, self.pads = groups, stride, dilation, pads
        self.padded_shape = x_shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x_shape[2:], pads))

    def _depth_slices(self, a):
        """The padded-input depth positions kernel offset ``a`` reads, one per output depth."""
        start = a * self.dilation[0]
        return slice(start, start + self.stride[0] * (self.out_size[0] - 1) + 1, self.stride[0])

    def _columns(self, xp):
        """im2col over all three kernel axes: ``(G, C/G·kd·kh·kw, N·Do·Ho·Wo)``."""
        n, c = xp.shape[:2]
        do, ho, wo = self.out_size
        kd, kh, kw = self.w_shape[2:]
        cols = np.empty((c, kd, kh, kw, n, do, ho, wo), dtype=xp.dtype)
        for a in range(kd):
            slab = np.ascontiguousarray(xp[:, :, self._depth_slices(a)].transpose(0, 2, 1, 3, 4))
            win = _windows(slab.reshape(n * do, c, *slab.shape[3:]), (kh, kw), self.stride[1:], self.dilation[1:],
                           (ho, wo))
            cols[:, a] = win.reshape(n, do, c, kh, kw, ho, wo).transpose(2, 3, 4, 0, 1, 5, 6)
        return cols.reshape(self.groups, -1, n * do * ho * wo)

    def _padded(self, x):
        return np.pad(x, ((0, 0), (0, 0)) + tuple(self.pads))

    def forward(self, x, w):
        o = w.shape[0]
        product = np.matmul(w.reshape(self.groups, o // self.groups, -1), self._columns(self._padded(x)))
        return _from_groups(product, x.shape[0], self.out_size)

    def input_grad(self, grad, w):
        n, c = self.x_shape[:2]
        do, ho, wo = self.out_size
        spread = _spread(grad, w, self.groups)          # (N, C, kd, kh, kw, Do, Ho, Wo)
        dxp = np.zeros(self.padded_shape, dtype=grad.dtype)
        for a in range(w.shape[2]):
            windows = spread[:, :, a].transpose(0, 4, 1, 2, 3, 5, 6).reshape(n * do, c, *w.shape[3:], ho, wo)
            slab = _col2im(windows, (n * do, c) + self.padded_shape[3:], self.stride[1:], self.dilation[1:])
            dxp[:, :, self._depth_slices(a)] += slab.reshape(n, do, c, *slab.shape[2:]).transpose(0, 2, 1, 3, 4)
        (d0, _), (h0, _), (w0, _) = self.pads
        d, h, wid = self.x_shape[2:]
        return dxp[:, :, d0:d0 + d, h0:h0 + h, w0:w0 + wid]

    def weight_grad(self, grad, x):
        return _weight_adjoint(grad, self._columns(self._padded(x)), self.groups).reshape(self.w_shape)


def _conv3d_pads(padding, kernel, stride, dilation):
    """``((front, back), (top, bottom), (left, right))`` from an int, a triple, ``'valid'`` or ``'same'``."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * 3
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for d, k in zip(dilation, kernel))
    return tuple((p, p) for p in _tuple(padding, 3, "padding"))


def _conv3d(input, weight, bias, stride, padding, dilation, groups, n_spatial=3):
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: "
                           f"{list(input.shape)}")
    if input.dim() == 4:
        return _unbatched(_conv3d, input, n_spatial, weight, bias, stride, padding, dilation, groups)
    _check_weight(input, weight, groups, transposed=False)
    stride, dilation = _tuple(stride, 3, "stride"), _tuple(dilation, 3, "dilation")
    kernel = tuple(weight.shape[2:])
    pads = _conv3d_pads(padding, kernel, stride, dilation)
    out_size = tuple(_out_size(size, lo + hi, k, s, d)
                     for size, (lo, hi), k, s, d in zip(input.shape[2:], pads, kernel, stride, dilation))
    if min(out_size) <= 0:
        padded = " x ".join(str(size + lo + hi) for size, (lo, hi) in zip(input.shape[2:], pads))
        spans = " x ".join(str(d * (k - 1) + 1) for d, k in zip(dilation, kernel))
        raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({spans}). Kernel "
                           "size can't be greater than actual input size")
    conv = _Conv3d(input._data.shape, weight._data.shape, out_size, groups, stride, pads, dilation)
    return _convolve(conv, input, weight, bias)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation. ``input (N, C, D, H, W)`` or ``(C, D, H, W)``, ``weight (O, C/groups, kd, kh, kw)``,
    ``bias (O,)``; ``padding`` an int, a triple, ``'valid'`` or ``'same'``. Output ``(N, O, Do, Ho, Wo)``."""
    return _conv3d(input, weight, bias, stride, padding, dilation, groups)
