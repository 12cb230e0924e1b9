"""Losses over class scores: ``nll_loss`` and ``cross_entropy``, with class weights, ``ignore_index``,
label smoothing, class-probability targets, and any number of spatial dimensions.

``nll_loss`` is one node, ``NllLossBackward0`` (inputs ``(C)`` or ``(N, C)``) or ``NllLoss2DBackward0``
(``(N, C, H, W)``; other N-d inputs are viewed to 4-D first, as PyTorch does). Its gradient does not
depend on the input: ``-w[target]`` (÷ the total weight for ``'mean'``) at each target position, 0
elsewhere. ``cross_entropy`` is composed exactly as PyTorch composes it: ``log_softmax`` then ``nll_loss``
for class indices; for probabilities and for label smoothing, sums of ``log_softmax`` products.
"""
import numpy as np

from ...core.meta import is_meta
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.summation import nll_cascade_sum
from ..autocast import autocast_entry
from ..softmax import log_softmax
from ._common import add_scalar, div_scalar, mul_scalar, reduction_arg, scalar_name, shape_text

__all__ = ["cross_entropy", "nll_loss"]


class NllLossBackward0(Node):
    """out = -w[t]·x[t] per sample (summed, or ÷ Σ w[t] for 'mean');  dx = -w[t]·grad at the target, 0 elsewhere"""
    formula = "∂(-x[t])/∂x[c] = -1 if c = t else 0"

    def backward(self, ops, grad):
        target, weight = self.saved(ops)
        coef = _coefficients(self, ops.raw(target), None if weight is None else ops.raw(weight))
        if self.reduction == "none":
            grad = ops.unsqueeze(grad, self.class_axis)
        return (ops.constant(coef, grad) * grad,)


class NllLoss2DBackward0(NllLossBackward0):
    """The same loss over an (N, C, H, W) input and (N, H, W) target"""


def _rows(a, class_axis):
    """(rows, classes) view of ``a``: the class axis moved last, the rest flattened."""
    if class_axis != a.ndim - 1:
        a = np.moveaxis(a, class_axis, -1)
    return a.reshape(-1, a.shape[-1])


def _unrows(rows, shape, class_axis):
    """The inverse of ``_rows``: an array of ``shape`` with the classes back along ``class_axis``."""
    if class_axis == len(shape) - 1:
        return rows.reshape(shape)
    moved = shape[:class_axis] + shape[class_axis + 1:] + (shape[class_axis],)
    return np.moveaxis(rows.reshape(moved), -1, class_axis)


def _target_weights(t, weight, ignore_index, dtype):
    """Each row's class (an ignored row points at class 0), its weight (0 when ignored; None when every
    row weighs 1), and the mask of the rows that count (None when all do)."""
    valid = t != ignore_index
    if valid.all():
        return t, (weight[t] if weight is not None else None), None
    safe = np.where(valid, t, 0)
    w = weight[safe] if weight is not None else valid.astype(dtype)
    w[~valid] = 0
    return safe, w, valid


def _coefficients(node, target, weight):
    """The input's gradient for an upstream gradient of 1: ``-w[t]`` (÷ total weight) at each target."""
    safe, w, valid = _target_weights(target.reshape(-1), weight, node.ignore_index, node.dtype)
    scale = node.dtype.type(1)
    if node.reduction == "mean":
        with np.errstate(divide="ignore"):
            scale = scale / node.dtype.type(node.total_weight)
    if w is None:
        w = -scale
    else:
        with np.errstate(invalid="ignore"):
            w = w * -scale
        if valid is not None:
            w[~valid] = 0
    shape, axis = node.shape, node.class_axis
    rows = np.zeros((len(safe), shape[axis]), dtype=node.dtype)
    rows[np.arange(len(safe)), safe] = w
    return _unrows(rows, shape, axis)


def _check_target(target):
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {scalar_name(target._data.dtype)}")


def _check_weight(weight, input, n_classes, message):
    if weight is None:
        return
    if weight.dim() != 1 or weight.numel() != n_classes:
        raise RuntimeError(message)
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(input._data.dtype)} but found "
                           f"{scalar_name(weight._data.dtype)}")


def _nll(input, target, weight, reduction, ignore_index, node_cls):
    """The loss on arrays and its node; ``input`` is (C), (N, C) or (N, C, H, W), classes on axis 1 (0 for 1-D)."""
    a = input._data
    class_axis = 0 if a.ndim == 1 else 1
    logp = _rows(a, class_axis)
    t = target._data.reshape(-1).astype(np.int64, copy=False)
    n_classes = logp.shape[1]
    if len(t) and (t.min() < 0 or t.max() >= n_classes):
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {t[np.argmax(bad)]} is out of bounds.")
    safe, w, valid = _target_weights(t, None if weight is None else weight._data, ignore_index, a.dtype)
    losses = -logp[np.arange(len(safe)), safe]
    if w is not None:
        losses *= w
    if valid is not None:
        losses[~valid] = 0          # PyTorch writes 0 for an ignored target (not -0.0)
    if reduction == "none":
        out = losses.reshape(target.shape)
    else:
        # the loss and the weights added in the order of PyTorch's loop (core/summation.py), which skips ignored
        # targets; for an (N, C, d1...) input PyTorch's loop differs, and NumPy's sums stand in
        kept = None if valid is None else np.flatnonzero(valid)
        in_order = a.ndim <= 2 and a.dtype in (np.float32, np.float64)
        total = _loss_sum(losses, kept, in_order)
        if reduction == "sum":
            out = total
        else:
            count = len(safe) if kept is None else len(kept)
            total_weight = a.dtype.type(count) if w is None else _loss_sum(w, kept, in_order)
            with np.errstate(divide="ignore", invalid="ignore"):
                out = total / total_weight
    if w is None:
        total_weight = a.dtype.type(len(safe))
    elif reduction != "mean":
        total_weight = w.sum(dtype=a.dtype)
    out = wrap(np.asanyarray(out, dtype=a.dtype))
    if wants_grad(input):
        # (a meta loss has no total weight to divide by: its gradient is a shape alone, so any number serves)
        total_weight = 1.0 if is_meta(total_weight) else float(total_weight)
        record(node_cls, (input,), out, (target, weight), reduction=reduction, ignore_index=ignore_index,
               total_weight=total_weight, shape=a.shape, class_axis=class_axis, dtype=a.dtype)
    return out


