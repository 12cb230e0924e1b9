"""Products beyond matmul and the matrix helpers around them: tensordot, inner, vdot, kron, addmv, addr,
cross, cdist, dist, diag_embed, block_diag, chain_matmul; and the top-level names PyTorch keeps for its
``linalg`` ops (det, logdet, slogdet, inverse, matrix_power, pinverse), which call ``gradiente.linalg``.

Where PyTorch composes an op from others (tensordot is a permute, a reshape, one ``mm`` and a view), so do
we, and the graph shows the same nodes; ops that PyTorch records as one node (AddmvBackward0,
LinalgCrossBackward0, CdistBackward0, ...) have their rule here.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.inplace import make_inplace
from ..core.node import Node
from ..core.record import as_result, promote_operands, record, wants_grad, wrap
from ..core.rules import numpy_ops
from ..core.tensor import Tensor, _wrap_dim
from ..core.warnings_at_caller import warn
from .autocast import autocast_entry
from .joining import cat
from .matmul import _scaled_sum, dot, matmul, mm
from .rearranging import DiagEmbedBackward0
from .reductions import LinalgVectorNormBackward0, vector_norm
from .views import _fmt, _unsafe_view, clone, infer_size, permute, reshape, view

__all__ = ["addmv", "addmv_", "addr", "block_diag", "cdist", "chain_matmul", "cross", "det", "diag_embed", "diagflat",
           "dist", "inner", "inverse", "kron", "logdet", "matrix_power", "pinverse", "slogdet", "tensordot", "vdot"]


def _needs(node, i):
    """Whether input ``i`` of ``node`` wants a gradient."""
    return node.next_functions[i][0] is not None


# --- tensordot, inner, vdot, kron --------------------------------------------------------------------------

def _contraction_dims(dims, ndim_a, ndim_b):
    """``dims`` of tensordot as two equal-length lists of axes (as the user wrote them, for messages)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(ndim_a, ndim_b):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = dims
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return dims_a, dims_b


@autocast_entry
def tensordot(a, b, dims=2, out=None):
    """Sum of products over the dims ``dims`` pairs up: an int ``n`` contracts the last ``n`` dims of ``a``
    with the first ``n`` of ``b``; ``([1, 0], [0, 1])`` names the pairs. Computed as PyTorch computes it:
    both operands permuted and reshaped to matrices, one ``mm`` (``dot`` of two vectors where every dim
    contracts), a view to the result's shape."""
    xa, ya = a._data, b._data
    if xa.dtype != ya.dtype:
        raise RuntimeError("both inputs should have same dtype")
    given_a, given_b = _contraction_dims(dims, xa.ndim, ya.ndim)
    axes_a = [_wrap_dim(d, xa.ndim) for d in given_a]
    axes_b = [_wrap_dim(d, ya.ndim) for d in given_b]
    for da, db, ia, ib in zip(given_a, given_b, axes_a, axes_b):
        sa, sb = xa.shape[ia], ya.shape[ib]
        if sa != sb:
            if sa == 1:                         # a size-1 dim contracts with the sum of the other side
                b = b.sum(ib, keepdim=True)
            elif sb == 1:
                a = a.sum(ia, keepdim=True)
            else:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {da} and "
                                   f"second has size {sb} in dim {db}")
    free_a = [i for i in range(xa.ndim) if i not in axes_a]
    free_b = [i for i in range(ya.ndim) if i not in axes_b]
    shape_a, shape_b = a._data.shape, b._data.shape
    rows, cols = tuple(shape_a[i] for i in free_a), tuple(shape_b[i] for i in free_b)
    k = math.prod(shape_a[i] for i in axes_a)
    if math.prod(rows) == 1 and math.prod(cols) == 1:
        # everything contracts: PyTorch takes the dot product of the two flattened operands (DotBackward0)
        left, right = permute(a, free_a + axes_a).flatten(), permute(b, axes_b + free_b).flatten()
        result = reshape(dot(left, right), rows + cols)
    else:
        left = reshape(permute(a, free_a + axes_a), (math.prod(rows), k))
        right = reshape(permute(b, axes_b + free_b), (k, math.prod(cols)))
        result = reshape(mm(left, right), rows + cols)
    return result if out is None else out.copy_(result)


