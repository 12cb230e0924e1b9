"""Tensor methods that are questions about memory or Python-level element loops, bound by the method table:
``dim_order``, ``is_set_to``, ``apply_``/``map_``/``map2_`` (a Python callable per element, in place, as
PyTorch's CPU tensors allow), ``module_load``, ``new_empty_strided``, ``cdouble``/``cfloat``, and the answers of
attributes PyTorch keeps for old code (``volatile``, ``reinforce``)."""
import warnings

import numpy as np

from .core import dtype as dt
from .core.creation import empty_strided
from .core.layouts import storage_root
from .core.tensor import Tensor
from .ops import views

__all__ = ["dim_order", "is_set_to", "apply_", "map_", "map2_", "module_load", "new_empty_strided", "cdouble",
           "cfloat", "volatile", "reinforce", "is_distributed", "const_data_ptr", "is_nested", "as_subclass", "name",
           "resize", "resize_as"]


def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost in memory to the innermost (by stride, ties kept in dim order)."""
    strides = self._data.strides
    return tuple(sorted(range(self._data.ndim), key=lambda d: -strides[d]))


def is_set_to(self, tensor):
    """True if both tensors view the same memory with the same offset, sizes and strides."""
    a, b = self._data, tensor._data
    return (storage_root(a) is storage_root(b) and self.storage_offset() == tensor.storage_offset()
            and a.shape == b.shape and a.strides == b.strides)


def _elementwise_in_place(self, fn, others):
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    arrays = [np.broadcast_to(o._data, self._data.shape) for o in others]
    flat = self._data.reshape(-1) if self._data.flags.c_contiguous else None
    out = [fn(*values) for values in zip(self._data.reshape(-1).tolist(), *(a.reshape(-1).tolist() for a in arrays))]
    result = np.asarray(out, dtype=self._data.dtype).reshape(self._data.shape)
    if flat is not None:
        flat[...] = result.reshape(-1)
    else:
        self._data[...] = result
    self._version_box[0] += 1
    return self


def apply_(self, callable):
    """Each element replaced by ``callable(element)``, in place (Python numbers in and out; slow, as in PyTorch)."""
    return _elementwise_in_place(self, callable, ())


def map_(self, tensor, callable):
    """Each element replaced by ``callable(element, other_element)``, ``tensor`` broadcast to self, in place."""
    return _elementwise_in_place(self, callable, (tensor,))


def map2_(self, x, y, callable):
    """Each element replaced by ``callable(element, x_element, y_element)``, in place."""
    return _elementwise_in_place(self, callable, (x, y))


def module_load(self, other, assign=False):
    """What ``load_state_dict`` stores for this parameter or buffer when asked to swap: ``other`` detached
    (``assign=True``), else this tensor with ``other`` copied in, detached."""
    if not isinstance(other, Tensor):
        raise RuntimeError(f"Expected other to be a Tensor, but got {type(other)}")
    if assign:
        return other.detach()
    from .core.grad_mode import no_grad
    with no_grad():
        return self.copy_(other).detach()


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    """An uninitialized tensor with the given sizes and strides, this tensor's dtype unless given."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def cdouble(self, memory_format=None):
    """``self.to(torch.complex128)``."""
    return self.to(dt.complex128)


def cfloat(self, memory_format=None):
    """``self.to(torch.complex64)``."""
    return self.to(dt.complex64)


def volatile(self):
    """Always False, with PyTorch's warning: ``volatile`` was replaced by ``torch.no_grad``."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


_REINFORCE = ("reinforce() was removed.\nUse torch.distributions instead.\nSee "
              "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = policy_network(state)\n"
              "action = probs.multinomial()\nnext_state, reward = env.step(action)\naction.reinforce(reward)\n"
              "action.backward()\n\nUse:\n\nprobs = policy_network(state)\n# NOTE: categorical is equivalent to "
              "what used to be called multinomial\nm = torch.distributions.Categorical(probs)\naction = "
              "m.sample()\nnext_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
              "loss.backward()\n")


def reinforce(self, reward):
    """Removed from PyTorch long ago: raises its message, which shows the ``torch.distributions`` way."""
    raise RuntimeError(_REINFORCE)


def is_distributed(self):
    """False: gradiente tensors live in one process."""
    return False


def const_data_ptr(self):
    """The address of the first element (as ``data_ptr``)."""
    return self.data_ptr()


def is_nested(self):
    """False: gradiente has no nested (jagged) tensors."""
    return False


def as_subclass(self, cls):
    """``self`` as an instance of ``cls`` (a subclass of Tensor): the same memory, attached to the graph as an
    alias (``grad_fn=<AliasBackward0>`` where ``self`` requires grad)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = views._view(self, self._data.view(), views.AliasBackward0)
    out.__class__ = cls
    return out


def name(self):
    """PyTorch's ``Tensor.name``: None for every tensor built by its Python API (the slot names graph inputs in
    its compiler's traces, which gradiente does not have)."""
    return None


def resize(self, *sizes):
    """``self``'s elements in the shape ``sizes`` (separate ints), a new tensor recorded as ``ResizeBackward``
    (PyTorch's legacy ``autograd._functions.Resize``); the element count must not change. Deprecated in PyTorch,
    with a warning: use ``reshape``."""
    from .autograd._functions import Resize
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(self, sizes)


def resize_as(self, tensor):
    """``self.resize(*tensor.size())``: ``self``'s elements in ``tensor``'s shape. Deprecated, as ``resize``."""
    from .autograd._functions import Resize
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(self, tensor.size())
