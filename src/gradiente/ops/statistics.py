"""Statistics and numerical helpers: fused products (``addcmul``, ``addcdiv``, ``addbmm``), joint moments
(``std_mean``, ``var_mean``, ``aminmax``), order statistics (``quantile``, ``nanquantile``, ``nanmedian``),
``cov`` and ``corrcoef``, counting (``bincount``, ``isin``, ``histogram``), integration (``trapezoid``,
``cumulative_trapezoid``), ``unravel_index``, ``ravel``, ``renorm``, and the signal windows (``hann_window``
and its kin).

Where PyTorch's graph is a composition (quantile is a sort, two gathers and a lerp; cov is a centring, a
matrix product and a division), the op is the same composition of gradiente ops, so ``grad_fn`` shows
PyTorch's last node and no rule is written twice. The rest have a node of their own, as in PyTorch.
"""
import math
import warnings

import numpy as np

from ..core import dtype as dt
from ..core import grad_mode, return_types
from ..core.dtype import cpp_name, scalar_name
from ..core.errors import _require_tensor, broadcast_shape
from ..core.node import Node
from ..core.record import as_result, record, wants_grad, wrap
from ..core.tensor import Tensor, _wrap_dim
from .arithmetic import _without_derivative
from .assembling import broadcast_tensors
from .binary_math import lerp
from .complex_numbers import complex, conj, imag, real
from .indexing import gather, masked_fill
from .matmul import AddmmBackward0, _scaled_sum
from .rearranging import unbind
from .reductions import (
    MedianBackward0,
    MedianBackward1,
    _median,
    _reduced_shape,
    _var_backward,
    expand_reduced,
    normalize_dims,
    std,
    unsqueeze_reduced,
    var,
    vector_norm,
)
from .sorting import sort
from .unary import ceil, floor
from .unary import round as round_half_even
from .views import (
    _squeeze_result,
    contiguous,
    expanded_shape,
    flatten,
    select,
    slice_dim,
    transpose,
    unsqueeze,
    view,
)

__all__ = ["addbmm", "addcdiv", "addcmul", "aminmax", "bartlett_window", "bincount", "blackman_window",
           "corrcoef", "cov", "cumulative_trapezoid", "hamming_window", "hann_window", "histogram", "isin",
           "kaiser_window", "nanmedian", "nanquantile", "quantile", "ravel", "renorm", "std_mean", "trapezoid",
           "trapz", "unravel_index", "var_mean"]

# Named pairs PyTorch returns that ``return_types`` does not list yet.
_nanmedian_type = return_types._return_type("nanmedian")
_histogram_type = return_types._return_type("histogram", ("hist", "bin_edges"))


# --- addcmul, addcdiv ------------------------------------------------------------------------------------

class AddcmulBackward0(Node):
    """out = x + v·t1·t2;  dx = grad;  dt1 = grad·v·t2;  dt2 = grad·v·t1"""
    formula = "∂/∂x = 1,  ∂/∂t1 = v·t2,  ∂/∂t2 = v·t1"

    def backward(self, ops, grad):
        t1, t2 = self.saved(ops)
        (_, _), (t1_node, _), (t2_node, _) = self.next_functions
        v = self.value
        return (grad,
                grad * (t2 * v) if t1_node is not None else None,
                grad * (t1 * v) if t2_node is not None else None)


class AddcdivBackward0(Node):
    """out = x + v·t1/t2;  dx = grad;  dt1 = grad·v/t2;  dt2 = -grad·v·t1/t2²"""
    formula = "∂/∂x = 1,  ∂/∂t1 = v/t2,  ∂/∂t2 = -v·t1/t2²"

    def backward(self, ops, grad):
        t1, t2 = self.saved(ops)
        (_, _), (t1_node, _), (t2_node, _) = self.next_functions
        v = self.value
        return (grad,
                grad * v / t2 if t1_node is not None else None,
                -grad * v * t1 / (t2 * t2) if t2_node is not None else None)


_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")


