"""``torch.linalg``: norms, inverses, solves (general and triangular), determinants, the matrix exponential and the
decompositions (Cholesky, LU, QR, eigh, SVD), each with its derivative, for a matrix ``(n, n)`` or a batch of them
``(..., n, n)``.

NumPy's LAPACK computes the factorizations (LU and the triangular solves, which NumPy does not expose, are
written here as LAPACK computes them); the derivative rules are the standard matrix-calculus results,
written with the rule namespace ``ops`` so that they also run on recorded tensors (``create_graph=True``),
which gives second derivatives. A rule that needs to solve or invert calls ``_solve`` or ``_inverse``:
NumPy on arrays, this module's own differentiable ``solve``/``inv`` on tensors.

Where PyTorch composes an op from others (``matrix_norm(A, 2)`` is the largest singular value, an
``amax`` over ``svdvals``), so do we, and the graph shows PyTorch's nodes. Decompositions are unique only up
to the signs of their singular vectors and eigenvectors; we return NumPy's (LAPACK's) choice.

Real inputs only for gradients: complex matrices factorize, but their rules are not written.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.dtype import cpp_name, scalar_name
from ..core.errors import broadcast_shape
from ..core.node import Node
from ..core.record import as_result, record, wants_grad, wrap
from ..core.rules import numpy_ops
from ..core.tensor import _wrap_dim
from .autocast import autocast_entry
from .matmul import matmul, mm
from .products import linalg_cross, vdot
from .reductions import amax, amin
from .reductions import vector_norm as _vector_norm
from .selection import where
from .views import clone, permute, reshape, unsqueeze
from .views import diagonal as _diagonal

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "vecdot", "vector_norm"]


class LinAlgError(RuntimeError):
    """A matrix without the property an operation needs (singular, not positive-definite), as in PyTorch."""


# The named results (``gradiente.return_types.linalg_qr(Q=..., R=...)``)
slogdet_type = return_types.slogdet
linalg_slogdet, linalg_inv_ex, linalg_solve_ex = (return_types.linalg_slogdet, return_types.linalg_inv_ex,
                                                  return_types.linalg_solve_ex)
linalg_cholesky_ex, linalg_qr = return_types.linalg_cholesky_ex, return_types.linalg_qr
linalg_eigh, linalg_svd = return_types.linalg_eigh, return_types.linalg_svd
# Made with return_types' own constructor, so they print as ``gradiente.return_types.linalg_lu(...)``.


# --- checks, with PyTorch's messages ---------------------------------------------------------------------

def _check_matrix(name, a, arg="A"):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _check_square(name, a):
    _check_matrix(name, a)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")


def _check_floating(name, a):
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_name(a.dtype)}")
    if a.dtype == np.float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def _batch_prefix(a, index):
    """PyTorch names the failing matrix of a batch: ``(Batch element 1): ``."""
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def _first_failure(a, info):
    """The flat batch index of the first matrix whose ``info`` is non-zero, and that info."""
    flat = np.reshape(info, -1)
    index = int(np.flatnonzero(flat)[0])
    return index, int(flat[index])


# --- what the rules compute with ------------------------------------------------------------------------

def _mT(ops, x):
    return ops.transpose(x, -1, -2)


def _solve(ops, a, b):
    """a⁻¹ b for matrices ``b``."""
    return solve(a, b) if ops.recording else np.linalg.solve(a, b)


def _inverse(ops, a):
    return inv(a) if ops.recording else np.linalg.inv(a)


def _right_solve(ops, x, a):
    """x a⁻¹ (``x`` times the inverse of ``a`` on the right), as (a⁻ᵀ xᵀ)ᵀ."""
    return _mT(ops, _solve(ops, _mT(ops, a), _mT(ops, x)))


def _eye(ops, n, like):
    return ops.constant(np.eye(n), like)


def _diag_matrix(ops, v):
    """Matrices with ``v`` (..., n) on their diagonals."""
    return ops.unsqueeze(v, -1) * _eye(ops, v.shape[-1], v)


def _off_diagonal_inverse(ops, e):
    """1 / e off the diagonal, 0 on it (where e is 0): the factor of the eigen- and singular-vector rules."""
    eye = _eye(ops, e.shape[-1], e)
    return (1 - eye) / (e + eye)


def _unsqueeze2(ops, x):
    return ops.unsqueeze(ops.unsqueeze(x, -1), -1)


# --- LAPACK's info, for the error messages -----------------------------------------------------------------

def _lu_info(a):
    """LAPACK getrf's ``info`` for each matrix: the 1-based position of the first zero pivot of an LU
    factorization with partial pivoting, 0 when there is none (what PyTorch reports for a singular matrix)."""
    return _lu_arrays(a)[2]


def _cholesky_info(a):
    """For each matrix, the order of the first leading minor that is not positive-definite (0 when none)."""
    n = a.shape[-1]
    m = np.array(a.reshape((-1, n, n)), dtype=np.result_type(a.dtype, np.float32))
    low = np.zeros_like(m)
    info = np.zeros(len(m), dtype=np.int32)
    for j in range(n):
        pivot = m[:, j, j] - (low[:, j, :j] ** 2).sum(-1)
        failed = ~(pivot > 0)
        info[failed & (info == 0)] = j + 1
        root = np.sqrt(np.where(failed, 1, pivot))
        low[:, j, j] = root
        below = m[:, j + 1:, j] - np.einsum("bik,bk->bi", low[:, j + 1:, :j], low[:, j, :j])
        low[:, j + 1:, j] = below / root[:, None]
    return info.reshape(a.shape[:-2])


def _factorize(factorize, a, find_info):
    """``factorize(a)`` (NumPy, one call for the batch) and LAPACK's info for each matrix. When a matrix fails,
    NumPy raises for the whole batch: ``find_info`` then says which, and those results are nan."""
    try:
        return factorize(a), np.zeros(a.shape[:-2], dtype=np.int32)
    except np.linalg.LinAlgError:
        info = find_info(a)
        result = np.full_like(a, np.nan)
        for index in np.ndindex(info.shape):
            if info[index] == 0:
                try:
                    result[index] = factorize(a[index])
                except np.linalg.LinAlgError:     # a pivot LAPACK found to be 0 that our replay rounded away
                    info[index] = a.shape[-1]
        return result, info


# --- determinants ---------------------------------------------------------------------------------------

def _cofactor_array(a):
    """det(A)·A⁻ᵀ (the cofactor matrix) from an SVD, A = U S Vᴴ: det(U) det(Vᴴ) Ū diag(Π_{j≠i} sⱼ) V̄ᴴ (the bars
    conjugate a complex A's factors; A⁻ᵀ = Ū S⁻¹ V̄ᴴ). Defined for a singular A as well, where A⁻ᵀ is not."""
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], -1), -1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(s, -1)[..., :-1]], -1), -1), -1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    if a.dtype.kind == "c":
        u, vh = u.conj(), vh.conj()
    return sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh)


class LinalgDetBackward0(Node):
    """out = det(A);  dA = grad · det(A) · A⁻ᵀ (the cofactor matrix, which a singular A has too)"""
    __slots__ = ()
    holomorphic = True          # the rule is the plain transposed Jacobian (issue 16: complex matrices)
    formula = "∂det(A)/∂A = det(A)·A⁻ᵀ"

    def backward(self, ops, grad):
        a, out = self.saved(ops)
        if ops.recording:       # differentiable again, for an invertible A
            cofactor = _unsqueeze2(ops, out) * _mT(ops, inv(a))
        else:
            cofactor = _cofactor_array(a)
        return (_unsqueeze2(ops, grad) * cofactor,)


