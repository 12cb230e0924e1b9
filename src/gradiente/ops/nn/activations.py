"""Activation functions: each a NumPy forward next to its backward node, named as PyTorch names it.

A node saves the input ``x`` (``...Backward0``) or, for the in-place forms that overwrite the input, the
result ``out`` (``...Backward1``), and keeps the function's parameters as attributes. Rules branch with
``ops.select`` on a boolean array computed from the saved values, so one rule serves first- and
higher-order derivatives. ``softsign``, ``tanhshrink`` and ``softmin`` are compositions of other ops, as
in PyTorch, and record no node of their own.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core import gelu_tanh_kernel, onednn_gelu, rounded_math, tensor
from ...core.c_expf import c_expf
from ...core.c_fdlibm import c_expm1f, c_log1pf, c_tanhf
from ...core.creation import is_dense, keep_layout
from ...core.erf import erf
from ...core.fused import fma
from ...core.node import Node, self_adjoint_jvp
from ...core.record import record, wants_grad, wrap
from ...core.rules import in_vector_blocks, one_plus_sleef_exp_of_minus, sigmoid_array, sigmoid_kernel_array
from ...core.vector_exp import sleef_exp, sleef_expm1, sleef_log1p, sleef_tanh
from .. import unary, views
from ..autocast import autocast_entry
from ._common import activation, check_floating, inplace, scalar_name

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_BETA = math.sqrt(2 / math.pi)
_GELU_KAPPA = 0.044715
_ONE_SIXTH_F32 = float(np.float32(1 / 6))     # PyTorch's hardsigmoid gradient uses 1.0f / 6.0f in any dtype


def _saved(node, ops):
    return node.saved(ops)[0]


class PiecewiseGradientBackward(Node):
    """Base of the nodes PyTorch records for the gradient of a piecewise-linear activation under create_graph
    (``hardtanh_backward`` ...): out = grad where ``keep``, else grad·``outside``, an op of (grad, x);
    dgrad = the same;  dx = 0 (flat wherever it has a derivative)"""
    formula = "d/dgrad (grad · slope(x)) = slope(x);  d/dx = 0"
    keep: np.ndarray
    outside: float

    def backward(self, ops, grad):
        x = _saved(self, ops)
        return piecewise_gradient(ops, type(self), grad, x, self.keep, self.outside), ops.zeros_like(x)


def piecewise_gradient(ops, node_cls, grad, x, keep, outside=0.0):
    """``grad`` where ``keep`` (a boolean array read off ``x``), ``grad * outside`` elsewhere. Under create_graph
    it is recorded as PyTorch's ``*_backward`` kernel is, a ``node_cls`` of (grad, x): its result requires grad
    wherever ``x`` does, even from a constant ``grad``, and the second derivative flows to ``grad`` alone."""
    if not ops.recording:
        return ops.mask(keep, grad) if outside == 0 else ops.select(keep, grad, grad * outside)
    g = grad._data
    out = wrap(np.where(keep, g, np.zeros((), g.dtype) if outside == 0 else g * outside))
    if wants_grad(grad, x):
        record(node_cls, (grad, x), out, (x,), keep=keep, outside=outside)
    return out


# --- relu, hardtanh, relu6, threshold ---------------------------------------------------------------------

def relu(input, inplace=False):
    """max(0, x) elementwise (``ReluBackward0``)."""
    return input.relu_() if inplace else unary.relu(input)


def relu_(input):
    """``relu`` in place: negative elements of ``input`` become 0; returns ``input``."""
    return input.relu_()


class HardtanhBackward0(Node):
    """out = clamp(x, min_val, max_val);  dx = grad where min_val < x < max_val, else 0"""
    formula = "d/dx hardtanh(x) = 1 inside (min_val, max_val), 0 outside"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        xa = ops.raw(x)
        # At a nan input PyTorch's own answer depends on the tensor's size (1 in its scalar loop, 0 in its
        # vectorized one); 0, the answer for all but the smallest tensors, is kept here.
        keep = (xa > self.min_val) & (xa < self.max_val)
        return (piecewise_gradient(ops, HardtanhBackwardBackward0, grad, x, keep),)

    jvp = self_adjoint_jvp


class HardtanhBackwardBackward0(PiecewiseGradientBackward):
    """hardtanh's gradient under create_graph: out = grad where min_val < x < max_val, else 0"""


class HardtanhBackward1(HardtanhBackward0):
    """The in-place form: the same rule applied to the saved result."""


