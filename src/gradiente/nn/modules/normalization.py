"""Per-sample normalization: ``LayerNorm``, ``GroupNorm`` and ``RMSNorm`` (with a learned elementwise affine
map), and ``LocalResponseNorm`` (across neighbouring channels). Batch and instance norms, which keep running
statistics, are in ``batchnorm`` and ``instancenorm``."""
import numbers

from ...core.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"]


def _affine_parameters(module, shape, affine, bias, dtype, device):
    """Register ``weight`` and ``bias`` of ``shape`` (or None for either), as normalization layers do; they are
    set to 1 and 0 by ``_reset_affine``."""
    if affine:
        module.weight = Parameter(empty(shape, dtype=dtype, device=device))
        if bias:
            module.bias = Parameter(empty(shape, dtype=dtype, device=device))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    """``reset_parameters`` of the normalization layers: the affine map starts as the identity. RMSNorm has no
    ``bias`` at all, as in PyTorch."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)


def _set_normalized_shape(module, normalized_shape, eps, elementwise_affine):
    """Store LayerNorm's and RMSNorm's shared settings; ``normalized_shape`` may be one int, for the last dim."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    module.normalized_shape = tuple(normalized_shape)
    module.eps = eps
    module.elementwise_affine = elementwise_affine


class LayerNorm(Module):
    """Normalizes over the last dims (``normalized_shape``) of each sample; ``weight`` starts at 1, ``bias``
    at 0."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        _set_normalized_shape(self, normalized_shape, eps, elementwise_affine)
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    reset_parameters = _reset_affine

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class GroupNorm(Module):
    """Normalizes each group of ``num_channels / num_groups`` channels of each sample."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype, device)
        self.reset_parameters()

    reset_parameters = _reset_affine

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class _ChannelWindowNorm(Module):
    """What the two local response normalisations share (``LocalResponseNorm`` and the legacy ``CrossMapLRN2d``):
    their arguments, x / (k + α/size · Σ x²)^β over ``size`` neighbouring channels, and their repr."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LocalResponseNorm(_ChannelWindowNorm):
    """Divides each element by ``(k + alpha·mean of x² over size neighbouring channels)^beta``."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class RMSNorm(Module):
    """Scales the last dims (``normalized_shape``) of each sample to unit root mean square, then by ``weight``
    (which starts at 1)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        _set_normalized_shape(self, normalized_shape, eps, elementwise_affine)
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    reset_parameters = _reset_affine

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