def det(A, *, out=None):
    """The determinant of a square matrix, or of each in a batch ``(..., n, n)``.

    Differs from PyTorch on purpose at an exactly singular matrix: its gradient is the cofactor matrix (what
    finite differences give), where PyTorch 2.13 returns zeros (pytorch/pytorch#104675)."""
    a = A._data
    _check_square("linalg.det", a)
    _check_floating("linalg.det", a)
    result = as_result(np.linalg.det(a), a.dtype)
    if wants_grad(A):
        record(LinalgDetBackward0, (A,), result, (A, result))
    return result if out is None else out.copy_(result)


class LinalgSlogdetBackward0(Node):
    """(sign, out) = (sign det(A), log |det(A)|). Real A: dA = grad_out · A⁻ᵀ (the sign is piecewise constant).
    Complex A: log det(A) = out + iθ with sign = e^{iθ}; the gradient reaching log det(A) is
    g = grad_out − i·Im(conj(grad_sign)·sign), and dA = g · A⁻ᴴ"""
    __slots__ = ()
    complex_ok = True           # the complex case is written out below
    formula = "∂ log|det(A)|/∂A = A⁻ᵀ"

    def backward(self, ops, grad_sign, grad):
        a, sign = self.saved(ops)
        inverse_t = _mT(ops, _inverse(ops, a))
        if ops.raw(a).dtype.kind != "c":
            return (_unsqueeze2(ops, grad) * inverse_t,)
        through_log = grad if grad is not None else ops.zeros(ops.raw(sign).shape, ops.real(sign))
        if grad_sign is not None:
            through_log = through_log - 1j * ops.imag(ops.conj(grad_sign) * sign)
        return (_unsqueeze2(ops, through_log) * ops.conj(inverse_t),)


def _slogdet(A, name):
    a = A._data
    _check_square(name, a)
    _check_floating(name, a)
    sign, logabsdet = np.linalg.slogdet(a)
    sign, logabsdet = as_result(sign, a.dtype), as_result(logabsdet, np.finfo(a.dtype).dtype)
    if wants_grad(A):
        record(LinalgSlogdetBackward0, (A,), (sign, logabsdet), (A, sign))
    return sign, logabsdet


def _slogdet_as(A, result_type):
    return result_type(*_slogdet(A, "linalg.slogdet"))


def slogdet(A, *, out=None):
    """The sign and the log of the absolute value of the determinant, ``(sign, logabsdet)``: the log stays
    finite where the determinant itself would overflow or underflow."""
    return _slogdet_as(A, linalg_slogdet)


def _logdet(A):
    """log det(A) (``torch.logdet``): nan for a negative determinant, -inf for a zero one."""
    sign, logabsdet = _slogdet(A, "logdet")
    return where(sign < 0, math.nan, logabsdet)


# --- inverse and solve ----------------------------------------------------------------------------------

class LinalgInvExBackward0(Node):
    """out = A⁻¹;  dA = −A⁻ᵀ · grad · A⁻ᵀ"""
    __slots__ = ()
    holomorphic = True          # the rule is the plain transposed Jacobian (issue 16: complex matrices)
    formula = "∂A⁻¹/∂A: G ↦ −A⁻ᵀ·G·A⁻ᵀ"

    def backward(self, ops, grad):
        (out,) = self.saved(ops)
        transposed = _mT(ops, out)
        return (-ops.matmul(ops.matmul(transposed, grad), transposed),)


def _invert(A):
    """A⁻¹ as a recorded tensor, and LAPACK's info (nan fills the inverse of a singular matrix)."""
    a = A._data
    _check_square("linalg.inv", a)
    _check_floating("linalg.inv", a)
    inverse, info = _factorize(np.linalg.inv, a, _lu_info)
    result = wrap(inverse)
    if wants_grad(A):
        record(LinalgInvExBackward0, (A,), result, (result,))
    return result, info


def inv_ex(A, *, check_errors=False, out=None):
    """The inverse and LAPACK's ``info`` (0, or the position of the first zero pivot of a singular matrix),
    without raising. Differs from PyTorch: a singular matrix's inverse is all nan, not LAPACK's partial
    result."""
    inverse, info = _invert(A)
    if check_errors and info.any():
        _raise_singular_inverse(A._data, info, "linalg.inv_ex")
    return linalg_inv_ex(inverse, wrap(info))


def _raise_singular_inverse(a, info, name):
    index, position = _first_failure(a, info)
    raise LinAlgError(f"{name}: {_batch_prefix(a, index)}The diagonal element {position} is zero, the inversion "
                      "could not be completed because the input matrix is singular.")


def inv(A, *, out=None):
    """The inverse of a square matrix, or of each in a batch; raises ``LinAlgError`` for a singular one."""
    inverse, info = _invert(A)
    if info.any():
        _raise_singular_inverse(A._data, info, "linalg.inv")
    return inverse if out is None else out.copy_(inverse)


class LinalgSolveExBackward0(Node):
    """X = A⁻¹B;  dB = A⁻ᴴ·grad;  dA = −dB·Xᴴ   (left=False, X = BA⁻¹:  dB = grad·A⁻ᴴ;  dA = −Xᴴ·dB)"""
    __slots__ = ()
    complex_ok = True           # written with conjugate transposes (plain transposes for real matrices)
    formula = "∂(A⁻¹B)/∂B: G ↦ A⁻ᴴG,  ∂/∂A: G ↦ −A⁻ᴴG·Xᴴ"

    def backward(self, ops, grad):
        a, x = self.saved(ops)
        if self.vector:
            grad, x = ops.unsqueeze(grad, -1), ops.unsqueeze(x, -1)
        a_h, x_h = ops.conj(_mT(ops, a)), ops.conj(_mT(ops, x))
        if self.left:
            grad_b = _solve(ops, a_h, grad)
            grad_a = -ops.matmul(grad_b, x_h)
        else:
            grad_b = _right_solve(ops, grad, a_h)
            grad_a = -ops.matmul(x_h, grad_b)
        if self.vector:
            grad_b = ops.sum(grad_b, -1)
        return (grad_a if self.next_functions[0][0] is not None else None,
                grad_b if self.next_functions[1][0] is not None else None)


def _solve_array(a, b, left):
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _solve_arrays(A, B, left):
    """The solution array, whether B is a (batch of) vector(s), and LAPACK's info for each matrix of A."""
    a, b = A._data, B._data
    _check_square("linalg.solve", a)
    _check_floating("linalg.solve", a)
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_name(a.dtype)} and B of type {scalar_name(b.dtype)} instead")
    # A vector is a column on either side, so with left=False it fits only a 1×1 A (as in PyTorch).
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    rhs = b[..., None] if vector else b
    n = a.shape[-1]
    if rhs.ndim < 2 or rhs.shape[-2 if left else -1] != n:
        shape = rhs.shape if rhs.ndim >= 2 else (*rhs.shape, 1)
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} "
                           f"= B ({n}x{n} and {shape[-2]}x{shape[-1]})")
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    try:
        x = _solve_array(a, rhs, left)
    except np.linalg.LinAlgError:
        # Solve again with each singular matrix replaced by I, and give its solutions as nan.
        info = _factorize(np.linalg.inv, a, _lu_info)[1]
        singular = (info != 0)[..., None, None]
        x = _solve_array(np.where(singular, np.eye(n, dtype=a.dtype), a), rhs, left)
        x = np.where(singular, np.nan, x)
    if vector:
        x = x[..., 0]
    return x, vector, info


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``solve`` and LAPACK's info, without raising for a singular A. Differs from PyTorch: the solution for a
    singular matrix is nan, where PyTorch returns LAPACK's partial result (often ±inf)."""
    x, vector, info = _solve_arrays(A, B, left)
    if check_errors and info.any():
        _raise_singular_solve(A._data, info, "torch.linalg.solve_ex")
    result = wrap(x)
    if wants_grad(A, B):
        record(LinalgSolveExBackward0, (A, B), result, (A, result), left=left, vector=vector)
    return linalg_solve_ex(result, wrap(info))


