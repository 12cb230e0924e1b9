"""``scaled_dot_product_attention``: PyTorch's fused CPU kernel (one
``ScaledDotProductFlashAttentionForCpuBackward0`` node) where its dispatcher picks it, else its math
composition (scaled matmuls, a safe softmax, dropout).

``multi_head_attention_forward``: the computation of ``nn.MultiheadAttention``, composed from ``linear``,
``bmm``/``baddbmm``, ``softmax``, ``dropout`` and ``scaled_dot_product_attention`` as PyTorch composes it
(its slow path), so values, random draws and the output's ``grad_fn`` are PyTorch's.
"""
import math

import numpy as np

from ...core import blas_order, creation, grad_mode, rounded_math, tensor
from ...core import dtype as dt
from ...core.c_logf import c_logf
from ...core.fused import fma
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.summation import vector_row_sums
from ...core.vector_exp import exp_u20, sleef_exp
from ...core.warnings_at_caller import warn
from .. import matmul as matrix_products
from .. import rearranging
from .. import softmax as softmax_ops
from ..autocast import autocast_entry
from ..softmax import SoftmaxBackward0
from ._array_rules import arrays_only
from ._common import mul_scalar
from .dropout import dropout
from .linear import linear
from .padding import pad

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


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
        out = softmax_ops.softmax(x, dim)._data
    masked = np.all(xa == -np.inf, axis=dim, keepdims=True)
    result = wrap(np.where(masked, np.zeros((), xa.dtype), out))
    if wants_grad(x):
        record(SafeSoftmaxBackward0, (x,), result, (result,), dim=dim % xa.ndim)
    return result


def _as_additive(mask, dtype):
    """A boolean mask (True: attend) as the additive mask PyTorch converts it to: 0 or -inf."""
    if mask is None or mask.dtype != dt.bool:
        return mask
    return creation.zeros(mask.shape, dtype=dtype).masked_fill_(mask.logical_not(), -math.inf)


def _causal_mask(q, k):
    """The additive mask letting query i attend to keys 0..i (top-left aligned when L != S)."""
    keep = creation.ones(q.shape[-2], k.shape[-2], dtype=dt.bool).tril()
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
    aten_name = "_scaled_dot_product_flash_attention_for_cpu"

    def backward(self, ops, grad):
        arrays_only(ops, "scaled_dot_product_attention")
        q, k, v = self.saved(ops)
        if self.lse is not None and _backward_kernel_applies(q, k, grad):
            return _kernel_order_backward(q, k, v, grad, self.out, self.lse, self.scale, self.is_causal)
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


def _in_layout_of(like, values):
    """``values`` copied into an array laid out in memory as ``like`` is (NumPy's order 'K')."""
    laid_out = np.empty_like(like)
    laid_out[...] = values
    return laid_out


def _flash_attention(q, k, v, mask, is_causal, scale):
    """The fused kernel's result: ``softmax(scale·q·kᵀ + mask)·v``; float32 computed as PyTorch's kernel computes
    it (``_kernel_order_attention``), other dtypes directly over all keys at once."""
    qa, ka, va = q._data, k._data, v._data
    repeats = q.shape[1] // k.shape[1]
    ka, va = np.repeat(ka, repeats, axis=1), np.repeat(va, repeats, axis=1)
    lse = None
    if qa.dtype in (np.float32, dt.BFLOAT16):
        out, probs, lse = _kernel_order_attention(qa, ka, va, None if mask is None else mask._data, is_causal, scale)
        if qa.dtype != np.float32 or mask is not None or repeats != 1:
            lse = None      # (the backward kernel's steps are followed for float32 without a mask only)
    else:
        scores = np.matmul(qa, ka.swapaxes(-1, -2)) * np.asanyarray(scale, qa.dtype)
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
        out = np.matmul(probs, va)
    if out.shape == qa.shape:
        # the kernel writes its result in the query's memory layout, so that multi-head attention's permute and
        # reshape afterwards are a view in PyTorch (ViewBackward0, not a copy): the same here
        out = _in_layout_of(qa, out)
    result = wrap(out)
    if wants_grad(q, k, v):
        record(ScaledDotProductFlashAttentionForCpuBackward0, (q, k, v), result, saved=(q, k, v), probs=probs,
               scale=np.asanyarray(scale, qa.dtype), repeats=repeats, lse=lse, out=out, is_causal=is_causal)
    return result


