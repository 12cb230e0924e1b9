"""How PyTorch's elementwise loops take an array: two 16-lane float32 vectors at a time along each contiguous run of
memory, then the run's last n mod 32 elements one by one. A function whose vector code and scalar code round
differently (Sleef's exponential and the C library's, Sleef's power and the C library's) differs in those last
elements, so ``in_vector_blocks`` applies each where PyTorch's loop does."""
import math

import numpy as np

__all__ = ["VECTOR_PAIR", "in_vector_blocks", "in_row_blocks"]


VECTOR_PAIR = 32       # float32 elements PyTorch's elementwise loops take at a time: two 16-lane vectors


def in_vector_blocks(a, vector_fn, scalar_fn):
    """An elementwise float32 function as PyTorch's loop applies it: ``vector_fn`` (its vector code) on the blocks
    of 32 elements of each contiguous run of memory the loop takes, ``scalar_fn`` (its scalar code) on each run's
    last n mod 32. A contiguous array (in either order) is one run; an array whose rows are contiguous but apart
    (a chunk of a wider matrix) is a run per row (``in_row_blocks``); other dtypes and other strided arrays take
    ``scalar_fn`` throughout."""
    if a.dtype != np.float32 or a.size < VECTOR_PAIR:
        return scalar_fn(a)
    if not a.flags.c_contiguous:
        if a.flags.f_contiguous:        # (the loop follows memory: a transpose's run is its memory's)
            return in_vector_blocks(a.T, vector_fn, scalar_fn).T
        if a.ndim >= 2 and a.strides[-1] == a.itemsize:
            joined = 1          # trailing dims that lie end to end in memory make one run: the loop joins them
            while joined < a.ndim and a.strides[-joined - 1] == a.strides[-joined] * a.shape[-joined]:
                joined += 1
            runs = a.reshape((-1, math.prod(a.shape[-joined:])))
            return in_row_blocks(runs, vector_fn, scalar_fn).reshape(a.shape)
        return scalar_fn(a)
    flat = a.reshape(-1)
    vectors = flat.size - flat.size % VECTOR_PAIR
    out = np.empty_like(flat)
    with np.errstate(over="ignore"):
        out[:vectors] = vector_fn(flat[:vectors])
    out[vectors:] = scalar_fn(flat[vectors:])
    return out.reshape(a.shape)


def in_row_blocks(a, vector_fn, scalar_fn):
    """``in_vector_blocks`` for each row (last dim) of ``a`` on its own: how PyTorch's loop takes a view whose rows
    are contiguous but not adjacent in memory (a chunk of a wider matrix, as an RNN cell's gates are), which it
    cannot join into one run: each row's first whole blocks of 32 take ``vector_fn``, its last n mod 32 elements
    ``scalar_fn``."""
    row = a.shape[-1]
    vectors = row - row % VECTOR_PAIR
    if a.dtype != np.float32 or not vectors:
        return scalar_fn(a)
    if vectors == row:                  # whole blocks in every row: the rows end to end are too
        return in_vector_blocks(np.ascontiguousarray(a), vector_fn, scalar_fn)
    out = np.empty(a.shape, a.dtype)
    with np.errstate(over="ignore"):
        out[..., :vectors] = vector_fn(np.ascontiguousarray(a[..., :vectors]))
    out[..., vectors:] = scalar_fn(a[..., vectors:])
    return out
