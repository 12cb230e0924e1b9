"""Resampling: ``interpolate`` (and the deprecated ``upsample*``), ``pixel_shuffle``/``pixel_unshuffle``,
``unfold``/``fold`` (im2col/col2im), ``rrelu``, ``affine_grid`` and ``grid_sample``.

Most of these ops are *linear* in their input: ``out = A x`` for a fixed matrix ``A`` that depends only on
shapes and arguments. The gradient is then ``dx = Aᵀ grad``, and the gradient of that is ``A`` again. Each
op here is therefore a pair of array functions, the map and its adjoint, recorded as a pair of nodes
named as PyTorch names them (``UpsampleBilinear2DBackward0`` and ``UpsampleBilinear2DBackwardBackward0``,
``Im2ColBackward0`` and ``Col2ImBackward0``, ...): each node's rule is the other's map, so derivatives of
every order follow (see ``_LinearBackward``).

Interpolation is separable: along each spatial axis, output position ``i`` reads a few input positions
(its *taps*, one for nearest, two for linear, four for cubic, a window for antialiasing) with weights.
The taps are computed with PyTorch's formulas and in PyTorch's arithmetic (float32 for float32 inputs),
so that the same positions and weights come out; the map gathers along one axis at a time, the last
first, and the adjoint scatter-adds the weighted gradient back onto the taps.

``rrelu`` is linear in its input once its slopes are drawn (the draws are PyTorch's, bit for bit), and
``affine_grid`` is linear in ``theta``; ``grid_sample`` is not linear in its grid, and its rule runs on
arrays only (no second derivatives).
"""
import functools
import itertools
import math
import warnings

import numpy as np

from ... import _random
from ..._creation import linspace
from ..._random_math import _fma
from ..._tensor import Tensor
from ...autograd.graph import Node
from ...ops._record import record, wants_grad, wrap
from .._array_rules import arrays_only
from .._conv import _col2im, _pad, _windows, adaptive_avg_pool2d
from ._common import check_floating, inplace, scalar_name

