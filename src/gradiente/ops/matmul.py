"""Linear algebra: the products (mm, mv, dot, bmm, addmm, baddbmm), matmul built from them as PyTorch builds
it, outer, trace, and the 2-D transpose ``t`` (einsum, decomposed into these, is ``ops/einsum.py``).

``matmul`` follows PyTorch's own decomposition (ATen's ``_matmul_impl``), step for step: a batch of
matrices times a matrix is folded into one ``mm`` and unfolded again (UnsafeViewBackward0 over
MmBackward0), batched operands are expanded and reshaped for one ``bmm``, and so on. The graph a learner
sees is therefore PyTorch's graph, node for node.
"""
import math

import numpy as np

from ..core import blas_order
from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.node import Node, tangent_sum
from ..core.record import as_result, record, wants_grad, wrap
from ..core.sparse_compressed import is_compressed
from ..core.tensor import Tensor, _wrap_dim
from .arithmetic import _write_out
from .autocast import autocast_entry
from .views import (
    _mT,
    _squeeze_result,
    _unsafe_view,
    _view,
    contiguous,
    expand,
    expanded_shape,
    infer_size,
    reshape,
    squeeze,
    unsqueeze,
)

__all__ = ["addmm", "baddbmm", "bmm", "dot", "ger", "matmul", "mm", "mv", "outer", "t", "trace", "addbmm"]

def _same_dtype(xa, ya):
    if xa.dtype != ya.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{dt.cpp_name(xa.dtype)} != {dt.cpp_name(ya.dtype)}")


def _check_multipliable(xa, ya):
    """Two matrices whose product is defined and of one dtype (mm's and addmm's checks)."""
    if xa.shape[1] != ya.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({xa.shape[0]}x{xa.shape[1]} and "
                           f"{ya.shape[0]}x{ya.shape[1]})")
    _same_dtype(xa, ya)


def _out_dtype_refusal(kernel, result, out):
    """PyTorch's message when ``out`` has another dtype than the product, which its matrix kernels never cast
    (where ``add`` would); each kernel words it in its own way. mv resizes an ``out`` of another shape first,
    and a resized one fails the resize's check, not addmv's."""
    if kernel == "dot":
        return (f"result dtype {scalar_name(out._data.dtype)} does not match input dtype "
                f"{scalar_name(result._data.dtype)}")
    if kernel == "mv" and out._data.shape == result._data.shape:
        return (f"addmv input tensors must have the same dtype, but got {scalar_name(out._data.dtype)}, "
                f"{scalar_name(result._data.dtype)}, and {scalar_name(result._data.dtype)}")
    return (f"Expected out tensor to have dtype {dt.cpp_name(result._data.dtype)}, but got "
            f"{dt.cpp_name(out._data.dtype)} instead")


def _into_out(result, out, name, kernel=None):
    """The ``out=`` keyword of product ``name``: ``result`` copied into ``out``, refused as PyTorch refuses it
    (autograd first, then a dtype that differs; ``kernel`` is the product that ran, whose wording is used)."""
    if out is None:
        return result
    if out._data.dtype != result._data.dtype and result.grad_fn is None and not out.requires_grad:
        raise RuntimeError(_out_dtype_refusal(kernel or name, result, out))
    return _write_out(result, out, name, reported=name)


def _matmul_kernel(d1, d2):
    """The product matmul reaches for operands of ``d1`` and ``d2`` dimensions (its out= messages are that one's)."""
    return "dot" if d1 == d2 == 1 else "mv" if (d1, d2) == (2, 1) else "mm"


def _product(product, node_cls, x, y, **fields):
    """``product(x, y)`` on the arrays as a tensor, recorded with ``node_cls``. Each operand is saved only where
    the other one's gradient (or tangent) needs it, as PyTorch saves them: an operand changed in place later is
    then no error when only the other is constant (seed 1387)."""
    out = as_result(product(dt.widened(x._data), dt.widened(y._data)), x._data.dtype)
    if wants_grad(x, y):
        saved = (x if wants_grad(y) else None, y if wants_grad(x) else None)
        # the strides of an operand not saved, which PyTorch keeps all the same (grad_fn._saved_self_sym_strides)
        strides = tuple(t.stride() if s is None else None for s, t in zip(saved, (x, y)))
        record(node_cls, (x, y), out, saved, unsaved_strides=strides, **fields)
    return out