def _raise_singular_solve(a, info, name):
    index, _ = _first_failure(a, info)
    raise LinAlgError(f"{name}: {_batch_prefix(a, index)}The solver failed because the input matrix is "
                      "singular.")


def solve(A, B, *, left=True, out=None):
    """X with ``A X = B`` (``X A = B`` with ``left=False``). B is a matrix ``(..., n, k)`` or a vector
    ``(..., n)``; batch dims broadcast. Raises ``LinAlgError`` for a singular A."""
    x, vector, info = _solve_arrays(A, B, left)
    if info.any():
        _raise_singular_solve(A._data, info, "torch.linalg.solve")
    result = wrap(x)
    if wants_grad(A, B):
        record(LinalgSolveExBackward0, (A, B), result, (A, result), left=left, vector=vector)
    return result if out is None else out.copy_(result)


# --- triangular solves ------------------------------------------------------------------------------------

def _substitute(a, b, upper, unitriangular):
    """X with a X = b for a triangular ``a``, on arrays: forward (lower) or back (upper) substitution, one row
    of X at a time, all columns and batch entries together. Only ``a``'s triangle is read (its diagonal not
    at all with ``unitriangular``); batch dims broadcast."""
    n = a.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    x = np.zeros(shape, np.result_type(a.dtype, b.dtype))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        solved = slice(i + 1, n) if upper else slice(0, i)
        row = b[..., i, :] - (a[..., i:i + 1, solved] @ x[..., solved, :])[..., 0, :]
        x[..., i, :] = row if unitriangular else row / a[..., i, i, None]
    return x


def _triangular(ops, a, b, upper, unitriangular=False, transpose=False):
    """op(a)⁻¹ b for a triangular ``a``, op(a) = aᵀ with ``transpose`` (triangular on the other side): NumPy on
    arrays, the differentiable ``solve_triangular`` on tensors."""
    if transpose:
        a, upper = _mT(ops, a), not upper
    if ops.recording:
        return solve_triangular(a, b, upper=upper, unitriangular=unitriangular)
    return _substitute(a, b, upper, unitriangular)


def _triangular_grads(ops, a, x, grad, upper, unitriangular, left=True, transpose=False):
    """(dA, dB) of X = op(A)⁻¹B (``left``) or X = B·A⁻¹, dA kept to the triangle of A that is read.
    X = A⁻¹B: dB = A⁻ᵀG, dA = −dB·Xᵀ;  X = A⁻ᵀB: dB = A⁻¹G, dA = −X·dBᵀ;  X = BA⁻¹: dB = GA⁻ᵀ, dA = −Xᵀ·dB."""
    if left:
        grad_b = _triangular(ops, a, grad, upper, unitriangular, transpose=not transpose)
        grad_a = -ops.matmul(x, _mT(ops, grad_b)) if transpose else -ops.matmul(grad_b, _mT(ops, x))
    else:
        grad_b = _mT(ops, _triangular(ops, a, _mT(ops, grad), upper, unitriangular))
        grad_a = -ops.matmul(_mT(ops, x), grad_b)
    offset = 1 if unitriangular else 0            # a unit diagonal is not read, so it gets no gradient
    return (ops.triu(grad_a, offset) if upper else ops.tril(grad_a, -offset)), grad_b


class LinalgSolveTriangularBackward0(Node):
    """X = A⁻¹B, A triangular;  dB = A⁻ᵀ·grad;  dA = −dB·Xᵀ, kept to A's triangle (left=False: X = BA⁻¹)"""
    __slots__ = ()
    formula = "∂(A⁻¹B)/∂B: G ↦ A⁻ᵀG,  ∂/∂A: G ↦ tri(−A⁻ᵀG·Xᵀ)"

    def backward(self, ops, grad):
        a, x = self.saved(ops)
        grad_a, grad_b = _triangular_grads(ops, a, x, grad, self.upper, self.unitriangular, self.left)
        return (grad_a if self.next_functions[0][0] is not None else None,
                grad_b if self.next_functions[1][0] is not None else None)


def _check_triangular_system(A, B, left):
    """PyTorch's checks of a triangular system: matrices, A square, sizes that fit, batch dims that broadcast."""
    a, b = A._data, B._data
    name = "linalg.solve_triangular"
    _check_matrix(name, a)
    _check_matrix(name, b, arg="B")
    _check_square(name, a)
    n = a.shape[-1]
    if b.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    broadcast_shape(b.shape[:-2], a.shape[:-2])             # PyTorch names B's size first
    for array in (a, b):
        if dt.kind(array.dtype) not in "fc" or array.dtype == np.float16:
            raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{scalar_name(array.dtype)}'")


def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """X with ``A X = B`` (``X A = B`` with ``left=False``), A = ``input`` ``(..., n, n)`` upper or lower triangular
    and B ``(..., n, k)`` (``(..., k, n)`` with ``left=False``); only A's ``upper`` (or lower) triangle is read, and
    its diagonal is taken as ones with ``unitriangular``. Batch dims broadcast. (PyTorch's documentation calls the
    first argument A; its keyword is ``input``.)"""
    A = input
    _check_triangular_system(A, B, left)
    a, b = A._data, B._data
    if left:
        x = _substitute(a, b, upper, unitriangular)
    else:                                           # X A = B is Aᵀ Xᵀ = Bᵀ, Aᵀ triangular on the other side
        x = np.swapaxes(_substitute(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, unitriangular), -1, -2)
    result = wrap(x.astype(a.dtype, copy=False))
    if wants_grad(A, B):
        record(LinalgSolveTriangularBackward0, (A, B), result, (A, result), upper=upper, left=left,
               unitriangular=unitriangular)
    return result if out is None else out.copy_(result)


# --- Cholesky -------------------------------------------------------------------------------------------

def _mH(ops, x):
    """The conjugate transpose (the transpose of a real matrix)."""
    return ops.conj(_mT(ops, x))


class LinalgCholeskyExBackward0(Node):
    """A = L Lᴴ;  dA = L⁻ᴴ Ψ L⁻¹, with X = tril(Lᴴ·grad) and Ψ = (X + tril(X, -1)ᴴ)/2: the part of a Hermitian
    change of A that L carries (Ψ is symmetric for a real A; for a complex one its diagonal keeps X's imaginary
    part, PyTorch's convention)"""
    __slots__ = ()
    complex_ok = True           # written with conjugate transposes (issue 16)
    formula = "∂L/∂A: G ↦ L⁻ᴴ Ψ(LᴴG) L⁻¹"

    def backward(self, ops, grad, *_):
        (factor,) = self.saved(ops)
        low, grad = (_mH(ops, factor), _mH(ops, grad)) if self.upper else (factor, grad)
        low_h = _mH(ops, low)
        x = ops.tril(ops.matmul(low_h, grad), 0)
        psi = (x + _mH(ops, ops.tril(x, -1))) * 0.5
        return (_right_solve(ops, _solve(ops, low_h, psi), low),)


def _factor(A, upper, node_cls=LinalgCholeskyExBackward0):
    """The factor (L, or U = Lᴴ with ``upper``) recorded as ``node_cls``, and LAPACK's info; A is checked by
    the caller (``torch.cholesky`` words its errors differently)."""
    low, info = _factorize(np.linalg.cholesky, A._data, _cholesky_info)
    # U = Lᴴ: the conjugate transpose, for a complex A (issue 16: it was the plain transpose)
    result = wrap(np.ascontiguousarray(np.swapaxes(low, -1, -2).conj()) if upper else low)
    if wants_grad(A):
        record(node_cls, (A,), result, (result,), upper=upper)
    return result, info


