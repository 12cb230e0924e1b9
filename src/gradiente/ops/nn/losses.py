"""Regression and binary losses: mse, l1, smooth_l1, huber, kl_div, binary_cross_entropy (with logits).

Where PyTorch has a dedicated kernel (``MseLossBackward0``, ``BinaryCrossEntropyBackward0``, ...) the loss
is one node here too, with the reduction inside it: ``'mean'`` scales the gradient by 1/n, ``'sum'`` by 1,
``'none'`` passes the elementwise gradient. ``l1_loss`` and ``kl_div`` are compositions, as in PyTorch.
Input and target broadcast against each other (with PyTorch's warning); both are differentiable.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core.creation import ones_like
from ...core.errors import broadcast_shape
from ...core.grad_mode import no_grad
from ...core.node import Node
from ...core.record import promote_operands, record, wants_grad, wrap
from ...core.rules import sigmoid_kernel_array
from ...core.warnings_at_caller import warn
from ..autocast import autocast_entry
from ..binary_math import xlogy
from ._common import add_scalar, mul_scalar, reduce_array, reduce_tensor, reduction_arg, scalar_name, softplus_stable
from .activations import log_sigmoid_array

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "gaussian_nll_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
]

_BCE_EPSILON = 1e-12


class _LossNode(Node):
    """A loss node over (input, target): ``norm`` is the factor the reduction puts on the gradient."""

    def norm(self):
        return _norm(self.reduction, self.count)

    def both(self, dx):
        """(dx, dy) for a loss of ``input - target``: dy = -dx, computed only when the target needs it."""
        edges = self.next_functions
        return (dx if edges[0][0] is not None else None,
                -dx if edges[1][0] is not None else None)

    def both_recorded(self, node_cls, grad, x, y, param):
        """(dx, dy) under create_graph, each recorded as PyTorch's one node of (grad, x, y) (``dy``'s with x and y
        swapped), whose second derivatives, unlike a composition's, let a nan in the incoming gradient through
        where the loss is linear (nan · 0; seed 102311)."""
        edges = self.next_functions
        return tuple(loss_gradient(node_cls, grad, a, b, param, self.reduction, self.count)
                     if edges[i][0] is not None else None for i, (a, b) in enumerate(((x, y), (y, x))))


class _LossGradientBackward(Node):
    """The gradient of a piecewise loss of d = x - y (smooth_l1, huber) as an op of (grad, x, y), recorded under
    create_graph: out = kernel(grad, d); dgrad = kernel(v, d); dx = v·grad·slope([|d| < param])·norm;
    dy = -dx. The product lets a nan or inf of v or grad through where d is outside (nan · 0), as PyTorch's
    ``*_loss_double_backward`` does."""
    kernel: staticmethod
    slope: staticmethod

    def backward(self, ops, v):
        grad, x, y = self.saved(ops)
        edges = self.next_functions
        dgrad = dx = None
        if edges[0][0] is not None:
            dgrad = (loss_gradient(type(self), v, x, y, self.param, self.reduction, self.count) if ops.recording
                     else self.kernel(v, x - y, self.param, _norm(self.reduction, self.count)))
        if edges[1][0] is not None or edges[2][0] is not None:
            xa, ya = ops.raw(x), ops.raw(y)
            with np.errstate(invalid="ignore"):
                inside = np.abs(xa - ya) < self.param
            dx = (v * grad) * ops.constant(self.slope(inside.astype(np.result_type(xa, ya)), self.param), v)
            if self.reduction == "mean":
                dx = dx / self.count
        return dgrad, dx, -dx if dx is not None and edges[2][0] is not None else None


def _norm(reduction, count):
    """The factor a reduction puts on an elementwise gradient: 1/n for 'mean', else 1. The mean of no elements:
    PyTorch's grad / numel is inf, and it only ever multiplies empty arrays."""
    if reduction != "mean":
        return 1.0
    return 1.0 / count if count else math.inf


def loss_gradient(node_cls, grad, x, y, param, reduction, count):
    """``node_cls.kernel`` on (grad, x - y) as a differentiable op of (grad, x, y): PyTorch's
    ``smooth_l1_loss_backward`` and ``huber_loss_backward``, the gradients those losses record under
    create_graph."""
    out = wrap(np.asanyarray(node_cls.kernel(grad._data, x._data - y._data, param, _norm(reduction, count))))
    if wants_grad(grad, x, y):
        record(node_cls, (grad, x, y), out, (grad, x, y), param=param, reduction=reduction, count=count)
    return out


