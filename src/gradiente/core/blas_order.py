"""float32 matrix products added in the order of PyTorch's BLAS (Intel MKL), so that they round as PyTorch's do.

A matrix product sums k products for each output. Both BLAS libraries here (OpenBLAS under NumPy, MKL under
PyTorch's x86-64 wheels) add them in order with fused multiply-adds, one output per vector lane, and so agree
exactly while k is small. For a long sum MKL works through k in blocks, each block's product added to the
output in turn, where OpenBLAS takes it in one pass: the results then differ in the last bit of nine outputs in
ten, a training run drifts apart from PyTorch's a step at a time, and a learner comparing printed losses sees it.

Measured against torch 2.13 (``tests/test_kernel_order.py``), MKL's float32 kernels on an AVX-512 CPU with 1-1.25
MiB of L2 cache per core block k as follows (on cores with 2 MiB, see "MKL's blocks on a core with 2 MiB" below):
up to 192 in one block; from 193 to 383, two halves of ⌊k/2⌋ (and a last single column when k is
odd); from 384 on, blocks of 192 and the rest. An ``addmm`` (``nn.Linear``'s bias plus product) starts from the
bias and adds each block's product to it. OpenBLAS computes each block exactly as MKL does (for a few small shapes a
transposed operand, as ``nn.Linear``'s weight is, takes another of its kernels, and is copied first), so NumPy,
given the blocks one at a time, reproduces MKL's result. This holds for the outputs of at least four rows whose
column count leaves more than 8 or no columns after its multiples of 16 (12-16, 25-32, 41-48, ...); the kernels
MKL picks for the other shapes add in orders not known here, and those products are computed in one pass as
before.
"""
import os
import warnings

import numpy as np

from .cpu_flags import cpu_flags
from .fused import fma
from .layouts import storage_offset
from .meta import shapes_from

__all__ = ["matmul", "bmm", "dot", "k_blocks", "contiguous", "order_known", "chained", "column_dots_in_order", "BLOCK"]

# --- which CPU's blocking ----------------------------------------------------------------------------------------
# MKL sizes its blocks to the CPU's caches, so the same PyTorch wheel adds in another order on another CPU. Two have
# been measured against torch 2.13 (one thread):
# * cores with 1-1.25 MiB of L2 cache (as Skylake-SP to Ice Lake servers have): blocks of 192, and for fewer than 12
#   columns, one row or one column, the kernels described further down;
# * cores with 2 MiB (Sapphire and Emerald Rapids): blocks of 384, each added in order from zero with fused
#   multiply-adds, for most shapes of at least two rows and two columns, and the dot-product and matrix-vector
#   kernels described with ``_large_l2_blocks``.
# The L2 size picks one; ``GRADIENTE_MKL_BLOCK=192`` or ``384`` overrides it, for a CPU that does otherwise.
_LARGE_L2 = 2 << 20