def _addc(name, input, tensor1, tensor2, value, combine, node_cls):
    """``combine(input, value·tensor1, tensor2)`` in the three tensors' common dtype (value cast to it, as
    PyTorch casts it: 0.5 becomes 0 for integer tensors); value·tensor1 first, as PyTorch orders it."""
    for position, (arg, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        _require_tensor(name, t, position, arg)
    target = dt.result_type(input, tensor1, tensor2)._np
    if name == "addcdiv" and tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(_INTEGER_ADDCDIV)
    if target == np.bool_:
        raise NotImplementedError(f'"{name}_cpu_out" not implemented for \'Bool\'')
    x, a, b = (t._data.astype(target, copy=False) for t in (input, tensor1, tensor2))
    v = np.asarray(value).astype(target)
    broadcast_shape(x.shape, a.shape, b.shape)
    result = as_result(combine(x, v * a, b), target)
    if wants_grad(input, tensor1, tensor2):
        record(node_cls, (input, tensor1, tensor2), result, (tensor1, tensor2), value=value)
    return result


def _fused_multiply_add(x, scaled, b):
    """x + scaled·b rounded once, as PyTorch's kernel fuses it: computed in a wider type (exact for float32; for
    float64, long double where the platform has one, which agrees with a true fused multiply-add nearly always)."""
    if x.dtype.kind != "f":
        return x + scaled * b
    wide = np.longdouble if x.dtype == np.float64 else np.float64
    return (scaled.astype(wide) * b + x).astype(x.dtype)


def _add_divided(x, scaled, b):
    return x + scaled / b


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value·tensor1·tensor2, elementwise with broadcasting."""
    return _addc("addcmul", input, tensor1, tensor2, value, _fused_multiply_add, AddcmulBackward0)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value·tensor1/tensor2, elementwise with broadcasting (integer tensor1 and tensor2 are refused)."""
    return _addc("addcdiv", input, tensor1, tensor2, value, _add_divided, AddcdivBackward0)


# --- addbmm ----------------------------------------------------------------------------------------------

class AddbmmBackward0(AddmmBackward0):
    """out = β·b + α·Σᵢ Xᵢ @ Yᵢ;  db = β·grad;  dXᵢ = α·grad @ Yᵢᵀ;  dYᵢ = α·Xᵢᵀ @ grad (addmm's rule, with the
    gradient broadcast over the batch by the matrix product)"""
    __slots__ = ()
    formula = "∂/∂b = β,  ∂/∂Xᵢ = α·G·Yᵢᵀ,  ∂/∂Yᵢ = α·Xᵢᵀ·G"


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """β·input + α·(the sum over the batch of batch1[i] @ batch2[i]): a (n, m) result from (b, n, k) and
    (b, k, m) batches; ``input`` broadcasts to (n, m)."""
    xa, ya = batch1._data, batch2._data
    # PyTorch first expands input to (batch1.size(1), batch2.size(2)): its errors come in that order
    target = (xa.shape[_wrap_dim(1, xa.ndim)], ya.shape[_wrap_dim(2, ya.ndim)])
    expanded_shape(input, target)
    for name, a in (("batch1", xa), ("batch2", ya)):
        if a.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if xa.shape[0] != ya.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {xa.shape[0]} and {ya.shape[0]}")
    if xa.shape[2] != ya.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({xa.shape[1]}x{xa.shape[2]} and "
                           f"{ya.shape[1]}x{ya.shape[2]})")
    for first in (xa, input._data):
        if first.dtype != ya.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_name(first.dtype)} and "
                               f"{scalar_name(ya.dtype)}")
    product = np.matmul(xa, ya).sum(axis=0, dtype=xa.dtype)
    out = wrap(_scaled_sum(product, input, target, beta, alpha))
    if wants_grad(input, batch1, batch2):
        record(AddbmmBackward0, (input, batch1, batch2), out, (batch1, batch2), alpha=alpha, beta=beta)
    return out


# --- std_mean, var_mean, aminmax -------------------------------------------------------------------------

def _moments_backward(ops, node, x, grad_var, grad_mean):
    """The gradient of (var, mean) over the node's dims, given theirs."""
    mean_part = expand_reduced(ops, grad_mean / node.count, node.axes, node.keepdim, node.shape)
    return _var_backward(ops, grad_var, x, node.axes, node.keepdim, node.dof) + mean_part


