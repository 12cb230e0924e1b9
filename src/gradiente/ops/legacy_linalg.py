"""PyTorch's older top-level linear algebra, which tutorials written before ``torch.linalg`` still call: ``svd``
(which returns V, not Vᴴ), ``qr(some)``, ``cholesky``, ``cholesky_solve``, ``cholesky_inverse``, ``lu``, ``lu_unpack``,
``lu_solve``, ``triangular_solve`` and ``matrix_exp``; and the functions PyTorch has removed (``matrix_rank``,
``solve``, ``lstsq``, ``eig``, ``symeig``), which raise PyTorch's message naming their replacement.

Each is built on ``gradiente.linalg`` and records the node PyTorch records (``CholeskyBackward0``,
``TriangularSolveBackward0``, ...). Where PyTorch warns that a function is deprecated, so do we, with its text and,
as PyTorch does, once per process.
"""

import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.dtype import scalar_name
from ..core.errors import broadcast_shape
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.rules import numpy_ops
from ..core.warnings_at_caller import warn
from . import linalg
from .autocast import autocast_entry
from .linalg import _mT, _triangular, _triangular_grads

__all__ = ["cholesky", "cholesky_inverse", "cholesky_solve", "eig", "lstsq", "lu", "lu_solve", "lu_unpack",
           "matrix_exp", "matrix_rank", "qr", "solve", "svd", "symeig", "triangular_solve"]

# The named results, made with return_types' constructor so that they print as ``gradiente.return_types.svd(...)``.


# --- PyTorch's deprecation warnings ------------------------------------------------------------------------

# PyTorch's texts, with the C++ location they name, so that the printed warning is the same line.
_CPP = "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:{}.)"
_DEPRECATED = {
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
          "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
          "Q, R = torch.qr(A, some)\nshould be replaced with\n"
          "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete') " + _CPP.format(2505),
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
                "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
                "This transform will produce equivalent results for all valid (symmetric positive definite) "
                "inputs. " + _CPP.format(1765),
    "lu": "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
          "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
          "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
          "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
          "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots) " + _CPP.format(2073),
    "lu_solve": "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
                "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
                "X = torch.linalg.lu_solve(LU, pivots, B) " + _CPP.format(2230),
    "triangular_solve": "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
                        "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
                        "reversed and does not return a copy of one of the inputs.\n"
                        "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
                        "X = torch.linalg.solve_triangular(A, B). " + _CPP.format(2273),
}
_warned: set = set()


def _deprecated(name):
    """PyTorch's deprecation warning for ``name``, the first time only (PyTorch warns once per process)."""
    if name not in _warned:
        _warned.add(name)
        warn(_DEPRECATED[name], UserWarning, stacklevel=3)


# --- SVD and QR, with their older arguments ----------------------------------------------------------------

def svd(input, some=True, compute_uv=True, *, out=None):
    """A = U diag(S) Vᵀ, returned as ``(U, S, V)``: V, where ``linalg.svd`` returns Vh = Vᵀ. ``some=True`` (the
    default) gives the k = min(m, n) columns that matter, ``some=False`` square U and V. With ``compute_uv=False``
    only S is computed, and U and V are zero matrices (m×m and n×n)."""
    a = input._data
    if a.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {a.ndim} dimensions instead")
    if not compute_uv:
        m, n = a.shape[-2:]
        zeros = [wrap(np.zeros(a.shape[:-2] + (size, size), dtype=a.dtype)) for size in (m, n)]
        return return_types.svd(zeros[0], linalg.svdvals(input), zeros[1])
    u, s, vh = linalg.svd(input, full_matrices=not some)
    return return_types.svd(u, s, vh.mT)


def qr(input, some=True, *, out=None):
    """A = QR (``linalg.qr``): ``some=True`` is mode 'reduced', ``some=False`` mode 'complete'."""
    _deprecated("qr")
    return return_types.qr(*linalg.qr(input, "reduced" if some else "complete"))


# --- Cholesky: the factor, solves and the inverse from it ----------------------------------------------------

