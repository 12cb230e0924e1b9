"""Sums added in the order PyTorch's CPU kernels add them, so that they round as PyTorch's do.

Floating-point addition is not associative: the sum of the same float32 numbers in another order differs in the
last bit about half the time for a few dozen numbers. NumPy sums pairwise, eight interleaved partial sums at a
time; PyTorch's kernels (``aten/src/ATen/native/cpu/SumKernel.cpp``, ``LossNLL.cpp``) add in orders of their own. A
training loop prints ``loss.item()`` and means of such numbers, and a learner comparing them with PyTorch's sees
the last digits differ, and a gradient summed over a batch (a bias's) takes a training run elsewhere a step at a
time. So ``sum`` and ``mean`` of a contiguous float32 or float64 tensor (all of it, along its last dim, or over
its leading dims), the engine's reduction of a broadcast gradient over those same dims, and ``nll_loss``'s (cross
entropy's) reduction are added here in PyTorch's order. Measured against torch 2.13 on x86-64, the results are
bit-identical for every length (``tests/test_summation_order.py``).

**sum and mean** (``torch_order_row_sums``). PyTorch splits a row of n numbers into vectors of 8 float32 (4
float64) lanes and a scalar tail:

* the vectors are added in four interleaved streams (vector 0, 4, 8, ... in the first, 1, 5, 9, ... in the
  second, ...), each stream lane by lane in order, and once a stream has 16 vectors, as a cascade: every 16
  consecutive rows of four vectors are summed on their own, every 16 such block sums on their own, and so on for
  four levels, before being added in, which keeps long sums accurate; vectors beyond the last full row of four
  join the first stream; then the first stream adds the other three;
* the tail (the n mod 8 last numbers) is summed in order from 0, and the 8 lanes of the streams' sum are added to
  it one after another.

A row shorter than one vector is four interleaved scalar streams instead: ``((x0 + x4 + x5 + ...) + x1) + x2) + x3``.
A mean is that sum divided by the count. With more than one thread PyTorch splits a sum of more than 32,768 numbers
among its threads, so that its order depends on how many it has; gradiente adds as PyTorch does on one thread (the
order of every comparison with PyTorch here), up to ``LONGEST`` numbers in a row, beyond which PyTorch's cascade
takes longer steps than the 16 below.

**Sums down the columns** (``torch_order_column_sums``: over the leading dims, as a bias's gradient is summed over
the batch). The first columns, in groups of four vectors (32 float32), each add their rows as the cascade above;
the other columns each add them in the four interleaved streams. A matrix of fewer columns than a vector has
groups of four columns instead, and a single column is summed as a row.

**nll_loss** (``nll_cascade_sum``). PyTorch's loss loop adds the targets' values one after another into eight
levels of partial sums: after the value at index b (counting from 0) is added, while b is a multiple of 16, 256,
4096, ..., each level's sum moves up into the next. Index 0 is a multiple of every power, so the first value ends
alone in the top level; then every 16 values make a block, every 16 blocks a group, and at the end the levels are
added from the lowest up.

**The 2-norm** (``vector_row_norms``: ``linalg.vector_norm``, ``Tensor.norm()``, ``clip_grad_norm_``). PyTorch's norm
kernel, compiled for AVX2, squares each vector of 8 float32 (4 float64) and adds it into one accumulator vector,
rounding the square and the sum; adds the 8 lanes in order; then the tail. For float32 the compiler squares the
tail's first four numbers as one vector and adds them in order, and fuses the multiply-add of each one left.

NumPy adds the rows of a 2-d array in order when it reduces over an axis that is not the innermost one, and
``add.accumulate`` adds a row's elements in order: every sum here is built from those two, a few NumPy calls, not a
Python loop over the numbers.
"""
import math

import numpy as np

from .fused import fma
from .meta import shapes_from

__all__ = ["LONGEST", "down_in_order", "torch_order_sums", "sum_as_torch", "mean_as_torch", "torch_order_row_sums",
           "torch_order_column_sums", "nll_cascade_sum",
           "vector_row_sums", "vector_row_dots", "vector_row_norms"]