def _cpu_l2_bytes(caches="/sys/devices/system/cpu/cpu0/cache"):
    """The L2 cache of one core, in bytes, as Linux describes it; 0 where it does not."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        for index in sorted(name for name in os.listdir(caches) if name.startswith("index")):
            with open(os.path.join(caches, index, "level")) as level:
                if level.read().strip() != "2":
                    continue
            with open(os.path.join(caches, index, "size")) as size:
                text = size.read().strip()
            return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    except (OSError, ValueError):
        pass
    return 0


def _measured_blocking():
    chosen = os.environ.get("GRADIENTE_MKL_BLOCK", "")
    if chosen in ("192", "384"):
        return int(chosen)
    if chosen:
        warnings.warn(f"GRADIENTE_MKL_BLOCK={chosen!r} ignored: MKL's orders are known for blocks of 192 and 384",
                      stacklevel=2)
    return 384 if _cpu_l2_bytes() >= _LARGE_L2 else 192


BLOCK = _measured_blocking()
_BLOCK = 192


def k_blocks(k, rows=0, columns=0, b_transposed=False):
    """The bounds of MKL's blocks along a sum of ``k`` products: [0, ..., k] (the shape of the product and the
    layout of ``b`` matter for the blocks of 384)."""
    if BLOCK == _LARGE_BLOCK:
        return _large_l2_blocks(k, rows, columns, b_transposed)
    if k <= _BLOCK:
        return [0, k]
    if k < 2 * _BLOCK:
        half = k // 2
        return [0, half, 2 * half] + ([k] if 2 * half < k else [])
    return list(range(0, k, _BLOCK)) + [k]


# --- MKL's blocks on a core with 2 MiB of L2 cache ------------------------------------------------------------------
# Probed as below (FPRev's method) for every layout: up to 384 products in one block; a product of at least 192
# columns, and (unless ``b`` is transposed) 192 rows, takes blocks of 384 and the rest, halving a k under 768; any
# other takes blocks of 384 while 768 or more are left, then the rest in one block, or in two halves (the larger
# first) when more than 384 are left. Each block adds its products in order from zero, fused; the blocks are added
# one after another, a bias after the first (a single product is fused into the bias). Measured equal to torch 2.13
# element by element over a grid of shapes and layouts (``tests/test_kernel_order.py``).
#
# One row times a row-major ``b`` of 2-15 columns adds its products in order, fused, over the whole of k; so does
# its transpose, ``Xᵀ @ g`` for a single column ``g`` (the weight's gradient of ``Linear(n, 1)``), and a product
# of a single output, ``aᵀ @ g`` (the weight's gradient of ``Linear(1, 1)``), measured for k from 7 to 5000.
#
# A single column (``Linear(k, 1)``) or a single row times a transposed ``b`` (one sample through ``Linear``) is a
# matrix-vector product: each dot product (of the matrix's rows in whole groups of four; the 1-3 rows after them
# take steps not known here, and NumPy's product) starts from its first product, goes on in 16 lanes (lane 0 from
# that first product) over the whole 16-wide vectors that follow, fused, the lanes' halves added pairwise; the 1-15
# products left then take 8 lanes if 8 or more are left, else 4, lane 0 starting from the sum so far, fused, except
# that a last partial vector after a whole one is added rounded; the halves again; the bias last.
#
# Up to 15 rows times a transposed ``b`` (``x @ W.T`` for a small batch) whose k is at least 24 per row take a
# dot-product kernel instead: 16 lanes, lane j adding products j, j+16, j+32, ... in order, fused; the lanes then
# added as ((l0 + l4) + l8) + l12 for each of l0-l3, and those four as (q0 + q1) + (q2 + q3); the bias last. Below
# 24 per row they take the blocks, measured for 4 or more columns and k of 16 or more (not known otherwise).
_LARGE_BLOCK = 384
_DOT_KERNEL_ROWS = 15
_DOT_K_PER_ROW = 24
_DOT_LANES = 16


def _large_l2_blocks(k, rows, columns, b_transposed):
    if k <= _LARGE_BLOCK:
        return [0, k]
    bounds = [0]
    large = columns >= 192 and (b_transposed or rows >= 192)
    left = k
    while left >= 2 * _LARGE_BLOCK or (large and left > _LARGE_BLOCK and k >= 2 * _LARGE_BLOCK):
        bounds.append(bounds[-1] + _LARGE_BLOCK)
        left -= _LARGE_BLOCK
    if left > _LARGE_BLOCK:
        bounds.append(bounds[-1] + (left + 1) // 2)
    return bounds + [k]


def _b_transposed(b):
    return b.strides[-2] < b.strides[-1]


def _large_l2_known(a, b, b_transposed=None):
    rows, k, columns = a.shape[-2], a.shape[-1], b.shape[-1]
    b_transposed = _b_transposed(b) if b_transposed is None else b_transposed
    if rows < 2 or columns < 2 or k == 0:
        return False
    if b_transposed and rows <= _DOT_KERNEL_ROWS:
        # (measured with the rows of ``a`` contiguous along k; a stack adds each pair the same way, as ``bmm`` does)
        return a.ndim == b.ndim and a.strides[-1] == a.itemsize and (
            _takes_dot_kernel(rows, k) or (k >= 16 and columns >= 4))
    return True


def _takes_dot_kernel(rows, k):
    return rows <= _DOT_KERNEL_ROWS and k >= _DOT_K_PER_ROW * rows


def _large_l2_vector_product(a, b):
    """The matrix and the vector of a product that is a matrix-vector product with its rows contiguous along k
    (fewer than four rows only where their order is known, k ≤ 32: a single output, as ``aᵀ @ g`` gives it, when
    ``b`` is a transposed row)."""
    if a.ndim == b.ndim == 2 and a.shape[-1] > 1:
        short = a.shape[-1] <= _LEFTOVER_MOST
        if b.shape[1] == 1 and (a.shape[0] >= 4 or (short and a.shape[0] >= 2)) and a.strides[1] == a.itemsize:
            return a, b[:, 0]
        if a.shape[0] == 1 and (b.shape[1] >= 4 or short) and b.strides[0] == b.itemsize and _b_transposed(b):
            return b.T, a[0]
    return None


def _large_l2_single_row(a, b):
    """One row times a row-major matrix of 2 or more columns (the weight's gradient of ``Linear(k, n)`` for one
    sample, ``x @ w`` for one row; transposed, ``Linear(k, 1)``'s weight gradient ``gᵀ @ x``): ``_row_times_rows``."""
    return a.ndim == b.ndim == 2 and a.shape[0] == 1 and b.shape[1] >= 2 and b.strides[1] == b.itemsize


# One row ``g`` times a row-major ``x`` (k rows): the columns past the last multiple of 16 (all of them below 16), and
# every column when k < 8, add their products in order, fused. The others (whole 16-wide vectors) take the rows in
# blocks of 8, with ``pair(a, b) = fma(g_a, x_a, g_b·x_b)``: the first block (pair(0, 2) + pair(1, 3)) + (pair(4, 6)
# + pair(5, 7)); each further block fuses in row 6, then row 4, adds pair(5, 7), then pair(0, 2) + pair(1, 3); the
# rows after the last block are fused in one after another. Probed as above (FPRev's method for the sums, every
# choice of fusion tried for the rest) and measured equal to torch 2.13 for k from 2 to 200.

def _row_times_rows(g, x):
    """``g @ x`` for a vector ``g`` (k,) and a row-major ``x`` (k, n), in the order above: (n,)."""
    k, n = x.shape
    whole = n // 16 * 16 if k >= 8 else 0
    out = np.empty(n, np.float32)
    if whole < n:
        out[whole:] = chained(g[None, :], x[:, whole:])[0]
    if not whole:
        return out
    x = x[:, :whole]

    def pair(first, second):
        return fma(g[first], x[first], g[second] * x[second], np.float32)

    total = (pair(0, 2) + pair(1, 3)) + (pair(4, 6) + pair(5, 7))
    blocks = k // 8 * 8
    for base in range(8, blocks, 8):
        total = fma(g[base + 6], x[base + 6], total, np.float32)
        total = fma(g[base + 4], x[base + 4], total, np.float32)
        total = total + pair(base + 5, base + 7)
        total = total + (pair(base, base + 2) + pair(base + 1, base + 3))
    for row in range(blocks, k):
        total = fma(g[row], x[row], total, np.float32)
    out[:whole] = total
    return out


def _large_l2_matrix_vector(matrix, vector):
    """``matrix @ vector`` (rows contiguous along k) in the order above for the rows in groups of four, and for the
    1-3 rows after them in the order below (where k is at most 32; NumPy's beyond)."""
    k = matrix.shape[1]
    grouped = matrix.shape[0] - matrix.shape[0] % 4
    if k < 2 or (not grouped and k > _LEFTOVER_MOST):
        return np.matmul(matrix, vector)
    out = np.empty(matrix.shape[0], np.result_type(matrix, vector))
    leftover = matrix[grouped:]
    out[grouped:] = _leftover_row_dots(leftover, vector) if k <= _LEFTOVER_MOST else np.matmul(leftover, vector)
    if not grouped:
        return out
    matrix = matrix[:grouped]
    whole = 1 + (k - 1) // _DOT_LANES * _DOT_LANES          # the first product and the 16-wide vectors
    total = _fused_lanes(matrix, vector, [0] + list(range(1, whole, _DOT_LANES)), 1, whole, _DOT_LANES)
    if whole < k:
        left = k - whole
        lanes = 8 if left >= 8 else 4
        partial_from = whole + left // lanes * lanes if left > lanes else k
        total = _fused_lanes(matrix, vector, [], whole, partial_from, lanes, start_from=total,
                             rounded=range(partial_from, k))
    out[:grouped] = total
    return out


# The rows of a matrix-vector product after its groups of four (and all of them when there are fewer than four):
# each a dot product whose products 1 to k-1 fill 4 lanes (k-1 ≤ 8), 8 (≤ 16) or 16 (k ≤ 32) by their index modulo
# the lanes, at most two to a lane (added rounded; fused for 16 lanes), the lanes' halves added pairwise, and product
# 0 added last. Probed as above and measured equal to torch 2.13 for k from 2 to 32 (a batch of 2-3 or 4n + 1-3
# samples through ``Linear(k, 1)``; one sample through ``Linear(k, n)`` for n not a multiple of four).
_LEFTOVER_MOST = 32


def _leftover_row_dots(rows, vector):
    return _in_lanes(rows, vector[:, None], first=1)[:, 0] + rows[:, 0] * vector[0]


def _in_lanes(a, b, first=0):
    """``a[:, first:] @ b[first:]`` (a (m, k), b (k, n)) in 4, 8 or 16 lanes, as the number of products asks (up to
    8, 16, 32): product t in lane t mod lanes, at most two to a lane, the second added rounded (fused for 16 lanes),
    then the lanes' halves added pairwise (the lane kernel above, and the matrix-vector rows after the groups)."""
    k = a.shape[1]
    count = k - first
    lanes = 4 if count <= 8 else 8 if count <= 16 else 16
    products = a[:, None, :] * b.T[None, :, :]                    # (m, n, k), each rounded
    sums = np.zeros((lanes,) + products.shape[:2], np.float32)
    seconds = []
    for position in range(first, k):
        lane = position % lanes
        if position - lanes < first:                              # (the lane's first product)
            sums[lane] = products[..., position]
        else:
            seconds.append(position)
    for position in seconds:
        lane = position % lanes
        if lanes == 16:
            sums[lane] = fma(a[:, None, position], b.T[None, :, position], sums[lane], np.float32)
        else:
            sums[lane] += products[..., position]
    return _halves_added(sums)


# --- MKL's sdot (``torch.dot``, and ``@`` of two vectors) --------------------------------------------------------
# Probed as above, on an AVX-512 CPU: 16 lanes; the whole 16-wide vectors go to four accumulators in turn (vector
# j to accumulator j mod 4) while four or more are left, then two to accumulators 0 and 1, then one to 0; the last
# 1-15 products (a masked vector) are fused into accumulator 0 too; each accumulator starts from its first vector's
# rounded products and fuses the others in; then (a0 + a1) + (a2 + a3), the lanes' halves (j + j+8, j + j+4), and
# the last four as (l0 + l1) + (l2 + l3). Measured equal to torch 2.13 for every length from 1 to 200 and longer
# ones (``tests/test_kernel_order.py``). Taken on CPUs with AVX-512 (MKL's 16-lane kernel); elsewhere NumPy's.

@shapes_from(np.dot)
def dot(a, b):
    """``a · b`` of two float32 vectors in the order above (other dtypes, or a CPU without AVX-512: NumPy's)."""
    if not (a.dtype == b.dtype == np.float32 and a.ndim == b.ndim == 1 and _SIXTEEN_LANES):
        return np.dot(a, b)
    k = a.shape[0]
    whole = k // 16
    vectors_a, vectors_b = a[:whole * 16].reshape(whole, 16), b[:whole * 16].reshape(whole, 16)
    sums: list = [None] * 4

    def take(slot, x, y):
        sums[slot] = x * y if sums[slot] is None else fma(x, y, sums[slot], np.float32)

    taken = 0
    while whole - taken >= 4:
        for slot in range(4):
            take(slot, vectors_a[taken + slot], vectors_b[taken + slot])
        taken += 4
    for slot in range(2 if whole - taken >= 2 else 1 if whole - taken == 1 else 0):
        take(slot, vectors_a[taken + slot], vectors_b[taken + slot])
    if whole - taken == 3:
        take(0, vectors_a[taken + 2], vectors_b[taken + 2])
    left = k - whole * 16
    if left:
        tail_a, tail_b = np.zeros(16, np.float32), np.zeros(16, np.float32)
        tail_a[:left], tail_b[:left] = a[whole * 16:], b[whole * 16:]
        if sums[0] is None:
            sums[0] = tail_a * tail_b
        else:
            sums[0] = sums[0].copy()
            sums[0][:left] = fma(tail_a[:left], tail_b[:left], sums[0][:left], np.float32)
    zeros = np.zeros(16, np.float32)
    lanes = ((zeros if sums[0] is None else sums[0]) + (zeros if sums[1] is None else sums[1])) + \
        ((zeros if sums[2] is None else sums[2]) + (zeros if sums[3] is None else sums[3]))
    lanes = lanes[:8] + lanes[8:]
    lanes = lanes[:4] + lanes[4:]
    return np.float32((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))


_SIXTEEN_LANES = "avx512f" in cpu_flags() or os.environ.get("GRADIENTE_MKL_SDOT") == "1"


# A few rows times a transposed ``b`` of 2 to 11 columns (``x @ W.t()`` of a small ``Linear`` on a small batch) take
# another kernel, probed as above: each output a dot product in 4 lanes (k ≤ 8), 8 (k ≤ 16) or 16 (k ≤ 31), lane j
# adding products j and j + lanes (rounded, then added: fused for 16 lanes), the lanes' halves added pairwise, the
# bias last. It takes 2 columns and up to 15 rows, 3 columns and up to 10 rows (k up to 31 for both), or 4 to 11
# columns, fewer rows than columns and k no larger than the columns. Measured equal to torch 2.13 in every element
# over that region and its edges.

def _takes_lane_dots(a, b):
    if not (a.ndim == b.ndim == 2 and a.strides[1] == a.itemsize and _b_transposed(b) and b.strides[0] == b.itemsize):
        return False
    rows, k, columns = a.shape[0], a.shape[1], b.shape[1]
    if rows < 2 or not 1 <= k <= 31:
        return False
    return (columns == 2 and rows <= 15) or (columns == 3 and rows <= 10) or \
        (4 <= columns <= 11 and rows < columns and k <= columns)


def _fused_lanes(matrix, vector, lane_zero, start, stop, lanes, start_from=None, rounded=()):
    """A vector loop's sum: ``lanes`` lanes over products [start, stop), lane j chaining products start + j,
    start + j + lanes, ... (lane 0: ``lane_zero``'s, or ``start_from`` then its own), fused; then the ``rounded``
    products added to their lanes unfused; the lanes' halves added pairwise."""
    rows = matrix.shape[0]
    sums = []
    for lane in range(lanes):
        positions = list(range(start + lane, stop, lanes))
        if lane == 0 and lane_zero:
            positions = lane_zero
        columns, terms = matrix[:, positions], vector[positions]
        if lane == 0 and start_from is not None:
            columns = np.column_stack([start_from, columns])       # (start_from · 1 is exact)
            terms = np.concatenate([np.ones(1, vector.dtype), terms])
        sums.append(chained(columns, terms[:, None])[:, 0] if terms.size else np.zeros(rows, matrix.dtype))
    for position in rounded:
        lane = (position - start) % lanes
        sums[lane] = sums[lane] + matrix[:, position] * vector[position]
    return _halves_added(np.stack(sums))


def _dot_kernel(a, b):
    """``a @ b`` as the dot-product kernel above adds it: each lane an in-order chain (``chained`` over every 16th
    product), the lanes added as a tree."""
    k = a.shape[-1]
    shape = a.shape[:-1] + b.shape[-1:]
    lanes = [chained(a[..., lane::_DOT_LANES], b[..., lane::_DOT_LANES, :]) if lane < k else np.zeros(shape, a.dtype)
             for lane in range(_DOT_LANES)]
    quarters = [((lanes[q] + lanes[q + 4]) + lanes[q + 8]) + lanes[q + 12] for q in range(4)]
    return np.ascontiguousarray((quarters[0] + quarters[1]) + (quarters[2] + quarters[3]))


def _large_l2_matmul(a, b, initial):
    """``a @ b`` (+ ``initial``) in the blocks above, each added in order (``np.matmul`` where OpenBLAS adds in
    order, else ``chained``)."""
    rows, k, columns = a.shape[-2], a.shape[-1], b.shape[-1]
    if k == 1 and initial is not None:
        return fma(a, b, initial, np.float32)
    if _b_transposed(b) and _takes_dot_kernel(rows, k):
        product = _dot_kernel(a, b)
        return product if initial is None else product + initial
    bounds = _large_l2_blocks(k, rows, columns, _b_transposed(b))
    in_order = columns % 16 == 0 or columns % 16 > 8
    if in_order:
        a, b = _in_blas_layout(a, b, bounds)
    return _sum_of_blocks(np.matmul if in_order else _chained_stack, a, b, initial, bounds)


def _sum_of_blocks(product, a, b, initial, bounds):
    """Σ over the blocks (``bounds`` along k) of ``product`` of the operands' blocks, one after another from the
    first, ``initial`` (a bias) added after the first."""
    total = None
    for start, stop in zip(bounds[:-1], bounds[1:]):
        part = product(a[..., start:stop], b[..., start:stop, :])
        if total is None:
            total = part
            if initial is not None:
                total += initial
        else:
            total += part
    return total


def _chained_stack(a, b):
    """``chained`` for matrices or stacks of them (broadcast), laid out in rows as a product is (a transposed result
    would make a later ``reshape`` copy, and record another node than PyTorch's)."""
    if a.ndim == b.ndim == 2:
        return np.ascontiguousarray(chained(a, b))
    stack = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, stack + a.shape[-2:]), np.broadcast_to(b, stack + b.shape[-2:])
    return np.ascontiguousarray(chained(a, b))