def _size_warning(input, target):
    if target.shape != input.shape:
        warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _broadcast(input, target):
    """``torch.broadcast_tensors``: each operand expanded (``ExpandBackward0``) where its shape differs."""
    if input.shape == target.shape:
        return input, target
    shape = tuple(broadcast_shape(input.shape, target.shape))
    return (input if tuple(input.shape) == shape else input.expand(shape),
            target if tuple(target.shape) == shape else target.expand(shape))


def _pointwise(input, target, reduction, elementwise, node_cls, kernel, **attrs):
    """A loss ``elementwise(input - target)``, reduced, recorded as ``node_cls`` saving both operands."""
    input, target = _broadcast(input, target)
    xa, ya, dtype = promote_operands(input, target)
    if dt.kind(dtype) != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(dtype)}\'')
    with np.errstate(invalid="ignore", divide="ignore"):
        out = wrap(reduce_array(np.asanyarray(elementwise(xa - ya), dtype=dtype), reduction))
    if wants_grad(input, target):
        record(node_cls, (input, target), out, (input, target), reduction=reduction, count=np.size(xa), **attrs)
    return out


# --- mse, l1, smooth_l1, huber ----------------------------------------------------------------------------

class MseLossBackward0(_LossNode):
    """out = (x - y)²;  dx = 2·(x - y)·grad;  dy = -dx  (÷ n for 'mean')"""
    formula = "∂(x - y)²/∂x = 2(x - y)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        return self.both((x - y) * (grad * (2.0 * self.norm())))

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        d_t = x_t if y_t is None else y_t * -1.0 if x_t is None else x_t - y_t
        pointwise = (x - y) * d_t * 2.0
        if self.reduction == "none":
            return pointwise
        return ops.sum(pointwise) * self.norm()


@autocast_entry
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (``MseLossBackward0``); with ``weight``, Σ w·(x - y)² / Σ w, composed as in PyTorch."""
    _size_warning(input, target)
    reduction = reduction_arg(reduction, size_average, reduce)
    if weight is not None:
        input, target = _broadcast(input, target)
        return _weighted((input - target) ** 2, weight, input, reduction)
    return _pointwise(input, target, reduction, lambda d: d * d, MseLossBackward0, "mse_cpu")


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    """PyTorch's Python-level weighted reductions of mse_loss, l1_loss (Σ wℓ / Σ w) and huber_loss (mean)."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return reduce_tensor(loss, reduction)


@autocast_entry
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error, composed as PyTorch does: ``(x - y).abs()`` then the reduction."""
    _size_warning(input, target)
    reduction = reduction_arg(reduction, size_average, reduce)
    input, target = _broadcast(input, target)
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return reduce_tensor(loss, reduction)


class SmoothL1LossBackward0(_LossNode):
    """out = ½(x - y)²/β where |x - y| < β, else |x - y| - ½β;  dx = grad·clamp((x - y)/β, -1, 1);  dy = -dx"""
    formula = "∂smooth_l1/∂x = (x - y)/β inside |x - y| < β, sign(x - y) outside"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        if ops.recording:
            return self.both_recorded(SmoothL1LossBackwardBackward0, grad, x, y, self.beta)
        return self.both(_smooth_l1_gradient(grad, x - y, self.beta, self.norm()))


def _smooth_l1_gradient(grad, d, beta, norm):
    """PyTorch's ``smooth_l1_loss_backward`` kernel on arrays: grad·norm·clamp(d/β, -1, 1), for d = x - y."""
    g = grad * norm
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d < -beta, -g, np.where(d > beta, g, d * g / beta))


class SmoothL1LossBackwardBackward0(_LossGradientBackward):
    """smooth_l1's gradient under create_graph, an op of (grad, x, y): out = grad·norm·clamp((x - y)/β, -1, 1);
    dgrad = v·norm·clamp((x - y)/β, -1, 1);  dx = v·grad·[|x - y| < β]/β·norm;  dy = -dx"""
    formula = "d/dgrad = norm·clamp((x - y)/β, -1, 1);  d/dx = grad·[|x - y| < β]/β·norm"
    kernel = staticmethod(_smooth_l1_gradient)

    @staticmethod
    def slope(inside, beta):
        return inside / beta