#: the longest row (or column) added here: up to this many numbers PyTorch's cascade takes steps of 16 (beyond, its
#: step grows with the logarithm of the length: ``multi_row_sum``'s ``level_power``)
LONGEST = 1 << 19

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_add_reduce, _add_accumulate = np.add.reduce, np.add.accumulate


def down_in_order(a):
    """``a`` summed over its first axis, one entry after another from the first. NumPy's ``add.reduce`` adds along
    a leading axis in order when another axis is left for its inner loop, but a lone column (every other dim of
    size 1) becomes its inner loop and is added pairwise: that one is added here as a running sum instead."""
    if a.shape[0] and a[0].size == 1:
        return _add_accumulate(a.reshape(a.shape[0]), axis=0)[-1].reshape(a.shape[1:])
    return _add_reduce(a, axis=0)


@shapes_from(lambda a, axes: None)        # (a meta array: NumPy's sum answers, with shapes)
def torch_order_sums(a, axes):
    """``a`` summed over ``axes`` (normalized, increasing) in PyTorch's order, flattened (the kept dims' sizes in
    order), where this module knows it: everything, the last dims, or the leading dims of a contiguous float32 or
    float64 array; else None."""
    if not a.ndim or not axes:
        return None
    if len(axes) == a.ndim:
        return torch_order_row_sums(a.reshape(1, -1)) if follows_torch_order(a, a.size) else None
    if axes == tuple(range(a.ndim - len(axes), a.ndim)):     # the last dims: rows (PyTorch joins them into one)
        n = math.prod(a.shape[a.ndim - len(axes):])
        return torch_order_row_sums(a.reshape(-1, n)) if follows_torch_order(a, n) else None
    if axes == tuple(range(len(axes))):
        n = math.prod(a.shape[:len(axes)])
        return torch_order_column_sums(a.reshape(n, -1)) if follows_torch_order(a, n) and a.size else None
    return _iterated_sums(a, axes)


# --- any other set of dims: the order of PyTorch's reduction iterator ------------------------------------------
# A sum over dims that are neither all, the last nor the leading ones (a channel's sum over (0, 2, 3), the middle
# dim of (B, T, C)) is added as ``TensorIterator`` walks it: the reduced dims first, innermost in memory first,
# then the kept ones; dims next to each other in memory and both reduced (or both kept) joined into one. The first
# two dims are the kernel's loop (``cascade_sum``): the first, reduced, is summed as a row (or, where the second is
# kept and contiguous, as columns), the result added to the output, which starts from zero; every further
# position of the other dims adds one more such sum, in the iterator's order (the second dim fastest).

