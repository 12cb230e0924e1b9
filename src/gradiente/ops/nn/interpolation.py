"""``interpolate`` in all its modes, and the deprecated ``upsample``, ``upsample_nearest`` and ``upsample_bilinear``.

Interpolation is linear in its input (see ``linear_maps``) and separable: along each spatial axis, output
position ``i`` reads a few input positions (its *taps*, one for nearest, two for linear, four for cubic, a window
for antialiasing) with weights. The taps are computed with PyTorch's formulas and in PyTorch's arithmetic
(float32 for float32 inputs), so that the same positions and weights come out; the map gathers along one axis at
a time, the last first, and the adjoint scatter-adds the weighted gradient back onto the taps.
"""
import math

import numpy as np

from ...core import dtype as dt
from ...core import layouts
from ...core.fused import fma
from ...core.random_math import _fma
from ...core.tensor import Tensor
from ...core.warnings_at_caller import warn
from ._common import scalar_name
from .cubic_kernel import _CUBIC_A, _cubic_far, _cubic_near
from .linear_maps import _node_pair, linear_op
from .pooling import adaptive_avg_pool2d

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]


# --- the nodes: one pair per mode and dimension --------------------------------------------------------------

def _upsample_pair(name):
    return _node_pair(f"{name}Backward0", f"{name}BackwardBackward0",
                      "out = Σ weight · x[tap] along each axis;  dx[tap] += weight · grad", __name__)


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
    "out = mean of each window;  dx[window] += grad / window size", __name__, backward_reads_input=True)


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
    taps = [(np.take(x, i, axis=axis), w.reshape(shape)) for i, w in zip(index, weights)]
    if len(taps) == 1 or x.dtype not in (np.float32, np.float64):
        out = taps[0][0] * taps[0][1]
        for tap, w in taps[1:]:
            out += tap * w
        return out
    # PyTorch's loop writes t0·w0 + t1·w1 + ...: GCC fuses the first product into the sum with the (rounded)
    # second, then each further product into the running sum
    out = fma(taps[0][0], taps[0][1], taps[1][0] * taps[1][1], x.dtype)
    for tap, w in taps[2:]:
        out = fma(tap, w, out, x.dtype)
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


def _separable_map(in_shape, taps_per_axis, compute, joint=False, linear_mode=False, cubic=False):
    """The map (gather along each spatial axis, the last first) and its adjoint, on arrays; float16 is
    computed in float32 and rounded once, as PyTorch does. ``joint``: bilinear, whose float32 and float64 forward
    PyTorch writes as one sum over every corner (``_joint_gather``); ``linear_mode``: the linear modes, whose
    gradient it adds corner by corner, output after output (``_ordered_linear_adjoint``)."""
    first = len(in_shape) - len(taps_per_axis)
    axes = list(enumerate(taps_per_axis, start=first))[::-1]
    in_sizes = in_shape[first:]
    two_taps = all(weights is not None and len(weights) == 2 for _, weights in taps_per_axis)
    joint = joint and two_taps
    linear_mode = linear_mode and two_taps
    cubic = cubic and len(taps_per_axis) == 2 and all(w is not None and len(w) == 4 for _, w in taps_per_axis)

    def linear(x):
        if joint and x.dtype in (np.float32, np.float64):
            return _joint_gather(x, first, taps_per_axis)
        out = x.astype(compute, copy=False) if dt.kind(x.dtype) == "f" else x
        for axis, taps in axes:
            out = _gather(out, axis, taps)
        return out.astype(x.dtype, copy=False)

    def adjoint(grad):
        g = grad.astype(compute, copy=False)
        if all(weights is None for _, weights in taps_per_axis):
            return _nearest_adjoint(g, first, taps_per_axis, in_sizes).astype(grad.dtype, copy=False)
        if linear_mode and g.dtype in (np.float32, np.float64):
            return _ordered_linear_adjoint(g, first, taps_per_axis, in_sizes).astype(grad.dtype, copy=False)
        if cubic and g.dtype in (np.float32, np.float64):
            return _ordered_cubic_adjoint(g, first, taps_per_axis, in_sizes).astype(grad.dtype, copy=False)
        for axis, taps in axes[::-1]:
            g = _scatter(g, axis, taps, in_sizes[axis - first])
        return g.astype(grad.dtype, copy=False)
    return linear, adjoint


def _joint_gather(x, first, taps_per_axis):
    """Bi- or trilinear interpolation as PyTorch's kernel writes it: the sum over the 4 (8) corners of the corner's
    weight (the axes' weights multiplied in order, rounded) times its value, GCC fusing the first product into the
    sum with the (rounded) second and each further one into the running sum."""
    terms = []
    for corner in np.ndindex(*[2] * len(taps_per_axis)):
        value, weight = x, None
        for axis, ((index, weights), k) in enumerate(zip(taps_per_axis, corner), start=first):
            value = np.take(value, index[k], axis=axis)
            shape = [1] * x.ndim
            shape[axis] = -1
            w = weights[k].astype(x.dtype).reshape(shape)
            weight = w if weight is None else weight * w
        terms.append((value, weight))
    out = fma(terms[0][0], terms[0][1], terms[1][0] * terms[1][1], x.dtype)
    for value, weight in terms[2:]:
        out = fma(value, weight, out, x.dtype)
    return out


