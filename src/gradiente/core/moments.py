"""The mean and variance of each row as PyTorch's CPU layer and group norm compute them: ATen's ``RowwiseMoments``.

A normalization's printed output depends on the last bits of its statistics, and a transformer amplifies them.
PyTorch takes them in one pass, by Welford's update (``m1 += (x - m1)/k``, ``m2 += (x - m1_old)(x - m1)``), not
as a sum divided by the count, and in this order (``aten/src/ATen/native/cpu/moments_utils.h``, torch 2.13, its
AVX2 kernel: the layer norm kernel is not registered for AVX-512, so vectors have 32 bytes on every x86 CPU):

* the row's leading ``n`` whole vectors (8 float32 or 4 float64 lanes), in chunks of 16 vectors: within a chunk,
  each lane takes Welford's update in order, with the weights ``1/k`` rounded to the dtype and both updates fused
  multiply-adds;
* the chunks' moments merged in a cascade (a binary counter: a chunk into level 0, two level-0 sums into level 1,
  ...), then the levels into level 0, each merge as ``AddMomentsVec`` computes it;
* the row's last ``N mod lanes`` elements by the scalar update (the division unfused, the product unfused);
* then each lane merged into those, in order, by the scalar ``AddMoments`` (whose products GCC fuses).

The variance is ``m2 / N``. Every step is a float32 (float64) operation on whole columns of rows at once, so a call
costs a few dozen NumPy operations whatever the number of rows; the chunks' own updates run for all chunks at once.
Measured against torch 2.13: mean and ``rstd`` equal on rows of 3 to 4,100 elements.
"""
import numpy as np

from .fused import complex_product_fuses, exact_sum_to_float32, fma

__all__ = ["rowwise_moments", "LANES"]

#: the lanes of PyTorch's 32-byte vectors, per dtype
LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_CHUNK = 16


def _ceil_log2(m):
    return 1 if m <= 2 else int(m - 1).bit_length()


def _merge(count_add, m1_add, m2_add, count, m1, m2, dtype):
    """``AddMomentsVec``: moments of ``count_add`` values per lane merged into those of ``count``; returns the
    new ``(count, m1, m2)``."""
    total = count + count_add
    c = dtype(0) if total == 0 else dtype(count_add) / dtype(total)
    delta = m1_add - m1
    m2_sum = m2 + m2_add
    c_delta = c * delta
    count_delta = delta * dtype(count)
    return total, m1 + c_delta, fma(count_delta, c_delta, m2_sum, dtype)


def _chunk_moments(chunks, dtype):
    """Welford's update over axis 0 of ``chunks`` (steps, ...): each chunk's ``(m1, m2)``, lane by lane."""
    if complex_product_fuses(dtype):
        return _chunk_moments_in_complex_products(chunks, dtype)
    m1 = np.zeros(chunks.shape[1:], dtype)
    m2 = np.zeros_like(m1)
    for j in range(chunks.shape[0]):
        x = chunks[j]
        delta = x - m1
        weight = dtype(1) / dtype(j + 1)
        if dtype is np.float32:
            wide = delta.astype(np.float64)
            m1 = exact_sum_to_float32(wide * weight, m1)       # (products of float32 numbers: exact in float64)
            m2 = exact_sum_to_float32(wide * (x - m1), m2)
        else:
            m1 = fma(np.full_like(delta, weight), delta, m1, dtype)
            m2 = fma(delta, x - m1, m2, dtype)
    return m1, m2


def _chunk_moments_in_complex_products(chunks, dtype):
    """``_chunk_moments`` with each update one complex product (``fused.complex_product_fuses``): the real part of
    (delta + m1·i)(weight − i) is ``fma(delta, weight, m1)``, and of (delta + m2·i)((x − m1) − i) is
    ``fma(delta, x − m1, m2)``. Each moment lives in the imaginary part of its pair, where the next update reads
    it; the product's real part is the new moment, copied there."""
    complex_dtype = np.dtype(np.complex64 if dtype is np.float32 else np.complex128)
    mean = np.zeros(chunks.shape[1:], complex_dtype)
    square = np.zeros_like(mean)
    factor = np.full_like(mean, -1j)            # real parts: x − m1, each step
    with np.errstate(over="ignore", invalid="ignore"):      # (the imaginary parts, overwritten, may overflow)
        for j in range(chunks.shape[0]):
            x = chunks[j]
            np.subtract(x, mean.imag, out=square.real)                      # delta
            np.copyto(mean.real, square.real)
            np.multiply(mean, dtype(1) / dtype(j + 1) - complex_dtype.type(1j), out=mean)
            np.copyto(mean.imag, mean.real)                                 # m1 += delta / (j + 1)
            np.subtract(x, mean.imag, out=factor.real)
            np.multiply(square, factor, out=square)
            np.copyto(square.imag, square.real)                             # m2 += delta · (x − m1)
    return mean.imag.copy(), square.imag.copy()