def _checked_factor(A, upper):
    a = A._data
    _check_square("linalg.cholesky", a)
    _check_floating("linalg.cholesky", a)
    return _factor(A, upper)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``cholesky`` and LAPACK's info (the order of the first leading minor that is not positive-definite),
    without raising. Differs from PyTorch: the factor of such a matrix is nan, not LAPACK's partial factor."""
    low, info = _checked_factor(A, upper)
    if check_errors and info.any():
        _raise_not_positive_definite(A._data, info, "linalg.cholesky_ex")
    return linalg_cholesky_ex(low, wrap(info))


def _raise_not_positive_definite(a, info, name):
    index, order = _first_failure(a, info)
    raise LinAlgError(f"{name}: {_batch_prefix(a, index)}The factorization could not be completed because "
                      f"the input is not positive-definite (the leading minor of order {order} is not "
                      "positive-definite).")


@autocast_entry
def cholesky(A, *, upper=False, out=None):
    """The lower-triangular L with ``A = L Lᵀ`` for a symmetric positive-definite A (only its lower triangle is
    read); ``upper=True`` gives ``U = Lᵀ``. Raises ``LinAlgError`` if A is not positive-definite."""
    low, info = _checked_factor(A, upper)
    if info.any():
        _raise_not_positive_definite(A._data, info, "linalg.cholesky")
    return low if out is None else out.copy_(low)


# --- LU -------------------------------------------------------------------------------------------------

def _lu_arrays(a):
    """LU with partial pivoting as LAPACK's getrf computes it, for each (m, n) matrix of ``a``: the packed factors
    (L's multipliers below the diagonal, U on and above it), the 1-based row swapped into each position (int32),
    and ``info`` (the 1-based position of the first zero pivot, 0 when there is none)."""
    m, n = a.shape[-2:]
    k, batch_shape = min(m, n), a.shape[:-2]
    count = math.prod(batch_shape)
    lu = np.array(a.reshape((count, m, n)), dtype=np.result_type(a.dtype, np.float32))
    pivots = np.zeros((count, k), dtype=np.int32)
    info = np.zeros(count, dtype=np.int32)
    batch = np.arange(count)
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        row_j = lu[batch, j].copy()
        lu[batch, j] = lu[batch, p]
        lu[batch, p] = row_j
        pivot = lu[:, j, j]
        info[(pivot == 0) & (info == 0)] = j + 1
        # A zero pivot is its column's largest entry: the column below it is zero already, and stays so.
        np.divide(lu[:, j + 1:, j], pivot[:, None], out=lu[:, j + 1:, j], where=pivot[:, None] != 0)
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, None, j, j + 1:]
    return (lu.reshape(batch_shape + (m, n)), pivots.reshape(batch_shape + (k,)),
            info.reshape(batch_shape))


def _permutation(pivots, m, dtype):
    """The permutation matrix P of A = P L U, from LAPACK's pivots (row i was swapped with row pivots[i])."""
    batch_shape, k = pivots.shape[:-1], pivots.shape[-1]
    count = math.prod(batch_shape)
    order = np.tile(np.arange(m), (count, 1))       # order[i]: the row of A in row i of L U
    swaps = pivots.reshape((count, k)).astype(np.intp) - 1
    rows = np.arange(len(order))
    for i in range(k):
        j = swaps[:, i]
        order[rows, i], order[rows, j] = order[rows, j], order[rows, i].copy()
    return np.swapaxes(np.eye(m, dtype=dtype)[order], -1, -2).reshape(batch_shape + (m, m))


def _unpack(ops, lu):
    """L (unit lower-triangular, m×k) and U (upper-triangular, k×n) from packed factors, k = min(m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = ops.tril(ops.narrow(lu, -1, 0, k), -1) + ops.constant(np.eye(m, k), lu)
    return low, ops.triu(ops.narrow(lu, -2, 0, k), 0)


def _lu_backward(ops, p, low, up, grad_l, grad_u):
    """dA of A = P L U from the gradients of L and U (Φ = tril₋₁(Lᵀ·gL) + triu(gU·Uᵀ), square: dA = P L⁻ᵀ Φ U⁻ᵀ).
    A wide A = P L [U₁ | U₂] adds dA₂ = P L⁻ᵀ gU₂ and −gU₂U₂ᵀ to Lᵀ·gL; a tall Pᵀ A = [L₁; L₂] U adds
    dB₂ = gL₂ U⁻ᵀ and −L₂ᵀgL₂ to gU·Uᵀ."""
    m, n = low.shape[-2], up.shape[-1]

    def square(low, up, low_grad, up_grad):      # L⁻ᵀ (tril₋₁(low_grad) + triu(up_grad)) U⁻ᵀ
        phi = ops.tril(low_grad, -1) + ops.triu(up_grad, 0)
        left = _triangular(ops, low, phi, upper=False, unitriangular=True, transpose=True)
        return _mT(ops, _triangular(ops, up, _mT(ops, left), upper=True))

    low_t_grad = ops.matmul(_mT(ops, low), grad_l)
    if m == n:
        return ops.matmul(p, square(low, up, low_t_grad, ops.matmul(grad_u, _mT(ops, up))))
    if m < n:
        up1, up2 = ops.narrow(up, -1, 0, m), ops.narrow(up, -1, m, n - m)
        grad_u1, grad_u2 = ops.narrow(grad_u, -1, 0, m), ops.narrow(grad_u, -1, m, n - m)
        grad_a1 = square(low, up1, low_t_grad - ops.matmul(grad_u2, _mT(ops, up2)),
                         ops.matmul(grad_u1, _mT(ops, up1)))
        grad_a2 = _triangular(ops, low, grad_u2, upper=False, unitriangular=True, transpose=True)
        return ops.matmul(p, ops.cat([grad_a1, grad_a2], -1))
    low1, low2 = ops.narrow(low, -2, 0, n), ops.narrow(low, -2, n, m - n)
    grad_l1, grad_l2 = ops.narrow(grad_l, -2, 0, n), ops.narrow(grad_l, -2, n, m - n)
    grad_b1 = square(low1, up, ops.matmul(_mT(ops, low1), grad_l1),
                     ops.matmul(grad_u, _mT(ops, up)) - ops.matmul(_mT(ops, low2), grad_l2))
    grad_b2 = _mT(ops, _triangular(ops, up, _mT(ops, grad_l2), upper=True))
    return ops.matmul(p, ops.cat([grad_b1, grad_b2], -2))


class LinalgLuFactorExBackward0(Node):
    """LU = packed (L, U) of A = P L U;  dA = the rule of A = P L U with gL = tril₋₁(gLU), gU = triu(gLU)"""
    __slots__ = ()
    formula = "∂(L, U)/∂A: P L⁻ᵀ (tril₋₁(Lᵀ·gL) + triu(gU·Uᵀ)) U⁻ᵀ"

    def backward(self, ops, grad):
        (lu,) = self.saved(ops)
        low, up = _unpack(ops, lu)
        k = min(lu.shape[-2:])
        grad_l = ops.tril(ops.narrow(grad, -1, 0, k), -1)
        grad_u = ops.triu(ops.narrow(grad, -2, 0, k), 0)
        return (_lu_backward(ops, ops.constant(self.permutation, grad), low, up, grad_l, grad_u),)


class LinalgLuBackward0(Node):
    """A = P L U;  dA = P L⁻ᵀ (tril₋₁(Lᵀ·gL) + triu(gU·Uᵀ)) U⁻ᵀ for a square A (see ``_lu_backward``)"""
    __slots__ = ()
    formula = "∂(L, U)/∂A: P L⁻ᵀ (tril₋₁(Lᵀ·gL) + triu(gU·Uᵀ)) U⁻ᵀ"

    def backward(self, ops, grad_l, grad_u):
        low, up = self.saved(ops)
        return (_lu_backward(ops, ops.constant(self.permutation, grad_l), low, up, grad_l, grad_u),)


def _lu_checked(A, pivot, name):
    """``_lu_arrays`` of A after PyTorch's checks."""
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(a.shape)} instead")
    if dt.kind(a.dtype) not in "fc" or a.dtype == np.float16:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return _lu_arrays(a)


