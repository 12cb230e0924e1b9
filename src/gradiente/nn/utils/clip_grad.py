"""Gradient clipping: scale all gradients so their joint norm is at most ``max_norm``, or clamp each value."""
import math
import types
import warnings

import numpy as np

from ...core.tensor import Tensor
from ...ops.reductions import norm_array

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _vector_norm(array, norm_type):
    """The norm of all of ``array`` as one vector: ``linalg.vector_norm``'s value, as PyTorch's ``_foreach_norm``
    takes it of each gradient (an empty array's inf norm is 0 here, where vector_norm would refuse it)."""
    if array.size == 0 and math.isinf(norm_type):
        return np.zeros((), array.dtype)
    return np.asarray(norm_array(array, norm_type, tuple(range(array.ndim))), array.real.dtype)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that the norm of all of them together (as one vector)
    is at most ``max_norm``. Returns that total norm (before clipping) as a tensor."""
    if not isinstance(parameters, Tensor):
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return Tensor._make(np.zeros((), dtype=np.float32))
    norms = np.stack([_vector_norm(g._data, norm_type) for g in grads])
    total = _vector_norm(norms, norm_type).astype(grads[0]._data.dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    coef = np.minimum(float(max_norm) / (total + total.dtype.type(1e-6)), 1.0).astype(total.dtype)
    for g in grads:
        g._data *= coef
        g._bump_version()
    return Tensor._make(np.asarray(total))


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated name of ``clip_grad_norm_`` (warns with PyTorch's FutureWarning, then does the same)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient value of ``parameters`` into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._data, -clip_value, clip_value, out=g._data)
        g._bump_version()


# --- issue 16 item 4: the two halves of clip_grad_norm_, public in PyTorch 2.13 ---
__all__ += ["get_total_norm", "clip_grads_with_norm_"]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of ``tensors`` (a Tensor or an iterable of them) taken together as one vector:
    the norm of their norms. A 0-dim tensor; ``tensor(0.)`` for no tensors. ``error_if_nonfinite``: raise
    if it is nan or inf."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(np.zeros((), dtype=np.float32))
    norms = np.stack([_vector_norm(t._data, norm_type) for t in tensors])
    total = np.asarray(_vector_norm(norms, norm_type)).astype(norms.dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return Tensor._make(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``min(max_norm / (total_norm + 1e-6), 1)``, with
    ``total_norm`` already computed (by ``get_total_norm``). Returns None."""
    grads = _grads(parameters)
    if not grads:
        return
    total = total_norm._data
    coef = np.minimum(np.asarray(float(max_norm) / (total + total.dtype.type(1e-6)), total.dtype), 1.0)
    for g in grads:
        g._data *= coef.astype(g._data.dtype)
        g._bump_version()