__all__ = [
    "affine_grid",
    "fold",
    "grid_sample",
    "interpolate",
    "pixel_shuffle",
    "pixel_unshuffle",
    "rrelu",
    "rrelu_",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


# --- linear ops: a map and its adjoint, recorded as a pair of nodes ---------------------------------------

class _LinearBackward(Node):
    """The node of an op linear in its input, ``out = A x``: ``dx = Aᵀ grad`` (``self.adjoint`` on arrays).

    Under ``create_graph`` the adjoint is itself recorded, as ``adjoint_node`` with ``A`` as its rule, so a
    gradient of the gradient is again one of these nodes."""

    adjoint_node: type

    def backward(self, ops, grad):
        if ops.recording:
            return (linear_op(grad, self.adjoint, self.linear, self.adjoint_node),)
        return (self.adjoint(grad),)


def linear_op(x, linear, adjoint, node_cls):
    """``linear(x)`` on arrays, recorded as ``node_cls`` whose rule is ``adjoint`` (both array -> array)."""
    out = wrap(linear(x._data))
    if wants_grad(x):
        record(node_cls, (x,), out, linear=linear, adjoint=adjoint)
    return out


def _node_pair(forward_name, backward_name, formula):
    """Two ``_LinearBackward`` classes, each the other's adjoint: the op's node and its gradient's node."""
    forward = type(forward_name, (_LinearBackward,), {"__doc__": formula, "formula": formula, "__module__": __name__})
    backward = type(backward_name, (_LinearBackward,), {"__doc__": f"the adjoint of {forward_name}",
                                                        "formula": formula, "__module__": __name__})
    forward.adjoint_node, backward.adjoint_node = backward, forward
    return forward, backward


def _upsample_pair(name):
    return _node_pair(f"{name}Backward0", f"{name}BackwardBackward0",
                      "out = Σ weight · x[tap] along each axis;  dx[tap] += weight · grad")


UpsampleNearest1DBackward0, UpsampleNearest1DBackwardBackward0 = _upsample_pair("UpsampleNearest1D")
UpsampleNearest2DBackward0, UpsampleNearest2DBackwardBackward0 = _upsample_pair("UpsampleNearest2D")
UpsampleNearest3DBackward0, UpsampleNearest3DBackwardBackward0 = _upsample_pair("UpsampleNearest3D")
UpsampleNearestExact1DBackward0, UpsampleNearestExact1DBackwardBackward0 = _upsample_pair("UpsampleNearestExact1D")
UpsampleNearestExact2DBackward0, UpsampleNearestExact2DBackwardBackward0 = _upsample_pair("UpsampleNearestExact2D")
UpsampleNearestExact3DBackward0, UpsampleNearestExact3DBackwardBackward0 = _upsample_pair("UpsampleNearestExact3D")
UpsampleLinear1DBackward0, UpsampleLinear1DBackwardBackward0 = _upsample_pair("UpsampleLinear1D")
UpsampleBilinear2DBackward0, UpsampleBilinear2DBackwardBackward0 = _upsample_pair("UpsampleBilinear2D")
UpsampleTrilinear3DBackward0, UpsampleTrilinear3DBackwardBackward0 = _upsample_pair("UpsampleTrilinear3D")
UpsampleBicubic2DBackward0, UpsampleBicubic2DBackwardBackward0 = _upsample_pair("UpsampleBicubic2D")
UpsampleBilinear2DAaBackward0, UpsampleBilinear2DAaBackwardBackward0 = _upsample_pair("UpsampleBilinear2DAa")
UpsampleBicubic2DAaBackward0, UpsampleBicubic2DAaBackwardBackward0 = _upsample_pair("UpsampleBicubic2DAa")
UpsampleLanczos2DAaBackward0, UpsampleLanczos2DAaBackwardBackward0 = _upsample_pair("UpsampleLanczos2DAa")
AdaptiveAvgPool3DBackward0, AdaptiveAvgPool3DBackwardBackward0 = _node_pair(
    "AdaptiveAvgPool3DBackward0", "AdaptiveAvgPool3DBackwardBackward0",
    "out = mean of each window;  dx[window] += grad / window size")
PixelShuffleBackward0, PixelUnshuffleBackward0 = _node_pair(
    "PixelShuffleBackward0", "PixelUnshuffleBackward0", "a permutation of the elements;  dx = grad permuted back")
Im2ColBackward0, Col2ImBackward0 = _node_pair(
    "Im2ColBackward0", "Col2ImBackward0", "im2col copies each window to a column;  col2im sums columns back")


# --- interpolate: taps along one axis ----------------------------------------------------------------------

def _opmath(np_dtype):
    """The type PyTorch computes positions and weights in: float64 for float64 inputs, else float32."""
    return np.float64 if np_dtype == np.float64 else np.float32


def _source_scale(in_size, out_size, align_corners, scale, opmath):
    """Input positions per output position: (in-1)/(out-1) with corners aligned, else 1/scale_factor when one
    was given (a positive one), else in/out."""
    if align_corners:
        return opmath(in_size - 1) / opmath(out_size - 1) if out_size > 1 else opmath(0)
    if scale is not None and scale > 0:
        return opmath(1.0 / scale)
    return opmath(in_size) / opmath(out_size)


def _nearest_taps(in_size, out_size, scale, opmath, exact, planar):
    """``nearest``: input floor(i·s); ``nearest-exact``: the input nearest to the centre's position
    (i + 0.5)·s - 0.5. Each in the arithmetic of PyTorch's kernel for the input's dimensions: the 2-D
    (``planar``) one takes a float32 scale and maps an output twice the input's size to i // 2 whatever the
    scale factor says; the 1-D/3-D ones compute in the input's precision. All round the position to float32
    before the floor.

    (For float64 inputs and outputs of more than about 128 pixels, PyTorch's 2-D kernel switches to
    float64 arithmetic, by a rule not reproduced here: an index can then differ where the position is an
    integer.)"""
    i = np.arange(out_size)
    if planar:
        if not exact and out_size == 2 * in_size:
            return (i // 2)[None], None
        s = np.float32(_source_scale(in_size, out_size, False, scale, np.float32))
        position = (i + 0.5) * np.float64(s) if exact else i.astype(np.float32) * s
    elif exact:
        position = _source_position(in_size, out_size, False, scale, opmath, False) + 0.5
    else:
        position = i.astype(opmath) * _source_scale(in_size, out_size, False, scale, opmath)
    return np.minimum(np.floor(position.astype(np.float32)).astype(np.int64), in_size - 1)[None], None


def _source_position(in_size, out_size, align_corners, scale, opmath, cubic):
    """The (fractional) input position of each output position's centre."""
    s = _source_scale(in_size, out_size, align_corners, scale, opmath)
    i = np.arange(out_size).astype(opmath)
    if align_corners:
        return s * i
    # one rounding for the product and the difference: PyTorch's compiled kernel fuses them (FMA)
    position = _fma(s, i + opmath(0.5), opmath(-0.5), opmath)
    # linear interpolation clamps left of the first input centre; cubic reads (clamped) taps there instead
    return position if cubic else np.maximum(position, opmath(0))


def _floor_and_fraction(position, in_size):
    """The tap left of each position (at most the last input) and the fraction of the way to the next one."""
    left = np.minimum(np.floor(position).astype(np.int64), in_size - 1)
    fraction = np.clip(position - left.astype(position.dtype), 0, 1).astype(position.dtype)
    return left, fraction


def _linear_taps(in_size, out_size, align_corners, scale, opmath):
    """Two taps: the input left of the position and the next one (the same at the last input)."""
    left, t = _floor_and_fraction(_source_position(in_size, out_size, align_corners, scale, opmath, False), in_size)
    right = left + (left < in_size - 1)
    return np.stack([left, right]), np.stack([1 - t, t])


_CUBIC_A = -0.75        # PyTorch's (and OpenCV's) bicubic coefficient; antialiasing uses -0.5


# Keys' cubic convolution kernel, each multiply-add rounded once as in PyTorch's compiled kernels (FMA)

def _cubic_near(x, a):
    """For |x| <= 1: ((a + 2)·x - (a + 3))·x² + 1."""
    return _fma(_fma(a + 2, x, -(a + 3), x.dtype) * x, x, 1, x.dtype)


def _cubic_far(x, a):
    """For 1 < |x| < 2: ((a·x - 5a)·x + 8a)·x - 4a."""
    return _fma(_fma(_fma(a, x, -5 * a, x.dtype), x, 8 * a, x.dtype), x, -4 * a, x.dtype)


def _cubic_taps(in_size, out_size, align_corners, scale, opmath):
    """Four taps around the position, clamped to the input; weights from Keys' kernel at distances 1+t, t,
    1-t, 2-t."""
    left, t = _floor_and_fraction(_source_position(in_size, out_size, align_corners, scale, opmath, True), in_size)
    index = np.stack([np.clip(left + k, 0, in_size - 1) for k in (-1, 0, 1, 2)])
    weights = np.stack([_cubic_far(t + 1, _CUBIC_A), _cubic_near(t, _CUBIC_A), _cubic_near(1 - t, _CUBIC_A),
                        _cubic_far(2 - t, _CUBIC_A)])
    return index, weights


def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0)


def _keys_half(x):
    x = np.abs(x)
    return np.where(x < 1, _cubic_near(x, -0.5), np.where(x < 2, _cubic_far(x, -0.5), 0))


def _lanczos3(x):
    x = np.abs(x)
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0)


