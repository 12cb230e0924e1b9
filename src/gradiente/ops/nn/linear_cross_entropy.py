"""``linear_cross_entropy``: the cross entropy of a linear map's logits, ``cross_entropy(linear(x, W, b), target)``,
with PyTorch 2.13's checks and its K-dimensional form (W of shape (C, d₁, ..., d_K, in_features)).

PyTorch runs a memory-saving chunked kernel when ``options`` (a ``LinearCrossEntropyOptions``) is given and the call
qualifies; it computes the same loss without materialising the logits, and records one custom-op node. Here every
call takes the reference path, so with ``options`` the values are PyTorch's (up to rounding) and the graph is
``linear``'s and ``cross_entropy``'s nodes; the warning for calls the chunked path cannot serve is PyTorch's.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core.warnings_at_caller import warn
from .classification import cross_entropy
from .linear import linear

__all__ = ["linear_cross_entropy"]


def _check_shapes(input, linear_weight, linear_bias):
    """PyTorch's checks; returns (batch shape, number of classes, out_features, in_features)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    return batch, num_classes, out_features, in_features


def _check_accumulation(input_dtype, options):
    """The chunked path's one check that depends on ``options``: a separate accumulation dtype only as float32 for
    float16/bfloat16 inputs (``acc_dtype=None`` resolves as PyTorch's does on the CPU)."""
    half = {dt.float16, dt.bfloat16}
    acc = options.acc_dtype
    if acc is None:
        acc = dt.float32 if options.acc_policy == "auto" and input_dtype in half else input_dtype
    if input_dtype != acc and not (input_dtype in half and acc == dt.float32):
        raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{acc} acc_dtype and {input_dtype} inputs.")


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """Cross entropy of the logits ``input @ linear_weight.T (+ linear_bias)``: input (in_features,) or
    (N, in_features); linear_weight (C, in_features), or (C, d₁, ..., d_K, in_features) for a K-dimensional loss
    (targets (N, d₁, ..., d_K)); target class indices, or class probabilities shaped like the logits.
    ``ignore_index`` None means -100 (and must be None for probabilities); ``weight``, ``reduction`` and
    ``label_smoothing`` are ``cross_entropy``'s. ``options`` is accepted and checked as PyTorch checks it, but the
    loss is always computed on the reference path (module docstring)."""
    batch, num_classes, out_features, in_features = _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    chunkable = (reduction in {"mean", "sum", "none"} and label_smoothing == 0.0
                 and target._data.dtype == np.int64 and not out_features)
    if options is not None and not chunkable:
        warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if options is not None and chunkable:
        _check_accumulation(input.dtype, options)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
