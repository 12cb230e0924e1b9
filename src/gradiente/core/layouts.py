"""``torch.layout`` and ``torch.memory_format``: the named constants that say how a tensor's elements are laid out.

Every gradiente tensor is strided (a NumPy array); ``memory_format`` picks the order of dims in memory when a
copy is made: ``contiguous_format`` (row-major), ``channels_last`` (N, C, H, W stored as N, H, W, C) and
``channels_last_3d`` (N, C, D, H, W stored as N, D, H, W, C), or ``preserve_format`` (the source's order).
The constants print under the library's name, as dtypes do (``gradiente.strided`` where PyTorch prints
``torch.strided``), and ops read them by name (``name_of``).
"""
import numpy as np

__all__ = ["layout", "memory_format", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
           "legacy_contiguous_format"]


class _Named:
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"gradiente.{self._name}"

    __str__ = __repr__

    def __reduce__(self):
        return self._name       # pickled by name: the module-level constant comes back


class layout(_Named):
    """How a tensor's elements are stored: ``torch.strided`` for every dense tensor."""
    __slots__ = ()


class memory_format(_Named):
    """The order of a tensor's dims in memory, asked of copies (``clone``, ``contiguous``, ``to``)."""
    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")

contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = memory_format("legacy_contiguous_format")


def name_of(format):
    """The name of a memory format or layout (``"channels_last"``); None for None."""
    return format._name if isinstance(format, _Named) else None if format is None else str(format)


def is_channels_last(format):
    return name_of(format) in ("channels_last", "channels_last_3d")


def dims_in_memory_order(format, ndim):
    """The dims from slowest to fastest in memory for ``format`` (None: row-major), or None when the format does
    not apply to ``ndim`` dims (channels_last needs 4, channels_last_3d 5), which PyTorch refuses."""
    name = name_of(format)
    if name == "channels_last":
        return (0, 2, 3, 1) if ndim == 4 else None
    if name == "channels_last_3d":
        return (0, 2, 3, 4, 1) if ndim == 5 else None
    return tuple(range(ndim))


def in_memory_format(array, format):
    """A copy of ``array`` laid out in ``format`` (channels_last: the channel dim fastest)."""
    order = dims_in_memory_order(format, array.ndim)
    if order is None:
        rank = "4" if name_of(format) == "channels_last" else "5"
        raise RuntimeError(f"required rank {rank} tensor to use {name_of(format)} format")
    copy = np.empty([array.shape[d] for d in order], array.dtype)
    copy[...] = array.transpose(order)
    return copy.transpose(np.argsort(order))


def suggested_format(*arrays):
    """PyTorch's ``suggest_memory_format`` for the ops whose result follows their inputs' layout (convolution,
    pooling, interpolation, cat): ``channels_last`` (``channels_last_3d`` for 5 dims) when an input is laid out so
    and not also row-major (a dim of size 1 can make both true), else None: row-major."""
    for a in arrays:
        if a is None or a.ndim not in (4, 5) or a.flags.c_contiguous:
            continue
        format = channels_last if a.ndim == 4 else channels_last_3d
        if is_in_memory_format(a, format):
            return format
    return None


def changes_layout(array, format):
    """Whether laying ``array`` out in ``format`` (``to(memory_format=...)``) takes a copy: not for None or
    ``preserve_format``, nor for an array already in it. A channels-last format on the wrong rank raises PyTorch's
    error."""
    name = name_of(format)
    if name in (None, "preserve_format"):
        return False
    if name in ("contiguous_format", "legacy_contiguous_format"):
        return not array.flags.c_contiguous
    if dims_in_memory_order(format, array.ndim) is None:
        in_memory_format(array, format)     # (raises the rank error)
    return not is_in_memory_format(array, format)


def laid_out(array, format):
    """``array`` in ``format``: itself for None or ``preserve_format``, else a copy laid out so (row-major for
    ``contiguous_format``)."""
    name = name_of(format)
    if name in (None, "preserve_format"):
        return array
    if name in ("contiguous_format", "legacy_contiguous_format"):
        return np.ascontiguousarray(array)
    return in_memory_format(array, format)


def is_in_memory_format(array, format):
    """Whether ``array``'s strides are those of ``format`` (sizes of 1 ignored, as PyTorch's check does)."""
    order = dims_in_memory_order(format, array.ndim)
    if order is None:
        return False
    expected = array.itemsize
    for d in reversed(order):
        if array.shape[d] != 1 and array.strides[d] != expected:
            return False
        expected *= array.shape[d]
    return True


def storage_root(a):
    """The array that owns ``a``'s memory."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def storage_offset(a):
    """Where ``a``'s first element lies in the memory of its owner (``storage_root``), in elements."""
    return (a.__array_interface__["data"][0] - storage_root(a).__array_interface__["data"][0]) // a.itemsize