def inner(input, other, *, out=None):
    """Sum of products over the last dim of both: ``out[i.., j..] = Σₖ input[i.., k] other[j.., k]``; a product
    when either is 0-d."""
    xa, ya = input._data, other._data
    if xa.ndim == 0 or ya.ndim == 0:
        return input * other
    if xa.shape[-1] != ya.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{_fmt(xa.shape)} and {_fmt(ya.shape)}")
    return tensordot(input, other, ([-1], [-1]), out=out)


class VdotBackward0(Node):
    """out = Σ conj(x)·y (1-D);  dx = conj(grad) * y;  dy = grad * x (out is conjugate-linear in x)"""
    complex_ok = True
    __slots__ = ()
    formula = "∂(x̄·y)/∂x̄ = y,  ∂(x̄·y)/∂y = x̄"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        return (ops.conj(grad) * y if _needs(self, 0) else None, grad * x if _needs(self, 1) else None)


def vdot(input, other, *, out=None):
    """The inner product of two 1-D tensors, the first conjugated (for real tensors, ``dot``)."""
    value = dot(input.detach(), other.detach())._data   # dot's checks and messages are vdot's
    if value.dtype.kind == "c":
        value = np.asanyarray(np.vdot(input._data, other._data))
    result = wrap(value)
    if wants_grad(input, other):
        record(VdotBackward0, (input, other), result, (input, other))
    return result if out is None else out.copy_(result)


def kron(input, other):
    """The Kronecker product: each element of ``input`` scales a whole copy of ``other``. Shapes are padded
    with leading 1s to one rank; the result's size in each dim is the product of the two sizes."""
    xa, ya = input._data, other._data
    n = max(xa.ndim, ya.ndim)
    sa, sb = (1,) * (n - xa.ndim) + xa.shape, (1,) * (n - ya.ndim) + ya.shape
    # Interleave the dims, (a0, 1, a1, 1, ...) times (1, b0, 1, b1, ...), and the broadcast product laid out
    # as (a0, b0, a1, b1, ...) is the Kronecker product once adjacent pairs are merged.
    spread_a = _unsafe_view(input, xa.reshape(tuple(s for d in sa for s in (d, 1))))
    spread_b = _unsafe_view(other, ya.reshape(tuple(s for d in sb for s in (1, d))))
    product = spread_a * spread_b
    return _unsafe_view(product, product._data.reshape(tuple(p * q for p, q in zip(sa, sb))))


# --- addmv, addr ----------------------------------------------------------------------------------------------

class AddmvBackward0(Node):
    """out = β·b + α·(A @ v);  db = β·grad;  dA = α·outer(grad, v);  dv = α·Aᵀ @ grad"""
    holomorphic = True
    __slots__ = ()
    formula = "∂/∂b = β,  ∂/∂A = α·g·vᵀ,  ∂/∂v = α·Aᵀ·g"

    def backward(self, ops, grad):
        mat, vec = self.saved(ops)
        g = grad if self.alpha == 1 else grad * self.alpha
        return ((grad if self.beta == 1 else grad * self.beta) if _needs(self, 0) else None,
                ops.unsqueeze(g, -1) * ops.unsqueeze(vec, 0) if _needs(self, 1) else None,
                ops.matmul(ops.transpose(mat, 0, 1), g) if _needs(self, 2) else None)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``, ``input`` broadcast to the product's length."""
    ba, ma, va = input._data, mat._data, vec._data
    if ma.ndim != 2 or va.ndim != 1 or ba.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {ba.ndim}, {ma.ndim}, {va.ndim}")
    if ma.shape[1] != va.shape[0] or (ba.size != ma.shape[0] and ba.size != 1):
        raise RuntimeError(f"size mismatch, got input ({ba.shape[0] if ba.ndim else 1}), mat "
                           f"({ma.shape[0]}x{ma.shape[1]}), vec ({va.shape[0]})")
    if not ba.dtype == ma.dtype == va.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {scalar_name(ba.dtype)}, "
                           f"{scalar_name(ma.dtype)}, and {scalar_name(va.dtype)}")
    result = wrap(_scaled_sum(np.matmul(dt.widened(ma), dt.widened(va)), input, (ma.shape[0],), beta, alpha))
    if wants_grad(input, mat, vec):
        record(AddmvBackward0, (input, mat, vec), result, (mat, vec), alpha=alpha, beta=beta)
    return result if out is None else out.copy_(result)


