"""PyTorch's torch-level (ATen-level) forms of the neural-network ops, which programs sometimes call directly:
``torch.convolution``, ``torch.conv_transpose3d``, ``torch.conv_tbc``, ``torch.max_pool3d``,
``torch.affine_grid_generator``, ``torch.grid_sampler`` (and its ``_2d``/``_3d`` forms), ``torch.embedding_renorm_``,
``torch.native_dropout``, and the norms that return their statistics (``native_batch_norm``, ``native_layer_norm``,
``native_group_norm``, defined beside their ops in ``normalization``).

Each routes to the op that ``nn.functional`` uses, with ATen's argument order and conventions (integer mode codes,
sequences where ``nn.functional`` takes ints too), so values, gradients and node names are that op's. Two have a
node of their own, named as PyTorch names it: ``conv_tbc`` (``ConvTbcBackward0``), whose rule differentiates the
convolution it is composed of, and ``native_dropout`` (``NativeDropoutBackward0``).
"""
import numpy as np

from ...core import creation, grad_mode
from ...core.backward import grad as _grad
from ...core.inplace import apply_inplace
from ...core.node import Node
from ...core.record import record, wants_grad
from ...core.tensor import Tensor
from .convolution import conv1d, conv_transpose3d, convolution_nd
from .embedding import _renorm_rows
from .grid_sampling import affine_grid, grid_sample
from .normalization import native_batch_norm, native_group_norm, native_layer_norm
from .pooling3d import max_pool3d as _max_pool3d

__all__ = ["convolution", "conv_transpose3d", "conv_tbc", "max_pool3d", "affine_grid_generator", "grid_sampler",
           "grid_sampler_2d", "grid_sampler_3d", "embedding_renorm_", "native_dropout", "native_batch_norm",
           "native_layer_norm", "native_group_norm"]


# --- convolution ------------------------------------------------------------------------------------------------

def _require_int_list(fn_name, name, position, value):
    """ATen's sequence arguments refuse a bare int or str (``nn.functional``'s forms take those)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn_name}(): argument '{name}' (position {position}) must be tuple of ints, not "
                        f"{type(value).__name__}")


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The general convolution every ``conv*d`` and ``conv_transpose*d`` is: input ``(N, C, *spatial)`` (batched
    only), weight ``(O, C/groups, *kernel)`` or, ``transposed``, ``(C, O/groups, *kernel)``; ``stride``,
    ``padding``, ``dilation``, ``output_padding`` sequences of one value or one per spatial dim."""
    for name, position, value in (("stride", 4, stride), ("padding", 5, padding), ("dilation", 6, dilation),
                                  ("output_padding", 8, output_padding)):
        _require_int_list("convolution", name, position, value)
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
                           f"{list(input.shape)} instead")
    return convolution_nd(input, weight, bias, list(stride), list(padding), list(dilation), groups,
                          weight.dim() - 2, "convolution", transposed=bool(transposed),
                          output_padding=list(output_padding))


def _conv_tbc_composed(input, weight, bias, pad):
    """conv_tbc as a 1-D convolution: time becomes the spatial dim, the kernel ``(K, C_in, C_out)`` PyTorch's
    ``(C_out, C_in, K)``."""
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous()


class ConvTbcBackward0(Node):
    """out = conv1d over time of x (T, B, C_in) by w (K, C_in, C_out) + b;  dx, dw, db: the derivatives of that
    convolution, by running it again and differentiating it (recorded under create_graph)"""
    formula = "conv_tbc: out[t] = Σₖ x[t + k − pad] · w[k] + b;  dx, dw, db by the convolution's rules"

    def backward(self, ops, grad):
        inputs = self.saved(ops)
        wanted = [k for k, edge in enumerate(self.next_functions) if edge[0] is not None]
        if ops.recording:
            with grad_mode.enable_grad():
                out = _conv_tbc_composed(*inputs, self.pad)
            found = _grad(out, [inputs[k] for k in wanted], grad, create_graph=True, allow_unused=True)
        else:
            leaves = [Tensor._make(a, k in wanted) for k, a in enumerate(inputs)]
            with grad_mode.enable_grad():
                out = _conv_tbc_composed(*leaves, self.pad)
            found = [g._data for g in _grad(out, [leaves[k] for k in wanted], Tensor._make(grad))]
        results = [None] * 3
        for k, g in zip(wanted, found):
            results[k] = g
        return tuple(results)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over time of a time-first sequence: input ``(T, B, C_in)``, weight ``(K, C_in, C_out)``,
    bias ``(C_out,)``, ``pad`` zeros at both ends of time; output ``(T + 2·pad − K + 1, B, C_out)``."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    with grad_mode.no_grad():
        result = _conv_tbc_composed(input, weight, bias, pad)
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        record(ConvTbcBackward0, inputs, result, saved=inputs, pad=pad)
    return result


