"""softmax and log_softmax along one dimension, each a stable NumPy forward next to its node.

Both subtract the maximum along ``dim`` first, so no exponential overflows. The rules read only the
result: ``softmax``'s gradient is ``out·(grad - Σ grad·out)`` and ``log_softmax``'s is
``grad - e^out·Σ grad``, the sums taken along ``dim``.
"""
import numpy as np

from ..core import dtype as dt
from ..core import rounded_math
from ..core.fused import fma
from ..core.node import Node, self_adjoint_jvp
from ..core.record import record, wants_grad, wrap
from ..core.summation import vector_row_dots, vector_row_sums
from ..core.tensor import _wrap_dim
from ..core.vector_exp import sleef_exp, sleef_log

__all__ = ["log_softmax", "softmax"]


class SoftmaxBackward0(Node):
    """out = e^x / Σ e^x (along dim);  dx = out·(grad - Σ grad·out)"""
    formula = "∂softmax(x)ᵢ/∂xⱼ = sᵢ(δᵢⱼ - sⱼ)"

    def backward(self, ops, grad):
        (out,) = self.saved(ops)
        if not ops.recording and grad.dtype == out.dtype == np.float32 and self.dim == grad.ndim - 1 and \
                grad.size and grad.flags.c_contiguous and out.flags.c_contiguous:
            # PyTorch's kernel along the last dim: Σ grad·out in its softmax order
            width = grad.shape[-1]
            total = vector_row_dots(grad.reshape(-1, width), out.reshape(-1, width)).reshape(grad.shape[:-1] + (1,))
            return ((grad - total) * out,)
        return (out * (grad - ops.sum(grad * out, self.dim, keepdim=True)),)

    jvp = self_adjoint_jvp


class LogSoftmaxBackward0(Node):
    """out = x - log Σ e^x (along dim);  dx = grad - e^out·Σ grad"""
    formula = "∂log_softmax(x)ᵢ/∂xⱼ = δᵢⱼ - softmax(x)ⱼ"

    def backward(self, ops, grad):
        (out,) = self.saved(ops)
        if not ops.recording and grad.dtype == out.dtype == np.float32 and self.dim == grad.ndim - 1 and \
                grad.size and grad.flags.c_contiguous:
            # PyTorch's kernel along the last dim: Σ grad in its softmax order, and grad - e^out·Σ as one fused
            # multiply-add (its compiler contracts the two), with e^out from Sleef as there
            total = vector_row_sums(grad.reshape(-1, grad.shape[-1])).reshape(grad.shape[:-1] + (1,))
            return (fma(-sleef_exp(out), total, grad, np.float32),)
        return (grad - ops.exp(out) * ops.sum(grad, self.dim, keepdim=True),)

    def jvp(self, ops, x_t):
        (out,) = self.saved(ops)
        return x_t - ops.sum(ops.exp(out) * x_t, self.dim, keepdim=True)


def _prepare(input, dim, dtype, kernel):
    """The input (cast to ``dtype`` if given), its array, and the axis to reduce (None for a 0-d input)."""
    if dtype is not None and dtype is not input.dtype:
        input = input.to(dtype)
    a = input._data
    if dt.kind(a.dtype) != "f":
        name = dt.FROM_NUMPY[a.dtype]._legacy[:-len("Tensor")]
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
    axis = _wrap_dim(dim, max(a.ndim, 1))
    return input, a, axis if a.ndim else None


def _max(a, axis):
    """The maximum along ``axis``, kept as a dimension (0 for an empty array, which has none)."""
    return a.max(axis=axis, keepdims=True) if a.size else np.zeros((), a.dtype)


def _exp(shifted):
    """e^(x - max): for float32 (bfloat16 and float16 are computed in it) Sleef's, as PyTorch's vectorized kernels
    take it (``core/vector_exp.py``), which makes softmax equal PyTorch's in every element where the correctly
    rounded exponential left one in seven different."""
    return sleef_exp(shifted) if shifted.dtype == np.float32 else np.exp(shifted)


def _log(total, a, axis):
    """ln Σ: along the last dim of a float32 array Sleef's, as PyTorch's vectorized kernel takes it (one row in about
    250 differs from the correctly rounded log, which the other cases take)."""
    if a.dtype == np.float32 and axis == a.ndim - 1 and total.dtype == np.float32:
        return sleef_log(total)
    return rounded_math.log(total)


def _sum_of_exps(exps, a, axis):
    """Σ e^(x - max) along ``axis``, kept as a dimension: for float32 along the last dim in the order of PyTorch's
    vectorized kernel (``vector_row_sums``), which changes the last bit of about half the results against NumPy's."""
    if a.dtype == np.float32 and axis == a.ndim - 1 and a.size and exps.flags.c_contiguous:
        return vector_row_sums(exps.reshape(-1, a.shape[-1])).reshape(a.shape[:-1] + (1,))
    return exps.sum(axis=axis, keepdims=True)


def softmax(input, dim, dtype=None):
    """e^x / Σ e^x along ``dim``; ``dtype`` casts the input first (``SoftmaxBackward0``)."""
    input, a, axis = _prepare(input, dim, dtype, "softmax_lastdim_kernel_impl")
    w = dt.widened(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = _exp(w - _max(w, axis))
        out = wrap(np.asanyarray(e * (1 / _sum_of_exps(e, a, axis)), dtype=a.dtype, order="C"))
    if wants_grad(input):
        record(SoftmaxBackward0, (input,), out, (out,), dim=axis)
    return out


def _through_lastdim_buffer(values, a, axis):
    """PyTorch's bfloat16 kernel along the last dimension keeps Σ e^(x - max), then its logarithm, in a buffer of
    the input's type: each is rounded to bfloat16 there (along other dimensions all stays in float32)."""
    if a.dtype == dt.BFLOAT16 and axis == a.ndim - 1:
        return values.astype(dt.BFLOAT16).astype(np.float32)
    return values


def log_softmax(input, dim, dtype=None):
    """x - log Σ e^x along ``dim``, computed stably; ``dtype`` casts the input first (``LogSoftmaxBackward0``)."""
    input, a, axis = _prepare(input, dim, dtype, "log_softmax_lastdim_kernel_impl")
    w = dt.widened(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = w - _max(w, axis)
        exps = _exp(shifted)
        total = _sum_of_exps(exps, a, axis)
        log_sum = _log(_through_lastdim_buffer(total, a, axis), a, axis)
        # (x - max) - log Σ: PyTorch's order, which keeps large inputs with small differences exact.
        out = wrap(np.asanyarray(shifted - _through_lastdim_buffer(log_sum, a, axis), dtype=a.dtype, order="C"))
    if wants_grad(input):
        record(LogSoftmaxBackward0, (input,), out, (out,), dim=axis)
    return out
