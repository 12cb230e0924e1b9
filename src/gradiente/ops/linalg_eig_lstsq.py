"""``torch.linalg.eig``, ``eigvals`` and ``lstsq``: the eigendecomposition of a general (non-symmetric) square
matrix, whose eigenvalues and eigenvectors are complex even for a real matrix, and least squares, each with its
derivative, for a matrix or a batch of them ``(..., m, n)``.

NumPy's LAPACK (geev) computes the eigendecomposition, so the eigenvectors are LAPACK's: each of unit length with
its largest component real. Least squares is solved from an SVD whatever the ``driver``; the driver decides, as
in PyTorch, which of the other results (residuals, rank, singular values) are given and which are empty.
"""
import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.dtype import scalar_name
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from .linalg import _check_matrix, _check_square, _diag_matrix, _eye, _solve, pinv, pinv_rule

__all__ = ["eig", "eigvals", "lstsq"]


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _mH(ops, x):
    """The conjugate transpose of the last two axes."""
    return ops.conj(ops.transpose(x, -1, -2))


# --- the eigendecomposition -----------------------------------------------------------------------------

class LinalgEigBackward0(Node):
    """A = V diag(L) V⁻¹;  dA = V⁻ᴴ (diag(gL) + (VᴴgV − VᴴV·diag(Re(diag(VᴴgV)))) / E*) Vᴴ, Eᵢⱼ = Lⱼ − Lᵢ
    off the diagonal. Each eigenvector is fixed only up to a phase e^{iφ}: a loss that depends on the phase has
    Im(diag(VᴴgV)) ≠ 0, and is refused, as in PyTorch."""
    __slots__ = ()
    complex_ok = True           # written for PyTorch's convention (the conjugate Wirtinger derivative)
    formula = "∂(L, V)/∂A: V⁻ᴴ(diag(gL) + (VᴴgV − VᴴV·diag(Re(VᴴgV)))/E*)Vᴴ,  Eᵢⱼ = Lⱼ − Lᵢ"

    def backward(self, ops, grad_values, grad_vectors):
        values, vectors = self.saved(ops)
        vectors_h = _mH(ops, vectors)
        inner = _diag_matrix(ops, grad_values)
        # Skipped when no eigenvector got a gradient (eigvals): that term divides by eigenvalue gaps, which are
        # 0 for a repeated eigenvalue.
        if ops.raw(grad_vectors).any():
            eye = _eye(ops, values.shape[-1], values)
            projected = ops.matmul(vectors_h, grad_vectors)
            diagonal = ops.sum(projected * eye, -1)
            if not np.allclose(np.imag(ops.raw(diagonal)), 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                   "multiplication by e^{i phi}. The specified loss function depends on this "
                                   "quantity, so it is ill-defined.")
            scaled = vectors * ops.unsqueeze(ops.real(diagonal), -2)
            projected = projected - ops.matmul(vectors_h, scaled)
            gaps = ops.conj(ops.unsqueeze(values, -2) - ops.unsqueeze(values, -1)) + eye
            inner = inner + projected * (1 - eye) / gaps
        return (_solve(ops, vectors_h, ops.matmul(inner, vectors_h)),)

    def jvp(self, ops, a_t):
        """dP = V⁻¹·dA·V;  dL = diag(dP),  dV = V·X − V·diag(Re(diag(VᴴV·X))), X = dP / E off the diagonal and 0
        on it (the last term keeps each eigenvector of unit length)"""
        values, vectors = self.saved(ops)
        eye = _eye(ops, values.shape[-1], values)
        projected = _solve(ops, vectors, ops.matmul(a_t, vectors))
        gaps = ops.unsqueeze(values, -2) - ops.unsqueeze(values, -1) + eye
        x = projected * (1 - eye) / gaps
        norms = ops.sum(ops.matmul(_mH(ops, vectors), ops.matmul(vectors, x)) * eye, -2)
        vectors_t = ops.matmul(vectors, x) - vectors * ops.unsqueeze(ops.real(norms), -2)
        return ops.sum(projected * eye, -1), vectors_t


def _eig(A, name):
    a = A._data
    _check_matrix(name, a)
    _check_square(name, a)
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_name(a.dtype)}")
    if a.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    complex_dtype = _COMPLEX_OF.get(a.dtype, a.dtype)
    # NumPy returns real arrays when every eigenvalue of the batch is real; PyTorch's results are always complex
    values, vectors = np.linalg.eig(a)
    values, vectors = wrap(values.astype(complex_dtype)), wrap(vectors.astype(complex_dtype))
    if wants_grad(A):
        record(LinalgEigBackward0, (A,), (values, vectors), (values, vectors))
    return values, vectors


