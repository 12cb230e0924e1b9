"""How a Tensor crosses a process boundary: pickled by ``multiprocessing`` (a ``Queue``, a ``Pipe``, the arguments
of a process started by ``spawn`` or ``forkserver``), it moves into shared memory and is sent as a file descriptor
of that memory and where it lies in it, so the receiver maps the same memory: no copy, and writes on either side
are seen by the other, as with PyTorch.

The reducers are registered with ``multiprocessing.reduction.ForkingPickler`` only, so ``pickle``,
``gradiente.save`` and ``copy`` still copy the values. A storage with no descriptor (a file mapped by
``from_file``) is sent as a copy.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from ..core.shared_memory import array_in_shared_memory, share_storages, shared_handle
from ..core.tensor import Tensor
from ..nn.parameter import Parameter

__all__ = ["reduce_tensor", "rebuild_tensor", "init_reductions"]


def _make(cls, array, requires_grad):
    if cls is Parameter:
        return Parameter(Tensor._make(array), requires_grad)
    t = Tensor._make(array)
    t.requires_grad = requires_grad
    return t


def rebuild_tensor(cls, fd_holder, size, offset, dtype, shape, strides, requires_grad):
    """The receiving side: the shared memory mapped again, and a tensor over the same bytes."""
    root = array_in_shared_memory(fd_holder.detach(), size)
    return _make(cls, np.ndarray(shape, dtype, buffer=root, offset=offset, strides=strides), requires_grad)


def _rebuild_copy(cls, array, requires_grad):
    return _make(cls, array, requires_grad)


def reduce_tensor(tensor):
    """The sending side: the tensor's storage is moved into shared memory, and its descriptor is sent."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries.  If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
    cls = Parameter if isinstance(tensor, Parameter) else Tensor
    share_storages([tensor])
    array = tensor._data
    handle = shared_handle(array)
    if handle is None:
        return _rebuild_copy, (cls, array.copy(), tensor.requires_grad)
    fd, size, offset = handle
    return rebuild_tensor, (cls, DupFd(fd), size, offset, array.dtype, array.shape, array.strides,
                            tensor.requires_grad)


def init_reductions():
    """Registers ``reduce_tensor`` for Tensor and Parameter with multiprocessing's pickler."""
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