def _hardtanh(input, min_val, max_val, node_cls, saves=None):
    if dt.kind(input._data.dtype) != "f":     # integers clamp, with no gradient to record
        return input.clamp(min_val, max_val)
    if saves is None:
        saves = "x" if node_cls is HardtanhBackward0 else "out"
    return activation(input, lambda a: np.clip(a, min_val, max_val, out=_empty_with_strides_of(a)), node_cls,
                      "hardtanh", saves, min_val=min_val, max_val=max_val)


def _empty_with_strides_of(a):
    """An array for hardtanh's result: PyTorch's kernel writes into ``empty_like(input)``, which keeps a dense
    input's strides exactly, a size-1 dim's included (which a later broadcast reads: seed 90622), where other
    activations' TensorIterator gives a contiguous input C strides. None (NumPy's choice) for any other input."""
    if a.ndim < 2 or not is_dense(a) or min(a.strides) < 0:
        return None
    return np.lib.stride_tricks.as_strided(np.empty(a.size, a.dtype), a.shape, a.strides)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (``HardtanhBackward0``)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return _hardtanh(input, min_val, max_val, HardtanhBackward0)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """``hardtanh`` in place: ``input`` clamped to [``min_val``, ``max_val``]; returns ``input``."""
    # PyTorch's rule reads the input as it was: it saves a copy (CloneBackward0, seen under create_graph)
    return inplace(input, lambda x: _hardtanh(x, min_val, max_val, HardtanhBackward0, saves=views.clone))


def relu6(input, inplace=False):
    """min(max(0, x), 6): ``hardtanh(x, 0, 6)``, recorded as ``HardtanhBackward0`` as in PyTorch."""
    return hardtanh(input, 0.0, 6.0, inplace)


class ThresholdBackward0(Node):
    """out = value if x <= threshold else x;  dx = 0 where x <= threshold, else grad (nan passes)"""
    formula = "d/dx threshold(x) = 1 if x > threshold else 0"

    def backward(self, ops, grad):
        return (ops.threshold_backward(grad, _saved(self, ops), self.threshold),)

    jvp = self_adjoint_jvp


class ThresholdBackward1(ThresholdBackward0):
    """The in-place form: the same rule on the input as it was (a replaced element gets no gradient even when
    ``value`` is above the threshold, as in PyTorch)."""


class ThresholdBackwardBackward0(Node):
    """out = grad where x > threshold, else 0: relu's and threshold's gradient, recorded under create_graph;
    dgrad = the same mask on the incoming gradient;  dx = 0 (the step is flat wherever it has a derivative)"""
    formula = "d/dgrad (grad · [x > threshold]) = [x > threshold];  d/dx = 0"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        return ops.threshold_backward(grad, x, self.threshold), ops.zeros_like(x)

    def jvp(self, ops, grad_t, x_t):
        return None if grad_t is None else ops.threshold_backward(grad_t, _saved(self, ops), self.threshold)


def threshold_backward(grad, x, threshold):
    """``grad`` where ``x`` > ``threshold`` (or is nan), 0 elsewhere (``ThresholdBackwardBackward0``): the gradient
    of ``relu`` and ``threshold`` as a differentiable op, for their second derivatives (PyTorch's
    ``threshold_backward``)."""
    zero = np.zeros((), grad._data.dtype)
    out = wrap(np.where(x._data <= threshold, zero, grad._data))
    if wants_grad(grad, x):
        record(ThresholdBackwardBackward0, (grad, x), out, (x,), threshold=threshold)
    return out


def _threshold(input, threshold, value, node_cls):
    def forward(a):
        return np.where(a <= threshold, np.asanyarray(value, dtype=a.dtype), a)     # nan stays nan
    if dt.kind(input._data.dtype) != "f":
        return tensor.Tensor._make(forward(input._data))
    return activation(input, forward, node_cls, "threshold", "x", threshold=threshold)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value (``ThresholdBackward0``)."""
    if inplace:
        return threshold_(input, threshold, value)
    return _threshold(input, threshold, value, ThresholdBackward0)


def threshold_(input, threshold, value):
    """``threshold`` in place: elements not greater than ``threshold`` become ``value``; returns ``input``."""
    return inplace(input, lambda x: _threshold(x, threshold, value, ThresholdBackward1))


# --- leaky_relu, elu, selu, celu --------------------------------------------------------------------------

class LeakyReluBackward0(Node):
    """out = x if x > 0 else slope·x;  dx = grad if x > 0 else slope·grad"""
    formula = "d/dx leaky_relu(x) = 1 if x > 0 else negative_slope"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        return (piecewise_gradient(ops, LeakyReluBackwardBackward0, grad, x, ops.raw(x) > 0, self.negative_slope),)

    jvp = self_adjoint_jvp


class LeakyReluBackwardBackward0(PiecewiseGradientBackward):
    """leaky_relu's gradient under create_graph: out = grad where x > 0, else negative_slope·grad"""


