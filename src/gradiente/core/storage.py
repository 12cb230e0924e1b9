"""Storage: the memory a tensor and its views share, and the in-place ops that replace a tensor's memory or its
shape (``resize_``, ``resize_as_``, ``set_``).

A tensor's storage is the NumPy array that owns its memory (``storage_root``: its array's ``.base`` chain, to
the end). ``untyped_storage()`` shows it as bytes, ``storage()`` as elements of the tensor's dtype (PyTorch's
deprecated TypedStorage). A NumPy array cannot grow in place, so a ``resize_`` beyond the storage gives the
tensor new memory holding the old values, as PyTorch's reallocation does; tensors that shared the old memory
keep it (in PyTorch they would see the grown storage).
"""
import math
import os
import warnings

import numpy as np

from . import layouts
from .dtype import FROM_NUMPY, get_default_dtype
from .grad_mode import state as _mode
from .inplace import check_inplace
from .layouts import storage_root
from .shared_memory import is_shared, mark_shared, share_memory_
from .tensor import Tensor, _size_args

__all__ = ["TypedStorage", "UntypedStorage", "resize_", "resize_as_", "set_", "storage", "storage_root",
           "untyped_storage", "is_shared", "share_memory_", "storage_type", "from_file"]

_TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
    "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
    "directly, use tensor.untyped_storage() instead of tensor.storage()")

# C++ scalar names, as PyTorch's set_ message writes them
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


class UntypedStorage:
    """The bytes under a tensor: ``data_ptr()``, ``nbytes()``, ``size()`` (= ``len``, in bytes)."""

    def __init__(self, array):
        self._array = storage_root(array)

    def data_ptr(self):
        return self._array.__array_interface__["data"][0]

    def nbytes(self):
        return self._array.nbytes

    def size(self):
        return self._array.nbytes

    def __len__(self):
        return self._array.nbytes

    def __sizeof__(self):
        """The object and its bytes, as PyTorch counts a storage (``sys.getsizeof``; model summaries add it up)."""
        return object.__sizeof__(self) + self.nbytes()

    def element_size(self):
        return 1

    @property
    def device(self):
        return "cpu"

    def __repr__(self):
        return f"UntypedStorage of {self.nbytes()} bytes at {self.data_ptr():#x}"


class TypedStorage(UntypedStorage):
    """The storage counted in elements of ``dtype``: ``size()`` and ``len`` are numbers of elements."""

    def __init__(self, array):
        super().__init__(array)
        self._itemsize = array.itemsize
        self.dtype = FROM_NUMPY[array.dtype]

    def size(self):
        return self._array.nbytes // self._itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self._itemsize

    def untyped(self):
        return UntypedStorage(self._array)

    def __repr__(self):
        return f"TypedStorage of {self.size()} elements of {self.dtype}"


def untyped_storage(self):
    """The bytes under this tensor and every view of it, as an ``UntypedStorage`` (shared, not copied)."""
    return UntypedStorage(self._data)


def storage(self):
    """``x.storage()``: PyTorch's deprecated typed storage (with its warning)."""
    warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
    return TypedStorage(self._data)


def _refuse_grad(self):
    if self._requires_grad and not _mode.inference and not self.is_inference():
        raise RuntimeError("cannot resize variables that require grad")


def resize_(self, *size, memory_format=None):
    """Give the tensor the contiguous shape ``size``, keeping its first elements (in storage order); new
    elements, past the end of the storage, are zeros here (uninitialized in PyTorch). Refused on tensors that
    require grad."""
    _refuse_grad(self)
    shape = _size_args(size, "resize_")
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    a = self._data
    channels_last = layouts.is_channels_last(memory_format)
    if channels_last and a.shape == shape and layouts.is_in_memory_format(a, memory_format):
        return self
    if not channels_last and a.shape == shape and (a.flags.c_contiguous or a.size == 0):
        return self                             # nothing changes: no new version, as in PyTorch
    root, itemsize = storage_root(a), a.itemsize
    offset = self.storage_offset() if root.flags.c_contiguous else 0
    numel = math.prod(shape)
    if root.flags.c_contiguous and (offset + numel) * itemsize <= root.nbytes:
        array = np.ndarray(shape, a.dtype, buffer=root, offset=offset * itemsize)
    else:                                       # new memory, holding the old values first
        flat = np.zeros(numel, a.dtype)
        old = root.reshape(-1).view(a.dtype)[offset:] if root.flags.c_contiguous else a.reshape(-1)
        flat[:min(numel, old.size)] = old[:numel]
        array = flat.reshape(shape)
    if channels_last:       # the same memory read in that order of dims (strides change, as in PyTorch)
        order = layouts.dims_in_memory_order(memory_format, len(shape))
        if order is None:
            layouts.in_memory_format(a, memory_format)      # raises PyTorch's error for the rank
        array = array.reshape([shape[d] for d in order]).transpose(np.argsort(order))
    self._version_box[0] += 1
    self._data = array
    # A leaf with new memory is a new variable to autograd, as in PyTorch: graphs recorded before the change
    # lead to its old AccumulateGrad, which no longer reaches this tensor's .grad.
    self.__dict__.pop("_accumulator", None)
    return self


