"""The arithmetic of PyTorch's CPU kernels for the in-place updates optimizers make, on NumPy arrays.

Optimizers follow PyTorch's single-tensor ("for-loop") implementations operation by operation; for the
trajectories to agree to the last bit in float32, each operation must also round as PyTorch's kernel
does. Measured against torch 2.13 (CPU): a Python-number operand is first rounded to the tensor's dtype;
``add(other, alpha)``, ``lerp`` and ``addcmul`` are fused multiply-adds (one rounding); ``addcdiv`` rounds
after each of its steps. NumPy has no fused multiply-add: for float32, an array times a number plus an array goes
through BLAS's matrix-vector product where this machine's BLAS fuses (``_fma_by_gemv``); otherwise it is
computed in float64 (where the product of two float32 numbers is exact) and rounded once (the rare sum that lands
exactly halfway between two float32 numbers is redone exactly), a block of elements at a time (``_fma_blocks``):
widening a whole million-parameter tensor to float64 would write and read 8 MB twice, where a block's 512 KB
stays in the core's cache. ``sqrt`` (Adam's ``exp_avg_sq.sqrt()`` and its kin) is PyTorch's tensor sqrt, which
is MKL's and not correctly rounded: ``core/vml_sqrt.py`` rounds as it does on the CPUs measured.
"""
import numpy as np

from ..core.fused import fma as exact_fma
from ..core.vml_sqrt import sqrt

__all__ = ["fma", "add_scaled", "lerp_", "addcmul_", "addcdiv_", "scalar", "new_momentum_buffer", "add_into", "sqrt"]


def scalar(value, like):
    """A Python number rounded to ``like``'s dtype, as PyTorch's kernels take it."""
    return like.dtype.type(value)


def fma(x, y, z, out):
    """``out = x * y + z`` rounded once (arrays or numbers already in ``out``'s dtype)."""
    if out.dtype != np.float32:
        return np.add(np.multiply(x, y), z, out=out)
    if _is_array(y) and not _is_array(x):
        x, y = y, x
    if (not _is_array(y) and _is_array(z) and _is_array(x) and x.shape == z.shape == out.shape
            and out.size >= _BLAS_MIN and out.flags.c_contiguous and _blas_fuses()):
        return _fma_by_gemv(x, y, z, out)
    if _blockable(out, x, y, z) and out.size >= _COMPLEX_MAX:
        return _fma_blocks(x, y, z, out)
    # (smaller arrays: fused.fma's complex product, a few NumPy calls where the blocks take a dozen)
    np.copyto(out, exact_fma(x, y, z, np.float32))
    return out


_COMPLEX_MAX = 65536        # elements: from here on the float64 blocks' contiguous passes beat the complex product


# --- array * number + array as a matrix-vector product ------------------------------------------------------
# ``[z x] @ [1, y]`` is, row by row, ``z·1 + x·y``. An optimized BLAS sgemv (OpenBLAS's on x86-64 with FMA, as
# NumPy's wheels ship it) accumulates each row with fused multiply-adds, starting from the first column's exact
# product z·1 = z, so it computes fma(x, y, z) rounded once, in one float32 pass: about twice as fast as the
# float64 blocks below. Whether this machine's BLAS does is checked once, on numbers where fusing changes the
# result, at every length up to a few hundred (vectorized bodies and scalar tails alike) and a few large ones; a
# BLAS that does not fuse leaves every call to the float64 blocks.

_BLAS_MIN = 4096        # below this, the copies into the matrix cost more than the float64 path
_blas_verdict: list = []


def _fma_by_gemv(x, y, z, out):
    columns = np.empty((2, out.size), np.float32)
    np.copyto(columns[0], z.reshape(-1))
    np.copyto(columns[1], x.reshape(-1))
    np.matmul(columns.T, np.array([1, y], np.float32), out=out.reshape(-1))
    return out


def _blas_fuses():
    """True if ``_fma_by_gemv`` rounds once on this machine (decided on the first call, then remembered)."""
    if not _blas_verdict:
        # (1 + 2⁻¹²)² = 1 + 2⁻¹¹ + 2⁻²⁴: rounded to float32 alone it loses the 2⁻²⁴ (a tie, to even), so
        # -1 + that product is 2⁻¹¹ if the product was rounded first and 2⁻¹¹ + 2⁻²⁴ if fused
        a = np.float32(1 + 2.0 ** -12)
        fused = np.float32(2.0 ** -11 + 2.0 ** -24)
        verdict = True
        # (from 2 rows: NumPy hands a one-row product to another routine, and the path is used from _BLAS_MIN on)
        for n in list(range(2, 300)) + list(range(_BLAS_MIN, _BLAS_MIN + 64)) + [65541, 262147]:
            out = np.full(n, np.nan, np.float32)        # the output's old contents must not leak in (beta = 0)
            _fma_by_gemv(np.full(n, a, np.float32), a, np.full(n, -1, np.float32), out)
            if not (out == fused).all():
                verdict = False
                break
        _blas_verdict.append(verdict)
    return _blas_verdict[0]


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
        # a sum rounded to exactly halfway between two float32 numbers may have been on either side of it: those
        # few are computed again, exactly, before the block is written (out may be one of the operands)
        bits = other[:stop - start].view(np.uint64)
        np.bitwise_and(w.view(np.uint64), _LOW_29, out=bits)
        halfway = np.flatnonzero(bits == _HALFWAY)
        if halfway.size:
            redone = exact_fma(*(v[start:stop][halfway] if _is_array(v) else v for v in (x, y, z)), np.float32)
        np.copyto(flat[start:stop], w, casting="same_kind")
        if halfway.size:
            flat[start:stop][halfway] = redone
    return out


_LOW_29, _HALFWAY = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)     # float64 bits below float32's last; halfway


# --- a momentum buffer that is its own matrix ----------------------------------------------------------------
# SGD with momentum adds the buffer to the parameter every step: ``p.add_(buf, alpha=-lr)``, a fused multiply-add.
# ``_fma_by_gemv`` copies both operands into a two-row matrix first; a buffer made as the second row of such a
# matrix (its first row scratch space, one buffer's size more memory) spares one of the copies: a fifth of the
# step's memory traffic. The buffer is an ordinary tensor to everyone else (its ``state_dict`` saves its values
# alone); a buffer made any other way (loaded, or assigned by the user) takes the general path.

def new_momentum_buffer(grad):
    """A copy of ``grad`` for a momentum buffer: the second row of a two-row float32 matrix where ``add_into``
    can use that, else a plain copy."""
    if grad.dtype == np.float32 and grad.size >= _BLAS_MIN and grad.flags.c_contiguous and _blas_fuses():
        pair = np.empty((2, grad.size), np.float32)
        np.copyto(pair[1], grad.reshape(-1))
        return pair[1].reshape(grad.shape)
    return np.array(grad, copy=True)


def add_into(param, other, alpha):
    """``param.add_(other, alpha=alpha)`` (rounded once): through the matrix ``other`` lives in when it is a
    ``new_momentum_buffer``, else ``add_scaled``."""
    pair = other.base
    if (pair is not None and pair.shape == (2, other.size) and pair.dtype == param.dtype == np.float32
            and other.ctypes.data == pair[1].ctypes.data and param.size == other.size and param.flags.c_contiguous
            and alpha != 1):
        np.copyto(pair[0], param.reshape(-1))
        np.matmul(pair.T, np.array([1, alpha], np.float32), out=param.reshape(-1))
        return param
    return add_scaled(param, other, alpha, out=param)


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