_addmv_in_place = make_inplace(addmv, "addmv_")


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """``addmv`` written into ``input``, which must already have the product's length (as ``Tensor.addmv_``)."""
    rows = mat.shape[0] if mat.dim() == 2 else None
    if vec.dim() == 1 and rows is not None and mat.shape[1] == vec.shape[0] and input.numel() == 1 != rows:
        raise RuntimeError(f"Bad in-place call: input tensor size [{', '.join(map(str, input.shape))}] and output "
                           f"tensor size [{rows}] should match")
    return _addmv_in_place(input, mat, vec, beta=beta, alpha=alpha)


class AddrBackward0(Node):
    """out = β·b + α·outer(u, v);  db = β·grad;  du = α·grad @ v;  dv = α·gradᵀ @ u"""
    holomorphic = True
    __slots__ = ()
    formula = "∂/∂b = β,  ∂/∂u = α·G·v,  ∂/∂v = α·Gᵀ·u"

    def backward(self, ops, grad):
        u, v = self.saved(ops)
        g = grad if self.alpha == 1 else grad * self.alpha
        return ((grad if self.beta == 1 else grad * self.beta) if _needs(self, 0) else None,
                ops.matmul(g, v) if _needs(self, 1) else None,
                ops.matmul(ops.transpose(g, 0, 1), u) if _needs(self, 2) else None)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``, ``input`` broadcast to the outer product's shape."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    target = dt.result_type(input, vec1, vec2)._np
    product = np.multiply.outer(vec1._data.astype(target, copy=False), vec2._data.astype(target, copy=False))
    base = input if input._data.dtype == target else input.detach().to(dt.FROM_NUMPY[target])
    result = wrap(_scaled_sum(product, base, product.shape, beta, alpha))
    if wants_grad(input, vec1, vec2):
        record(AddrBackward0, (input, vec1, vec2), result, (vec1, vec2), alpha=alpha, beta=beta)
    return result if out is None else out.copy_(result)


# --- cross ----------------------------------------------------------------------------------------------

def _cross(ops, x, y, dim):
    """The cross product along ``dim`` (of size 3): ``outᵢ = xᵢ₊₁ yᵢ₊₂ − xᵢ₊₂ yᵢ₊₁``, indices mod 3."""
    return ops.roll(x, -1, dim) * ops.roll(y, -2, dim) - ops.roll(x, -2, dim) * ops.roll(y, -1, dim)


class LinalgCrossBackward0(Node):
    """out = x × y;  dx = y × grad;  dy = grad × x"""
    holomorphic = True
    __slots__ = ()
    formula = "∂(x×y)/∂x: g ↦ y×g,  ∂(x×y)/∂y: g ↦ g×x"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        return (_cross(ops, y, grad, self.dim) if _needs(self, 0) else None,
                _cross(ops, grad, x, self.dim) if _needs(self, 1) else None)


def linalg_cross(input, other, dim=-1):
    """The cross product of 3-vectors along ``dim``; other dims broadcast (``torch.linalg.cross``)."""
    xa, ya = input._data, other._data
    if xa.ndim != ya.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, xa.ndim)
    if xa.shape[d] != 3 or ya.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {xa.shape[d]} and "
                           f"{ya.shape[d]}")
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(xa.dtype)} but found {scalar_name(ya.dtype)}")
    shape = infer_size(xa.shape, ya.shape)
    result = wrap(_cross(numpy_ops, np.broadcast_to(xa, shape), np.broadcast_to(ya, shape), d))
    if wants_grad(input, other):
        record(LinalgCrossBackward0, (input, other), result, (input, other), dim=d)
    return result


_CROSS_DEFAULT_DIM = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release. (Triggered internally at "
                      "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")
