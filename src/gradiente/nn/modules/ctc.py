"""``CTCLoss``: the Connectionist Temporal Classification loss as a layer (``ops/nn/ctc_loss.py``)."""
from .. import functional as F
from .loss import _Loss

__all__ = ["CTCLoss"]


class CTCLoss(_Loss):
    """The CTC loss (``F.ctc_loss``) with its ``blank`` label, ``reduction`` and ``zero_infinity`` fixed: called
    on ``log_probs`` (T, N, C) or (T, C), ``targets`` (N, S) padded or concatenated, and the ``input_lengths`` and
    ``target_lengths`` (N,) as tensors or tuples."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
