"""What the functional modules share: the ``reduction`` argument, dtype names in messages, recording an
elementwise activation (and its in-place form), and the Tensor-with-number nodes PyTorch's C++
decompositions record (``MulBackward1``: ``tensor * 0.9`` written in C++ rather than Python)."""

import numpy as np

from ...core import dtype as dt
from ...core.creation import c_order, keep_layout
from ...core.inplace import apply_inplace
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.summation import torch_order_sums
from ...core.warnings_at_caller import warn

__all__ = [
    "activation",
    "add_scalar",
    "check_floating",
    "div_scalar",
    "inplace",
    "mul_scalar",
    "reduce_array",
    "reduce_tensor",
    "reduction_arg",
    "scalar_name",
    "shape_text",
    "softplus_stable",
    "sub_scalar",
]


def reduction_arg(reduction, size_average=None, reduce=None):
    """``'none'``, ``'mean'`` or ``'sum'`` from a loss's arguments, with PyTorch's handling of the deprecated
    ``size_average``/``reduce`` pair and its messages."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        # (stacklevel 2: the loss function that called this, as PyTorch's names its functional.py)
        warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
             stacklevel=2)
    if reduction == "elementwise_mean":
        warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.", stacklevel=2)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_array(loss, reduction):
    """Apply ``'mean'``/``'sum'``/``'none'`` to an elementwise loss array (a 0-d array for the first two). PyTorch
    reduces a loss with ``sum`` and ``mean``, so a float loss is added in their order (``core/summation.py``)."""
    if reduction in ("mean", "sum") and loss.size and loss.dtype in (np.float32, np.float64):
        total = torch_order_sums(loss, tuple(range(loss.ndim)))
        if total is not None:
            return np.asanyarray(total[0] if reduction == "sum" else total[0] / loss.dtype.type(loss.size))
    if reduction == "mean":
        return np.asanyarray(dt.widened(loss).mean(), dtype=loss.dtype)
    if reduction == "sum":
        return np.asanyarray(dt.widened(loss).sum(), dtype=loss.dtype)
    return loss


def reduce_tensor(loss, reduction):
    """Apply a reduction to an elementwise loss tensor, recorded as PyTorch records it in the losses it
    composes (``MeanBackward0`` / ``SumBackward0``)."""
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def scalar_name(np_dtype):
    """PyTorch's scalar-type name for messages: ``Float``, ``Long``, ..."""
    return dt.FROM_NUMPY[np.dtype(np_dtype)]._legacy[:-len("Tensor")]


def shape_text(shape):
    """A shape as PyTorch's C++ messages print it: ``[4, 5]``."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_floating(array, kernel):
    """PyTorch's error for a floating-only kernel given an integer or bool tensor."""
    if dt.kind(array.dtype) != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(array.dtype)}\'')


def activation(input, forward, node_cls, kernel, saves="x", contiguous=False, **attrs):
    """``forward`` (arrays to array) applied to ``input``, recorded as ``node_cls``; the node saves the input
    (``saves="x"``), the result (``"out"``) or ``saves(input)`` (a function: a copy of an input that an in-place
    form overwrites); ``attrs`` are the function's parameters, kept on the node.
    The result has the input's layout, as PyTorch's elementwise kernels give it, or with ``contiguous`` C order
    (the kernels PyTorch writes apart, log_sigmoid's)."""
    a = input._data
    check_floating(a, kernel)
    with np.errstate(over="ignore"):        # exp overflowing in a branch that np.where discards
        values = np.asanyarray(forward(dt.widened(a)), dtype=a.dtype)
    # np.where's result is C order: the input's layout is put back where PyTorch keeps it
    out = wrap(c_order(values) if contiguous else keep_layout(values, a))
    if wants_grad(input):
        saved = (input,) if saves == "x" else (out,) if saves == "out" else (saves(input),)
        record(node_cls, (input,), out, saved, **attrs)
    return out


def inplace(input, fn):
    """The in-place form of the out-of-place function ``fn(tensor) -> tensor`` (``relu_``, ``elu_``, ...)."""
    return apply_inplace(input, fn)


def softplus_stable(ops, x):
    """``log(1 + eˣ)`` with no overflow anywhere, in either branch (so derivatives through it stay finite)."""
    positive = ops.raw(x) > 0
    xp, xn = ops.mask(positive, x), ops.mask(~positive, x)
    return ops.select(positive, xp + ops.log1p(ops.exp(-xp)), ops.log1p(ops.exp(xn)))


# --- tensor-with-number nodes -----------------------------------------------------------------------------

class MulBackward1(Node):
    """out = x * c (c a number);  dx = grad * c"""
    formula = "d/dx (c·x) = c"
    holomorphic = True      # grad · c: for complex gradients the engine conjugates around it (grad · conj(c))

    def backward(self, ops, grad):
        return (grad * self.other,)


class DivBackward1(Node):
    """out = x / c (c a number);  dx = grad / c"""
    formula = "d/dx (x/c) = 1/c"
    holomorphic = True

    def backward(self, ops, grad):
        return (grad / self.other,)


class SubBackward1(Node):
    """out = x - c (c a number);  dx = grad"""
    formula = "d/dx (x - c) = 1"

    def backward(self, ops, grad):
        return (grad,)


class AddBackward1(Node):
    """out = x + c (c a number);  dx = grad"""
    formula = "d/dx (x + c) = 1"

    def backward(self, ops, grad):
        return (grad,)


def _with_number(x, c, np_fn, node_cls):
    out = wrap(np.asanyarray(np_fn(x._data, c), dtype=x._data.dtype))
    if wants_grad(x):
        record(node_cls, (x,), out, other=c)
    return out


def mul_scalar(x, c):
    """``x * c`` recorded as ``MulBackward1``, as PyTorch records the product inside its C++ losses."""
    return _with_number(x, c, np.multiply, MulBackward1)


def div_scalar(x, c):
    """``x / c`` recorded as ``DivBackward1``."""
    return _with_number(x, c, np.true_divide, DivBackward1)


def sub_scalar(x, c):
    """``x - c`` recorded as ``SubBackward1``."""
    return _with_number(x, c, np.subtract, SubBackward1)


def add_scalar(x, c):
    """``x + c`` recorded as ``AddBackward1``."""
    return _with_number(x, c, np.add, AddBackward1)