def _iterated_sums(a, axes):
    """``a`` (C-contiguous float32/float64) summed over ``axes`` in the reduction iterator's order (above),
    flattened; None where this module does not know PyTorch's order."""
    if not a.size or a.dtype not in _LANES or not a.flags.c_contiguous:
        return None
    # dims of size 1 change no order (the iterator drops them)
    dims = [d for d in range(a.ndim) if a.shape[d] != 1]
    a = a.reshape([a.shape[d] for d in dims])
    axes = {dims.index(d) for d in axes if d in dims}
    shape = a.shape
    reduced = [d for d in reversed(range(a.ndim)) if d in axes]
    kept = [d for d in reversed(range(a.ndim)) if d not in axes]
    if not reduced:             # (only dims of size 1: each sum is one number, added to the output's zero)
        return a.reshape(-1) + a.dtype.type(0)
    if not kept:
        return torch_order_row_sums(a.reshape(1, -1)) if a.size <= LONGEST else None
    groups: list = []                           # (dims, reduced?) in the iterator's order, innermost first
    for d in reduced + kept:
        if groups and groups[-1][1] == (d in axes) and groups[-1][0][-1] == d + 1:
            groups[-1][0].append(d)
        else:
            groups.append(([d], d in axes))
    sizes = [math.prod(shape[d] for d in g) for g, _ in groups]
    if sizes[0] > LONGEST:
        return None
    strides = [math.prod(shape[g[0] + 1:]) for g, _ in groups]    # each group's step, in elements
    # outermost group first, each group's dims in memory order: the iterator's walk as a C-ordered array
    walk = a.transpose([d for g, _ in reversed(groups) for d in reversed(g)]).reshape(sizes[::-1])
    if strides[0] < strides[1]:
        # each row of the first group on its own (a vector loop where it is contiguous, else four scalar streams)
        rows = walk.reshape(-1, sizes[0])
        loop = torch_order_row_sums(np.ascontiguousarray(rows)) if strides[0] == 1 and sizes[0] >= _LANES[a.dtype] \
            else _scalar_row_sums(rows)
        loop = loop.reshape(sizes[:0:-1])
    else:
        # the second group kept and innermost, the first reduced above it: down the columns, per position of the
        # others (reduced dims come first, so only the innermost kept dim can have a smaller step than the first)
        matrices = np.ascontiguousarray(walk.reshape(-1, sizes[1], sizes[0]).transpose(0, 2, 1))
        loop = np.stack([torch_order_column_sums(m) for m in matrices]).reshape(sizes[:0:-1])
    # the further positions of reduced dims add their loop sums in the iterator's order, the second group fastest
    later = groups[1:][::-1]                    # loop's axes, outermost first
    reduced_axes = [i for i, (_, is_reduced) in enumerate(later) if is_reduced]
    kept_axes = [i for i, (_, is_reduced) in enumerate(later) if not is_reduced]
    count = math.prod(loop.shape[i] for i in reduced_axes)
    contributions = np.ascontiguousarray(loop.transpose(reduced_axes + kept_axes).reshape(count, -1))
    return down_in_order(contributions) + a.dtype.type(0)     # (+ 0: the output's starting zero makes -0s +0)


def _scalar_row_sums(rows):
    """PyTorch's scalar ``row_sum`` of each row of ``rows`` (r, n): four interleaved streams, or for fewer than four
    numbers one after another."""
    return _in_order(rows) if rows.shape[1] < 4 else _four_streams(rows) + rows.dtype.type(0)


def sum_as_torch(a, dim=None, keepdim=False):
    """``a.sum(axis=dim, keepdims=keepdim)`` (``dim``: None, an int or a tuple, negatives allowed), added in PyTorch's
    order where ``torch_order_sums`` knows it (a backward rule's ``self.sum(dim)`` is PyTorch's sum too)."""
    axes = tuple(range(a.ndim)) if dim is None else tuple(sorted({d % a.ndim for d in np.atleast_1d(dim)}))
    values = torch_order_sums(a, axes) if a.ndim else None
    if values is None:
        return np.add.reduce(a, axis=dim if dim is None else axes, keepdims=keepdim)
    return values.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape)) if keepdim else
                          tuple(n for i, n in enumerate(a.shape) if i not in axes))


def mean_as_torch(a, dim=None, keepdim=False):
    """``a.mean(axis=dim, keepdims=keepdim)``: for float32 and float64, PyTorch's: its sum (``sum_as_torch``) divided
    by the count in the array's dtype."""
    if a.dtype not in _LANES or not a.size:
        return a.mean(axis=dim, keepdims=keepdim)
    axes = tuple(range(a.ndim)) if dim is None else tuple({d % a.ndim for d in np.atleast_1d(dim)})
    return sum_as_torch(a, dim, keepdim) / a.dtype.type(math.prod(a.shape[i] for i in axes))


def follows_torch_order(a, row_length):
    """Whether sums of rows of ``row_length`` numbers of the array ``a`` are added here in PyTorch's order: a
    C-contiguous float32 or float64 array, with rows no longer than ``LONGEST``."""
    return a.dtype in _LANES and 0 < row_length <= LONGEST and a.flags.c_contiguous


@shapes_from(lambda a: a.sum(axis=1))
def torch_order_row_sums(a):
    """The sum of each row of ``a`` (rows, n) (``follows_torch_order``), as PyTorch's sum kernel adds it."""
    rows, n = a.shape
    lanes = _LANES[a.dtype]
    if n < lanes:
        return _scalar_row_sums(a)
    vectors = n // lanes
    head = a[:, :vectors * lanes].reshape(rows, vectors, lanes)
    lane_sums = _down(head) if vectors < 4 else _four_streams(head)
    return _in_order(np.concatenate([a[:, vectors * lanes:], lane_sums], axis=1))


