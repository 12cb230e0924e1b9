"""The sum of all elements of a float32 or float64 array, added in the order PyTorch's CPU kernel adds them.

Floating-point addition is not associative, so two correct sums of the same numbers can differ in their last
bits; a program that prints ``loss.item()``, or the mean of values that cancel out (a normalized tensor's mean is
rounding noise around zero), shows those bits. NumPy sums pairwise; PyTorch's kernel reads the array as rows of
one SIMD vector (8 float32 or 4 float64 lanes) and sums the rows with four interleaved accumulators, each kept
as a "cascade" of four levels: rows are added into level 0 a block at a time (2**k rows, k = max(4, ⌈log₂ n⌉ / 4)),
and after each block a level is added into the next, as a carry propagates in a counter. The leftover elements
that fill no vector are added one by one, then the vector's lanes; an array shorter than one vector is summed as
a single column with the same four accumulators.

This is used for arrays up to PyTorch's grain size (32768 elements): above it PyTorch splits the sum between its
threads, and the order depends on their number.
"""
import math

import numpy as np

__all__ = ["GRAIN_SIZE", "torch_order_applies", "torch_order_sum"]

#: PyTorch's internal grain size: a reduction over more elements is split between threads
GRAIN_SIZE = 32768
#: SIMD lanes of PyTorch's CPU sum kernel, per dtype (its 256-bit vectors)
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_ACCUMULATORS = 4       # the interleaved accumulators of a row sum
_LEVELS = 4             # the levels of each accumulator's cascade


def _cascade(rows):
    """The sum over axis 0 of ``rows`` (shape (n, ...)), added as PyTorch's multi-row cascade adds it."""
    size = rows.shape[0]
    power = max(4, (math.ceil(math.log2(size)) if size > 1 else 0) // _LEVELS)
    step, mask = 1 << power, (1 << power) - 1
    levels = [np.zeros(rows.shape[1:], rows.dtype) for _ in range(_LEVELS)]
    done = 0
    while done + step <= size:
        # a block of rows into level 0, one row after another (NumPy reduces axis 0 row by row)
        levels[0] = levels[0] + np.add.reduce(rows[done:done + step], axis=0)
        done += step
        for j in range(1, _LEVELS):
            levels[j] = levels[j] + levels[j - 1]
            levels[j - 1] = np.zeros_like(levels[j - 1])
            if done & (mask << (j * power)):
                break
    if done < size:
        levels[0] = levels[0] + np.add.reduce(rows[done:], axis=0)
    total = levels[0]
    for j in range(1, _LEVELS):
        total = total + levels[j]
    return total


def _row_sum(rows):
    """The sum of ``rows`` (shape (n, lanes)): four accumulators take every fourth row, the rows left over go
    to the first, then the four are added in order."""
    n = rows.shape[0]
    whole = n // _ACCUMULATORS
    if whole:
        partial = _cascade(rows[:whole * _ACCUMULATORS].reshape(whole, _ACCUMULATORS, -1))
    else:
        partial = np.zeros((_ACCUMULATORS,) + rows.shape[1:], rows.dtype)
    first = partial[0]
    for row in rows[whole * _ACCUMULATORS:]:
        first = first + row
    for k in range(1, _ACCUMULATORS):
        first = first + partial[k]
    return first


def torch_order_applies(a):
    """Whether ``torch_order_sum`` takes ``a``: a C-contiguous float32 or float64 array of 1 to ``GRAIN_SIZE``
    elements."""
    return a.dtype.type in (np.float32, np.float64) and 0 < a.size <= GRAIN_SIZE and a.flags.c_contiguous


def torch_order_sum(a):
    """The sum of all of ``a``'s elements (a C-contiguous float32 or float64 array) in PyTorch's order, as a
    NumPy scalar of ``a``'s dtype."""
    flat = a.reshape(-1)
    lanes = _LANES[flat.dtype]
    vectors = flat.size // lanes
    zero = flat.dtype.type(0)
    if vectors == 0:
        return zero + _row_sum(flat.reshape(-1, 1))[0]
    lane_sums = _row_sum(flat[:vectors * lanes].reshape(vectors, lanes))
    total = zero
    for value in flat[vectors * lanes:]:
        total = total + value
    for value in lane_sums:
        total = total + value
    return total
