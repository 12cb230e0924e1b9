"""Convolution: every convolution (``conv1d/2d/3d``, ``conv_transpose1d/2d``) as matrix products over
strided windows, its one backward node ``ConvolutionBackward0`` (PyTorch records every convolution under that
name), and the strided-window helpers that pooling and ``unfold``/``fold`` use too.

Shapes: x (N, C, *S) an input with k spatial sizes S (k = 1, 2 or 3); w (O, C/G, *K) a weight; y (N, O, *T) the
output; G groups.

* ``_windows`` sees a padded input through one strided view (N, C, *K, *T) without copying it; ``_columns``
  (im2col) copies that view once into the matrix (G, C/G·ΠK, N·ΠT).
* A convolution is one matrix product per group, y = W · cols. It is linear in x and in w, so its gradients are
  its two adjoints: dW = grad · colsᵀ, and dx = col2im(Wᵀ · grad), where ``_col2im`` sums window values back
  onto the image (one strided add per kernel offset).
* A transposed convolution is a convolution's input adjoint, y = col2im(Wᵀ · x); its own adjoints are therefore
  products with the columns of the gradient: dx = W · cols(grad), dW = x · cols(grad)ᵀ.

Under ``create_graph=True`` the first derivatives are computed on the same arrays and recorded as an op of
(grad, x, w), PyTorch's ``ConvolutionBackwardBackward0``. Since the convolution F(x, w) is bilinear, so is each of
its adjoints, Ax(grad, w) and Aw(x, grad), and every derivative of them is again one of the three maps F, Ax, Aw
(read off the trilinear form <grad, F(x, w)>): derivatives of every order need nothing else.
"""
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...core import dtype as dt
from ...core import layouts, onednn_conv
from ...core import warnings_at_caller as _warnings
from ...core.dtype import cpp_name, scalar_name
from ...core.meta import is_meta, meta_array
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ..autocast import autocast_entry
from . import padding as _padding
from ._array_rules import record_gradients

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "convolution_nd"]


# --- strided windows ------------------------------------------------------------------------------------------

def _out_size(size, pad_total, kernel, stride, dilation, ceil_mode=False, pad_left=0):
    """Output length along one axis (PyTorch's formula, ceil_mode included)."""
    span = size + pad_total - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + pad_left:       # the last window must start inside the input or left pad
            out -= 1
        return out
    return span // stride + 1


def _pad(array, pads, value=0):
    """Pad the last ``len(pads)`` axes by ``pads = ((before, after), ...)``, one pair per axis."""
    if not any(before or after for before, after in pads):
        return array
    k = len(pads)
    sizes = array.shape[-k:]
    out = np.full(array.shape[:-k] + tuple([s + b + a for s, (b, a) in zip(sizes, pads)]), value, dtype=array.dtype)
    _crop(out, pads, sizes)[...] = array
    return out


def _crop(padded, pads, sizes):
    """The part of ``padded`` that ``_pad(array, pads)`` copied ``array`` into (a view)."""
    return padded[(Ellipsis, *[slice(b, b + s) for s, (b, _) in zip(sizes, pads)])]


def _windows(xp, kernel, stride, dilation, out_size):
    """The strided view ``(N, C, *K, *T)`` of ``xp (N, C, *S)``: for 2-D,
    ``view[n, c, i, j, y, x] = xp[n, c, y·sh + i·dh, x·sw + j·dw]``."""
    k = len(kernel)
    spatial = xp.strides[-k:]
    return as_strided(xp, shape=(*xp.shape[:-k], *kernel, *out_size),
                      strides=(*xp.strides[:-k], *[s * d for s, d in zip(spatial, dilation)],
                               *[s * st for s, st in zip(spatial, stride)]),
                      writeable=False)


def _col2im(dwin, padded_shape, stride, dilation):
    """The reverse of ``_windows``: sum window values ``(N, C, *K, *T)`` back onto the padded input."""
    k = len(stride)
    kernel, out_size = dwin.shape[2:2 + k], dwin.shape[2 + k:]
    out = np.zeros(padded_shape, dtype=dwin.dtype)
    # along each axis, kernel offset i reads the positions i·d, i·d + s, ..., one per output position
    reads = [[slice(i * d, i * d + s * (t - 1) + 1, s) for i in range(size)]
             for size, d, s, t in zip(kernel, dilation, stride, out_size)]
    whole = (slice(None), slice(None))
    for offset, target in zip(itertools.product(*[range(size) for size in kernel]), itertools.product(*reads)):
        out[whole + target] += dwin[whole + offset]
    return out