def _loss_sum(values, kept, in_order):
    """The sum of ``values`` over the targets ``kept`` (all when None): in the order of PyTorch's loss loop where
    ``in_order``, else NumPy's (ignored targets hold 0, which adds nothing)."""
    if not in_order:
        return values.sum(dtype=values.dtype)
    return nll_cascade_sum(values if kept is None else values[kept], kept)


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """PyTorch's ``nll_loss_nd``: dispatch on the input's rank, viewing N-d inputs as (N, C, 1, rest)."""
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.dim() else 1}).")
    _check_target(target)
    n_classes = input.shape[0 if dim == 1 else 1]
    if dim <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if not (dim == 1 and target.dim() == 0) and input.shape[0] != target.shape[0]:
            raise RuntimeError(f"size mismatch (got input: {shape_text(input.shape)}, "
                               f"target: {shape_text(target.shape)})")
        weight_shape = shape_text(weight.shape) if weight is not None else ""
        _check_weight(weight, input, n_classes, f"weight tensor should be defined either for all {n_classes} "
                      f"classes or no classes but got weight tensor of shape: {weight_shape}")
        return _nll(input, target, weight, reduction, ignore_index, NllLossBackward0)
    if dim == 4:
        return _nll_2d(input, target, weight, reduction, ignore_index)
    n, c = input.shape[0], input.shape[1]
    out_size = (n,) + tuple(input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {shape_text(out_size)}, got {shape_text(target.shape)}")
    input, target = input.contiguous(), target.contiguous()
    input = input.view(n, c, 1, -1) if input.numel() > 0 else input.view(n, c, 0, 0)
    target = target.view(n, 1, -1) if target.numel() > 0 else target.view(n, 0, 0)
    out = _nll_2d(input, target, weight, reduction, ignore_index)
    return out.view(out_size) if reduction == "none" else out


def _nll_2d(input, target, weight, reduction, ignore_index):
    if target.dim() != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    _check_weight(weight, input, input.shape[1], "weight tensor should be defined either for all or no classes")
    if input.shape[0] != target.shape[0] or tuple(input.shape[2:]) != tuple(target.shape[1:]):
        raise RuntimeError(f"size mismatch (got input: {shape_text(input.shape)} , target: {shape_text(target.shape)}")
    return _nll(input, target, weight, reduction, ignore_index, NllLoss2DBackward0)


@autocast_entry
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``:
    ``-weight[t]·input[t]``, averaged over the total weight of the non-ignored targets for ``'mean'``.
    Shapes: input (C), (N, C) or (N, C, d1, ...); target (), (N) or (N, d1, ...)."""
    reduction = reduction_arg(reduction, size_average, reduce)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def _weight_along(weight, ndim, class_dim):
    """``weight`` (C) viewed to broadcast along ``class_dim`` of an ``ndim``-dimensional tensor."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


@autocast_entry
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross-entropy between logits ``input`` (classes along dim 1, or dim 0 for a 1-D input) and ``target``:
    class indices (``nll_loss(log_softmax(input), target)``) or, when ``target`` has the input's shape,
    class probabilities. ``label_smoothing`` mixes the target with the uniform distribution."""
    reduction = reduction_arg(reduction, size_average, reduce)
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class probabilities, got "
                               f"{scalar_name(target._data.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    return _nll_loss_nd(log_softmax(input, class_dim), target, weight, reduction, ignore_index)


def _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing, class_dim):
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or "
                           f"no classes but got weight tensor of shape: {shape_text(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = add_scalar(mul_scalar(target, 1 - label_smoothing), label_smoothing / n_classes)
    product = logp * target
    if weight is not None:
        product = product * _weight_along(weight, logp.dim(), class_dim)
    if reduction == "none":
        return -product.sum(class_dim)
    total = -product.sum()
    if reduction == "sum":
        return total
    return div_scalar(total, input.numel() // n_classes) if input.numel() else total * float("nan")


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    logp = log_softmax(input, class_dim)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    n_classes = logp.shape[class_dim]
    if weight is not None:
        smooth = -(logp * _weight_along(weight, logp.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = target._data == ignore_index
    smooth = smooth.masked_fill_(wrap(ignored), 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = target._data[~ignored].reshape(-1)
            denominator = wrap(np.asanyarray(weight._data[kept].sum(dtype=weight._data.dtype)))
        else:
            denominator = wrap(np.asanyarray((~ignored).sum(), dtype=np.int64))
        smooth = smooth.sum() / denominator
    elif reduction == "sum":
        smooth = smooth.sum()
    return mul_scalar(nll, 1 - label_smoothing) + mul_scalar(smooth, label_smoothing / n_classes)
