"""Functions PyTorch keeps for old programs, with the deprecation warnings it gives: ``torch.range`` (an
inclusive ``arange``) and ``torch.set_default_tensor_type``."""
import math
import warnings

from .core import dtype as dt
from .core.creation import arange

__all__ = ["range", "set_default_tensor_type"]

_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).")


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The values ``start, start + step, ...`` up to and *including* ``end``, in the default float dtype unless
    ``dtype`` says otherwise (deprecated in PyTorch for ``arange``, which excludes ``end``)."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(_RANGE_WARNING, UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    count = math.floor((end - start) / step) + 1
    if count < 0 or not math.isfinite(count):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    dtype = dtype or dt.get_default_dtype()
    values = arange(count, dtype=dt.float64) * step + start
    result = values.to(dtype)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result.requires_grad_(requires_grad) if requires_grad else result


_TENSOR_TYPES = {"FloatTensor": dt.float32, "DoubleTensor": dt.float64, "HalfTensor": dt.float16,
                 "BFloat16Tensor": dt.bfloat16}


_warned: list = []


def set_default_tensor_type(t):
    """Deprecated: the default dtype from a tensor type (``torch.DoubleTensor`` or ``'torch.DoubleTensor'``);
    only floating types may be the default, as in PyTorch."""
    if not _warned:             # once per process, as PyTorch's C++ warning is
        _warned.append(True)
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                      "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                      stacklevel=2)
    name = t if isinstance(t, str) else f"torch.{getattr(t, '__name__', t)}"
    short = name.rsplit(".", 1)[-1]
    if not name.startswith("torch.") or (short not in _TENSOR_TYPES and not short.endswith("Tensor")):
        raise TypeError(f"invalid type: '{name}'")
    if short not in _TENSOR_TYPES:
        raise TypeError("only floating-point types are supported as the default type")
    dt.set_default_dtype(_TENSOR_TYPES[short])