# --- convolution as matrix products ---------------------------------------------------------------------------

def _columns(xp, kernel, stride, dilation, out_size, groups):
    """im2col: the windows of the padded input ``xp (N, C, *S)`` as the matrix ``(G, C/G·ΠK, N·ΠT)``."""
    n, c = xp.shape[:2]
    k = len(kernel)
    win = _windows(xp, kernel, stride, dilation, out_size)
    rows_first = (1,) + tuple(range(2, 2 + k)) + (0,) + tuple(range(2 + k, 2 + 2 * k))
    return np.ascontiguousarray(win.transpose(rows_first)).reshape(groups, c // groups * math.prod(kernel),
                                                                   n * math.prod(out_size))


def _by_group(y, groups):
    """``(N, O, *T)`` as ``(G, O/G, N·ΠT)``: laid out like the product of the weight and the columns."""
    axes = (1, 0) + tuple(range(2, y.ndim))
    # (the last size spelled out: an empty batch leaves -1 undetermined)
    return np.ascontiguousarray(y.transpose(axes)).reshape(groups, y.shape[1] // groups,
                                                           y.shape[0] * math.prod(y.shape[2:]))


def _from_groups(product, n, out_size):
    """``(G, O/G, N·ΠT)`` back to ``(N, O, *T)`` (a view)."""
    out = product.reshape(product.shape[0] * product.shape[1], n, *out_size)      # (not -1: n may be 0)
    return out.transpose((1, 0) + tuple(range(2, out.ndim)))


