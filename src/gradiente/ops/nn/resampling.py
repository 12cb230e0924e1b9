"""Resampling, gathered: the public names of the resampling families, which ``nn.functional`` star-imports.

Each family lives in a module of its own: ``interpolation`` (``interpolate`` and the deprecated ``upsample*``),
``patches`` (``pixel_shuffle``/``pixel_unshuffle``, ``unfold``/``fold``), ``rrelu`` and ``grid_sampling``
(``affine_grid``, ``grid_sample``); ``linear_maps`` holds the node pair they share for ops linear in their
input, and ``cubic_kernel`` the cubic weights both interpolation and grid sampling use.
"""
from .grid_sampling import affine_grid, grid_sample
from .interpolation import interpolate, upsample, upsample_bilinear, upsample_nearest
from .patches import fold, pixel_shuffle, pixel_unshuffle, unfold
from .rrelu import rrelu, rrelu_

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
