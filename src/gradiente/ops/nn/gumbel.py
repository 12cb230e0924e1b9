"""``gumbel_softmax``: a differentiable sample from a categorical distribution (the Gumbel-softmax trick),
composed as PyTorch composes it, with the same random draws (``exponential_`` on PyTorch's generator), so it
records PyTorch's nodes and needs no rule of its own."""

from ...core.creation import empty_like, zeros_like
from ...core.warnings_at_caller import warn

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) along ``dim``, g ~ Gumbel(0, 1) drawn per element; ``hard`` gives the one-hot
    of each maximum in the forward pass and the soft sample's gradient in the backward pass (straight-through).
    Same shape as ``logits``."""
    if eps != 1e-10:
        warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()        # Gumbel(0, 1)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
