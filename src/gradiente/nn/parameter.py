"""``nn.Parameter``: a Tensor that a Module registers as one of its parameters, ``nn.Buffer``, and the
gradient reset that ``Module.zero_grad`` and ``Optimizer.zero_grad`` share."""
from ..core.creation import empty
from ..core.tensor import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A Tensor that, assigned as a Module attribute, is added to the module's ``parameters()``.

    ``Parameter(data, requires_grad=True)`` shares ``data``'s memory and version counter (like PyTorch's
    ``_make_subclass``); it requires grad even inside ``no_grad()``. It prints as ``Parameter containing:``
    followed by the tensor. Results of operations on a Parameter are plain Tensors.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        param = cls._make(data._data)
        param._version_box = data._version_box
        param.requires_grad = requires_grad
        return param

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._data.copy()), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data.copy(), self._requires_grad))


def _rebuild_parameter(array, requires_grad):
    return Parameter(Tensor._make(array), requires_grad)


class Buffer(Tensor):
    """Marks a tensor as a buffer when assigned to a Module attribute (``self.x = nn.Buffer(t)``).

    As in PyTorch, a Buffer is only a marker: the module stores a plain Tensor sharing its memory.
    ``persistent=False`` leaves the buffer out of ``state_dict()``.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        buf = cls._make(data._data, data._requires_grad)
        buf._version_box = data._version_box
        buf.persistent = persistent
        return buf


def _reset_grads(params, set_to_none=True):
    """Set each ``.grad`` to None, or (``set_to_none=False``) detach it and fill it with zeros in place."""
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p._grad = None
            continue
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        g._data[...] = 0
        g._bump_version()
