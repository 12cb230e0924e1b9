"""Dropout layers: zero elements (or whole channels) with probability ``p`` in training, scaling the rest by
1/(1-p); the identity in ``eval()`` mode."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element with probability ``p`` in training and scales the rest by 1/(1-p) (``F.dropout``); the
    identity in ``eval()``. Any shape."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of a (N, C, L) or (C, L) input with probability ``p`` in training, scaling the rest by
    1/(1-p)."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels (feature maps) of a (N, C, H, W) or (C, H, W) input with probability ``p`` in training,
    scaling the rest by 1/(1-p)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p`` in training, scaling
    the rest by 1/(1-p)."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and the result is rescaled
    to keep zero mean and unit variance (``F.alpha_dropout``)."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels: each channel is dropped to SELU's saturation value with probability ``p``,
    then the result is rescaled to keep mean and variance."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