class CholeskyBackward0(linalg.LinalgCholeskyExBackward0):
    """A = L Lᵀ;  dA = sym(L⁻ᵀ Φ(Lᵀ·grad) L⁻¹) (``linalg.cholesky``'s rule, under torch.cholesky's name)"""
    __slots__ = ()


def cholesky(input, upper=False, *, out=None):
    """``linalg.cholesky(input, upper=upper)``: L with A = L Lᵀ (U = Lᵀ with ``upper``)."""
    _deprecated("cholesky")
    a = input._data
    linalg._check_square("cholesky", a)
    if dt.kind(a.dtype) not in "fc" or a.dtype == np.float16:
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    factor, info = linalg._factor(input, upper, CholeskyBackward0)
    if info.any():
        linalg._raise_not_positive_definite(a, info, "cholesky")
    return factor


def _cholesky_apply(ops, factor, b, upper):
    """A⁻¹b for A = L Lᵀ (or Uᵀ U with ``upper``) given its factor: two triangular solves."""
    if upper:
        return _triangular(ops, factor, _triangular(ops, factor, b, upper=True, transpose=True), upper=True)
    return _triangular(ops, factor, _triangular(ops, factor, b, upper=False), upper=False, transpose=True)


class CholeskySolveBackward0(Node):
    """X = A⁻¹B, A = L Lᵀ;  dB = A⁻¹·grad;  dL = −(dB·Xᵀ + X·dBᵀ)·L  (A = UᵀU: dU = −U·(dB·Xᵀ + X·dBᵀ))"""
    __slots__ = ()
    formula = "∂(A⁻¹B)/∂B: G ↦ A⁻¹G,  ∂/∂L: G ↦ −(A⁻¹G·Xᵀ + X·(A⁻¹G)ᵀ)·L"

    def backward(self, ops, grad):
        factor, x = self.saved(ops)
        grad_b = _cholesky_apply(ops, factor, grad, self.upper)
        common = ops.matmul(grad_b, _mT(ops, x))
        common = common + _mT(ops, common)
        grad_factor = -(ops.matmul(factor, common) if self.upper else ops.matmul(common, factor))
        return (grad_b if self.next_functions[0][0] is not None else None,
                grad_factor if self.next_functions[1][0] is not None else None)


def _check_factor_dtype(kernel, a):
    if dt.kind(a.dtype) not in "fc" or a.dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(a.dtype)}'")


def _check_system(name, b, a):
    """The checks ``cholesky_solve`` and ``triangular_solve`` share, with PyTorch's (older) messages."""
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {scalar_name(b.dtype)} and "
                           f"A of type {scalar_name(a.dtype)} instead.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {a.shape[-2]} by {a.shape[-1]} "
                           "matrices")
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {a.shape[-1]} by {a.shape[-1]} "
                           f"but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    broadcast_shape(b.shape[:-2], a.shape[:-2])


