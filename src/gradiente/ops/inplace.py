"""In-place operations (``add_``, ``x += 1``, ``x[i] = v``, ...), all through one mechanism.

An in-place op computes the out-of-place result, writes its values into the tensor's own memory (so
views and arrays from ``from_numpy`` see the change), bumps the version counter shared with its views,
and, when recorded, makes the result's backward node the tensor's ``grad_fn``. When recording, the op
reads a copy of the old values: the node may need them (``x.mul_(y)`` needs the old ``x`` for ``dy``).
"""
import functools

import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["apply_inplace", "make_inplace"]

_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
_NAMES = {np.dtype(k): v for k, v in [("float32", "Float"), ("float64", "Double"), ("float16", "Half"),
                                      ("int64", "Long"), ("int32", "Int"), ("int16", "Short"),
                                      ("int8", "Char"), ("uint8", "Byte"), ("bool", "Bool"),
                                      ("complex64", "ComplexFloat"), ("complex128", "ComplexDouble")]}
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def check_inplace(tensor):
    """The errors PyTorch raises before an in-place change of ``tensor`` that autograd cannot follow."""
    if not grad_mode.state.enabled:
        return False
    if tensor._requires_grad and tensor.grad_fn is None:
        raise RuntimeError(_LEAF_ERROR)
    base = tensor._base
    if base is not None and base._requires_grad and base.grad_fn is None and tensor.__dict__.get("_view_of_graph"):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    return True


def apply_inplace(tensor, compute):
    """Replace ``tensor``'s values by ``compute(old)`` (a function returning a new tensor) in place."""
    recording = check_inplace(tensor)
    if recording:
        old = Tensor._make(tensor._data.copy(), tensor._requires_grad)
        old.grad_fn, old._output_nr, old._accumulator = tensor.grad_fn, tensor._output_nr, tensor._accumulator
        with grad_mode.set_grad_enabled(True):
            result = compute(old)
        recording = result._requires_grad
        if recording and tensor._base is not None and tensor.__dict__.get("_view_of_graph"):
            raise RuntimeError("gradiente does not yet record in-place changes of a view of a tensor that requires "
                               "grad; apply the operation out of place (y = y.op(...)) instead.")
    else:
        with grad_mode.no_grad():
            result = compute(tensor)
    _write(tensor, result._data)
    if recording:
        tensor.grad_fn, tensor._output_nr, tensor._requires_grad = result.grad_fn, result._output_nr, True
        tensor._accumulator = None
        _adopt_saved_output(tensor, result)
    return tensor


def _adopt_saved_output(tensor, result):
    """A node that saved its output (``exp_`` keeps exp(x)) now saves ``tensor``, which holds those values:
    the same memory and version counter, so a later in-place change of ``tensor`` is caught at backward,
    as in PyTorch, instead of the node silently keeping an outdated copy."""
    from ..autograd.graph import _SavedOutput
    for item in result.grad_fn._saved or ():
        if type(item) is _SavedOutput and item.version_box is result._version_box:
            item.array, item.version_box, item.version = tensor._data, tensor._version_box, tensor._version_box[0]


def _write(tensor, values):
    target = tensor._data
    if values.dtype != target.dtype and _KIND_ORDER[values.dtype.kind] > _KIND_ORDER[target.dtype.kind]:
        raise RuntimeError(f"result type {_NAMES[values.dtype]} can't be cast to the desired output type "
                           f"{_NAMES[target.dtype]}")
    if values.shape != target.shape:
        try:
            shape = np.broadcast_shapes(values.shape, target.shape)
        except ValueError:
            shape = None
        if shape != target.shape:
            raise RuntimeError(f"output with shape [{', '.join(map(str, target.shape))}] doesn't match the broadcast "
                               f"shape [{', '.join(map(str, shape or values.shape))}]")
    if not target.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    np.copyto(target, values, casting="unsafe")
    tensor._version_box[0] += 1


def make_inplace(fn, name):
    """``x.name_(...)``: the in-place form of the out-of-place op ``fn``."""
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return apply_inplace(self, lambda old: fn(old, *args, **kwargs))
    method.__name__ = method.__qualname__ = name
    return method


#: in-place arithmetic that NumPy can do directly in the tensor's memory when nothing is recorded
_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def _augmented(op_name, ufunc=None):
    def method(self, other, **kwargs):
        if ufunc is not None and not kwargs and _direct(self, other):
            # The optimizer pattern `p -= lr * p.grad` under no_grad: compute straight into p's memory.
            ufunc(self._data, other._data if isinstance(other, Tensor) else other, out=self._data)
            self._version_box[0] += 1
            return self
        from . import elementwise
        fn = getattr(elementwise, op_name)
        return apply_inplace(self, lambda old: fn(old, other, **kwargs))
    method.__name__ = method.__qualname__ = op_name + "_"
    return method


def _direct(tensor, other):
    """Whether ``tensor op= other`` can run as one NumPy ufunc with ``out=``: nothing to record, the
    same floating dtype (or a Python number), and no broadcasting of the target."""
    a = tensor._data
    if a.dtype.kind != "f" or not a.flags.writeable:
        return False
    if grad_mode.state.enabled and (tensor._requires_grad or getattr(other, "_requires_grad", False)):
        return False
    if isinstance(other, Tensor):
        b = other._data
        return b.dtype == a.dtype and (b.shape == a.shape or np.broadcast_shapes(a.shape, b.shape) == a.shape) \
            and not np.shares_memory(a, b) if b.ndim else b.dtype == a.dtype
    return other.__class__ is float or other.__class__ is int


for _dunder, _op in [("__iadd__", "add"), ("__isub__", "sub"), ("__imul__", "mul"), ("__itruediv__", "div"),
                     ("__ipow__", "pow"), ("__ifloordiv__", "floor_divide"), ("__imod__", "remainder")]:
    setattr(Tensor, _dunder, _augmented(_op, _UFUNCS.get(_op)))


def _install_arith():
    from . import elementwise as e
    for n in ("add", "sub", "mul", "div", "pow", "floor_divide", "remainder", "fmod", "neg", "reciprocal",
              "square", "subtract", "multiply", "divide", "true_divide", "negative", "float_power"):
        setattr(Tensor, n + "_", _augmented(n, _UFUNCS[n]) if n in _UFUNCS else make_inplace(getattr(e, n), n + "_"))


_install_arith()
