"""``ctc_loss``: the Connectionist Temporal Classification loss, one recorded node as PyTorch's
(``CtcLossBackward0``), with the reductions and ``zero_infinity`` composed around it as PyTorch composes them
(``WhereBackward0``, ``DivBackward0``, ``MeanBackward0``, ``SumBackward0``).

A target ``l`` of length L is extended with blanks to ``l'`` = (blank, l₁, blank, l₂, ..., l_L, blank), 2L + 1
states. The forward variable α[t, s] (the log probability of all alignments of the first t + 1 frames that end in
state s) follows the recursion α[t, s] = lse(α[t-1, s], α[t-1, s-1], α[t-1, s-2] if l'ₛ ≠ l'ₛ₋₂) + lp[t, l'ₛ], and
the loss is -lse(α[T-1, 2L], α[T-1, 2L-1]). The backward variable β runs the same recursion from the last frame
down. Both are computed for the whole batch at once, one frame at a time, in log space; states past a sample's
own 2L + 1 and frames past its input length are -inf.

The gradient is PyTorch's: ∂/∂lp[t, c] = exp(lp[t, c]) - exp(lse_{s: l'ₛ = c}(α[t, s] + β[t, s]) + nll - lp[t, c]),
which is the true gradient plus exp(lp[t, c]): a term that vanishes once it passes back through the
``log_softmax`` that normally produces ``log_probs`` (so gradcheck holds for ``ctc_loss(x.log_softmax(2), ...)``).
PyTorch defines no second derivative (``_ctc_loss_backward``): under ``create_graph`` the gradient is recorded as
an op without one.
"""
import numpy as np

from ...core import dtype as dt
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.tensor import Tensor
from ..arithmetic import _without_derivative
from ..selection import where
from ._common import reduction_arg, scalar_name

__all__ = ["ctc_loss"]

_CHECKING = "(while checking arguments for ctc_loss_allocate_outputs)"


def _lse(*terms):
    """log Σ exp(terms), elementwise, as PyTorch's kernel writes it: the largest term taken out, 0 if all are -inf."""
    top = terms[0]
    for term in terms[1:]:
        top = np.maximum(top, term)
    top = np.where(top == -np.inf, 0.0, top)
    with np.errstate(divide="ignore"):
        return np.log(sum(np.exp(term - top) for term in terms)) + top


class CtcLossBackward0(Node):
    """out = -log Σ_alignments Π_t lp[t, l'_{π_t}];  dlp[t, c] = grad · (exp(lp[t, c]) - exp(lse_{l'ₛ = c}(α + β)[t, s]
    + nll - lp[t, c])), 0 past the input length (PyTorch's formula, see the module docstring)"""
    formula = "∂nll/∂lp[t, c] = exp(lp[t, c]) - (posterior occupancy of class c at frame t)"
    aten_name = "_ctc_loss"

    def backward(self, ops, grad):
        (log_probs,) = self.saved(ops)
        dx = _gradient(self.problem, ops.raw(grad)).astype(self.dtype)
        if ops.recording:
            return (_without_derivative("_ctc_loss_backward", (grad, log_probs), wrap(dx)),)
        return (dx,)

    def jvp(self, ops, *tangents):
        # PyTorch has no forward-mode rule for _ctc_loss: its error, rather than one read off the backward
        return Node.jvp(self, ops, *tangents)


