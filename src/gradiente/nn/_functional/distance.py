"""Norm-based functions, composed as PyTorch composes them: ``normalize``, ``cosine_similarity``,
``pairwise_distance``."""
import numpy as np

import gradiente

from ...ops._record import record, wants_grad
from ...ops.reductions import LinalgVectorNormBackward0, normalize_dims, vector_norm
from ._common import add_scalar

__all__ = ["cosine_similarity", "normalize", "pairwise_distance"]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(‖input‖ₚ, eps) along ``dim``."""
    denom = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / denom.clamp_min(eps).expand_as(input)
    return gradiente.div(input, denom.clamp_min_(eps).expand_as(input), out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Σ (x1/‖x1‖)·(x2/‖x2‖) along ``dim``, each norm clamped below at ``eps``; x1 and x2 broadcast."""
    common = gradiente.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common._legacy[:-len('Tensor')]}")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(common)
    if not x2.dtype.is_floating_point:
        x2 = x2.to(common)
    if x1.shape != x2.shape:        # PyTorch's expand_outplace: both expanded as soon as the shapes differ
        shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        x1, x2 = x1.expand(shape), x2.expand(shape)
    # Each norm divides first (results stay in [-1, 1]); clones, so the clamp can be in place, unrecorded.
    n1 = vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = vector_norm(x2, 2, dim, keepdim=True).clone()
    with gradiente.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


class NormBackward1(LinalgVectorNormBackward0):
    """out = (Σ |x|ᵖ)^(1/p) over dim (``at::norm`` with a dim, as pairwise_distance calls it); the same rule"""


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 - x2 + eps‖ₚ along the last dimension."""
    ndim = max(x1.dim(), x2.dim())
    diff = add_scalar(x1 - x2, eps)
    with gradiente.no_grad():
        out = vector_norm(diff, p, ndim - 1, keepdim)
    if wants_grad(diff):
        record(NormBackward1, (diff,), out, (diff, out), ord=float(p), axes=normalize_dims(ndim - 1, diff.dim()),
               keepdim=keepdim)
    return out
