"""Normalization (``layer_norm``, ``batch_norm``, ``group_norm``): the forward and first derivatives on NumPy
arrays, and the second derivatives PyTorch gives.

Each is one node whose rule is the closed-form gradient of ``y = (x - mean) * rstd * weight + bias`` with
the statistics taken over the normalized axes (``xhat = (x - mean) * rstd``)::

    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),   dxhat = grad * weight

computed from the arrays the forward saved (``xhat``, ``rstd``): the training hot path. Under ``create_graph=True``
(a gradient penalty, say) the first derivatives must be differentiable again, and each op records them as
PyTorch does:

* layer_norm and batch_norm compute the same arrays and record them as the outputs of one node,
  ``NativeLayerNormBackwardBackward0`` / ``NativeBatchNormBackwardBackward0``, whose rule (``_second_derivatives``)
  is written with ``ops`` names only: it runs on arrays for second derivatives and on recorded tensors for third;
* group_norm composes them from differentiable ops, as PyTorch's ``infinitely_differentiable_native_group_norm_
  backward`` does, so its graph reads as PyTorch's.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core import grad_mode, moments
from ...core.creation import c_order
from ...core.dtype import scalar_name
from ...core.fused import fma as _fma
from ...core.node import Node, tangent_sum
from ...core.record import record, wants_grad
from ...core.rules import numpy_ops
from ...core.tensor import Tensor
from . import batch_norm_kernel, group_norm_kernel, layer_norm_kernel
from ._array_rules import record_gradients

__all__ = ["layer_norm", "batch_norm", "group_norm", "native_layer_norm", "native_batch_norm", "native_group_norm"]


# --- reductions -------------------------------------------------------------------------------------------
# The statistics and rules below reduce over each row of a matrix: layer norm's rows are the normalized trailing
# dims, group norm's a (sample, group)'s elements. NumPy's ``sum`` adds a float32 row pairwise, a few elements at
# a time; a matrix-vector product with a vector of ones (``rows @ ones``) sums the same row in BLAS's vectorized
# kernel, about three times as fast, and ``einsum('ij,ij->i')`` takes the row-wise dot product of two matrices
# without writing their product first. Batch norm reduces over every dim but the channels (0, 2, 3 of NCHW): its
# sums are two such products, each sample's channel rows first (``(N·C, rest) @ ones``), then the samples
# (``ones @ (N, C)``). Their results differ from ``sum``'s in rounding only (another order of the same additions,
# in the same dtype). float16 and other dtypes keep NumPy's reductions.

def _trailing(a, axes):
    """``a`` as a matrix whose rows are the elements over ``axes``, or None where the shortcut doesn't apply
    (axes that are not a's last ones, a dtype BLAS lacks, no elements)."""
    k = len(axes)
    if a.dtype not in (np.float32, np.float64) or axes != tuple(range(a.ndim - k, a.ndim)) or a.size == 0:
        return None
    return a.reshape(-1, math.prod(a.shape[a.ndim - k:]))


def _keep(rows_result, a, axes):
    return rows_result.reshape(a.shape[:a.ndim - len(axes)] + (1,) * len(axes))


def _channel_rows(a, axes):
    """``a`` as an (N·C, rest) matrix when ``axes`` are every dim but the channels (dim 1) of an (N, C, ...) array,
    else None (as ``_trailing``; the array must be contiguous for the reshape to be a view)."""
    if (a.ndim < 3 or axes != (0,) + tuple(range(2, a.ndim)) or a.dtype not in (np.float32, np.float64)
            or a.size == 0 or not a.flags.c_contiguous):
        return None
    return a.reshape(a.shape[0] * a.shape[1], -1)


def _per_channel(row_results, a):
    """The (1, C, 1, ...) sums over the samples of per-(sample, channel) results ``row_results`` (N·C,)."""
    per_sample = row_results.reshape(a.shape[0], a.shape[1])
    return (np.ones(a.shape[0], per_sample.dtype) @ per_sample).reshape((1, a.shape[1]) + (1,) * (a.ndim - 2))


def _sum(a, axes):
    """``a.sum(axis=axes, keepdims=True)``."""
    rows = _trailing(a, axes)
    if rows is not None:
        return _keep(rows @ np.ones(rows.shape[1], a.dtype), a, axes)
    rows = _channel_rows(a, axes)
    if rows is not None:
        return _per_channel(rows @ np.ones(rows.shape[1], a.dtype), a)
    return a.sum(axis=axes, keepdims=True)


def _count(a, axes):
    return math.prod(a.shape[axis] for axis in axes)


def _mean(a, axes):
    """``a.mean(axis=axes, keepdims=True)``: the sum divided by the count, as NumPy's mean."""
    if _trailing(a, axes) is None and _channel_rows(a, axes) is None:
        return a.mean(axis=axes, keepdims=True)
    return _sum(a, axes) / _count(a, axes)


def _centered_statistics(a, axes):
    """``(mean, a - mean, variance)`` over ``axes``, as layer and group norm take them, with a row whose elements
    are all equal centred to exact zeros. PyTorch's kernel (Welford's update, m += (x - m) / n) gets such a row's
    mean exactly; a sum divided by the count may be off in the last bit, and 1/x or log of the normalized row
    would then be huge instead of inf. Only a row whose variance is at rounding level can be one, so the common
    case pays one comparison of the per-row statistics and no extra pass over the data."""
    mean = _mean(a, axes)
    centered = a - mean
    var = _mean_of_product(centered, centered, axes)
    if a.size:
        rounding = np.finfo(a.dtype).eps * np.abs(mean)
        if (var <= 4 * rounding * rounding).any():
            first = a.min(axis=axes, keepdims=True)
            constant = first == a.max(axis=axes, keepdims=True)
            if constant.any():
                # + 0 makes a mean of zeros +0, as Welford's sum gives it (-0 + 0 = +0), so a -0 input stays -0
                mean = np.where(constant, first + first.dtype.type(0), mean)
                centered = a - mean
                var = np.where(constant, 0, var).astype(var.dtype, copy=False)
    return mean, centered, var


def _welford_statistics(a, axes, float_in=None):
    """``(mean, a - mean, variance)`` over ``a``'s trailing ``axes`` as PyTorch's layer and group norm kernels take
    them (Welford's update in its vector lanes, ``core/moments.py``), for float32 and float64; other dtypes as
    ``_centered_statistics``. ``float_in``: the dtype the input had before it was widened to ``a``'s: a float16 or
    bfloat16 input takes other steps in PyTorch, and keeps the two-pass statistics here."""
    rows = _trailing(a, axes)
    if rows is None or a.dtype not in moments.LANES or (float_in is not None and float_in != a.dtype):
        return _centered_statistics(a, axes)
    mean, var = moments.rowwise_moments(np.ascontiguousarray(rows))
    mean, var = _keep(mean, a, axes), _keep(var, a, axes)
    return mean, a - mean, var


def _mean_of_product(a, b, axes):
    """``(a * b).mean(axis=axes, keepdims=True)`` for a and b of one shape and dtype."""
    total = _sum_of_product(a, b, axes)
    return (a * b).mean(axis=axes, keepdims=True) if total is None else total / _count(a, axes)


def _sum_of_product(a, b, axes):
    """``(a * b).sum(axis=axes, keepdims=True)`` without writing the product, or None where no shortcut applies."""
    if a.dtype != b.dtype:
        return None
    rows, other = _trailing(a, axes), _trailing(b, axes)
    if rows is not None and other is not None:
        return _keep(np.einsum("ij,ij->i", rows, other), a, axes)
    rows, other = _channel_rows(a, axes), _channel_rows(b, axes)
    if rows is not None and other is not None:
        return _per_channel(np.einsum("ij,ij->i", rows, other), a)
    return None


def _dx(dxhat, xhat, rstd, axes, dxhat_is_scratch=False):
    """The input gradient of ``xhat = (x - mean) * rstd`` (statistics over ``axes``) given ``dxhat``, which the
    caller may hand over as scratch memory (``dxhat_is_scratch``)."""
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    # rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat)), each step rounded as that expression rounds it, in as few
    # fresh arrays as the dtypes allow (a large fresh array costs more than the arithmetic done in it)
    mean_of_product = _mean_of_product(dxhat, xhat, axes)
    dx = dxhat - _mean(dxhat, axes)
    scratch = dxhat if dxhat_is_scratch and np.result_type(xhat, mean_of_product) == dxhat.dtype else None
    dx = _in_place(np.subtract, dx, np.multiply(xhat, mean_of_product, out=scratch))
    return _in_place(np.multiply, dx, rstd)


def _in_place(ufunc, a, b):
    """``ufunc(a, b)``, written into ``a`` (a fresh array of the caller's) where the result has a's dtype."""
    return ufunc(a, b, out=a) if np.result_type(a, b) == a.dtype else ufunc(a, b)


def _sum_leading(a, count):
    """``a.sum(axis=tuple(range(count)))``: column sums of a as a (rows, rest) matrix, by ``ones @ a``."""
    if a.dtype not in (np.float32, np.float64) or a.size == 0:
        return a.sum(axis=tuple(range(count)))
    cols = a.reshape(math.prod(a.shape[:count]), -1)
    return (np.ones(cols.shape[0], a.dtype) @ cols).reshape(a.shape[count:])


def _normalized_grads(node, ops, grad, stat_axes, affine_axes):
    """``(dx, dweight, dbias)`` for ``y = xhat * weight + bias`` with xhat normalized over ``stat_axes``."""
    edges = node.next_functions
    weight = node.saved(ops)[1]
    dx = dw = db = None
    if edges[0][0] is not None:
        dxhat = grad
        if weight is not None:
            dxhat = grad * weight.reshape(node.affine_shape)
        dx = _dx(dxhat, node.xhat, node.rstd, stat_axes, dxhat_is_scratch=weight is not None)
    leading = affine_axes == tuple(range(len(affine_axes)))
    if len(edges) > 1 and edges[1][0] is not None:
        dw = None if leading else _sum_of_product(grad, node.xhat, affine_axes)       # (batch norm's channels)
        if dw is None:
            product = grad * node.xhat
            dw = _sum_leading(product, len(affine_axes)) if leading else product.sum(axis=affine_axes)
        dw = dw.reshape(node.weight_shape)
    if len(edges) > 2 and edges[2][0] is not None:
        db = _sum_leading(grad, len(affine_axes)) if leading else _sum(grad, affine_axes)
        db = db.reshape(node.weight_shape)
    return dx, dw, db


def _affine(xhat, weight, bias, shape):
    """``xhat * weight + bias``, never ``xhat``'s own memory: the node keeps xhat, and an in-place change of the
    output must not reach it."""
    if weight is None and bias is None:
        return xhat.copy()
    out = xhat
    if weight is not None:
        out = out * weight._data.reshape(shape)
    if bias is not None:
        bias = bias._data.reshape(shape)
        # in the product's memory where there is one: the same sums without another fresh array
        out = out + bias if out is xhat else _in_place(np.add, out, bias)
    return out


def _layer_norm_affine(xhat, weight, bias, shape):
    """``xhat * weight + bias`` as PyTorch's layer norm kernel computes it, a fused multiply-add (GCC contracts its
    ``... * gamma + beta``) for float32 and float64; other dtypes as ``_affine``."""
    if xhat.dtype not in moments.LANES or (weight is None and bias is None):
        return _affine(xhat, weight, bias, shape)
    dtype = xhat.dtype
    w = np.ones((), dtype) if weight is None else weight._data.reshape(shape).astype(dtype, copy=False)
    b = np.zeros((), dtype) if bias is None else bias._data.reshape(shape).astype(dtype, copy=False)
    return _fma(xhat, w, b, dtype)


# --- second derivatives of layer and batch norm ----------------------------------------------------------

def _statistics(ops, first, x, training):
    """``(xhat, rstd)`` of the forward, as the namespace wants them: the saved arrays, or under create_graph
    tensors recomputed from ``x`` so that third derivatives flow back to it (the running statistics of an
    evaluating batch norm are constants)."""
    if not ops.recording:
        return first.xhat, first.rstd
    if not training:
        rstd = ops.constant(first.rstd, x)
        return (x - ops.constant(first.mean.reshape(first.affine_shape), x)) * rstd, rstd
    mean = ops.mean(x, first.stat_axes, keepdim=True)
    centered = x - mean
    rstd = 1 / ops.sqrt(ops.mean(centered * centered, first.stat_axes, keepdim=True) + first.eps)
    return centered * rstd, rstd


def _second_derivatives(ops, first, needs, grad, x, weight, ggx, ggw, ggb, training):
    """``(dgrad, dx, dweight)``, each only if ``needs`` says so: the derivatives by grad, x and weight of
    ``<ggx, dx> + <ggw, dweight> + <ggb, dbias>``, where ``dx = P(grad·w)``, ``dweight = Σ grad·x̂`` and
    ``dbias = Σ grad`` are the first derivatives and ggx, ggw, ggb their cotangents (None for zero).
    ``P(v) = rstd·(v − mean(v) − x̂·mean(v·x̂))`` over the statistics' axes in training (P is symmetric, so it is
    its own adjoint), ``rstd·v`` with running statistics. In training x̂ and rstd depend on x (``∂rstd/∂x =
    −rstd²·x̂/M``); with ``gh = grad·w`` and ``B = mean(gh·x̂)``::

        dgrad   = w·P(ggx) + ggw·x̂ + ggb,     dweight = Σ grad·P(ggx)
        dx      = P(ggw·grad − rstd·(B·ggx + mean(ggx·x̂)·gh)) − rstd²·x̂·mean(ggx·(gh − mean(gh) − x̂·B))
    """
    xhat, rstd = _statistics(ops, first, x, training)
    shape, axes = first.affine_shape, first.stat_axes
    w = None if weight is None else ops.reshape(weight, shape)
    ggw = None if ggw is None else ops.reshape(ggw, shape)

    def mean(v):
        return ops.mean(v, axes, keepdim=True)

    def project(v):
        return rstd * (v - mean(v) - xhat * mean(v * xhat)) if training else rstd * v

    p = None if ggx is None else project(ggx)
    d_grad = d_x = d_weight = None
    if needs[0]:
        d_grad = tangent_sum(p if p is None or w is None else p * w, None if ggw is None else ggw * xhat,
                             None if ggb is None else ops.expand(ops.reshape(ggb, shape), grad.shape))
    if needs[1]:
        v = None if ggw is None else ggw * grad
        if training and ggx is not None:
            gh = grad if w is None else grad * w
            b = mean(gh * xhat)
            through_xhat = rstd * (b * ggx + mean(ggx * xhat) * gh)
            v = -through_xhat if v is None else v - through_xhat
            d_x = project(v) - rstd * rstd * xhat * mean(ggx * (gh - mean(gh) - xhat * b))
        elif v is not None:
            d_x = project(v)
    if needs[2] and p is not None:
        d_weight = grad * p
        if first.affine_axes:
            d_weight = ops.sum(d_weight, first.affine_axes)
        d_weight = ops.reshape(d_weight, first.weight_shape)
    return d_grad, d_x, d_weight


# --- layer norm ----------------------------------------------------------------------------------------

class NativeLayerNormBackward0(Node):
    """y = xhat * w + b, xhat over the last dims;  dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat))"""
    formula = "layer norm: dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)),  dw = Σ grad·x̂,  db = Σ grad"

    def backward(self, ops, grad):
        if ops.recording:
            x, weight, bias = self.saved(ops)
            grads = self._first_derivatives(numpy_ops, ops.raw(grad))
            # PyTorch's edges: grad_out, input, mean, rstd (outputs of the forward, not gradiente's), weight, bias
            return record_gradients(NativeLayerNormBackwardBackward0, (grad, x, None, None, weight, bias), grads,
                                    saved=(grad, x, weight), first=self)
        return self._first_derivatives(ops, grad)

    def _first_derivatives(self, ops, grad):
        """``(dx, dw, db)`` as arrays: float32 by PyTorch's kernel, other dtypes by the closed form. (Which one is
        decided from the inputs' recorded dtypes: the saved values are read once, as a checkpoint allows.)"""
        weight_meta = self._input_meta[1] if len(self._input_meta) > 1 else None     # (the output's dtype is x's)
        if grad.dtype == np.float32 and grad.size and (weight_meta is None or weight_meta[1] == np.float32):
            x, weight = self.saved(numpy_ops)[:2]
            if layer_norm_kernel.follows_kernel(x, weight):
                return self._as_pytorchs_kernel(grad, x, weight)
        return _with_constant_rows_as_torch(self, _normalized_grads(self, ops, grad, self.stat_axes,
                                                                    self.affine_axes), grad)

    def _as_pytorchs_kernel(self, grad, x, weight):
        """float32: PyTorch's kernel, step for step (``layer_norm_kernel.py``)."""
        n = math.prod(x.shape[x.ndim - len(self.stat_axes):])
        rows = np.ascontiguousarray(x).reshape(-1, n)
        edges = self.next_functions
        needs = (edges[0][0] is not None, len(edges) > 1 and edges[1][0] is not None,
                 len(edges) > 2 and edges[2][0] is not None)
        dx, dw, db = layer_norm_kernel.backward(np.ascontiguousarray(grad).reshape(-1, n), rows,
                                                self.mean.reshape(-1), self.rstd.reshape(-1),
                                                None if weight is None else weight.reshape(-1), needs)
        return (None if dx is None else dx.reshape(x.shape), None if dw is None else dw.reshape(self.weight_shape),
                None if db is None else db.reshape(self.weight_shape))


class NativeLayerNormBackwardBackward0(Node):
    """(dx, dw, db) = layer norm's first derivatives of (grad, x, w);  their derivatives: ``_second_derivatives``"""
    first: NativeLayerNormBackward0     # the forward's node: its statistics and shapes
    formula = "the derivative of layer norm's dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)), dw, db by grad, x, w"
    _materialize_grads = False      # an output that got no gradient adds nothing: the rule skips its terms

    def backward(self, ops, ggx, ggw, ggb):
        grad, x, weight = self.saved(ops)
        edges = self.next_functions
        needs = (edges[0][0] is not None, edges[1][0] is not None, edges[4][0] is not None)
        d_grad, d_x, d_weight = _second_derivatives(ops, self.first, needs, grad, x, weight, ggx, ggw, ggb, True)
        return d_grad, d_x, None, None, d_weight, None


def _check_parameter_dtypes(dtype, weight, bias):
    """PyTorch's CPU rule: the parameters share the input's dtype, or (half-precision input) are all float32."""
    params = [p._data.dtype for p in (weight, bias) if p is not None]
    if not params:
        return
    if params[0] == dtype:
        for other in params[1:]:
            if other != dtype:
                raise RuntimeError(f"expected scalar type {scalar_name(dtype)} but found {scalar_name(other)}")
        return
    if any(p != np.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if dtype not in dt.REDUCED_FLOATS:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _half_in_float32(a):
    """A float16 input's values in float32: PyTorch normalizes half precision in float32 (its accumulation type)
    and rounds the result once; the statistics and x̂ the rules read stay in float32 too."""
    return a.astype(np.float32) if a.dtype in dt.REDUCED_FLOATS else a


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dims to zero mean and unit (biased) variance, then
    scale by ``weight`` and shift by ``bias`` (both of shape ``normalized_shape``)."""
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``layer_norm`` and the statistics it used, as ATen returns them: ``(output, mean, rstd)``, mean and rstd of
    shape ``input.shape[:-k] + (1,) * k`` (k = ``len(normalized_shape)``), not differentiable (as PyTorch's)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    xa = input._data
    k = len(normalized_shape)
    if xa.shape[xa.ndim - k:] != normalized_shape or k > xa.ndim:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(xa.shape)}")
    _check_parameter_dtypes(xa.dtype, weight, bias)
    out_dtype = xa.dtype
    xa = _half_in_float32(xa)
    stat_axes = tuple(range(xa.ndim - k, xa.ndim))
    mean, centered, var = _welford_statistics(xa, stat_axes, out_dtype)
    rstd = (1.0 / np.sqrt(var + eps)).astype(xa.dtype)
    xhat = _in_place(np.multiply, centered, rstd)      # centered is a fresh array, needed no more
    affine_shape = (1,) * (xa.ndim - k) + normalized_shape
    # contiguous, as PyTorch's kernel writes it (the affine step would keep a transposed input's layout)
    result = Tensor._make(c_order(_layer_norm_affine(xhat, weight, bias, affine_shape)).astype(out_dtype, copy=False))
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        constant_rows = _short_constant_rows(xa, k, var, weight) if xa.dtype == out_dtype else None
        record(NativeLayerNormBackward0, inputs, result, saved=inputs, xhat=xhat, rstd=rstd, mean=mean, eps=eps,
               stat_axes=stat_axes, affine_axes=tuple(range(xa.ndim - k)), affine_shape=affine_shape,
               weight_shape=normalized_shape, constant_rows=constant_rows)
    return result, Tensor._make(mean.astype(xa.dtype, copy=False)), Tensor._make(rstd)


# The gradient of a row of equal values is mathematically rstd·(dx̂ − mean(dx̂)), which sums to 0; PyTorch's kernel
# computes it as a·dy·w + b·x + c with b and c from the row's sums (fused multiply-adds where GCC contracts them),
# and on such a row what it gives beyond that is rounding, amplified by rstd = 1/sqrt(eps) ≈ 316: 6e-5 for a
# float32 row of one element where the formula above gives 0 (seed 2789). A short row of equal values is computed
# in PyTorch's steps: short enough (under 4 float64 or 8 float32 elements) that PyTorch's vectorized sums add
# it in order on every CPU it vectorizes for (AVX2 and AVX-512 alike); a longer one is added in lanes whose count
# depends on the CPU, and keeps the formula above.

def _short_constant_rows(xa, k, var, weight):
    """A boolean mask of the rows (over the last ``k`` dims) of equal values short enough to be computed as
    PyTorch's kernel does in the backward, or None."""
    n = math.prod(xa.shape[xa.ndim - k:])
    if xa.dtype not in (np.float32, np.float64) or xa.size == 0 or n >= (4 if xa.dtype == np.float64 else 8) \
            or (weight is not None and weight._data.dtype != xa.dtype) or not (var == 0).any():
        return None
    rows = xa.reshape(-1, n)
    constant = (rows == rows[:, :1]).all(axis=1)
    return constant if constant.any() else None


def _with_constant_rows_as_torch(node, grads, grad):
    """``grads`` with dx of the node's short constant rows replaced by PyTorch's arithmetic."""
    dx = grads[0]
    if node.constant_rows is None or dx is None:
        return grads
    x, weight = node.saved(numpy_ops)[:2]
    n = int(np.prod([x.shape[a] for a in node.stat_axes]))
    rows = node.constant_rows
    dtype = x.dtype.type
    xs, dys = x.reshape(-1, n)[rows], grad.reshape(-1, n)[rows]
    gamma = None if weight is None else weight.reshape(1, n)
    products = dys * xs if gamma is None else dys * xs * gamma        # PyTorch's order of the products
    g = dys if gamma is None else dys * gamma
    ds, db = np.zeros(len(xs), x.dtype), np.zeros(len(xs), x.dtype)
    for j in range(n):                      # in order, as PyTorch adds fewer elements than a vector's lanes
        ds = ds + products[:, j]
        db = db + g[:, j]
    mean = xs[:, 0]
    a = dtype(1) / np.sqrt(dtype(0) + dtype(node.eps))
    scale = dtype(1) / dtype(n)
    b = _fma(db, mean, -ds, x.dtype) * a * a * a * scale
    c = _fma(-b, mean, -(db * a * scale), x.dtype)
    first = a * dys if gamma is None else a * dys * gamma
    row_dx = _fma(b[:, None], xs, first, x.dtype) + c[:, None]      # a·dy·w + b·x fused, then + c
    dx = dx.copy().reshape(-1, n)
    dx[rows] = row_dx
    return (dx.reshape(grad.shape),) + tuple(grads[1:])


# --- batch norm ----------------------------------------------------------------------------------------

class NativeBatchNormBackward0(Node):
    """y = xhat * w + b, xhat per channel;  training: dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat)),
    eval: dx = rstd·dxhat"""
    formula = "batch norm: dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) over the batch,  dw = Σ grad·x̂,  db = Σ grad"

    def backward(self, ops, grad):
        if ops.recording:
            x, weight = self.saved(ops)
            grads = self._first_derivatives(numpy_ops, ops.raw(grad))
            # PyTorch's edges: grad_out, input, weight, save_mean, save_invstd (the last two not gradiente's)
            return record_gradients(NativeBatchNormBackwardBackward0, (grad, x, weight, None, None), grads,
                                    saved=(grad, x, weight), first=self)
        return self._first_derivatives(ops, grad)

    def __getattr__(self, name):
        # a node of PyTorch's kernel (``kernel``) does not keep x̂: its first derivatives do not read it, and only a
        # second derivative asks, once
        if name == "xhat" and "kernel" in self.__dict__:
            x = self.saved(numpy_ops)[0]
            xhat = (x - self.kernel[0].reshape(self.affine_shape)) * self.rstd
            self.__dict__["xhat"] = xhat
            return xhat
        return super().__getattr__(name)

    def _first_derivatives(self, ops, grad):
        kernel = self.__dict__.get("kernel")
        if kernel is not None:          # (PyTorch's kernel's own steps: batch_norm_kernel.py)
            x, weight = self.saved(numpy_ops)
            needs = tuple(edge[0] is not None for edge in self.next_functions[:3])
            return batch_norm_kernel.backward(grad, x, *kernel, weight, self.training, needs)
        return _batch_norm_grads(self, ops, grad)


def _batch_norm_grads(node, ops, grad):
    """``(dx, dweight, dbias)``: in training as layer norm's over the batch, with running statistics affine."""
    if node.training:
        return _normalized_grads(node, ops, grad, node.stat_axes, node.stat_axes)
    weight = node.saved(ops)[1]
    dx = dw = db = None
    edges = node.next_functions
    if edges[0][0] is not None:
        dx = grad * node.rstd
        if weight is not None:
            dx = dx * weight.reshape(node.affine_shape)
    if edges[1][0] is not None:
        dw = (grad * node.xhat).sum(axis=node.stat_axes)
    if edges[2][0] is not None:
        db = grad.sum(axis=node.stat_axes)
    return dx, dw, db


class NativeBatchNormBackwardBackward0(Node):
    """(dx, dw, db) = batch norm's first derivatives of (grad, x, w);  their derivatives: ``_second_derivatives``"""
    first: NativeBatchNormBackward0     # the forward's node: its statistics and shapes
    formula = ("the derivative of batch norm's dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) (training) or rstd·dx̂, "
               "dw, db by grad, x, w")
    _materialize_grads = False      # an output that got no gradient adds nothing: the rule skips its terms

    def backward(self, ops, ggx, ggw, ggb):
        grad, x, weight = self.saved(ops)
        needs = tuple(edge[0] is not None for edge in self.next_functions[:3])
        first = self.first
        d_grad, d_x, d_weight = _second_derivatives(ops, first, needs, grad, x, weight, ggx, ggw, ggb, first.training)
        return d_grad, d_x, d_weight, None, None


def _verify_batch_size(size):
    """PyTorch's check (``F._verify_batch_size``) that a channel's statistics in training read more than one
    value: exactly one is refused (an empty batch is not). ``size`` is printed as given, a Size or a list."""
    values_per_channel = size[0]
    for n in size[2:]:
        values_per_channel *= n
    if values_per_channel == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _batch_norm_of_nothing(input, weight, bias):
    """PyTorch's batch_norm of an empty input: a clone, not a view (which would break the gradient chain), scaled
    and shifted by the first weight and bias; the running statistics are left alone."""
    out = input.clone()
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def _check_per_channel(channels, **tensors):
    """Each of batch_norm's per-channel tensors that is given has one element per channel (PyTorch's check,
    in its order: running_mean, running_var, weight, bias)."""
    for name, t in tensors.items():
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) of ``(N, C, *)`` input. In training, with the batch's mean and biased
    variance, and update ``running_mean``/``running_var`` in place (``running = (1 - momentum) * running +
    momentum * batch``, unbiased variance); otherwise with the running statistics."""
    xa = input._data
    if xa.ndim < 2:
        raise ValueError(f"Expected 2D or more input (got {xa.ndim}D input)")
    if training:
        _verify_batch_size(input.shape)
    if xa.size == 0:      # (before the per-channel checks, which PyTorch does not reach for an empty input)
        return _batch_norm_of_nothing(input, weight, bias)
    _check_per_channel(xa.shape[1], running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``batch_norm`` (its arguments in ATen's order) and the statistics it used, as ATen returns them:
    ``(output, save_mean, save_invstd)``, each of the last two ``(C,)`` in training (the batch's mean and
    1/sqrt(var + eps)) and empty ``(0,)`` in evaluation; not differentiable (as PyTorch's)."""
    xa = input._data
    parameters = [None if t is None else t._data for t in (weight, bias, running_mean, running_var)]
    if batch_norm_kernel.follows_kernel(xa, *parameters):
        return _native_batch_norm_as_kernel(input, weight, bias, running_mean, running_var, training, momentum, eps)
    axes = (0,) + tuple(range(2, xa.ndim))
    shape = (1, xa.shape[1]) + (1,) * (xa.ndim - 2)
    count = xa.size // xa.shape[1]
    as_torch = None
    if training:
        # statistics accumulated in float64, as PyTorch's CPU kernel does
        wide = xa.astype(np.float64)
        mean = _mean(wide, axes).reshape(-1)
        wide -= mean.reshape(shape)       # the squared deviations in the same memory: (x - mean)²
        var = _mean(np.square(wide, out=wide), axes).reshape(-1)
        as_torch = _channels_to_take_as_torch(xa, mean, var, eps)
        if as_torch is not None:
            exact_mean, var_sum = _channel_statistics_as_torch(xa[:, as_torch])
            mean[as_torch] = exact_mean
            # the sum of squares divided by the count in the input's dtype, then 1/sqrt in float64, as PyTorch's
            var[as_torch] = var_sum / xa.dtype.type(count)
        if running_mean is not None:
            with grad_mode.no_grad():
                _update_running(running_mean, mean, momentum)
                _update_running(running_var, var * count / (count - 1), momentum)
    else:
        mean = running_mean._data.astype(np.float64)
        var = running_var._data.astype(np.float64)
    rstd = (1.0 / np.sqrt(var + eps)).astype(xa.dtype).reshape(shape)
    xhat = _in_place(np.multiply, xa - mean.astype(xa.dtype).reshape(shape), rstd)
    out = _affine(xhat, weight, bias, shape)
    if as_torch is not None:
        out[:, as_torch] = _affine_as_torch(xa[:, as_torch], mean[as_torch].astype(xa.dtype),
                                            rstd.reshape(-1)[as_torch], weight, bias, as_torch)
    result = Tensor._make(out)
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        record(NativeBatchNormBackward0, inputs, result, saved=(input, weight), xhat=xhat, rstd=rstd, mean=mean,
               eps=eps, stat_axes=axes, affine_axes=axes, affine_shape=shape, weight_shape=(xa.shape[1],),
               training=bool(training))
    if not training:
        empty = np.zeros(0, xa.dtype)
        return result, Tensor._make(empty), Tensor._make(empty.copy())
    return result, Tensor._make(mean.astype(xa.dtype)), Tensor._make(rstd.reshape(-1))


def _native_batch_norm_as_kernel(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``native_batch_norm`` of a float32 batch of images, in PyTorch's kernel's steps (``batch_norm_kernel.py``);
    the node keeps what the first derivatives read there, and what the general rules read under create_graph."""
    xa = input._data
    w, b = (None if t is None else t._data for t in (weight, bias))
    shape = (1, xa.shape[1]) + (1,) * (xa.ndim - 2)
    if training:
        mean, var_sum, invstd = batch_norm_kernel.statistics(xa, eps)
        backward_invstd = invstd
        if running_mean is not None or running_var is not None:
            count = xa.size // xa.shape[1]
            new_mean, new_var = batch_norm_kernel.update_running(
                None if running_mean is None else running_mean._data,
                None if running_var is None else running_var._data, mean, var_sum, count, momentum)
            for buffer, value in ((running_mean, new_mean), (running_var, new_var)):
                if buffer is not None:
                    buffer._data[...] = value
                    buffer._bump_version()
    else:
        mean = running_mean._data.copy()
        invstd = batch_norm_kernel.evaluation_invstd(running_var._data, eps)
        # (PyTorch's backward computes it again, in float64)
        backward_invstd = (1 / np.sqrt(running_var._data.astype(np.float64) + eps)).astype(np.float32)
    result = Tensor._make(batch_norm_kernel.forward(xa, mean, invstd, w, b))
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        axes = (0,) + tuple(range(2, xa.ndim))
        record(NativeBatchNormBackward0, inputs, result, saved=(input, weight), rstd=invstd.reshape(shape),
               mean=mean.astype(np.float64), eps=eps, stat_axes=axes, affine_axes=axes, affine_shape=shape,
               weight_shape=(xa.shape[1],), training=bool(training), kernel=(mean, backward_invstd))
    if not training:
        empty = np.zeros(0, xa.dtype)
        return result, Tensor._make(empty), Tensor._make(empty.copy())
    return result, Tensor._make(mean.copy()), Tensor._make(invstd.copy())


# PyTorch's CPU kernel for a contiguous float32 or float64 input in training sums each channel's values one after
# another in float64, rounds the mean to the input's dtype, sums the squares of (x - mean) (each computed in the
# dtype) the same way, and writes y = x·α + β with α = rstd·w and β = b − mean·α as fused multiply-adds. Where a
# channel's values are (nearly) equal, the result is mostly rounding amplified by |mean|·rstd (rstd up to
# 1/sqrt(eps) ≈ 316): PyTorch gives 5e-15 where (x − mean)·rstd gives 0, and sgn, log or 1/x of it then differ
# completely. Such channels, found from the float64 statistics, are computed again in PyTorch's steps and order
# (NumPy's cumsum adds in sequence; ``_fma`` rounds once). The others keep the fast float64 statistics and
# (x − mean)·rstd, which differ from PyTorch's by a few units in the last place, unamplified; taking every channel
# PyTorch's way would make batch norm 4 to 8 times slower. (A contiguous float32 input never comes here: it takes
# PyTorch's kernels, images and (N, C) rows alike, in ``batch_norm_kernel.py``.)

#: inputs up to this many elements have every channel computed PyTorch's way: their cost is small, and a
#: program that prints a small normalized tensor, or its mean (the models tutorial), then prints PyTorch's digits
_ALL_AS_TORCH_UP_TO = 1 << 16


def _channels_to_take_as_torch(xa, mean, var, eps):
    """A boolean mask of the channels whose output is rounding amplified past a hundredth of the usual float32 or
    float64 tolerance (every channel of a small input), or None where there are none or PyTorch's contiguous
    kernel does not run (its other path computes ((x − mean)·rstd)·w + b, as gradiente does)."""
    if xa.dtype not in (np.float32, np.float64) or not xa.flags.c_contiguous:
        return None
    if xa.size <= _ALL_AS_TORCH_UP_TO:
        return np.ones(xa.shape[1], dtype=bool)
    rounding = np.finfo(xa.dtype).eps * np.abs(mean)
    amplification = np.abs(mean) / np.sqrt(var + eps)
    flagged = (var <= 4 * rounding * rounding) | (amplification > (16 if xa.dtype == np.float32 else 4096))
    return flagged if flagged.any() else None


def _channel_statistics_as_torch(xa):
    """``(mean, sum of squared deviations)`` per channel, in ``xa``'s dtype, added in PyTorch's order."""
    n, c = xa.shape[:2]
    rows = xa.reshape(n, c, -1).transpose(1, 0, 2).reshape(c, -1)
    mean = (np.cumsum(rows, axis=1, dtype=np.float64)[:, -1] / rows.shape[1]).astype(xa.dtype)
    deviations = rows - mean[:, None]
    squares = deviations * deviations
    return mean, np.cumsum(squares, axis=1, dtype=np.float64)[:, -1].astype(xa.dtype)


def _affine_as_torch(xa, mean, rstd, weight, bias, channels):
    """``x·α + β`` of the chosen ``channels``, rounded once, with α = rstd·w and β = b − mean·α (fused too), each
    in x's dtype."""
    dtype = xa.dtype
    alpha = rstd if weight is None else rstd * weight._data[channels].astype(dtype, copy=False)
    beta = -mean * alpha if bias is None else _fma(-mean, alpha, bias._data[channels].astype(dtype, copy=False), dtype)
    shape = (1, -1) + (1,) * (xa.ndim - 2)
    return _fma(xa, alpha.reshape(shape), beta.reshape(shape), dtype)


def _update_running(buffer, batch_value, momentum):
    data = buffer._data
    data[...] = (momentum * batch_value + (1 - momentum) * data.astype(np.float64)).astype(data.dtype)
    buffer._bump_version()


# --- group norm ----------------------------------------------------------------------------------------

class NativeGroupNormBackward0(Node):
    """y = xhat * w + b, xhat per (sample, group);  dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat)),
    plus, where the forward also returned its statistics (``native_group_norm``), (dmean - drstd·rstd²·xhat) / M
    for the group's M elements (mean = Σx / M, rstd = (Σ(x - mean)² / M + eps)^-½)"""
    formula = "group norm: dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) per group, + (dmean − drstd·rstd²·x̂) / M"
    kernel_statistics = False       # whether the forward's statistics are PyTorch's kernel's (its backward then is too)

    def backward(self, ops, grad, grad_mean=None, grad_rstd=None):
        x, weight = self.saved(ops)
        if ops.recording:
            return _group_norm_composed(self, grad, x, weight, grad_mean, grad_rstd)
        if (grad_mean is None and grad_rstd is None and self.kernel_statistics and grad.dtype == np.float32
                and group_norm_kernel.follows_kernel(x, weight)):
            return self._as_pytorchs_kernel(grad, x, weight)
        grouped = grad.reshape(self.grouped_shape)
        dx = dw = db = None
        edges = self.next_functions
        if edges[0][0] is not None:
            dxhat = grad
            if weight is not None:
                dxhat = grad * weight.reshape(self.affine_shape)
            dxhat = dxhat.reshape(self.grouped_shape)
            dx = _dx(dxhat, self.xhat, self.rstd, 2)
            if grad_mean is not None:
                count = self.xhat.shape[2]
                dx = dx + (grad_mean[..., None] - grad_rstd[..., None] * self.rstd * self.rstd * self.xhat) / count
            dx = dx.reshape(grad.shape)
        # per-channel sums over the batch and the spatial dims: each (sample, channel)'s row, then the samples
        per_channel = (grad.shape[0], grad.shape[1], math.prod(grad.shape[2:]))
        if edges[1][0] is not None:
            dw = _sum_leading(_sum((grouped * self.xhat).reshape(per_channel), (2,))[..., 0], 1)
        if edges[2][0] is not None:
            db = _sum_leading(_sum(grad.reshape(per_channel), (2,))[..., 0], 1)
        return dx, dw, db

    def _as_pytorchs_kernel(self, grad, x, weight):
        """float32, not channels last: PyTorch's kernel, step for step (``group_norm_kernel.py``)."""
        n, groups = self.grouped_shape[:2]
        rows = (x.shape[0], x.shape[1], math.prod(x.shape[2:]))
        edges = self.next_functions
        needs = (edges[0][0] is not None, edges[1][0] is not None, edges[2][0] is not None)
        dx, dw, db = group_norm_kernel.backward(np.ascontiguousarray(grad).reshape(rows),
                                                np.ascontiguousarray(x).reshape(rows),
                                                self.mean.reshape(n, groups), self.rstd.reshape(n, groups),
                                                weight, groups, needs)
        return None if dx is None else dx.reshape(x.shape), dw, db


def _group_norm_composed(node, grad, x, weight, grad_mean=None, grad_rstd=None):
    """Group norm's first derivatives composed of differentiable ops (under create_graph), as PyTorch's
    ``infinitely_differentiable_native_group_norm_backward`` composes them, with the statistics recomputed from
    ``x`` (PyTorch's flow back through the forward's mean and rstd outputs, which gradiente's node does not have).
    Per (sample, group), with s = 1/(D·HW), ds = Σ grad·x and db = Σ grad over each channel's HW elements:

        dx = rstd·w·grad + b·x + c,  b = (Σ_D db·w·mean − Σ_D ds·w)·rstd³·s,  c = −b·mean − Σ_D db·w·rstd·s
    """
    n, groups = node.grouped_shape[:2]
    channels = x.shape[1]
    depth = channels // groups
    spatial = math.prod(x.shape[2:])
    xs = x.reshape(n, groups, depth, spatial)
    dy = grad.reshape(n, groups, depth, spatial)
    count = depth * xs.shape[3]
    scale = 1.0 / count if count else math.inf     # no elements: it only ever multiplies empty tensors
    mean = xs.mean((2, 3), keepdim=True)
    centered = xs - mean
    rstd = (centered * centered).mean((2, 3), keepdim=True).add(node.eps).rsqrt()
    ds = (dy * xs).sum(3, keepdim=True)
    db = dy.sum(3, keepdim=True)
    edges = node.next_functions
    dx = dw = dbias = None
    if edges[0][0] is not None:
        gamma = None if weight is None else weight.reshape(1, groups, depth, 1)
        a = rstd if gamma is None else rstd * gamma
        b = (ds if gamma is None else ds * gamma).sum(2, keepdim=True)
        c = (db if gamma is None else db * gamma).sum(2, keepdim=True)
        b = (c * mean - b) * (rstd * rstd * rstd) * scale
        c = -b * mean - c * rstd * scale
        dx = a * dy + b * xs + c
        if grad_mean is not None:       # the statistics' own gradients (native_group_norm's 2nd and 3rd outputs)
            d_mean, d_rstd = grad_mean.reshape(n, groups, 1, 1), grad_rstd.reshape(n, groups, 1, 1)
            dx = dx + (d_mean - d_rstd * (rstd * rstd * rstd) * centered) * scale
        dx = dx.reshape(x.shape)
    if edges[1][0] is not None:
        dw = ((ds - db * mean) * rstd).sum(0).reshape(channels)
    if edges[2][0] is not None:
        dbias = db.sum(0).reshape(channels)
    return dx, dw, dbias


def _group_norm_affine(grouped, mean, rstd, weight, bias):
    """``x·scale + bias`` rounded once per element, ``scale = rstd·w`` and ``bias = b − scale·mean`` (fused) per
    (sample, channel), as PyTorch's group norm kernel computes its output; ``grouped`` is (N, G, D·HxW)."""
    n, groups, size = grouped.shape
    dtype = grouped.dtype
    depth = weight.shape[0] // groups
    per_channel = (n, groups, depth, 1)
    scale = rstd[..., None] * weight._data.astype(dtype, copy=False).reshape(1, groups, depth, 1)
    shift = _fma(-scale, np.broadcast_to(mean[..., None], per_channel),
                 np.broadcast_to(bias._data.astype(dtype, copy=False).reshape(1, groups, depth, 1), per_channel), dtype)
    x = grouped.reshape(n, groups, depth, size // depth if depth else 0)
    return _fma(x, np.broadcast_to(scale, x.shape), np.broadcast_to(shift, x.shape), dtype)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of ``C / num_groups`` channels of each sample of ``(N, C, *)`` input, then apply
    the per-channel ``weight`` and ``bias``."""
    return _group_norm(input, num_groups, weight, bias, eps, False)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``group_norm`` (``N``, ``C``, ``HxW`` are the input's sizes, as ATen takes them) and the statistics it
    used: ``(output, mean, rstd)``, the last two ``(N, group)``. As in PyTorch, all three are outputs of one
    ``NativeGroupNormBackward0`` node, so a loss may read the statistics too."""
    if not input.is_contiguous():       # ATen's kernel reads the memory as (N, C, HxW); group_norm copies first
        raise RuntimeError("Expected X.is_contiguous(memory_format) to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    return _group_norm(input, group, weight, bias, eps, True)


def _group_norm(input, num_groups, weight, bias, eps, with_statistics):
    xa = input._data
    if xa.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {xa.ndim}")
    n, c = xa.shape[:2]
    if num_groups:      # checked before divisibility, as PyTorch orders them
        _verify_batch_size([n * c // num_groups, num_groups] + list(xa.shape[2:]))
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    out_dtype = xa.dtype
    # the group's size spelled out: NumPy cannot infer a -1 among the dims of an empty batch
    grouped = _half_in_float32(xa).reshape(n, num_groups, (c // num_groups) * math.prod(xa.shape[2:]))
    shape = (1, c) + (1,) * (xa.ndim - 2)
    as_kernel = grouped.dtype == out_dtype and (weight is None) == (bias is None)
    if as_kernel:
        # PyTorch's kernel: Welford's statistics, rstd from a double, y = x·scale + bias fused (scale = rstd·w,
        # bias = b − scale·mean fused), or (x − mean)·rstd without an affine step
        mean, centered, var = _welford_statistics(grouped, (2,))
        rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(grouped.dtype)
    else:
        mean, centered, var = _centered_statistics(grouped, (2,))
        rstd = (1.0 / np.sqrt(var + eps)).astype(grouped.dtype)
    xhat = centered * rstd
    if as_kernel and weight is not None and grouped.dtype in moments.LANES:
        result = Tensor._make(_group_norm_affine(grouped, mean, rstd, weight, bias).reshape(xa.shape))
    else:
        result = Tensor._make(_affine(xhat.reshape(xa.shape), weight, bias, shape).astype(out_dtype, copy=False))
    outputs = result
    if with_statistics:
        outputs = (result, Tensor._make(mean.reshape(n, num_groups).astype(out_dtype)),
                   Tensor._make(rstd.reshape(n, num_groups).astype(out_dtype)))
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        record(NativeGroupNormBackward0, inputs, outputs, saved=(input, weight), xhat=xhat, rstd=rstd, eps=eps,
               grouped_shape=grouped.shape, affine_shape=shape, mean=mean,
               kernel_statistics=as_kernel and grouped.dtype in moments.LANES)
    return outputs
