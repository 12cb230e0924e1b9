"""Folding an eval-mode BatchNorm into the convolution or linear layer before it: one layer computing
``bn(layer(x))``, as ``torch.nn.utils.fusion``."""
import copy

import gradiente

from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` (eval mode) whose output equals ``bn(conv(x))`` for ``bn`` in eval mode
    (its running statistics). ``transpose``: ``conv`` is a transposed convolution (channels on dim 1)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight ``(C_out, C_in/groups, *k)`` and bias ``(C_out,)`` of a convolution equal to the
    convolution ``conv_w, conv_b`` followed by batch norm with running mean/var ``bn_rm, bn_rv`` and affine
    ``bn_w, bn_b`` (None: identity). Returned as Parameters in the convolution's dtypes."""
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = gradiente.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = gradiente.ones_like(bn_rm)
    if bn_b is None:
        bn_b = gradiente.zeros_like(bn_rm)
    bn_var_rsqrt = gradiente.rsqrt(bn_rv + bn_eps)
    channel_first = [-1, 1] if not transpose else [1, -1]
    shape = channel_first + [1] * (len(conv_w.shape) - 2)
    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return Parameter(fused_conv_w, conv_w.requires_grad), Parameter(fused_conv_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (eval mode) whose output equals ``bn(linear(x))`` for ``bn`` in eval mode.
    ``bn.num_features`` must be ``linear.out_features`` or 1."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if bn.num_features not in (linear.out_features, 1):
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight ``(out, in)`` and bias ``(out,)`` of a linear layer equal to ``linear_w, linear_b``
    followed by batch norm (running statistics ``bn_rm, bn_rv``, affine ``bn_w, bn_b``), as Parameters."""
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = gradiente.zeros_like(bn_rm)
    bn_scale = bn_w * gradiente.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
