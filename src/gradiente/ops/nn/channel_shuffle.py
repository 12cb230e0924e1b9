"""``channel_shuffle``: interleave groups of channels (ShuffleNet), recorded as ``ChannelShuffleBackward0``."""
import numpy as np

from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.rules import numpy_ops
from ._common import shape_text

__all__ = ["channel_shuffle"]


def _shuffle(ops, x, groups):
    """Channels ``(groups, C/groups)`` reordered as ``(C/groups, groups)``: the channel at ``g·(C/groups) + i``
    moves to ``i·groups + g``. Shuffling by ``C/groups`` undoes it."""
    shape = tuple(x.shape)
    n, c = shape[:2]
    split = ops.reshape(x, (n, groups, c // groups) + shape[2:])
    return ops.reshape(ops.transpose(split, 1, 2), shape)


class ChannelShuffleBackward0(Node):
    """out = shuffle(x, g);  dx = shuffle(grad, C/g)"""
    formula = "a permutation of channels: the gradient takes the inverse permutation"

    def backward(self, ops, grad):
        return (_shuffle(ops, grad, grad.shape[1] // self.groups),)


def channel_shuffle(input, groups):
    """Split the channels of ``(N, C, *)`` input into ``groups`` and interleave them (ShuffleNet)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{shape_text(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    result = wrap(np.ascontiguousarray(_shuffle(numpy_ops, input._data, groups)))
    if wants_grad(input):
        record(ChannelShuffleBackward0, (input,), result, groups=groups)
    return result
