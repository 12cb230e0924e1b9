"""Layers PyTorch keeps for old programs, ``Container`` and ``NLLLoss2d``, and two losses:
``TripletMarginWithDistanceLoss`` (the triplet loss under any distance function, ``ops/nn/triplet_distance.py``)
and ``MultiLabelMarginLoss`` (``ops/nn/multilabel_margin.py``)."""
from .. import functional as F
from .distance import PairwiseDistance
from .loss import NLLLoss, _Loss
from .module import Module

__all__ = ["Container", "NLLLoss2d", "TripletMarginWithDistanceLoss", "MultiLabelMarginLoss"]


class Container(Module):
    """A module holding the modules given as keyword arguments, under their names (the ancestor of
    ``Sequential``, kept as PyTorch keeps it); it has no forward of its own."""

    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its old name for 2-D (image) inputs, ``(N, C, H, W)`` scores and ``(N, H, W)`` labels."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``distance_function`` d (default ``PairwiseDistance()``, kept
    as a submodule as PyTorch keeps it): anchor, positive, negative ``(N, D)`` or ``(D,)``."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss (``F.multilabel_margin_loss``): input ``(N, C)`` or ``(C,)``, target of class
    indices of the same shape, each row's list ended by the first -1."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)