def _weight_rows(w, groups):
    """The weight ``(O, C/G, *K)`` as ``(G, O/G, C/G·ΠK)``: one matrix per group."""
    return w.reshape(groups, w.shape[0] // groups, -1)


def _as_windows(columns, channels, kernel, n, out_size):
    """Column values ``(G, C/G·ΠK, N·ΠT)`` as windows ``(N, C, *K, *T)``, the layout ``_col2im`` folds."""
    k = len(kernel)
    windows = columns.reshape(channels, *kernel, n, *out_size)
    return windows.transpose((k + 1, 0) + tuple(range(1, k + 1)) + tuple(range(k + 2, 2 * k + 2)))


class _Convolution:
    """y = w ⋆ x (a cross-correlation): ``x (N, C, *S) -> y (N, O, *T)``, weight ``(O, C/G, *K)``."""

    def __init__(self, x_shape, w_shape, groups, stride, dilation, pads, out_size):
        self.x_shape, self.w_shape, self.groups = x_shape, w_shape, groups
        self.stride, self.dilation, self.pads, self.out_size = stride, dilation, pads, out_size
        self.padded_shape = x_shape[:2] + tuple(s + b + a for s, (b, a) in zip(x_shape[2:], pads))

    def forward(self, x, w):
        """y = W · cols(x), per group. Also returns the columns: the weight's gradient reads them."""
        cols = self.weight_operand(x)
        return _from_groups(np.matmul(_weight_rows(w, self.groups), cols), x.shape[0], self.out_size), cols

    adds_bias = False       # the bias is added to the product's result by ``_convolve``

    @staticmethod
    def bias_gradient(grad):
        return grad.sum(axis=_bias_axes(grad.ndim))

    def weight_operand(self, x):
        """What ``backward`` reads to give dW: the columns of x."""
        return _columns(_pad(x, self.pads), self.w_shape[2:], self.stride, self.dilation, self.out_size, self.groups)

    def backward(self, grad, w, cols, need_dx, need_dw):
        """dx = col2im(Wᵀ · grad), cropped to x;  dW = grad · colsᵀ"""
        g = _by_group(grad, self.groups)            # laid out once, read by both products
        dx = dw = None
        if need_dx:
            dcols = np.matmul(_weight_rows(w, self.groups).transpose(0, 2, 1), g)
            windows = _as_windows(dcols, self.x_shape[1], self.w_shape[2:], grad.shape[0], self.out_size)
            dx = _crop(_col2im(windows, self.padded_shape, self.stride, self.dilation), self.pads, self.x_shape[2:])
        if need_dw:
            dw = np.matmul(g, cols.transpose(0, 2, 1)).reshape(self.w_shape)
        return dx, dw


class _OrderedConvolution(_Convolution):
    """A float32 2-d convolution computed in oneDNN's order of additions (``core/onednn_conv.py``), so that it
    rounds as PyTorch's does; the bias is added inside that order (``adds_bias``)."""

    adds_bias = True

    def forward(self, x, w, bias=None):
        xp = _pad(x, self.pads)
        return onednn_conv.forward(xp, w, bias, self.stride, self.out_size), xp

    def weight_operand(self, x):
        """What ``backward`` reads to give dW: the padded input."""
        return _pad(x, self.pads)

    def backward(self, grad, w, xp, need_dx, need_dw):
        dx = onednn_conv.input_gradient(grad, w, self.stride, self.pads, self.x_shape[2:]) if need_dx else None
        dw = onednn_conv.weight_gradient(grad, xp, self.w_shape[2:], self.stride) if need_dw else None
        return dx, dw

    @staticmethod
    def bias_gradient(grad):
        return onednn_conv.bias_gradient(grad)


class _PointwiseConvolution(_Convolution):
    """A float32 1x1 convolution as a matrix product per image, in the order of the kernel PyTorch runs it with
    (``onednn_conv.pointwise_kernel``: its own or oneDNN's 1x1 kernel); the bias is added inside that order."""

    adds_bias = True
    kernel = onednn_conv.OWN        # (a subclass per kernel: the class says how it runs)

    def weight_operand(self, x):
        """The input's columns ``(N, C, P)``: the values at the positions the 1x1 kernel reads."""
        xp = _pad(x, self.pads)
        (sh, sw), (oh, ow) = self.stride, self.out_size
        return np.ascontiguousarray(xp[:, :, :oh * sh:sh, :ow * sw:sw]).reshape(x.shape[0], x.shape[1], oh * ow)

    def forward(self, x, w, bias=None):
        columns = self.weight_operand(x)
        out = onednn_conv.pointwise_forward(columns, w.reshape(w.shape[:2]), bias, self.kernel)
        return out.reshape((x.shape[0], w.shape[0]) + tuple(self.out_size)), columns

    def backward(self, grad, w, columns, need_dx, need_dw):
        n, o = grad.shape[:2]
        g = np.ascontiguousarray(grad).reshape(n, o, -1)
        dx = dw = None
        if need_dx:
            spread = np.zeros(self.padded_shape, grad.dtype)
            (sh, sw), (oh, ow) = self.stride, self.out_size
            spread[:, :, :oh * sh:sh, :ow * sw:sw] = onednn_conv.pointwise_input_gradient(
                g, w.reshape(w.shape[:2]), self.kernel).reshape(n, -1, oh, ow)
            dx = _crop(spread, self.pads, self.x_shape[2:])
        if need_dw:
            dw = onednn_conv.pointwise_weight_gradient(g, columns, self.kernel).reshape(self.w_shape)
        return dx, dw

    def bias_gradient(self, grad):
        return onednn_conv.pointwise_bias_gradient(grad, self.kernel)


class _OneDnnPointwiseConvolution(_PointwiseConvolution):
    kernel = onednn_conv.POINTWISE


#: the convolution class for each answer of ``onednn_conv.pointwise_kernel``
_POINTWISE_KINDS = {onednn_conv.OWN: _PointwiseConvolution, onednn_conv.POINTWISE: _OneDnnPointwiseConvolution,
                    onednn_conv.GENERAL: _OrderedConvolution}


class _Transposed:
    """y = convᵀ(x), the input adjoint of the convolution ``y -> x`` with the same weight: ``x (N, Ci, *S) ->
    y (N, Co, *T)``, weight ``(Ci, Co/G, *K)``."""

    def __init__(self, x_shape, w_shape, groups, stride, dilation, pads, out_size):
        self.x_shape, self.w_shape, self.groups = x_shape, w_shape, groups
        self.stride, self.dilation, self.pads, self.out_size = stride, dilation, pads, out_size
        self.padded_shape = (x_shape[0], w_shape[1] * groups) + tuple(t + b + a for t, (b, a) in zip(out_size, pads))

    def forward(self, x, w):
        """y = col2im(Wᵀ · x), cropped. The weight's gradient reads the input itself (no columns: None)."""
        spread = np.matmul(_weight_rows(w, self.groups).transpose(0, 2, 1), _by_group(x, self.groups))
        windows = _as_windows(spread, self.padded_shape[1], self.w_shape[2:], x.shape[0], self.x_shape[2:])
        return _crop(_col2im(windows, self.padded_shape, self.stride, self.dilation), self.pads, self.out_size), None

    adds_bias = False
    bias_gradient = staticmethod(_Convolution.bias_gradient)

    @staticmethod
    def weight_operand(x):
        """What ``backward`` reads to give dW: x itself."""
        return x

    def backward(self, grad, w, x, need_dx, need_dw):
        """dx = W · cols(grad);  dW = x · cols(grad)ᵀ  (cols: the windows of the padded gradient)"""
        cols = _columns(_pad(grad, self.pads), self.w_shape[2:], self.stride, self.dilation, self.x_shape[2:],
                        self.groups)
        dx = dw = None
        if need_dx:
            dx = _from_groups(np.matmul(_weight_rows(w, self.groups), cols), grad.shape[0], self.x_shape[2:])
        if need_dw:
            dw = np.matmul(_by_group(x, self.groups), cols.transpose(0, 2, 1)).reshape(self.w_shape)
        return dx, dw


class _OrderedTransposed(_Transposed):
    """A float32 2-d transposed convolution in oneDNN's order (``core/onednn_conv.py``): PyTorch runs it as
    oneDNN's deconvolution, which is the convolution's input gradient; its own input gradient is that convolution's
    forward, and its weight's gradient the convolution's weight gradient with the two operands' roles swapped."""

    def forward(self, x, w):
        return onednn_conv.input_gradient(x, w, self.stride, self.pads, self.out_size), None

    def backward(self, grad, w, x, need_dx, need_dw):
        gp = _pad(grad, self.pads)
        dx = onednn_conv.forward(gp, w, None, self.stride, self.x_shape[2:]) if need_dx else None
        dw = onednn_conv.weight_gradient(x, gp, self.w_shape[2:], self.stride) if need_dw else None
        return dx, dw

    @staticmethod
    def bias_gradient(grad):
        return onednn_conv.bias_gradient(grad)


class _AsTwoD:
    """A 1-d convolution (or transposed one) computed as the 2-d one over a height of one, as PyTorch hands it to
    oneDNN (``view1d_as_2d``): ``kind`` (``_OrderedConvolution`` or ``_OrderedTransposed``) on the arrays given a
    height axis, the results without it. What the weight's gradient reads stays as ``kind`` keeps it."""

    def __init__(self, kind, x_shape, w_shape, groups, stride, dilation, pads, out_size):
        self.x_shape, self.w_shape, self.groups, self.out_size = x_shape, w_shape, groups, out_size
        self.inner = kind(x_shape[:2] + (1,) + x_shape[2:], w_shape[:2] + (1,) + w_shape[2:], groups, (1,) + stride,
                          (1,) + dilation, ((0, 0),) + tuple(pads), (1,) + tuple(out_size))
        self.adds_bias = self.inner.adds_bias

    @staticmethod
    def _tall(a):
        return None if a is None else a[:, :, None]

    def forward(self, x, w, bias=None):
        if self.adds_bias:
            out, kept = self.inner.forward(self._tall(x), self._tall(w), bias)
        else:
            out, kept = self.inner.forward(self._tall(x), self._tall(w))
        return out[:, :, 0], kept

    def weight_operand(self, x):
        return self.inner.weight_operand(self._tall(x))

    def backward(self, grad, w, kept, need_dx, need_dw):
        if kept is not None and kept.ndim == 3:     # (the input itself, as a transposed convolution reads it)
            kept = self._tall(kept)
        dx, dw = self.inner.backward(self._tall(grad), self._tall(w), kept, need_dx, need_dw)
        return (None if dx is None else dx[:, :, 0]), (None if dw is None else dw[:, :, 0])

    def bias_gradient(self, grad):
        return self.inner.bias_gradient(self._tall(grad))


class _MetaConvolution:
    """A convolution of meta tensors (``core/meta.py``): the shapes of the result and of every gradient, and no
    arithmetic, so that a 1024×3×65536×65536 input costs what a small one does. ``kind`` is the convolution it
    stands for, whose shapes it gives."""

    adds_bias = False

    def __init__(self, kind, x_shape, w_shape, groups, stride, dilation, pads, out_size):
        self.x_shape, self.w_shape, self.groups, self.out_size = x_shape, w_shape, groups, out_size
        self.stride, self.dilation, self.pads = stride, dilation, pads
        channels = w_shape[1] * groups if issubclass(kind, _Transposed) else w_shape[0]
        self.y_shape = (x_shape[0], channels, *out_size)

    def forward(self, x, w):
        return meta_array(self.y_shape, np.result_type(x, w)), None

    def weight_operand(self, x):
        return x

    def backward(self, grad, w, x, need_dx, need_dw):
        return (meta_array(self.x_shape, grad.dtype) if need_dx else None,
                meta_array(self.w_shape, grad.dtype) if need_dw else None)

    def bias_gradient(self, grad):
        return meta_array(self.y_shape[1:2], grad.dtype)


class ConvolutionBackward0(Node):
    """out = F(x, w) + b;  dx = Ax(grad, w), dw = Aw(x, grad) (the convolution's two adjoints);  db = Σ grad over
    batch and space. ``self.conv`` (a ``_Convolution`` or a ``_Transposed``) holds the geometry and the maps."""
    formula = "∂conv/∂x = grad ⋆ flip(w),  ∂conv/∂w = grad ⋆ x  (a transposed convolution swaps the two roles)"

    def backward(self, ops, grad):
        x, w, cols = self.saved(ops)
        needs = tuple(node is not None for node, _ in self.next_functions)
        if ops.recording:
            return _first_derivatives(self.conv, grad, x, w, needs, cols)[:len(needs)]
        dx, dw = self.conv.backward(grad, w, x if cols is None else cols, needs[0], needs[1])
        db = self.conv.bias_gradient(grad) if len(needs) > 2 and needs[2] else None
        return dx, dw, db


class ConvolutionBackwardBackward0(Node):
    """(dx, dw, db) = (Ax(grad, w), Aw(x, grad), Σ grad): bilinear, so d grad = F(ggx, w) + F(x, ggw) + ggb,
    dx = Ax(grad, ggw), dw = Aw(ggx, grad) (gg: the gradients of dx, dw, db)"""
    formula = "∂Ax(g, w)/∂g = F(·, w), ∂Ax(g, w)/∂w = Aw(·, g);  ∂Aw(x, g)/∂x = Ax(g, ·), ∂Aw(x, g)/∂g = F(x, ·)"
    _materialize_grads = False      # an output that got no gradient adds no term

    def backward(self, ops, ggx, ggw, ggb):
        grad, x, w = self.saved(ops)
        need_grad, need_x, need_w = (node is not None for node, _ in self.next_functions)
        conv = self.conv
        d_grad = d_x = d_w = None
        if need_grad:
            terms = [_bilinear(ops, conv, "F", a, b) for gg, a, b in ((ggx, ggx, w), (ggw, x, ggw)) if gg is not None]
            if ggb is not None:
                spread = ops.reshape(ggb, (1, -1) + (1,) * (ops.raw(grad).ndim - 2))
                terms.append(spread if terms else ops.expand(spread, ops.raw(grad).shape))
            d_grad = sum(terms[1:], terms[0]) if terms else None
        if need_x and ggw is not None:
            d_x = _bilinear(ops, conv, "Ax", grad, ggw)
        if need_w and ggx is not None:
            d_w = _bilinear(ops, conv, "Aw", ggx, grad)
        return d_grad, d_x, d_w


def _bias_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _first_derivatives(conv, grad, x, w, needs, cols=None):
    """``(Ax(grad, w), Aw(x, grad), Σ grad)`` where ``needs`` asks (None elsewhere), computed on the arrays and
    recorded as one ``ConvolutionBackwardBackward0`` of (grad, x, w), PyTorch's edges (x or w None where the
    outputs asked for do not read it). ``cols``: x's columns, if the forward kept them."""
    g = grad._data
    kept = None
    if needs[1]:
        kept = conv.weight_operand(x._data) if cols is None else cols
    dx, dw = conv.backward(g, w._data if needs[0] else None, kept, needs[0], needs[1])
    db = conv.bias_gradient(g) if len(needs) > 2 and needs[2] else None
    return record_gradients(ConvolutionBackwardBackward0, (grad, x, w), (dx, dw, db), saved=(grad, x, w), conv=conv)


def _bilinear(ops, conv, which, a, b):
    """One of the three maps of ``conv``: ``F(x, w)``, ``Ax(grad, w)`` or ``Aw(x, grad)``, on arrays, or on tensors
    and recorded (as ``ConvolutionBackward0`` or ``ConvolutionBackwardBackward0``) when ``ops`` records."""
    if ops.recording:
        if which == "F":
            return _convolve(conv, a, b, None)
        if which == "Ax":
            return _first_derivatives(conv, a, None, b, (True, False))[0]
        return _first_derivatives(conv, b, a, None, (False, True))[1]
    if which == "F":
        return conv.forward(a, b)[0]
    if which == "Ax":
        return conv.backward(a, b, None, True, False)[0]
    return conv.backward(b, None, conv.weight_operand(a), False, True)[1]


def _convolve(conv, input, weight, bias):
    """Run ``conv.forward`` on the arrays, add the bias, and record the node."""
    # bfloat16 is convolved in float32 (dt.widened), the bias added there, and the sum rounded once
    if conv.adds_bias:
        out, cols = conv.forward(input._data, weight._data, None if bias is None else bias._data)
    else:
        out, cols = conv.forward(dt.widened(input._data), dt.widened(weight._data))
    # one copy makes the result contiguous, and adds the bias on the way
    result = np.empty_like(out, order="C")         # (a meta result's stays meta: core/meta.py)
    if bias is not None and not conv.adds_bias:
        np.add(out, dt.widened(bias._data).reshape((-1,) + (1,) * (out.ndim - 2)), out=result)
    else:
        result[...] = out
    # a channels-last input or weight gives a channels-last result, as PyTorch's oneDNN convolution does
    result = layouts.laid_out(result.astype(input._data.dtype, copy=False),
                              layouts.suggested_format(input._data, weight._data))
    result = wrap(result)
    # (a missing bias is an input too, without an edge: PyTorch's node has three, ``(None, 0)`` for it)
    inputs = (input, weight, bias)
    if wants_grad(*inputs):
        # the weight's gradient reads the columns (kept only if it is needed; a transposed convolution reads the
        # input itself); saved values, so the engine frees them after backward like any other. Both operands
        # are saved, as PyTorch saves them: a double backward reads them, and changing either in place is caught.
        record(ConvolutionBackward0, inputs, result, saved=(input, weight, cols if weight._requires_grad else None),
               conv=conv)
    return result


# --- arguments, checked as PyTorch checks them ----------------------------------------------------------------

def _as_list(value, n_spatial):
    """A geometry argument as PyTorch's Python binding passes it on: an int repeated per spatial dim, a
    sequence as given."""
    if isinstance(value, (tuple, list)):
        return [int(v) for v in value]
    return [int(value)] * n_spatial


def _expanded(name, values, dims):
    """``values`` for ``dims`` spatial dims (those of the weight, as PyTorch counts them)."""
    if len(values) == 1:
        return values * dims
    if len(values) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values to match the "
                           f"convolution dimensions, but got {name}={values}")
    return values