def _column_major(a):
    """Whether the matrix ``a`` is laid out by columns, as a transposed weight (``W.t()``) is. PyTorch's ``mm`` and
    ``addmm`` backward then compute that operand's gradient transposed (``mm_mat1_backward``, ``mm_mat2_backward``),
    so that it comes out in the same layout, through another of BLAS's kernels (and so another rounding)."""
    return a.ndim == 2 and a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


def _matrix_product_gradients(ops, grad, x, y, column_major, needs):
    """``(grad @ yᵀ, xᵀ @ grad)`` where ``needs`` asks, each computed transposed when its operand is laid out by
    columns (``_column_major``), as PyTorch's ``mm`` backward computes them."""
    def t(m):
        return ops.transpose(m, -1, -2)
    dx = dy = None
    if needs[0]:
        dx = t(ops.matmul(y, t(grad))) if column_major[0] else ops.matmul(grad, t(y))
    if needs[1]:
        dy = t(ops.matmul(t(grad), x)) if column_major[1] else ops.matmul(t(x), grad)
    return dx, dy


# --- the products --------------------------------------------------------------------------------------

class MmBackward0(Node):
    """out = x @ y (2-D);  dx = grad @ yᵀ;  dy = xᵀ @ grad;  out' = x' @ y + x @ y'"""
    unsaved_strides: tuple     # (see _product) the strides of an operand that was not saved
    column_major = (False, False)   # (see _column_major) whether each operand was laid out by columns (mm's)
    holomorphic = True
    __slots__ = ()
    formula = "∂(XY)/∂X = G·Yᵀ,  ∂(XY)/∂Y = Xᵀ·G"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        needs = tuple(node is not None for node, _ in self.next_functions)
        return _matrix_product_gradients(ops, grad, x, y, self.column_major, needs)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        return tangent_sum(None if x_t is None else ops.matmul(x_t, y), None if y_t is None else ops.matmul(x, y_t))


class MvBackward0(Node):
    """out = A @ v;  dA = outer(grad, v);  dv = Aᵀ @ grad;  out' = A' @ v + A @ v'"""
    unsaved_strides: tuple     # (see _product) the strides of an operand that was not saved
    holomorphic = True
    __slots__ = ()
    formula = "∂(Av)/∂A = g·vᵀ,  ∂(Av)/∂v = Aᵀ·g"

    def backward(self, ops, grad):
        a, v = self.saved(ops)
        edges = self.next_functions
        return (ops.matmul(ops.unsqueeze(grad, 1), ops.unsqueeze(v, 0)) if edges[0][0] is not None else None,
                ops.matmul(a.T, grad) if edges[1][0] is not None else None)

    def jvp(self, ops, a_t, v_t):
        a, v = self.saved(ops)
        return tangent_sum(None if a_t is None else ops.matmul(a_t, v), None if v_t is None else ops.matmul(a, v_t))