# filter, and the half-width of its support in input positions when not downsampling
_AA_FILTERS = {"bilinear": (_triangle, 1), "bicubic": (_keys_half, 2), "lanczos": (_lanczos3, 3)}


def _antialias_taps(in_size, out_size, align_corners, scale, opmath, mode):
    """Antialiased taps: every input within the filter's support of the position, the filter stretched by
    the downsampling factor so that each output averages all the inputs it covers; weights sum to 1."""
    filter_fn, half_width = _AA_FILTERS[mode]
    s = _source_scale(in_size, out_size, align_corners, scale, opmath)
    support = half_width * s if s >= 1 else opmath(half_width)
    stretch = 1 / s if s >= 1 else opmath(1)
    width = math.ceil(support) * 2 + 1
    centre = s * (np.arange(out_size) + 0.5).astype(opmath)
    # C's truncation towards zero (then the clamp at 0), as PyTorch finds each window's first input
    first = np.maximum(np.trunc(centre - support + 0.5).astype(np.int64), 0)
    count = np.clip(np.minimum(np.trunc(centre + support + 0.5).astype(np.int64), in_size) - first, 0, width)
    j = np.arange(width)[:, None]
    inside = j < count
    weights = np.where(inside, filter_fn((j + first - centre + 0.5) * stretch), 0).astype(opmath)
    total = weights.sum(axis=0)
    weights = np.where(total != 0, weights / np.where(total != 0, total, 1), weights).astype(opmath)
    # taps past a window's end carry weight 0; clamping keeps their index in range and non-decreasing
    return np.minimum(first + j, in_size - 1), weights


def _area_taps(in_size, out_size, opmath):
    """Adaptive average pooling: window i covers [floor(i·in/out), ceil((i+1)·in/out)), each input weighted
    1/length."""
    i = np.arange(out_size)
    start = (i * in_size) // out_size
    end = -((-(i + 1) * in_size) // out_size)
    width = int((end - start).max()) if out_size else 0
    j = np.arange(width)[:, None]
    weights = np.where(j < end - start, 1 / (end - start), 0).astype(opmath)
    return np.minimum(start + j, end - 1), weights


# --- interpolate: gather along an axis, and its adjoint ------------------------------------------------

def _gather(x, axis, taps):
    """Σ_t weight[t] · x[..., index[t], ...] along ``axis`` (with the sum in PyTorch's order, first tap first)."""
    index, weights = taps
    if weights is None:
        return np.take(x, index[0], axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    out = np.take(x, index[0], axis=axis) * weights[0].reshape(shape)
    for t in range(1, len(index)):
        out += np.take(x, index[t], axis=axis) * weights[t].reshape(shape)
    return out


def _scatter(grad, axis, taps, in_size):
    """The adjoint of ``_gather``: each output's gradient, times its weights, added onto its taps.

    A tap's indices never decrease along the output, so the outputs reading one input form a run, and one
    ``np.add.reduceat`` per tap sums every run at once."""
    index, weights = taps
    g = np.moveaxis(grad, axis, -1)
    out = np.zeros(g.shape[:-1] + (in_size,), dtype=g.dtype)
    for t in range(len(index)):
        part = g if weights is None else g * weights[t]
        starts = np.flatnonzero(np.diff(index[t], prepend=-1))
        out[..., index[t][starts]] += np.add.reduceat(part, starts, axis=-1)
    return np.moveaxis(out, -1, axis)


def _separable_map(in_shape, taps_per_axis, compute):
    """The map (gather along each spatial axis, the last first) and its adjoint, on arrays; float16 is
    computed in float32 and rounded once, as PyTorch does."""
    first = len(in_shape) - len(taps_per_axis)
    axes = list(enumerate(taps_per_axis, start=first))[::-1]
    in_sizes = in_shape[first:]

    def linear(x):
        out = x.astype(compute, copy=False) if x.dtype.kind == "f" else x
        for axis, taps in axes:
            out = _gather(out, axis, taps)
        return out.astype(x.dtype, copy=False)

    def adjoint(grad):
        g = grad.astype(compute, copy=False)
        for axis, taps in axes[::-1]:
            g = _scatter(g, axis, taps, in_sizes[axis - first])
        return g.astype(grad.dtype, copy=False)
    return linear, adjoint


# --- interpolate: arguments ---------------------------------------------------------------------------------

_AXES = {1: "W", 2: "H, W", 3: "D, H, W"}
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _is_integer(v):
    return (isinstance(v, (int, np.integer)) and not isinstance(v, bool)) or \
        (isinstance(v, Tensor) and v._data.dtype.kind in "iu")


def _output_size_and_scales(input, size, scale_factor, mode, recompute_scale_factor):
    """PyTorch's rules: exactly one of ``size`` and ``scale_factor``; the output size floor(in · scale);
    the scales passed on to the kernel, unless ``recompute_scale_factor`` (or mode 'area') makes the
    kernel use in/out instead."""
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    scales = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {spatial} and output size of {size}. Please provide input tensor in (N, C, d1, "
                    "d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(s) for s in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide input "
                    "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        # C's truncation of the product (a floor for the positive sizes that pass the checks)
        output_size = [int(n * s) for n, s in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    return output_size, scales or [None] * dim


def _check_sizes(input, output_size):
    """PyTorch's upsample checks: positive sizes, and no empty dimension but the batch."""
    spatial = list(input.shape[2:])
    if min(spatial + output_size) <= 0:
        names = _AXES[len(spatial)].split(", ")
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, output_size))
        joint = " and output" if len(spatial) == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given}){joint} "
                           f"({wanted})")
    if input.numel() == 0 and 0 in input.shape[1:]:
        raise RuntimeError(f"Non-empty {input.dim()}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")


