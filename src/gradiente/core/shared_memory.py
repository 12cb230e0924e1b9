"""Shared memory: ``share_memory_`` moves a tensor's storage into memory that other processes can map, so that a
child made by ``fork`` sees the parent's later writes and the parent sees the child's (hogwild training).

The shared memory is an anonymous file (``memfd_create`` on Linux, else an unlinked temporary file) mapped with
``mmap``, as PyTorch's ``file_descriptor`` sharing strategy does. A forked child inherits the mapping; a process
started by ``spawn`` or ``forkserver``, or one that reads the tensor from a ``Queue``, receives the file
descriptor (``gradiente.multiprocessing`` pickles it with ``multiprocessing.reduction.DupFd``) and maps the same
memory.

A NumPy array cannot be moved, so moving a storage means giving every tensor over it a new array over the shared
memory, at the same offset with the same strides: the tensor itself (the same Python object), and the tensors that
are views of it. Those are found by one walk over the objects Python's garbage collector tracks (``gc``), the only
registry of tensors there is; so ``Module.share_memory`` moves all its tensors in one walk. What holds the old
array without a tensor around it (a value saved for backward, a NumPy view the program took with ``.numpy()``)
keeps the old memory: share before training, as PyTorch's examples do.
"""
import gc
import mmap
import os
import weakref

import numpy as np

from .layouts import storage_root
from .tensor import Tensor

__all__ = ["share_memory_", "share_storages", "is_shared", "mark_shared", "shared_handle", "array_in_shared_memory"]

#: the storages in shared memory, by id of their root array: (weak reference to the root, the file descriptor of
#: the shared memory or None for a memory-mapped file from ``from_file``, its size in bytes)
_SHARED: dict = {}


def _byte_bounds(array):
    bounds = getattr(np.lib, "array_utils", np).byte_bounds   # moved in NumPy 2
    return bounds(array)


def mark_shared(root, fd=None, size=0):
    """Records ``root`` (an array that owns its memory) as shared, until it is garbage collected."""
    key = id(root)

    def forget(_ref):
        _SHARED.pop(key, None)
        if fd is not None:
            os.close(fd)
    _SHARED[key] = (weakref.ref(root, forget), fd, size)


def _entry(array):
    root = storage_root(array)
    entry = _SHARED.get(id(root))
    return entry if entry is not None and entry[0]() is root else None


def is_shared(self):
    """Whether this tensor's storage is in shared memory (``share_memory_``, a tensor received from another
    process, or ``from_file`` with ``shared=True``); views of such a tensor are shared too."""
    return _entry(self._data) is not None


def _new_shared_file(size):
    if hasattr(os, "memfd_create"):
        return os.memfd_create("gradiente-shared-storage")
    import tempfile  # here, not at the top: it loads shutil, random and the compressors (6 ms of the import)
    fd, path = tempfile.mkstemp(prefix="gradiente-shared-storage-")
    os.unlink(path)         # the memory lives as long as a descriptor or a mapping of it does
    return fd


def array_in_shared_memory(fd, size):
    """A ``uint8`` array of ``size`` bytes over the shared memory of ``fd``, recorded as shared (it owns ``fd``)."""
    root = np.frombuffer(mmap.mmap(fd, size), dtype=np.uint8)
    mark_shared(root, fd, size)
    return root


def _same_layout_in(buffer, array, low):
    moved = np.ndarray(array.shape, array.dtype, buffer=buffer, offset=array.__array_interface__["data"][0] - low,
                       strides=array.strides)
    if not array.flags.writeable:
        moved.flags.writeable = False
    return moved


def share_storages(tensors):
    """Moves the storage of each tensor in ``tensors`` into shared memory (those not already there, and not
    empty), giving each tensor over such a storage an array over the new memory."""
    roots = {}
    for t in tensors:
        root = storage_root(t._data)
        if root.nbytes and _entry(root) is None:
            roots[id(root)] = root
    if not roots:
        return
    moved = {}
    for key, root in roots.items():
        low, high = _byte_bounds(root)
        fd = _new_shared_file(high - low)
        os.ftruncate(fd, high - low)
        shared = array_in_shared_memory(fd, high - low)
        _same_layout_in(shared, root, low)[...] = root
        moved[key] = (shared, low)
    # every tensor over a moved storage, found in one walk: the tensors passed in and their views
    for obj in gc.get_objects():
        # type(), not isinstance: an arbitrary object's __class__ may be a property that runs code
        if issubclass(type(obj), Tensor) and isinstance(getattr(obj, "_data", None), np.ndarray):
            target = moved.get(id(storage_root(obj._data)))
            if target is not None:
                obj._data = _same_layout_in(target[0], obj._data, target[1])
    for t in tensors:       # the tensors passed in, even if the walk missed them (untracked by gc)
        target = moved.get(id(storage_root(t._data)))
        if target is not None:
            t._data = _same_layout_in(target[0], t._data, target[1])


def share_memory_(self):
    """Moves this tensor's storage into shared memory (a no-op if it is there already) and returns ``self``:
    after ``fork``, parent and child read and write the same values; ``gradiente.multiprocessing`` sends it to
    other processes without a copy. Views of this tensor move with it."""
    share_storages([self])
    return self


def shared_handle(array):
    """``(fd, size, offset)`` of the shared memory under ``array`` and where ``array`` starts in it, or None if
    its storage is not in shared memory made by ``share_memory_`` (a file from ``from_file`` has no
    descriptor)."""
    entry = _entry(array)
    if entry is None or entry[1] is None:
        return None
    root = entry[0]()
    return entry[1], entry[2], array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