class _Problem:
    """One batch's CTC lattice: log probabilities ``lp`` (T, N, C), extended targets ``states`` (N, 2S + 1), which
    states a sample has (``valid``), where a skip over a blank is allowed (``skip``), the lengths, and the forward
    variables ``alpha`` (T, N, 2S + 1) and losses ``nll`` (N,) once ``solve`` has run."""

    def __init__(self, lp, targets, input_lengths, target_lengths, blank):
        self.lp, self.blank = lp, blank
        self.input_lengths, self.target_lengths = input_lengths, target_lengths
        n = lp.shape[1]
        longest = int(target_lengths.max()) if n else 0
        labels = np.zeros((n, max(longest, 0)), dtype=np.int64)
        for b in range(n):
            labels[b, :target_lengths[b]] = targets[b]
        self.states = np.full((n, 2 * longest + 1), blank, dtype=np.int64)
        self.states[:, 1::2] = labels
        s = np.arange(2 * longest + 1)
        self.valid = s[None, :] <= 2 * target_lengths[:, None]
        self.skip = np.zeros_like(self.valid)
        self.skip[:, 2:] = (self.states[:, 2:] != self.states[:, :-2])

    def emissions(self):
        """lp[t, b, l'ₛ] for every state, -inf where the sample has no such state: (T, N, 2S + 1)."""
        picked = np.take_along_axis(self.lp, np.broadcast_to(self.states[None], (self.lp.shape[0],)
                                                             + self.states.shape), axis=2)
        return np.where(self.valid[None], picked, -np.inf)

    def solve(self):
        """α for every frame and the loss of each sample."""
        e = self.emissions()
        t_max, n, width = e.shape
        alpha = np.full((t_max, n, width), -np.inf)
        if t_max:
            alpha[0, :, :2] = e[0, :, :2]
        for t in range(1, t_max):
            prev = alpha[t - 1]
            one = np.concatenate([np.full((n, 1), -np.inf), prev[:, :-1]], axis=1)
            two = np.concatenate([np.full((n, 2), -np.inf), prev[:, :-2]], axis=1)[:, :width]
            alpha[t] = _lse(prev, one, np.where(self.skip, two, -np.inf)) + e[t]
        self.alpha, self.e = alpha, e
        rows = np.arange(n)
        last = np.maximum(self.input_lengths - 1, 0)
        end = alpha[last, rows, 2 * self.target_lengths]
        before = np.where(self.target_lengths > 0, alpha[last, rows, np.maximum(2 * self.target_lengths - 1, 0)],
                          -np.inf)
        nll = -_lse(end, before)
        # no frames: the empty target has probability 1, any other 0
        self.nll = np.where(self.input_lengths == 0, np.where(self.target_lengths == 0, -0.0, np.inf), nll)
        return self.nll


def _beta(problem):
    """β for every frame: the log probability of the remaining frames given state s at frame t."""
    e, lengths = problem.e, problem.input_lengths
    t_max, n, width = e.shape
    rows, tl = np.arange(n), problem.target_lengths
    beta = np.full((t_max, n, width), -np.inf)
    after_skip = np.zeros_like(problem.skip)
    after_skip[:, :-2] = problem.skip[:, 2:]
    for t in range(t_max - 1, -1, -1):
        start = np.full((n, width), -np.inf)
        start[rows, 2 * tl] = e[t, rows, 2 * tl]
        start[rows, np.maximum(2 * tl - 1, 0)] = np.where(tl > 0, e[t, rows, np.maximum(2 * tl - 1, 0)],
                                                          start[rows, 0])
        if t + 1 < t_max:
            nxt = beta[t + 1]
            one = np.concatenate([nxt[:, 1:], np.full((n, 1), -np.inf)], axis=1)
            two = np.concatenate([nxt[:, 2:], np.full((n, 2), -np.inf)], axis=1)[:, :width]
            inner = _lse(nxt, one, np.where(after_skip, two, -np.inf)) + e[t]
        else:
            inner = start
        beta[t] = np.where((t == lengths - 1)[:, None], start, np.where((t < lengths - 1)[:, None], inner, -np.inf))
    return beta


def _gradient(problem, grad_out):
    """PyTorch's gradient of the per-sample losses in lp, scaled by each sample's upstream gradient."""
    lp, nll = problem.lp, problem.nll
    t_max, n, classes = lp.shape
    occupancy = problem.alpha + _beta(problem)                      # (T, N, 2S + 1)
    # lse over the states of each class: the largest term per class taken out first
    index = np.broadcast_to(problem.states[None], occupancy.shape)
    top = np.full((t_max, n, classes), -np.inf)
    t_idx, b_idx = np.meshgrid(np.arange(t_max), np.arange(n), indexing="ij")
    t_idx = np.broadcast_to(t_idx[..., None], occupancy.shape)
    b_idx = np.broadcast_to(b_idx[..., None], occupancy.shape)
    np.maximum.at(top, (t_idx, b_idx, index), occupancy)
    safe_top = np.where(top == -np.inf, 0.0, top)
    total = np.zeros((t_max, n, classes))
    with np.errstate(invalid="ignore"):
        np.add.at(total, (t_idx, b_idx, index), np.exp(occupancy - safe_top[t_idx, b_idx, index]))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_class = np.log(total) + safe_top
        dx = (np.exp(lp) - np.exp(log_class + nll[None, :, None] - lp)) * np.reshape(grad_out, (1, -1, 1))
    inside = np.arange(t_max)[:, None] < problem.input_lengths[None, :]
    if problem.zero_infinity:
        inside = inside & (nll != np.inf)[None, :]
    return np.where(inside[:, :, None], dx, 0.0)


# --- arguments ---------------------------------------------------------------------------------------------------

