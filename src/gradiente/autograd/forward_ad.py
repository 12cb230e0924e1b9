"""Forward-mode automatic differentiation, as ``torch.autograd.forward_ad``: dual tensors at a dual level.

Inside ``with dual_level():``, ``make_dual(x, v)`` gives a tensor that carries the tangent ``v``; every op on it
computes, beside its value, the tangent of its result (the Jacobian-vector product, each op's ``jvp`` rule), and
``unpack_dual(out)`` returns ``(primal, tangent)``. Leaving the level deletes the tangents. The machinery lives in
the core (``core/forward_grad.py``, which explains the design); this module is PyTorch's API over it.

As in PyTorch 2.13, one dual level exists at a time: entering a second raises PyTorch's error.
"""
from typing import NamedTuple, Optional

import numpy as np

from ..core import forward_grad, rules
from ..core.grad_mode import _Mode
from ..core.layouts import storage_root
from ..core.tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_state = forward_grad.state
#: the current level, as PyTorch's module keeps it (-1: none)
_current_level = -1


def enter_dual_level():
    """Enter a new forward grad level and make it the current one; returns its number."""
    global _current_level  # noqa: PLW0603 - PyTorch's module-level name, mirrored for code that reads it
    _current_level = forward_grad.enter_level()
    return _current_level


def exit_dual_level(*, level=None):
    """Leave the current forward grad level (only the last one entered may be left), deleting its tangents."""
    global _current_level  # noqa: PLW0603
    forward_grad.exit_level(_state.level if level is None else level)
    _current_level = _state.level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` (same size; a floating or complex tensor) at ``level``.

    The tangent is kept as it is when it has ``tensor``'s memory layout, else copied into that layout. The result
    is backward differentiable in ``tensor`` (and its tangent in ``tangent``)."""
    if level is None:
        level = _state.level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != _state.level:
        raise RuntimeError("Invalid level given to _make_dual")
    if forward_grad.tangent(tensor, level) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {level} is not supported.")
    if tuple(tangent.shape) != tensor._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {_sizes(tensor)} while the given "
                           f"forward gradient is of size {_sizes(tangent)}.")
    if forward_grad.tangent(tangent, level) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} is "
                           "not supported.")
    dual = tensor.view_as(tensor)
    dual.__dict__["_dual_view"] = True      # a view to backward mode only: forward mode's view checks see past it
    laid_out = _batched_in_primal_layout(tangent, tensor) if rules.is_batched(tangent) else \
        _in_primal_layout(tangent, tensor)
    forward_grad.set_tangent(dual, laid_out, level)
    return dual


def _batched_in_primal_layout(tangent, tensor):
    """``_in_primal_layout`` for a tangent batched by ``vmap`` (the primal is not): the tangent itself when each
    example is laid out as the primal is (strides and offset; the size of the storage is not compared, as in
    PyTorch, since a batched value's examples share one), else a copy whose examples are."""
    physical = rules.batched_ops.physical(tangent)
    a, t = tensor._data, physical._data
    nb = t.ndim - a.ndim
    strides = tuple(s // a.itemsize for s in a.strides)
    if strides == tuple(s // t.itemsize for s in t.strides[nb:]) and (
            a.size == 0 or tensor.storage_offset() == physical.storage_offset()):
        return tangent
    batch_shape = t.shape[:nb]
    storage = np.zeros(batch_shape + (storage_root(a).nbytes // a.itemsize,), t.dtype)
    laid_out = np.lib.stride_tricks.as_strided(
        storage.reshape(-1)[tensor.storage_offset():], batch_shape + a.shape,
        storage.strides[:nb] + tuple(s * t.itemsize for s in strides))
    laid_out[...] = t
    return rules.batched_ops.with_levels_of(Tensor._make(laid_out), tangent)


def _in_primal_layout(tangent, tensor):
    """``tangent`` itself when it is laid out as ``tensor`` is (strides, and for a non-empty tensor the offset into
    and the size of its storage), else its values copied into new memory laid out that way: as in PyTorch, so that
    a view op on the dual, ``as_strided`` included, finds the tangent's elements where it finds the primal's."""
    a, t = tensor._data, tangent._data
    strides = tuple(s // a.itemsize for s in a.strides)
    same_bits = tangent.is_conj() == tensor.is_conj() and tangent.is_neg() == tensor.is_neg()
    if same_bits and strides == tuple(s // t.itemsize for s in t.strides) and (a.size == 0 or (
            tensor.storage_offset() == tangent.storage_offset()
            and storage_root(a).nbytes // a.itemsize == storage_root(t).nbytes // t.itemsize)):
        return tangent
    if any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides)):
        # an expanded primal (vmap's jvp expands one to the batch): its layout would make the tangent's elements
        # share memory, so the tangent keeps its own (as a copy, like any tangent laid out anew)
        return Tensor._make(t.copy()) if not same_bits else tangent
    storage = np.zeros(storage_root(a).nbytes // a.itemsize, t.dtype)   # as many elements as the primal's
    laid_out = np.ndarray(a.shape, t.dtype, buffer=storage, offset=tensor.storage_offset() * t.itemsize,
                          strides=tuple(s * t.itemsize for s in strides))
    laid_out[...] = t
    copy = Tensor._make(laid_out)
    # The copy takes the primal's conjugate and negative bits, as PyTorch's metadata check does (gradiente's
    # flagged tensors hold their values, so the values are the same)
    for flag, value in (("_is_conj", tensor.is_conj()), ("_is_neg", tensor.is_neg())):
        if value:
            copy.__dict__[flag] = True
    return copy


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and its tangent (None if it has none)."""

    primal: Tensor
    tangent: Optional[Tensor]


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of a dual tensor: the primal a view of ``tensor`` without the tangent, the tangent as
    it is (None for a tensor without one, or outside every level)."""
    if level is None:
        level = _state.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != _state.level:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = forward_grad.tangent(tensor, level)
    if tangent is None:
        primal = tensor
    else:
        _state.on = False                   # the view of the primal computes no tangent
        try:
            primal = tensor.view_as(tensor)
        finally:
            _state.refresh()
        primal.__dict__["_fw_grads"] = {}   # and finds none through its base
    return UnpackedDualTensor(primal, tangent)


class dual_level(_Mode):
    """``with dual_level():`` enters a forward grad level and leaves it (deleting its tangents) at the end; also a
    decorator. Only one level exists at a time, as in PyTorch."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _is_fwd_grad_enabled():
    return _state.enabled


class _set_fwd_grad_enabled(_Mode):
    """Forward mode on or off (PyTorch's private helper): takes effect at once, and is undone on leaving it as a
    context manager."""

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = mode
        _state.enabled = mode
        _state.refresh()

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self.prev
        _state.refresh()
        return False
