"""Normalizations beyond ``ops.nn.normalization``'s, composed as PyTorch composes them, so the recorded graph reads
the same: ``instance_norm`` (a batch norm over a reshaped input), ``local_response_norm`` (an average pool of x²
across channels) and ``rms_norm`` (``x * rsqrt(mean(x²) + eps)``)."""
import math

import numpy as np

from ...core import dtype as dt
from ...core import grad_mode
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ._common import add_scalar, scalar_name
from .normalization import batch_norm
from .padding import pad
from .pooling import avg_pool2d

__all__ = ["instance_norm", "local_response_norm", "rms_norm"]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample of ``(N, C, *)`` input over its spatial dims. PyTorch's
    composition: a batch norm of the input viewed as ``(1, N·C, *)``, with ``weight``/``bias`` and the running
    statistics repeated N times; the running statistics, if given, are updated with the mean over samples."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    n, c = input.shape[:2]
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is not None and stat.numel() != c:
            raise RuntimeError(f"{name} should contain {n * c} elements not {stat.numel() * n}")

    def repeated(t):
        return None if t is None else t.repeat(n)
    mean_n, var_n = repeated(running_mean), repeated(running_var)
    folded = input.contiguous().view(1, n * c, *input.shape[2:])
    out = batch_norm(folded, mean_n, var_n, repeated(weight), repeated(bias), use_input_stats, momentum, eps)
    with grad_mode.no_grad():
        for stat, updated in ((running_mean, mean_n), (running_var, var_n)):
            if stat is not None:
                stat.copy_(updated.view(n, c).mean(0))
    return out.view(input.shape)


class AvgPool3DBackward0(Node):
    """out[:, :, d] = mean(x[:, :, d : d + k]) (a (k, 1, 1) window, stride 1);  dx[d] = Σⱼ grad[d - j] / k"""
    formula = "∂mean/∂x = 1/k for each element of the window"

    def backward(self, ops, grad):
        k = self.kernel
        # grad padded by k - 1 zeros at both ends of the depth axis: input d receives windows d - k + 1 .. d
        padded = ops.constant_pad(grad, (0, 0, 0, 0, k - 1, k - 1))
        total = ops.narrow(padded, 2, k - 1, self.depth)
        for j in range(1, k):
            total = total + ops.narrow(padded, 2, k - 1 - j, self.depth)
        return (total / k,)


def _depth_avg_pool3d(input, k):
    """``avg_pool3d(input, (k, 1, 1), stride=1)`` of a 5-D input: the pool ``local_response_norm`` runs across
    channels, recorded under PyTorch's name (the general 3-D pooling is not part of gradiente)."""
    xa = input._data
    depth = xa.shape[2] - k + 1
    total = xa[:, :, :depth].copy()
    for j in range(1, k):
        total += xa[:, :, j:j + depth]
    result = wrap(total / np.asanyarray(k, dtype=xa.dtype))
    if wants_grad(input):
        record(AvgPool3DBackward0, (input,), result, kernel=k, depth=xa.shape[2])
    return result


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each element by ``(k + alpha·mean(x²))^beta``, the mean taken over ``size`` neighbouring channels
    (zero-padded at the ends). ``(N, C, *)`` input."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _depth_avg_pool3d(div, size).squeeze(1).view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x²) + eps) * weight``, the mean over the last ``len(normalized_shape)`` dims; ``eps``
    defaults to the machine epsilon of the input's dtype."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k > input.dim() or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    if dt.kind(input._data.dtype) != "f":
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{scalar_name(input._data.dtype)}'")
    if eps is None:
        eps = float(dt.finfo_of(input._data.dtype).eps)
    dims = tuple(range(input.dim() - k, input.dim()))
    # PyTorch's C++ composition adds eps in place to the mean (AddBackward1, a tensor plus a number)
    out = input.mul(add_scalar(input.pow(2).mean(dims, keepdim=True), eps).rsqrt())
    return out if weight is None else out.mul(weight)