def resize_as_(self, other, memory_format=None):
    """``self.resize_(other.shape)``: gives ``self`` the shape of ``other``, in place."""
    return resize_(self, other._data.shape)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make the tensor use other memory: ``source``'s (a tensor: its memory, shape and strides; a storage: a
    view of it with ``size`` and ``stride``), or none (an empty tensor)."""
    check_inplace(self)
    a = self._data
    if source is None:
        array = np.zeros((0,), a.dtype)
    elif isinstance(source, Tensor):
        if source._data.dtype != a.dtype:
            raise RuntimeError(f"Could not set tensor of type {_CPP_NAMES.get(source._data.dtype.name)} to a tensor "
                               f"of type {_CPP_NAMES.get(a.dtype.name)}")
        array = source._data
    elif isinstance(source, UntypedStorage):
        size = tuple(size) if size is not None else (source.nbytes() // a.itemsize - storage_offset,)
        if stride is None:
            stride = tuple(math.prod(size[i + 1:]) for i in range(len(size)))
        array = np.ndarray(size, a.dtype, buffer=source._array, offset=storage_offset * a.itemsize,
                           strides=tuple(s * a.itemsize for s in stride))
    else:
        raise TypeError(f"set_() received an invalid combination of arguments - got ({type(source).__name__})")
    self._version_box[0] += 1
    self._data = array
    # A leaf with new memory is a new variable to autograd, as in PyTorch: graphs recorded before the change
    # lead to its old AccumulateGrad, which no longer reaches this tensor's .grad.
    self.__dict__.pop("_accumulator", None)
    return self


# --- legacy storage types and file-backed tensors (issue 16); shared memory is core/shared_memory.py -------------

_LEGACY_STORAGE_TYPES: dict = {}


def storage_type(self):
    """The legacy typed-storage class of this tensor's dtype (``DoubleStorage`` for float64 ...), with PyTorch's
    deprecation warning. The classes are made here on demand (TypedStorage subclasses) and are not exported as
    ``gradiente.DoubleStorage``: gradiente keeps no per-dtype storage classes (docs/public-names.md)."""
    warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
    name = FROM_NUMPY[self._data.dtype]._legacy.replace("Tensor", "Storage")
    if name not in _LEGACY_STORAGE_TYPES:
        _LEGACY_STORAGE_TYPES[name] = type(name, (TypedStorage,), {"__module__": "gradiente"})
    return _LEGACY_STORAGE_TYPES[name]


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-d tensor of ``size`` elements of ``dtype`` backed by the memory-mapped file ``filename`` (NumPy's
    ``memmap``). ``shared=True`` writes changes to the file (and creates or extends it as needed); otherwise the
    file is only read and changes stay in the tensor (copy on write)."""
    from .creation import _check_dtype, _finish  # creation imports this module
    _check_dtype(dtype, "from_file")
    np_dtype = (dtype if dtype is not None else get_default_dtype())._np
    nbytes = int(size) * np_dtype.itemsize
    if shared:
        if not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
            with open(filename, "ab") as f:
                f.truncate(nbytes)
    else:
        if not os.path.exists(filename):
            raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or directory (2)")
        if os.path.getsize(filename) < nbytes:
            raise RuntimeError(f"file <{filename}> size <{os.path.getsize(filename)}> is smaller than the required "
                               f"mapping size <{nbytes}>")
    if size == 0:
        array = np.zeros(0, np_dtype)
    else:
        array = np.memmap(filename, dtype=np_dtype, mode="r+" if shared else "c", shape=(int(size),))
    if shared:
        mark_shared(storage_root(array))
    return _finish(array, requires_grad)