def _lengths(value, name):
    """A length argument (a tensor of integers, or a sequence of ints) as an int64 vector."""
    if isinstance(value, Tensor):
        if dt.kind(value._data.dtype) not in "iub" or value._data.dtype == np.bool_:
            raise RuntimeError(f"{name} must be integral")
        return np.asanyarray(value._data, dtype=np.int64).reshape(-1)
    return np.asanyarray(list(value), dtype=np.int64).reshape(-1)


def _check_length_types(input_lengths, target_lengths):
    """PyTorch's two overloads: both lengths tensors, or both sequences of ints."""
    kinds = [isinstance(x, Tensor) for x in (input_lengths, target_lengths)]
    ints = [not k and isinstance(x, (tuple, list)) and all(isinstance(v, int) for v in x)
            for k, x in zip(kinds, (input_lengths, target_lengths))]
    if not (all(kinds) or all(ints)):
        got = ", ".join(["Tensor", "Tensor"] + [_type_name(x) for x in (input_lengths, target_lengths)]
                        + ["int", "int", "bool"])
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}), but expected one "
                        "of:\n * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
                        "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = "
                        "False)\n * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
                        "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n")


def _type_name(x):
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def _targets_per_sample(targets, target_lengths, batch):
    """Each sample's target labels, from a padded (N, S) tensor or the concatenation of all targets; PyTorch's
    checks of the sizes."""
    t = np.asanyarray(targets._data).astype(np.int64)
    if t.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {t.ndim}-dimensional tensor for argument #2 "
                           f"'targets' {_CHECKING}")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length} {_CHECKING}")
    if t.ndim == 1:
        total = int(target_lengths.sum())
        if t.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {t.shape[0]} for "
                               f"argument #2 'targets' {_CHECKING}")
        ends = np.cumsum(target_lengths)
        return [t[end - length:end] for end, length in zip(ends, target_lengths)]
    if t.shape[0] != batch:
        raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size {t.shape[0]} for "
                           f"argument #2 'targets' {_CHECKING}")
    longest = int(target_lengths.max()) if batch else 0
    if t.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                           f"{t.shape[1]} for argument #2 'targets' {_CHECKING}")
    return [t[b, :length] for b, length in enumerate(target_lengths)]


def _negative_log_likelihood(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """ATen's ``_ctc_loss`` on (T, N, C) log probabilities: the per-sample losses (N,), recorded as
    ``CtcLossBackward0``."""
    lp = log_probs._data
    if dt.kind(lp.dtype) != "f" or lp.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{scalar_name(lp.dtype)}'")
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional tensor for argument #1 "
                           f"'log_probs' {_CHECKING}")
    t_max, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    per_sample = _targets_per_sample(targets, target_lengths, batch)
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length} {_CHECKING}")
        if length > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {length} "
                               f"{_CHECKING}")
    problem = _Problem(lp.astype(np.float64), per_sample, input_lengths, target_lengths, blank)
    out = wrap(problem.solve().astype(lp.dtype))
    if wants_grad(log_probs):
        problem.zero_infinity = zero_infinity
        record(CtcLossBackward0, (log_probs,), out, (log_probs,), problem=problem, dtype=lp.dtype)
    return out


def ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    """``torch.ctc_loss`` with ``reduction`` as a name: the unbatched form (log_probs (T, C), one target) made a
    batch of one, the losses of ``_ctc_loss``, infinite ones zeroed, then reduced as ATen's ``ctc_loss`` does."""
    _check_length_types(input_lengths, target_lengths)
    input_lengths = _lengths(input_lengths, "input_lengths")
    target_lengths = _lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    res = _negative_log_likelihood(log_probs, targets, input_lengths, target_lengths, int(blank), zero_infinity)
    if zero_infinity:
        res = where(res == np.inf, wrap(np.zeros((), res._data.dtype)), res)
    if reduction == "mean":
        divisor = wrap(np.maximum(target_lengths, 1).astype(res._data.dtype))
        return (res / divisor).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of aligning each target sequence to its input: ``log_probs`` (T, N, C) or unbatched (T, C), the
    log probabilities of C classes (blank included) at T frames; ``targets`` padded (N, S) or all targets
    concatenated (Σ target_lengths,), or (S,) unbatched; ``input_lengths`` and ``target_lengths`` (N,) as tensors
    of integers or as tuples of ints. ``reduction='mean'`` divides each loss by its target length (at least 1)
    and averages; ``zero_infinity`` replaces infinite losses (targets too long to align) and their gradients by
    zeros. Output (N,) for ``'none'`` (a scalar unbatched), else a scalar."""
    reduction = reduction_arg(reduction)
    return ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