def _lu_factor(A, pivot):
    """LU, pivots and info as tensors, LU recorded (``LinalgLuFactorExBackward0``)."""
    a = A._data
    lu, pivots, info = _lu_checked(A, pivot, "torch.lu_factor")
    result = wrap(lu.astype(a.dtype, copy=False))
    if wants_grad(A):
        record(LinalgLuFactorExBackward0, (A,), result, (result,),
               permutation=_permutation(pivots, a.shape[-2], a.dtype))
    return result, wrap(pivots), wrap(info)


def _raise_zero_pivot(a, info, name):
    index, position = _first_failure(a, info)
    raise RuntimeError(f"{name}: {_batch_prefix(a, index)}U[{position},{position}] is zero and using it on "
                       "lu_solve would result in a division by zero. If you still want to perform the "
                       "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``lu_factor`` and LAPACK's info (the position of the first zero pivot, 0 when none), without raising."""
    lu, pivots, info = _lu_factor(A, pivot)
    if check_errors and info._data.any():
        _raise_zero_pivot(A._data, info._data, "torch.linalg.lu_factor_ex")
    return return_types.linalg_lu_factor_ex(lu, pivots, info)


def lu_factor(A, *, pivot=True, out=None):
    """A = P L U with partial pivoting, compactly: ``(LU, pivots)``, L's multipliers below LU's diagonal and U on
    and above it, and pivots (int32, 1-based) the row swapped into each position, as LAPACK gives them. Raises
    for a singular A (a zero pivot would divide ``lu_solve`` by zero); ``lu_factor_ex`` does not."""
    lu, pivots, info = _lu_factor(A, pivot)
    if info._data.any():
        _raise_zero_pivot(A._data, info._data, "torch.linalg.lu_factor")
    return return_types.linalg_lu_factor(lu, pivots)


def lu(A, *, pivot=True, out=None):
    """A = P L U with partial pivoting: P a permutation matrix (m×m), L unit lower-triangular (m×k), U upper-
    triangular (k×n), k = min(m, n). Returns ``(P, L, U)``; L and U are differentiable."""
    a = A._data
    packed, pivots, _ = _lu_checked(A, pivot, "linalg.lu")
    low, up = (wrap(f.astype(a.dtype, copy=False)) for f in _unpack(numpy_ops, packed))
    permutation = _permutation(pivots, a.shape[-2], a.dtype)
    if wants_grad(A):
        record(LinalgLuBackward0, (A,), (low, up), (low, up), permutation=permutation)
    return return_types.linalg_lu(wrap(permutation), low, up)


class LinalgLuSolveBackward0(Node):
    """X = op(A)⁻¹B (or B·op(A)⁻¹), A = P L U given as (LU, pivots);  dB = op(A)⁻ᵀ·grad (grad·op(A)⁻ᵀ), and dA as
    for ``solve``, carried to the packed factors: dLU = tril₋₁(Pᵀ·dA·Uᵀ) + triu(Lᵀ·Pᵀ·dA)"""
    __slots__ = ()
    formula = "∂X/∂B: G ↦ A⁻ᵀG,  ∂X/∂LU: tril₋₁(Pᵀ dA Uᵀ) + triu(Lᵀ Pᵀ dA), dA = −A⁻ᵀG·Xᵀ"

    def backward(self, ops, grad):
        lu, x = self.saved(ops)
        p = ops.constant(self.permutation, grad)
        low, up = _unpack(ops, lu)
        if self.left:
            grad_b = _lu_apply(ops, p, low, up, grad, not self.adjoint)
            grad_op = -ops.matmul(grad_b, _mT(ops, x))
        else:
            grad_b = _mT(ops, _lu_apply(ops, p, low, up, _mT(ops, grad), self.adjoint))
            grad_op = -ops.matmul(_mT(ops, x), grad_b)
        grad_lu = None
        if self.next_functions[0][0] is not None:
            grad_a = _mT(ops, grad_op) if self.adjoint else grad_op
            moved = ops.matmul(_mT(ops, p), grad_a)                                      # Pᵀ dA
            grad_lu = ops.tril(ops.matmul(moved, _mT(ops, up)), -1) + ops.triu(ops.matmul(_mT(ops, low), moved), 0)
        return grad_lu, (grad_b if self.next_functions[1][0] is not None else None)


def _lu_apply(ops, p, low, up, b, transpose):
    """A⁻¹b = U⁻¹ L⁻¹ Pᵀ b, or A⁻ᵀb = P L⁻ᵀ U⁻ᵀ b with ``transpose``, for A = P L U."""
    if transpose:
        inner = _triangular(ops, up, b, upper=True, transpose=True)
        return ops.matmul(p, _triangular(ops, low, inner, upper=False, unitriangular=True, transpose=True))
    inner = _triangular(ops, low, ops.matmul(_mT(ops, p), b), upper=False, unitriangular=True)
    return _triangular(ops, up, inner, upper=True)


def _check_lu_solve(LU, pivots, B, left):
    lu_array, b = LU._data, B._data
    _check_matrix("linalg.lu_solve", lu_array, arg="LU")
    _check_matrix("linalg.lu_solve", b, arg="B")
    _check_square("torch.linalg.lu_solve", lu_array)
    n = lu_array.shape[-1]
    if b.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'}"
                           f" = B ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    if pivots._data.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if pivots._data.shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if lu_array.dtype != b.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{scalar_name(lu_array.dtype)} and B of type {scalar_name(b.dtype)} instead")


