"""Normalization (``layer_norm``, ``batch_norm``, ``group_norm``), forward and backward on NumPy arrays.

Each is one node whose rule is the closed-form gradient of ``y = (x - mean) * rstd * weight + bias`` with
the statistics taken over the normalized axes (``xhat = (x - mean) * rstd``)::

    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),   dxhat = grad * weight

As with convolution, the rules compute on arrays only: a double backward through them raises.
"""
import numpy as np

from ...core import grad_mode
from ...core.node import Node
from ...core.record import record, wants_grad
from ...core.tensor import Tensor
from ._array_rules import arrays_only

__all__ = ["layer_norm", "batch_norm", "group_norm"]

def _dx(dxhat, xhat, rstd, axes):
    """The input gradient of ``xhat = (x - mean) * rstd`` (statistics over ``axes``) given ``dxhat``."""
    mean_dxhat = dxhat.mean(axis=axes, keepdims=True)
    return rstd * (dxhat - mean_dxhat - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True))


def _normalized_grads(node, ops, grad, stat_axes, affine_axes):
    """``(dx, dweight, dbias)`` for ``y = xhat * weight + bias`` with xhat normalized over ``stat_axes``."""
    edges = node.next_functions
    dx = dw = db = None
    if edges[0][0] is not None:
        dxhat = grad
        if node.has_weight:
            (weight,) = node.saved(ops)
            dxhat = grad * weight.reshape(node.affine_shape)
        dx = _dx(dxhat, node.xhat, node.rstd, stat_axes)
    if len(edges) > 1 and edges[1][0] is not None:
        dw = (grad * node.xhat).sum(axis=affine_axes).reshape(node.weight_shape)
    if len(edges) > 2 and edges[2][0] is not None:
        db = grad.sum(axis=affine_axes).reshape(node.weight_shape)
    return dx, dw, db


def _affine(xhat, weight, bias, shape):
    out = xhat
    if weight is not None:
        out = out * weight._data.reshape(shape)
    if bias is not None:
        out = out + bias._data.reshape(shape)
    return out


# --- layer norm ----------------------------------------------------------------------------------------

class NativeLayerNormBackward0(Node):
    """y = xhat * w + b, xhat over the last dims;  dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat))"""
    formula = "layer norm: dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)),  dw = Σ grad·x̂,  db = Σ grad"

    def backward(self, ops, grad):
        arrays_only(ops, "layer_norm")
        return _normalized_grads(self, ops, grad, self.stat_axes, self.batch_axes)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dims to zero mean and unit (biased) variance, then
    scale by ``weight`` and shift by ``bias`` (both of shape ``normalized_shape``)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    xa = input._data
    k = len(normalized_shape)
    if xa.shape[xa.ndim - k:] != normalized_shape or k > xa.ndim:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(xa.shape)}")
    stat_axes = tuple(range(xa.ndim - k, xa.ndim))
    mean = xa.mean(axis=stat_axes, keepdims=True)
    centered = xa - mean
    var = np.square(centered).mean(axis=stat_axes, keepdims=True)
    rstd = (1.0 / np.sqrt(var + eps)).astype(xa.dtype)
    xhat = centered * rstd
    affine_shape = (1,) * (xa.ndim - k) + normalized_shape
    result = Tensor._make(_affine(xhat, weight, bias, affine_shape))
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        record(NativeLayerNormBackward0, inputs, result, saved=(weight,) if weight is not None else (),
               xhat=xhat, rstd=rstd, stat_axes=stat_axes, batch_axes=tuple(range(xa.ndim - k)),
               affine_shape=affine_shape, weight_shape=normalized_shape, has_weight=weight is not None)
    return result


# --- batch norm ----------------------------------------------------------------------------------------