class LeakyReluBackward1(LeakyReluBackward0):
    """The in-place form: the sign is read from the saved result (the same as the input's for slope > 0)."""

    def backward(self, ops, grad):
        if self.negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                "supported. This is caused by calling in-place forward function with a negative slope, please "
                "call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you "
                "do require supporting in-place leakRelu backward calculation with negative slope")
        return LeakyReluBackward0.backward(self, ops, grad)


def _leaky_relu(input, negative_slope, node_cls):
    return activation(input, lambda a: np.where(a > 0, a, a * negative_slope), node_cls, "leaky_relu_cpu",
                      "x" if node_cls is LeakyReluBackward0 else "out", negative_slope=negative_slope)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope·x (``LeakyReluBackward0``)."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _leaky_relu(input, negative_slope, LeakyReluBackward0)


def leaky_relu_(input, negative_slope=0.01):
    """``leaky_relu`` in place: negative elements are multiplied by ``negative_slope``; returns ``input``."""
    return inplace(input, lambda x: _leaky_relu(x, negative_slope, LeakyReluBackward1))


class EluBackward0(Node):
    """out = scale·x if x > 0 else alpha·scale·(e^(input_scale·x) - 1);
    dx = grad·scale if x > 0 else grad·alpha·scale·input_scale·e^(input_scale·x)"""
    formula = "d/dx elu(x) = 1 if x > 0 else α·eˣ"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        if not ops.recording and x.dtype == np.float32 and grad.dtype == np.float32:
            return (_elu_backward_as_kernel(grad, x, self.alpha, self.scale, self.input_scale),)
        negative = ops.raw(x) <= 0
        negcoef, poscoef, negiptcoef = self.alpha * self.scale, self.scale, self.input_scale
        # exp only of the non-positive inputs: the other branch would overflow (and poison derivatives).
        return (ops.select(negative, grad * (negiptcoef * negcoef) * ops.exp(ops.mask(negative, x) * negiptcoef),
                           grad * poscoef),)

    jvp = self_adjoint_jvp


class EluBackward1(Node):
    """The in-place form, from the saved result:
    dx = grad·scale if out > 0 else grad·input_scale·(out + alpha·scale)"""
    formula = "d/dx elu(x) = 1 if x > 0 else elu(x) + α"

    def backward(self, ops, grad):
        out = _saved(self, ops)
        negcoef, poscoef, negiptcoef = _elu_coefficients(ops.raw(out).dtype, self.alpha, self.scale,
                                                         self.input_scale)
        return (ops.select(ops.raw(out) <= 0, grad * negiptcoef * (out + negcoef), grad * poscoef),)

    jvp = self_adjoint_jvp


class CeluBackward0(EluBackward0):
    """celu(x) = elu with input_scale = 1/alpha; the same rule"""


class CeluBackward1(EluBackward1):
    """The in-place celu; the same rule as EluBackward1"""


def _elu_coefficients(dtype, alpha, scale, input_scale):
    """``(negcoef, poscoef, negiptcoef)`` as PyTorch's ELU kernels take them: each number in the tensor's dtype,
    ``negcoef`` their product there (a float32 product for float32, not the double one rounded)."""
    kind = np.dtype(dtype).type if dt.kind(dtype) == "f" else np.float64
    return kind(alpha) * kind(scale), kind(scale), kind(input_scale)


# ELU's float32 kernels take e^x − 1 (forward) and e^x (backward) from Sleef on the vectors of PyTorch's loop and
# from the C library on each run's last elements (``in_vector_blocks``); the products are the kernels', in order.