#: the once-only warnings given so far: PyTorch gives that one once per process (TORCH_WARN_ONCE)
_warned: set = set()


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along ``dim``. Without ``dim``, PyTorch's deprecated default: the first
    dim of size 3 of ``input`` (with a warning); ``linalg.cross`` uses the last dim instead."""
    if dim is None:
        if "cross" not in _warned:
            _warned.add("cross")
            warn(_CROSS_DEFAULT_DIM, UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(input._data.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    result = linalg_cross(input, other, dim)
    return result if out is None else out.copy_(result)


# --- cdist, dist --------------------------------------------------------------------------------------------

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


class CdistBackward0(Node):
    """out[i, j] = ‖x1ᵢ − x2ⱼ‖ₚ;  dx1ᵢ = Σⱼ grad[i, j]·w(x1ᵢ − x2ⱼ);  dx2ⱼ = −Σᵢ grad[i, j]·w(x1ᵢ − x2ⱼ),
    w(d) = sign(d)·|d|ᵖ⁻¹ / ‖d‖ₚᵖ⁻¹ (p = 2: d / ‖d‖; p = ∞: sign(d) where |d| is the largest)"""
    __slots__ = ()
    formula = "∂‖x1ᵢ − x2ⱼ‖ₚ/∂x1ᵢ = sign(d)·|d|ᵖ⁻¹ / ‖d‖ₚᵖ⁻¹"

    def backward(self, ops, grad):
        x1, x2, out = self.saved(ops)
        p = self.p
        if p == 0:
            return ops.zeros_like(x1), ops.zeros_like(x2)
        diff = ops.unsqueeze(x1, -2) - ops.unsqueeze(x2, -3)            # (..., P, R, M)
        norm = ops.unsqueeze(out, -1)
        raw_diff, raw_norm = ops.raw(diff), ops.raw(norm)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 1:
                weight = ops.sign(diff)
            elif p == 2:
                weight = ops.mask(raw_norm != 0, diff / norm)
            elif math.isinf(p):
                # unlike max's rule, every coordinate that attains the maximum gets the whole gradient
                weight = ops.mask(np.abs(raw_diff) == raw_norm, ops.sign(diff))
            else:
                scaled = ops.sign(diff) * ops.mask(raw_diff != 0, ops.abs(diff) ** (p - 1))
                weight = ops.mask(raw_norm != 0, scaled / norm ** (p - 1))
        weighted = ops.unsqueeze(grad, -1) * weight
        return (ops.sum(weighted, -2) if _needs(self, 0) else None,
                -ops.sum(weighted, -3) if _needs(self, 1) else None)


def _pairwise_norms(diff, p):
    """‖·‖ₚ over the last axis of an array of differences."""
    absolute = np.abs(diff)
    if p == 0:
        return (diff != 0).sum(-1).astype(diff.dtype)
    if p == 1:
        return absolute.sum(-1)
    if p == 2:
        return np.sqrt((absolute * absolute).sum(-1))
    if math.isinf(p):
        return absolute.max(-1, initial=0)
    return (absolute ** p).sum(-1) ** (1 / p)


def _check_cdist(x1, x2, p, compute_mode):
    a, b = x1._data, x2._data
    for name, t in (("X1", a), ("X2", b)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    for name, t in (("X1", a), ("X2", b)):
        if dt.kind(t.dtype) != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {scalar_name(t.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _COMPUTE_MODES and compute_mode is not None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(a.dtype)} but found {scalar_name(b.dtype)}")


@autocast_entry
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of ``x1`` ``(..., P, M)`` and each row of ``x2`` ``(..., R, M)``:
    ``(..., P, R)``, batch dims broadcast. For p = 2 with more than 25 rows on either side (or when asked),
    PyTorch computes ‖a‖² + ‖b‖² − 2a·b with one matrix product; so do we, recorded as one EuclideanDistBackward0
    as PyTorch records it."""
    _check_cdist(x1, x2, p, compute_mode)
    a, b = x1._data, x2._data
    batch = infer_size(a.shape[:-2], b.shape[:-2])
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist"
                         or (compute_mode in (None, _COMPUTE_MODES[0]) and (a.shape[-2] > 25 or b.shape[-2] > 25)))
    if use_mm:
        return _euclidean_dist_of_batches(x1, x2, batch)
    with np.errstate(over="ignore"):
        value = _pairwise_norms(a[..., :, None, :] - b[..., None, :, :], float(p))
    result = as_result(value, a.dtype)
    if wants_grad(x1, x2):
        record(CdistBackward0, (x1, x2), result, (x1, x2, result), p=float(p))
    return result


