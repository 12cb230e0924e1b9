"""Group norm's float32 backward, step for step as PyTorch's CPU kernel computes it (``GroupNormBackwardKernelImpl``
in ``aten/src/ATen/native/cpu/group_norm_kernel.cpp``, torch 2.13, a contiguous (N, C, *) input, one thread), so that
a network with ``nn.GroupNorm`` trains as it does in PyTorch. (The forward's statistics are ``core/moments.py``'s.)

For each (sample, channel) row of HW values, ``ds = Σ dy·x`` and ``db = Σ dy`` (``vec::reduce_all``'s 8 lanes:
``plane_sums``); then for each (sample, group) of D channels, with ``s = 1/(D·HW)`` and w the weight (1 without)::

    ds_g = Σ ds·w, db_g = Σ db·w     (the channels' whole vectors of 8 fused into 8 lanes, the lanes added in
                                      order; then of the last D mod 8 channels four at a time, each product
                                      rounded and added in order, and the last D mod 4 fused into the sum)
    c2 = fma(db_g, mean, −ds_g)·rstd·rstd·rstd·s;    c3 = fma(−db_g·rstd, s, −c2·mean);    c1 = rstd·w
    dx = fma(c1, dy, c2·x) + c3

and over the samples, in order from zero: ``dw += fma(−db, mean, ds)·rstd`` (fused), ``db_w += db``. GCC contracts the
products into fused multiply-adds where written so. Measured equal to torch 2.13 in every element of dx, dw and db
(``tests/test_group_norm_kernel.py``); float64 and channels-last inputs keep the closed form.
"""
import numpy as np

from ...core.fused import fma
from ...core.summation import down_in_order
from .batch_norm_kernel import plane_sums

__all__ = ["follows_kernel", "backward"]

_F32 = np.float32
_LANES = 8


def follows_kernel(x, weight):
    """Whether this group norm's backward is computed here: a float32 input with some elements, not laid out channels
    last (PyTorch takes another kernel for that; any other layout it makes contiguous first), and a float32 weight or
    none."""
    channels_last = x.ndim >= 3 and x.shape[1] > 1 and x.strides[1] == x.itemsize and not x.flags.c_contiguous
    return (x.dtype == np.float32 and x.size > 0 and not channels_last
            and (weight is None or weight.dtype == np.float32))


def _group_sums(values, weight):
    """Σ over each group's channels of ``values·weight`` ((N, G, D) and (G, D)), in the kernel's lanes and order."""
    depth = values.shape[2]
    whole = depth - depth % _LANES
    total = np.zeros(values.shape[:2], _F32)
    if whole:
        lanes = np.zeros(values.shape[:2] + (_LANES,), _F32)
        for start in range(0, whole, _LANES):
            block = slice(start, start + _LANES)
            lanes = fma(values[..., block], weight[:, block], lanes, _F32)
        for lane in range(_LANES):
            total = total + lanes[..., lane]
    # the rest, in order: GCC's vector code takes four products at a time (rounded, then added one by one), its
    # scalar code the last ones (each fused into the sum)
    quads = whole + (depth - whole) // 4 * 4
    for channel in range(whole, quads):
        total = total + values[..., channel] * weight[:, channel]
    for channel in range(quads, depth):
        total = fma(values[..., channel], weight[:, channel], total, _F32)
    return total


def backward(grad, x, mean, rstd, weight, groups, needs):
    """``(dx, dw, db)`` of ``grad`` and ``x`` ((N, C, HW) float32) with the forward's ``mean`` and ``rstd`` ((N, G)),
    ``weight`` (C,) or None; None where ``needs`` (three booleans) says no."""
    n, channels, spatial = x.shape
    depth = channels // groups
    ds = plane_sums(grad * x)                           # (N, C)
    db = plane_sums(grad)
    dx = dw = dbias = None
    if needs[0]:
        w = np.ones(channels, _F32) if weight is None else weight
        w_grouped = w.reshape(groups, depth)
        ds_g = _group_sums(ds.reshape(n, groups, depth), w_grouped)
        db_g = _group_sums(db.reshape(n, groups, depth), w_grouped)
        s = _F32(1) / _F32(depth * spatial)
        c2 = fma(db_g, mean, -ds_g, _F32) * rstd * rstd * rstd * s
        c3 = fma(-(db_g * rstd), s, -c2 * mean, _F32)
        c1 = (rstd[:, :, None] * w_grouped).reshape(n, channels, 1)
        per_channel = (n, channels, 1)
        c2, c3 = (np.repeat(v, depth, axis=1).reshape(per_channel) for v in (c2, c3))
        dx = fma(c1, grad, c2 * x, _F32) + c3
    if needs[1] and weight is not None:
        mean_c, rstd_c = (np.repeat(v, depth, axis=1) for v in (mean, rstd))
        dw = np.zeros(channels, _F32)
        for sample in range(n):
            dw = fma(fma(-db[sample], mean_c[sample], ds[sample], _F32), rstd_c[sample], dw, _F32)
    if needs[2]:
        dbias = down_in_order(db)
    return dx, dw, dbias