# --- pooling and sampling ---------------------------------------------------------------------------------------

def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``nn.functional.max_pool3d`` with ATen's arguments: an empty ``stride`` means the kernel size."""
    if not isinstance(stride, int) and stride is not None and len(stride) == 0:
        stride = None
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def affine_grid_generator(theta, size, align_corners):
    """``nn.functional.affine_grid`` with ``align_corners`` required: theta ``(N, 2, 3)`` for a 4-D ``size``
    ``(N, C, H, W)``, giving ``(N, H, W, 2)``, or ``(N, 3, 4)`` for a 5-D one, giving ``(N, D, H, W, 3)``."""
    columns = len(size) - 1
    if theta.dim() == 3 and theta.shape[2] != columns:     # ATen multiplies by thetaᵀ: its message
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {columns}] "
                           f"but got: [{theta.shape[0]}, {theta.shape[2]}].")
    return affine_grid(theta, size, bool(align_corners))


_INTERPOLATION_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING_MODES = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``nn.functional.grid_sample`` with ATen's integer codes: ``interpolation_mode`` 0 bilinear, 1 nearest,
    2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection. Differs from PyTorch in refusing other codes
    (a KeyError), which PyTorch's kernels take as one of these."""
    return grid_sample(input, grid, _INTERPOLATION_MODES[interpolation_mode], _PADDING_MODES[padding_mode],
                       bool(align_corners))


def _grid_sampler_of_rank(rank, input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != rank or grid.dim() != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler`` for images only: input ``(N, C, H, W)``, grid ``(N, Ho, Wo, 2)``."""
    return _grid_sampler_of_rank(4, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler`` for volumes only: input ``(N, C, D, H, W)``, grid ``(N, Do, Ho, Wo, 3)``."""
    return _grid_sampler_of_rank(5, input, grid, interpolation_mode, padding_mode, align_corners)


# --- embeddings and dropout -------------------------------------------------------------------------------------

class EmbeddingRenormBackward0(Node):
    """out = x with some rows rescaled in place;  PyTorch defines no derivative: backward raises its error"""
    formula = "no derivative defined"

    def backward(self, ops, grad):
        raise NotImplementedError("the derivative for 'embedding_renorm' is not implemented.")


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Scale down, in place, each row of the embedding matrix ``input`` ``(num, dim)`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm``, to norm ``max_norm`` (what ``F.embedding(max_norm=...)`` does first);
    returns ``input``. On a tensor that requires grad the change is recorded, as PyTorch records it, by a node
    whose backward raises (there is no derivative)."""
    if indices._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{indices.dtype._legacy} instead (while checking arguments for "
                           "embedding_renorm_)")
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")

    def renormed(old):
        result = Tensor._make(old._data.copy())
        _renorm_rows(result, indices._data, max_norm, norm_type)
        if wants_grad(old):
            record(EmbeddingRenormBackward0, (old,), result)
        return result
    return apply_inplace(input, renormed)


class NativeDropoutBackward0(Node):
    """out = x · mask · scale;  dx = grad · mask · scale  (scale 1/(1 − p) in training, 1 otherwise)"""
    formula = "native_dropout: dx = grad · mask · scale"

    def backward(self, ops, grad):
        return grad * ops.constant(self.factor, grad)

    def jvp(self, ops, x_t):
        return x_t * ops.constant(self.factor, x_t)


def native_dropout(input, p, train):
    """Dropout that also returns what it kept: ``(output, mask)``, mask a bool tensor of the input's shape. In
    training (``train`` true or None) each element is kept with probability ``1 - p`` (drawn as
    ``nn.functional.dropout`` draws them) and scaled by ``1/(1 - p)`` (0 when p = 1); otherwise the output is a copy
    and the mask all true. With ``train=None`` the gradient is PyTorch's: the mask without the scale (its
    derivative formula reads an absent ``train`` as evaluation), so it is not the forward's derivative there."""
    dtype = input._data.dtype
    if train is None or train:
        mask = creation.empty_like(input).bernoulli_(1 - p)._data.astype(bool)
        scale = 0.0 if p == 1 else 1.0 / (1 - p)
    else:
        mask, scale = np.ones(input.shape, bool), 1.0
    result = Tensor._make(input._data * (mask * np.asanyarray(scale, dtype)).astype(dtype))
    if wants_grad(input):
        factor = (mask * np.asanyarray(scale if train else 1.0, dtype)).astype(dtype)
        record(NativeDropoutBackward0, (input,), result, factor=factor)
    return result, Tensor._make(mask)
