"""``LinearCrossEntropyLoss``: a bias-optional ``Linear`` to class logits and the cross entropy of them, in one layer
(``F.linear_cross_entropy``)."""
import math

from .. import functional as F
from .linear import Linear
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """The cross entropy of ``linear(input)``'s logits: input (in_features,) or (N, in_features), ``num_classes``
    classes, and with ``out_features`` (d₁, ..., d_K) a K-dimensional loss over targets (N, d₁, ..., d_K). The
    layer's ``linear`` holds the weight flat, (C·Πd, in_features), as PyTorch's does, so the same seed gives the
    same values; ``weight``, ``reduction``, ``ignore_index`` (None: -100) and ``label_smoothing`` are
    ``CrossEntropyLoss``'s. ``options`` is kept and passed on; see ``LinearCrossEntropyOptions`` for how gradiente
    differs (it computes every call on the reference path)."""

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index", "label_smoothing"]

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):
        linear_weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")