def _tuple(value, n, name="argument"):
    """An int or a sequence of ints as ``n`` ints (pooling's arguments), with PyTorch's message for a sequence
    of another length."""
    return tuple(_expanded(name, _as_list(value, n), n))


def _check_input_rank(input, n_spatial, name):
    if input.dim() not in (n_spatial + 1, n_spatial + 2):
        raise RuntimeError(f"Expected {n_spatial + 1}D (unbatched) or {n_spatial + 2}D (batched) input to {name}, "
                           f"but got input of size: {list(input.shape)}")


def _same_pads(kernel, dilation):
    """``padding='same'``: the total padding d·(k - 1) per axis, the odd one out after."""
    return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for d, k in zip(dilation, kernel))


def _geometry(x_shape, w_shape, stride, padding, dilation, output_padding, groups, n_spatial, transposed):
    """``stride``, ``pads`` (``(before, after)`` per axis), ``dilation``, ``output_padding`` as tuples, one entry
    per spatial dim of the weight, as PyTorch counts them; checked in its order, with its messages."""
    mode = padding if isinstance(padding, str) else None
    if mode is not None:
        if mode not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{mode}'")
        if mode == "same" and any(s != 1 for s in _as_list(stride, n_spatial)):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if len(w_shape) < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if mode == "same" and len(w_shape) != len(x_shape):
        raise RuntimeError(f"Expected {len(w_shape)}-dimensional input for {len(w_shape)}-dimensional weight"
                           f"{list(w_shape)}, but got {len(x_shape)}-dimensional input of size {list(x_shape)} "
                           "instead")
    dims = len(w_shape) - 2
    stride = _expanded("stride", _as_list(stride, n_spatial), dims)
    padding = [0] * dims if mode is not None else _expanded("padding", _as_list(padding, n_spatial), dims)
    dilation = _expanded("dilation", _as_list(dilation, n_spatial), dims)
    output_padding = _expanded("output_padding", _as_list(output_padding, n_spatial), dims)
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if transposed and min(output_padding) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    pads = _same_pads(w_shape[2:], dilation) if mode == "same" else tuple((p, p) for p in padding)
    return tuple(stride), pads, tuple(dilation), tuple(output_padding)


