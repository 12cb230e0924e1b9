"""``scaled_dot_product_attention``: PyTorch's fused CPU kernel (one
``ScaledDotProductFlashAttentionForCpuBackward0`` node) where its dispatcher picks it, else its math
composition (scaled matmuls, a safe softmax, dropout)."""
import math

import numpy as np

import gradiente

from ...autograd import grad_mode
from ...autograd.graph import Node
from ...ops._record import record, wants_grad, wrap
from ...ops.softmax import SoftmaxBackward0
from .._array_rules import arrays_only
from ._common import mul_scalar
from .dropout import dropout

__all__ = ["scaled_dot_product_attention"]


# C++ type names, as PyTorch's attention checks print dtypes
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _cpp_name(t):
    return _CPP_NAMES.get(t._data.dtype.name, t._data.dtype.name)


class SafeSoftmaxBackward0(SoftmaxBackward0):
    """out = softmax(x), 0 on a row that is all -inf;  dx = out·(grad - Σ grad·out) (softmax's rule)"""


def _safe_softmax(x, dim):
    """softmax along ``dim``, giving zeros (not NaN) where every entry is -inf: a fully masked query."""
    xa = x._data
    with grad_mode.no_grad():
        out = gradiente.softmax(x, dim)._data
    masked = np.all(xa == -np.inf, axis=dim, keepdims=True)
    result = wrap(np.where(masked, np.zeros((), xa.dtype), out))
    if wants_grad(x):
        record(SafeSoftmaxBackward0, (x,), result, (result,), dim=dim % xa.ndim)
    return result


def _as_additive(mask, dtype):
    """A boolean mask (True: attend) as the additive mask PyTorch converts it to: 0 or -inf."""
    if mask is None or mask.dtype != gradiente.bool:
        return mask
    return gradiente.zeros(mask.shape, dtype=dtype).masked_fill_(mask.logical_not(), -math.inf)


def _causal_mask(q, k):
    """The additive mask letting query i attend to keys 0..i (top-left aligned when L != S)."""
    keep = gradiente.ones(q.shape[-2], k.shape[-2], dtype=gradiente.bool).tril()
    return _as_additive(keep, q.dtype)


def _flash_applies(q, k, v, mask, dropout_p, enable_gqa):
    """Whether PyTorch's CPU dispatcher picks its fused flash-attention kernel (which records one node) rather
    than the math composition: 4-D inputs of one batch size and head size, matching head counts (or valid
    grouped-query heads), unit last-dim strides, no dropout, and a mask that needs no gradient and is 2-D or
    4-D, broadcastable over (batch, heads)."""
    if not q.dim() == k.dim() == v.dim() == 4 or dropout_p > 0:
        return False
    if not q.shape[0] == k.shape[0] == v.shape[0] or not q.shape[-1] == k.shape[-1] == v.shape[-1]:
        return False
    if k.shape[1] != v.shape[1] or (q.shape[1] % k.shape[1] if enable_gqa else q.shape[1] != k.shape[1]):
        return False
    if q.shape[2] == 0 or k.shape[2] == 0 or any(t.stride(-1) != 1 for t in (q, k, v)):
        return False
    if mask is None:
        return True
    if mask.requires_grad or mask.shape[-2] not in (1, q.shape[2]) or mask.shape[-1] not in (1, k.shape[2]):
        return False
    return mask.dim() == 2 or (mask.dim() == 4 and mask.shape[0] in (1, q.shape[0])
                               and mask.shape[1] in (1, q.shape[1]))


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    """out = P·v, P = softmax(scale·q·kᵀ + mask);  dv = Pᵀ·grad;  dS = P ⊙ (grad·vᵀ - Σ grad ⊙ out);
    dq = scale·dS·k;  dk = scale·dSᵀ·q"""
    formula = "∂attn/∂v = Pᵀ·grad,  ∂attn/∂S = P ⊙ (grad·vᵀ − rowsum(grad ⊙ out)),  S = scale·q·kᵀ"

    def backward(self, ops, grad):
        arrays_only(ops, "scaled_dot_product_attention")
        q, k, v = self.saved(ops)
        p, repeats = self.probs, self.repeats
        k, v = np.repeat(k, repeats, axis=1), np.repeat(v, repeats, axis=1)
        dv = np.matmul(p.swapaxes(-1, -2), grad)
        dp = np.matmul(grad, v.swapaxes(-1, -2))
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
        dq = np.matmul(ds, k) * self.scale
        dk = np.matmul(ds.swapaxes(-1, -2), q) * self.scale

        def per_kv_head(g):         # grouped-query heads: sum the gradients of the query heads sharing a key head
            return g.reshape(g.shape[0], -1, repeats, *g.shape[2:]).sum(axis=2)
        return dq, per_kv_head(dk), per_kv_head(dv)


def _flash_attention(q, k, v, mask, is_causal, scale):
    """The fused kernel's result, computed directly: ``softmax(scale·q·kᵀ + mask)·v`` over all keys at once."""
    qa, ka, va = q._data, k._data, v._data
    repeats = q.shape[1] // k.shape[1]
    ka, va = np.repeat(ka, repeats, axis=1), np.repeat(va, repeats, axis=1)
    scores = np.matmul(qa, ka.swapaxes(-1, -2)) * np.asarray(scale, qa.dtype)
    if mask is not None:
        scores = scores + mask._data.astype(qa.dtype, copy=False)
    if is_causal:
        scores = scores + _causal_mask(q, k)._data
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0, top)        # a fully masked row: exp(-inf) = 0 everywhere, no NaN
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = np.where(total == 0, np.zeros((), qa.dtype), e / total)
    result = wrap(np.matmul(probs, va))
    if wants_grad(q, k, v):
        record(ScaledDotProductFlashAttentionForCpuBackward0, (q, k, v), result, saved=(q, k, v), probs=probs,
               scale=np.asarray(scale, qa.dtype), repeats=repeats)
    return result


def _math_attention(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's math composition: q and kᵀ each scaled by √scale (``MulBackward1``), a matmul, the mask
    added in place, a safe softmax, dropout, a matmul with v."""
    root = math.sqrt(abs(scale))
    q = mul_scalar(q, -root if scale < 0 else root)
    if is_causal:
        if mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        mask = _causal_mask(q, k)
    if enable_gqa:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], -3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], -3)
    attn = gradiente.matmul(q, mul_scalar(k.transpose(-2, -1), root))
    if mask is not None:
        attn = attn.add_(mask)
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0:
        attn = dropout(attn, dropout_p, True)
    return gradiente.matmul(attn, v)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(query·keyᵀ·scale + mask)·value``: ``query (..., L, E)``, ``key (..., S, E)``, ``value (..., S, Ev)``
    give ``(..., L, Ev)``. ``attn_mask`` is boolean (True: attend) or additive; ``is_causal`` lets query i see
    keys up to i; ``scale`` defaults to 1/√E. As on PyTorch's CPU, 4-D inputs take the fused kernel (one
    ``ScaledDotProductFlashAttentionForCpuBackward0`` node) when it applies, others the math composition."""
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_name(query)} key.dtype: {_cpp_name(key)} and value.dtype: {_cpp_name(value)} "
                           "instead.")
    if attn_mask is not None and attn_mask.dtype not in (gradiente.bool, gradiente.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cpp_name(attn_mask)} and  query.dtype: {_cpp_name(query)} instead.")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if scale is None:
        scale = 1 / math.sqrt(query.shape[-1])
    attn_mask = _as_additive(attn_mask, query.dtype)
    if _flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _flash_attention(query, key, value, attn_mask, is_causal, scale)
    return _math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
