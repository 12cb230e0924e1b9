"""``triplet_margin_with_distance_loss``: the triplet loss max(d(a, p) - d(a, n) + margin, 0) under any distance
function, composed as PyTorch composes it (the distance's own nodes, then ``ClampMinBackward0`` and the
reduction's), so it needs no rule of its own."""
from .distance import pairwise_distance

__all__ = ["triplet_margin_with_distance_loss"]


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` per example, reduced; ``d`` is ``distance_function`` (default the
    pairwise 2-norm distance), ``swap`` uses min(d(a, n), d(p, n)) as the negative distance. The three inputs must
    have the same number of dims."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not a_dim == p_dim == n_dim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:        # the positive may lie closer to the negative than the anchor does (Balntas et al.)
        dist_neg = dist_neg.minimum(distance(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss
