"""``AdaptiveLogSoftmaxWithLoss``: Grave et al.'s adaptive softmax, a softmax over many classes approximated by a head
(the frequent classes and one entry per cluster of rarer ones) and one low-rank projection per cluster."""
from collections import namedtuple

from ...ops.reductions import argmax
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log probabilities of ``n_classes`` classes split by ``cutoffs`` (increasing, in [1, n_classes - 1]) into a
    shortlist ``[0, cutoffs[0])``, scored by ``head``, and clusters ``[cutoffs[i], cutoffs[i + 1])``, each scored by
    ``head``'s cluster entry plus ``tail[i]``: ``Linear(in_features, in_features // div_value ** (i + 1))`` then
    ``Linear(.., cluster size)``, both without bias. ``head_bias`` gives the head a bias. The parameters are made
    in PyTorch's order, so the same seed gives the same values.

    ``forward(input (N, in_features) or (in_features,), target (N,) or ())`` returns ``_ASMoutput(output, loss)``:
    each example's target log probability, (N,) or (), and the mean negative log likelihood. ``log_prob`` gives
    all classes' log probabilities (N, n_classes), ``predict`` the most probable class (N,).
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **factory_kwargs)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(self.in_features // (self.div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hidden, bias=False, **factory_kwargs),
                                        Linear(hidden, size, bias=False, **factory_kwargs)))

    def reset_parameters(self):
        """Draw the head's and every projection's parameters again, as at construction."""
        self.head.reset_parameters()
        for to_hidden, to_cluster in self.tail:
            to_hidden.reset_parameters()
            to_cluster.reset_parameters()

    def forward(self, input_, target_):
        target_dim = target_.dim()
        if target_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)

        rows_seen = 0
        output = input.new_zeros(target.size(0))
        # the head entry each example's log probability starts from: its class, or its cluster's entry
        head_entry = target.new_empty(target.size(0))
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            in_range = (target >= bounds[i]) & (target < bounds[i + 1])
            rows = in_range.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                head_entry.index_copy_(0, rows, target[in_range])
            else:
                within = target[in_range] - bounds[i]
                cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                head_entry.index_fill_(0, rows, self.shortlist_size + i - 1)
                output.index_copy_(0, rows, cluster_logprob.gather(1, within.unsqueeze(1)).squeeze(1))
            rows_seen += rows.numel()
        if rows_seen != target.size(0):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")

        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, head_entry.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        """Every class's log probability from the head's output: the shortlist's directly, each cluster's as its
        head entry plus the class's log probability within the cluster."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Log probabilities of all ``n_classes`` classes: (N, in_features) -> (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each example, (N, in_features) -> (N,): ``log_prob(input).argmax(1)``,
        computing the clusters only for the examples whose head does not pick a shortlisted class."""
        head_output = self.head(input)
        output = argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return argmax(self._get_full_log_prob(input, head_output), dim=1)
        output[outside] = argmax(self._get_full_log_prob(input[outside], head_output[outside]), dim=1)
        return output
