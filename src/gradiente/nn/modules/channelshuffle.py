"""``ChannelShuffle``: interleaves groups of channels (see ``ops.nn.channel_shuffle``)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleaves ``groups`` groups of channels of ``(N, C, *)`` input (``F.channel_shuffle``)."""

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