def _check_shapes(x_shape, w_shape, bias, groups, transposed):
    """The weight and bias against the (batched) input, in PyTorch's order and words."""
    if len(w_shape) != len(x_shape):
        raise RuntimeError(f"Expected {len(w_shape)}-dimensional input for {len(w_shape)}-dimensional weight "
                           f"{list(w_shape)}, but got {len(x_shape)}-dimensional input of size {list(x_shape)} "
                           "instead")
    if w_shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(w_shape)} instead")
    if w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(w_shape)}] instead")
    channels = w_shape[0] if transposed else w_shape[1] * groups
    if x_shape[1] != channels:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {given}, weight of size {list(w_shape)}, expected input{list(x_shape)} to have "
                           f"{channels} channels, but got {x_shape[1]} channels instead")
    out_channels = w_shape[1] * groups if transposed else w_shape[0]
    if bias is not None and bias._data.shape != (out_channels,):
        given = "transposed=1, weight" if transposed else "weight"
        raise RuntimeError(f"Given {given} of size {list(w_shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")


def _check_dtypes(input, weight, bias, groups):
    """The bias's and the weight's dtype against the input's. PyTorch words a weight of another dtype after the
    CPU kernel it picks: oneDNN's for a float32 input that is batched, grouped, large or has a kernel larger
    than 3x3 (its rule, on 1-D input viewed as height 1), else its own."""
    x, w = input._data, weight._data
    if bias is not None and bias._data.dtype != x.dtype:
        raise RuntimeError(f"Input type ({cpp_name(x.dtype)}) and bias type ({cpp_name(bias._data.dtype)}) should "
                           "be the same")
    if w.dtype == x.dtype:
        return
    x4, w4 = (a.shape[:2] + (1,) * (4 - a.ndim) + a.shape[2:] for a in (x, w))
    one_dnn = x.dtype == np.float32 and (groups > 1 or (w4[-1] > 3 and w4[-2] > 3) or x4[0] > 1
                                         or math.prod(x4[:4]) > 20480)
    if one_dnn:
        raise RuntimeError(f"Input type (torch.{input.dtype._legacy}) and weight type (torch.{weight.dtype._legacy}) "
                           "should be the same or input should be a MKLDNN tensor and weight is a dense tensor")
    raise RuntimeError(f"expected scalar type {scalar_name(x.dtype)} but found {scalar_name(w.dtype)}")