class DotBackward0(Node):
    """out = x · y (1-D);  dx = grad * y;  dy = grad * x;  out' = x' · y + x · y'"""
    unsaved_strides: tuple     # (see _product) the strides of an operand that was not saved
    holomorphic = True
    __slots__ = ()
    formula = "∂(x·y)/∂x = y,  ∂(x·y)/∂y = x"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (grad * y if edges[0][0] is not None else None, grad * x if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        return tangent_sum(None if x_t is None else ops.sum(x_t * y), None if y_t is None else ops.sum(x * y_t))


class BmmBackward0(MmBackward0):
    """out = x @ y (a batch of matrices);  dx = grad @ yᵀ;  dy = xᵀ @ grad (per batch)"""
    __slots__ = ()
    formula = "∂(XY)/∂X = G·Yᵀ,  ∂(XY)/∂Y = Xᵀ·G (per batch)"


@autocast_entry
def mm(input, mat2, *, out=None):
    """The product of two matrices (the first may be sparse COO: ``ops/sparse_coo.py``)."""
    if out is not None:
        return _into_out(mm(input, mat2), out, "mm")
    if input.is_sparse:
        from .sparse_coo import sparse_dense_mm  # (the sparse ops load with the first sparse operand)
        return sparse_dense_mm(input, mat2)
    if is_compressed(input) or is_compressed(mat2):
        from . import sparse_compressed
        return sparse_compressed.mm(input, mat2)
    xa, ya = input._data, mat2._data
    if xa.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if ya.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_multipliable(xa, ya)
    return _product(blas_order.matmul, MmBackward0, input, mat2,
                    column_major=(_column_major(input._data), _column_major(mat2._data)))


def mv(input, vec, *, out=None):
    """A matrix times a vector."""
    if out is not None:
        return _into_out(mv(input, vec), out, "mv")
    xa, va = input._data, vec._data
    if xa.ndim != 2 or va.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {xa.ndim}, {va.ndim}")
    if xa.shape[1] != va.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({xa.shape[0]}), mat ({xa.shape[0]}x{xa.shape[1]}), "
                           f"vec ({va.shape[0]})")
    if xa.dtype != va.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {dt.scalar_name(va.dtype)}, "
                           f"{dt.scalar_name(xa.dtype)}, and {dt.scalar_name(va.dtype)}")
    return _product(_matrix_times_vector, MvBackward0, input, vec)


def _matrix_times_vector(matrix, vector):
    """``matrix @ vector`` as PyTorch's ``mv`` computes it: BLAS's product with the vector as a one-column matrix
    (MKL's order where ``blas_order`` knows it), so that ``W @ v`` equals ``(W @ v[:, None])[:, 0]``, as in PyTorch."""
    return blas_order.matmul(matrix, vector[:, None])[:, 0]


def dot(input, other, *, out=None):
    """The inner product of two 1-D tensors."""
    if out is not None:
        return _into_out(dot(input, other), out, "dot")
    xa, ya = input._data, other._data
    if xa.ndim != 1 or ya.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {xa.ndim}D and {ya.ndim}D tensors")
    if xa.shape[0] != ya.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{xa.shape[0]}] and src [{ya.shape[0]}] to have "
                           f"the same number of elements, but got {xa.shape[0]} and {ya.shape[0]} elements "
                           "respectively")
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {dt.scalar_name(xa.dtype)} and "
                           f"{dt.scalar_name(ya.dtype)}")
    return _product(blas_order.dot, DotBackward0, input, other)


@autocast_entry
def bmm(input, mat2, *, out=None):
    """Matrix products of two batches of matrices, ``(b, n, m) @ (b, m, p) -> (b, n, p)``."""
    if out is not None:
        return _into_out(bmm(input, mat2), out, "bmm")
    xa, ya = input._data, mat2._data
    if xa.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if ya.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if ya.shape[:2] != (xa.shape[0], xa.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{xa.shape[0]}, "
                           f"{xa.shape[2]}] but got: [{ya.shape[0]}, {ya.shape[1]}].")
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(xa.dtype)} but found {dt.scalar_name(ya.dtype)}")
    return _product(blas_order.bmm, BmmBackward0, input, mat2)


class AddmmBackward0(Node):
    """out = β·b + α·(x @ y);  db = β·grad (summed to b's shape);  dx = α·grad @ yᵀ;  dy = α·xᵀ @ grad;
    out' = β·b' + α·(x' @ y + x @ y')"""
    holomorphic = True
    __slots__ = ()
    formula = "∂/∂b = β,  ∂/∂X = α·G·Yᵀ,  ∂/∂Y = α·Xᵀ·G"
    alpha: float
    beta: float
    column_major = (False, False)   # addmm's (see _column_major): nn.Linear's W.t() is laid out by columns

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        (b_node, _), (x_node, _), (y_node, _) = self.next_functions
        g = grad if self.alpha == 1 else grad * self.alpha
        dx, dy = _matrix_product_gradients(ops, g, x, y, self.column_major, (x_node is not None, y_node is not None))
        return (grad if self.beta == 1 else grad * self.beta) if b_node is not None else None, dx, dy

    def jvp(self, ops, b_t, x_t, y_t):
        x, y = self.saved(ops)
        product = tangent_sum(None if x_t is None else ops.matmul(x_t, y), None if y_t is None else ops.matmul(x, y_t))
        return tangent_sum(None if b_t is None else b_t * self.beta, None if product is None else product * self.alpha)