def _ordered_linear_adjoint(grad, first, taps_per_axis, in_sizes):
    """The linear modes' adjoint as PyTorch's kernel adds it: output after output, each one's gradient times each
    corner's weight (the axes' weights multiplied in order, rounded) fused into the corner's input, corner after
    corner."""
    outputs = _output_positions(grad.shape[first:])
    corners = list(np.ndindex(*[len(index) for index, _ in taps_per_axis]))
    targets = np.zeros((len(outputs), len(corners)), np.int64)
    weights = np.ones((len(outputs), len(corners)), grad.dtype)
    for c, corner in enumerate(corners):
        for axis, ((index, axis_weights), k, size) in enumerate(zip(taps_per_axis, corner, in_sizes)):
            targets[:, c] = targets[:, c] * size + index[k][outputs[:, axis]]
            w = axis_weights[k][outputs[:, axis]].astype(grad.dtype)
            weights[:, c] = w if axis == 0 else weights[:, c] * w
    weights = weights.ravel()
    return _added_in_order(grad, first, in_sizes, targets.ravel(), len(corners),
                           lambda total, g, terms: fma(weights[terms], g, total, grad.dtype))


def _ordered_cubic_adjoint(grad, first, taps_per_axis, in_sizes):
    """Bicubic's adjoint as PyTorch's kernel adds it: output after output, over its 4 columns and within each its
    4 rows, ``(gradient · row weight) · column weight`` added to the tap's input (rounded step by step)."""
    outputs = _output_positions(grad.shape[first:])
    (rows, row_weights), (columns, column_weights) = taps_per_axis
    width = in_sizes[1]
    targets, factors = [], []
    for i in range(len(columns)):
        for j in range(len(rows)):
            targets.append(rows[j][outputs[:, 0]] * width + columns[i][outputs[:, 1]])
            factors.append((row_weights[j][outputs[:, 0]], column_weights[i][outputs[:, 1]]))
    targets = np.stack(targets, 1).ravel()
    wy = np.stack([f[0] for f in factors], 1).ravel().astype(grad.dtype)
    wx = np.stack([f[1] for f in factors], 1).ravel().astype(grad.dtype)
    return _added_in_order(grad, first, in_sizes, targets, len(factors),
                           lambda total, g, terms: total + (g * wy[terms]) * wx[terms])


def _output_positions(out_shape):
    """Every output position (row-major order), as a (count, dims) array."""
    return np.stack([axis.ravel() for axis in np.meshgrid(*[np.arange(o) for o in out_shape], indexing="ij")], 1)


def _added_in_order(grad, first, in_sizes, targets, per_output, add):
    """Terms added into the inputs in the order of ``targets`` (``per_output`` entries for each output, outputs in
    row-major order): ``add(total, gradient, terms)`` the new totals. An input so receives its terms in the kernel's
    order; the k-th term of every input is added at once (the inputs of one such step are all distinct)."""
    count = targets.size // per_output
    sources = np.repeat(np.arange(count), per_output)
    order = np.argsort(targets, kind="stable")
    starts = np.flatnonzero(np.diff(targets[order], prepend=-1))
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order))))
    g = grad.reshape(-1, count)
    out = np.zeros((g.shape[0], math.prod(in_sizes)), grad.dtype)
    for k in range(int(rank.max()) + 1 if len(rank) else 0):
        terms = order[rank == k]
        at = targets[terms]
        out[:, at] = add(out[:, at], g[:, sources[terms]], terms)
    return out.reshape(grad.shape[:first] + tuple(in_sizes))


def _nearest_adjoint(grad, first, taps_per_axis, in_sizes):
    """The nearest modes' adjoint as PyTorch's kernel adds it: each output's gradient into its input, output after
    output in order, so that an input read by several outputs sums them from zero in the outputs' order. Along each
    axis the outputs reading one input are a run; the runs' r-th members, over every axis in that order, are added
    at once (a run shorter than r adds zeros)."""
    runs = []
    for (index, _), size in zip(taps_per_axis, in_sizes):
        index = index[0]
        length = np.bincount(index, minlength=size)
        start = np.searchsorted(index, np.arange(size))
        runs.append((start, length, len(index)))
    out = np.zeros(grad.shape[:first] + tuple(in_sizes), grad.dtype)
    for offsets in np.ndindex(*[max(int(length.max()), 1) for _, length, _ in runs]):
        part, inside = grad, None
        for axis, ((start, length, count), r) in enumerate(zip(runs, offsets), start=first):
            part = np.take(part, np.minimum(start + r, count - 1), axis=axis)
            shape = [1] * grad.ndim
            shape[axis] = -1
            valid = (r < length).reshape(shape)
            inside = valid if inside is None else inside & valid
        out += np.where(inside, part, grad.dtype.type(0))
    return out


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
    if dt.kind(a.dtype) == "f" and not (kind == "antialias" and a.dtype == np.float16):
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
    linear, adjoint = _separable_map(a.shape, taps, opmath, joint=mode == "bilinear" and not antialias,
                                     linear_mode=mode in ("linear", "bilinear", "trilinear") and not antialias,
                                     cubic=mode == "bicubic" and not antialias)
    node = _NODES[(mode + ("-aa" if antialias else ""), dim)]
    follows = layouts.suggested_format(a)
    if follows is not None:         # a channels-last input: so is the result, as PyTorch's kernels lay it out
        resample = linear

        def linear(x):
            return layouts.laid_out(resample(x), follows)
    return linear_op(input, linear, adjoint, node)


def _area(input, output_size):
    """Mode 'area' is adaptive average pooling, recorded as PyTorch records it."""
    dim = input.dim() - 2
    a = input._data
    if dt.kind(a.dtype) != "f":
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
    warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