def _conv_size(sizes, stride, pads, dilation, kernel):
    """A convolution's output size, with PyTorch's check that each (dilated) kernel fits the padded input."""
    padded = [size + b + a for size, (b, a) in zip(sizes, pads)]
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if any(p < s for p, s in zip(padded, spans)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than actual input "
                           "size")
    return tuple(_out_size(size, b + a, k, s, d)
                 for size, (b, a), k, s, d in zip(sizes, pads, kernel, stride, dilation))


def _as_2d(values, fill):
    """Per-axis values of a 1-D op as PyTorch's messages print them: the 2-D op's, over height 1."""
    return [fill] * (2 - len(values)) + list(values)


def _check_output_padding(stride, dilation, output_padding):
    s, d, op = _as_2d(stride, 1), _as_2d(dilation, 1), _as_2d(output_padding, 0)
    if any(o >= st and o >= di for o, st, di in zip(op, s, d)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_height: {op[0]} output_padding_width: {op[1]} stride_height: {s[0]} "
                           f"stride_width: {s[1]} dilation_height: {d[0]} dilation_width: {d[1]}")


def _transposed_size(sizes, stride, pads, dilation, output_padding, kernel):
    """A transposed convolution's output size ``(S - 1)·stride - padding + dilation·(K - 1) + output_padding + 1``,
    with PyTorch's check that it is positive."""
    out_size = tuple((size - 1) * s - b - a + d * (k - 1) + o + 1
                     for size, s, (b, a), d, k, o in zip(sizes, stride, pads, dilation, kernel, output_padding))
    if min(out_size) <= 0:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, _as_2d(sizes, 1)))}). Calculated "
                           f"output size per channel: ({' x '.join(map(str, _as_2d(out_size, 1)))}). Output size "
                           "is too small")
    return out_size


