"""Lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and
``LazyInstanceNorm1d/2d/3d``, whose input size (``in_features``, ``in_channels``, ``num_features``) is read off the
first input they see, and the placeholders they hold until then, ``UninitializedParameter`` and
``UninitializedBuffer``.

As in PyTorch: a forward pre-hook runs ``initialize_parameters(input)`` on the first call, which gives each
placeholder its shape (``materialize``) and draws the initial values with the layer's own ``reset_parameters``
(so a lazy layer and the plain one made with the same seed hold the same values); then the layer becomes the plain
layer (``cls_to_become``: a ``LazyLinear`` is a ``Linear`` from then on).

Intended differences from PyTorch: a placeholder refuses only ``shape`` and ``materialize``-free arithmetic is not
intercepted (PyTorch raises on most ops with an uninitialized tensor; here they see an empty tensor), and loading a
state dict into a layer that has not seen an input is not supported (run one input first).
"""
import numpy as np

from ...core.creation import empty
from ...core.grad_mode import no_grad
from ...core.tensor import Tensor
from ..parameter import Parameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _NormBase
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


# --- the placeholders ---------------------------------------------------------------------------------------------

class _Uninitialized:
    """What both placeholders share: no shape until ``materialize(shape)``, which gives them an (uninitialized)
    array of that shape and turns them into ``cls_to_become``."""

    cls_to_become: type

    def materialize(self, shape, device=None, dtype=None):
        """Give the placeholder ``shape`` (its values are set by the layer's ``reset_parameters`` next)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = np.empty(shape, dtype=self._data.dtype) if dtype is None else empty(shape, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (a lazy layer's weight before its first input); ``materialize``
    makes it a ``Parameter``."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, empty(0, dtype=dtype), requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (a lazy norm layer's running statistics); ``materialize`` makes it a
    plain Tensor."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        buffer = cls._make(empty(0, dtype=dtype)._data)
        buffer.requires_grad = requires_grad
        return buffer


def _is_lazy(value):
    return isinstance(value, _Uninitialized)


# --- the mixin ----------------------------------------------------------------------------------------------------

class LazyModuleMixin:
    """A layer that completes itself on its first input: ``initialize_parameters(*inputs)`` (the layer's own)
    materializes its placeholders, then the layer becomes ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _apply(self, fn, recurse=True):
        # ``.double()``, ``.to(...)``: a placeholder buffer stays a placeholder of the new dtype, as in PyTorch
        # (Module._apply replaces each buffer by fn's result, a plain Tensor)
        waiting = [name for name, b in self._buffers.items() if isinstance(b, UninitializedBuffer)]
        result = super()._apply(fn, recurse)
        for name in waiting:
            if self._buffers[name] is not None and not isinstance(self._buffers[name], UninitializedBuffer):
                self._buffers[name].__class__ = UninitializedBuffer
        return result

    def has_uninitialized_params(self):
        """Whether a parameter or buffer is still a placeholder."""
        return any(_is_lazy(v) for v in [*self._parameters.values(), *self._buffers.values()])

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the placeholders from the first input (each lazy layer says how)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


# --- Linear -------------------------------------------------------------------------------------------------------

class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last size of its first input: ``(*, in) -> (*, out_features)``."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


# --- convolutions -------------------------------------------------------------------------------------------------

class _LazyConvMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is the channel size of its first input."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        spatial = len(self.kernel_size)
        if input.dim() not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: torch.Size({list(input.shape)})")
        return input.shape[1] if input.dim() == spatial + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(conv_cls, n_spatial):
    """The lazy form of a convolution layer: ``LazyConv{n}d(out_channels, kernel_size, ...)``, the plain
    layer's arguments without ``in_channels``."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        conv_cls.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                          device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    doc = (f"``Conv{n_spatial}d`` whose ``in_channels`` is read off the first input "
           f"(its channel dim).")
    return type(f"LazyConv{n_spatial}d", (_LazyConvMixin, conv_cls),
                {"__init__": __init__, "cls_to_become": conv_cls, "__doc__": doc, "__module__": __name__})


def _lazy_conv_transpose(conv_cls, n_spatial):
    """The lazy form of a transposed convolution layer (``output_padding`` before ``groups``, as the plain one)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        conv_cls.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                          padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    doc = (f"``ConvTranspose{n_spatial}d`` whose ``in_channels`` is read off the first input "
           f"(its channel dim).")
    return type(f"LazyConvTranspose{n_spatial}d", (_LazyConvMixin, conv_cls),
                {"__init__": __init__, "cls_to_become": conv_cls, "__doc__": doc, "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, 3)


# --- normalization ------------------------------------------------------------------------------------------------

class _LazyNormMixin(LazyModuleMixin):
    """A norm layer whose ``num_features`` is ``input.shape[1]`` of its first input (PyTorch's choice, for the
    instance norms' unbatched inputs too)."""

    def _lazy_init(self, affine, track_running_stats, device, dtype):
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = Tensor._make(np.zeros((), dtype=np.int64))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(norm_cls):
    """The lazy form of a batch or instance norm layer: the plain layer's arguments without ``num_features``
    (affine and running statistics on by default for both kinds, as in PyTorch)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        _NormBase.__init__(self, 0, eps, momentum, False, False, device=device, dtype=dtype)
        self._lazy_init(affine, track_running_stats, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    doc = f"``{norm_cls.__name__}`` whose ``num_features`` is read off the first input (``input.shape[1]``)."
    return type(f"Lazy{norm_cls.__name__}", (_LazyNormMixin, norm_cls),
                {"__init__": __init__, "cls_to_become": norm_cls, "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
