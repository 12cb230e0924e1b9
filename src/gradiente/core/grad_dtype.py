"""``Tensor.grad_dtype``: the dtype a leaf's ``.grad`` is kept in (PyTorch 2.13).

By default a leaf's gradient has the leaf's dtype: the engine casts what reaches it, and assigning ``.grad`` of
another dtype is refused. Setting ``grad_dtype`` to another dtype makes the engine cast to that one instead
(a float32 parameter with a float64 gradient), and ``None`` keeps each gradient's own dtype. Only leaves have it.
The setting lives in the tensor's ``__dict__`` (``_grad_dtype``), absent until set, so ordinary tensors pay
nothing; ``rules.accumulate`` and the ``.grad`` setter read it through the two helpers below.
"""
from . import dtype as dt

__all__ = ["get_grad_dtype", "set_grad_dtype", "first_grad_dtype", "check_assigned_grad_dtype"]

_UNSET = object()


def get_grad_dtype(self):
    """The dtype gradients of this leaf are kept in (its own dtype unless set), or None for any."""
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    value = self.__dict__.get("_grad_dtype", _UNSET)
    return self.dtype if value is _UNSET else value


def set_grad_dtype(self, value):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if value is not None and not isinstance(value, dt.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
    self.__dict__["_grad_dtype"] = value


def first_grad_dtype(variable, grad_np_dtype):
    """The NumPy dtype a leaf's first gradient is stored in: the leaf's, its ``grad_dtype``, or the gradient's
    own where ``grad_dtype`` is None."""
    value = variable.__dict__.get("_grad_dtype", _UNSET)
    if value is _UNSET:
        return variable._data.dtype
    return grad_np_dtype if value is None else value._np


def check_assigned_grad_dtype(variable, grad):
    """``x.grad = g``: ``g``'s dtype must be x's ``grad_dtype`` (by default x's dtype) unless that is None."""
    value = variable.__dict__.get("_grad_dtype", _UNSET)
    if value is _UNSET:
        if grad._data.dtype != variable._data.dtype:
            raise RuntimeError("assigned grad has data of a different type")
    elif value is not None and grad._data.dtype != value._np:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{dt.cpp_name(grad._data.dtype)}' to a tensor with "
            f"grad_dtype '{dt.scalar_name(value._np)}'. The gradient must match the tensor's grad_dtype (defaults to "
            "the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or None to "
            "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
            "break downstream systems that assume they match.")
