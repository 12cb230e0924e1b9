"""Conversions between dtypes: ``x.to(...)``, ``x.type(...)``, ``x.type_as(y)`` and the one-word forms
``x.float()``, ``x.long()``, ... Each converts through ``cast`` (``arithmetic.py``), which records
``ToCopyBackward0`` between floating dtypes, as PyTorch does.
"""
import numpy as np

from ..core import dtype as dt
from ..core import layouts
from ..core.creation import _check_dtype, _finish, _infer_array, tensortype
from ..core.device import COPY, as_device, check_device
from ..core.meta import NO_DATA, is_meta, meta_array
from ..core.tensor import Tensor, device
from .arithmetic import cast

__all__ = ["as_tensor", "asarray", "to", "tensor_type", "type_as"]


def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``; returns self when nothing
    changes, as PyTorch does."""
    target = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    dev = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, dt.dtype):
            target = a
        elif isinstance(a, Tensor):
            target = a.dtype
        elif isinstance(a, (str, device, int)) and not isinstance(a, bool):
            dev = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    if dev is not None:
        dev = as_device(dev, "to")
        to_meta = check_device(dev, "to", COPY)
        if to_meta != is_meta(self._data):
            if not to_meta:
                raise NotImplementedError(NO_DATA)
            # to the meta device: PyTorch's copy (ToCopyBackward0), which keeps the shape and dtype alone
            moved = cast(self, target or self.dtype)
            moved._data = meta_array(moved._data.shape, moved._data.dtype)
            return moved
        # PyTorch's tensors live on device('cpu'), whose index is None: asked for 'cpu:0', it copies
        copy = copy or dev.index is not None
    relaid = memory_format is not None and layouts.changes_layout(self._data, memory_format)
    if target is None or target is self.dtype:
        # (a copy, or a new layout, is still aten::_to_copy)
        return cast(self, self.dtype, memory_format) if copy or relaid else self
    return cast(self, target, memory_format)


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()``: the legacy type name (``'torch.FloatTensor'``); ``x.type(dtype)``: x converted to it."""
    if dtype is None:
        return "torch." + self.dtype._legacy
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        matches = [d for d in dt.ALL_DTYPES if d._legacy == name]
        if not matches:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = matches[0]
    elif isinstance(dtype, tensortype):         # x.type(torch.FloatTensor)
        dtype = dtype.dtype
    return to(self, dtype)


def type_as(self, other):
    """``x.type_as(y)``: x converted to y's dtype."""
    return to(self, other.dtype)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with ``data`` (an ndarray or tensor) when no conversion is needed."""
    _check_dtype(dtype, "as_tensor")
    if check_device(device, "as_tensor", COPY):
        return to(data if isinstance(data, Tensor) else as_tensor(data, dtype), dtype, device="meta")
    if isinstance(data, Tensor):
        return data if dtype is None or dtype is data.dtype else to(data, dtype)
    arr = _infer_array(data, exact=dtype is not None)
    if dtype is not None and arr.dtype != dtype._np:
        arr = arr.astype(dtype._np)
    elif not isinstance(data, np.ndarray):
        arr = np.array(arr)
    return Tensor._make(arr)



def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory when no conversion is needed (unless ``copy``)."""
    t = as_tensor(obj, dtype=dtype, device=device)
    if copy:
        t = Tensor._make(t._data.copy())
    return _finish(t._data, requires_grad)



def _converter(dtype, name):
    def convert(self):
        return to(self, dtype)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"``x.{name}()``: x converted to ``gradiente.{dtype._name}`` (``x.to({dtype._name})``)."
    return convert


to_float = _converter(dt.float32, "float")
to_double = _converter(dt.float64, "double")
to_half = _converter(dt.float16, "half")
to_bfloat16 = _converter(dt.bfloat16, "bfloat16")
to_long = _converter(dt.int64, "long")
to_int = _converter(dt.int32, "int")
to_short = _converter(dt.int16, "short")
to_char = _converter(dt.int8, "char")
to_byte = _converter(dt.uint8, "byte")
to_bool = _converter(dt.bool, "bool")
