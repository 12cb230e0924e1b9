"""Batch norm of a float32 ``(N, C, *S)`` input laid out contiguously (the images of a CNN), computed step for step
as PyTorch's CPU kernel computes it (``aten/src/ATen/native/cpu/batch_norm_kernel.cpp``, ``Normalization.cpp``),
so that a CNN's activations, gradients and running statistics round as PyTorch's do.

Forward, per channel c over its N·ΠS values:

    mean = Σx / count (a float64 sum, rounded to float32)
    var_sum = Σ (x − mean)² (each square in float32, the sum in float64, rounded to float32)
    invstd = 1/sqrt(var_sum / count + eps) (the quotient in float32, the root in float64)
    α = invstd·w;  β = b − mean·α (one rounding);  y = x·α + β (one rounding)

The float64 sums are NumPy's (pairwise): added in PyTorch's order instead, they would round to the same float32
mean and var_sum but for one channel in ~10⁸. Evaluation uses the running statistics, invstd in float32 throughout.
The running statistics move in float32 (mean) and float64 (variance), as PyTorch's two statements do.

Backward, per channel, each image's plane reduced by PyTorch's vector code (8 lanes: this kernel is dispatched to
AVX2), lane sums then added pairwise in a fixed tree, the planes' results added in float64:

    Σdy;  Σ(x − mean)·dy (the products rounded, except the last partial vector's, fused into the sum)
    k = Σ(x − mean)·dy · invstd · invstd / count;  dx = ((dy − Σdy/count) − (x − mean)·k (fused)) · invstd · w
    dw = Σ(x − mean)·dy · invstd;  db = Σdy

Measured equal to torch 2.13 in every element (``tests/test_kernel_order.py``). An ``(N, C)`` input (or one whose
planes are single values: ``BatchNorm1d`` in an MLP) takes PyTorch's channels-last kernel instead, whose sums run
down the rows in float32 (one thread's partial sums), its squares and products fused: ``_rows_statistics`` and
``_rows_backward`` (``tests/test_batch_norm_rows.py``).
"""
import numpy as np

from ...core.blas_order import column_dots_in_order
from ...core.fused import fma
from ...core.summation import down_in_order

__all__ = ["follows_kernel", "statistics", "forward", "update_running", "backward", "plane_sums"]

_LANES = 8


def follows_kernel(xa, *parameters):
    """Whether this batch norm is one computed here: float32, C-contiguous, and float32 parameters (None for those not
    given)."""
    return (xa.dtype == np.float32 and xa.ndim >= 2 and xa.size > 0 and xa.flags.c_contiguous
            and all(p is None or p.dtype == np.float32 for p in parameters))


def _planes(xa):
    return xa.reshape(xa.shape[0], xa.shape[1], -1)


def _as_rows(xa):
    """An input whose planes are single values ((N, C), or images of one pixel) as its (N, C) rows, else None: PyTorch
    takes its channels-last kernel for those (``_rows_statistics``, ``_rows_backward``)."""
    return xa.reshape(xa.shape[0], xa.shape[1]) if xa.size == xa.shape[0] * xa.shape[1] else None


def statistics(xa, eps):
    """``(mean, var_sum, invstd)`` per channel, float32, of a training batch."""
    rows = _as_rows(xa)
    if rows is not None:
        return _rows_statistics(rows, eps)
    planes = _planes(xa)
    count = planes.shape[0] * planes.shape[2]
    mean = (np.add.reduce(planes, axis=(0, 2), dtype=np.float64) / count).astype(np.float32)
    deviations = planes - mean[:, None]
    np.multiply(deviations, deviations, out=deviations)
    var_sum = np.add.reduce(deviations, axis=(0, 2), dtype=np.float64).astype(np.float32)
    var = var_sum / np.float32(count)
    invstd = (1 / np.sqrt(var.astype(np.float64) + eps)).astype(np.float32)
    return mean, var_sum, invstd


def _rows_statistics(rows, eps):
    """``statistics`` of (N, C) rows as PyTorch's channels-last kernel takes them (one thread): each channel's values
    added in order in float32, the mean that sum over N in float64; the squares of (x − mean) fused into their sum,
    in order."""
    n = rows.shape[0]
    mean = (down_in_order(rows).astype(np.float64) / n).astype(np.float32)
    centered = rows - mean
    var_sum = column_dots_in_order(centered, centered)
    invstd = (1 / np.sqrt((var_sum / np.float32(n)).astype(np.float64) + eps)).astype(np.float32)
    return mean, var_sum, invstd


def evaluation_invstd(running_var, eps):
    """invstd from the running variance, as the forward computes it (in float32)."""
    return np.float32(1) / np.sqrt(running_var + np.float32(eps))


def forward(xa, mean, invstd, weight, bias):
    """y = x·α + β with α = invstd·w and β = b − mean·α, each rounded once."""
    alpha = invstd if weight is None else invstd * weight
    beta = fma(-mean, alpha, np.float32(0) if bias is None else bias, np.float32)
    shape = (1, -1) + (1,) * (xa.ndim - 2)
    return fma(xa, alpha.reshape(shape), beta.reshape(shape), np.float32)