@autocast_entry
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with ``A X = B`` (``X A = B`` with ``left=False``; Aᵀ in place of A with ``adjoint``) for A given by
    ``lu_factor``'s ``(LU, pivots)``: two triangular solves instead of a new factorization. Batch dims
    broadcast; differentiable in LU and B."""
    _check_lu_solve(LU, pivots, B, left)
    lu_array = LU._data
    permutation = _permutation(np.asanyarray(pivots._data), lu_array.shape[-1], lu_array.dtype)
    low, up = _unpack(numpy_ops, lu_array)
    b = B._data
    if left:
        x = _lu_apply(numpy_ops, permutation, low, up, b, adjoint)
    else:                                           # X op(A) = B is op(A)ᵀ Xᵀ = Bᵀ
        x = np.swapaxes(_lu_apply(numpy_ops, permutation, low, up, np.swapaxes(b, -1, -2), not adjoint), -1, -2)
    result = wrap(x.astype(lu_array.dtype, copy=False))
    if wants_grad(LU, B):
        record(LinalgLuSolveBackward0, (LU, B), result, (LU, result), permutation=permutation, left=left,
               adjoint=adjoint)
    return result if out is None else out.copy_(result)


# --- QR -------------------------------------------------------------------------------------------------

def _qr_tall(ops, q, r, grad_q, grad_r):
    """dA of A = QR for m ≥ n: (grad_q + Q·mirror(N))·R⁻ᵀ, N = grad_r·Rᵀ − Qᵀ·grad_q, where mirror keeps the
    upper triangle of N and copies it below the diagonal (a symmetric matrix)."""
    n = ops.matmul(grad_r, _mT(ops, r)) - ops.matmul(_mT(ops, q), grad_q)
    mirrored = ops.triu(n, 0) + _mT(ops, ops.triu(n, 1))
    return _right_solve(ops, grad_q + ops.matmul(q, mirrored), _mT(ops, r))


class LinalgQrBackward0(Node):
    """A = QR (m ≥ n);  dA = (gQ + Q·mirror(gR·Rᵀ − Qᵀ·gQ))·R⁻ᵀ (mirror: the upper triangle, copied below).
    For m < n, A = [X | Y] with X square:
    X's rule with gQ + Y·gR₂ᵀ, and dY = Q·gR₂"""
    __slots__ = ()
    formula = "∂(Q, R)/∂A: (gQ + Q·mirror(gR·Rᵀ − Qᵀ·gQ))·R⁻ᵀ"

    def backward(self, ops, grad_q, grad_r):
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                               "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        m, n = self._input_meta[0][0][-2:]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        q, r = self.saved(ops)
        if m >= n:
            return (_qr_tall(ops, q, r, grad_q, grad_r),)
        r_left, r_right = ops.narrow(r, -1, 0, m), ops.narrow(r, -1, m, n - m)
        grad_left, grad_right = ops.narrow(grad_r, -1, 0, m), ops.narrow(grad_r, -1, m, n - m)
        y = ops.matmul(q, r_right)
        grad_x = _qr_tall(ops, q, r_left, grad_q + ops.matmul(y, _mT(ops, grad_right)), grad_left)
        return (ops.cat([grad_x, ops.matmul(q, grad_right)], -1),)


def qr(A, mode="reduced", *, out=None):
    """A = QR with Q's columns orthonormal and R upper-triangular. ``mode``: 'reduced' (Q is m×k, k = min(m, n)),
    'complete' (Q is m×m), or 'r' (R only; Q is empty). Returns ``(Q, R)``."""
    a = A._data
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _check_matrix("linalg.qr", a)
    _check_floating("linalg.qr", a)
    if mode == "r":
        q, r = np.zeros((0,), dtype=a.dtype), np.linalg.qr(a, mode="r")
    else:
        q, r = np.linalg.qr(a, mode=mode)
    q, r = wrap(q), wrap(r)
    if wants_grad(A):
        record(LinalgQrBackward0, (A,), (q, r), (q, r), mode=mode)
    return linalg_qr(q, r)


# --- symmetric eigendecomposition ----------------------------------------------------------------------

_EIGENVECTOR_PHASE = ("{}: The eigenvectors in the complex case are specified up to multiplication by e^{{i phi}}. "
                      "The specified loss function depends on this quantity, so it is ill-defined.")