class EuclideanDistBackward0(Node):
    """out = √(‖a‖² − 2a·b + ‖b‖²) for all row pairs;  r = grad / out (0 where out = 0);
    da = a·Σ_b r − r @ b;  db = b·Σ_a r − rᵀ @ a"""
    formula = "∂‖a − b‖/∂a = (a − b)/‖a − b‖,  0 where a = b"

    def backward(self, ops, grad):
        x1, x2, out = self.saved(ops)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = ops.mask(ops.raw(out) != 0, grad / out)
        return (x1 * ops.sum(ratio, -1, keepdim=True) - ops.matmul(ratio, x2) if _needs(self, 0) else None,
                x2 * ops.unsqueeze(ops.sum(ratio, -2), -1) - ops.matmul(ops.transpose(ratio, -1, -2), x1)
                if _needs(self, 1) else None)


def _euclidean_dist_of_batches(x1, x2, batch):
    """cdist's matrix-product path as PyTorch records it: the batches expanded to a common one and flattened
    (unless there is only one), one EuclideanDistBackward0, a view to the result's shape."""
    rows1, rows2 = x1._data.shape[-2], x2._data.shape[-2]
    count = math.prod(batch)
    if count != 1:
        columns = x1._data.shape[-1]
        x1 = reshape(x1.expand(*batch, rows1, columns), (count, rows1, columns))
        x2 = reshape(x2.expand(*batch, rows2, columns), (count, rows2, columns))
    result = _euclidean_by_product(Tensor._make(x1._data), Tensor._make(x2._data))     # the values, unrecorded
    if wants_grad(x1, x2):
        record(EuclideanDistBackward0, (x1, x2), result, (x1, x2, result))
    return view(result, batch + (rows1, rows2))


def _euclidean_by_product(x1, x2):
    """√(‖a‖² − 2a·b + ‖b‖²) for all row pairs, the three terms summed by one product of padded operands."""
    norm1 = (x1 * x1).sum(-1, keepdim=True)
    norm2 = (x2 * x2).sum(-1, keepdim=True)
    left = cat([x1 * -2, norm1, _ones_like(norm1)], -1)
    right = cat([x2, _ones_like(norm2), norm2], -1)
    squared = matmul(left, right.mT)
    return squared.clamp_min(0).sqrt()


def _ones_like(t):
    return wrap(np.ones_like(t._data))


class DistBackward0(LinalgVectorNormBackward0):
    """out = ‖x − y‖ₚ;  dx = the p-norm's gradient at x − y;  dy = −dx"""
    __slots__ = ()
    formula = "∂‖x − y‖ₚ/∂x = sign(d)·|d|ᵖ⁻¹ / ‖d‖ₚᵖ⁻¹,  ∂/∂y = −∂/∂x"

    def saved(self, ops):
        # The norm's rule reads (its input, the norm): here its input is the difference, rebuilt from x and y
        # so that, under create_graph, it stays connected to both.
        x, y, out = Node.saved(self, ops)
        return x - y, out

    def backward(self, ops, grad):
        (dx,) = super().backward(ops, grad)
        if dx is None:
            return None, None
        return (dx if _needs(self, 0) else None, -dx if _needs(self, 1) else None)


