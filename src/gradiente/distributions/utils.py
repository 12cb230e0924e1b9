"""Helpers the distributions share, as ``torch.distributions.utils``: broadcasting parameters, converting
between probabilities and logits, lazily computed attributes, and the standard normal noise of ``rsample``."""
import numpy as np

from .. import Size, Tensor, broadcast_tensors, empty, enable_grad, get_default_dtype, softmax, tensor
from ..core import dtype as dt

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def _is_number(value):
    """A plain Python number, as PyTorch's ``_Number`` (bool counts: it is an int)."""
    return isinstance(value, (int, float))


def broadcast_all(*values):
    """The values as tensors broadcast to one shape. Numbers become tensors of the first tensor's dtype (or of
    the default dtype when all are numbers)."""
    if not all(isinstance(v, Tensor) or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)), get_default_dtype())
        values = [v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values]
    return broadcast_tensors(*values)


def broadcast_shapes(*shapes):
    """The shape ``shapes`` broadcast to, with ``torch.broadcast_shapes``' message when they do not."""
    common = [1] * max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for dim in range(-1, -1 - len(shape), -1):
            if common[dim] == 1:
                common[dim] = shape[dim]
            elif shape[dim] not in (1, common[dim]):
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[dim]} at {dim}! Mismatching "
                                   f"argument at index {index} had {shape}; but expected shape should be "
                                   f"broadcastable to {common}")
    return Size(common)


def _standard_normal(shape, dtype, device=None):
    """Standard normal noise of ``shape``: ``empty(shape).normal_()``, which draws what PyTorch draws."""
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def _format(value):
    """``value`` as PyTorch's f-strings show it: a 0-d tensor as its number (``Tensor.__format__``), anything
    else as ``str``. Reprs and error messages use it so that they read as PyTorch's."""
    if isinstance(value, Tensor) and value.dim() == 0:
        return format(value.item())
    return str(value)


def _finfo(tensor):
    """NumPy's machine limits for the tensor's floating-point dtype (PyTorch's ``torch.finfo``)."""
    return dt.finfo_of(tensor._data.dtype)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: σ(logits) for a binary event, otherwise a softmax over the last dim."""
    if is_binary:
        return logits.sigmoid()
    return softmax(logits, -1)


def clamp_probs(probs):
    """``probs`` clamped to [eps, 1 - eps], eps the dtype's machine epsilon, so that their logs stay finite."""
    eps = float(_finfo(probs).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log(p) - log(1 - p) for a binary event, otherwise log(p) (unnormalized)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


class lazy_property:
    """A method computed on first access and then stored on the instance, so it runs once. Distributions use it
    for the parameterization they were not given (``probs`` of a distribution made from ``logits``); it runs
    with grad enabled, so the stored value keeps its history even when first read under ``no_grad``."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n, diag):
    rows = np.arange(n)
    return rows[None, :] < rows[:, None] + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle of ``mat`` (or a batch), row by row, as a vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., Tensor._make(_tril_mask(n, diag))]


def vec_to_tril_matrix(vec, diag=0):
    """The lower-triangular matrix (or batch) whose lower triangle, row by row, is ``vec``."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float(_finfo(vec).eps):
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., Tensor._make(_tril_mask(n, diag))] = vec
    return mat