@shapes_from(lambda a: a.sum(axis=0))
def torch_order_column_sums(a):
    """The sum of each column of ``a`` (n, c) (C-contiguous float32/float64, ``follows_torch_order`` for rows of
    n), as PyTorch's sum kernel adds it."""
    n, c = a.shape
    if c == 1:
        return torch_order_row_sums(a.reshape(1, n))
    lanes = _LANES[a.dtype]
    cascaded = c // (4 * lanes) * 4 * lanes if c >= lanes else c // 4 * 4
    columns = a[None]
    if cascaded == c:
        return (_cascade(columns) if n >= 16 else _down(columns))[0]
    if not cascaded:
        return _four_streams(columns)[0]
    out = np.empty(c, a.dtype)
    out[:cascaded] = (_cascade(columns[:, :, :cascaded]) if n >= 16 else _down(columns[:, :, :cascaded]))[0]
    out[cascaded:] = _four_streams(columns[:, :, cascaded:])[0]
    return out


@shapes_from(lambda a: np.sqrt((a * a).sum(axis=1)))
def vector_row_norms(a):
    """The 2-norm of each row of ``a`` (rows, n), a C-contiguous float32 or float64 array, as PyTorch's norm kernel
    computes it (see the module's docstring). A row is never split among threads (the kernel shares out rows)."""
    rows, n = a.shape
    lanes = _LANES[a.dtype]
    vectors = n // lanes
    total = np.zeros(rows, a.dtype)
    if vectors:
        head = a[:, :vectors * lanes].reshape(rows, vectors, lanes)
        lane_sums = _down(head * head)                              # each lane's squares added in order
        total = _add_accumulate(lane_sums, axis=1)[:, -1]           # then lane 0, lane 1, ... in order
    done = vectors * lanes
    if a.dtype == np.float32 and n - done >= 4:
        squares = a[:, done:done + 4] * a[:, done:done + 4]
        total = _add_accumulate(np.concatenate([total[:, None], squares], axis=1), axis=1)[:, -1]
        done += 4
    for k in range(done, n):
        total = fma(a[:, k], a[:, k], total, a.dtype)
    return np.sqrt(total)


def _down(units):
    """(rows, k, lanes...) summed over k, one unit after another, each lane on its own."""
    return _add_reduce(units, axis=1)