_WARNED: set = set()        # the warnings given already: PyTorch gives these once per process


def _pad_odd_one_out(input, pads):
    """``padding='same'`` with an odd total padding, as PyTorch does it: the input padded by the extra element at
    the end of each such axis first (a copy, recorded as ``ConstantPadNdBackward0``), then the convolution's
    symmetric padding."""
    if "padded copy" not in _WARNED:
        _WARNED.add("padded copy")
        _warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                       "copy of the input be created", UserWarning, stacklevel=4)
    amounts = []
    for before, after in reversed(pads):        # F.pad lists the last axis first
        amounts += [0, after - before]
    return _padding.pad(input, amounts), tuple((before, before) for before, _ in pads)


def convolution_nd(input, weight, bias, stride, padding, dilation, groups, n_spatial, name, transposed=False,
                   output_padding=0):
    """Every convolution, ``conv{n}d`` and ``conv_transpose{n}d``: the arguments checked in PyTorch's order, with
    its messages, then ``_convolve``."""
    if transposed and isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    _check_input_rank(input, n_spatial, name)
    if input.dim() == n_spatial + 1:
        # an unbatched input: PyTorch convolves a batch of one and records the unsqueeze and squeeze
        return convolution_nd(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, n_spatial, name,
                              transposed, output_padding).squeeze(0)
    x_shape, w_shape = input._data.shape, weight._data.shape
    stride, pads, dilation, output_padding = _geometry(x_shape, w_shape, stride, padding, dilation, output_padding,
                                                       groups, n_spatial, transposed)
    _check_shapes(x_shape, w_shape, bias, groups, transposed)
    if any(before != after for before, after in pads):
        input, pads = _pad_odd_one_out(input, pads)
        x_shape = input._data.shape
    if transposed:
        _check_output_padding(stride, dilation, output_padding)
    else:
        out_size = _conv_size(x_shape[2:], stride, pads, dilation, w_shape[2:])
    _check_dtypes(input, weight, bias, groups)
    if transposed:
        out_size = _transposed_size(x_shape[2:], stride, pads, dilation, output_padding, w_shape[2:])
    # (a 1-d convolution is oneDNN's 2-d one over a height of one: its order, when that one's is known)
    as_2d = n_spatial == 1 and input._data.ndim == 3 and weight._data.ndim == 3
    xa, wa = (t._data[:, :, None] if as_2d else t._data for t in (input, weight))
    dims = 2 if as_2d else n_spatial
    if transposed:
        kind = _OrderedTransposed if onednn_conv.follows_onednn(
            xa, wa, groups, (1,) * as_2d + tuple(dilation), dims, False) and not any(output_padding) else _Transposed
    elif onednn_conv.follows_onednn(xa, wa, groups, (1,) * as_2d + tuple(dilation), dims, transposed):
        kind = _OrderedConvolution
    else:
        pointwise = None if as_2d or n_spatial != 2 else onednn_conv.pointwise_kernel(xa, wa, groups, dilation, stride,
                                                                                       pads)
        kind = _POINTWISE_KINDS.get(pointwise, _Convolution)
    if any(is_meta(t._data) for t in (input, weight, bias) if t is not None):
        conv = _MetaConvolution(kind, x_shape, w_shape, groups, stride, dilation, pads, out_size)
    elif as_2d and kind in (_OrderedConvolution, _OrderedTransposed):
        conv = _AsTwoD(kind, x_shape, w_shape, groups, stride, dilation, pads, out_size)
    else:
        conv = kind(x_shape, w_shape, groups, stride, dilation, pads, out_size)
    return _convolve(conv, input, weight, bias)


