"""Norms and distances: ``normalize``, ``cosine_similarity`` and ``pairwise_distance``, composed as PyTorch
composes them, and ``pdist``, the distances between all pairs of rows, with its own node (``PdistBackward0``)."""
import math

import numpy as np

from ...core import dtype as dt
from ...core import grad_mode
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from .. import arithmetic
from ..reductions import LinalgVectorNormBackward0, normalize_dims, vector_norm
from ._array_rules import arrays_only
from ._common import add_scalar

__all__ = ["cosine_similarity", "normalize", "pairwise_distance", "pdist"]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(‖input‖ₚ, eps) along ``dim``."""
    denom = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / denom.clamp_min(eps).expand_as(input)
    return arithmetic.div(input, denom.clamp_min_(eps).expand_as(input), out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Σ (x1/‖x1‖)·(x2/‖x2‖) along ``dim``, each norm clamped below at ``eps``; x1 and x2 broadcast."""
    common = dt.result_type(x1, x2)
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
    with grad_mode.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


class NormBackward1(LinalgVectorNormBackward0):
    """out = (Σ |x|ᵖ)^(1/p) over dim (``at::norm`` with a dim, as pairwise_distance calls it); the same rule"""


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 - x2 + eps‖ₚ along the last dimension."""
    ndim = max(x1.dim(), x2.dim())
    diff = add_scalar(x1 - x2, eps)
    with grad_mode.no_grad():
        out = vector_norm(diff, p, ndim - 1, keepdim)
    if wants_grad(diff):
        record(NormBackward1, (diff,), out, (diff, out), ord=float(p), axes=normalize_dims(ndim - 1, diff.dim()),
               keepdim=keepdim)
    return out


# --- pdist: the distances between all pairs of rows -------------------------------------------------------------------

def _pdist_values(diff, p):
    """The p-norm of each row of ``diff`` (``x_i - x_j`` for every pair)."""
    a = np.abs(diff)
    if p == 0:
        return (a != 0).sum(axis=1).astype(diff.dtype)
    if p == 1:
        return a.sum(axis=1)
    if p == 2:
        return np.sqrt((a * a).sum(axis=1))
    if math.isinf(p):
        return a.max(axis=1, initial=0)
    return (a ** p).sum(axis=1) ** (1 / p)


def _pdist_slopes(diff, dist, p):
    """∂‖x_i - x_j‖ₚ / ∂x_i for each pair (x_j receives the negative); 0 where the distance is 0."""
    d = dist[:, None]
    if p == 0:
        return np.zeros_like(diff)
    if p == 1:
        return np.sign(diff)
    if math.isinf(p):
        return np.sign(diff) * (np.abs(diff) == d)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2:
            slope = diff / d
        elif p < 2:
            slope = np.sign(diff) * np.abs(diff) ** (p - 1) / d ** (p - 1)
            slope = np.where(diff == 0, 0, slope)     # |0|^(p-1) is infinite for p < 1: PyTorch takes 0
        else:
            slope = diff * np.abs(diff) ** (p - 2) / d ** (p - 1)
    return np.where(d == 0, 0, slope)


class PdistBackward0(Node):
    """out[(i, j)] = ‖x_i - x_j‖ₚ for i < j;  dx_i += grad·s,  dx_j -= grad·s,  s = sign(x_i - x_j)·|x_i - x_j|^(p-1) /
    out^(p-1)"""
    formula = "∂‖xᵢ − xⱼ‖ₚ/∂xᵢ = sign(d)·|d|^(p−1) / ‖d‖ₚ^(p−1),  d = xᵢ − xⱼ"
    aten_name = "_pdist_forward"

    def backward(self, ops, grad):
        arrays_only(ops, "pdist")
        x, dist = self.saved(ops)
        i, j = self.pairs
        step = _pdist_slopes(x[i] - x[j], dist, self.p) * grad[:, None]
        dx = np.zeros_like(x)
        np.add.at(dx, i, step)
        np.add.at(dx, j, -step)
        return (dx,)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of ``input (N, M)``: the ``N·(N-1)/2`` entries above
    the diagonal of the distance matrix, row by row."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if dt.kind(input._data.dtype) != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    input = input.contiguous()
    xa = input._data
    pairs = np.triu_indices(xa.shape[0], 1)
    result = wrap(_pdist_values(xa[pairs[0]] - xa[pairs[1]], p).astype(xa.dtype, copy=False))
    if wants_grad(input):
        record(PdistBackward0, (input,), result, saved=(input, result), pairs=pairs, p=float(p))
    return result
