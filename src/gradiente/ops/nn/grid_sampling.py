"""``affine_grid`` and ``grid_sample``: build a grid of normalized sampling positions from affine maps, and sample
an image (or volume) at such a grid.

``affine_grid`` is linear in ``theta``; ``grid_sample`` is not linear in its grid, and its rule runs on arrays
only (no second derivatives).

A 2-d ``grid_sample`` rounds as PyTorch's vectorized CPU kernel (``GridSamplerKernel.cpp``, its AVX2 build, one
thread) computes it, measured equal to torch 2.13 in the output and both gradients: positions unnormalized as
``(g + 1)·size/2 − ½`` fused (``align_corners=False``); the bilinear corners added as a chain of fused multiply-adds
from north-west to south-east; the input's gradient scattered in float32, 8 output positions at a time, corner by
corner; the grid's gradient ``Σ_c ((v_ne − v_nw)·s + (v_se − v_sw)·n)·g_c`` with each product fused into the next sum.
Volumes (PyTorch's scalar kernel) keep the plain formulas.
"""
import functools
import itertools

import numpy as np

from ...core import dtype as dt
from ...core.creation import linspace
from ...core.fused import fma
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.warnings_at_caller import warn
from ..autocast import autocast_entry
from ._array_rules import arrays_only
from ._common import scalar_name
from .cubic_kernel import _CUBIC_A, _cubic_far, _cubic_near, _cubic_slope_far, _cubic_slope_near

__all__ = ["affine_grid", "grid_sample"]


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
        warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
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
        warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
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

def _unnormalize(coord, size, align_corners, vectorized=False):
    """Grid coordinates in [-1, 1] as input pixel positions (-1 and 1 at the corner pixels' centres with
    ``align_corners``, else at their outer edges), and d(position)/d(coordinate). ``vectorized``: as the 2-d
    kernel computes them, ``(g + 1)·(size/2) − ½`` in one fused step."""
    one = coord.dtype.type(1)
    if align_corners:
        return (coord + one) / 2 * (size - 1), coord.dtype.type((size - 1) / 2)
    half_size = coord.dtype.type(size / 2)
    if vectorized:
        return fma(coord + one, half_size, coord.dtype.type(-0.5), coord.dtype), half_size
    return ((coord + one) * size - 1) / 2, half_size


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