def _check_phase_invariance(ops, k, op_name):
    """A complex eigenvector is defined up to a phase e^{iφ}: a loss that depends on it (Im diag(Vᴴ·gV) ≠ 0) has no
    gradient, and PyTorch says so, with the same tolerance."""
    diagonal = np.diagonal(ops.raw(k), axis1=-2, axis2=-1)
    if diagonal.dtype.kind == "c" and not np.allclose(diagonal.imag, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(_EIGENVECTOR_PHASE.format(op_name))


class LinalgEighBackward0(Node):
    """A = V diag(L) Vᴴ;  dA = V (diag(gL) + F ∘ skew(Vᴴ·gV)) Vᴴ, Fᵢⱼ = 1/(Lⱼ − Lᵢ) off the diagonal,
    skew(M) = (M − Mᴴ)/2 (conjugate transposes, plain ones for a real A)"""
    __slots__ = ()
    complex_ok = True           # written with conjugate transposes (issue 16)
    formula = "∂(L, V)/∂A: V (diag(gL) + F∘skew(VᴴgV)) Vᴴ,  Fᵢⱼ = 1/(Lⱼ − Lᵢ)"

    def backward(self, ops, grad_values, grad_vectors):
        values, vectors = self.saved(ops)
        inner = _diag_matrix(ops, grad_values)
        if ops.raw(vectors).dtype.kind == "c":      # complex, for the matrix products with V (recorded ones do not mix)
            inner = inner + ops.zeros(ops.raw(vectors).shape, vectors)
        # Skipped when no eigenvector got a gradient (eigvalsh): that term divides by eigenvalue gaps, which
        # are 0 for a repeated eigenvalue. (Under create_graph the eigenvectors of eigvalsh do get one.)
        if ops.raw(grad_vectors).any():
            k = ops.matmul(_mH(ops, vectors), grad_vectors)
            _check_phase_invariance(ops, k, "linalg_eigh_backward")
            gaps = ops.unsqueeze(values, -2) - ops.unsqueeze(values, -1)
            inner = inner + (k - _mH(ops, k)) * 0.5 * _off_diagonal_inverse(ops, gaps)
        return (ops.matmul(ops.matmul(vectors, inner), _mH(ops, vectors)),)


def _eigh(A, UPLO, values_only):
    a = A._data
    _check_square("linalg.eigh", a)
    if dt.kind(a.dtype) not in "fc":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if values_only and not wants_grad(A):
        return wrap(np.linalg.eigvalsh(a, UPLO)), None
    values, vectors = np.linalg.eigh(a, UPLO)
    values, vectors = wrap(values), wrap(vectors)
    if wants_grad(A):
        record(LinalgEighBackward0, (A,), (values, vectors), (values, vectors))
    return values, vectors


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of a symmetric matrix, of which only the
    ``UPLO`` triangle is read. Returns ``(eigenvalues, eigenvectors)``."""
    return linalg_eigh(*_eigh(A, UPLO, values_only=False))


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of a symmetric matrix."""
    return _eigh(A, UPLO, values_only=True)[0]


# --- singular value decomposition ------------------------------------------------------------------------

class LinalgSvdBackward0(Node):
    """A = U diag(S) Vᵀ (k = min(m, n) singular values);
    dA = U [diag(gS) + (F∘(J − Jᵀ))S + S(F∘(K − Kᵀ))] Vᵀ + (I − UUᵀ) gU S⁻¹ Vᵀ + U S⁻¹ gVᵀ (I − VVᵀ),
    J = Uᵀ gU, K = Vᵀ gV, Fᵢⱼ = 1/(sⱼ² − sᵢ²) off the diagonal"""
    __slots__ = ()
    formula = "∂(U, S, Vh)/∂A: U[diag(gS) + (F∘(J−Jᵀ))S + S(F∘(K−Kᵀ))]Vᵀ + projections"

    def backward(self, ops, grad_u, grad_s, grad_vh):
        u, s, vh = self.saved(ops)
        m, n = self._input_meta[0][0][-2:]
        k = min(m, n)
        if self.full_matrices:              # the extra columns of a full U or V carry no information about A
            u, grad_u = ops.narrow(u, -1, 0, k), ops.narrow(grad_u, -1, 0, k)
            vh, grad_vh = ops.narrow(vh, -2, 0, k), ops.narrow(grad_vh, -2, 0, k)
        inner = _diag_matrix(ops, grad_s)
        if not (ops.raw(grad_u).any() or ops.raw(grad_vh).any()):     # svdvals: no gap terms to divide
            return (ops.matmul(ops.matmul(u, inner), vh),)
        j = ops.matmul(_mT(ops, u), grad_u)
        kv = ops.matmul(vh, _mT(ops, grad_vh))
        squares = s * s
        factor = _off_diagonal_inverse(ops, ops.unsqueeze(squares, -2) - ops.unsqueeze(squares, -1))
        s_row, s_col = ops.unsqueeze(s, -2), ops.unsqueeze(s, -1)
        inner = inner + (factor * (j - _mT(ops, j))) * s_row + s_col * (factor * (kv - _mT(ops, kv)))
        grad_a = ops.matmul(ops.matmul(u, inner), vh)
        if m > k:
            grad_a = grad_a + ops.matmul((grad_u - ops.matmul(u, j)) / s_row, vh)
        if n > k:
            grad_a = grad_a + ops.matmul(u, (grad_vh - ops.matmul(_mT(ops, kv), vh)) / s_col)
        return (grad_a,)


def _svd(A, full_matrices, values_only):
    a = A._data
    _check_matrix("linalg.svd", a)
    _check_floating("linalg.svd", a)
    if values_only and not wants_grad(A):
        return None, wrap(np.linalg.svd(a, compute_uv=False)), None
    u, s, vh = (wrap(x) for x in np.linalg.svd(a, full_matrices=full_matrices))
    if wants_grad(A):
        record(LinalgSvdBackward0, (A,), (u, s, vh), (u, s, vh), full_matrices=full_matrices)
    return u, s, vh


def svd(A, full_matrices=True, *, driver=None, out=None):
    """A = U diag(S) Vh with S descending. ``full_matrices=True`` (the default) gives square U (m×m) and Vh
    (n×n); False gives the k = min(m, n) columns that matter. Returns ``(U, S, Vh)``."""
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    return linalg_svd(*_svd(A, full_matrices, values_only=False))


def svdvals(A, *, driver=None, out=None):
    """The singular values, descending."""
    return _svd(A, False, values_only=True)[1]


# --- pseudo-inverse and rank ----------------------------------------------------------------------------------

class LinalgPinvBackward0(Node):
    """P = A⁺;  dA = −Pᴴ G Pᴴ + (I − AP) Gᴴ P Pᴴ + Pᴴ P Gᴴ (I − PA) (valid where the rank does not change)"""
    __slots__ = ()
    complex_ok = True           # pinv_rule is written with conjugate transposes
    formula = "∂A⁺/∂A: G ↦ −PᵀGPᵀ + (I − AP)GᵀPPᵀ + PᵀPGᵀ(I − PA)"

    def backward(self, ops, grad):
        a, p = self.saved(ops)
        return (pinv_rule(ops, a, p, grad),)


def pinv_rule(ops, a, p, grad):
    """dA of P = A⁺ for the gradient ``grad`` of P (also the rule of ``lstsq``, which goes through A⁺); with
    conjugate transposes, so that it holds for complex matrices too."""
    p_t, grad_t = ops.conj(_mT(ops, p)), ops.conj(_mT(ops, grad))
    first = -ops.matmul(ops.matmul(p_t, grad), p_t)
    second = ops.matmul(grad_t - ops.matmul(a, ops.matmul(p, grad_t)), ops.matmul(p, p_t))
    third = ops.matmul(ops.matmul(p_t, p), grad_t - ops.matmul(ops.matmul(grad_t, p), a))
    return first + second + third


def _tolerance(s_max, shape, dtype, atol, rtol):
    """PyTorch's cut-off for "zero" singular values: max(atol, rtol·σ_max), rtol defaulting to eps·max(m, n)
    unless a positive atol is given."""
    atol = 0.0 if atol is None else float(atol)
    if rtol is None:
        rtol = 0.0 if atol > 0 else np.finfo(dtype).eps * max(shape[-2:])
    return np.maximum(atol, float(rtol) * s_max)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse, from an SVD (an eigendecomposition with ``hermitian=True``); singular
    values at most the tolerance (see ``_tolerance``) count as zero. ``rcond`` is the older name of ``rtol``."""
    a = A._data
    if a.ndim < 2 or dt.kind(a.dtype) not in "fc" or a.dtype == np.float16:
        raise RuntimeError(f"linalg.pinv({scalar_name(a.dtype)}{{[{', '.join(map(str, a.shape))}]}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble types")
    rtol = rcond if rtol is None else rtol
    if hermitian:
        values, vectors = np.linalg.eigh(a)
        magnitude = np.abs(values)
        tol = _tolerance(magnitude.max(-1, initial=0), a.shape, a.dtype, atol, rtol)
        kept = np.where(magnitude > tol[..., None], 1 / np.where(magnitude == 0, 1, values), 0)
        value = (vectors * kept[..., None, :]) @ np.swapaxes(vectors, -1, -2).conj()
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        tol = _tolerance(s.max(-1, initial=0), a.shape, a.dtype, atol, rtol)
        kept = np.where(s > tol[..., None], 1 / np.where(s == 0, 1, s), 0)
        value = np.swapaxes(vh, -1, -2).conj() @ (kept[..., None] * np.swapaxes(u, -1, -2).conj())
    result = wrap(value.astype(a.dtype, copy=False))
    if wants_grad(A):
        record(LinalgPinvBackward0, (A,), result, (A, result))
    return result if out is None else out.copy_(result)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above the tolerance (see ``_tolerance``; ``tol`` is an older name of
    ``atol``). Not differentiable: an int64 count."""
    a = A._data
    _check_matrix("torch.linalg.matrix_rank", a, arg="input")
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    tolerance = _tolerance(s.max(-1, initial=0), a.shape, a.dtype, atol, rtol)
    return wrap(np.asanyarray((s > tolerance[..., None]).sum(-1), dtype=np.int64))


# --- powers and chains of products -----------------------------------------------------------------------

def matrix_power(A, n, *, out=None):
    """A square matrix (or batch) to the integer power ``n``, by repeated squaring; a negative ``n`` inverts
    first, and ``n = 0`` gives the identity. Composed of matmul and inv, as PyTorch composes it."""
    _check_square("linalg.matrix_power", A._data)
    result = _power(A, n)
    return result if out is None else out.copy_(result)


def _power(A, n):
    a = A._data
    if n == 0:
        identity = clone(A)
        eye = wrap(np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape))
        return identity.copy_(eye)                  # a copy that forgets A: zero gradient, as PyTorch's
    if n == 1:
        return clone(A)
    if n < 0:
        A, n = inv(A), -n
        if n == 1:
            return A
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    result, square = None, None
    while n > 0:                                    # the binary digits of n, lowest first
        square = A if square is None else matmul(square, square)
        if n % 2:
            result = square if result is None else matmul(result, square)
        n //= 2
    return result


