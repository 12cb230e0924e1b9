"""Transposed convolution ("deconvolution"), 1-D and 2-D: ``conv_transpose1d``, ``conv_transpose2d``.

A transposed convolution is the adjoint of a convolution: its forward pass is a convolution's input gradient
(a matrix product with the weight, then ``_col2im``), and its input gradient is a convolution of the incoming
gradient (``_windows``, then a matrix product). Both reuse ``nn._conv``'s strided windows; PyTorch records it
as ``ConvolutionBackward0``, as any convolution. A 1-D one is the 2-D one over height 1, as in ``nn._conv``.
"""
from .convolution import _as_4d, _col2im, _pad, _tuple
from .convolution_core import _check_weight, _columns, _convolve, _correlate, _spread, _unbatched, _weight_adjoint

__all__ = ["conv_transpose1d", "conv_transpose2d"]


class _Transposed2d:
    """A 2-D transposed convolution ``x (N, Ci, H, W) -> y (N, Co, Ho, Wo)``, weight ``(Ci, Co/G, kh, kw)``; a
    1-D one is this over height 1 (its arrays are reshaped on the way in and out). Its forward map is the
    input adjoint of the convolution ``y -> x`` with the same weight, and its input adjoint is that
    convolution."""

    def __init__(self, x_shape, w_shape, out_hw, groups, stride, padding, dilation):
        n, _, h, w = x_shape if len(x_shape) == 4 else (x_shape[0], x_shape[1], 1, x_shape[2])
        self.x_shape, self.w_shape, self.in_hw = x_shape, w_shape, (h, w)
        self.kernel = w_shape[2:] if len(w_shape) == 4 else (1, w_shape[2])
        self.out_shape = (n, w_shape[1] * groups) + tuple(out_hw)
        self.groups, self.stride, self.dilation = groups, stride, dilation
        self.pads = ((padding[0], padding[0]), (padding[1], padding[1]))
        self.padded_shape = self.out_shape[:2] + tuple(s + 2 * p for s, p in zip(out_hw, padding))
        self.one_d = len(x_shape) == 3

    def forward(self, x, w):
        spread = _spread(x.reshape(self.out_shape[:1] + (-1,) + self.in_hw), w.reshape(self.w_shape[:2] + self.kernel),
                         self.groups)
        padded = _col2im(spread, self.padded_shape, self.stride, self.dilation)
        (pt, _), (pl, _) = self.pads
        ho, wo = self.out_shape[2:]
        out = padded[:, :, pt:pt + ho, pl:pl + wo]
        return out[:, :, 0] if self.one_d else out

    def input_grad(self, grad, w):
        gp = _pad(grad.reshape(self.out_shape), self.pads)
        dx = _correlate(gp, w.reshape(self.w_shape[:2] + self.kernel), self.stride, self.dilation, self.in_hw,
                        self.groups)
        return dx.reshape(self.x_shape)

    def weight_grad(self, grad, x):
        gp = _pad(grad.reshape(self.out_shape), self.pads)
        cols = _columns(gp, self.kernel, self.stride, self.dilation, self.in_hw, self.groups)
        x4 = x.reshape(self.out_shape[:1] + (-1,) + self.in_hw)
        return _weight_adjoint(x4, cols, self.groups).reshape(self.w_shape)


def _spatial_pairs(n_spatial, stride, padding, output_padding, dilation):
    """The four geometry arguments as pairs for the 2-D kernel (a 1-D op is the 2-D one over height 1)."""
    if n_spatial == 1:
        return ((1, _tuple(stride, 1, "stride")[0]), (0, _tuple(padding, 1, "padding")[0]),
                (0, _tuple(output_padding, 1, "output_padding")[0]), (1, _tuple(dilation, 1, "dilation")[0]))
    return (_tuple(stride, 2, "stride"), _tuple(padding, 2, "padding"),
            _tuple(output_padding, 2, "output_padding"), _tuple(dilation, 2, "dilation"))


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n_spatial):
    name = f"conv_transpose{n_spatial}d"
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    _as_4d(input, n_spatial, name)                      # checks the rank, with this op's name
    if input.dim() == n_spatial + 1:
        return _unbatched(_conv_transpose, input, n_spatial, weight, bias, stride, padding, output_padding, groups,
                          dilation)
    stride, padding, output_padding, dilation = _spatial_pairs(n_spatial, stride, padding, output_padding, dilation)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_height: {output_padding[0]} output_padding_width: {output_padding[1]} "
                           f"stride_height: {stride[0]} stride_width: {stride[1]} dilation_height: {dilation[0]} "
                           f"dilation_width: {dilation[1]}")
    _check_weight(input, weight, groups, transposed=True)
    out_channels = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    in_hw = (1,) * (2 - n_spatial) + tuple(input.shape[2:])
    kernel = (1,) * (2 - n_spatial) + tuple(weight.shape[2:])
    out_hw = tuple((size - 1) * s - 2 * p + d * (k - 1) + op + 1
                   for size, s, p, d, k, op in zip(in_hw, stride, padding, dilation, kernel, output_padding))
    if min(out_hw) <= 0:
        raise RuntimeError(f"Given input size per channel: ({in_hw[0]} x {in_hw[1]}). Calculated output size per "
                           f"channel: ({out_hw[0]} x {out_hw[1]}). Output size is too small")
    conv = _Transposed2d(input._data.shape, weight._data.shape, out_hw, groups, stride, padding, dilation)
    return _convolve(conv, input, weight, bias)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution"): ``input (N, C_in, H, W)`` or ``(C_in, H, W)``, ``weight
    (C_in, C_out/groups, kh, kw)``. Output height ``(H - 1)·stride - 2·padding + dilation·(kh - 1) +
    output_padding + 1``, and likewise the width."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution: ``input (N, C_in, L)`` or ``(C_in, L)``, ``weight (C_in, C_out/groups, k)``."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)