class VarMeanBackward0(Node):
    """(var, mean) of x over dims;  dx = grad_var·2(x - mean)/(n - c) + grad_mean/n"""
    formula = "∂var/∂xⱼ = 2(xⱼ - x̄)/(n - c),  ∂mean/∂xⱼ = 1/n"

    def backward(self, ops, grad_var, grad_mean):
        x, _ = self.saved(ops)
        return (_moments_backward(ops, self, x, grad_var, grad_mean),)


class StdMeanBackward0(Node):
    """(std, mean) of x over dims;  dx = grad_std·(x - mean)/((n - c)·std) + grad_mean/n (no std term where
    std = 0)"""
    formula = "∂std/∂xⱼ = (xⱼ - x̄)/((n - c)·std),  ∂mean/∂xⱼ = 1/n"

    def backward(self, ops, grad_std, grad_mean):
        x, std = self.saved(ops)
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_var = ops.mask(ops.raw(std) != 0, grad_std / (std * 2))
        return (_moments_backward(ops, self, x, grad_var, grad_mean),)


def _spread_and_mean(name, input, dim, unbiased, keepdim, correction):
    """(var or std, mean) over ``dim`` with var's argument forms, recorded as one node with two outputs."""
    a = input._data
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    spread_fn = var if name == "var_mean" else std
    with grad_mode.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spread = spread_fn(input, dim, unbiased, keepdim, correction=correction)
    for w in caught:                            # var's (or std's) warning, under this function's name
        warnings.warn(str(w.message).replace(f"{name[:3]}()", f"{name}()"), w.category, stacklevel=3)
    axes = normalize_dims(dim, a.ndim)
    count = math.prod(a.shape[i] for i in axes)
    # the mean in double for float32 and float16, as var computes, then rounded once
    work = a.astype(np.float64) if a.dtype in (np.float32, np.float16) else a
    mean = as_result(work.mean(axis=axes, keepdims=keepdim), a.dtype)
    if wants_grad(input):
        if correction is None:
            correction = 0 if unbiased is False else 1
        node_cls = VarMeanBackward0 if name == "var_mean" else StdMeanBackward0
        record(node_cls, (input,), (spread, mean), (input, spread), axes=axes, keepdim=keepdim, shape=a.shape,
               count=count, dof=count - correction)
    return spread, mean


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``, with ``var``'s arguments; one node (VarMeanBackward0) for both."""
    return _spread_and_mean("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``, with ``std``'s arguments; one node (StdMeanBackward0) for both."""
    return _spread_and_mean("std_mean", input, dim, unbiased, keepdim, correction)


class AminmaxBackward0(Node):
    """(min, max) over dims;  dx = grad_min shared by the minima + grad_max shared by the maxima"""
    formula = "∂min/∂xⱼ = 1/k at the k minima;  ∂max/∂xⱼ = 1/k at the k maxima"

    def backward(self, ops, grad_min, grad_max):
        x, low, high = self.saved(ops)
        return (self._shared(ops, grad_min, x, low) + self._shared(ops, grad_max, x, high),)

    def _shared(self, ops, grad, x, value):
        xa, axes, value = ops.raw(x), self.axes, ops.raw(value)
        hit = xa == (value if self.keepdim else np.expand_dims(value, axes))
        grad = unsqueeze_reduced(ops, grad, axes, self.keepdim, xa.ndim)
        count = ops.constant(hit.sum(axis=axes, keepdims=True), grad)
        return grad / count * ops.constant(hit, grad)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of all elements, or along ``dim`` (one int); ties share each gradient equally."""
    a = input._data
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        if a.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        axes = tuple(range(a.ndim))
    else:
        axes = normalize_dims(dim, a.ndim)
        if axes and a.shape[axes[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axes[0]} to have non-zero size.")
    low = as_result(np.amin(a, axis=axes, keepdims=keepdim), a.dtype)
    high = as_result(np.amax(a, axis=axes, keepdims=keepdim), a.dtype)
    if wants_grad(input):
        record(AminmaxBackward0, (input,), (low, high), (input, low, high), axes=axes, keepdim=keepdim)
    return return_types.aminmax(low, high)


# --- quantile, nanquantile, nanmedian --------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(input, q, interpolation):
    """PyTorch's checks, in its order (its messages say quantile() for nanquantile too); returns q as an array
    of the input's dtype."""
    a = input._data
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if not isinstance(q, Tensor) and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if a.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    q_array = q._data if isinstance(q, Tensor) else np.asarray(q, dtype=a.dtype)
    if q_array.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q_array.dtype != a.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if isinstance(q, Tensor) and not ((q_array >= 0) & (q_array <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return q_array


def _sorted_slices(input, dim, keepdim):
    """The values to take quantiles of, sorted along a last dim, in a tensor of shape ``kept + (n,)`` (``kept``:
    the result's shape without the q dim), recorded as PyTorch records it (sort, then view)."""
    a = input._data
    if dim is None:
        values = sort(flatten(input))[0]
        kept = (1,) * a.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, a.ndim)
        moved = input if d == a.ndim - 1 else transpose(unsqueeze(input, -1), d, -1)
        values = sort(moved, -1)[0]
        kept = _reduced_shape(a, (d,), keepdim)
    return view(values, kept + (values._data.shape[-1],))


def _ranks(sorted_values, q, interpolation, ignore_nan):
    """The fractional position of each quantile in each sorted slice (shape ``kept + (len(q),)``), computed as
    PyTorch computes it, with tensor ops: q receives a gradient through the interpolation weights. NaNs sort
    last: a slice with one has the last position (quantile), or only its other values count (nanquantile;
    position 0 when there are none, which reads the NaN)."""
    s = sorted_values._data
    nan = np.isnan(s)
    q = view(q, -1)
    if ignore_nan:
        counts = wrap((~nan).sum(axis=-1, keepdims=True) - 1)
        ranks = q * counts
        ranks = masked_fill(ranks, ranks._data < 0, 0)
    else:
        last = s.shape[-1] - 1
        ranks, nan_slices = broadcast_tensors(q * last, wrap(nan.any(axis=-1, keepdims=True)))
        ranks = masked_fill(ranks, nan_slices, last)
    round_to = {"lower": floor, "higher": ceil, "nearest": round_half_even}.get(interpolation)
    return round_to(ranks) if round_to is not None else ranks


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    q_array = _check_quantile(input, q, interpolation)
    sorted_values = _sorted_slices(input, dim, keepdim)
    ranks = _ranks(sorted_values, q if isinstance(q, Tensor) else wrap(q_array), interpolation, ignore_nan)
    below = ranks._data.astype(np.int64)
    result = gather(sorted_values, -1, wrap(below))
    if interpolation in ("linear", "midpoint"):
        weights = wrap(np.full_like(ranks._data, 0.5)) if interpolation == "midpoint" else ranks - wrap(below)
        above = gather(sorted_values, -1, wrap(np.ceil(ranks._data).astype(np.int64)))
        result = lerp(result, above, weights)
    if q_array.ndim == 0:
        return _squeeze_result(result, -1)
    return _squeeze_result(transpose(unsqueeze(result, 0), 0, -1), -1)      # the q dim first


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q a number or a 1-D tensor, in [0, 1]) of all elements or along ``dim``: between
    the two nearest sorted values, by ``interpolation`` ('linear', 'lower', 'higher', 'midpoint', 'nearest').
    A slice holding a NaN gives NaN. A 1-D q adds a first dim to the result."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` over the values that are not NaN (NaN for a slice that has none)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


class NanmedianBackward0(MedianBackward0):
    """out = the median of the non-NaN x;  dx = grad / k at the k elements equal to it"""


class NanmedianBackward1(MedianBackward1):
    """out = the median of the non-NaN x along dim (with indices);  dx = grad at each median's index"""


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values that are not NaN (of all elements, or along ``dim`` as
    ``(values, indices)``); NaN where every value is NaN."""
    return _median(input, dim, keepdim, True, (NanmedianBackward0, NanmedianBackward1), _nanmedian_type)


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
    w_sum = w.sum() if w is not None else wrap(np.asarray(observations, dtype=np.int64))
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * ((w * aweights).sum() / w_sum)
    else:
        norm_factor = w_sum - correction
    if norm_factor._data <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
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


# --- bincount, isin, histogram ---------------------------------------------------------------------------

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
    target = w.dtype if w.dtype.kind == "f" else np.dtype(np.float64)
    result = wrap(np.bincount(a, weights=w, minlength=minlength).astype(target))
    _without_derivative("bincount", (weights,), result)
    return result


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number; NaN matches nothing).
    ``invert=True`` asks the opposite question."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__})")
    arrays = [t._data if isinstance(t, Tensor) else np.asarray(t) for t in (elements, test_elements)]
    for array in arrays:
        if array.dtype.kind == "c":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {scalar_name(array.dtype)}")
    return wrap(np.asarray(np.isin(arrays[0], arrays[1], invert=invert)))


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
    from ..core.creation import linspace
    return linspace(low, high, bins + 1, dtype=dt.from_numpy_dtype(dtype))._data


def histogram(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: counts (or summed ``weight``) of the elements in each bin; ``bins`` is a count of
    equal bins over ``range`` or a 1-D tensor of increasing edges. A bin holds the values from its left edge
    up to its right one, excluded except for the last. ``density`` divides by the total times the bin width."""
    a = input._data
    if a.dtype.kind != "f":
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
    counted = np.ones(values.shape, dtype=a.dtype)
    if weight is not None:
        w = weight._data
        if w.dtype != a.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                               f"have the same dtype, but got input({cpp_name(a.dtype)}), and "
                               f"weight({cpp_name(w.dtype)})")
        if w.shape != a.shape:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               f"input tensor excluding its innermost dimension, but got input with shape "
                               f"[{values.size}, 1] and weight with shape [{', '.join(map(str, w.shape))}]")
        counted = w.reshape(-1)
    hist = np.zeros(max(edges.size - 1, 0), dtype=a.dtype)
    if hist.size:
        inside = (values >= edges[0]) & (values <= edges[-1])
        positions = np.minimum(np.searchsorted(edges, values[inside], side="right") - 1, hist.size - 1)
        np.add.at(hist, positions, counted[inside])
    if density:
        hist = (hist / (hist.sum() * np.diff(edges))).astype(a.dtype)
    result = _histogram_type(wrap(hist), wrap(edges))
    _without_derivative("histogram", (input,), list(result))
    return result