class BaddbmmBackward0(AddmmBackward0):
    """out = β·b + α·(x @ y) per batch;  db = β·grad;  dx = α·grad @ yᵀ;  dy = α·xᵀ @ grad"""
    __slots__ = ()
    formula = "∂/∂b = β,  ∂/∂X = α·G·Yᵀ,  ∂/∂Y = α·Xᵀ·G (per batch)"


def _scaled_sum(product, input, target, beta, alpha):
    """α·product + β·input, in ``product``'s memory (a fresh array); β = 0 ignores input, even nan. A bfloat16
    input's product comes widened to float32 (``dt.widened``): the sum is taken there and rounded once."""
    expanded_shape(input, target)
    if alpha != 1:
        product *= alpha
    if beta != 0:
        base = dt.widened(input._data)
        product += base if beta == 1 else base * beta
    return product.astype(input._data.dtype, copy=False)


@autocast_entry
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape (``nn.Linear``
    uses it: ``linear(x, W, b) = addmm(b, x, W.t())``). A compressed sparse ``mat1``: ``ops/sparse_compressed.py``."""
    if is_compressed(mat1):
        from . import sparse_compressed  # (the sparse ops load with the first sparse operand)
        return sparse_compressed.addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    xa, ya = mat1._data, mat2._data
    if xa.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {xa.ndim}-D tensor")
    if ya.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {ya.ndim}-D tensor")
    # addmm words its dtype errors unlike mm, and checks them before the shapes
    for name, first in (("mat1", xa), ("self", input._data)):
        if first.dtype != ya.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {dt.scalar_name(first.dtype)} "
                               f"and {dt.scalar_name(ya.dtype)}")
    _check_multipliable(xa, ya)
    shape = (xa.shape[0], ya.shape[1])
    if alpha == 1 and beta == 1 and xa.dtype == ya.dtype == input._data.dtype == np.float32:
        # PyTorch's gemm starts from the bias and adds the product to it block by block (core/blas_order.py)
        expanded_shape(input, shape)
        out = wrap(blas_order.matmul(xa, ya, initial=input._data))
    else:
        out = wrap(_scaled_sum(np.matmul(dt.widened(xa), dt.widened(ya)), input, shape, beta, alpha))
    if wants_grad(input, mat1, mat2):
        # each operand saved only for the other's gradient, as PyTorch's (linear of an input changed in place
        # later, with a weight that needs no gradient, stays differentiable: seed 81696)
        record(AddmmBackward0, (input, mat1, mat2), out,
               (mat1 if wants_grad(mat2) else None, mat2 if wants_grad(mat1) else None), alpha=alpha, beta=beta,
               column_major=(_column_major(xa), _column_major(ya)))
    return out


@autocast_entry
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices."""
    names = [dt.cpp_name(t._data.dtype) for t in (input, batch1)]
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: {names[1]}, batch2: "
                           f"{dt.cpp_name(batch2._data.dtype)}")
    xa, ya = batch1._data, batch2._data
    product = np.matmul(dt.widened(xa), dt.widened(ya)) if xa.dtype == dt.BFLOAT16 \
        else bmm(batch1.detach(), batch2.detach())._data
    out = wrap(_scaled_sum(product, input, (xa.shape[0], xa.shape[1], ya.shape[2]), beta, alpha))
    if wants_grad(input, batch1, batch2):
        record(BaddbmmBackward0, (input, batch1, batch2), out, (batch1, batch2), alpha=alpha, beta=beta)
    return out


