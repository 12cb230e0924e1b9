"""The arithmetic of PyTorch's CPU kernels for the in-place updates optimizers make, on NumPy arrays.

Optimizers follow PyTorch's single-tensor ("for-loop") implementations operation by operation; for the
trajectories to agree to the last bit in float32, each operation must also round as PyTorch's kernel
does. Measured against torch 2.13 (CPU): a Python-number operand is first rounded to the tensor's dtype;
``add(other, alpha)``, ``lerp`` and ``addcmul`` are fused multiply-adds (one rounding); ``addcdiv`` rounds
after each of its steps. NumPy has no fused multiply-add, so for float32 it is computed in float64 (where
the product of two float32 numbers is exact) and rounded once, a block of elements at a time (``_fma_blocks``):
widening a whole million-parameter tensor to float64 would write and read 8 MB twice, where a block's 512 KB
stays in the core's cache. The one operation that is not matched is
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
    if out.dtype != np.float32:
        return np.add(np.multiply(x, y), z, out=out)
    if _blockable(out, x, y, z):
        return _fma_blocks(x, y, z, out)
    wide = np.multiply(x, y, dtype=np.float64)
    wide += z
    np.copyto(out, wide, casting="unsafe")
    return out


_BLOCK = 65536      # float64 elements: two 512 KB buffers, which stay in a core's L2 cache between the passes


def _is_array(v):
    return isinstance(v, np.ndarray) and v.ndim > 0


def _blockable(out, x, y, z):
    """Whether ``out`` is contiguous, every operand a number or an array of out's shape (no broadcasting), and
    the product has an array in it."""
    same_shape = all(not _is_array(v) or v.shape == out.shape for v in (x, y, z))
    return out.flags.c_contiguous and same_shape and (_is_array(x) or _is_array(y))


def _fma_blocks(x, y, z, out):
    """``fma`` for float32, in float64 one block at a time: the product of two float32 numbers is exact in float64,
    the sum rounds there (as the whole-array computation did), and the block is rounded once to float32. Each
    step is a plain same-dtype NumPy loop (the widening is a copy into the block's buffer), which NumPy runs
    faster than the mixed-dtype loops that would cast as they go."""
    if not _is_array(x):
        x, y = y, x                             # the array first (the product is exact either way)
    x, y, z = (v.reshape(-1) if _is_array(v) else v for v in (x, y, z))
    flat = out.reshape(-1)
    n = flat.size
    wide, other = np.empty(min(n, _BLOCK)), np.empty(min(n, _BLOCK))
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        w = wide[:stop - start]
        np.copyto(w, x[start:stop])
        if _is_array(y):
            np.copyto(other[:stop - start], y[start:stop])
            np.multiply(w, other[:stop - start], out=w)
        else:
            np.multiply(w, y, out=w)
        if _is_array(z):
            np.copyto(other[:stop - start], z[start:stop])
            np.add(w, other[:stop - start], out=w)
        else:
            np.add(w, z, out=w)
        np.copyto(flat[start:stop], w, casting="same_kind")
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