@autocast_entry
def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = B for B = ``input`` and A = L Lᵀ given by its Cholesky factor L = ``input2`` (A = UᵀU with
    ``upper``); only the factor's triangle is read. Batch dims broadcast. As in PyTorch, the factor's gradient is
    the full matrix −(dB·Xᵀ + X·dBᵀ)·L, not kept to its triangle."""
    b, factor = input._data, input2._data
    for array, name in ((b, "b"), (factor, "u")):
        if array.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {array.ndim} dimensions instead")
    _check_system("cholesky_solve", b, factor)
    _check_factor_dtype("cholesky_solve_cpu", factor)
    result = wrap(_cholesky_apply(numpy_ops, factor, b, upper))
    if wants_grad(input, input2):
        record(CholeskySolveBackward0, (input, input2), result, (input2, result), upper=upper)
    return result


class CholeskyInverseBackward0(Node):
    """out = A⁻¹, A = L Lᵀ;  dL = −out·(grad + gradᵀ)·out·L  (A = UᵀU: dU = −U·out·(grad + gradᵀ)·out)"""
    __slots__ = ()
    formula = "∂(LLᵀ)⁻¹/∂L: G ↦ −A⁻¹(G + Gᵀ)A⁻¹·L"

    def backward(self, ops, grad):
        factor, out = self.saved(ops)
        common = ops.matmul(out, ops.matmul(grad + _mT(ops, grad), out))
        return (-(ops.matmul(factor, common) if self.upper else ops.matmul(common, factor)),)


@autocast_entry
def cholesky_inverse(input, upper=False, *, out=None):
    """A⁻¹ for A = L Lᵀ given its Cholesky factor L = ``input`` (A = UᵀU with ``upper``); only the factor's triangle
    is read. As in PyTorch, the factor's gradient is the full matrix, not kept to its triangle."""
    factor = input._data
    linalg._check_square("cholesky_inverse", factor)
    _check_factor_dtype("cholesky_inverse_out_cpu", factor)
    diagonal = np.diagonal(factor, axis1=-2, axis2=-1)
    if (diagonal == 0).any():
        info = np.argmax(diagonal == 0, axis=-1) + 1
        info = np.where((diagonal == 0).any(-1), info, 0)
        linalg._raise_singular_inverse(factor, info, "cholesky_inverse")
    identity = np.broadcast_to(np.eye(factor.shape[-1], dtype=factor.dtype), factor.shape)
    result = wrap(_cholesky_apply(numpy_ops, factor, identity, upper))
    if wants_grad(input):
        record(CholeskyInverseBackward0, (input,), result, (input, result), upper=upper)
    return result


# --- LU: the packed factors, unpacking them, and solving with them ----------------------------------------------

def lu(A, pivot=True, get_infos=False, out=None):
    """``linalg.lu_factor_ex``: ``(LU, pivots)``, or ``(LU, pivots, infos)`` with ``get_infos``. Does not raise
    for a singular A (see ``linalg.lu_factor``)."""
    _deprecated("lu")
    factors = linalg.lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return return_types._lu_with_info(*factors)
    return factors.LU, factors.pivots