# --- trapezoid, cumulative_trapezoid ---------------------------------------------------------------------

def _scaled(t, c, by):
    """``t * c`` (``by='mul'``) or ``t / c`` recorded as PyTorch's C++ code records a tensor-number product
    (MulBackward1, DivBackward1); integer tensors become the default float dtype first, as the product would."""
    from .nn._common import div_scalar, mul_scalar
    if t._data.dtype.kind in "biu":
        t = wrap(t._data.astype(dt.get_default_dtype()._np))
    return mul_scalar(t, c) if by == "mul" else div_scalar(t, c)


def _trapezoid_args(name, y, x, dx, dim):
    """The dim, and x or dx, with PyTorch's checks (one of x and dx, never both)."""
    overloads = (f"{name}() received an invalid combination of arguments - got ({{}}), but expected one of:\n"
                 " * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    if x is not None and (not isinstance(x, Tensor) or dx is not None):
        got = ", ".join(["Tensor", type(x).__name__] + (["dx=" + type(dx).__name__] if dx is not None else []))
        raise TypeError(overloads.format(got))
    if y._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, y._data.ndim)


def _sample_spacing(name, y, x, d):
    """The differences of x along dim ``d``, shaped to broadcast against y's intervals."""
    xa = x._data
    if xa.ndim == 1:
        if xa.shape[0] != y._data.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y._data.ndim
        shape[d] = xa.shape[0]
        x = view(x, tuple(shape))
    n = x._data.shape[d]
    return slice_dim(x, d, 1, n, 1) - slice_dim(x, d, 0, n - 1, 1)