# --- the float32 kernel, step for step -------------------------------------------------------------------------
# PyTorch's CPU flash attention (``FlashAttentionKernel.cpp``) takes the keys in blocks of 512. For each block it
# computes the scores q·kᵀ, scales them (a fused multiply-add with the mask when there is one), takes each row's
# running maximum, and exponentiates the scores less that maximum: ``exp_u20`` on whole 16-lane vectors, the C
# library's ``expf`` on the last few columns. The exponentials are summed (``vector_row_sums``: lane by lane, the
# lanes halved pairwise, then the tail in order), multiplied by the values unnormalized, and a block after the
# first rescales what came before by e^(old max - new max). At the end each row is multiplied by 1/sum. Every one
# of these steps rounds, so an output computed as softmax-then-product differs from PyTorch's in most elements;
# computed so, it differs only where the two matrix products (OpenBLAS here, MKL there) add in another order.
_KEY_BLOCK = 512
_LANES = 16


def _kernel_order_attention(qa, ka, va, mask, is_causal, scale):
    """The output of float32 or bfloat16 attention as PyTorch's kernel computes it, and the normalized probabilities
    (for the backward rule). bfloat16 is computed in float32, as there: the exponentials are rounded to bfloat16 for
    the product with the values (their sum is taken before), and the output once at the end."""
    reduced = qa.dtype == dt.BFLOAT16
    if reduced:
        qa, ka, va = (a.astype(np.float32) for a in (qa, ka, va))
    scale = np.float32(scale)
    rows, keys = qa.shape[-2], ka.shape[-2]
    lead = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2])
    running_max = np.full(lead + (rows, 1), -np.inf, np.float32)
    running_sum = np.zeros(lead + (rows, 1), np.float32)
    dst = None
    blocks = []         # each block's exponentials and the maximum they were taken from (for the probabilities)
    for start in range(0, keys, _KEY_BLOCK):
        stop = min(start + _KEY_BLOCK, keys)
        scores = blas_order.matmul(qa, ka[..., start:stop, :].swapaxes(-1, -2))
        visible = None
        if is_causal:
            later = np.arange(start, stop)[None, :] > np.arange(rows)[:, None]
            scores[..., later] = -np.inf
            if mask is None:
                visible = np.flatnonzero(~later)
        if mask is not None:
            scores = fma(scores, scale, mask[..., start:stop].astype(np.float32, copy=False), np.float32)
        else:
            scores *= scale
        new_max = np.maximum(running_max, scores.max(axis=-1, keepdims=True))
        live = new_max != -np.inf               # a row masked out so far keeps zeros and its sum and maximum
        all_live = live.all()
        with np.errstate(invalid="ignore"):
            exps = _kernel_exp(scores - (new_max if all_live else np.where(live, new_max, 0)), visible)
        if not all_live:
            exps = np.where(live, exps, np.float32(0))
        block_sum = vector_row_sums(exps.reshape(-1, stop - start), tail_after_halving=True).reshape(
            exps.shape[:-1] + (1,))
        values = va[..., start:stop, :]
        if dst is None:     # the first block: nothing to rescale (e^(-inf - max) = 0 times a sum of 0)
            running_sum = block_sum if all_live else np.where(live, block_sum, running_sum)
            rescale = None
        else:
            with np.errstate(invalid="ignore"):
                rescale = np.where(live, rounded_math.exp(running_max - new_max), np.float32(1))
            running_sum = np.where(live, fma(rescale, running_sum, block_sum, np.float32), running_sum)
        running_max = new_max if all_live else np.where(live, new_max, running_max)
        if reduced:
            exps = exps.astype(dt.BFLOAT16).astype(np.float32)
        # the gemm adds this block's product to what is there (beta 1), after the rescaling
        dst = blas_order.matmul(exps, values) if rescale is None else blas_order.matmul(exps, values, dst * rescale)
        blocks.append((exps, np.where(live, new_max, 0)))
    total = np.where(running_sum == 0, np.float32(1), running_sum)
    reciprocal = np.float32(1) / total
    out = dst * reciprocal
    # the probabilities, for the backward rule: each block's exponentials brought to the final maximum
    final_max = np.where(running_max == -np.inf, 0, running_max)
    probs = np.concatenate([e * np.exp(m - final_max) for e, m in blocks], axis=-1) if len(blocks) > 1 \
        else blocks[0][0]
    # the logsumexp the kernel keeps for its backward: max + log(sum) (the C library's logf), a fully masked row's
    # 0 + log(1)
    lse = final_max + c_logf(total)
    if reduced:
        return out.astype(dt.BFLOAT16), (probs * reciprocal).astype(dt.BFLOAT16), lse
    return out, probs * reciprocal, lse


