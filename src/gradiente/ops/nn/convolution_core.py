"""What the transposed and 3-D convolutions share: a convolution as matrix products over ``nn._conv``'s strided
windows, its two adjoints, PyTorch's weight checks, and the ``ConvolutionBackward0`` node that records them.

Shapes: x (N, C, H, W) a convolution's input, w (O, C/G, kh, kw), y (N, O, Ho, Wo) its output, G groups.
A convolution is linear in x and in w. Each convolution object (``_Transposed2d`` in ``convolution_transposed``,
``_Conv3d`` in ``convolution3d``) has three maps, its forward pass and its adjoints in the input and in the
weight, built from the array functions here; ``_convolve`` runs its forward map and records the node, whose
backward calls the two adjoints.
"""
import numpy as np

from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ._array_rules import arrays_only
from .convolution import _windows


def _columns(xp, kernel, stride, dilation, out_hw, groups):
    """im2col: the windows of the padded input ``xp`` as ``(G, C/G·kh·kw, N·Ho·Wo)``."""
    n, c = xp.shape[:2]
    win = _windows(xp, kernel, stride, dilation, out_hw)
    rows = c // groups * kernel[0] * kernel[1]
    return np.ascontiguousarray(win.transpose(1, 2, 3, 0, 4, 5)).reshape(groups, rows, n * out_hw[0] * out_hw[1])


def _by_group(y, groups):
    """``(N, O, *spatial)`` as ``(G, O/G, N·prod(spatial))``: laid out like the product of weight and columns."""
    axes = (1, 0) + tuple(range(2, y.ndim))
    return np.ascontiguousarray(y.transpose(axes)).reshape(groups, y.shape[1] // groups, -1)


def _from_groups(product, n, out_spatial):
    """``(G, O/G, N·prod(spatial))`` back to ``(N, O, *spatial)``."""
    out = product.reshape(-1, n, *out_spatial)
    return out.transpose((1, 0) + tuple(range(2, out.ndim)))


def _correlate(xp, w, stride, dilation, out_hw, groups):
    """The convolution ``y = w ⋆ x`` of the padded input ``xp``."""
    o, _, kh, kw = w.shape
    cols = _columns(xp, (kh, kw), stride, dilation, out_hw, groups)
    return _from_groups(np.matmul(w.reshape(groups, o // groups, -1), cols), xp.shape[0], out_hw)


def _spread(y, w, groups):
    """``wᵀ · y``: the window values ``(N, C, kh, kw, *out_spatial)`` that a convolution's output ``y`` sends
    back towards its input (``_col2im`` then folds them onto the image)."""
    n, o = y.shape[:2]
    cols = np.matmul(w.reshape(groups, o // groups, -1).transpose(0, 2, 1), _by_group(y, groups))
    windows = cols.reshape(groups * w.shape[1], *w.shape[2:], n, *y.shape[2:])
    k = w.ndim - 2
    return windows.transpose((k + 1, 0) + tuple(range(1, k + 1)) + tuple(range(k + 2, windows.ndim)))


def _weight_adjoint(x, cols, groups):
    """A convolution's weight gradient: its input ``x (N, C, ...)`` times the gradient's columns."""
    return np.matmul(_by_group(x, groups), cols.transpose(0, 2, 1))


class ConvolutionBackward0(Node):
    """out = conv(x, w) + b;  dx = conv.input_grad(grad, w);  dw = conv.weight_grad(grad, x);  db = Σ grad.
    The node of the transposed and 3-D convolutions: ``self.conv`` holds the geometry and the two
    adjoint maps. PyTorch records every convolution, transposed or not, under this one name."""
    formula = "∂conv/∂x = grad ⋆ flip(w),  ∂conv/∂w = grad ⋆ x  (a transposed convolution swaps the two roles)"

    def backward(self, ops, grad):
        arrays_only(ops, "convolution")
        x, w = self.saved(ops)
        edges = self.next_functions
        dx = dw = db = None
        if edges[0][0] is not None:
            dx = self.conv.input_grad(grad, w)
        if edges[1][0] is not None:
            dw = self.conv.weight_grad(grad, x)
        if len(edges) > 2 and edges[2][0] is not None:
            db = grad.sum(axis=(0,) + tuple(range(2, grad.ndim)))
        return dx, dw, db


def _convolve(conv, input, weight, bias):
    """Run ``conv.forward`` on the arrays, add the bias, and record the node."""
    out = conv.forward(input._data, weight._data)
    if bias is not None:
        out = out + bias._data.reshape((-1,) + (1,) * (out.ndim - 2))
    result = wrap(np.ascontiguousarray(out))
    inputs = (input, weight) if bias is None else (input, weight, bias)
    if wants_grad(*inputs):
        # each adjoint reads the other operand: the input only for dw, the weight only for dx
        record(ConvolutionBackward0, inputs, result,
               saved=(input if weight._requires_grad else None, weight if input._requires_grad else None), conv=conv)
    return result


def _unbatched(fn, input, n_spatial, *args):
    """``fn`` on a batch of one, as PyTorch runs an unbatched convolution (recording the unsqueeze and squeeze)."""
    return fn(input.unsqueeze(0), *args, n_spatial).squeeze(0)


def _check_weight(input, weight, groups, transposed):
    """PyTorch's checks of a convolution's weight against its (batched) input, with its messages."""
    if weight.dim() != input.dim():
        raise RuntimeError(f"Expected {input.dim()}-dimensional weight for {input.dim()}-dimensional input "
                           f"{list(input.shape)}, but got {weight.dim()}-dimensional weight of size "
                           f"{list(weight.shape)} instead")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type (torch.{input.dtype._legacy}) and weight type (torch.{weight.dtype._legacy}) "
                           "should be the same or input should be a MKLDNN tensor and weight is a dense tensor")
    w_shape = list(weight.shape)
    if w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{w_shape}] instead")
    channels = w_shape[0] if transposed else w_shape[1] * groups
    if input.shape[1] != channels:
        kind = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {kind}, weight of size {w_shape}, expected input{list(input.shape)} to have "
                           f"{channels} channels, but got {input.shape[1]} channels instead")