def _elu_as_kernel(a, alpha, scale, input_scale):
    negcoef, poscoef, negiptcoef = _elu_coefficients(a.dtype, alpha, scale, input_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        expm1 = in_vector_blocks(a * negiptcoef, sleef_expm1, c_expm1f)
        return np.where(a <= 0, expm1 * negcoef, a * poscoef)


def _elu_backward_as_kernel(grad, x, alpha, scale, input_scale):
    negcoef, poscoef, negiptcoef = _elu_coefficients(x.dtype, alpha, scale, input_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        exp = in_vector_blocks(x * negiptcoef, sleef_exp, c_expf)
        return np.where(x <= 0, grad * negiptcoef * negcoef * exp, grad * poscoef)


def _elu(input, alpha, scale, input_scale, node_cls, grad_input_scale=None):
    def forward(a):
        if a.dtype == np.float32:
            return _elu_as_kernel(a, alpha, scale, input_scale)
        return np.where(a <= 0, np.expm1(np.minimum(a, 0) * input_scale) * (alpha * scale), a * scale)
    return activation(input, forward, node_cls, "elu_cpu", "out" if node_cls in (EluBackward1, CeluBackward1)
                      else "x", alpha=alpha, scale=scale,
                      input_scale=input_scale if grad_input_scale is None else grad_input_scale)


def elu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha·(eˣ - 1) (``EluBackward0``)."""
    if inplace:
        return elu_(input, alpha)
    return _elu(input, alpha, 1.0, 1.0, EluBackward0)


def elu_(input, alpha=1.0):
    """``elu`` in place: negative x becomes alpha·(eˣ − 1); returns ``input``."""
    return inplace(input, lambda x: _elu(x, alpha, 1.0, 1.0, EluBackward1))


def selu(input, inplace=False):
    """scale·elu(x, alpha) with PyTorch's fixed alpha ≈ 1.6733 and scale ≈ 1.0507 (``EluBackward0``)."""
    if inplace:
        return selu_(input)
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward0)


def selu_(input):
    """``selu`` in place: scale·x for positive x, scale·alpha·(eˣ − 1) otherwise, with SELU's fixed constants;
    returns ``input``."""
    return inplace(input, lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward1))


def _celu(input, alpha, node_cls):
    # PyTorch's forward divides by alpha in double, its derivative by alpha rounded to float32.
    return _elu(input, alpha, 1.0, 1.0 / alpha, node_cls, grad_input_scale=1.0 / float(np.float32(alpha)))