# --- its backward, step for step (float32, no mask) -----------------------------------------------------------------
# PyTorch's ``cpu_flash_attention_backward`` takes the queries in blocks (32 rows below 192 queries, 64 below 768,
# else 256) and, for each, the keys in one block to the last key (512 at most; the causal mask is applied after the
# exponential, as zeros). Per query block: dsum = rowsum(grad ⊙ out) (``vector_row_sums``); the probabilities again,
# exp(scale·q·kᵀ − lse) with Sleef's ``expf`` (the product's scale folded into k by MKL, for more than 32 keys);
# dv += Pᵀ·grad; dP = grad·vᵀ; dS = P ⊙ (dP − dsum); dq += (dS·k)·scale; dk += (dSᵀ·q)·scale, each product added in
# order (``blas_order.chained``) and then added to what the earlier blocks gave. Measured equal to torch 2.13 in every
# element for head sizes 24 to 64 and 16 to 300 keys, causal or not (tests/test_attention_backward_kernel.py); other
# shapes (head sizes under 24 or not a multiple of 8, where MKL's small kernels add otherwise, more than 512 keys,
# a mask, grouped heads) keep the closed form.
_BACKWARD_KEY_LIMIT = 512


def _backward_kernel_applies(q, k, grad):
    head = q.shape[-1]
    return (q.dtype == np.float32 and grad.dtype == np.float32 and head >= 24 and head % 8 == 0
            and k.shape[-2] <= _BACKWARD_KEY_LIMIT and q.ndim == 4)


def _query_block(queries):
    return 32 if queries < 192 else 64 if queries < 768 else 256


def _kernel_order_backward(qa, ka, va, grad, out, lse, scale, is_causal):
    scale = np.float32(scale)
    queries, head = qa.shape[-2:]
    keys = ka.shape[-2]
    lead = qa.shape[:-2]
    grad = np.ascontiguousarray(grad)
    dq, dk, dv = np.zeros_like(qa), np.zeros_like(ka), np.zeros_like(va)
    scaled_keys = ka if keys <= 32 else ka * scale
    step = _query_block(queries)
    for start in range(0, queries, step):
        rows = slice(start, min(start + step, queries))
        count = rows.stop - start
        dsum = vector_row_sums((grad[..., rows, :] * out[..., rows, :]).reshape(-1, head)).reshape(lead + (count, 1))
        scores = np.empty(lead + (count, keys), np.float32)
        for index in np.ndindex(*lead):
            # (each head's product on its own: MKL's order for a stack of them is not this one's)
            scores[index] = blas_order.matmul(qa[index][rows], scaled_keys[index].T)
        if keys <= 32:
            scores *= scale
        p = sleef_exp(scores - lse[..., rows, :])
        if is_causal:
            p[..., np.arange(keys)[None, :] > np.arange(start, rows.stop)[:, None]] = 0
        g = grad[..., rows, :]
        # (the in-order products, every head's at once: a stack of products, each added in order)
        dv += blas_order.chained(transposed(p), g)
        ds = p * (blas_order.chained(g, transposed(va)) - dsum)
        dq[..., rows, :] += blas_order.chained(ds, ka) * scale
        dk += blas_order.chained(transposed(ds), np.ascontiguousarray(qa[..., rows, :])) * scale
    return dq, dk, dv


def transposed(a):
    """A stack of matrices transposed, laid out in rows (as OpenBLAS's in-order kernel takes its operands)."""
    return np.ascontiguousarray(a.swapaxes(-1, -2))


