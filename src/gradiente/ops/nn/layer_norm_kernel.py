"""Layer norm's float32 backward, step for step as PyTorch's CPU kernel computes it
(``layer_norm_backward_frame`` in ``aten/src/ATen/native/cpu/layer_norm_kernel.cpp``, torch 2.13, one thread), so
that a transformer's gradients, and so its training run, round as PyTorch's do. (The forward's statistics are
``core/moments.py``'s.)

For each row of ``N`` values, with ``a = rstd`` and ``scale = 1/N``:

    ds = Σ dy·x·w,  db = Σ dy·w     (``vec::map3_reduce_all``: 8 lanes, as batch norm's sums: ``plane_sums``)
    b = fma(db, mean, −ds)·a·a·a·scale;   c = fma(−b, mean, −(db·a·scale))
    dx = fma(b, x, a·dy·w) + c

and over the rows, in order from zero: ``dw += dy·fma(a, x, −a·mean)`` (fused), ``db_w += dy``. GCC contracts the
products into fused multiply-adds where written so. Without a weight, ``w`` is 1 and its products drop out.
Measured equal to torch 2.13 in every element of dx and dw on rows of 3 to 384 values
(``tests/test_layer_norm_kernel.py``); float64 rounds otherwise (not found here) and keeps the closed form.
"""
import numpy as np

from ...core.blas_order import column_dots_in_order
from ...core.fused import fma
from ...core.summation import down_in_order
from .batch_norm_kernel import plane_sums

__all__ = ["follows_kernel", "backward"]


def follows_kernel(x, weight):
    """Whether this layer norm's backward is computed here: float32 input and weight (or none), some elements."""
    return x.dtype == np.float32 and x.size > 0 and (weight is None or weight.dtype == np.float32)


def backward(grad, x, mean, rstd, weight, needs):
    """``(dx, dw, db)`` of rows ``grad`` and ``x`` ((R, N) float32) with the forward's ``mean`` and ``rstd`` ((R,)),
    ``weight`` (N,) or None; None where ``needs`` (three booleans) says no."""
    f32 = np.float32
    n = x.shape[1]
    a = rstd[:, None]
    dx = dw = db = None
    if needs[0]:
        if weight is None:
            ds = plane_sums(grad * x, fused_tail=(grad, x))
            sum_dy = plane_sums(grad)
        else:
            dy_x = grad * x
            ds = plane_sums(dy_x * weight, fused_tail=(dy_x, np.broadcast_to(weight, x.shape)))
            sum_dy = plane_sums(grad * weight, fused_tail=(grad, np.broadcast_to(weight, x.shape)))
        scale = f32(1) / f32(n)
        b = fma(sum_dy, mean, -ds, f32) * rstd * rstd * rstd * scale
        c = fma(-b, mean, -(sum_dy * rstd * scale), f32)
        first = a * grad if weight is None else a * grad * weight
        dx = fma(b[:, None], x, first, f32) + c[:, None]
    if needs[1] and weight is not None:
        shifted = fma(np.broadcast_to(a, x.shape), x, np.broadcast_to((-rstd * mean)[:, None], x.shape), f32)
        dw = column_dots_in_order(grad, shifted)
    if needs[2]:
        db = down_in_order(grad)
    return dx, dw, db
