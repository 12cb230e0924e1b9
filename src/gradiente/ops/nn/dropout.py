"""Dropout and its variants, composed as PyTorch composes them so that the random numbers and the graph
are the same: a noise tensor filled by ``bernoulli_(1 - p)`` from the default generator, scaled by
``1/(1 - p)``, then multiplied into the input (``MulBackward0``). With the same seed, gradiente drops the
same elements as PyTorch.

``dropout1d/2d/3d`` (and ``feature_alpha_dropout``) drop whole channels: one draw per (N, C) pair.
``alpha_dropout`` keeps the mean and variance of SELU activations (the dropped value is SELU's
saturation, then an affine correction).
"""
import math

from ...core import creation
from ...core.warnings_at_caller import warn

__all__ = ["alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766       # -SELU's negative saturation value, scale·alpha


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply(input, p, training, inplace, feature=False, alpha=False):
    """PyTorch's ``_dropout_impl``: the input itself when nothing is dropped, else input·noise (+ b)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = creation.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input.mul(zero)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise = creation.empty(input.shape[:2] + (1,) * (input.dim() - 2), dtype=input.dtype)
    else:
        noise = creation.empty_like(input)
    noise.bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
        out = input.mul_(noise) if inplace else input.mul(noise)
        return out.add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input.mul(noise)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1 - p) (when ``training``)."""
    _check_p(p)
    return _apply(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for self-normalizing (SELU) networks: keeps zero mean and unit variance."""
    _check_p(p)
    return _apply(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` of whole channels."""
    _check_p(p)
    return _apply(input, p, training, inplace, feature=True, alpha=True)


def _channelwise(input, p, training, inplace, batched):
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _apply(input, p, training, inplace, feature=True)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def _warn_unless_channels(n, dim):
    """PyTorch's deprecation warning for a ``dropout{n}d`` input that is not (N, C, n spatial dims) or (C, ...)."""
    if dim not in (n + 1, n + 2):
        warn(f"dropout{n}d: Received a {dim}-D input to dropout{n}d, which is deprecated and will result in "
                      "an error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that dropout{n}d exists to provide channel-wise dropout on inputs with "
                      f"{n} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. {n + 1}D "
                      f"or {n + 2}D inputs).", stacklevel=3)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p``."""
    _check_p(p)
    dim = input.dim()
    if dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channelwise(input, p, training, inplace, batched=dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) input with probability ``p``."""
    _check_p(p)
    dim = input.dim()
    _warn_unless_channels(2, dim)
    if dim == 3:
        warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _apply(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    _check_p(p)
    dim = input.dim()
    _warn_unless_channels(3, dim)
    return _channelwise(input, p, training, inplace, batched=dim == 5)
