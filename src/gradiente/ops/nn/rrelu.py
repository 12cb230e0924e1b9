"""``rrelu``, the randomized leaky ReLU: linear in its input once its slopes are drawn (the draws are PyTorch's,
bit for bit), so its gradient's node is a ``linear_maps`` node and derivatives of every order follow.

(It lives apart from ``activations`` because it shares its nodes' machinery with the linear resampling ops.)"""
import numpy as np

from ...core import random as _random
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ._common import check_floating, inplace, scalar_name
from .linear_maps import _LinearGradientOfInput, linear_op_reading

__all__ = ["rrelu", "rrelu_"]


class RreluWithNoiseBackward0(Node):
    """out = x if x > 0 else a·x (a drawn from U(lower, upper) per element when training, else the mean);
    dx = grad · (1 if x > 0 else a);  out' = x' · (1 if x > 0 else a)"""
    formula = "d/dx rrelu(x) = 1 if x > 0 else the element's slope"
    negative_slope: float       # the slope a for x <= 0 when not training
    use_noise: bool             # whether the saved noise holds each element's slope

    def backward(self, ops, grad):
        return (self._times_slope(ops, grad),)

    def jvp(self, ops, x_t):
        return self._times_slope(ops, x_t)

    def _times_slope(self, ops, v):
        """v · slope, elementwise: a map that is its own adjoint, so the rule of both directions."""
        x, noise = self.saved(ops)
        if self.use_noise:
            slope = ops.raw(noise)
        else:
            slope = np.where(ops.raw(x) > 0, 1, self.negative_slope).astype(ops.raw(x).dtype)
        if ops.recording:
            return linear_op_reading(v, x, lambda g: g * slope, lambda g: g * slope, RreluWithNoiseBackwardBackward0)
        return v * slope


class RreluWithNoiseBackward1(RreluWithNoiseBackward0):
    """The in-place form: the sign is read from the saved result (the same as the input's, slopes being
    positive)."""


RreluWithNoiseBackwardBackward0 = type("RreluWithNoiseBackwardBackward0", (_LinearGradientOfInput,), {
    "__doc__": "out = grad · slope (PyTorch's rrelu_with_noise_backward(grad, x, ...): an edge to x too);  "
               "d/dgrad = slope;  d/dx = 0", "formula": "d/dgrad (grad · slope) = slope",
    "__module__": __name__})
RreluWithNoiseBackwardBackward0.adjoint_node = RreluWithNoiseBackwardBackward0


def _non_positive(a):
    """Where the slopes are drawn: the elements x <= 0 (nan included), in C order."""
    return ~(np.ascontiguousarray(a).reshape(-1) > 0)


def _rrelu_slopes(n, lower, upper, np_dtype):
    """``n`` draws of PyTorch's ``uniform_real_distribution<double>(lower, upper)`` from the default generator,
    with the bounds first rounded to the input's type: 53 bits of a 64-bit word as u in [0, 1), then
    u·(upper - lower) + lower rounded twice (this kernel, unlike ``uniform_``'s, has no fused multiply-add),
    then rounded to the input's type."""
    lower, upper = float(np_dtype.type(lower)), float(np_dtype.type(upper))
    words = _random.default_generator._words64(n)
    u = (words & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
    return (u * (upper - lower) + lower).astype(np_dtype)


def _rrelu(input, lower, upper, training, node_cls):
    a = input._data
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    check_floating(a, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    if training:
        if a.dtype == np.float16:
            raise NotImplementedError(f'"rrelu_with_noise_out_cpu" not implemented for \'{scalar_name(a.dtype)}\'')
        # slope 1 for x > 0, a drawn slope for each other element, in C order
        negative = _non_positive(a)
        noise = np.ones(a.shape, dtype=a.dtype)
        noise.reshape(-1)[negative] = _rrelu_slopes(int(negative.sum()), lower, upper, a.dtype)
        out = wrap(a * noise)
    else:
        noise = np.empty(0, dtype=a.dtype)
        out = wrap(np.where(a > 0, a, a * ((lower + upper) / 2)))
    if wants_grad(input):
        saved = input if node_cls is RreluWithNoiseBackward0 else out
        record(node_cls, (input,), out, (saved, wrap(noise)), negative_slope=(lower + upper) / 2,
               use_noise=training and upper - lower > 1e-6)
    return out


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: x if x > 0 else a·x, with a drawn from U(lower, upper) for each element when
    ``training`` (from the default generator: with the same seed, the same slopes as PyTorch's), else
    a = (lower + upper) / 2."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    return _rrelu(input, lower, upper, training, RreluWithNoiseBackward0)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place ``rrelu``."""
    return inplace(input, lambda x: _rrelu(x, lower, upper, training, RreluWithNoiseBackward1))