# the kernel PyTorch names when refusing a dtype; uint8 is accepted where the value says so
_KERNELS = {
    ("nearest", 1): ("compute_indices_weights_nearest", True),
    ("nearest", 2): ("upsample_nearest2d_channels_last", True),
    ("nearest", 3): ("compute_indices_weights_nearest", True),
    ("linear", 1): ("compute_indices_weights_linear", False),
    ("linear", 2): ("upsample_bilinear2d_channels_last", True),
    ("linear", 3): ("compute_indices_weights_linear", False),
    ("cubic", 2): ("compute_indices_weights_cubic", True),
    ("antialias", 2): ("compute_index_ranges_weights", True),
}


def _check_dtype(a, kind, dim):
    kernel, takes_uint8 = _KERNELS[(kind, dim)]
    if a.dtype.kind == "f" and not (kind == "antialias" and a.dtype == np.float16):
        return
    if not (a.dtype == np.uint8 and takes_uint8):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a.dtype)}\'')
    if kind != "nearest":
        # PyTorch's uint8 kernels compute in fixed point and round in their own way; not reproduced here
        raise NotImplementedError("gradiente interpolates uint8 images with mode 'nearest' or 'nearest-exact' "
                                  "only; convert the image with .float() first")


_NODES = {
    ("nearest", 1): UpsampleNearest1DBackward0, ("nearest", 2): UpsampleNearest2DBackward0,
    ("nearest", 3): UpsampleNearest3DBackward0, ("nearest-exact", 1): UpsampleNearestExact1DBackward0,
    ("nearest-exact", 2): UpsampleNearestExact2DBackward0, ("nearest-exact", 3): UpsampleNearestExact3DBackward0,
    ("linear", 1): UpsampleLinear1DBackward0, ("bilinear", 2): UpsampleBilinear2DBackward0,
    ("trilinear", 3): UpsampleTrilinear3DBackward0, ("bicubic", 2): UpsampleBicubic2DBackward0,
    ("bilinear-aa", 2): UpsampleBilinear2DAaBackward0, ("bicubic-aa", 2): UpsampleBicubic2DAaBackward0,
    ("lanczos-aa", 2): UpsampleLanczos2DAaBackward0,
}


def _copies_same_size_axes(mode, antialias, dim):
    """Whether PyTorch's kernel copies an axis whose size does not change, whatever the scale factor says
    (its separable kernels skip such an axis; the others still resample it by 1/scale_factor)."""
    return antialias or mode in ("linear", "bilinear", "trilinear") or (mode == "nearest" and dim == 2)


def _taps(mode, antialias, in_size, out_size, align_corners, scale, opmath, dim):
    if in_size == out_size and _copies_same_size_axes(mode, antialias, dim):
        return np.arange(in_size)[None], None
    if mode in ("nearest", "nearest-exact"):
        return _nearest_taps(in_size, out_size, scale, opmath, mode == "nearest-exact", dim == 2)
    if antialias:
        return _antialias_taps(in_size, out_size, align_corners, scale, opmath, mode)
    if mode == "bicubic":
        return _cubic_taps(in_size, out_size, align_corners, scale, opmath)
    return _linear_taps(in_size, out_size, align_corners, scale, opmath)


def _upsample(input, output_size, scales, mode, align_corners, antialias):
    dim = input.dim() - 2
    _check_sizes(input, output_size)
    a = input._data
    kind = "antialias" if antialias else "nearest" if mode.startswith("nearest") else \
        "cubic" if mode == "bicubic" else "linear"
    _check_dtype(a, kind, dim)
    opmath = _opmath(a.dtype)
    taps = [_taps(mode, antialias, n, m, align_corners, s, opmath, dim)
            for n, m, s in zip(input.shape[2:], output_size, scales)]
    linear, adjoint = _separable_map(a.shape, taps, opmath)
    node = _NODES[(mode + ("-aa" if antialias else ""), dim)]
    return linear_op(input, linear, adjoint, node)


def _area(input, output_size):
    """Mode 'area' is adaptive average pooling, recorded as PyTorch records it."""
    dim = input.dim() - 2
    a = input._data
    if a.dtype.kind != "f":
        if all(s == 1 for s in output_size):
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {scalar_name(a.dtype)}")
        kernel = "adaptive_avg_pool3d_cpu" if dim == 3 else "adaptive_avg_pool2d"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a.dtype)}\'')
    if dim == 1:            # PyTorch's adaptive_avg_pool1d: the 2-D op on a height-1 image
        return adaptive_avg_pool2d(input.unsqueeze(-2), [1] + output_size).squeeze(-2)
    if dim == 2:
        return adaptive_avg_pool2d(input, output_size)
    opmath = _opmath(a.dtype)
    taps = [_area_taps(n, m, opmath) for n, m in zip(input.shape[2:], output_size)]
    linear, adjoint = _separable_map(a.shape, taps, opmath)
    return linear_op(input, linear, adjoint, AdaptiveAvgPool3DBackward0)


