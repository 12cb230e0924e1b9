"""Weight normalisation, ``torch._weight_norm(v, g, dim)``: ``w = v · g / ‖v‖``, the norm taken over every dim
of ``v`` but ``dim`` (over all of them for ``dim=-1``), with PyTorch's node ``WeightNormInterfaceBackward0`` where
PyTorch's CPU kernel has one (``dim`` first or last), composed of plain ops elsewhere, as PyTorch does.
``norm_except_dim`` is that norm, kept as size-1 dims."""
import numpy as np

from ...core import grad_mode
from ...core.node import Node, tangent_sum
from ...core.record import record, wants_grad, wrap
from ...core.tensor import Tensor
from ..reductions import LinalgVectorNormBackward0, vector_norm

__all__ = ["_weight_norm", "norm_except_dim"]


def _other_dims(ndim, dim):
    """The dims the norm runs over: all but ``dim`` (all of them when ``dim == -1``)."""
    return tuple(d for d in range(ndim) if d != dim)


class NormBackward0(LinalgVectorNormBackward0):
    """out = (Σ |x|ᵖ)^(1/p) over every element (``at::norm`` with no dim, as norm_except_dim calls it); the same
    rule"""


def _whole_norm(v, p):
    """``at::norm(v, p)``: vector_norm's value, recorded under PyTorch's name for it."""
    with grad_mode.no_grad():
        out = vector_norm(v, p)
    if wants_grad(v):
        record(NormBackward0, (v,), out, (v, out), ord=float(p), axes=tuple(range(v.dim())), keepdim=False)
    return out


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shape ``v.shape`` with 1 in the other dims;
    ``dim=-1``: the norm of the whole tensor, a 0-dim tensor."""
    if dim == -1:
        return _whole_norm(v, pow)
    dims = list(_other_dims(v.dim(), dim))
    return v.norm(pow, dim=dims, keepdim=True) if dims else v.abs()


class WeightNormInterfaceBackward0(Node):
    """out = v · g / n,  n = ‖v‖ over the other dims;  dg = Σ grad·v / n;  dv = (g/n)·grad − v·(g/n³)·Σ grad·v"""
    __slots__ = ()
    formula = "∂w/∂g = v/‖v‖,  ∂w/∂v = (g/‖v‖)(I − v̂v̂ᵀ)"
    aten_name = "_weight_norm_interface"
    dims: tuple

    def _norm(self, ops, v):
        return ops.sqrt(ops.sum(v * v, self.dims, keepdim=True))

    def backward(self, ops, grad):
        v, g = self.saved(ops)
        n = self._norm(ops, v)
        # The engine sums dg down to g's shape (the size-1 dims), so the rule can leave it at v's shape.
        dg = grad * v / n
        g_over_n3 = g / (n * n * n)
        dv = grad * (g / n) - v * (g_over_n3 * ops.sum(grad * v, self.dims, keepdim=True))
        return dv, dg

    def jvp(self, ops, v_t, g_t):
        v, g = self.saved(ops)
        n = self._norm(ops, v)
        d_from_g = None if g_t is None else v * (g_t / n)
        d_from_v = None
        if v_t is not None:
            d_from_v = v_t * (g / n) - v * (g / (n * n * n) * ops.sum(v * v_t, self.dims, keepdim=True))
        return tangent_sum(d_from_v, d_from_g)


def _weight_norm(v, g, dim=0):
    """``v · g / ‖v‖`` with the norm over every dim but ``dim`` (``dim=-1``: all of them); ``g`` has ``v``'s
    shape with 1 in the normed dims (what ``norm_except_dim`` gives), or is 0-dim for ``dim=-1``."""
    if not isinstance(v, Tensor) or not isinstance(g, Tensor):
        raise TypeError("_weight_norm(): argument 'v' and 'g' must be Tensor")
    if dim not in (0, v.dim() - 1):
        # PyTorch's CPU kernel (one node) serves only the first and last dims; the others are composed.
        return v * (g / norm_except_dim(v, 2, dim))
    dims = _other_dims(v.dim(), dim)
    va, ga = v._data, g._data
    n = np.sqrt(np.sum(va * va, axis=dims, keepdims=True))
    out = wrap((va * (ga / n)).astype(va.dtype, copy=False))
    if wants_grad(v, g):
        record(WeightNormInterfaceBackward0, (v, g), out, saved=(v, g), dims=dims)
    return out