def _kernel_exp(shifted, visible=None):
    """``exp_u20`` on the columns that fill whole 16-lane vectors, ``expf`` (correctly rounded) on the rest.
    ``visible``: for causal attention, the flat (row, key) positions of the last two dims that are not masked; the
    others are -inf, whose exponential is 0, and only the half that is not is computed."""
    width = shifted.shape[-1]
    whole = width // _LANES * _LANES
    if visible is None:
        out = np.empty_like(shifted)
        out[..., :whole] = exp_u20(shifted[..., :whole])
        out[..., whole:] = rounded_math.exp(shifted[..., whole:])
        return out
    flat = shifted.reshape(-1, shifted.shape[-2] * width)
    out = np.zeros_like(flat)
    in_vectors = visible[visible % width < whole]
    in_tail = visible[visible % width >= whole]
    out[:, in_vectors] = exp_u20(np.take(flat, in_vectors, axis=1))
    out[:, in_tail] = rounded_math.exp(np.take(flat, in_tail, axis=1))
    return out.reshape(shifted.shape)


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
    attn = matrix_products.matmul(q, mul_scalar(k.transpose(-2, -1), root))
    if mask is not None:
        attn = attn.add_(mask)
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0:
        attn = dropout(attn, dropout_p, True)
    return matrix_products.matmul(attn, v)


@autocast_entry
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
    if attn_mask is not None and attn_mask.dtype not in (dt.bool, dt.float32, query.dtype):
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