class NativeBatchNormBackward0(Node):
    """y = xhat * w + b, xhat per channel;  training: dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat)),
    eval: dx = rstd·dxhat"""
    formula = "batch norm: dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) over the batch,  dw = Σ grad·x̂,  db = Σ grad"

    def backward(self, ops, grad):
        arrays_only(ops, "batch_norm")
        if self.training:
            return _normalized_grads(self, ops, grad, self.axes, self.axes)
        dx = dw = db = None
        edges = self.next_functions
        if edges[0][0] is not None:
            dx = grad * self.rstd
            if self.has_weight:
                (weight,) = self.saved(ops)
                dx = dx * weight.reshape(self.affine_shape)
        if edges[1][0] is not None:
            dw = (grad * self.xhat).sum(axis=self.axes)
        if edges[2][0] is not None:
            db = grad.sum(axis=self.axes)
        return dx, dw, db


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) of ``(N, C, *)`` input. In training, with the batch's mean and biased
    variance, and update ``running_mean``/``running_var`` in place (``running = (1 - momentum) * running +
    momentum * batch``, unbiased variance); otherwise with the running statistics."""
    xa = input._data
    if xa.ndim < 2:
        raise ValueError(f"Expected 2D or more input (got {xa.ndim}D input)")
    axes = (0,) + tuple(range(2, xa.ndim))
    shape = (1, xa.shape[1]) + (1,) * (xa.ndim - 2)
    count = xa.size // xa.shape[1]
    if training:
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        # statistics accumulated in float64, as PyTorch's CPU kernel does
        wide = xa.astype(np.float64)
        mean = wide.mean(axis=axes)
        var = np.square(wide - mean.reshape(shape)).mean(axis=axes)
        if running_mean is not None:
            with grad_mode.no_grad():
                _update_running(running_mean, mean, momentum)
                _update_running(running_var, var * count / (count - 1), momentum)
    else:
        mean = running_mean._data.astype(np.float64)
        var = running_var._data.astype(np.float64)
    rstd = (1.0 / np.sqrt(var + eps)).astype(xa.dtype).reshape(shape)
    xhat = (xa - mean.astype(xa.dtype).reshape(shape)) * rstd
    result = Tensor._make(_affine(xhat, weight, bias, shape))
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        record(NativeBatchNormBackward0, inputs, result, saved=(weight,) if weight is not None else (),
               xhat=xhat, rstd=rstd, axes=axes, affine_shape=shape, weight_shape=(xa.shape[1],),
               has_weight=weight is not None, training=bool(training))
    return result


def _update_running(buffer, batch_value, momentum):
    data = buffer._data
    data[...] = (momentum * batch_value + (1 - momentum) * data.astype(np.float64)).astype(data.dtype)
    buffer._bump_version()


# --- group norm ----------------------------------------------------------------------------------------

class NativeGroupNormBackward0(Node):
    """y = xhat * w + b, xhat per (sample, group);  dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat·xhat))"""
    formula = "group norm: dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) per group"

    def backward(self, ops, grad):
        arrays_only(ops, "group_norm")
        grouped = grad.reshape(self.grouped_shape)
        dx = dw = db = None
        edges = self.next_functions
        if edges[0][0] is not None:
            dxhat = grad
            if self.has_weight:
                (weight,) = self.saved(ops)
                dxhat = grad * weight.reshape(self.affine_shape)
            dxhat = dxhat.reshape(self.grouped_shape)
            dx = _dx(dxhat, self.xhat, self.rstd, 2).reshape(grad.shape)
        axes = (0,) + tuple(range(2, grad.ndim))
        if edges[1][0] is not None:
            dw = (grouped * self.xhat).reshape(grad.shape).sum(axis=axes)
        if edges[2][0] is not None:
            db = grad.sum(axis=axes)
        return dx, dw, db


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of ``C / num_groups`` channels of each sample of ``(N, C, *)`` input, then apply
    the per-channel ``weight`` and ``bias``."""
    xa = input._data
    n, c = xa.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    grouped = xa.reshape(n, num_groups, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    centered = grouped - mean
    rstd = (1.0 / np.sqrt(np.square(centered).mean(axis=2, keepdims=True) + eps)).astype(xa.dtype)
    xhat = centered * rstd
    shape = (1, c) + (1,) * (xa.ndim - 2)
    result = Tensor._make(_affine(xhat.reshape(xa.shape), weight, bias, shape))
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        record(NativeGroupNormBackward0, inputs, result, saved=(weight,) if weight is not None else (),
               xhat=xhat, rstd=rstd, grouped_shape=grouped.shape, affine_shape=shape,
               has_weight=weight is not None)
    return result
