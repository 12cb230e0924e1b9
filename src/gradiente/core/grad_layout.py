"""PyTorch's gradient layout contract: the layout a leaf's first gradient is stored in.

A leaf whose memory is dense (no gaps or overlaps: a contiguous tensor, or a permutation of one) gets its ``.grad``
with the leaf's own strides, so that an optimizer can walk parameter and gradient in step; any other leaf gets a
row-major contiguous gradient. A gradient the engine may keep without a copy (``rules.accumulate``'s ``owned``)
is kept only where it already has that layout, unless ``torch.autograd.enforce_grad_layout_policy(False)``
relaxes the contract: then it is kept as it comes. A gradient that must be copied is always made in the
contract's layout, as in PyTorch. The switch is per thread, as PyTorch's is.
"""

import numpy as np

from . import threads
from .creation import is_dense

__all__ = ["is_enforced", "set_enforced", "obeys_layout_contract", "empty_in_contract_layout"]

_state = threads.local()


def is_enforced():
    """Whether the layout contract is enforced on gradients the engine may keep (True unless relaxed)."""
    return getattr(_state, "enforced", True)


def set_enforced(enabled):
    _state.enforced = bool(enabled)


def _dense_strides(array):
    """``array``'s strides in elements, leaving out dims of size 1 (their stride means nothing)."""
    return tuple(st // array.itemsize for st, n in zip(array.strides, array.shape) if n != 1)


def obeys_layout_contract(grad, variable):
    """Whether ``grad`` has the layout the contract asks of ``variable``'s gradient."""
    v = variable._data
    if v.flags.c_contiguous:
        return grad.flags.c_contiguous
    if is_dense(v):
        return _dense_strides(grad) == _dense_strides(v)
    return grad.flags.c_contiguous


def empty_in_contract_layout(variable, np_dtype):
    """An uninitialized gradient array for ``variable`` in the contract's layout."""
    v = variable._data
    if not v.flags.c_contiguous and v.ndim > 1 and is_dense(v):
        return np.empty_like(v, dtype=np_dtype, order="K")
    return np.empty(v.shape, np_dtype)