# --- multi-head attention -----------------------------------------------------------------------------------
def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, tensor.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A mask as an additive float mask: a boolean one (True: ignore this position) becomes 0 / -inf in
    ``target_type``; a float one is returned as it is. Warns, as PyTorch does, when its dtype differs from
    ``other_type``, the dtype of the mask it will be added to."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != dt.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    if is_float:
        return mask
    return creation.zeros_like(mask, dtype=target_type).masked_fill_(mask, -math.inf)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D query) rather than one sequence (2-D); PyTorch's errors otherwise."""
    if query.dim() not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.dim()}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != query.dim() - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.dim() - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and attn_mask.shape != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _split_projection(proj, parts, embed_dim):
    """The ``parts`` projections packed along the last dim of ``proj``, each made contiguous (they are
    viewed per head next). The steps are PyTorch's (unsqueeze, transpose, squeeze, then one select per part),
    so the graph shows PyTorch's nodes."""
    packed = proj.unflatten(-1, (parts, embed_dim)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    return tuple(packed[i] for i in range(parts))


def _in_projection_packed(q, k, v, w, b):
    """q·W_qᵀ + b_q, k·W_kᵀ + b_k, v·W_vᵀ + b_v with the three weights stacked in ``w`` (3E, E). Self-attention
    (q, k, v one tensor) projects once; encoder-decoder attention (k, v one tensor) twice."""
    embed_dim = q.size(-1)
    if k is v and q is k:
        return _split_projection(linear(q, w, b), 3, embed_dim)
    if k is v:
        w_q, w_kv = w.split([embed_dim, embed_dim * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed_dim, embed_dim * 2])
        return (linear(q, w_q, b_q), *_split_projection(linear(k, w_kv, b_kv), 2, embed_dim))
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return tuple(linear(x, w_x, b_x) for x, w_x, b_x in zip((q, k, v), w.chunk(3), (b_q, b_k, b_v)))


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    """The three projections with separate weights: W_q (E, E), W_k (E, kdim), W_v (E, vdim)."""
    e_q = q.size(-1)
    for name, w, want in (("query", w_q, (e_q, e_q)), ("key", w_k, (e_q, k.size(-1))),
                          ("value", w_v, (e_q, v.size(-1)))):
        if w.shape != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and b.shape != (e_q,):
            raise AssertionError(f"expecting {name} bias shape of {(e_q,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _attn_mask_3d(attn_mask, tgt_len, src_len, batch_heads):
    """An (L, S) mask as (1, L, S), shared by every batch entry and head; an (N·heads, L, S) one as it is."""
    if attn_mask.dim() == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if attn_mask.shape != (batch_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(batch_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _pad_key_axis(*masks):
    """The masks with one more key position, at 0 (attended), for a key appended to every sequence."""
    return tuple(None if m is None else pad(m, (0, 1)) for m in masks)


def _padding_as_attn_mask(key_padding_mask, attn_mask, bsz, num_heads, src_len):
    """The (N, S) padding mask repeated per head as (N·heads, 1, S), added to ``attn_mask`` when there is one."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    per_head = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                .reshape(bsz * num_heads, 1, src_len))
    return per_head if attn_mask is None else attn_mask + per_head


def _attention_with_weights(q, k, v, attn_mask, dropout_p):
    """P = softmax(q·kᵀ/√d + mask) (dropped out when ``dropout_p``) and P·v, for q (B, L, d), k, v (B, S, d)."""
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if attn_mask is None:
        weights = matrix_products.bmm(q_scaled, k.transpose(-2, -1))
    else:
        weights = matrix_products.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    weights = softmax_ops.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    return matrix_products.bmm(weights, v), weights


def _mha_masks(key_padding_mask, attn_mask, need_weights, is_causal, dtype):
    """Both masks made additive, and whether scaled_dot_product_attention should apply the causal mask itself
    (``is_causal`` with nothing else to add: then ``attn_mask`` is dropped)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return None, None, True
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", dtype, check_other=False)
    # merged with the padding, the mask is no longer causal
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _check_embedding(query, key, value, embed_dim_to_check, num_heads, use_separate_proj_weight):
    embed_dim = query.shape[2]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    if embed_dim // num_heads * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")


def _project(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight, q_proj_weight,
             k_proj_weight, v_proj_weight):
    """The projected q, k, v (each ``(length, N, E)``), from the packed weight or from the three separate ones."""
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)


def _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz, masks):
    """Keys and values with the learned ``bias_k``/``bias_v`` appended to every sequence, and the masks
    widened to match; unchanged without them."""
    if bias_k is None or bias_v is None:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")
        return k, v, masks
    if static_k is not None:
        raise AssertionError("bias cannot be added to static key.")
    if static_v is not None:
        raise AssertionError("bias cannot be added to static value.")
    return (rearranging.cat([k, bias_k.repeat(1, bsz, 1)]), rearranging.cat([v, bias_v.repeat(1, bsz, 1)]),
            _pad_key_axis(*masks))


def _per_head(x, static, name, batch_heads, head_dim):
    """``(length, N, E)`` as ``(N·heads, length, E/heads)``: the heads become batch entries. A given
    ``static_k``/``static_v`` (already in that shape) replaces it."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


def _fused_attention(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads):
    """scaled_dot_product_attention over (N, heads, length, E/heads) views, as ``(L·N, E)``."""
    tgt_len, head_dim = q.shape[1:]
    src_len = k.shape[1]
    if attn_mask is not None:       # (1, L, S) -> (1, 1, L, S); (N·heads, L|1, S) -> (N, heads, L|1, S)
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, num_heads * head_dim)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention, sequence first: ``query (L, N, E)``, ``key (S, N, kdim)``, ``value (S, N, vdim)``
    (or ``(L, E)``, ``(S, kdim)``, ``(S, vdim)`` unbatched) give ``(attn_output (L, N, E), attn_weights)``.

    Each head attends with softmax(q·kᵀ/√(E/heads) + masks) over its slice of the projected q, k, v; the heads
    are concatenated and projected by ``out_proj``. ``key_padding_mask (N, S)`` and ``attn_mask (L, S)`` or
    ``(N·heads, L, S)`` are boolean (True: ignore) or additive. ``attn_weights`` is ``(N, L, S)`` averaged
    over heads, ``(N, heads, L, S)`` without ``average_attn_weights``, None without ``need_weights`` (which
    computes with ``scaled_dot_product_attention``). ``is_causal`` is a hint that ``attn_mask`` is causal."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:         # computed as a batch of one, squeezed at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _mha_masks(key_padding_mask, attn_mask, need_weights, is_causal,
                                                        query.dtype)
    _check_embedding(query, key, value, embed_dim_to_check, num_heads, use_separate_proj_weight)
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight, q_proj_weight,
                       k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _attn_mask_3d(attn_mask, tgt_len, key.shape[0], bsz * num_heads)
    k, v, (attn_mask, key_padding_mask) = _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz,
                                                          (attn_mask, key_padding_mask))
    head_dim = embed_dim // num_heads
    q = _per_head(q, None, "", bsz * num_heads, head_dim)
    k = _per_head(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _per_head(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:       # one more key and value, all zeros, that every query may attend to
        zeros = creation.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k, v = rearranging.cat([k, zeros], dim=1), rearranging.cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = _pad_key_axis(attn_mask, key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        attn_mask = _padding_as_attn_mask(key_padding_mask, attn_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0

    weights = None
    if need_weights:
        attn_output, weights = _attention_with_weights(q, k, v, attn_mask, dropout_p)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    else:
        attn_output = _fused_attention(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if weights is not None:
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    if not batched:
        attn_output = attn_output.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return attn_output, weights
