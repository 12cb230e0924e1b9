"""Activation layers: each calls its function in ``nn.functional`` and prints its arguments as PyTorch does."""
import warnings

from ...core.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Threshold", "ReLU", "ReLU6", "Hardtanh", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU", "SiLU",
           "Mish", "Sigmoid", "Tanh", "LogSigmoid", "Hardsigmoid", "Hardswish", "Softplus", "Softsign",
           "Tanhshrink", "Softshrink", "Hardshrink", "GLU", "Softmax", "Softmin", "LogSoftmax", "Softmax2d"]


def _inplace(module, lead=""):
    """``"inplace=True"`` (after ``lead``) when the module works in place, else nothing."""
    return lead + "inplace=True" if module.inplace else ""


class _InplaceActivation(Module):
    """An activation whose only argument is ``inplace``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace(self)


class ReLU(_InplaceActivation):
    """``max(0, x)``"""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)``"""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``"""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class SELU(_InplaceActivation):
    """``scale * elu(x, alpha)`` with the self-normalizing constants"""

    def forward(self, input):
        return F.selu(input, self.inplace)


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6``"""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6``"""

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class Threshold(Module):
    """``x if x > threshold else value``"""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace(self, ', ')}"


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``"""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self, ', ')}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``"""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace(self)


class LeakyReLU(Module):
    """``x if x >= 0 else negative_slope * x``"""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace(self, ', ')}"


class PReLU(Module):
    """``x if x >= 0 else a * x`` with ``a`` learned (one per channel, or one shared), initialized to ``init``."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _AlphaActivation(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace(self, ', ')}"


class ELU(_AlphaActivation):
    """``x if x > 0 else alpha * (exp(x) - 1)``"""

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaActivation):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``"""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """``x * Φ(x)`` (``approximate='tanh'``: the tanh approximation)"""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``"""

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """``tanh(x)``"""

    def forward(self, input):
        return input.tanh()


class LogSigmoid(Module):
    """``log(sigmoid(x))``"""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``"""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``"""

    def forward(self, input):
        return F.tanhshrink(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``"""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class _Shrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(_Shrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between"""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """``x`` outside ``[-lambd, lambd]``, 0 inside"""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class _DimActivation(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class GLU(_DimActivation):
    """``a * sigmoid(b)`` where ``a, b`` are the two halves of the input along ``dim``"""

    def __init__(self, dim=-1):
        super().__init__(dim)

    def forward(self, input):
        return F.glu(input, self.dim)


# The implicit-dim warning of a softmax module names a line of module.py, once per process: PyTorch's
# ``_stacklevel=5`` climbs through forward, ``_call_impl`` and ``_wrapped_call_impl``; gradiente's
# ``Module.__call__`` is ``_call_impl`` itself, one frame fewer.
_SOFTMAX_STACKLEVEL = 4


class Softmax(_DimActivation):
    """``exp(x) / sum(exp(x))`` along ``dim``"""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=_SOFTMAX_STACKLEVEL)


class Softmin(_DimActivation):
    """``softmax(-x)`` along ``dim``"""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=_SOFTMAX_STACKLEVEL)


class LogSoftmax(_DimActivation):
    """``log(softmax(x))`` along ``dim``, computed stably"""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=_SOFTMAX_STACKLEVEL)


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` input"""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=_SOFTMAX_STACKLEVEL)
