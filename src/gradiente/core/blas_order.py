"""float32 matrix products added in the order of PyTorch's BLAS (Intel MKL), so that they round as PyTorch's do.

A matrix product sums k products for each output. Both BLAS libraries here (OpenBLAS under NumPy, MKL under
PyTorch's x86-64 wheels) add them in order with fused multiply-adds, one output per vector lane, and so agree
exactly while k is small. For a long sum MKL works through k in blocks, each block's product added to the
output in turn, where OpenBLAS takes it in one pass: the results then differ in the last bit of nine outputs in
ten, a training run drifts apart from PyTorch's a step at a time, and a learner comparing printed losses sees it.

Measured against torch 2.13 (``tests/test_blas_order.py``), MKL's float32 kernels on an AVX-512 CPU block k as
follows: up to 192 in one block; from 193 to 383, two halves of ⌊k/2⌋ (and a last single column when k is odd);
from 384 on, blocks of 192 and the rest. An ``addmm`` (``nn.Linear``'s bias plus product) starts from the bias
and adds each block's product to it. OpenBLAS computes each block alone exactly as MKL does, so NumPy, given the
blocks one at a time, reproduces MKL's result. This holds for the kernels MKL picks for outputs of at least four
rows and a multiple of 16 columns (when the second matrix is a transposed one, as ``nn.Linear``'s weight is, at
least 256 columns or 128 rows); other shapes go to other MKL kernels, whose order is not known here, and are
computed in one pass as before.
"""
import numpy as np

__all__ = ["matmul", "k_blocks"]

_BLOCK = 192


def k_blocks(k):
    """The bounds of MKL's blocks along a sum of ``k`` products: [0, ..., k]."""
    if k <= _BLOCK:
        return [0, k]
    if k < 2 * _BLOCK:
        half = k // 2
        return [0, half, 2 * half] + ([k] if 2 * half < k else [])
    return list(range(0, k, _BLOCK)) + [k]


def _blocked_like_mkl(a, b):
    """Whether MKL's kernel for this product is one whose blocking ``k_blocks`` describes."""
    rows, columns = a.shape[-2], b.shape[-1]
    if rows < 4 or columns % 16:
        return False
    transposed = b.strides[-2] < b.strides[-1]          # (k, n) stored column by column: a weight's transpose
    return not transposed or columns >= 256 or rows >= 128


def matmul(a, b, initial=None):
    """``a @ b`` (plus ``initial``, added first, as a bias is) for float32 matrices or stacks of them, in MKL's order
    where it is known; otherwise NumPy's product (plus ``initial``)."""
    k = a.shape[-1]
    if (k <= _BLOCK or a.dtype != np.float32 or b.dtype != np.float32 or a.ndim < 2 or b.ndim < 2
            or not _blocked_like_mkl(a, b)):
        product = np.matmul(a, b)
        if initial is not None:
            product += initial              # (one rounded addition: the same as initial + product)
        return product
    bounds = k_blocks(k)
    total = None
    for start, stop in zip(bounds[:-1], bounds[1:]):
        part = np.matmul(a[..., start:stop], b[..., start:stop, :])
        if total is None:
            total = part
            if initial is not None:
                total += initial
        else:
            total += part
    return total