@autocast_entry
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic for |x - y| < beta, linear beyond (``SmoothL1LossBackward0``); beta=0 is ``l1_loss``."""
    _size_warning(input, target)
    reduction = reduction_arg(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        input, target = _broadcast(input, target)
        return reduce_tensor((input - target).abs(), reduction)

    def elementwise(d):
        z = np.abs(d)
        return np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return _pointwise(input, target, reduction, elementwise, SmoothL1LossBackward0, "smooth_l1_cpu", beta=beta)


class HuberLossBackward0(_LossNode):
    """out = ½(x - y)² where |x - y| < δ, else δ(|x - y| - ½δ);  dx = grad·clamp(x - y, -δ, δ);  dy = -dx"""
    formula = "∂huber/∂x = x - y inside |x - y| < δ, δ·sign(x - y) outside"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        if ops.recording:
            return self.both_recorded(HuberLossBackwardBackward0, grad, x, y, self.delta)
        return self.both(_huber_gradient(grad, x - y, self.delta, self.norm()))


def _huber_gradient(grad, d, delta, norm):
    """PyTorch's ``huber_loss_backward`` kernel on arrays: grad·norm·clamp(d, -δ, δ), for d = x - y."""
    g = grad * norm
    with np.errstate(invalid="ignore"):
        return np.where(d < -delta, g * -delta, np.where(d > delta, g * delta, d * g))


class HuberLossBackwardBackward0(_LossGradientBackward):
    """huber's gradient under create_graph, an op of (grad, x, y): out = grad·norm·clamp(x - y, -δ, δ);
    dgrad = v·norm·clamp(x - y, -δ, δ);  dx = v·grad·[|x - y| < δ]·norm;  dy = -dx"""
    formula = "d/dgrad = norm·clamp(x - y, -δ, δ);  d/dx = grad·[|x - y| < δ]·norm"
    kernel = staticmethod(_huber_gradient)

    @staticmethod
    def slope(inside, delta):
        return inside


@autocast_entry
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic for |x - y| < delta, delta-scaled linear beyond (``HuberLossBackward0``)."""
    _size_warning(input, target)
    reduction = reduction_arg(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")

    def elementwise(d):
        z = np.abs(d)
        return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    if weight is not None:
        loss = _pointwise(input, target, "none", elementwise, HuberLossBackward0, "huber_cpu", delta=delta)
        return _weighted(loss, weight, input, reduction, mean_by_weight=False)
    return _pointwise(input, target, reduction, elementwise, HuberLossBackward0, "huber_cpu", delta=delta)


# --- kl_div -----------------------------------------------------------------------------------------------

@autocast_entry
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Σ target·(log target - input), input given as log-probabilities; composed as in PyTorch.
    ``reduction='batchmean'`` divides the sum by the batch size (the KL divergence proper)."""
    if size_average is not None or reduce is not None:
        reduction = reduction_arg(reduction, size_average, reduce)
    elif reduction == "mean":
        warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if reduction != "batchmean":
        reduction = reduction_arg(reduction)
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not input.dtype.is_floating_point or not target.dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogx(target) - target * input
    if reduction != "batchmean":
        return reduce_tensor(loss, reduction)
    total = loss.sum()
    return total / input.size(0) if input.dim() != 0 else total


def _xlogx(t):
    """``xlogy(t, t)``: t·log t with 0·log 0 = 0."""
    return xlogy(t, t)


# --- binary cross-entropy ---------------------------------------------------------------------------------

class BinaryCrossEntropyBackward0(_LossNode):
    """out = -w·(y·log x + (1 - y)·log(1 - x)), each log clamped at -100;
    dx = grad·w·(x - y) / max(x(1 - x), 1e-12);  dy = grad·w·(log(1 - x) - log x)"""
    formula = "∂BCE/∂x = (x - y) / (x(1 - x))"

    def backward(self, ops, grad):
        x, y, weight = self.saved(ops)
        g = grad * self.norm()
        if weight is not None:
            g = g * weight
        edges = self.next_functions
        dx = dy = None
        if edges[0][0] is not None:
            denom = (1 - x) * x
            small = ops.raw(denom) < _BCE_EPSILON
            if small.any():
                denom = ops.select(small, ops.constant(_BCE_EPSILON, denom), denom)
            dx = g * (x - y) / denom
        if edges[1][0] is not None:
            dy = g * (ops.log1p(-x) - ops.log(x))
        return dx, dy