def update_running(running_mean, running_var, mean, var_sum, count, momentum):
    """The running statistics' new values (float32 arrays): the mean's update in float32, the variance's (from the
    unbiased variance, a float32 quotient) in float64, as PyTorch's statements compute them."""
    m = np.float32(momentum)
    new_mean = None
    if running_mean is not None:
        new_mean = m * mean + (np.float32(1) - m) * running_mean
    new_var = None
    if running_var is not None:
        unbiased = var_sum / np.float32(count - 1)
        new_var = (np.float64(m) * unbiased + ((np.float32(1) - m) * running_var).astype(np.float64)).astype(
            np.float32)
    return new_mean, new_var


def plane_sums(values, fused_tail=None):
    """Each plane's (last axis) sum as PyTorch's ``vec::reduce_all`` adds it: 8 lanes each added in order, the last
    partial vector into the first lanes, then lanes (i, i+4), (i, i+2), (0, 1). ``fused_tail``: the pair (p, q)
    whose products the last partial vector adds fused (``map2_reduce_all`` of a product), else None."""
    length = values.shape[-1]
    if length < _LANES:                 # (fewer values than lanes: added one after another)
        return np.add.reduce(values, axis=-1) if length == 1 else _in_order(values)
    whole = length - length % _LANES
    vectors = values[..., :whole].reshape(-1, whole // _LANES, _LANES)
    # each lane's values added in order: NumPy adds in order along an axis that is not the innermost. A loop over
    # the vectors reads memory in order, several times faster than NumPy's own loop of 8-element strides.
    if vectors.shape[1] <= 256:
        lanes = vectors[:, 0].copy()
        for vector in range(1, vectors.shape[1]):
            lanes += vectors[:, vector]
    else:
        lanes = np.add.reduce(vectors.transpose(1, 0, 2), axis=0)
    lanes = lanes.reshape(values.shape[:-1] + (_LANES,))
    if whole < length:
        tail = slice(whole, length)
        head = lanes[..., :length - whole]
        if fused_tail is None:
            head += values[..., tail]
        else:
            p, q = fused_tail
            head[...] = fma(p[..., tail], q[..., tail], head, np.float32)
    while lanes.shape[-1] > 1:
        half = lanes.shape[-1] // 2
        lanes = lanes[..., :half] + lanes[..., half:]
    return lanes[..., 0]


def _in_order(values):
    total = values[..., 0].copy()
    for i in range(1, values.shape[-1]):
        total += values[..., i]
    return total


def backward(grad, xa, mean, invstd, weight, training, needs):
    """``(dx, dw, db)`` (None where ``needs`` says no) from the output's gradient; ``mean`` and ``invstd`` those the
    forward used (the batch's in training; in evaluation the running mean, and invstd is recomputed here as
    PyTorch's backward does, by the caller)."""
    rows = _as_rows(xa)
    if rows is not None:
        return _rows_backward(np.ascontiguousarray(grad).reshape(rows.shape), rows, mean, invstd, weight, training,
                              needs, xa.shape)
    planes, dy = _planes(xa), _planes(grad)
    count = planes.shape[0] * planes.shape[2]
    centered = planes - mean[:, None]
    products = centered * dy
    dy_sums = down_in_order(plane_sums(dy).astype(np.float64))              # images added in order
    dot = down_in_order(plane_sums(products, fused_tail=(centered, dy)).astype(np.float64))
    w = np.ones_like(invstd) if weight is None else weight
    dx = dw = db = None
    if needs[0]:
        if training:
            k = dot.astype(np.float32) * invstd * invstd / np.float32(count)
            grad_mean = (dy_sums / count).astype(np.float32)
            inner = fma(centered, -k[:, None], dy - grad_mean[:, None], np.float32)
            dx = (inner * invstd[:, None] * w[:, None]).reshape(xa.shape)
        else:
            dx = (dy * invstd[:, None] * w[:, None]).reshape(xa.shape)
    if needs[1]:
        dw = (dot * invstd).astype(np.float32)
    if needs[2]:
        db = dy_sums.astype(np.float32)
    return dx, dw, db


def _rows_backward(dy, rows, mean, invstd, weight, training, needs, shape):
    """``backward`` of (N, C) rows, as PyTorch's channels-last kernel computes it: Σdy in order; Σ(x − mean)·dy in
    order, each product fused; dx = fma(−(x − mean), k, dy − Σdy/N)·invstd·w on whole vectors of 8 channels, and
    rounded step by step, ``(dy − Σdy/N − (x − mean)·k)·invstd·w``, on the last C mod 8 (its scalar code)."""
    n, channels = rows.shape
    dy_sums = down_in_order(dy)
    centered = rows - mean
    dot = column_dots_in_order(centered, dy)
    w = np.ones_like(invstd) if weight is None else weight
    dx = dw = db = None
    if needs[0]:
        if training:
            k = dot * invstd * invstd / np.float32(n)
            grad_mean = dy_sums / np.float32(n)
            shifted = dy - grad_mean
            whole = channels - channels % _LANES
            dx = np.empty_like(rows)
            dx[:, :whole] = fma(centered[:, :whole], -k[:whole], shifted[:, :whole], np.float32)
            dx[:, whole:] = shifted[:, whole:] - centered[:, whole:] * k[whole:]
            dx *= invstd
            dx *= w
        else:
            dx = dy * invstd * w
        dx = dx.reshape(shape)
    if needs[1]:
        dw = dot * invstd
    if needs[2]:
        db = dy_sums
    return dx, dw, db