# --- convolution ---------------------------------------------------------------------------------------

@autocast_entry
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation. ``input (N, C, L)`` or ``(C, L)``, ``weight (O, C/groups, k)``. Output ``(N, O, Lo)``."""
    return convolution_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@autocast_entry
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation. ``input (N, C, H, W)`` or ``(C, H, W)``, ``weight (O, C/groups, kh, kw)``,
    ``bias (O,)``; ``padding`` an int, a pair, ``'valid'`` or ``'same'``. Output ``(N, O, Ho, Wo)``."""
    return convolution_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@autocast_entry
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation. ``input (N, C, D, H, W)`` or ``(C, D, H, W)``, ``weight (O, C/groups, kd, kh, kw)``,
    ``bias (O,)``; ``padding`` an int, a triple, ``'valid'`` or ``'same'``. Output ``(N, O, Do, Ho, Wo)``."""
    return convolution_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


@autocast_entry
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution: ``input (N, C_in, L)`` or ``(C_in, L)``, ``weight (C_in, C_out/groups, k)``."""
    return convolution_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv_transpose1d",
                          transposed=True, output_padding=output_padding)


@autocast_entry
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution"), the adjoint of ``conv2d``: ``input (N, C_in, H, W)`` or
    ``(C_in, H, W)``, ``weight (C_in, C_out/groups, kh, kw)``. Output height ``(H - 1)·stride - 2·padding +
    dilation·(kh - 1) + output_padding + 1``, and likewise the width."""
    return convolution_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv_transpose2d",
                          transposed=True, output_padding=output_padding)


@autocast_entry
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution, the adjoint of ``conv3d``: ``input (N, C_in, D, H, W)`` or ``(C_in, D, H, W)``,
    ``weight (C_in, C_out/groups, kd, kh, kw)``; each output size as ``conv_transpose2d``'s."""
    return convolution_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv_transpose3d",
                          transposed=True, output_padding=output_padding)