def _interval_sums(y, d):
    """y_{i+1} + y_i along dim ``d``: twice each interval's mean height."""
    n = y._data.shape[d]
    return slice_dim(y, d, 1, n, 1) + slice_dim(y, d, 0, n - 1, 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of the samples ``y`` along ``dim`` by the trapezoidal rule, at positions ``x`` (a tensor)
    or a spacing ``dx`` (1 by default)."""
    d = _trapezoid_args("trapezoid", y, x, dx, dim)
    ya = y._data
    if ya.shape[d] == 0:
        target = ya.dtype if ya.dtype.kind in "fc" else dt.get_default_dtype()._np
        return wrap(np.zeros(ya.shape[:d] + ya.shape[d + 1:], dtype=target))
    if x is not None:
        return _scaled((_interval_sums(y, d) * _sample_spacing("trapezoid", y, x, d)).sum(d), 2.0, "div")
    ends = select(y, d, 0) + select(y, d, -1)
    return _scaled(y.sum(d) - _scaled(ends, 0.5, "mul"), 1 if dx is None else dx, "mul")


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid``, under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule: one value fewer than ``y`` along
    ``dim`` (the integral up to each sample after the first)."""
    d = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if x is not None:
        spaced = _interval_sums(y, d) * _sample_spacing("cumulative_trapezoid", y, x, d)
        return _scaled(spaced.cumsum(d), 2.0, "div")
    return _scaled(_interval_sums(y, d), (1 if dx is None else dx) / 2.0, "mul").cumsum(d)


# --- unravel_index, ravel, renorm ------------------------------------------------------------------------

def unravel_index(indices, shape):
    """The coordinates, in a tensor of ``shape``, of each flat (C-order) position in ``indices``: a tuple of
    int64 tensors, one per dim. Positions wrap around as Python's ``//`` and ``%`` make them."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{indices.dtype._name}")
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for size in shape:
        if not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
    shape = tuple(shape)
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides = np.array([math.prod(shape[i + 1:]) for i in range(len(shape))], dtype=np.int64)
    flat = indices._data.astype(np.int64)[..., None]
    coordinates = np.floor_divide(flat, strides) % np.array(shape, dtype=np.int64)
    return unbind(wrap(coordinates), -1)


def ravel(input):
    """The elements as a 1-D tensor: a view when ``input`` is contiguous, else a contiguous copy viewed."""
    return view(contiguous(input), -1)


class RenormBackward0(Node):
    """out = x·f per slice, f = maxnorm/(‖slice‖ₚ + 1e-7) where the norm exceeds maxnorm, else 1;
    dx = f·grad + f'(‖slice‖ₚ)·(Σ_slice grad·x)·∂‖slice‖ₚ/∂x"""
    formula = "∂(x·f(‖x‖))/∂x = f·grad + f'(‖x‖)·(Σ grad·x)·∂‖x‖/∂x"

    def backward(self, ops, grad):
        # f'(n) = -maxnorm/(n + 1e-7)² on the slices the forward scaled (``active``); elsewhere f = 1, f' = 0
        (x,) = self.saved(ops)
        norm, d_norm = _slice_norm(ops, x, self.p, self.axes)
        active = self.active
        shifted = norm + 1e-7
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = ops.select(active, self.maxnorm / shifted, 1.0)
            d_factor = ops.mask(active, -self.maxnorm / (shifted * shifted))
            through_norm = d_factor * ops.sum(grad * x, self.axes, keepdim=True) * d_norm
        return (grad * factor + ops.mask(np.broadcast_to(active, ops.raw(x).shape), through_norm),)


def _slice_norm(ops, x, p, axes):
    """The p-norm n of each slice (kept dims) and ∂n/∂x, written with ``ops`` so that both are differentiable
    under create_graph; the ∞-norm as the mean of |x| over the slice's maxima (its value, and its gradient
    shared among ties)."""
    magnitude = ops.abs(x)
    if math.isinf(p):
        top = np.abs(ops.raw(x))
        hit = top == top.max(axis=axes, keepdims=True)
        count = ops.constant(hit.sum(axis=axes, keepdims=True), magnitude)
        norm = ops.sum(ops.mask(hit, magnitude), axes, keepdim=True) / count
        return norm, ops.mask(hit, ops.sign(x)) / count
    norm = ops.sum(magnitude ** p, axes, keepdim=True) ** (1.0 / p)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 1:
            return norm, ops.sign(x)
        d_norm = ops.sign(x) * magnitude ** (p - 1) * norm ** (1 - p)
    return norm, ops.mask(ops.raw(x) != 0, d_norm) if p < 1 else d_norm


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` (``input.select(dim, i)``) whose p-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (divided by its norm + 1e-7); the others unchanged."""
    a = input._data
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype)}")
    d = _wrap_dim(dim, a.ndim)
    axes = tuple(i for i in range(a.ndim) if i != d)
    norm = vector_norm(wrap(a), p, axes, keepdim=True)._data
    active = norm > maxnorm
    scale = norm.dtype.type(maxnorm) / (norm + norm.dtype.type(1e-7))
    result = as_result(a * np.where(active, scale, np.ones((), scale.dtype)), a.dtype)
    if wants_grad(input):
        record(RenormBackward0, (input,), result, (input,), p=float(p), axes=axes, maxnorm=float(maxnorm),
               active=active)
    return result


# --- windows ---------------------------------------------------------------------------------------------

def _window(name, window_length, periodic, dtype, requires_grad, symmetric):
    """A window of ``window_length`` points. ``symmetric(n, np_dtype)`` computes the symmetric window of n >= 2
    points; a periodic window is the symmetric one of n + 1 points without its last (PyTorch's way)."""
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    d = dtype if dtype is not None else dt.get_default_dtype()
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d._legacy[:-len('Tensor')]}'")
    if d._np is None:
        raise TypeError(f"gradiente has no {d._name} tensors: NumPy has no such type")
    if not d.is_floating_point:
        # PyTorch prints the options without requires_grad, whatever was asked
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={cpp_name(d._np)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if window_length <= 1:
        values = np.ones(window_length, dtype=d._np)
    else:
        values = symmetric(window_length + 1 if periodic else window_length, d._np)[:window_length]
    return Tensor._make(np.ascontiguousarray(values), requires_grad=requires_grad)


def _cos(angles):
    # in double, rounded once: within an ulp of PyTorch's vectorized cos (neither is always the other)
    return np.cos(angles.astype(np.float64)).astype(angles.dtype)


def _positions(n, np_dtype, spacing):
    """0, 1, ..., n-1 times ``spacing``, in the window's dtype (the number rounded to it first, as PyTorch
    multiplies a tensor by a number)."""
    return np.arange(n, dtype=np_dtype) * np_dtype.type(spacing)


def _hamming(alpha, beta):
    def symmetric(n, np_dtype):
        angles = _positions(n, np_dtype, 2 * math.pi / (n - 1))
        return _cos(angles) * np_dtype.type(-beta) + np_dtype.type(alpha)
    return symmetric


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """alpha - beta·cos(2πk/(N - 1)), k = 0 .. N-1 (N = window_length, or window_length + 1 if periodic)."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, _hamming(alpha, beta))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """½ - ½·cos(2πk/(N - 1)): the Hamming window with alpha = beta = ½."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad, _hamming(0.5, 0.5))


def _blackman(n, np_dtype):
    t = np_dtype.type
    angles = _positions(n, np_dtype, math.pi / (n - 1))
    return _cos(angles * t(4)) * t(0.08) - _cos(angles * t(2)) * t(0.5) + t(0.42)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """0.42 - 0.5·cos(2πk/(N - 1)) + 0.08·cos(4πk/(N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, _blackman)


def _bartlett(n, np_dtype):
    t = np_dtype.type
    values = _positions(n, np_dtype, 2 / (n - 1))
    rising = ((n - 1) >> 1) + 1
    values[rising:] = values[rising:] * t(-1) + t(2)
    return values


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The triangle 2k/(N - 1) rising to 1 at the middle, then falling back to 0."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, _bartlett)


def _kaiser(beta):
    def symmetric(n, np_dtype):
        from .elementwise_extra import i0_array
        t = np_dtype.type
        half = t((n - 1) / 2.0)
        ratio = (np.arange(n, dtype=np_dtype) - half) / half
        arguments = t(beta) * np.sqrt(np.abs(t(1) - ratio ** t(2)))
        return (i0_array(arguments) / i0_array(np.asarray(t(beta)))).astype(np_dtype)
    return symmetric


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """I₀(β·√(1 - ((k - (N-1)/2) / ((N-1)/2))²)) / I₀(β), I₀ the modified Bessel function of order 0."""
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, _kaiser(beta))

