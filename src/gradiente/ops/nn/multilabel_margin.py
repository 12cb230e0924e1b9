"""``multilabel_margin_loss``: the multi-label hinge loss, one recorded node as PyTorch's
(``MultilabelMarginLossBackward0``).

Each sample's target row lists its classes, ended by the first -1; the loss is
Σ_{j listed} Σ_{i not a target} max(0, 1 - (x[j] - x[i])) / C. It is piecewise linear in x, so its gradient is a
constant coefficient matrix W (fixed by which hinges are active), and dx = W · grad: under ``create_graph`` that
product is recorded, its derivative in x zero (as PyTorch's).
"""
import numpy as np

from ...core.dtype import scalar_name
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ._common import reduce_array, reduction_arg, shape_text

__all__ = ["multilabel_margin_loss"]


class MultilabelMarginLossBackward0(Node):
    """out = Σ_{j∈T} Σ_{i∉T} max(0, 1 - x_j + x_i) / C per sample;  dx = W·grad, W_i = (#active hinges with i) / C,
    W_j = -(#active hinges of target j) / C  (÷ N for 'mean')"""
    formula = "∂ max(0, 1 - x_j + x_i)/∂x_i = 1,  ∂/∂x_j = -1  (where positive)"

    def backward(self, ops, grad):
        g = ops.reshape(grad, (-1, 1)) if self.reduction == "none" else grad
        return ops.reshape(ops.constant(self.coefficients, g) * g, self.x_shape), None


def _check(input, target):
    x_shape, t_shape = tuple(input.shape), tuple(target.shape)
    if input.dim() > 2 or (input.dim() == 2 and input.shape[0] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{shape_text(input.shape)}")
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_name(target._data.dtype)}")
    if x_shape != t_shape:
        raise RuntimeError(f"inconsistent target size: {shape_text(target.shape)} for input of size: "
                           f"{shape_text(input.shape)}")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss (``MultilabelMarginLossBackward0``): input ``(N, C)`` or ``(C,)`` scores, target the
    same shape of class indices, each row's list ended by the first -1. Output ``(N,)`` for ``'none'``, else a
    scalar."""
    reduction = reduction_arg(reduction, size_average, reduce)
    _check(input, target)
    n_classes = input.shape[-1] if input.dim() else 1
    x = input._data.reshape(-1, n_classes)
    t = target._data.reshape(-1, n_classes)
    if t.size and (t.min() < -1 or t.max() >= n_classes):
        raise RuntimeError("argument #2 'target' is out of range")
    rows = np.arange(x.shape[0])
    # each row's list ends at its first -1
    ended = np.cumsum(t == -1, axis=1) > 0
    listed = ~ended                                              # (N, K): position k holds a target
    safe = np.where(listed, t, 0)
    is_target = np.zeros_like(x, dtype=bool)
    is_target[np.repeat(rows, n_classes)[listed.ravel()], safe[listed]] = True
    x_target = x[rows[:, None], safe]                            # (N, K)
    z = 1 - x_target[:, :, None] + x[:, None, :]                 # (N, K, C): the hinge of target k against class i
    active = (z > 0) & listed[:, :, None] & ~is_target[:, None, :]
    per_sample = (np.where(active, z, 0).sum(axis=(1, 2)) / n_classes).astype(x.dtype)
    if reduction == "none":
        out = per_sample.reshape(input.shape[:-1]) if input.dim() > 1 else per_sample.reshape(())
    else:
        out = reduce_array(per_sample, reduction)
    out = wrap(np.asanyarray(out, dtype=x.dtype))
    if wants_grad(input):
        coefficients = active.sum(axis=1).astype(x.dtype)        # + for each class i in an active hinge
        np.add.at(coefficients, (np.repeat(rows, t.shape[1]), safe.ravel()), -active.sum(axis=2).ravel())
        coefficients /= n_classes
        if reduction == "mean":
            coefficients /= x.shape[0]
        record(MultilabelMarginLossBackward0, (input, target), out, (), coefficients=coefficients,
               reduction=reduction, x_shape=input._data.shape)
    return out