# --- MKL's kernel for at most 11 columns, ``x @ W.T`` (every classifier's last Linear) ----------------------------
# Found by probing the order of additions (FPRev's method: one row of ones, a huge value at one position and its
# negative at another; the result counts the ones that survive, which is the number outside the smallest subtree
# holding both positions): each output is a dot product along k, both operands contiguous in k, computed as
#
# * the products rounded (no fused multiply-add);
# * scalars first, one after another from zero, until the row of ``x`` reaches a 16-byte boundary in memory (0 to 3
#   of them, by the row's offset in its storage; a tensor's storage starts 64-byte aligned);
# * then vectors: 4 lanes for the columns in the groups of four, 8 lanes for the 1 to 3 columns left over, each lane
#   adding its products in order, lane 0 starting from the scalars' sum;
# * the lanes added as a vector's halves are: (l0 + l2) + (l1 + l3), or ((l0 + l4) + (l2 + l6)) + ((l1 + l5) +
#   (l3 + l7)); then the products that fill no vector, one after another; then the bias.
#
# Measured against torch 2.13 (one thread) for 2 to 11 columns, any k and any number of rows above one, and for
# two or three rows with any number of columns: every element equal (``tests/test_kernel_order.py``). A single row
# or a single column is a matrix-vector product (below).
_NARROW = 12
_PRODUCTS = 1 << 22     # the most products a narrow kernel's emulation holds at once (16 MB)
_add_accumulate = np.add.accumulate         # (adds along an axis one element after another)
_SHORT_SUM = 3          # (and for stacks of products, a sum of at most 3 terms: in order, the bias last)