def celu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha·(e^(x/alpha) - 1) (``CeluBackward0``)."""
    if inplace:
        return celu_(input, alpha)
    return _celu(input, alpha, CeluBackward0)


def celu_(input, alpha=1.0):
    """``celu`` in place: negative x becomes alpha·(e^(x/alpha) − 1); returns ``input``."""
    return inplace(input, lambda x: _celu(x, alpha, CeluBackward1))


# --- gelu, silu, mish, softplus, logsigmoid ---------------------------------------------------------------

class GeluBackward0(Node):
    """out = x·Φ(x) (Φ the normal CDF; with approximate='tanh', Φ(x) ≈ (1 + tanh(√(2/π)(x + 0.044715x³)))/2);
    dx = grad·(Φ(x) + x·φ(x))"""
    formula = "d/dx x·Φ(x) = Φ(x) + x·φ(x)"
    cdf = None      # Φ(x) as the exact forward computed it (arrays only): erf is its costliest step, done once

    def backward(self, ops, grad):
        x = _saved(self, ops)
        if self.approximate == "tanh":
            if not ops.recording and gelu_tanh_kernel.applies(x, grad):
                return (gelu_tanh_kernel.gelu_tanh_derivative_times(grad, x),)
            inner = (x + x * x * x * _GELU_KAPPA) * _GELU_BETA
            t = ops.tanh(inner)
            left_derivative = (t + 1) * 0.5
            right_derivative = x * 0.5 * (1 - t * t) * (_GELU_BETA * (1 + x * x * (3 * _GELU_KAPPA)))
            return (grad * (left_derivative + right_derivative),)
        if not ops.recording and _in_onednn(x) and grad.dtype == np.float32:
            return (grad * onednn_gelu.gelu_derivative(x),)
        # Under create_graph Φ must be recomputed from x, as a recorded tensor; the saved array has the same values
        cdf = self.cdf if not ops.recording and self.cdf is not None else (ops.erf(x * _SQRT1_2) + 1) * 0.5
        if not ops.recording and x.dtype in _BLAS_FLOATS and grad.dtype == x.dtype == cdf.dtype:
            return (_gelu_derivative_times(grad, x, cdf),)
        pdf = ops.exp(x * x * -0.5) * _INV_SQRT_2PI
        return (grad * (cdf + x * pdf),)

    jvp = self_adjoint_jvp


_BLAS_FLOATS = (np.float32, np.float64)


def _gelu_derivative_times(grad, x, cdf):
    """grad·(Φ(x) + x·φ(x)) on arrays of one dtype, rounded step by step as the rule's expression, in one fresh
    array (a fresh array per step cost a fifth of gelu's time)."""
    out = np.multiply(x, x, out=np.empty_like(x))      # (out=: a 0-d product would be a NumPy scalar, not an array)
    out *= -0.5
    out[...] = rounded_math.exp(out)                    # (the exponential the recorded rule's exp op takes)
    out *= _INV_SQRT_2PI
    out *= x
    out += cdf
    out *= grad
    return out


def _gelu_tanh(a):
    if gelu_tanh_kernel.applies(a):
        return gelu_tanh_kernel.gelu_tanh(a)
    return a * 0.5 * (1 + np.tanh((a + a * a * a * _GELU_KAPPA) * _GELU_BETA))


def _in_onednn(a):
    """Whether PyTorch computes the exact GELU of this array (and its backward) with oneDNN's kernels: a contiguous
    float32 array of two or more elements (``core/onednn_gelu.py``)."""
    return a.dtype == np.float32 and a.size > 1 and a.flags.c_contiguous


def gelu(input, approximate="none"):
    """x·Φ(x), Φ the standard normal CDF, exact (erf) or with ``approximate='tanh'`` (``GeluBackward0``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if approximate == "tanh":
        return activation(input, _gelu_tanh, GeluBackward0, "GeluKernelImpl", approximate=approximate)
    a = input._data
    check_floating(a, "GeluKernelImpl")
    if _in_onednn(a):
        out = wrap(keep_layout(onednn_gelu.gelu(a), a))
        if wants_grad(input):
            record(GeluBackward0, (input,), out, (input,), approximate=approximate)
        return out
    one_plus_erf = erf(a * _SQRT1_2)
    one_plus_erf += 1                   # erf's result is a fresh array: 1 + erf in its memory
    product = a * 0.5
    if product.dtype == one_plus_erf.dtype:
        product *= one_plus_erf
    else:
        product = product * one_plus_erf
    out = wrap(keep_layout(np.asanyarray(product, dtype=a.dtype), a))
    if wants_grad(input):
        # (1 + erf)·0.5 is what the rule computed from x before: the same operations, so the same bits
        one_plus_erf *= 0.5
        record(GeluBackward0, (input,), out, (input,), approximate=approximate,
               cdf=np.asanyarray(one_plus_erf, dtype=a.dtype))
    return out


class SiluBackward0(Node):
    """out = x·σ(x);  dx = grad·σ(x)·(1 + x·(1 - σ(x)))"""
    formula = "d/dx x·σ(x) = σ(x)·(1 + x·(1 - σ(x)))"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        if not ops.recording and x.dtype in (np.float32, np.float64):
            # PyTorch's silu_backward kernel (GCC fuses 1 + x·(1 - σ) into one multiply-add); under create_graph
            # PyTorch composes the same formula of recorded ops, as below
            s = sigmoid_kernel_array(x)
            return (grad * s * fma(x, 1 - s, x.dtype.type(1), x.dtype),)
        s = ops.sigmoid(x)
        return (grad * s * (x * (1 - s) + 1),)

    jvp = self_adjoint_jvp


def silu(input, inplace=False):
    """x·σ(x), also called swish (``SiluBackward0``)."""
    if inplace:
        return _inplace_call(input, silu)
    return activation(input, _silu_array, SiluBackward0, "silu_cpu")


def _silu_array(a):
    """x / (1 + e^-x), one division as PyTorch's kernel (x·σ(x) would round twice): on float32 blocks of 32 with
    Sleef's e^-x, as PyTorch's vector code; elsewhere ``_silu_scalar`` (``in_vector_blocks``)."""
    return in_vector_blocks(a, lambda x: x / one_plus_sleef_exp_of_minus(x), _silu_scalar)


def _silu_scalar(a):
    """x / (1 + e^-x) as PyTorch's scalar code: a float32 e^-x is the C library's ``expf`` (``c_expf``; NumPy's
    float32 exp is off by an ulp in a few percent of values, which a later rounding-sensitive step amplifies: seed
    2789, layer norm over one element)."""
    e = c_expf(-a) if a.dtype == np.float32 else np.exp(-a)
    return a / (1 + e)


class MishBackward0(Node):
    """out = x·tanh(softplus(x));  dx = grad·(tanh(sp) + x·σ(x)·(1 - tanh²(sp)))"""
    formula = "d/dx x·tanh(softplus(x)) = tanh(sp(x)) + x·σ(x)·(1 - tanh²(sp(x)))"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        if not ops.recording and x.dtype == np.float32 and grad.dtype == np.float32:
            return (_mish_backward_as_kernel(grad, x),)
        # softplus as PyTorch's kernel and its infinitely_differentiable_mish_backward compute it, log1p(eˣ):
        # it overflows to inf for x > ~89 (float32) or ~710 (float64), where the value is still right (tanh(inf)
        # is 1) but the second derivative, through eˣ, is nan, as PyTorch's (seed 61020)
        t = ops.tanh(ops.log1p(ops.exp(x)))
        return (grad * (t + x * ops.sigmoid(x) * (1 - t * t)),)

    jvp = self_adjoint_jvp


def mish(input, inplace=False):
    """x·tanh(softplus(x)) (``MishBackward0``)."""
    if inplace:
        return _inplace_call(input, mish)
    return activation(input, _mish_forward, MishBackward0, "mish_cpu")


# Mish's and softplus's float32 kernels: on the vectors of PyTorch's loop Sleef's exp, log1p and tanh, on each run's
# last elements the C library's (``in_vector_blocks``); the multiply-adds GCC fuses, fused.

def _tanh_softplus(x):
    """tanh(log1p(eˣ)) as PyTorch's Mish kernels take it."""
    return in_vector_blocks(x, lambda v: sleef_tanh(sleef_log1p(sleef_exp(v))),
                            lambda v: c_tanhf(c_log1pf(c_expf(v))))


def _mish_forward(a):
    if a.dtype != np.float32:
        return a * np.tanh(np.logaddexp(0, a))
    with np.errstate(over="ignore", invalid="ignore"):
        return a * _tanh_softplus(a)


def _mish_backward_as_kernel(grad, x):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sigmoid = np.float32(1) / (np.float32(1) + in_vector_blocks(-x, sleef_exp, c_expf))
        t = _tanh_softplus(x)
        return grad * fma(x * sigmoid, fma(-t, t, np.float32(1), np.float32), t, np.float32)


def _softplus_as_kernel(a, beta, threshold):
    beta, threshold = np.float32(beta), np.float32(threshold)
    scaled = a * beta
    with np.errstate(over="ignore", invalid="ignore"):
        soft = in_vector_blocks(scaled, lambda v: sleef_log1p(sleef_exp(v)), lambda v: c_log1pf(c_expf(v))) / beta
    return np.where(scaled > threshold, a, soft)


def _softplus_backward_as_kernel(grad, x, beta, threshold):
    beta, threshold = np.float32(beta), np.float32(threshold)
    scaled = x * beta
    with np.errstate(over="ignore", invalid="ignore"):
        z = in_vector_blocks(scaled, sleef_exp, c_expf)
        return np.where(scaled > threshold, grad, grad * z / (z + np.float32(1)))


class SoftplusBackward0(Node):
    """out = log(1 + e^(βx))/β, or x where βx > threshold;  dx = grad·σ(βx), or grad where βx > threshold"""
    formula = "d/dx log(1 + e^(βx))/β = σ(βx)"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        if not ops.recording and x.dtype == np.float32 and grad.dtype == np.float32:
            return (_softplus_backward_as_kernel(grad, x, self.beta, self.threshold),)
        return (ops.select(ops.raw(x) * self.beta > self.threshold, grad, grad * ops.sigmoid(x * self.beta)),)

    jvp = self_adjoint_jvp


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + e^(βx))/β, linear (x) where βx > threshold for numerical stability (``SoftplusBackward0``)."""
    def forward(a):
        if a.dtype == np.float32:
            return _softplus_as_kernel(a, beta, threshold)
        scaled = a * beta
        return np.where(scaled > threshold, a, np.log1p(np.exp(scaled)) / beta)
    return activation(input, forward, SoftplusBackward0, "softplus_cpu", beta=beta, threshold=threshold)


class LogSigmoidBackward0(Node):
    """out = log σ(x);  dx = grad·σ(-x)"""
    formula = "d/dx log σ(x) = 1 - σ(x)"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        if not ops.recording and x.dtype == np.float32:
            # PyTorch's kernel: with b = e^-|x| (Sleef's, as the forward), (x < 0 ? 1 - b/(1 + b) : b/(1 + b))·grad
            b = sleef_exp(-np.abs(x))
            q = b / (np.float32(1) + b)
            return (np.where(x < 0, np.float32(1) - q, q) * grad,)
        return (grad * ops.sigmoid(-x),)

    jvp = self_adjoint_jvp


def log_sigmoid_array(a):
    """min(x, 0) - log(1 + e^(-|x|)); in float32 with Sleef's exp and log1p, as PyTorch's vector code takes every
    element (its loop's tail too)."""
    if a.dtype == np.float32:
        return np.minimum(a, np.float32(0)) - sleef_log1p(sleef_exp(-np.abs(a)))
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


def logsigmoid(input):
    """log σ(x), computed as min(x, 0) - log(1 + e^(-|x|)) (``LogSigmoidBackward0``)."""
    return activation(input, log_sigmoid_array, LogSigmoidBackward0, "log_sigmoid_cpu", contiguous=True)


# --- hardsigmoid, hardswish -------------------------------------------------------------------------------

class HardsigmoidBackward0(Node):
    """out = clamp(x/6 + 1/2, 0, 1);  dx = grad/6 where -3 < x < 3, else 0"""
    formula = "d/dx hardsigmoid(x) = 1/6 on (-3, 3), 0 outside"

    def backward(self, ops, grad):
        x = ops.raw(_saved(self, ops))
        return (ops.mask((x > -3) & (x < 3), grad * _ONE_SIXTH_F32),)

    jvp = self_adjoint_jvp


def hardsigmoid(input, inplace=False):
    """min(max(x + 3, 0), 6)/6 (``HardsigmoidBackward0``)."""
    if inplace:
        return _inplace_call(input, hardsigmoid)
    return activation(input, lambda a: np.minimum(np.maximum(a + 3, 0), 6) / 6, HardsigmoidBackward0,
                      "hardsigmoid_cpu")


class HardswishBackward0(Node):
    """out = x·hardsigmoid(x);  dx = 0 for x ≤ -3, grad for x ≥ 3, grad·(x/3 + 1/2) otherwise"""
    formula = "d/dx hardswish(x) = 0, x/3 + 1/2, or 1"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        xa = ops.raw(x)
        # PyTorch's (vectorized) kernel: 0 up to -3 included, grad from 3 included, the slope between (nan at nan).
        # The slope's grad is masked before the product, so that its derivative by x (PyTorch's
        # where(-3 < x < 3, grad·v/3, 0)) is 0 outside, where grad may be nan (seed 80100)
        slope = ~(xa <= -3) & ~(xa >= 3)
        return (ops.mask(~(xa <= -3), ops.select(xa >= 3, grad, ops.mask(slope, grad) * (x / 3 + 0.5))),)

    jvp = self_adjoint_jvp


def hardswish(input, inplace=False):
    """x·min(max(x + 3, 0), 6)/6 (``HardswishBackward0``)."""
    if inplace:
        return _inplace_call(input, hardswish)
    return activation(input, lambda a: a * np.minimum(np.maximum(a + 3, 0), 6) / 6, HardswishBackward0,
                      "hardswish_cpu")


def _inplace_call(input, fn):
    # PyTorch's in-place silu/mish/hardsigmoid/hardswish record the same node as the out-of-place form.
    return inplace(input, fn)


# --- shrinkage, glu, prelu --------------------------------------------------------------------------------

class SoftshrinkBackward0(Node):
    """out = x - λ for x > λ, x + λ for x < -λ, else 0;  dx = grad outside [-λ, λ], else 0 (nan: see hardtanh)"""
    formula = "d/dx softshrink(x) = 1 outside [-λ, λ], 0 inside"

    gradient_node = None    # set below: the node of this gradient under create_graph

    def backward(self, ops, grad):
        x = _saved(self, ops)
        xa = ops.raw(x)
        return (piecewise_gradient(ops, self.gradient_node, grad, x, (xa < -self.lambd) | (xa > self.lambd)),)

    jvp = self_adjoint_jvp


class HardshrinkBackward0(SoftshrinkBackward0):
    """out = x outside [-λ, λ], else 0;  dx = grad outside [-λ, λ], else 0"""
    formula = "d/dx hardshrink(x) = 1 outside [-λ, λ], 0 inside"


class SoftshrinkBackwardBackward0(PiecewiseGradientBackward):
    """softshrink's gradient under create_graph: out = grad outside [-λ, λ], else 0"""


class HardshrinkBackwardBackward0(PiecewiseGradientBackward):
    """hardshrink's gradient under create_graph: out = grad outside [-λ, λ], else 0"""


SoftshrinkBackward0.gradient_node = SoftshrinkBackwardBackward0
HardshrinkBackward0.gradient_node = HardshrinkBackwardBackward0


def softshrink(input, lambd=0.5):
    """x shrunk towards 0 by λ, and 0 inside [-λ, λ] (``SoftshrinkBackward0``)."""
    a = input._data
    if dt.kind(a.dtype) == "f" and not 0 <= lambd <= dt.finfo_of(a.dtype).max:
        raise RuntimeError(f"lambda must be in range [0, {float(dt.finfo_of(a.dtype).max):g}] for input dtype "
                           f"{scalar_name(a.dtype)}, but found {lambd:g}")
    scalar = scalar_loop_elements(a)

    def forward(x):
        # PyTorch's vectorized kernel computes x minus x clamped to [-λ, λ] (+0.0 inside), its scalar loop
        # x * 0 inside (-0.0 for a negative x): each element as the loop that reaches it computes it
        vectorized = x - np.clip(x, -lambd, lambd)
        if not scalar.any():
            return vectorized
        inside = (x >= -lambd) & (x <= lambd)
        return np.where(scalar & inside, x * 0, vectorized)
    return activation(input, forward, SoftshrinkBackward0, "softshrink_cpu", lambd=lambd)


def scalar_loop_elements(a):
    """Which elements of ``a`` PyTorch's CPU elementwise kernels compute in their scalar loop rather than their
    vectorized one (where the two differ in a last detail, such as the sign of a zero). The kernels step through
    adjacent elements two 256-bit vectors at a time; what is left at the end of each run of adjacent elements,
    and every element of a run that is not adjacent, goes through the scalar loop. A dense tensor is one run,
    in memory order."""
    block = 64 // a.itemsize
    if a.size == 0:
        return np.zeros(a.shape, bool)
    steps = [(n, st // a.itemsize) for n, st in zip(a.shape, a.strides)]
    if is_dense(a):
        offsets = np.zeros(a.shape, np.int64)
        for d, (n, step) in enumerate(steps):
            offsets = offsets + (np.arange(n) * step).reshape((n,) + (1,) * (a.ndim - d - 1))
        return offsets - offsets.min() >= a.size // block * block
    fastest = min((d for d, (n, _) in enumerate(steps) if n > 1), key=lambda d: abs(steps[d][1]))
    n, step = steps[fastest]
    if abs(step) != 1:
        return np.ones(a.shape, bool)
    position = np.arange(n).reshape((n,) + (1,) * (a.ndim - fastest - 1))
    return np.broadcast_to(position >= n // block * block, a.shape)


def hardshrink(input, lambd=0.5):
    """x outside [-λ, λ], 0 inside (``HardshrinkBackward0``)."""
    return activation(input, lambda a: np.where((a >= -lambd) & (a <= lambd), 0, a), HardshrinkBackward0,
                      "hardshrink_cpu", lambd=lambd)


class GluBackward0(Node):
    """out = a·σ(b), (a, b) the halves of x along dim;  da = grad·σ(b);  db = grad·a·σ(b)(1 - σ(b))"""
    formula = "∂(a·σ(b))/∂a = σ(b),  ∂(a·σ(b))/∂b = a·σ(b)(1 - σ(b))"

    def backward(self, ops, grad):
        x = _saved(self, ops)
        half = ops.raw(x).shape[self.dim] // 2
        a, b = ops.narrow(x, self.dim, 0, half), ops.narrow(x, self.dim, half, half)
        s = ops.sigmoid(b)
        da = grad * s
        return (ops.cat([da, da * a * (1 - s)], self.dim),)


def glu(input, dim=-1):
    """The gated linear unit a·σ(b), where a and b are the two halves of ``input`` along ``dim``."""
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = dim + a.ndim if dim < 0 else dim
    if a.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {a.shape[dim]}")

    def forward(x):
        first, second = np.split(x, 2, axis=dim)
        return first * sigmoid_array(second)
    return activation(input, forward, GluBackward0, "glu_cpu", dim=dim)


class PreluKernelBackward0(Node):
    """out = x if x > 0 else w·x;  dx = grad if x > 0 else w·grad;  dw = 0 if x > 0 else x·grad"""
    formula = "∂prelu/∂x = 1 or w,  ∂prelu/∂w = 0 or x"

    def backward(self, ops, grad):
        x, weight = self.saved(ops)
        positive = ops.raw(x) > 0
        edges = self.next_functions
        zero = ops.zeros((), grad)
        return (ops.select(positive, grad, grad * weight) if edges[0][0] is not None else None,
                ops.select(positive, zero, grad * x) if edges[1][0] is not None else None)


@autocast_entry
def prelu(input, weight):
    """x if x > 0 else w·x, with one learnable w, or one per channel (dim 1) (``PreluKernelBackward0``)."""
    ndim, count = input.dim(), weight.numel()
    if count != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if ndim > 1 else 1
        if channels != count:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{count} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if ndim != weight.dim():
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = count
        weight = weight.reshape(shape)
    x, w = input._data, weight._data
    check_floating(x, "prelu_cpu")
    out = wrap(np.asanyarray(np.where(x > 0, x, w * x), dtype=x.dtype))
    if wants_grad(input, weight):
        record(PreluKernelBackward0, (input, weight), out, (input, weight))
    return out


# --- compositions -----------------------------------------------------------------------------------------

def softsign(input):
    """x / (1 + |x|), composed (``DivBackward0`` over ``AddBackward0`` over ``AbsBackward0``), as in PyTorch."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x), composed, as in PyTorch."""
    return input - input.tanh()


def sigmoid(input):
    """σ(x) = 1/(1 + e^(-x)) (``SigmoidBackward0``)."""
    return input.sigmoid()


def tanh(input):
    """tanh(x) (``TanhBackward0``)."""
    return input.tanh()