def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast), over all elements."""
    xa, ya, target = promote_operands(input, other)
    if dt.kind(np.dtype(target)) not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{scalar_name(target)} instead.")
    infer_size(np.shape(xa), np.shape(ya))
    difference = np.asanyarray(xa - ya)
    result = vector_norm(wrap(difference), p)
    if wants_grad(input, other):
        record(DistBackward0, (input, other), result, (input, other, result), ord=float(p),
               axes=tuple(range(difference.ndim)), keepdim=False)
    return result


# --- diag_embed, block_diag --------------------------------------------------------------------------------

def diagflat(input, offset=0):
    """A square matrix with the flattened input on its ``offset``-th diagonal (``diag_embed`` of the flat input,
    as PyTorch records it)."""
    from .views import reshape
    return diag_embed(reshape(input, (-1,)), offset)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (over dims ``dim1``, ``dim2`` of the result) whose diagonal ``offset`` holds the last dim of
    ``input``; all other entries are zero."""
    a = input._data
    ndim = a.ndim + 1
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = a.shape[-1] + abs(offset)
    shape = list(a.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    out = np.zeros(shape, dtype=a.dtype)
    placed = np.diagonal(out, offset, d1, d2)
    placed.flags.writeable = True               # NumPy hands out the diagonal read-only; we write through it
    placed[...] = a
    result = wrap(out)
    if wants_grad(input):
        record(DiagEmbedBackward0, (input,), result, offset=offset, dim1=d1, dim2=d2)
    return result


class BlockDiagBackward0(Node):
    """out = the inputs as blocks along the diagonal;  dxₖ = grad's block k"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ block_diag/∂xₖ: the gradient's k-th diagonal block"

    def backward(self, ops, grad):
        grads, row, col = [], 0, 0
        for k, (rows, cols) in enumerate(self.blocks):
            if _needs(self, k):
                block = ops.narrow(ops.narrow(grad, 0, row, rows), 1, col, cols)
                grads.append(ops.reshape(block, self._input_meta[k][0]))
            else:
                grads.append(None)
            row, col = row + rows, col + cols
        return tuple(grads)


def block_diag(*tensors):
    """A matrix with the tensors as blocks along its diagonal; a 0-d tensor is a 1×1 block, a 1-D one a row."""
    arrays = []
    for i, t in enumerate(tensors):
        a = t._data
        if a.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{a.ndim} dimensions")
        arrays.append(a.reshape((1,) * (2 - a.ndim) + a.shape))
    target = dt.result_type(*tensors)._np if tensors else dt.get_default_dtype()._np
    shape = (sum(a.shape[0] for a in arrays), sum(a.shape[1] for a in arrays)) if arrays else (1, 0)
    out = np.zeros(shape, dtype=target)        # with no blocks at all, PyTorch's 1×0 matrix
    row, col = 0, 0
    for a in arrays:
        out[row:row + a.shape[0], col:col + a.shape[1]] = a
        row, col = row + a.shape[0], col + a.shape[1]
    result = wrap(out)
    if wants_grad(*tensors):
        record(BlockDiagBackward0, tensors, result, blocks=[a.shape for a in arrays])
    return result


# --- chain_matmul ---------------------------------------------------------------------------------------

def chain_matmul(*matrices, out=None):
    """The product of the matrices in the cheapest order (deprecated in PyTorch: ``linalg.multi_dot``)."""
    warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return clone(matrices[0])
    from . import linalg
    return linalg.multi_dot(matrices, out=out)


# --- the linalg ops PyTorch also keeps at the top level ------------------------------------------------------
# These load ``gradiente.linalg`` on first use (it is not imported with gradiente).

def det(input):
    """The determinant of a square matrix or a batch of them (``linalg.det``)."""
    from . import linalg
    return linalg.det(input)


def logdet(input):
    """log det(input) for a square matrix (or batch); nan where the determinant is negative."""
    from . import linalg
    return linalg._logdet(input)


def slogdet(input):
    """The sign and log |det| of a square matrix (or batch), as ``return_types.slogdet(sign, logabsdet)``."""
    from . import linalg
    return linalg._slogdet_as(input, linalg.slogdet_type)


@autocast_entry
def inverse(input, *, out=None):
    """The inverse of a square matrix (or batch) (``linalg.inv``)."""
    from . import linalg
    return linalg.inv(input, out=out)


def matrix_power(input, n):
    """A square matrix (or batch) to the integer power ``n`` (``linalg.matrix_power``)."""
    from . import linalg
    return linalg.matrix_power(input, n)


@autocast_entry
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse; singular values at most ``rcond`` times the largest count as zero (``linalg.pinv``)."""
    from . import linalg
    return linalg.pinv(input, rtol=rcond)