def _in_order(values):
    """(rows, k) summed over k one element after another, from 0 (``+ 0`` makes a sum of -0.0 +0.0, as a sum
    starting from 0 gives it)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0], values.dtype)
    return _add_accumulate(values, axis=1)[:, -1] + values.dtype.type(0)


def _four_streams(units):
    """PyTorch's ``row_sum`` of (rows, size, lanes...): four interleaved streams (cascaded), the units left over
    added to the first, then the four added in order."""
    rows, size = units.shape[:2]
    whole = size // 4 * 4
    streams = units[:, :whole].reshape((rows, size // 4, 4) + units.shape[2:])
    partial = _cascade(streams) if size // 4 >= 16 else _down(streams)
    first = partial[:, 0]
    if size > whole:
        leftover = np.concatenate([first[:, None], units[:, whole:]], axis=1)
        # (scalar units: a row is the innermost axis, which NumPy would not add in order)
        first = _in_order(leftover) if units.ndim == 2 else _down(leftover)
    return first + partial[:, 1] + partial[:, 2] + partial[:, 3]


def _cascade(streams):
    """PyTorch's ``multi_row_sum`` of (rows, size, units...), size >= 16: blocks of 16 summed in order, groups of 16
    blocks, groups of 16 groups, then everything above; at each of those four levels what is left over is summed
    on its own; the levels are added lowest first."""
    rows, rest = streams.shape[0], streams.shape[2:]
    items, total = streams, None
    for level in range(4):
        whole = items.shape[1] // 16 * 16 if level < 3 else 0
        leftover = _down(items[:, whole:])
        total = leftover if total is None else total + leftover
        if not whole:
            break
        items = _add_reduce(items[:, :whole].reshape((rows, whole // 16, 16) + rest), axis=2)
    return total


@shapes_from(lambda values, indices=None: values.sum())
def nll_cascade_sum(values, indices=None):
    """The sum of ``values`` (1-d) as ``nll_loss``'s loop adds them; ``indices`` are their positions in the batch
    (the targets not ignored), by default 0, 1, 2, ... The loop subtracts each target's value from 0; callers pass
    the values already negated, which adds the same numbers."""
    if indices is not None and len(indices) and (len(indices) != indices[-1] + 1):
        return _nll_cascade_with_gaps(values, indices)
    if len(values) == 0:
        return values.dtype.type(0)
    number = values.dtype.type
    total, items = number(0), values[1:]    # the value at index 0 ends in the top level, alone
    while True:
        full = len(items) // 16 * 16
        total = number(total + _in_order(items[None, full:])[0])
        if not full:
            break
        items = _in_order(items[:full].reshape(-1, 16))
    return number(total + values[0])


def _nll_cascade_with_gaps(values, indices):
    """The cascade when some targets were ignored: an ignored index neither adds nor moves a level up, so the
    blocks are not of 16 values. The loop itself, over the values kept."""
    zero = values.dtype.type(0)
    levels = [zero] * 8
    for value, b in zip(values.tolist(), indices.tolist()):
        levels[0] = values.dtype.type(levels[0] + value)
        for j in range(7):
            if b & (15 << (4 * j)):
                break
            levels[j + 1] = values.dtype.type(levels[j + 1] + levels[j])
            levels[j] = zero
    total = zero
    for level in levels:
        total = values.dtype.type(total + level)
    return total


@shapes_from(lambda a, tail_after_halving=False: a.sum(axis=1))
def vector_row_sums(a, tail_after_halving=False):
    """The sum of each row of float32 ``a`` (rows, n) as PyTorch's softmax kernels add it (``vec::reduce_all``,
    compiled there for 16-lane vectors): the vectors added lane by lane in order, the tail's numbers added into the
    first lanes, then the 16 lanes halved and added pairwise (lane i with lane i + 8, then i + 4, ...). A row shorter
    than a vector is added in order. ``tail_after_halving``: the tail's numbers are added one by one to the halved
    sum instead, as the flash-attention kernel sums its exponentials."""
    rows, n = a.shape
    if n < 16:
        return _in_order(a)
    whole = n // 16 * 16
    lanes = _add_reduce(a[:, :whole].reshape(rows, -1, 16), axis=1)
    if whole < n and not tail_after_halving:
        lanes[:, :n - whole] += a[:, whole:]
    total = _halved(lanes)
    if tail_after_halving:
        for column in range(whole, n):
            total = total + a[:, column]
    return total


@shapes_from(lambda a, b: (a * b).sum(axis=1))
def vector_row_dots(a, b):
    """Σ a·b along each row of float32 ``a`` and ``b`` (rows, n) as PyTorch's softmax backward adds it
    (``vec::map2_reduce_all``): the products of whole vectors rounded and added lane by lane, the tail's products
    fused into the first lanes (its compiler contracts the multiply and the add there, not in the loop), then the
    lanes halved pairwise. A row shorter than a vector adds its rounded products in order."""
    rows, n = a.shape
    if n < 16:
        return _in_order(a * b)
    whole = n // 16 * 16
    lanes = _add_reduce((a[:, :whole] * b[:, :whole]).reshape(rows, -1, 16), axis=1)
    if whole < n:
        lanes[:, :n - whole] = fma(a[:, whole:], b[:, whole:], lanes[:, :n - whole], np.float32)
    return _halved(lanes)


def _halved(lanes):
    """The 16 lanes of each row (rows, 16) added as a vector reduction does: halved pairwise, lane i with lane
    i + 8, then i + 4, i + 2, i + 1."""
    width = 16
    while width > 1:
        width //= 2
        lanes = lanes + lanes[:, _PARTNERS[width]]
    return lanes[:, 0]


#: for each halving of the 16 lanes, the lane each one is added to: i with i xor width
_PARTNERS = {width: np.arange(16) ^ width for width in (8, 4, 2, 1)}
