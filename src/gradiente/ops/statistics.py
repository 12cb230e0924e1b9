"""Statistics of a sample: ``cov`` and ``corrcoef`` (compositions of differentiable ops, as PyTorch composes
them: a centring, a matrix product and a division), and the counts ``bincount``, ``histogram`` and ``histc``,
which have no derivative.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.creation import linspace
from ..core.dtype import cpp_name, scalar_name
from ..core.record import wrap
from ..core.tensor import Tensor
from ..core.warnings_at_caller import warn
from .arithmetic import _without_derivative
from .complex_numbers import complex, conj, imag, real
from .histogramdd import point_weights
from .nn._common import mul_scalar
from .views import (
    view,
)

__all__ = ["bincount", "corrcoef", "cov", "histogram", "histc"]



# --- cov, corrcoef ---------------------------------------------------------------------------------------

def _check_weights(name, w, observations, integral):
    a = w._data
    kind = "integral" if integral else "floating point"
    if a.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {a.ndim} "
                           "dimensions")
    if a.size != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input but "
                           f"got {a.size} != {observations}")
    if a.dtype.kind not in ("iu" if integral else "f"):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with {scalar_name(a.dtype)} "
                           "dtype")
    if (a < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (a 1-D input is one variable), each
    observation weighted by ``fweights`` (integer counts) and ``aweights`` (floating importances). Recorded
    as PyTorch records it: the centring, a matrix product, a division and a squeeze."""
    a = input._data
    if a.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {a.ndim} "
                           "dimensions")
    x = view(input, (1, -1)) if a.ndim < 2 else input
    observations = x._data.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, integral=False)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else wrap(np.asanyarray(observations, dtype=np.int64))
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - mul_scalar((w * aweights).sum(), correction) / w_sum     # PyTorch's order
    else:
        norm_factor = w_sum - correction
    if norm_factor._data <= 0:
        warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    centered = x - avg.unsqueeze(1)
    product = centered.mm(conj((centered * w if w is not None else centered).t()))
    return (product / norm_factor).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``: ``cov`` scaled by the
    standard deviations, clipped to [-1, 1] (real and imaginary parts apart for complex input)."""
    if input._data.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c                            # 1, or nan for a zero, inf or nan variance
    diag = c.diagonal()
    stddev = (real(diag) if diag.is_complex() else diag).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return complex(real(c).clip(-1, 1), imag(c).clip(-1, 1))
    return c.clip(-1, 1)


# --- bincount, histogram, histc ---------------------------------------------------------------------------

def bincount(input, weights=None, minlength=0):
    """How many times each value 0, 1, ..., max(input) occurs in a 1-D non-negative integer tensor (at least
    ``minlength`` counts); with ``weights``, their sums instead (float, or double for integer weights)."""
    a = input._data
    if a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return wrap(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data
    if w.ndim != 1 or w.size != a.size:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    target = w.dtype if dt.kind(w.dtype) == "f" else np.dtype(np.float64)
    result = wrap(np.bincount(a, weights=w, minlength=minlength).astype(target))
    _without_derivative("bincount", (weights,), result)
    return result


def _histogram_edges(values, bins, range, dtype):
    """``bins + 1`` equal-width edges over ``range`` (the data's own range by default; an empty range widened by
    1/2 on each side), with PyTorch's checks."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif values.size:
        low, high = float(values.min()), float(values.max())
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} for "
                           "dimension 0")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return linspace(low, high, bins + 1, dtype=dt.from_numpy_dtype(dtype))._data


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: counts (or summed ``weight``) of the elements in each bin; ``bins`` is a count of
    equal bins over ``range`` or a 1-D tensor of increasing edges. A bin holds the values from its left edge
    up to its right one, excluded except for the last. ``density`` divides by the total times the bin width."""
    a = input._data
    if dt.kind(a.dtype) != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_name(a.dtype)}'")
    values = a.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins._data
        if edges.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{edges.ndim} dimensions in the bins tensor for dimension 0")
        if edges.dtype != a.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {cpp_name(a.dtype)} and bins for dimension 0 with dtype "
                               f"{cpp_name(edges.dtype)}")
        edges = edges.copy()
    else:
        edges = _histogram_edges(values, bins, range, a.dtype)
    counted = point_weights(weight, a, values.size, a.shape, [values.size, 1])
    hist = np.zeros(max(edges.size - 1, 0), dtype=a.dtype)
    if hist.size:
        inside = (values >= edges[0]) & (values <= edges[-1])
        positions = np.minimum(np.searchsorted(edges, values[inside], side="right") - 1, hist.size - 1)
        np.add.at(hist, positions, counted[inside])
    if density:
        hist = (hist / (hist.sum() * np.diff(edges))).astype(a.dtype)
    result = return_types.histogram(wrap(hist), wrap(edges))
    _without_derivative("histogram", (input,), list(result))
    return result


# --- histc --------------------------------------------------------------------------------------------------

def _cpp_float(value):
    """A float as C++ streams print it in PyTorch's messages: 1, 0.5, inf, -nan."""
    return "-nan" if math.isnan(value) else f"{value:g}"


def histc(input, bins=100, min=0, max=0):
    """Counts of the elements in ``bins`` equal-width bins over [min, max] (the data's own range when both
    are 0), as a tensor of ``input``'s dtype; elements outside the range are ignored. Not differentiable."""
    a = input._data
    if dt.kind(a.dtype) != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low == high and a.size:
        low, high = float(a.min()), float(a.max())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{_cpp_float(low)}, {_cpp_float(high)}] is not finite")
    values = a.reshape(-1)
    values = values[(values >= low) & (values <= high)]
    # A value's bin from its place in the range, in the input's precision as PyTorch computes it (so a value
    # that rounding puts beside an edge lands where PyTorch puts it); the maximum goes to the last bin.
    low_, high_ = a.dtype.type(low), a.dtype.type(high)
    bin_of = np.minimum(((values - low_) * bins / (high_ - low_)).astype(np.int64), bins - 1)
    return wrap(np.bincount(bin_of, minlength=bins).astype(a.dtype))