def _wrong_dims(mode, ndim):
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5}.get(mode)
    if needs is not None and ndim in (3, 4, 5):
        return NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {needs}D input")
    return NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: "
                               f"{_MODES} (got {mode})")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize ``(N, C, *spatial)`` to ``size``, or by ``scale_factor`` (output size floor(in · scale)).

    Modes: 'nearest', 'nearest-exact' (any of 1-3 spatial dims), 'linear' (3-D input), 'bilinear' and
    'bicubic' (4-D), 'trilinear' (5-D), 'area' (adaptive average pooling), 'lanczos' (4-D, antialias only).
    ``align_corners`` maps the corner pixels' centres onto each other; ``antialias`` (bilinear, bicubic)
    widens the filter when downsampling. Differs from PyTorch in refusing uint8 input except for the
    nearest modes (PyTorch's uint8 kernels round in fixed point)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scales = _output_size_and_scales(input, size, scale_factor, mode, recompute_scale_factor)
    ndim = input.dim()
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if ndim not in (3, 4, 5):
        raise _wrong_dims(mode, ndim)
    if mode in ("nearest", "nearest-exact"):
        return _upsample(input, output_size, scales, mode, None, False)
    if mode == "area":
        return _area(input, output_size)
    if (mode, ndim) in (("linear", 3), ("bilinear", 4), ("trilinear", 5), ("bicubic", 4)):
        return _upsample(input, output_size, scales, mode, align_corners, antialias)
    if mode == "lanczos" and ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        return _upsample(input, output_size, scales, mode, False, True)
    raise _wrong_dims(mode, ndim)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: ``interpolate``."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- pixel_shuffle, pixel_unshuffle -------------------------------------------------------------------------

def _shuffle_array(a, r):
    """(*, C·r², H, W) -> (*, C, H·r, W·r): channel c·r² + i·r + j becomes pixel (h·r + i, w·r + j) of channel c."""
    *lead, c, h, w = a.shape
    blocks = a.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    order = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    # np.array copies even when the permutation is the identity (r = 1): the result never aliases the input
    return np.array(blocks.transpose(order), order="C").reshape(*lead, c // (r * r), h * r, w * r)


def _unshuffle_array(a, r):
    """The inverse of ``_shuffle_array``: (*, C, H·r, W·r) -> (*, C·r², H, W)."""
    *lead, c, h, w = a.shape
    blocks = a.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    order = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return np.array(blocks.transpose(order), order="C").reshape(*lead, c * r * r, h // r, w // r)


def _check_factor(name, factor, what):
    if not isinstance(factor, (int, np.integer)) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{what}' (position 2) must be int, not {type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _check_at_least_3d(name, input):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           "dimension(s)")


def pixel_shuffle(input, upscale_factor):
    """Rearrange ``(*, C·r², H, W)`` into ``(*, C, H·r, W·r)`` (r = ``upscale_factor``): each group of r²
    channels becomes an r×r block of pixels (sub-pixel convolution)."""
    _check_factor("pixel_shuffle", upscale_factor, "upscale_factor")
    _check_at_least_3d("pixel_shuffle", input)
    r = int(upscale_factor)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return linear_op(input, lambda a: _shuffle_array(a, r), lambda g: _unshuffle_array(g, r), PixelShuffleBackward0)


def pixel_unshuffle(input, downscale_factor):
    """The inverse of ``pixel_shuffle``: ``(*, C, H·r, W·r)`` -> ``(*, C·r², H, W)``."""
    _check_factor("pixel_unshuffle", downscale_factor, "downscale_factor")
    _check_at_least_3d("pixel_unshuffle", input)
    r = int(downscale_factor)
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                               f"input.size({dim})={input.shape[dim]} is not divisible by {r}")
    return linear_op(input, lambda a: _unshuffle_array(a, r), lambda g: _shuffle_array(g, r),
                     PixelUnshuffleBackward0)


# --- unfold (im2col), fold (col2im) -------------------------------------------------------------------------

def _pair(value, name):
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
        return tuple(int(v) for v in value)
    return (int(value), int(value))


def _block_geometry(kernel_size, dilation, padding, stride):
    """The four pairs, checked as PyTorch's im2col and col2im check them."""
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    for what, (a, b), names, bad in (
            ("kernel size", kernel, ("kernel_height", "kernel_width"), lambda v: v <= 0),
            ("stride", stride, ("stride_height", "stride_width"), lambda v: v <= 0),
            ("dilation", dilation, ("dilation_height", "dilation_width"), lambda v: v <= 0),
            ("padding", padding, ("pad_height", "pad_width"), lambda v: v < 0)):
        if bad(a) or bad(b):
            rule = "be non-negative" if what == "padding" else "be greater than zero"
            raise RuntimeError(f"{what} should {rule}, but got {names[0]}: {a} {names[1]}: {b}")
    return kernel, dilation, padding, stride


def _blocks(size, kernel, dilation, padding, stride):
    """How many positions a kernel takes along each axis (floor division, as PyTorch's messages show)."""
    return tuple((s + 2 * p - (d * (k - 1) + 1)) // st + 1
                 for s, k, d, p, st in zip(size, kernel, dilation, padding, stride))


def _check_block_dtype(a, kernel):
    if a.dtype.kind in "iu":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a.dtype)}\'')


def _im2col_array(a, kernel, dilation, padding, stride, blocks):
    """(N, C, H, W) -> (N, C·kh·kw, L): each block's window as a column, channels first, then kernel rows."""
    n, c = a.shape[:2]
    win = _windows(_pad(a, ((padding[0],) * 2, (padding[1],) * 2)), kernel, stride, dilation, blocks)
    cols = np.empty((n, c * kernel[0] * kernel[1], blocks[0] * blocks[1]), dtype=a.dtype)
    cols.reshape(win.shape)[...] = win          # always a copy: the window view may alias the input
    return cols