class LuUnpackBackward0(Node):
    """L = tril₋₁(LU) + I, U = triu(LU);  dLU = tril₋₁(gL) + triu(gU), each placed in LU's (m, n) shape"""
    __slots__ = ()
    formula = "∂(L, U)/∂LU: (gL, gU) ↦ tril₋₁(gL) + triu(gU)"

    def backward(self, ops, grad_l, grad_u):
        m, n = self._input_meta[0][0][-2:]
        lower, upper = ops.tril(grad_l, -1), ops.triu(grad_u, 0)      # m×k and k×n, k = min(m, n)
        batch = tuple(grad_l.shape[:-2])
        if m > n:
            upper = ops.cat([upper, ops.zeros(batch + (m - n, n), upper)], -2)
        elif m < n:
            lower = ops.cat([lower, ops.zeros(batch + (m, n - m), lower)], -1)
        return (lower + upper,)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from ``lu_factor``'s packed factors and pivots (A = P L U). ``unpack_data=False`` leaves L and
    U empty, ``unpack_pivots=False`` leaves P empty. L and U are differentiable in LU_data."""
    lu_array, pivots = LU_data._data, LU_pivots._data
    if pivots.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m = lu_array.shape[-2]
    empty = np.zeros((0,), dtype=lu_array.dtype)
    permutation = empty
    if unpack_pivots:
        if pivots.size and (pivots.min() < 1 or pivots.max() > m):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                               "properly pass the result of lu_factor?")
        permutation = linalg._permutation(pivots, m, lu_array.dtype)
    if not unpack_data:
        return return_types.lu_unpack(wrap(permutation), wrap(empty), wrap(empty.copy()))
    low, up = (wrap(f.astype(lu_array.dtype, copy=False)) for f in linalg._unpack(numpy_ops, lu_array))
    if wants_grad(LU_data):
        record(LuUnpackBackward0, (LU_data,), (low, up))
    return return_types.lu_unpack(wrap(permutation), low, up)


def lu_solve(input, LU_data, LU_pivots, *, out=None):
    """``linalg.lu_solve(LU_data, LU_pivots, input)``: X with A X = B for B = ``input``, A given by ``lu``."""
    _deprecated("lu_solve")
    return linalg.lu_solve(LU_data, LU_pivots, input)


# --- the triangular solve that returns A too -------------------------------------------------------------------

class TriangularSolveBackward0(Node):
    """X = op(A)⁻¹B (op(A) = Aᵀ with transpose), M = A;  dB = op(A)⁻ᵀ·gX;  dA = tri(−dB·Xᵀ) (−X·dBᵀ with transpose),
    kept to A's triangle, + gM"""
    __slots__ = ()
    formula = "∂(A⁻¹B)/∂B: G ↦ A⁻ᵀG,  ∂/∂A: G ↦ tri(−A⁻ᵀG·Xᵀ)"

    def backward(self, ops, grad_x, grad_m):
        a, x = self.saved(ops)
        grad_a, grad_b = _triangular_grads(ops, a, x, grad_x, self.upper, self.unitriangular,
                                           transpose=self.transpose)
        return (grad_b if self.next_functions[0][0] is not None else None,
                grad_a + grad_m if self.next_functions[1][0] is not None else None)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """X with op(A) X = B, B = ``input``, A triangular (op(A) = Aᵀ with ``transpose``); only A's ``upper`` (or lower)
    triangle is read. Returns ``(solution, cloned_coefficient)``, the second a copy of A (broadcast to the batch
    shape). Note the order: B first, where ``linalg.solve_triangular`` takes A first."""
    _deprecated("triangular_solve")
    b, a = input._data, A._data
    for array, name in ((b, "b"), (a, "A")):
        if array.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has "
                               f"{array.ndim} dimensions instead")
    _check_system("triangular_solve", b, a)
    _check_factor_dtype("triangular_solve_cpu", a)
    solution = wrap(_triangular(numpy_ops, a, b, upper, unitriangular, transpose))
    batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    coefficient = wrap(np.array(np.broadcast_to(a, batch + a.shape[-2:])))
    if wants_grad(input, A):
        record(TriangularSolveBackward0, (input, A), (solution, coefficient), (A, solution), upper=upper,
               transpose=transpose, unitriangular=unitriangular)
    return return_types.triangular_solve(solution, coefficient)


def matrix_exp(input):
    """``linalg.matrix_exp``: exp(A) = Σ Aᵏ/k!."""
    return linalg.matrix_exp(input)


# --- removed from PyTorch: each raises PyTorch's message, which names the replacement ---------------------------

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from PyTorch: use ``linalg.matrix_rank`` (``symmetric`` is now ``hermitian``)."""
    raise RuntimeError(_REMOVED.rstrip() + "\nPlease use the `torch.linalg.matrix_rank` function instead. The "
                       "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input, A, *, out=None):
    """Removed from PyTorch: use ``linalg.solve(A, B)`` (arguments reversed)."""
    raise RuntimeError(_REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
                       "has its arguments reversed and does not return the LU factorization.\n\n"
                       "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
                       "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
                       "X = torch.linalg.solve(A, B)")


def lstsq(input, A, *, out=None):
    """Removed from PyTorch: use ``linalg.lstsq(A, B)`` (arguments reversed)."""
    raise RuntimeError(_REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
                       "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the "
                       "returned tuple (although it returns other information about the problem).\n\n"
                       "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
                       "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
                       "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the "
                       "field 'residuals' of the returned named tuple.\n\n"
                       "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
                       "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from PyTorch: use ``linalg.eig`` or ``linalg.eigvals`` (complex results)."""
    raise RuntimeError(_REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
                       "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
                       "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be "
                       "replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from PyTorch: use ``linalg.eigh`` or ``linalg.eigvalsh`` (which read the lower triangle by default)."""
    raise RuntimeError(_REMOVED + "The default behavior has changed from using the upper triangular portion of the "
                       "matrix by default to using the lower triangular portion.\n\n"
                       "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
                       "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
                       "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
                       "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