def eig(input, *, out=None):
    """The eigenvalues ``(..., n)`` and eigenvectors ``(..., n, n)`` (columns, each of unit length) of a square
    matrix, both complex (complex64 for float32, complex128 for float64). The eigenvectors are fixed only up to a
    phase each, so a loss must not depend on it (``abs`` of them, or the eigenvalues alone, are fine)."""
    values, vectors = _eig(input, "linalg.eig")
    if out is not None:
        out[0].copy_(values)
        out[1].copy_(vectors)
        return return_types.linalg_eig(*out)
    return return_types.linalg_eig(values, vectors)


def eigvals(input, *, out=None):
    """The complex eigenvalues ``(..., n)`` of a square matrix, in LAPACK's order (not sorted)."""
    values = _eig(input, "linalg.eigvals")[0]
    return values if out is None else out.copy_(values)


# --- least squares --------------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


class LinalgLstsqBackward0(Node):
    """X = A⁺B;  dA = pinv's rule with G = gX·Bᴴ,  dB = A⁺ᴴ·gX (PyTorch's rule: through the pseudo-inverse)"""
    __slots__ = ()
    complex_ok = True           # written with conjugate transposes
    formula = "∂(A⁺B)/∂(A, B): dA = pinv_backward(gX·Bᵀ),  dB = A⁺ᵀ·gX"

    def backward(self, ops, grad):
        a, b, p = self.saved(ops)
        if ops.recording:           # the pseudo-inverse again, in the graph, for the second derivative
            p = pinv(a)
        if self.vector:
            grad, b = ops.unsqueeze(grad, -1), ops.unsqueeze(b, -1)
        grad_a = grad_b = None
        if self.next_functions[0][0] is not None:
            grad_a = pinv_rule(ops, a, p, ops.matmul(grad, _mH(ops, b)))
        if self.next_functions[1][0] is not None:
            grad_b = ops.matmul(_mH(ops, p), grad)
            if self.vector:
                grad_b = ops.sum(grad_b, -1)
        return grad_a, grad_b


def _check_lstsq(a, b, driver):
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {scalar_name(a.dtype)} and other's dtype {scalar_name(b.dtype)}")
    if a.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    rows = b.shape[-1] if vector else b.shape[-2]
    if rows != a.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-{1 if vector else 2})")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    return vector


def lstsq(input, b, rcond=None, *, driver=None):
    """The least-squares solution X ``(..., n, k)`` of A X ≈ B for A = ``input`` ``(..., m, n)`` and B = ``b``
    ``(..., m, k)`` (or a vector ``(..., m)``, giving ``(..., n)``): the minimum-norm solution for a
    rank-deficient A, singular values up to ``rcond``·σ_max counting as zero (``rcond`` defaults to
    eps·max(m, n)). Returns ``(solution, residuals, rank, singular_values)``; as in PyTorch's CPU drivers
    ('gelsy', the default, 'gelsd', 'gelss', 'gels'): residuals, the squared residual norm of each column, only
    when m > n, the driver is not 'gelsy' and (for 'gelsd' and 'gelss') every matrix has full rank; rank except
    for 'gels'; singular values for 'gelsd' and 'gelss'; the others are empty. Differs from PyTorch: every driver
    solves through an SVD, so 'gels' on a rank-deficient A gives the minimum-norm solution where LAPACK's gels
    gives garbage, and 'gelsy' counts the rank from the singular values rather than a pivoted QR (the same except
    at the cut-off)."""
    A, B = input, b     # PyTorch's argument names, for keyword callers
    a, b = A._data, B._data
    vector = _check_lstsq(a, b, driver)
    driver = "gelsy" if driver is None else driver
    m, n = a.shape[-2:]
    rcond = np.finfo(a.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    singular = np.linalg.svd(a, compute_uv=False)
    rank = (singular > rcond * singular[..., :1]).sum(-1) if singular.shape[-1] else np.zeros(a.shape[:-2], int)
    p = pinv(wrap(a), rtol=rcond)._data
    solution = p @ (b[..., None] if vector else b)
    real = np.empty(0, dtype=np.real(np.zeros((), a.dtype)).dtype)
    residuals = real
    if m > n and driver != "gelsy" and (driver == "gels" or np.all(rank == n)):
        difference = a @ solution - (b[..., None] if vector else b)
        residuals = (np.abs(difference) ** 2).sum(-2).astype(real.dtype)     # (..., 1) for a vector, as PyTorch
    solution = wrap((solution[..., 0] if vector else solution).astype(a.dtype, copy=False))
    if wants_grad(A, B):
        record(LinalgLstsqBackward0, (A, B), solution, (A, B, wrap(p)), vector=vector)
    return return_types.linalg_lstsq(solution, wrap(residuals),
                        wrap(np.empty(0, np.int64) if driver == "gels" else np.asanyarray(rank, dtype=np.int64)),
                        wrap(singular.astype(real.dtype) if driver in ("gelsd", "gelss") else real))
