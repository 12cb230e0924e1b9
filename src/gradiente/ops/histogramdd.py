"""``torch.histogramdd``: the counts of points (the rows of the innermost dim) in the cells of a D-dimensional
grid of bins, with the bin edges along each dim. Not differentiable, as in PyTorch: an input that requires grad
gives results whose backward raises PyTorch's error.

A point falls in the bin whose left edge it reaches and whose right edge it stays below, except in the last bin,
which keeps its right edge; a point outside the edges along any dim (or nan there) is not counted.
"""
import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.creation import linspace
from ..core.dtype import cpp_name, scalar_name
from ..core.record import wrap
from ..core.tensor import Tensor
from .arithmetic import _without_derivative

__all__ = ["histogramdd"]

_BINS_OVERLOADS = ("histogramdd() received an invalid combination of arguments - got (Tensor, bins=Tensor), but "
                   "expected one of:\n"
                   " * (Tensor input, int bins, tuple of floats range = None, Tensor weight = None, bool density = "
                   "False)\n"
                   " * (Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = None, bool "
                   "density = False)\n"
                   " * (Tensor input, tuple of Tensors bins, *, tuple of floats range = None, Tensor weight = None, "
                   "bool density = False)\n")


def point_weights(weight, a, count, shape, shown_shape):
    """The weight of each of the ``count`` points (ones without ``weight``), which must have the input's dtype
    and ``shape``; PyTorch's messages show the input's shape as ``shown_shape``."""
    if weight is None:
        return np.ones(count, dtype=a.dtype)
    w = weight._data
    if w.dtype != a.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({cpp_name(a.dtype)}), and weight({cpp_name(w.dtype)})")
    if w.shape != tuple(shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape {shown_shape} "
                           f"and weight with shape {list(w.shape)}")
    return w.reshape(-1)


def _given_edges(bins, dims, dtype):
    """The edges given as one 1-D tensor per dim, checked as PyTorch checks them."""
    if len(bins) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for a {dims}-dimensional "
                           f"histogram but got {len(bins)}")
    edges = []
    for d, b in enumerate(bins):
        a = b._data
        if a.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {a.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if a.dtype != dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {cpp_name(dtype)} and bins for dimension {d} with dtype "
                               f"{cpp_name(a.dtype)}")
        if a.size < 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in "
                               f"the bins tensor for dimension {d}")
        edges.append(a)
    return edges


def _equal_edges(points, counts, range, dtype):
    """``counts[d] + 1`` equal-width edges along each dim d, over ``range`` (pairs, flattened) or the points'
    own extent there; an empty extent is widened by 1/2 on each side."""
    dims = points.shape[1]
    for d, count in enumerate(counts):
        if count + 1 < 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in "
                               f"the bins tensor for dimension {d}")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should have {2 * dims} "
                           f"elements, but got {len(range)}")
    edges = []
    for d, count in enumerate(counts):
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}")
        if range is not None:
            low, high = float(range[2 * d]), float(range[2 * d + 1])
        elif points.shape[0]:
            low, high = float(points[:, d].min()), float(points[:, d].max())
        else:
            low, high = 0.0, 1.0
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} for "
                               f"dimension {d}")
        if not (np.isfinite(low) and np.isfinite(high)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{low:g}, {high:g}] is not finite")
        if low == high:
            low, high = low - 0.5, high + 0.5
        edges.append(linspace(low, high, count + 1, dtype=dt.from_numpy_dtype(dtype))._data)
    return edges


def _counts(points, edges, weights, dtype):
    """The summed weights of the points in each cell of the grid the edges make."""
    hist = np.zeros(tuple(max(e.size - 1, 0) for e in edges), dtype=dtype)
    if hist.size == 0:
        return hist
    inside = np.ones(points.shape[0], dtype=bool)
    cells = []
    for d, e in enumerate(edges):
        column = points[:, d]
        inside &= (column >= e[0]) & (column <= e[-1])
        # the last edge belongs to the last bin
        cells.append(np.minimum(np.searchsorted(e, column, side="right") - 1, e.size - 2))
    flat = np.ravel_multi_index(tuple(np.clip(c[inside], 0, None) for c in cells), hist.shape)
    np.add.at(hist.reshape(-1), flat, weights[inside])
    return hist


def _as_density(hist, edges):
    """Divided by the total, then by each bin's width along each dim: the counts per unit volume, integrating
    to 1."""
    with np.errstate(all="ignore"):
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * hist.ndim
            shape[d] = -1
            hist = hist / np.diff(e).reshape(shape)
    return hist


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)`` of the points ``input`` (..., D): ``hist`` has one cell per combination of bins
    (shape: the bin counts), ``bin_edges`` a tuple of D 1-D tensors. ``bins`` is one count for every dim, a
    count per dim (equal bins over ``range``, 2·D numbers, or the points' extent) or a 1-D tensor of increasing
    edges per dim. ``weight`` (shape ``input.shape[:-1]``) weighs each point; ``density`` divides by the total
    and by each cell's volume. Not differentiable, as in PyTorch."""
    if isinstance(bins, Tensor):
        raise TypeError(_BINS_OVERLOADS)
    a = input._data
    if a.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if dt.kind(a.dtype) != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_name(a.dtype)}'")
    dims = a.shape[-1]
    points = a.reshape(-1, dims)
    given = not isinstance(bins, (int, np.integer)) and any(isinstance(b, Tensor) for b in bins)
    if not given:
        counts = [int(bins)] * dims if isinstance(bins, (int, np.integer)) else [int(b) for b in bins]
        if len(counts) != dims:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    weights = point_weights(weight, a, points.shape[0], a.shape[:-1], list(a.shape))
    edges = _given_edges(bins, dims, a.dtype) if given else _equal_edges(points, counts, range, a.dtype)
    hist = _counts(points, edges, weights, a.dtype)
    if density:
        hist = _as_density(hist, edges).astype(a.dtype, copy=False)
    # given edges come back as the very tensors given, as PyTorch returns them
    hist_tensor, edge_tensors = wrap(hist), tuple(bins) if given else tuple(wrap(e) for e in edges)
    _without_derivative("_histogramdd_from_bin_tensors" if given else "_histogramdd_from_bin_cts", (input,),
                        hist_tensor)
    if not given:
        _without_derivative("_histogramdd_bin_edges", (input,), list(edge_tensors))
    return return_types.histogramdd(hist_tensor, edge_tensors)