# --- matmul, as PyTorch composes it ---------------------------------------------------------------------

@autocast_entry
def matmul(input, other, *, out=None):
    """The matrix product with NumPy's rules: 1-D operands are vectors, leading dims are batch dims and
    broadcast. Recorded as PyTorch records it (dot, mv, mm, folded mm, or expand + bmm)."""
    if out is not None:
        return _into_out(matmul(input, other), out, "matmul", _matmul_kernel(input.dim(), other.dim()))
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        bad = other if isinstance(input, Tensor) else input
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(bad).__name__}")
    if input.is_sparse:
        from .sparse_coo import sparse_dense_mm  # (the sparse ops load with the first sparse operand)
        return sparse_dense_mm(input, other)
    if is_compressed(input) or is_compressed(other):
        from . import sparse_compressed
        return sparse_compressed.mm(input, other)
    if other.is_sparse:
        from .sparse_coo import sparse_dense_mm
        # dense @ COO: PyTorch's kernel is the transposed addmm, whose checks it reports (issue 13)
        if input.dim() != 2 or other.dim() != 2 or input.shape[1] != other.shape[0]:
            raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {other.shape[0]}, got "
                               f"{input.shape[1] if input.dim() == 2 else input.shape[0]}")
        return sparse_dense_mm(other.t(), input.t()).t()
    d1, d2 = input._data.ndim, other._data.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:
        return _squeeze_result(mm(unsqueeze(input, 0), other), 0)
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _folded_matmul(input, other)
    return _batched_matmul(input, other)


def _rmatmul(self, other):
    return matmul(other, self)


def _should_fold(x, y):
    """PyTorch's test for computing a batch @ matrix product as one matrix product on a folded batch."""
    x_larger = x._data.ndim >= y._data.ndim
    t1 = x._data if x_larger else np.swapaxes(y._data, -1, -2)
    dim_t2 = y._data.ndim if x_larger else x._data.ndim
    if not (t1.ndim >= 3 and dim_t2 <= 2):
        return False
    if (y if x_larger else x)._requires_grad:
        return True
    if x._data.ndim == 2:
        return False
    if t1.size == 0:
        return True
    shape, strides = t1.shape, t1.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.ndim - 2))


def _folded_matmul(x, y):
    transpose = y._data.ndim > x._data.ndim
    t1 = _mT(y) if transpose else x
    t2 = (t(x) if x._data.ndim == 2 else x) if transpose else y
    sizes = t1._data.shape
    out_shape = sizes[:-1]
    folded = reshape(t1, math.prod(out_shape), sizes[-1])
    if t2._data.ndim == 2:
        output = _as_shape(mm(folded, t2), out_shape + (t2._data.shape[1],))
        return contiguous(_mT(output)) if transpose else output
    return _as_shape(mv(folded, t2), out_shape)


def _batched_matmul(x, y):
    xa, ya = x._data, y._data
    d1, d2 = xa.ndim, ya.ndim
    n, m1 = (xa.shape[-2] if d1 > 1 else 1), xa.shape[-1]
    m2, p = (ya.shape[-2] if d2 > 1 else ya.shape[0]), (ya.shape[-1] if d2 > 1 else 1)
    batch1, batch2 = xa.shape[:max(d1 - 2, 0)], ya.shape[:max(d2 - 2, 0)]
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and x._requires_grad:
            return matmul(squeeze(x, 0), y)
        if batch2[0] == 1 and y._requires_grad:
            return matmul(x, squeeze(y, 0))
    batch = infer_size(batch1, batch2)
    count = math.prod(batch)
    x_expanded = reshape(expand(x, batch + (n, m1)), count, n, m1)
    if d2 == 1:
        y_expanded = unsqueeze(reshape(expand(y, batch + (m2,)), count, m2), 2)
    else:
        y_expanded = reshape(expand(y, batch + (m2, p)), count, m2, p)
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    product = bmm(x_expanded, y_expanded)
    return _as_shape(squeeze(product, -1) if d2 == 1 else product, out_shape)


