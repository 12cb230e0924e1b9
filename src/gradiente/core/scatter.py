"""``add_rows_at``: a scatter-add of rows, ``out[idx[k]] += rows[k]`` for every k in order, faster than
``np.add.at`` and with its bits.

``np.add.at(out, idx, rows)`` adds row after row, in the order of ``idx``, so a row that is looked up several
times receives ``((0 + r_a) + r_b) + r_c``: the order PyTorch's CPU ``index_add_`` (and so its embedding
backward) sums in. But ``add.at`` works element by element through a general indexing machinery, ~10 ns each.

A fancy-indexed ``out[idx] += rows`` is a fast gather, add and scatter, but wrong when ``idx`` repeats (the
last write wins). So the lookups are split by *occurrence*: the first occurrence of every index, then the
second occurrence of those that repeat, and so on. Within one round no index repeats, so ``out[sel] += ...``
is right, and each row still receives its lookups in their original order: the bits of ``np.add.at``.

Rounds cost a few NumPy calls each, so when an index repeats many times (a frequent token), the remaining
occurrences, fewer than ``_ROUND_MIN`` a round, go to ``np.add.at`` on the flattened array (its fast
one-dimensional path), still in order; so do small scatters, where the bookkeeping would cost more than
``add.at`` itself.
"""
import numpy as np

__all__ = ["add_rows_at"]

_ROUND_MIN = 64
_SMALL = 8192       # elements (lookups × row width) below which np.add.at is the faster


def add_rows_at(out, idx, rows):
    """``out[idx[k]] += rows[k]`` for k = 0, 1, ... in turn (``out`` 2-D, ``idx`` 1-D integers in range, ``rows``
    of shape ``(len(idx), out.shape[1])``), as ``np.add.at(out, idx, rows)`` computes it."""
    n = idx.size
    if n * out.shape[1] < _SMALL:
        np.add.at(out, idx, rows)
        return out
    order = np.argsort(idx, kind="stable")          # equal indices stay in lookup order
    sorted_idx = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_idx[1:] != sorted_idx[:-1])))
    # occurrence number of each sorted lookup: its position minus the position where its index's run starts
    occurrence = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    order_by_round = order[np.argsort(occurrence, kind="stable")]
    round_sizes = np.bincount(occurrence)
    begin = 0
    for size in round_sizes:
        if size < _ROUND_MIN:
            break
        sel = order_by_round[begin:begin + size]
        out[idx[sel]] += rows[sel]
        begin += size
    if begin < n:
        # the rest, in lookup order within each index (sorted by index, then position): np.add.at's order
        rest = np.sort(order_by_round[begin:])
        rest = rest[np.argsort(idx[rest], kind="stable")]
        width = out.shape[1]
        flat = (idx[rest, None] * width + np.arange(width)).reshape(-1)
        np.add.at(out.reshape(-1), flat, rows[rest].reshape(-1))
    return out