def rowwise_moments(rows):
    """``(mean, variance)`` of each row of the C-contiguous float32 or float64 array ``rows`` (R, N), as PyTorch's
    ``RowwiseMoments`` gives them (biased variance), each of shape (R,)."""
    dtype = rows.dtype.type
    r, n_total = rows.shape
    lanes = LANES[rows.dtype]
    n = n_total // lanes                                  # whole vectors per row
    m = -(-n // _CHUNK)                                   # chunks of 16 vectors
    depth = _ceil_log2(m)
    vectors = rows[:, :n * lanes].reshape(r, n, lanes)
    # every chunk's moments at once: the whole chunks, then the last, shorter one
    whole = n // _CHUNK
    chunk_m1, chunk_m2, chunk_counts = [], [], []
    if whole:       # (steps, rows, chunks, lanes), each step's values contiguous
        grouped = np.ascontiguousarray(vectors[:, :whole * _CHUNK].reshape(r, whole, _CHUNK, lanes)
                                       .transpose(2, 0, 1, 3))
        m1s, m2s = _chunk_moments(grouped, dtype)         # (rows, chunks, lanes)
        chunk_m1 += [m1s[:, i] for i in range(whole)]
        chunk_m2 += [m2s[:, i] for i in range(whole)]
        chunk_counts += [_CHUNK] * whole
    if n % _CHUNK:
        m1s, m2s = _chunk_moments(np.ascontiguousarray(vectors[:, whole * _CHUNK:].transpose(1, 0, 2)), dtype)
        chunk_m1.append(m1s)
        chunk_m2.append(m2s)
        chunk_counts.append(n % _CHUNK)
    zeros = np.zeros((r, lanes), dtype)
    counts, m1_stack, m2_stack = [0] * depth, [zeros] * depth, [zeros] * depth
    for i in range(m):
        counts[0], m1_stack[0], m2_stack[0] = _merge(chunk_counts[i], chunk_m1[i], chunk_m2[i], counts[0],
                                                     m1_stack[0], m2_stack[0], dtype)
        mask, level = i + 1, 1
        while level < depth and mask & 1 == 0:            # the cascade: carry a full level up, as a binary count
            counts[level], m1_stack[level], m2_stack[level] = _merge(
                counts[level - 1], m1_stack[level - 1], m2_stack[level - 1], counts[level], m1_stack[level],
                m2_stack[level], dtype)
            counts[level - 1], m1_stack[level - 1], m2_stack[level - 1] = 0, zeros, zeros
            mask >>= 1
            level += 1
    for level in range(1, depth):
        counts[0], m1_stack[0], m2_stack[0] = _merge(counts[level], m1_stack[level], m2_stack[level], counts[0],
                                                     m1_stack[0], m2_stack[0], dtype)
    lane_m1, lane_m2 = m1_stack[0], m2_stack[0]
    # the elements past the whole vectors, one at a time
    count = 0
    m1 = np.zeros(r, dtype)
    m2 = np.zeros(r, dtype)
    for i in range(n * lanes, n_total):
        x = rows[:, i]
        delta = x - m1
        count += 1
        m1 = m1 + delta / dtype(count)
        m2 = m2 + delta * (x - m1)
    # then each lane's moments, in order (AddMoments, its products fused)
    for lane in range(lanes):
        total = count + n
        c = dtype(0) if total == 0 else dtype(n) / dtype(total)
        delta = lane_m1[:, lane] - m1
        m1 = fma(delta, c, m1, dtype)
        m2 = m2 + fma(delta * delta * c, dtype(count), lane_m2[:, lane], dtype)
        count = total
    return m1, m2 / dtype(n_total)
