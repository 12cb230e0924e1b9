"""The arithmetic of PyTorch's CPU kernels for the in-place updates optimizers make, on NumPy arrays.

Optimizers follow PyTorch's single-tensor ("for-loop") implementations operation by operation; for the
trajectories to agree to the last bit in float32, each operation must also round as PyTorch's kernel
does. Measured against torch 2.13 (CPU): a Python-number operand is first rounded to the tensor's dtype;
``add(other, alpha)``, ``lerp`` and ``addcmul`` are fused multiply-adds (one rounding); ``addcdiv`` rounds
after each of its steps. NumPy has no fused multiply-add, so for float32 it is computed in float64 (where
the product of two float32 numbers is exact) and rounded once. The one operation that is not matched is
``sqrt``: PyTorch's vectorized float32 sqrt is not correctly rounded (it differs from the exact result in
the last bit for about a fifth of inputs), NumPy's is.
"""
import numpy as np

__all__ = ["fma", "add_scaled", "lerp_", "addcmul_", "addcdiv_", "scalar"]


def scalar(value, like):
    """A Python number rounded to ``like``'s dtype, as PyTorch's kernels take it."""
    return like.dtype.type(value)


def fma(x, y, z, out):
    """``out = x * y + z`` rounded once (arrays or numbers already in ``out``'s dtype)."""
    if out.dtype == np.float32:
        wide = np.multiply(x, y, dtype=np.float64)
        wide += z
        np.copyto(out, wide, casting="unsafe")
    else:
        np.add(np.multiply(x, y), z, out=out)
    return out


def add_scaled(a, b, alpha, out=None):
    """``a.add(b, alpha=alpha)``: ``a + alpha * b`` (a fused multiply-add)."""
    if out is None:
        out = np.empty_like(a)
    if alpha == 1:
        return np.add(a, b, out=out)
    return fma(b, scalar(alpha, a), a, out)


def lerp_(a, end, weight):
    """``a.lerp_(end, weight)``: ``a + weight * (end - a)``, from the nearer end when weight >= 0.5."""
    w = scalar(weight, a)
    diff = end - a
    if abs(weight) < 0.5:
        return fma(w, diff, a, a)
    return fma(np.negative(diff), scalar(1, a) - w, end, a)


def addcmul_(a, t1, t2, value):
    """``a.addcmul_(t1, t2, value)``: ``a + (value * t1) * t2`` (the last product fused with the sum)."""
    return fma(scalar(value, a) * t1, t2, a, a)


def addcdiv_(a, t1, t2, value):
    """``a.addcdiv_(t1, t2, value)``: ``a + (value * t1) / t2``, each step rounded."""
    a += (scalar(value, a) * t1) / t2
    return a