def _axis_taps(coord, size, mode, padding_mode, align_corners, vectorized=False):
    """The taps along one axis: (input position, weight, d weight / d coordinate) for each, and the
    coordinate's slope. Nearest and linear taps read the padded position; cubic taps are the four pixels
    around the raw position, each padded on its own (so padding adds nothing to the slope)."""
    x, slope = _unnormalize(coord, size, align_corners, vectorized and mode != "bicubic")
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
    its weight (0 where it falls outside the input), d weight / d coordinate for each coordinate and whether it
    falls inside; with each coordinate's slope, and each axis's weights. ``coords[..., k]`` runs along the k-th axis
    from the last."""
    per_axis, slopes = [], []
    for k, size in enumerate(reversed(spatial)):
        taps, slope = _axis_taps(coords[..., k], size, mode, padding_mode, align_corners, len(spatial) == 2)
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
        combined.append((index, weight, partials, inside))
    return combined, slopes, [[w for _, w, _ in taps] for taps in per_axis]


class GridSampler2DBackward0(Node):
    """out[n, c, p] = Σ_taps w(grid[n, p]) · x[n, c, tap];  dx[n, c, tap] += w · grad;
    dgrid[n, p] = Σ_c grad · Σ_taps x[n, c, tap] · ∂w/∂grid"""
    formula = "∂out/∂x = the tap weights;  ∂out/∂grid = Σ x[tap] · ∂w/∂grid"
    aten_name = "grid_sampler_2d"

    def backward(self, ops, grad):
        arrays_only(ops, "grid_sample")
        x, _ = self.saved(ops)
        n, c = x.shape[:2]
        volume = int(np.prod(x.shape[2:]))
        g = grad.reshape(n, c, self.taps[0][0].shape[1])
        dx = dgrid = None
        if self.axis_weights is not None:
            return _bilinear_2d_gradients(x, g, self.taps, self.axis_weights, self.slopes, self.grid_shape,
                                          tuple(edge is not None for edge, _ in self.next_functions))
        if self.next_functions[0][0] is not None:
            # each output position's taps in turn, added in the gradient's dtype, as PyTorch's loops scatter them
            planes = (np.arange(n * c) * volume).reshape(n, c, 1)
            flat = np.stack([planes + index[:, None, :] for index, _, _, _ in self.taps], axis=-1).ravel()
            weighted = np.stack([g * weight[:, None, :] for _, weight, _, _ in self.taps], axis=-1).ravel()
            dx = np.zeros(n * c * volume, x.dtype)
            np.add.at(dx, flat, weighted)
            dx = dx.reshape(x.shape)
        if self.next_functions[1][0] is not None:
            values = x.reshape(n, c, volume)
            dcoords = [np.zeros((n, g.shape[2]), x.dtype) for _ in self.slopes]
            for index, _, partials, _ in self.taps:
                along = (np.take_along_axis(values, index[:, None, :], axis=2) * g).sum(axis=1)
                for dcoord, partial in zip(dcoords, partials):
                    dcoord += along * partial
            dgrid = np.stack([d * slope for d, slope in zip(dcoords, self.slopes)], axis=-1).reshape(self.grid_shape)
        return dx, dgrid


class GridSampler3DBackward0(GridSampler2DBackward0):
    """The volumetric form: the same rule over (D, H, W)."""
    aten_name = "grid_sampler_3d"


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
    if dt.kind(a) != "f":
        raise NotImplementedError(f'"grid_sampler_{dims - 2}d_cpu_kernel_impl" not implemented for '
                                  f"'{scalar_name(a)}'")


@autocast_entry
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
        warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    xa, ga = input._data, grid._data
    n, c, *spatial = xa.shape
    coords = ga.reshape(n, int(np.prod(ga.shape[1:-1])), len(spatial))
    taps, slopes, axis_weights = _sampling_taps(coords, spatial, mode, padding_mode, align_corners)
    values = xa.reshape(n, c, int(np.prod(spatial)))
    vector_kernel = len(spatial) == 2 and mode == "bilinear" and xa.dtype in (np.float32, np.float64)
    out = np.zeros((n, c, coords.shape[1]), dtype=xa.dtype)
    for number, (index, weight, _, _) in enumerate(taps):
        tap = np.take_along_axis(values, index[:, None, :], axis=2)
        if vector_kernel:       # the corners as one chain of fused multiply-adds, north-west first
            out = tap * weight[:, None, :] if number == 0 else fma(tap, weight[:, None, :], out, xa.dtype)
        else:
            out += tap * weight[:, None, :]
    result = wrap(out.reshape((n, c) + ga.shape[1:-1]))
    if wants_grad(input, grid):
        node = GridSampler2DBackward0 if len(spatial) == 2 else GridSampler3DBackward0
        record(node, (input, grid), result, (input, grid), taps=taps, slopes=slopes, grid_shape=ga.shape,
               axis_weights=axis_weights if vector_kernel else None)
    return result


def _bilinear_2d_gradients(x, g, taps, axis_weights, slopes, grid_shape, needs):
    """``(dx, dgrid)`` of a 2-d bilinear ``grid_sample`` in the order of PyTorch's vectorized kernel (see the
    module's docstring): ``g`` the output's gradient (N, C, P); ``taps`` the four corners (north-west, north-east,
    south-west, south-east) as ``_sampling_taps`` gives them; ``axis_weights`` each axis's two weights, ``[[e, w],
    [s, n]]`` (the distances to the far side along x, then along y)."""
    n, c = x.shape[:2]
    positions = g.shape[2]
    dx = dgrid = None
    if needs[0] and not g.size:
        dx = np.zeros_like(x)
    elif needs[0]:
        lanes = 32 // x.itemsize                      # (a 256-bit vector's positions)
        planes = (np.arange(n * c) * int(np.prod(x.shape[2:]))).reshape(n, c, 1, 1)
        index = planes + np.stack([corner for corner, _, _, _ in taps], axis=1)[:, None]      # (N, C, 4, P)
        value = g[:, :, None] * np.stack([weight for _, weight, _, _ in taps], axis=1)[:, None]
        inside = np.broadcast_to(np.stack([ok for _, _, _, ok in taps], axis=1)[:, None], index.shape)
        whole = positions - positions % lanes
        # each block of positions corner by corner, then the positions left over, as the kernel scatters them
        arranged = [np.concatenate([a[..., :whole].reshape(n, c, 4, whole // lanes, lanes).transpose(0, 1, 3, 2, 4)
                                    .reshape(n, c, -1), a[..., whole:].reshape(n, c, -1)], axis=2)
                    for a in (index, value, inside)]
        index, value, inside = arranged
        flat = np.zeros(x.size, x.dtype)
        np.add.at(flat, index[inside], value[inside])      # (in order, in the gradient's dtype)
        dx = flat.reshape(x.shape)
    if needs[1]:
        values = x.reshape(n, c, -1)
        nw, ne, sw, se = (np.take_along_axis(values, index[:, None, :], axis=2) * ok[:, None, :]
                          for index, _, _, ok in taps)
        (e, w), (s, south) = axis_weights
        gx = np.zeros((n, positions), x.dtype)
        gy = np.zeros((n, positions), x.dtype)
        for channel in range(c):
            go = g[:, channel]
            along_x = fma(se[:, channel] - sw[:, channel], south, (ne[:, channel] - nw[:, channel]) * s, x.dtype)
            along_y = fma(se[:, channel] - ne[:, channel], w, (sw[:, channel] - nw[:, channel]) * e, x.dtype)
            gx = fma(along_x, go, gx, x.dtype)
            gy = fma(along_y, go, gy, x.dtype)
        dgrid = np.stack([gx * slopes[0], gy * slopes[1]], axis=-1).reshape(grid_shape)
    return dx, dgrid