def _narrow_columns(a, b, initial):
    """``a @ b`` (float32, ``a`` (m, k) and ``b`` (k, n) both contiguous along k, m >= 2, 2 <= n < 12) in the
    order above, plus ``initial`` last."""
    m, k = a.shape
    n = b.shape[1]
    row_offsets = (storage_offset(a) + np.arange(m) * (a.strides[0] // a.itemsize)) % 4
    out = np.empty((m, n), np.float32)
    grouped = n - n % 4
    for offset in np.unique(row_offsets):
        rows = slice(None) if offset == row_offsets[0] and (row_offsets == offset).all() else row_offsets == offset
        scalars = min((4 - int(offset)) % 4, k)
        # the products laid out (k, columns, rows): every step below adds whole contiguous planes, and NumPy's
        # multiplication runs along the rows (a long inner loop: twice as fast as along the few columns)
        rows_t = np.ascontiguousarray(a[rows].T)[:, None, :]
        if grouped:
            products = np.multiply(rows_t, b[:, :grouped, None], order="C")
            out[rows, :grouped] = _lanes_then_tail(products, scalars, 4).T
        if grouped < n:
            products = np.multiply(rows_t, b[:, grouped:, None], order="C")
            out[rows, grouped:] = _lanes_then_tail(products, scalars, 8).T
    if initial is not None:
        out += initial
    return out


def _halves_added(lanes):
    """A vector's lanes (the first axis) added as its halves are: l0 + l4, l1 + l5, ...; then l0 + l2, l1 + l3; ..."""
    while lanes.shape[0] > 1:
        half = lanes.shape[0] // 2
        lanes = lanes[:half] + lanes[half:]
    return lanes[0]


def _lanes_then_tail(products, scalars, lanes, stride=None):
    """Σ over the first axis of ``products`` (k, ...): ``scalars`` in order, then ``lanes``-wide vectors
    (lane 0 from the scalars' sum) over the longest stretch that is a multiple of ``stride`` (``lanes`` unless the
    loop takes two vectors at a time), the lanes' halves added pairwise, then the tail in order."""
    k = products.shape[0]
    vectors = (k - scalars) // (stride or lanes) * (stride or lanes) // lanes
    end = scalars + vectors * lanes
    total = np.add.reduce(products[:scalars], axis=0) if scalars else None     # (NumPy adds these planes in order)
    if vectors:
        head = products[scalars:end]
        if total is not None:
            head = head.copy()
            head[0] += total                                  # lane 0 starts from the scalars' sum
        lane = np.add.reduce(head.reshape((vectors, lanes) + head.shape[1:]), axis=0)     # each lane in order
        total = _halves_added(lane)
    for step in range(end, k):
        total = products[step] if total is None else total + products[step]
    return total


# --- MKL's kernel for at most 11 columns of a row-major ``b`` ---------------------------------------------------
# (``x @ w`` with w (k, n), as code written from scratch multiplies, and the gradient ``h.T @ grad`` of such a w)
# Probed the same way: every output adds its products rounded, one after another from zero, except the first
# outputs of a row of the result that does not start on a 16-byte boundary, when at least 4 outputs follow the
# boundary: those (the kernel's scalar lead-in) add each block of 8 products as 4 one after another, then the next
# 4 summed on their own and added (a block's last 1-3 products one after another). Measured for 2 to 11 columns and
# any number of rows, and for two or three rows of any width (a single column is a matrix-vector product, below).

def _narrow_row_major(a, b):
    """``a @ b`` for ``b`` (k, n) row-major, n < 12, and ``a`` (m, k) row-major or transposed (a weight's gradient,
    ``h.T @ grad``: the same kernel), in the order above."""
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), np.float32)
    chunk = max(1, _PRODUCTS // (k * n))          # rows at a time, so that their products stay small
    for start in range(0, m, chunk):
        # (k, n, rows): NumPy multiplies along the rows, and adds the planes of the first axis in order (+ 0 makes
        # a sum of -0.0 +0.0, as a sum from 0 is)
        products = np.multiply(np.ascontiguousarray(a[start:start + chunk].T)[:, None, :], b[:, :, None], order="C")
        out[start:start + chunk] = (np.add.reduce(products, axis=0) + np.float32(0)).T
    lead = (4 - (np.arange(m) * n) % 4) % 4              # outputs before each result row's 16-byte boundary
    lead[n - lead < 4] = 0
    rows, columns = np.nonzero(np.arange(n)[None, :] < lead[:, None])
    if rows.size:
        products = a[rows] * b[:, columns].T                  # (outputs, k), each product rounded
        whole = k // 8 * 8
        blocks = products[:, :whole].reshape(rows.size, -1, 8)
        fours = _add_accumulate(blocks[:, :, 4:], axis=-1)[:, :, -1:]     # each block's second four, on their own
        steps = np.concatenate([blocks[:, :, :4], fours], axis=-1).reshape(rows.size, -1)
        steps = np.concatenate([steps, products[:, whole:]], axis=1)   # a last block's products one by one
        total = _add_accumulate(steps, axis=1)[:, -1] + np.float32(0)
        out[rows, columns] = total
    return out


# --- MKL's matrix-vector products --------------------------------------------------------------------------------
# A single row times a row-major matrix (a sample through ``x @ w``; ``grad.T @ x`` or ``x.T @ grad``, the weight
# gradient of a ``Linear(k, 1)``) adds each output's products rounded, one after another. A matrix times a vector,
# both contiguous along k (``Linear(k, 1)``'s forward, and a single sample through ``Linear``, whose weight's rows
# are then the matrix), takes the rows in groups of four: 1 to 4 products one after another, as many as bring the
# group's last row to a 16-byte boundary, into lane 0; then 4-lane vectors, their halves, the tail. The 1 to 3 rows
# after the last group take 8 lanes, 4 for the second of them (measured on a 16-byte boundary; off it, their steps
# are not known here and NumPy's product stands in).

def _row_times_row_major(a, b):
    """``a @ b`` for a single row ``a`` (1, k) and a row-major ``b`` (k, n): products rounded, added in order (+ 0:
    a sum from 0 is never -0.0)."""
    return _unfused_in_order(a, b, None) + np.float32(0)


def _matrix_vector(matrix, vector):
    """``matrix @ vector`` (float32, (m, k) and (k,), both contiguous along k) in MKL's order where it is known:
    every row in a whole group of four, and the rows after them that start on a 16-byte boundary; the rest NumPy's."""
    m, k = matrix.shape
    out = np.matmul(matrix, vector)
    offsets = storage_offset(matrix) + np.arange(m) * (matrix.strides[0] // 4)
    grouped = m - m % 4
    # (scalars first, lanes, the loop's step) for each row: a group's rows count their scalars to the group's last
    # row's boundary; the rows after the groups, on a boundary, take 4 scalars, then 8 lanes (4 lanes, two vectors
    # at a time, for the second of them)
    kinds = [(4 - int(offsets[r // 4 * 4 + 3]) % 4, 4, 4) for r in range(grouped)]
    kinds += [(4, 8 if j % 2 == 0 else 4, 8) if offsets[grouped + j] % 4 == 0 else (0, 0, 0)
              for j in range(m - grouped)]
    for kind in set(kinds) - {(0, 0, 0)}:                  # ((0, 0, 0): a row whose steps are not known)
        rows = np.array([r for r, other in enumerate(kinds) if other == kind])
        scalars, lanes, stride = kind
        products = np.multiply(matrix[rows].T, vector[:, None], order="C")[:, :, None]   # (k, rows, 1), rounded
        out[rows] = _lanes_then_tail(products, min(scalars, k), lanes, stride)[:, 0]
    return out


def _unfused_in_order(a, b, initial):
    shape = np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    total = np.empty(shape, np.result_type(a, b))            # (laid out in rows, as a product is)
    np.multiply(a[..., :, :1], b[..., :1, :], out=total)
    for step in range(1, a.shape[-1]):
        total += a[..., :, step:step + 1] * b[..., step:step + 1, :]
    if initial is not None:
        total += initial
    return total


def _known_head(a, b, initial):
    """The product of a width that leaves 1 to 8 columns past a multiple of 16: MKL adds every column's sums as
    ``k_blocks`` says, each block in order from zero with fused multiply-adds, the blocks (and the bias, after the
    first) one after another. OpenBLAS's kernel for the leading columns adds in that order; its kernel for the last
    few columns does not, so those are ``chained`` block by block (measured for every layout of the operands)."""
    head = b.shape[-1] - b.shape[-1] % 16
    bias = None if initial is None else np.broadcast_to(initial, a.shape[:-1] + b.shape[-1:])
    out = np.empty(a.shape[:-1] + b.shape[-1:], np.float32)
    out[..., :head] = matmul(a, b[..., :head], None if bias is None else bias[..., :head])
    if a.ndim != 2 or b.ndim != 2:
        # A stack (attention's scores, which PyTorch's kernel multiplies transposed, so its columns are other
        # columns): the last columns of NumPy's whole product, which agree with PyTorch's there.
        whole = np.matmul(a, b)
        out[..., head:] = whole[..., head:] if bias is None else whole[..., head:] + bias[..., head:]
        return out
    tail = None
    bounds = k_blocks(a.shape[-1])
    for start, stop in zip(bounds[:-1], bounds[1:]):
        part = chained(a[:, start:stop], b[start:stop, head:])
        tail = part if tail is None else tail + part
        if start == 0 and bias is not None:
            tail = tail + bias[:, head:]
    out[:, head:] = tail
    return out


def same_order_laid_out_in_rows(a, b):
    """Whether ``a @ b`` with a transposed ``b`` copied into rows first is the product in the same known order (a
    recurrent layer copies its weight's transpose once for all its steps)."""
    if BLOCK == _LARGE_BLOCK:
        k, rows, columns = a.shape[-1], a.shape[-2], b.shape[-1]
        return (_large_l2_known(a, b) and _large_l2_known(a, b, b_transposed=False)
                and not (_b_transposed(b) and _takes_dot_kernel(rows, k))
                and k_blocks(k, rows, columns, _b_transposed(b)) == k_blocks(k, rows, columns, False))
    return order_known(a, b)


def order_known(a, b):
    """Whether MKL's kernel for this product is one whose order ``k_blocks`` describes."""
    if BLOCK == _LARGE_BLOCK:
        return _large_l2_known(a, b)
    rows, columns = a.shape[-2], b.shape[-1]
    return rows >= 4 and columns >= 12 and (columns % 16 == 0 or columns % 16 > 8)


# --- copying a transposed operand ------------------------------------------------------------------------------
# A weight's transpose (``nn.Linear`` multiplies by ``W.T``) is copied before each product above. NumPy copies it
# element by element down the source's columns; when a source row is a power-of-two number of bytes long (512
# floats: 2 KB), every element read down a column falls into the same few sets of the CPU's cache, which evict one
# another, and the copy runs at a fifth of its speed. Copying the rows first into a buffer a little wider than the
# matrix (plain row copies, fast) and transposing from there spreads the column reads over the whole cache.
# Measured, one thread: a 512×512 transpose 0.58 → 0.12 ms, 1024×1024 3.7 → 1.1 ms.

_PAD = 16               # floats added to each row of the buffer: 64 bytes, one cache line
_PAD_FROM = 4096        # elements; below this the matrix fits in the cache and the plain copy is as fast
_ALIASING_STRIDE = 512  # bytes: rows a multiple of this long are the ones whose columns crowd into few cache sets
                        # (measured: 128- to 512-float rows gain 1.2-5x; 784-float rows lose 1.3x)


def contiguous(a):
    """``np.ascontiguousarray(a)``, faster for a transposed matrix (or stack of them) whose untransposed rows are
    contiguous."""
    if a.flags.c_contiguous:
        return a
    if a.ndim < 2 or a.size < _PAD_FROM or a.strides[-2] != a.itemsize:
        return np.ascontiguousarray(a)
    rows = a.swapaxes(-1, -2)                   # rows contiguous in memory: the matrix as it is stored
    if rows.strides[-2] % _ALIASING_STRIDE:
        return np.ascontiguousarray(a)          # (rows of other lengths spread over the cache by themselves)
    width = rows.shape[-1]
    padded = np.empty(rows.shape[:-1] + (width + _PAD,), a.dtype)
    padded[..., :width] = rows
    return np.ascontiguousarray(padded[..., :width].swapaxes(-1, -2))


# --- which operands are copied before a product in blocks ----------------------------------------------------------
# NumPy hands OpenBLAS a matrix laid out in rows or in columns (a transposed one) as it is, with a flag, and for most
# shapes OpenBLAS packs both layouts into the same panels and adds in the same order. Two cases differ:
# * an operand in neither layout (a slice with a step, a permuted stack): NumPy then multiplies with its own loop,
#   in another order;
# * on AVX-512 CPUs OpenBLAS multiplies small products (M·N·K ≤ 100³) with dedicated kernels, and the one for a
#   transposed right operand, as ``x @ W.T`` is, adds in another order. It is taken when the output has at most 1200
#   elements and the block's k is at least 32 (OpenBLAS's sgemm_small_kernel_permit_skylakex.c, where the operands
#   are swapped: NumPy's row-major call is OpenBLAS's column-major one, ``Cᵀ = Bᵀ Aᵀ``, so our b is its transposed A).
# Only those operands are copied (measured: 1312 random shapes in every layout, equal to the product of copies). A
# weight's transpose is not copied for the usual layer sizes: 784×256 at batch 64 took 0.25 ms a step to copy.
_SMALL_KERNEL_PRODUCT = 100 ** 3
_SMALL_KERNEL_OUTPUTS = 1200
_SMALL_KERNEL_MIN_K = 32


def _in_blas_layout(a, b, bounds):
    """``a`` and ``b``, copied where OpenBLAS would not add their blocks (``bounds`` along k) as MKL does."""
    def blas_layout(m):
        return m.flags.c_contiguous or (m.ndim == 2 and m.flags.f_contiguous)
    if not blas_layout(a):
        a = contiguous(a)
    if not b.flags.c_contiguous:
        outputs = a.shape[-2] * b.shape[-1]
        small_kernel = any(stop - start >= _SMALL_KERNEL_MIN_K and outputs * (stop - start) <= _SMALL_KERNEL_PRODUCT
                           for start, stop in zip(bounds[:-1], bounds[1:]))
        if not blas_layout(b) or (outputs <= _SMALL_KERNEL_OUTPUTS and small_kernel):
            b = contiguous(b)
    return a, b


@shapes_from(lambda a, b, initial=None: a @ b if initial is None else a @ b + initial)
def matmul(a, b, initial=None):
    """``a @ b`` (plus ``initial``, broadcast to the product and added first, as a bias is) for float32 matrices or
    stacks of them, in MKL's order where it is known; otherwise NumPy's product (plus ``initial``)."""
    k = a.shape[-1]
    if BLOCK == _LARGE_BLOCK:
        if a.dtype == np.float32 and b.dtype == np.float32 and a.ndim >= 2 and b.ndim >= 2:
            if _takes_lane_dots(a, b):
                product = _in_lanes(a, b)
                return product if initial is None else product + initial
            vector_product = _large_l2_vector_product(a, b)
            if vector_product is not None:
                product = _large_l2_matrix_vector(*vector_product)
                product = product[:, None] if b.shape[1] == 1 else product[None, :]
                return product if initial is None else product + initial
            if _large_l2_known(a, b):
                return _large_l2_matmul(a, b, initial)
            if _large_l2_single_row(a, b) and initial is None:
                return _row_times_rows(a[0], b)[None, :]
            if a.ndim == b.ndim == 2 and a.shape[0] == b.shape[1] == 1 and initial is None:
                return chained(a, b)        # (one output: its products in order, fused; Linear(1, 1)'s weight)
            if _large_l2_single_row(b.T, a.T) and initial is None:
                return _row_times_rows(b.T[0], a.T)[:, None]         # (Xᵀ @ g: the same kernel, seen transposed)
        product = np.matmul(a, b)
        return product if initial is None else product + initial
    if a.dtype == np.float32 and b.dtype == np.float32 and a.ndim >= 2 and b.ndim >= 2:
        rows, columns = a.shape[-2], b.shape[-1]
        # (two or three rows take these kernels for any number of columns)
        narrow = 2 <= columns < _NARROW or (2 <= rows <= 3 and columns >= 2)
        if a.ndim == b.ndim == 2 and rows >= 2 and narrow and a.strides[1] == b.strides[0] == 4 and k:
            return _narrow_columns(a, b, initial)
        if (a.ndim == b.ndim == 2 and narrow and initial is None and b.flags.c_contiguous
                and (a.flags.c_contiguous or a.flags.f_contiguous) and k > _SHORT_SUM):
            return _narrow_row_major(a, b)
        if a.ndim == b.ndim == 2 and rows == 1 and initial is None and b.flags.c_contiguous and k > _SHORT_SUM:
            return _row_times_row_major(a, b)
        if a.ndim == b.ndim == 2 and columns == 1 and initial is None and a.T.flags.c_contiguous and k > _SHORT_SUM:
            return _row_times_row_major(b.T, a.T).T           # (Xᵀ @ g: the same kernel, seen transposed)
        vector_rows = rows if columns == 1 else columns if rows == 1 else 0
        if a.ndim == b.ndim == 2 and vector_rows >= 4 and a.strides[1] == b.strides[0] == 4 and k > _SHORT_SUM:
            matrix, vector = (a, b[:, 0]) if columns == 1 else (b.T, a[0])
            product = _matrix_vector(matrix, vector)
            product = product[:, None] if columns == 1 else product[None, :]
            return product if initial is None else product + initial
        if rows >= 2 and k <= _SHORT_SUM and columns < 12 and b.strides[-2] < b.strides[-1]:
            return _unfused_in_order(a, b, initial)     # (measured for nn.Linear's x @ Wᵀ: a transposed b)
        if rows >= 4 and columns > 16 and 0 < columns % 16 <= 8:
            return _known_head(a, b, initial)
    known = (a.dtype == np.float32 and b.dtype == np.float32 and a.ndim >= 2 and b.ndim >= 2
             and order_known(a, b))
    bounds = k_blocks(k)
    if known:
        a, b = _in_blas_layout(a, b, bounds)
    if k <= _BLOCK or not known:
        product = np.matmul(a, b)
        if initial is not None:
            product += initial              # (one rounded addition: the same as initial + product)
        return product
    return _sum_of_blocks(np.matmul, a, b, initial, bounds)


# --- PyTorch's bmm ------------------------------------------------------------------------------------------------
# ``torch.bmm`` (and ``matmul`` of two stacks) hands a stack to MKL only when each matrix product takes 400
# multiplications or more; smaller ones it computes in its own loop (``bmm_out_or_baddbmm_`` in ATen's
# LinearAlgebra.cpp, compiled without fused multiply-adds): each output's products rounded and added in order of k.
# On any CPU: the loop is PyTorch's, not MKL's.
_SMALL_BMM = 400
# Larger ones go to MKL's gemm matrix by matrix, which adds each pair as ``mm`` adds it (measured: equal bit for bit
# for 2-200 matrices of many shapes), except a single column, which ``mm`` hands to gemv and ``bmm`` to gemm. Most
# of ``matmul``'s kernels take stacks; those written for one pair of matrices (a single row; on cores with a small L2
# cache, a narrow product) take a stack pair by pair, up to a count where the loop would cost more than the product
# (beyond it, a stack is one product: exact where the general order applies).
_PAIR_BY_PAIR = 64


def _takes_pair_kernels(a, b):
    """Whether a pair of matrices of these shapes takes one of ``matmul``'s kernels for a single pair."""
    rows, columns = a.shape[-2], b.shape[-1]
    return rows == 1 or columns == 1 or (BLOCK != _LARGE_BLOCK and (2 <= columns < _NARROW or 2 <= rows <= 3))


@shapes_from(np.matmul)
def bmm(a, b):
    """``torch.bmm``'s product of two stacks of matrices: ``matmul``, or PyTorch's loop for small float32 ones."""
    if a.dtype == np.float32 and b.dtype == np.float32:
        if a.shape[-2] * a.shape[-1] * b.shape[-1] < _SMALL_BMM and a.shape[-1]:
            return _unfused_in_order(a, b, None)
        if a.ndim == b.ndim == 3 and b.shape[-1] > 1 and 0 < len(a) <= _PAIR_BY_PAIR and _takes_pair_kernels(a, b):
            return np.stack([matmul(x, y) for x, y in zip(a, b)])
    return matmul(a, b)


# --- products added in order, for any k --------------------------------------------------------------------------
# oneDNN's convolutions (PyTorch's float32 conv2d) add each output's products one after another, each rounded once,
# over hundreds or thousands of terms. OpenBLAS adds in that order too, but only up to a point: for sums of at most
# 384 products (measured: up to 448-488 for some shapes, 384 for all tried), at least two rows, and a column count
# that is a multiple of 16 or leaves more than 8 after one. A longer chain is carried from one product to the next
# by an identity block: [I | A₂] · [C₁; B₂] starts each output from C₁'s value (adding I's zeros to it is exact)
# and goes on adding A₂·B₂'s products in order.
_CHAIN = 384


@shapes_from(np.matmul)
def chained(a, b):
    """``a @ b`` (float32 matrices, or stacks of them with the same leading dimensions) with each output's products
    added in order of k from zero, each rounded once: the order of a kernel that never splits k, for any k."""
    m, n = a.shape[-2], b.shape[-1]
    if m > n:                               # (the carrying identity is as wide as the rows: keep them few)
        return chained(b.swapaxes(-1, -2), a.swapaxes(-1, -2)).swapaxes(-1, -2)
    if m > _CHAIN // 3:                     # many rows: a chain per block of them
        return np.concatenate([chained(a[..., start:start + 64, :], b) for start in range(0, m, 64)], axis=-2)
    k = a.shape[-1]
    stack = a.shape[:-2]
    rows = max(m, 2)
    columns = n if n % 16 == 0 or n % 16 > 8 else n + 16 - n % 16
    if k <= _CHAIN:
        if (rows, columns) != (m, n):           # zero rows and columns pad it to a shape added in order
            a, b = _padded(a, stack + (rows, k)), _padded(b, stack + (k, columns))
        # (both operands laid out in rows: a transposed one would take another of OpenBLAS's kernels)
        return np.matmul(np.ascontiguousarray(a), np.ascontiguousarray(b))[..., :m, :n]
    # Each link of the chain is one product of two buffers, rows and columns padded with zeros to a shape added in
    # order: left = [I | A_j], right = [total so far; B_j]. The first link has no total (its identity reads zeros).
    step = _CHAIN - rows
    left = np.zeros(stack + (rows, rows + step), a.dtype)
    left[..., :rows] = np.eye(rows, dtype=a.dtype)
    right = np.zeros(stack + (rows + step, columns), b.dtype)
    total = np.zeros(stack + (rows, columns), a.dtype)
    for start in range(0, k, step):
        stop = min(k, start + step)
        width = stop - start
        left[..., :m, rows:rows + width] = a[..., start:stop]
        right[..., rows:rows + width, :n] = b[..., start:stop, :]
        if width < step:                    # (a last, shorter link: its leftover products are zeros)
            left[..., rows + width:] = 0
            right[..., rows + width:, :] = 0
        right[..., :rows, :] = total
        np.matmul(left, right, out=total)
        if not np.isfinite(total).all():    # (0·inf in the identity's terms would spread a NaN: add the rest)
            return total[..., :m, :n] + np.matmul(a[..., stop:], b[..., stop:, :])
    return total[..., :m, :n]


def _padded(a, shape):
    """``a`` in the top left corner of zeros of ``shape``."""
    out = np.zeros(shape, a.dtype)
    out[..., :a.shape[-2], :a.shape[-1]] = a
    return out


_COLUMN_GROUP = 16


def column_dots_in_order(a, b):
    """Each column's Σ over the rows of ``a·b`` ((R, N) float32 arrays), in order from zero, each product fused into
    the sum (a loop over rows of fused multiply-adds, as PyTorch's kernels accumulate a weight's gradient): the
    diagonal of ``aᵀ @ b`` added as BLAS's in-order kernel adds (``chained``), for groups of 16 columns at once (a
    stack of products, one a group: 16 times the multiplications the sums need, in a few BLAS calls)."""
    rows, n = a.shape
    groups = -(-n // _COLUMN_GROUP)
    width = groups * _COLUMN_GROUP
    if width != n:                          # (zero columns fill the last group)
        a, b = (np.pad(v, ((0, 0), (0, width - n))) for v in (a, b))
    left = a.T.reshape(groups, _COLUMN_GROUP, rows)
    right = b.reshape(rows, groups, _COLUMN_GROUP).transpose(1, 0, 2)
    return np.diagonal(chained(left, right), axis1=-2, axis2=-1).reshape(-1)[:n].copy()
