"""Margin and embedding losses: soft_margin, multi_margin (one node each, as in PyTorch), and the
compositions PyTorch records for margin_ranking, hinge_embedding, cosine_embedding, triplet_margin and
multilabel_soft_margin."""
import numpy as np

from ...core import creation, grad_mode
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from .. import selection
from ..autocast import autocast_entry
from ._common import add_scalar, reduce_array, reduce_tensor, reduction_arg, shape_text, sub_scalar
from .activations import logsigmoid
from .distance import pairwise_distance

__all__ = ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
           "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss"]

_COSINE_EPSILON = 1e-12


def _scalar_minus(c, x):
    """``c - x`` as PyTorch's C++ writes it (a tensor filled with c, minus x: ``SubBackward0``)."""
    return creation.full_like(x, c) - x


class SoftMarginLossBackward0(Node):
    """out = log(1 + e^(-y·x));  dx = -y·e^(-y·x)/(1 + e^(-y·x))·grad  (÷ n for 'mean')"""
    formula = "∂ log(1 + e^(-yx))/∂x = -y·σ(-yx)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        norm = 1.0 / self.count if self.reduction == "mean" else 1.0
        return (-y * ops.sigmoid(-(y * x)) * (grad * norm), None)


@autocast_entry
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + e^(-target·input)) for targets ±1 (``SoftMarginLossBackward0``)."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if target.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    x, y = input._data, target._data
    with np.errstate(over="ignore"):
        out = wrap(reduce_array(np.asanyarray(np.log1p(np.exp(-x * y)), dtype=x.dtype), reduction))
    if wants_grad(input):
        record(SoftMarginLossBackward0, (input, target), out, (input, target), reduction=reduction, count=x.size)
    return out


class MultiMarginLossBackward0(Node):
    """out = Σ_{j≠t} w[t]·max(0, margin - x[t] + x[j])ᵖ / C per sample;
    dx[j] = w[t]·p·zʲ⁻¹·g for each j ≠ t with z > 0, dx[t] = -Σ of those (g = grad/C, ÷ N for 'mean')"""
    formula = "∂ max(0, m - x_t + x_j)/∂x_j = 1,  ∂/∂x_t = -1  (where positive)"

    def backward(self, ops, grad):
        x, target, weight = self.saved(ops)
        t = ops.raw(target).reshape(-1)
        rows = ops.reshape(x, (-1, self.n_classes))
        onehot = np.zeros((len(t), self.n_classes), dtype=ops.raw(x).dtype)
        onehot[np.arange(len(t)), t] = 1
        x_target = ops.sum(rows * ops.constant(onehot, rows), 1, keepdim=True)
        z = (x_target * -1 + self.margin) + rows
        active = (ops.raw(z) > 0) & (onehot == 0)
        scale = np.full((len(t), 1), 1.0 / self.n_classes / (len(t) if self.reduction == "mean" else 1),
                        dtype=onehot.dtype)
        if weight is not None:
            scale = scale * ops.raw(weight)[t][:, None]
        h = ops.mask(active, z * 2 if self.p == 2 else ops.ones_like(z)) * ops.constant(scale, z)
        h = h * (ops.reshape(grad, (-1, 1)) if self.reduction == "none" else grad)
        dx = h - ops.constant(onehot, h) * ops.sum(h, 1, keepdim=True)
        return ops.reshape(dx, ops.raw(x).shape), None, None


@autocast_entry
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-class hinge loss: Σ_{j≠t} max(0, margin - x[t] + x[j])ᵖ / C, optionally weighted by w[t]
    (``MultiMarginLossBackward0``). Shapes: input (N, C) or (C), target (N) or ()."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input._data
    n_classes = x.shape[-1] if x.ndim else 1
    rows = x.reshape(-1, n_classes)
    t = target._data.reshape(-1)
    if input.dim() > 2 or len(t) != rows.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {rows.shape[0]} but got {shape_text(target.shape)}")
    if len(t) and (t.min() < 0 or t.max() >= n_classes):
        raise RuntimeError("target out of range")
    x_target = rows[np.arange(len(t)), t][:, None]
    z = margin - x_target + rows
    z[np.arange(len(t)), t] = 0
    h = np.where(z > 0, z if p == 1 else z * z, 0)
    if weight is not None:
        h = h * weight._data[t][:, None]
    per_sample = (h.sum(axis=1) / n_classes).astype(x.dtype)
    if reduction == "none":
        out = per_sample.reshape(target.shape) if x.ndim > 1 else per_sample.reshape(())
    else:
        out = reduce_array(per_sample, reduction)
    out = wrap(np.asanyarray(out, dtype=x.dtype))
    if wants_grad(input):
        record(MultiMarginLossBackward0, (input, target, weight), out, (input, target, weight), p=p, margin=margin,
               reduction=reduction, n_classes=n_classes)
    return out


@autocast_entry
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target·(input1 - input2) + margin), targets ±1 ranking input1 above or below input2."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return reduce_tensor(add_scalar(-target * (input1 - input2), margin).clamp_min_(0), reduction)


@autocast_entry
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1."""
    reduction = reduction_arg(reduction, size_average, reduce)
    zeros = creation.zeros_like(input)
    margin_clamp = _scalar_minus(margin, input).clamp_min_(0)
    output = selection.where(target != 1, margin_clamp, zeros) + selection.where(target != -1, input, zeros)
    return reduce_tensor(output, reduction)


@autocast_entry
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = reduction_arg(reduction, size_average, reduce)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if dim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{shape_text(input1.shape)} and {shape_text(input2.shape)}.")
    if dim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{shape_text(input1.shape)} and {shape_text(input2.shape)}.")
    product = (input1 * input2).sum(dim)
    square1 = add_scalar((input1 * input1).sum(dim), _COSINE_EPSILON)
    square2 = add_scalar((input2 * input2).sum(dim), _COSINE_EPSILON)
    cos = product / (square1 * square2).sqrt_()
    zeros = creation.zeros_like(cos)
    positive = _scalar_minus(1, cos)
    negative = sub_scalar(cos, margin).clamp_min_(0)
    output = selection.where(target == 1, positive, zeros) + selection.where(target == -1, negative, zeros)
    return reduce_tensor(output, reduction)


@autocast_entry
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = anchor.dim(), positive.dim(), negative.dim()
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = selection.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_tensor(selection.clamp_min(add_scalar(dist_pos, margin) - dist_neg, 0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-class binary cross-entropy of σ(input) against 0/1 targets, averaged over the classes."""
    if size_average is not None or reduce is not None:
        reduction = reduction_arg(reduction, size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return reduce_tensor(loss, reduction)