def _chain_order(sizes):
    """The cheapest way to multiply matrices of shapes (sizes[i], sizes[i+1]): split[i][j] is where the
    product of matrices i..j splits last (the classic dynamic programme)."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multiply_in_order(matrices, split, i, j):
    if i == j:
        return matrices[i]
    k = split[i][j]
    return mm(_multiply_in_order(matrices, split, i, k), _multiply_in_order(matrices, split, k + 1, j))


def multi_dot(tensors, *, out=None):
    """The product of two or more matrices in the order that costs the fewest multiplications. The first may
    be a 1-D row vector and the last a 1-D column vector; the others are matrices."""
    tensors = list(tensors)
    count = len(tensors)
    if count < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {count}")
    first, last = tensors[0]._data.ndim, tensors[-1]._data.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t._data.ndim}D")
    for i, t in enumerate(tensors):
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{cpp_name(tensors[0]._data.dtype)} and tensor {i} {cpp_name(t._data.dtype)}")
    matrices = list(tensors)
    if first == 1:
        matrices[0] = unsqueeze(matrices[0], 0)
    if last == 1:
        matrices[-1] = unsqueeze(matrices[-1], -1)
    for i in range(count - 1):
        left, right = matrices[i]._data.shape, matrices[i + 1]._data.shape
        if left[1] != right[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes [{left[0]}, {left[1]}] and "
                               f"[{right[0]}, {right[1]}] cannot be multiplied")
    sizes = [m._data.shape[0] for m in matrices] + [matrices[-1]._data.shape[1]]
    product = _multiply_in_order(matrices, _chain_order(sizes), 0, count - 1)
    shape = ((sizes[0],) if first == 2 else ()) + ((sizes[-1],) if last == 2 else ())
    result = reshape(product, shape)
    return result if out is None else out.copy_(result)


# --- the matrix exponential ------------------------------------------------------------------------------

_TAYLOR_TERMS = 18      # for ‖X‖₁ ≤ 1/2 the first term left out is below 2⁻¹⁸/18! ≈ 6·10⁻²², far under double's epsilon


def _expm_array(a):
    """exp(a) = Σ aᵏ/k! for each square matrix of ``a``, by scaling and squaring: the Taylor sum of X = a / 2ˢ, with
    s the smallest power that brings ‖X‖₁ to 1/2, squared s times (exp(a) = exp(X)^(2ˢ)). Computed in double
    precision, whatever a's dtype."""
    work = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    norms = np.abs(work).sum(-2).max(-1, initial=0.0)
    # a non-finite matrix is not scaled: its Taylor sum is non-finite anyway
    steps = np.where(np.isfinite(norms) & (norms > 0.5), np.ceil(np.log2(np.where(norms > 0.5, norms, 1) / 0.5)), 0)
    steps = steps.astype(np.int64)
    x = work / np.exp2(steps)[..., None, None]
    total = term = np.broadcast_to(np.eye(a.shape[-1], dtype=work.dtype), work.shape)
    for k in range(1, _TAYLOR_TERMS + 1):
        term = (term @ x) / k
        total = total + term
    for i in range(int(steps.max(initial=0))):
        total = np.where((steps > i)[..., None, None], total @ total, total)
    return total.astype(a.dtype, copy=False)


class LinalgMatrixExpBackward0(Node):
    """out = exp(A);  dA = the upper-right block of exp([[Aᵀ, grad], [0, Aᵀ]]) (the adjoint of exp's derivative)"""
    __slots__ = ()
    holomorphic = True          # the rule is the plain transposed Jacobian (issue 16: complex matrices)
    formula = "∂exp(A)/∂A: G ↦ [exp([[Aᵀ, G], [0, Aᵀ]])]₁₂"

    def backward(self, ops, grad):
        (a,) = self.saved(ops)
        n = a.shape[-1]
        a_t = _mT(ops, a)
        top = ops.cat([a_t, grad], -1)
        bottom = ops.cat([ops.zeros(a_t.shape, a_t), a_t], -1)
        block = ops.cat([top, bottom], -2)
        exp_block = matrix_exp(block) if ops.recording else _expm_array(block)
        return (ops.narrow(ops.narrow(exp_block, -2, 0, n), -1, n, n),)


def matrix_exp(input):
    """The matrix exponential exp(A) = Σ Aᵏ/k! of a square matrix A = ``input``, or of each in a batch
    ``(..., n, n)``."""
    A = input
    a = A._data
    _check_matrix("linalg.matrix_exp", a)
    _check_square("linalg.matrix_exp", a)
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype)}")
    result = wrap(_expm_array(a))
    if wants_grad(A):
        record(LinalgMatrixExpBackward0, (A,), result, (A,))
    return result


# --- norms ---------------------------------------------------------------------------------------------------

def _ord_text(ord):
    """An order as PyTorch prints it in messages: 3, 3.5, inf, fro."""
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector p-norm (Σ|x|ᵖ)^(1/p) over ``dim`` (all elements by default); ``ord`` may be inf, -inf or 0."""
    result = _vector_norm(x, ord, dim, keepdim, dtype=dtype)
    return result if out is None else out.copy_(result)


def _matrix_dims(a, dim):
    if isinstance(dim, int) or len(dim) != 2:
        text = str(dim) if isinstance(dim, int) else " ".join(str(d) for d in dim)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {text}")
    d0, d1 = (_wrap_dim(d, a.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _spectral(A, d0, d1, keepdim, reduce):
    """``reduce`` over the singular values of the matrices in dims (d0, d1) (PyTorch: moved last by a permute)."""
    ndim = A._data.ndim
    rest = [i for i in range(ndim) if i not in (d0, d1)]
    values = svdvals(permute(A, rest + [d0, d1]))
    if not keepdim:
        return reduce(values, -1, False)
    kept = unsqueeze(reduce(values, -1, True), -1)
    return permute(kept, np.argsort(rest + [d0, d1]).tolist())


def _absolute_sums(A, d0, d1, keepdim, reduce):
    """``reduce`` over dim d1 of the sums of |A| over dim d0 (max column sum: ord 1; max row sum: ord inf)."""
    sums = _vector_norm(A, 1, d0, keepdim)
    return reduce(sums, d1 - 1 if d1 > d0 and not keepdim else d1, keepdim)


def _sum_values(values, dim, keepdim):
    return values.sum(dim, keepdim=keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """A matrix norm over dims ``dim``: 'fro' (Frobenius), 'nuc' (sum of singular values), ±2 (largest or
    smallest singular value), ±1 (largest or smallest absolute column sum), ±inf (the same for rows)."""
    a = A._data
    _check_matrix("linalg.matrix_norm", a)
    _check_floating("linalg.matrix_norm", a)
    d0, d1 = _matrix_dims(a, dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        result = _vector_norm(A, 2, (d0, d1), keepdim)
    elif ord == "nuc":
        result = _spectral(A, d0, d1, keepdim, _sum_values)
    elif not isinstance(ord, str) and abs(ord) in (1, 2, math.inf):
        reduce = amax if ord > 0 else amin
        if abs(ord) == 2:
            result = _spectral(A, d0, d1, keepdim, reduce)
        elif abs(ord) == 1:
            result = _absolute_sums(A, d0, d1, keepdim, reduce)
        else:
            result = _absolute_sums(A, d1, d0, keepdim, reduce)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {_ord_text(ord)} not supported.")
    return result if out is None else out.copy_(result)


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """``vector_norm`` or ``matrix_norm``, chosen as PyTorch chooses: a string ``ord``, two dims, or (with an
    ``ord`` and no ``dim``) a 2-D input mean a matrix norm; with neither, the 2-norm of all elements."""
    a = A._data
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}")
    elif ord is not None and a.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{a.ndim}D.")
    if ord is None:
        result = _vector_norm(A, 2, dim, keepdim, dtype=dtype)
    elif isinstance(ord, str) or (dim is not None and len(dims) == 2) or (dim is None and a.ndim == 2):
        result = matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    else:
        result = _vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return result if out is None else out.copy_(result)


# --- products and views under their linalg names ----------------------------------------------------------

def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (the last by default); other dims broadcast."""
    result = linalg_cross(input, other, dim)
    return result if out is None else out.copy_(result)


@autocast_entry
def vecdot(x, y, *, dim=-1, out=None):
    """Σ conj(x)·y over ``dim`` (for real tensors, the sum of products), other dims broadcast."""
    xa, ya = x._data, y._data
    _check_floating("linalg.vecdot", xa)
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{scalar_name(xa.dtype)} and y of type {scalar_name(ya.dtype)} instead")
    if xa.ndim == 1 and ya.ndim == 1 and dim in (0, -1):
        result = vdot(x, y)
    else:
        result = ((x.conj() if xa.dtype.kind == "c" else x) * y).sum(dim)
    return result if out is None else out.copy_(result)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal ``offset`` of each matrix over dims (dim1, dim2), as a last dim (a view)."""
    return _diagonal(A, offset, dim1, dim2)