@autocast_entry
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w·(y·log x + (1 - y)·log(1 - x)) for probabilities x in [0, 1] (``BinaryCrossEntropyBackward0``).
    Each log is clamped at -100, as in PyTorch, so x = 0 or 1 gives a finite loss."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    xa, ya = input._data, target._data
    if ya.dtype != xa.dtype:
        raise RuntimeError(f"Found dtype {scalar_name(ya.dtype)} but expected {scalar_name(xa.dtype)}")
    if dt.kind(xa.dtype) != "f":
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{scalar_name(xa.dtype)}\'')
    if not np.all((xa >= 0) & (xa <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((ya >= 0) & (ya <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = (ya - 1) * np.maximum(np.log1p(-xa), -100) - ya * np.maximum(np.log(xa), -100)
    if weight is not None:
        loss = loss * np.broadcast_to(weight._data, loss.shape)
    out = wrap(reduce_array(np.asanyarray(loss, dtype=xa.dtype), reduction))
    if wants_grad(input, target):
        record(BinaryCrossEntropyBackward0, (input, target), out, (input, target, weight), reduction=reduction,
               count=xa.size)
    return out


class BinaryCrossEntropyWithLogitsBackward0(_LossNode):
    """out = -w·(p·y·log σ(x) + (1 - y)·log(1 - σ(x))), p the pos_weight;
    dx = grad·w·((p·y + 1 - y)·σ(x) - p·y);  dy = grad·w·(log σ(-x) - p·log σ(x))  (p = 1: σ(x) - y and -x)"""
    formula = "∂BCE(σ(x), y)/∂x = σ(x) - y"

    def backward(self, ops, grad):
        x, y, weight, pos_weight = self.saved(ops)
        edges = self.next_functions
        dx = dy = None
        # in PyTorch's order of operations: the derivative times grad, then the weight, then divided by the count
        if edges[0][0] is not None:
            # (σ by torch.sigmoid's kernel, on arrays: Sleef's exp on its vector blocks)
            sigmoid = sigmoid_kernel_array(x) if not ops.recording else ops.sigmoid(x)
            if pos_weight is None:
                dx = (sigmoid - y) * grad
            else:
                t = pos_weight * y
                dx = ((t + 1 - y) * sigmoid - t) * grad
        if edges[1][0] is not None:
            if pos_weight is None:
                dy = -x * grad
            else:
                # log σ(-x) - p·log σ(x), with log σ(z) = -softplus(-z)
                dy = (softplus_stable(ops, -x) * pos_weight - softplus_stable(ops, x)) * grad
        return tuple(None if d is None else self._weighted_and_averaged(d, weight) for d in (dx, dy))

    def _weighted_and_averaged(self, d, weight):
        if weight is not None:
            d = d * weight
        return d / self.count if self.reduction == "mean" else d


@autocast_entry
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross-entropy of σ(input) against target, computed from the logits without overflow
    (``BinaryCrossEntropyWithLogitsBackward0``). ``pos_weight`` weighs the positive term per class."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    xa, ya = input._data, target._data
    if dt.kind(ya.dtype) != "f":
        raise RuntimeError(f"result type {scalar_name(np.result_type(xa.dtype, np.float32))} can't be cast to "
                           f"the desired output type {scalar_name(ya.dtype)}")
    # PyTorch: log_sigmoid(x) [· (1 + (p - 1)·y)], then (1 - y)·x - that, in the target's dtype.
    log_sigmoid = log_sigmoid_array(xa)
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight._data - 1) * ya + 1)
    loss = (1 - ya) * xa - log_sigmoid
    if weight is not None:
        loss = loss * weight._data
    out = wrap(reduce_array(np.asanyarray(loss, dtype=ya.dtype), reduction))
    if wants_grad(input, target):
        record(BinaryCrossEntropyWithLogitsBackward0, (input, target), out, (input, target, weight, pos_weight),
               reduction=reduction, count=loss.size)
    return out


# --- likelihood losses ------------------------------------------------------------------------------------

@autocast_entry
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of ``target`` under a Poisson distribution of rate eˣ (``log_input``) or x;
    ``full`` adds Stirling's approximation of log(target!). Composed as in PyTorch."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * add_scalar(input, eps).log()
    if full:
        # the scalar products as PyTorch's C++ writes them (0.5 * log(2π * target)): MulBackward1 nodes
        stirling = target * target.log() - target + mul_scalar(mul_scalar(target, 2 * math.pi).log(), 0.5)
        loss += stirling.masked_fill(target <= 1, 0)
    return reduce_tensor(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under a Gaussian of mean ``input`` and variance ``var``:
    ½(log var + (input - target)²/var), var clamped below at ``eps``. ``var`` may have one dimension fewer
    than the input, or a size of 1 in one dimension (one variance shared). Composed as in PyTorch."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return reduce_tensor(loss, reduction)
