"""Max pooling beyond ``convolution``'s ``max_pool1d/2d``: adaptive max pooling (``adaptive_max_pool1d/2d`` and their
``_with_indices`` forms) and its partial inverse, max unpooling (``max_unpool1d/2d``). Each records PyTorch's
node (``AdaptiveMaxPool2DBackward0``, ``MaxUnpool2DBackward0``); the 1-D forms run the 2-D ones over a unit
axis, as PyTorch records them."""
import math

import numpy as np

from ...core import dtype as dt
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ..autocast import autocast_entry
from ._common import scalar_name, shape_text
from .convolution import _tuple
from .pooling import _as_height_one, _MaxPoolMap, _pool_pair, _window_argmax

__all__ = [
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
]


# --- adaptive max pooling -----------------------------------------------------------------------------------

# max pooling's rule: dx[argmax] += grad, and under create_graph its gather
AdaptiveMaxPool2DBackward0, AdaptiveMaxPool2DBackwardBackward0 = _pool_pair(
    "AdaptiveMaxPool2D", "∂max/∂x = 1 at the adaptive window's maximum, 0 elsewhere")


def _adaptive_taps(size, out):
    """``(out, k)`` input positions of each adaptive window along one axis, window i covering
    [floor(i·size/out), ceil((i+1)·size/out)); shorter windows repeat their last position, which changes
    neither the maximum nor which element is found first."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    longest = int((end - start).max()) if out else 1
    return np.minimum(start[:, None] + np.arange(longest)[None, :], end[:, None] - 1)


def _adaptive_output_size(output_size, hw, n_spatial):
    name = f"adaptive_max_pool{n_spatial}d"
    if n_spatial == 1:
        if isinstance(output_size, (tuple, list)) and len(output_size) != 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(output_size)})")
        return (1, _tuple(output_size, 1)[0])
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    if len(sizes) != 2:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be 2")
    return tuple(size if o is None else int(o) for o, size in zip(sizes, hw))


def _check_adaptive_input(input, n_spatial):
    name = f"adaptive_max_pool{n_spatial}d"
    if input.dim() not in (n_spatial + 1, n_spatial + 2):
        if n_spatial == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
                               f"#1 'self' (while checking arguments for {name})")
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got: {shape_text(input.shape)}")
    if dt.kind(input._data.dtype) != "f":
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_name(input._data.dtype)}\'')
    batched = input.dim() == n_spatial + 2
    for d in range(int(batched), input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {shape_text(input.shape)} with dimension {d} being empty")


def _adaptive_max_pool(input, output_size, return_indices, n_spatial):
    _check_adaptive_input(input, n_spatial)
    xa, input, restore = _as_height_one(input, n_spatial, f"adaptive_max_pool{n_spatial}d")
    n, c, h, w = xa.shape
    ho, wo = _adaptive_output_size(output_size, (h, w), n_spatial)
    rows, cols = _adaptive_taps(h, ho), _adaptive_taps(w, wo)
    # the windows gathered into the layout _window_argmax reads, (N, C, kh, kw, Ho, Wo)
    win = xa[:, :, rows[:, :, None, None], cols[None, None, :, :]].transpose(0, 1, 3, 5, 2, 4)
    if win.size:
        out, arg = _window_argmax(win)
    else:
        out, arg = np.zeros((n, c, ho, wo), xa.dtype), np.zeros((n, c, ho, wo), np.int64)
    kw = cols.shape[1]
    # the position in the H·W plane of each maximum: row tap arg // kw of window y, column tap arg % kw of x
    y, x = np.arange(ho)[:, None], np.arange(wo)[None, :]
    indices = rows[y, arg // kw] * w + cols[x, arg % kw]
    result = wrap(restore(out))
    if wants_grad(input):
        base = (np.arange(n * c) * (h * w)).reshape(n, c, 1, 1)
        record(AdaptiveMaxPool2DBackward0, (input,), result, saved=(input,),
               pool=_MaxPoolMap(base + indices, input._data.shape, result._data.shape, overlapping=True))
    indices = wrap(restore(indices.astype(np.int64)))
    if n_spatial == 1:
        result, indices = result.squeeze(-2), indices.squeeze(-2)
    return (result, indices) if return_indices else result


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` (an int, a pair, None keeps that size): ``(N, C, H, W) ->
    (N, C, *output_size)``; window i along an axis covers [floor(i·size/out), ceil((i+1)·size/out)).
    ``return_indices`` also gives each maximum's flat position in its H·W plane."""
    return _adaptive_max_pool(input, output_size, return_indices, 2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed length: ``(N, C, L) -> (N, C, output_size)`` (the 2-D pool over height 1, as
    PyTorch records it)."""
    return _adaptive_max_pool(input, output_size, return_indices, 1)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return _adaptive_max_pool(input, output_size, True, 2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return _adaptive_max_pool(input, output_size, True, 1)


# --- max unpooling ------------------------------------------------------------------------------------------

class MaxUnpool2DBackward0(Node):
    """out = zeros with out.flat[indices] = x (per plane);  dx = grad.flat[indices]"""
    formula = "∂unpool/∂x: each input element receives the gradient at the position it was placed"

    def backward(self, ops, grad):
        planes = ops.reshape(grad, (self.rows.shape[0], -1))
        return (ops.reshape(ops.getitem(planes, (self.rows, self.index)), self.x_shape),)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """The spatial output size: PyTorch's default ``(in - 1)·stride + kernel - 2·padding`` or a checked
    ``output_size`` (which may include the batch and channel sizes)."""
    spatial = len(kernel_size)
    default = [(input.shape[input.dim() - spatial + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(spatial)]
    if output_size is None:
        return default
    if len(output_size) == spatial + 2:
        output_size = output_size[2:]
    if len(output_size) != spatial:
        raise ValueError(f"output_size should be a sequence containing {spatial} or {spatial + 2} elements, but it "
                         f"has a length of '{len(output_size)}'")
    for d in range(spatial):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return list(output_size)


def _max_unpool2d_node(input, indices, out_hw):
    """ATen's max_unpool2d: each (N, C) plane of ``input`` scattered into a zero plane of ``out_hw``."""
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {scalar_name(indices._data.dtype)}")
    if input.dim() not in (3, 4):
        raise RuntimeError("Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({shape_text(input.shape)}) but got indices tensor with shape: "
                           f"{shape_text(indices.shape)}")
    return scatter_unpooled(input, indices, tuple(out_hw), MaxUnpool2DBackward0)


def scatter_unpooled(input, indices, out_size, node_cls):
    """Each plane (or volume) of ``input`` scattered into zeros of ``out_size`` at ``indices`` (flat positions
    within the plane), recorded as ``node_cls``: max_unpool2d's and max_unpool3d's shared step."""
    xa = input._data
    planes = math.prod(xa.shape[:-len(out_size)])
    index = indices._data.reshape(planes, -1)
    size = math.prod(out_size)
    bad = (index < 0) | (index >= size)
    if bad.any():
        # PyTorch's kernel keeps going and reports the last invalid index it met
        raise RuntimeError(f"Found an invalid max index: {index[bad][-1]} (output volumes are of size "
                           f"{'x'.join(map(str, out_size))})")
    rows = np.arange(planes)[:, None]
    out = np.zeros((planes, size), dtype=xa.dtype)
    out[rows, index] = xa.reshape(planes, -1)
    result = wrap(out.reshape(xa.shape[:-len(out_size)] + out_size))
    if wants_grad(input):
        record(node_cls, (input,), result, rows=rows, index=index, x_shape=xa.shape)
    return result


@autocast_entry
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value of ``input`` placed at its ``indices`` (as
    ``max_pool2d(..., return_indices=True)`` gives them) in a zero image; ``(N, C, H, W) -> (N, C, Ho, Wo)``."""
    kernel_size = _tuple(kernel_size, 2, "kernel_size")
    stride = kernel_size if stride is None else _tuple(stride, 2, "stride")
    padding = _tuple(padding, 2, "padding")
    out_hw = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _max_unpool2d_node(input, indices, out_hw)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: ``(N, C, L) -> (N, C, Lo)`` (the 2-D unpool over width 1, as
    PyTorch records it)."""
    kernel_size = _tuple(kernel_size, 1, "kernel_size")
    stride = kernel_size if stride is None else _tuple(stride, 1, "stride")
    padding = _tuple(padding, 1, "padding")
    out_len = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _max_unpool2d_node(input.unsqueeze(-1), indices.unsqueeze(-1), out_len + [1]).squeeze(-1)