def _col2im_array(cols, size, kernel, dilation, padding, stride, blocks):
    """(N, C·kh·kw, L) -> (N, C, H, W): the sum of every column put back where its window lies."""
    n, ckk = cols.shape[:2]
    kh, kw = kernel
    windows = cols.reshape(n, ckk // (kh * kw), kh, kw, *blocks)
    (ph, pw), (h, w) = padding, size
    padded = _col2im(windows, (n, ckk // (kh * kw), h + 2 * ph, w + 2 * pw), stride, dilation)
    return np.ascontiguousarray(padded[:, :, ph:ph + h, pw:pw + w])


def _unbatched(fn):
    """``fn`` on a batch of arrays, also taking (and giving back) a single one without the batch axis."""
    def apply(a, batched_dims):
        return fn(a) if a.ndim == batched_dims else fn(a[None])[0]
    return apply


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: ``(N, C, H, W)`` -> ``(N, C·kh·kw, L)``, each column one sliding ``kernel_size`` block (its
    values channel by channel, row by row); L = the number of blocks. ``(C, H, W)`` input gives
    ``(C·kh·kw, L)``."""
    kernel, dilation, padding, stride = _block_geometry(kernel_size, dilation, padding, stride)
    shape = list(input.shape)
    if input.dim() < 3:
        for dim in (1, 2):
            if dim >= input.dim():
                if input.dim() == 0:
                    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
                raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                                 f"{input.dim() - 1}], but got {dim})")
    if input.dim() not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {shape}")
    size = tuple(shape[-2:])
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, but its "
                           "components must be at least one.")
    _check_block_dtype(input._data, "im2col_out_cpu")
    geometry = (kernel, dilation, padding, stride, blocks)
    im2col = _unbatched(lambda a: _im2col_array(a, *geometry))
    col2im = _unbatched(lambda g: _col2im_array(g, size, *geometry))
    return linear_op(input, lambda a: im2col(a, 4), lambda g: col2im(g, 3), Im2ColBackward0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, the adjoint of ``unfold``: ``(N, C·kh·kw, L)`` -> ``(N, C, *output_size)``, each column added
    onto its block (overlapping blocks sum). ``(C·kh·kw, L)`` input gives ``(C, *output_size)``."""
    size = _pair(output_size, "output_size")
    kernel, dilation, padding, stride = _block_geometry(kernel_size, dilation, padding, stride)
    shape = list(input.shape)
    if input.dim() not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {shape}")
    kk = kernel[0] * kernel[1]
    if shape[-2] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size={kernel}.")
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"stride={stride}, expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={shape[-1]}.")
    _check_block_dtype(input._data, "col2im_out_cpu")
    geometry = (kernel, dilation, padding, stride, blocks)
    im2col = _unbatched(lambda g: _im2col_array(g, *geometry))
    col2im = _unbatched(lambda a: _col2im_array(a, size, *geometry))
    return linear_op(input, lambda a: col2im(a, 3), lambda g: im2col(g, 4), Col2ImBackward0)


# --- rrelu --------------------------------------------------------------------------------------------------

class RreluWithNoiseBackward0(Node):
    """out = x if x > 0 else a·x (a drawn from U(lower, upper) per element when training, else the mean);
    dx = grad · (1 if x > 0 else a)"""
    formula = "d/dx rrelu(x) = 1 if x > 0 else the element's slope"

    def backward(self, ops, grad):
        x, noise = self.saved(ops)
        if self.use_noise:
            slope = ops.raw(noise)
        else:
            slope = np.where(ops.raw(x) > 0, 1, self.negative_slope).astype(ops.raw(x).dtype)
        if ops.recording:
            return (linear_op(grad, lambda g: g * slope, lambda g: g * slope, RreluWithNoiseBackwardBackward0),)
        return (grad * slope,)


class RreluWithNoiseBackward1(RreluWithNoiseBackward0):
    """The in-place form: the sign is read from the saved result (the same as the input's, slopes being
    positive)."""


RreluWithNoiseBackwardBackward0 = type("RreluWithNoiseBackwardBackward0", (_LinearBackward,), {
    "__doc__": "out = grad · slope;  d/dgrad = slope", "formula": "d/dgrad (grad · slope) = slope",
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


# --- affine_grid ----------------------------------------------------------------------------------------------

_ALIGN_CORNERS_DEFAULT = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify "
    "align_corners=True if the old behavior is desired. See the documentation of grid_sample for details.")


class AffineGridGeneratorBackward0(Node):
    """out[n] = base · θ[n]ᵀ (base: each output position's (x, y, 1));  dθ[n] = grad[n]ᵀ · base"""
    formula = "∂(base·θᵀ)/∂θ = base: dθ = gradᵀ · base"

    def backward(self, ops, grad):
        coords = self.base.shape[-1] - 1
        g = ops.reshape(grad, (self.batch, -1, coords))
        return (ops.matmul(ops.transpose(g, 1, 2), ops.constant(self.base, like=g)),)


def _linspace_from_neg_one(steps, align_corners, dtype):
    """The normalized coordinates of ``steps`` pixels: their centres (-1 and 1 at the corner pixels' centres
    with ``align_corners``, else at their outer edges); 0 for a single pixel."""
    if steps <= 1:
        return np.zeros(1, dtype=dtype._np)
    r = linspace(-1, 1, steps, dtype=dtype)._data
    return r if align_corners else r * (steps - 1) / steps


def _base_grid(spatial, align_corners, dtype):
    """(P, k + 1): for each output position in C order, its normalized (x, y[, z], 1); x runs along the last axis."""
    k = len(spatial)
    base = np.ones(tuple(spatial) + (k + 1,), dtype=dtype._np)
    for c in range(k):
        axis = k - 1 - c
        shape = [1] * k
        shape[axis] = -1
        base[..., c] = _linspace_from_neg_one(spatial[axis], align_corners, dtype).reshape(shape)
    return base.reshape(-1, k + 1)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` ``(N, 2, 3)`` (or ``(N, 3, 4)`` in 3-D) for an output of
    ``size`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``): ``(N, H, W, 2)``, each output position's normalized
    (x, y) = θ · (x', y', 1), ready for ``grid_sample``."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    sizes = [int(v) for v in size]
    if len(sizes) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    rows = len(sizes) - 2
    if theta.dim() != 3 or tuple(theta.shape[-2:]) != (rows, rows + 1):
        raise ValueError(f"Expected a batch of {rows}D affine matrices of shape Nx{rows}x{rows + 1} for size "
                         f"{size}. Got {theta.shape}.")
    spatial = sizes[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", stacklevel=2)
    elif min(sizes) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != sizes[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sizes[0]}, {rows + 1}] "
                           f"but got: [{theta.shape[0]}, {rows + 1}].")
    base = _base_grid(spatial, align_corners, theta.dtype)
    out = wrap(np.matmul(base, theta._data.transpose(0, 2, 1)).reshape([sizes[0]] + spatial + [rows]))
    if wants_grad(theta):
        record(AffineGridGeneratorBackward0, (theta,), out, base=base, batch=sizes[0])
    return out


# --- grid_sample ------------------------------------------------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    """Grid coordinates in [-1, 1] as input pixel positions (-1 and 1 at the corner pixels' centres with
    ``align_corners``, else at their outer edges), and d(position)/d(coordinate)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), coord.dtype.type((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2, coord.dtype.type(size / 2)


def _clip(x, size):
    """Positions clamped to the input, and their derivative (0 where clamped, as PyTorch's border rule has it)."""
    inside = (x > 0) & (x < size - 1)
    return np.clip(x, 0, size - 1), inside.astype(x.dtype)


def _reflect(x, twice_low, twice_high):
    """Positions reflected into [low, high] as many times as needed, and their derivative (±1)."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    low = x.dtype.type(twice_low) / 2
    span = x.dtype.type(twice_high - twice_low) / 2
    shifted = x - low
    sign = np.where(shifted < 0, -1, 1).astype(x.dtype)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _pad_positions(x, size, padding_mode, align_corners):
    """Where positions outside the input read from ('border': the nearest edge; 'reflection': mirrored
    back in; 'zeros': nowhere, they read 0), and the derivative of that map."""
    if padding_mode == "border":
        return _clip(x, size)
    if padding_mode == "reflection":
        x, flip = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x, inside = _clip(x, size)
        return x, flip * inside
    return x, np.ones_like(x)


def _cubic_slope_near(x, a):
    """d/dx of ((a + 2)·x - (a + 3))·x² + 1."""
    return (3 * (a + 2) * x - 2 * (a + 3)) * x


def _cubic_slope_far(x, a):
    """d/dx of ((a·x - 5a)·x + 8a)·x - 4a."""
    return (3 * a * x - 10 * a) * x + 8 * a


def _axis_taps(coord, size, mode, padding_mode, align_corners):
    """The taps along one axis: (input position, weight, d weight / d coordinate) for each, and the
    coordinate's slope. Nearest and linear taps read the padded position; cubic taps are the four pixels
    around the raw position, each padded on its own (so padding adds nothing to the slope)."""
    x, slope = _unnormalize(coord, size, align_corners)
    if mode == "bicubic":
        x0 = np.floor(x)
        t = x - x0
        weights = [_cubic_far(t + 1, _CUBIC_A), _cubic_near(t, _CUBIC_A), _cubic_near(1 - t, _CUBIC_A),
                   _cubic_far(2 - t, _CUBIC_A)]
        slopes = [_cubic_slope_far(t + 1, _CUBIC_A), _cubic_slope_near(t, _CUBIC_A),
                  -_cubic_slope_near(1 - t, _CUBIC_A), -_cubic_slope_far(2 - t, _CUBIC_A)]
        # C's truncation of the padded position, as PyTorch reads a cubic tap
        positions = [np.trunc(_pad_positions(x0 + k, size, padding_mode, align_corners)[0]) for k in (-1, 0, 1, 2)]
        return list(zip(positions, weights, slopes)), slope
    x, d = _pad_positions(x, size, padding_mode, align_corners)
    slope = slope * d
    if mode == "nearest":
        # nearbyint: halves round to even
        return [(np.rint(x), np.ones_like(x), np.zeros_like(x))], slope
    x0 = np.floor(x)
    t = x - x0
    return [(x0, 1 - t, -np.ones_like(t)), (x0 + 1, t, np.ones_like(t))], slope


def _sampling_taps(coords, spatial, mode, padding_mode, align_corners):
    """Every tap of the sampling, over all axes at once: its flat index into the input's plane (or volume),
    its weight (0 where it falls outside the input) and d weight / d coordinate for each coordinate; with
    each coordinate's slope. ``coords[..., k]`` runs along the k-th axis from the last."""
    per_axis, slopes = [], []
    for k, size in enumerate(reversed(spatial)):
        taps, slope = _axis_taps(coords[..., k], size, mode, padding_mode, align_corners)
        per_axis.append(taps)
        slopes.append(slope)
    strides = np.cumprod((1,) + tuple(reversed(spatial)))[:-1]
    combined = []
    # the first axis outermost, as PyTorch sums the corners (north-west, north-east, south-west, south-east)
    for combo in itertools.product(*reversed(per_axis)):
        combo = combo[::-1]                           # back to (x, y[, z]) order
        inside = np.ones(coords.shape[:-1], dtype=bool)
        index = np.zeros(coords.shape[:-1], dtype=np.int64)
        for (position, _, _), size, stride in zip(combo, reversed(spatial), strides):
            ok = (position >= 0) & (position < size)
            inside &= ok
            index += np.where(ok, position, 0).astype(np.int64) * stride
        weight = functools.reduce(np.multiply, [w for _, w, _ in combo]) * inside
        partials = [functools.reduce(np.multiply, [d if j == k else w for j, (_, w, d) in enumerate(combo)]) * inside
                    for k in range(len(combo))]
        combined.append((index, weight, partials))
    return combined, slopes


class GridSampler2DBackward0(Node):
    """out[n, c, p] = Σ_taps w(grid[n, p]) · x[n, c, tap];  dx[n, c, tap] += w · grad;
    dgrid[n, p] = Σ_c grad · Σ_taps x[n, c, tap] · ∂w/∂grid"""
    formula = "∂out/∂x = the tap weights;  ∂out/∂grid = Σ x[tap] · ∂w/∂grid"

    def backward(self, ops, grad):
        arrays_only(ops, "grid_sample")
        x, _ = self.saved(ops)
        n, c = x.shape[:2]
        volume = int(np.prod(x.shape[2:]))
        g = grad.reshape(n, c, self.taps[0][0].shape[1])
        dx = dgrid = None
        if self.next_functions[0][0] is not None:
            planes = (np.arange(n * c) * volume).reshape(n, c, 1)
            flat = np.concatenate([(planes + index[:, None, :]).ravel() for index, _, _ in self.taps])
            weighted = np.concatenate([(g * weight[:, None, :]).ravel() for _, weight, _ in self.taps])
            dx = np.bincount(flat, weights=weighted, minlength=n * c * volume).astype(x.dtype).reshape(x.shape)
        if self.next_functions[1][0] is not None:
            values = x.reshape(n, c, volume)
            dcoords = [np.zeros((n, g.shape[2]), x.dtype) for _ in self.slopes]
            for index, _, partials in self.taps:
                along = (np.take_along_axis(values, index[:, None, :], axis=2) * g).sum(axis=1)
                for dcoord, partial in zip(dcoords, partials):
                    dcoord += along * partial
            dgrid = np.stack([d * slope for d, slope in zip(dcoords, self.slopes)], axis=-1).reshape(self.grid_shape)
        return dx, dgrid


class GridSampler3DBackward0(GridSampler2DBackward0):
    """The volumetric form: the same rule over (D, H, W)."""


def _check_grid_sampler(input, grid, mode):
    """PyTorch's grid_sampler checks, in its order."""
    shape_in, shape_grid = list(input.shape), list(grid.shape)
    if shape_in[0] != shape_grid[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                           f"{shape_in} and grid with sizes {shape_grid}")
    if shape_grid[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {shape_grid}")
    for i in range(2, input.dim()):
        if shape_in[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {shape_in} with dimension {i} being empty")
    dims = 4 if input.dim() == 4 else 5
    if input.dim() != dims or grid.dim() != dims:
        raise RuntimeError(f"grid_sampler(): expected {dims}D input and grid with same number of dimensions, but got "
                           f"input with sizes {shape_in} and grid with sizes {shape_grid}")
    if dims == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    a, b = input._data.dtype, grid._data.dtype
    if a != b:
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(b)}")
    if a.kind != "f":
        raise NotImplementedError(f'"grid_sampler_{dims - 2}d_cpu_kernel_impl" not implemented for '
                                  f"'{scalar_name(a)}'")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` ``(N, C, H, W)`` at the normalized positions ``grid`` ``(N, Ho, Wo, 2)`` (x, y in
    [-1, 1] spanning the input) -> ``(N, C, Ho, Wo)``; volumes ``(N, C, D, H, W)`` with ``(N, Do, Ho, Wo, 3)``
    likewise. ``mode``: 'bilinear' (trilinear on volumes), 'nearest' or 'bicubic' (4-D only);
    ``padding_mode``: 'zeros', 'border' or 'reflection' for positions outside. Differs from PyTorch in
    giving no second derivatives."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    xa, ga = input._data, grid._data
    n, c, *spatial = xa.shape
    coords = ga.reshape(n, int(np.prod(ga.shape[1:-1])), len(spatial))
    taps, slopes = _sampling_taps(coords, spatial, mode, padding_mode, align_corners)
    values = xa.reshape(n, c, int(np.prod(spatial)))
    out = np.zeros((n, c, coords.shape[1]), dtype=xa.dtype)
    for index, weight, _ in taps:
        out += np.take_along_axis(values, index[:, None, :], axis=2) * weight[:, None, :]
    result = wrap(out.reshape((n, c) + ga.shape[1:-1]))
    if wants_grad(input, grid):
        node = GridSampler2DBackward0 if len(spatial) == 2 else GridSampler3DBackward0
        record(node, (input, grid), result, (input, grid), taps=taps, slopes=slopes, grid_shape=ga.shape)
    return result
