"""Convolution layers: ``Conv1d/2d/3d`` (learned cross-correlations) and ``ConvTranspose1d/2d/3d`` (their adjoints).
See ``ops.nn.convolution`` for the computation."""
from ...core.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

# the names of the functions a layer runs, by its number of spatial dims. A layer finds them in F at each call,
# as PyTorch's layers call torch.nn.functional: while vmap runs, F holds batching versions of its functions,
# which a function bound here at import would bypass
_CONVOLUTIONS = {1: "conv1d", 2: "conv2d", 3: "conv3d"}
_TRANSPOSED_CONVOLUTIONS = {1: "conv_transpose1d", 2: "conv_transpose2d", 3: "conv_transpose3d"}


class _ConvNd(Module):
    """A convolution layer. Its weight is ``(out_channels, in_channels/groups, *kernel_size)``, or for a
    ``transposed`` one ``(in_channels, out_channels/groups, *kernel_size)`` (the transpose), as PyTorch's; both
    are initialized as PyTorch's, the fan-in read from the weight's dim 1 either way."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            self.weight = Parameter(empty((in_channels, out_channels // groups, *kernel_size), dtype=dtype,
                                          device=device))
        else:
            self.weight = Parameter(empty((out_channels, in_channels // groups, *kernel_size), dtype=dtype,
                                          device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._default_layer_init(self.weight, self.bias)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _conv_forward(self, input, weight, bias):
        conv = getattr(F, _CONVOLUTIONS[len(self.kernel_size)])
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution: ``(N, C_in, L) -> (N, C_out, L_out)``; weight ``(C_out, C_in/groups, k)``, initialized
    as PyTorch's (the same numbers for the same seed)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride),
                         padding if isinstance(padding, str) else _single(padding), _single(dilation), False,
                         _single(0), groups, bias, padding_mode, device=device, dtype=dtype)


class Conv2d(_ConvNd):
    """2-D convolution: ``(N, C_in, H, W) -> (N, C_out, H_out, W_out)``; weight ``(C_out, C_in/groups, kh, kw)``,
    initialized as PyTorch's (the same numbers for the same seed)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride),
                         padding if isinstance(padding, str) else _pair(padding), _pair(dilation), False, _pair(0),
                         groups, bias, padding_mode, device=device, dtype=dtype)


class Conv3d(_ConvNd):
    """3-D convolution: ``(N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)``; weight
    ``(C_out, C_in/groups, kd, kh, kw)``, initialized as PyTorch's."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride),
                         padding if isinstance(padding, str) else _triple(padding), _triple(dilation), False,
                         _triple(0), groups, bias, padding_mode, device=device, dtype=dtype)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer: a ``_ConvNd`` with ``transposed=True``, whose ``forward`` takes an
    optional ``output_size``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device=device, dtype=dtype)

    def _output_padding(self, input, output_size):
        """The ``output_padding`` giving ``output_size`` (which may include the batch and channel sizes), among
        the ``stride`` output sizes the input allows."""
        if output_size is None:
            return self.output_padding
        spatial = len(self.kernel_size)
        leading = input.dim() - spatial
        if len(output_size) == leading + spatial:
            output_size = output_size[leading:]
        if len(output_size) != spatial:
            raise ValueError(f"ConvTranspose{spatial}D: for {input.dim()}D input, output_size must have {spatial} "
                             f"or {leading + spatial} elements (got {len(output_size)})")
        smallest = [(input.shape[leading + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(spatial)]
        largest = [low + s - 1 for low, s in zip(smallest, self.stride)]
        for size, low, high in zip(output_size, smallest, largest):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                                 f"to {largest} (for an input of {input.shape[2:]})")
        return tuple(size - low for size, low in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        conv = getattr(F, _TRANSPOSED_CONVOLUTIONS[len(self.kernel_size)])
        return conv(input, self.weight, self.bias, self.stride, self.padding, self._output_padding(input, output_size),
                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution: ``(N, C_in, L) -> (N, C_out, L_out)``, ``L_out = (L - 1)·stride - 2·padding +
    dilation·(k - 1) + output_padding + 1``; weight ``(C_in, C_out/groups, k)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride), _single(padding),
                         _single(dilation), True, _single(output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution: ``(N, C_in, H, W) -> (N, C_out, H_out, W_out)``; weight
    ``(C_in, C_out/groups, kh, kw)``. ``forward(input, output_size)`` picks the output padding that gives
    ``output_size``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride), _pair(padding),
                         _pair(dilation), True, _pair(output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution: ``(N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)``; weight
    ``(C_in, C_out/groups, kd, kh, kw)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride), _triple(padding),
                         _triple(dilation), True, _triple(output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)
