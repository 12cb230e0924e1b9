"""``torch.hash_tensor``: a uint64 fingerprint of a tensor's values, the XOR of their 64-bit patterns.

Each element is first widened to its 64-bit kind (floating types to float64, integers and bools to int64 or
uint64) and its bits read as a uint64; the hash is those words XORed together, over all elements or over
``dim``. Equal values give equal hashes whatever the dtype they came in (a float32 1.5 hashes as a float64 1.5),
and the XOR makes the hash independent of the elements' order. Not differentiable: the result is an integer.
"""
import numpy as np

from ..core import dtype as dt
from ..core.record import as_result
from ..core.tensor import _wrap_dim
from .reductions import normalize_dims

__all__ = ["hash_tensor"]


def _as_words(a):
    """The elements' 64-bit patterns, as uint64."""
    if dt.kind(a.dtype) == "c":
        raise NotImplementedError(f'"xor_sum_cpu" not implemented for \'{dt.scalar_name(a.dtype)}\'')
    if dt.kind(a.dtype) == "f":
        return a.astype(np.float64).view(np.uint64)
    return a.astype(np.uint64 if a.dtype.kind == "u" else np.int64).view(np.uint64)


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The XOR of the 64-bit patterns of ``input``'s elements, as a uint64 tensor: of all of them (a 0-d result),
    or along ``dim`` (an int or a sequence of ints; the result loses those dims unless ``keepdim``). Only
    ``mode=0`` (XOR) exists, as in PyTorch 2.13."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    a = input._data
    if dim is None and a.size == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    if dim is not None:
        for d in ([dim] if isinstance(dim, (int, np.integer)) else dim):
            d = _wrap_dim(int(d), a.ndim)
            if a.ndim and a.shape[d] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    axes = normalize_dims(dim, a.ndim)
    words = _as_words(a)
    return as_result(np.bitwise_xor.reduce(words, axis=axes, keepdims=keepdim), np.uint64)