def _as_shape(tensor, shape):
    return _unsafe_view(tensor, tensor._data.reshape(shape))


# --- outer, trace, t -----------------------------------------------------------------------------------

def outer(input, vec2):
    """``out[i][j] = input[i] * vec2[j]`` (recorded as PyTorch does: a view, then a broadcasting product)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    return reshape(input, input._data.shape[0], 1) * vec2


ger = outer


class TraceBackward0(Node):
    """out = Σᵢ x[i][i];  dx = grad on the diagonal, zeros elsewhere"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ tr(X)/∂X = I"

    def backward(self, ops, grad):
        shape = self._input_meta[0][0]
        k = min(shape)
        diag = np.arange(k)
        return (ops.embed(ops.expand(grad, (k,)), shape, (diag, diag)),)


@autocast_entry
def trace(input):
    """The sum of a matrix's main diagonal."""
    a = input._data
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    out = as_result(np.trace(a), np.int64 if a.dtype.kind in "biu" else a.dtype)
    if wants_grad(input):
        record(TraceBackward0, (input,), out)
    return out


class TBackward0(Node):
    """out = xᵀ;  dx = gradᵀ;  out' = x'ᵀ"""
    complex_ok = True
    __slots__ = ()
    formula = "transpose: gradient transposed back"

    def backward(self, ops, grad):
        return (grad.T,)

    def jvp(self, ops, x_t):
        return x_t.T


def t(input):
    """The transpose of a tensor of at most 2 dims (a view)."""
    a = input._data
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return _view(input, a.T, TBackward0)


# --- addbmm: a batch of products summed ---------------------------------------------------------------------

class AddbmmBackward0(AddmmBackward0):
    """out = β·b + α·Σᵢ Xᵢ @ Yᵢ;  db = β·grad;  dXᵢ = α·grad @ Yᵢᵀ;  dYᵢ = α·Xᵢᵀ @ grad (addmm's rule, with the
    gradient broadcast over the batch by the matrix product)"""
    __slots__ = ()
    formula = "∂/∂b = β,  ∂/∂Xᵢ = α·G·Yᵢᵀ,  ∂/∂Yᵢ = α·Xᵢᵀ·G"

    def jvp(self, ops, b_t, x_t, y_t):
        x, y = self.saved(ops)
        terms = [ops.matmul(x_t, y) if x_t is not None else None, ops.matmul(x, y_t) if y_t is not None else None]
        product = tangent_sum(*(ops.sum(t, (0,), False) if t is not None else None for t in terms))
        return tangent_sum(None if b_t is None else b_t * self.beta, None if product is None else product * self.alpha)


@autocast_entry
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """β·input + α·(the sum over the batch of batch1[i] @ batch2[i]): a (n, m) result from (b, n, k) and
    (b, k, m) batches; ``input`` broadcasts to (n, m)."""
    xa, ya = batch1._data, batch2._data
    # PyTorch first expands input to (batch1.size(1), batch2.size(2)): its errors come in that order
    target = (xa.shape[_wrap_dim(1, xa.ndim)], ya.shape[_wrap_dim(2, ya.ndim)])
    expanded_shape(input, target)
    for name, a in (("batch1", xa), ("batch2", ya)):
        if a.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if xa.shape[0] != ya.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {xa.shape[0]} and {ya.shape[0]}")
    if xa.shape[2] != ya.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({xa.shape[1]}x{xa.shape[2]} and "
                           f"{ya.shape[1]}x{ya.shape[2]})")
    for first in (xa, input._data):
        if first.dtype != ya.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_name(first.dtype)} and "
                               f"{scalar_name(ya.dtype)}")
    product = np.matmul(dt.widened(xa), dt.widened(ya)).sum(axis=0)
    out = wrap(_scaled_sum(product, input, target, beta, alpha))
    if wants_grad(input, batch1, batch2):
        record(AddbmmBackward0, (input, batch1, batch2), out, (batch1, batch2), alpha=alpha, beta=beta)
    return out
