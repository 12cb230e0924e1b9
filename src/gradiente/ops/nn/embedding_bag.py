"""``embedding_bag``: sums, means or maxima of bags of embeddings, recorded as ``EmbeddingBagBackward0``."""

import numpy as np

from ...core import dtype as dt
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.warnings_at_caller import warn
from ._array_rules import arrays_only
from .embedding import _renorm_rows

__all__ = ["embedding_bag"]


class EmbeddingBagBackward0(Node):
    """out[b] = Σ (or mean, or max) of weight[idx] over the entries of bag b, times per-sample weights;
    dweight[idx] += grad[bag]·scale (max: only the row that gave each maximum);  dpsw = grad[bag]·weight[idx]"""
    formula = "each looked-up row receives its bag's gradient, scaled as the row was in the bag"
    aten_name = "_embedding_bag"

    def backward(self, ops, grad):
        arrays_only(ops, "embedding_bag")
        edges = self.next_functions
        dweight = dsample = None
        if edges[0][0] is not None:
            dweight = np.zeros(self.weight_shape, dtype=grad.dtype)
            if self.mode == "max":
                filled = self.max_rows >= 0
                columns = np.broadcast_to(np.arange(grad.shape[1]), grad.shape)
                np.add.at(dweight, (self.max_rows[filled], columns[filled]), grad[filled])
            else:
                np.add.at(dweight, self.rows, grad[self.bags] * self.scale[:, None])
        if len(edges) > 1 and edges[1][0] is not None:
            (weight,) = self.saved(ops)
            dsample = np.zeros(self.samples, dtype=grad.dtype)
            dsample[self.kept] = (grad[self.bags] * weight[self.rows]).sum(axis=1)
            dsample = dsample.reshape(self.sample_shape)
        return dweight, dsample


def _bags(input, offsets, include_last_offset):
    """The flat indices, the first entry of each bag, the bag count and how many entries the bags cover, with
    PyTorch's checks."""
    idx = input._data
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        return idx.reshape(-1), np.arange(idx.shape[0]) * idx.shape[1], idx.shape[0], idx.size
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = offsets._data.astype(np.int64)
    if starts.size and starts[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but got offsets[-1] of "
                           f"{starts[-1]}")
    if include_last_offset:
        # the last offset only ends the last bag; entries after it belong to no bag
        return idx, starts[:-1], max(starts.size - 1, 0), int(starts[-1]) if starts.size else 0
    return idx, starts, starts.size, idx.size


def _bag_max(values, bags, rows, count):
    """Per bag and column, the maximum of ``values`` (one row per kept entry) and the embedding row it came
    from (the first, on ties; -1 for an empty bag)."""
    out = np.zeros((count, values.shape[1]), dtype=values.dtype)
    max_rows = np.full(out.shape, -1, dtype=np.int64)
    if not len(bags):
        return out, max_rows
    starts = np.flatnonzero(np.diff(bags, prepend=-1))      # first entry of each non-empty bag (bags are sorted)
    filled = bags[starts]
    out[filled] = np.maximum.reduceat(values, starts, axis=0)
    position = np.where(values == out[bags], np.arange(len(bags))[:, None], len(bags))
    max_rows[filled] = rows[np.minimum.reduceat(position, starts, axis=0)]
    return out, max_rows


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings, without making the ``(entries, dim)`` lookup first. ``input``
    1-D with ``offsets`` (where each bag starts) or 2-D (one bag per row); output ``(bags, dim)``.
    ``per_sample_weights`` (mode ``'sum'``) scale each entry; entries equal to ``padding_idx`` are left out
    (an empty bag gives zeros). ``sparse`` gradients are not supported (the gradient is dense)."""
    if weight.dtype == dt.long and input.is_floating_point():
        warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    idx, starts, count, covered = _bags(input, offsets, include_last_offset)
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    num = weight.shape[0]
    outside = (idx < 0) | (idx >= num)
    if outside.any():
        # the message of PyTorch's general kernel (its float32 sum/mean fast path words it differently)
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                           f"{idx[outside][0]}")
    if padding_idx is None:
        padding_idx = -1                        # PyTorch's "none": no index equals it
    elif padding_idx < 0:
        padding_idx += num
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    table = weight._data
    entries = np.arange(idx.size)
    bag_of = np.searchsorted(starts, entries, side="right") - 1
    kept = np.flatnonzero((entries < covered) & (idx != padding_idx))
    rows, bags = idx[kept], bag_of[kept]
    sizes = np.bincount(bags, minlength=count)
    if mode == "max":
        out, max_rows = _bag_max(table[rows], bags, rows, count)
        scale = None
    else:
        scale = np.ones(len(kept), dtype=table.dtype)
        if per_sample_weights is not None:
            scale = per_sample_weights._data.reshape(-1)[kept]
        if mode == "mean":
            scale = scale / sizes[bags].astype(table.dtype)
        out = np.zeros((count, table.shape[1]), dtype=table.dtype)
        np.add.at(out, bags, table[rows] * scale[:, None])
        max_rows = None
    result = wrap(out)
    if wants_grad(weight, per_sample_weights):
        if scale is not None and scale_grad_by_freq:
            scale = scale / np.bincount(idx, minlength=num)[rows].astype(table.dtype)
        record(EmbeddingBagBackward0, (weight, per_sample_weights), result,
               saved=(weight,) if per_sample_weights is not None else (), mode=mode, rows=rows, bags=bags,
               scale=scale, max_rows=max_rows, kept=kept, samples=idx.size, weight_shape=table.shape,
               sample_shape=None if per_sample_weights is None else per_sample_weights._data.shape)
    return result
