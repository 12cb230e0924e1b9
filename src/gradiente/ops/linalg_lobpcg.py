"""``torch.lobpcg``: a few of the largest (or smallest) eigenpairs of a symmetric positive-definite matrix, or of
the generalized problem A x = λ B x, by the locally optimal block preconditioned conjugate gradient method
(Knyazev, 2001), without computing the whole eigendecomposition.

Each step does a Rayleigh-Ritz projection of A onto the span of the current approximations X, their residuals
W = iK·(AX − BXΛ) and the previous search directions P; the basis is B-orthonormalized first, and directions that
are numerically dependent are dropped (the robustness of PyTorch's method='ortho', Duersch et al. 2018, in its
simplest form). Iteration stops when every wanted pair's relative residual ‖Axᵢ − λᵢBxᵢ‖ / (‖xᵢ‖(‖A‖ + |λᵢ|‖B‖))
is under ``tol``, as PyTorch measures it.
"""
import numpy as np

from ..core import random
from ..core.dtype import FROM_NUMPY
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.size import Size
from .arithmetic import add, div
from .views import transpose

__all__ = ["lobpcg"]

_EPS = {np.dtype(np.float32): 1.2e-07, np.dtype(np.float64): 2.23e-16}     # PyTorch's, for the default tol


def _b_orthonormal(basis, b, drop_below):
    """An orthonormal basis (in the B inner product) of the span of ``basis``' columns, dropping directions whose
    weight is under ``drop_below`` of the largest (numerically dependent ones): SVQB, an eigendecomposition of
    the Gram matrix, done twice for accuracy."""
    for _ in range(2):
        scale = np.sqrt(np.einsum("ij,ij->j", basis, b @ basis))
        basis = basis / np.where(scale == 0, 1, scale)
        gram = basis.T @ (b @ basis)
        values, vectors = np.linalg.eigh((gram + gram.T) / 2)
        kept = values > drop_below * values.max()
        basis = basis @ (vectors[:, kept] / np.sqrt(values[kept]))
    return basis


def _rayleigh_ritz(basis, a, count, largest):
    """The ``count`` Ritz pairs of A on a B-orthonormal basis, largest or smallest first."""
    projected = basis.T @ (a @ basis)
    values, vectors = np.linalg.eigh((projected + projected.T) / 2)
    order = np.argsort(-values if largest else values, kind="stable")[:count]
    return values[order], basis @ vectors[:, order]


def _lobpcg_one(a, b, x, preconditioner, k, niter, tol, largest):
    eps = _EPS[a.dtype]
    count = x.shape[-1]
    a_norm, b_norm = np.linalg.norm(a, 2), np.linalg.norm(b, 2)
    values, x = _rayleigh_ritz(_b_orthonormal(x, b, eps), a, count, largest)
    directions = np.zeros((a.shape[0], 0), a.dtype)
    for _ in range(niter):
        residuals = a @ x - (b @ x) * values
        errors = np.linalg.norm(residuals, axis=0) / (np.linalg.norm(x, axis=0) * (a_norm + np.abs(values) * b_norm))
        if np.all(errors[:k] < tol):
            break
        search = residuals if preconditioner is None else preconditioner @ residuals
        basis = _b_orthonormal(np.concatenate([x, search, directions], -1), b, eps)
        new_values, new_x = _rayleigh_ritz(basis, a, count, largest)
        directions = new_x - x @ (x.T @ (b @ new_x))      # the step, less its part inside the old span
        values, x = new_values, new_x
    return values[:k], x[:, :k]


class LOBPCGAutogradFunctionBackward(Node):
    """(D, U) = the k chosen eigenpairs of symmetric A;  dA = U·diag(gD)·Uᵀ + V·(F ∘ (Vᵀ·gU))·Uᵀ, with V, L the
    whole eigendecomposition of A and Fⱼᵢ = 1/(Dᵢ − Lⱼ) (0 where Lⱼ is Dᵢ itself): the derivative of each
    eigenvector, −(A − DᵢI)⁺ dA uᵢ, transposed. (PyTorch's node, named after its autograd.Function, solves a
    Sylvester equation in the k pairs instead; the derivative is the same.)"""
    __slots__ = ()
    formula = "∂(D, U)/∂A: U diag(gD) Uᵀ + V (F ∘ VᵀgU) Uᵀ,  Fⱼᵢ = 1/(Dᵢ − Lⱼ)"

    def backward(self, ops, grad_values, grad_vectors):
        if self.generalized:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        a, values, vectors = (ops.raw(x) for x in self.saved(ops))
        grad_values, grad_vectors = ops.raw(grad_values), ops.raw(grad_vectors)
        every_value, every_vector = np.linalg.eigh(a)
        gaps = values[..., None, :] - every_value[..., :, None]
        own = np.argmin(np.abs(gaps), axis=-2)[..., None, :]          # each chosen pair's place in the whole
        np.put_along_axis(gaps, own, np.inf, axis=-2)
        transposed = np.swapaxes(vectors, -1, -2)
        grad = (vectors * grad_values[..., None, :]) @ transposed
        grad = grad + every_vector @ ((np.swapaxes(every_vector, -1, -2) @ grad_vectors) / gaps) @ transposed
        return (ops.constant(grad, grad_values),) + (None,) * (len(self.next_functions) - 1)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The ``k`` largest (``largest=True``, the default) or smallest eigenvalues ``(*, k)`` and eigenvectors
    ``(*, m, k)`` (columns, B-orthonormal) of symmetric positive-definite A ``(*, m, m)`` (dense or sparse COO), or
    of A x = λ B x. ``X`` ``(*, m, n)`` is the starting guess (random normal by default, n = k), ``iK`` a
    preconditioner, ``niter`` the most iterations (1000), ``tol`` the relative residual to reach (√eps of the
    dtype). Intended differences from PyTorch: every ``method`` runs the algorithm described in this module,
    ``tracker`` and the ``ortho_*`` tuning parameters are accepted and not read. Differentiable in A (dense, real,
    without B), as PyTorch's."""
    differentiable = wants_grad(A) or (B is not None and wants_grad(B))
    if differentiable:      # as PyTorch: the gradient of a symmetric matrix stays symmetric
        A = div(add(A, transpose(A, -2, -1)), 2)
        B = div(add(B, transpose(B, -2, -1)), 2) if B is not None else None
    a = A.to_dense()._data if A.is_sparse else A._data
    if a.shape[-2] != a.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = a.dtype if a.dtype in _EPS else np.dtype(np.float32)
    tol = _EPS[dtype] ** 0.5 if tol is None else tol
    m = a.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    batch = a.shape[:-2]
    a = a.astype(dtype, copy=False).reshape((-1, m, m))
    b = (B.to_dense()._data if B.is_sparse else B._data).reshape((-1, m, m)).astype(dtype) if B is not None else None
    x = X._data.reshape((-1,) + X.shape[-2:]).astype(dtype) if X is not None else None
    preconditioner = None if iK is None else iK._data.astype(dtype)
    values, vectors = np.empty((len(a), k), dtype), np.empty((len(a), m, k), dtype)
    for i in range(len(a)):
        start = random.randn(m, n, dtype=FROM_NUMPY[dtype])._data if x is None else x[i]
        if start.shape != (m, n):
            raise AssertionError(f"X shape mismatch: got {Size(start.shape)!r}, expected {(m, n)}")
        values[i], vectors[i] = _lobpcg_one(a[i], np.eye(m, dtype=dtype) if b is None else b[i], start,
                                            preconditioner, k, 1000 if niter is None else niter, tol,
                                            True if largest is None else largest)
    values, vectors = wrap(values.reshape(batch + (k,))), wrap(vectors.reshape(batch + (m, k)))
    if differentiable:
        inputs = (A,) if B is None else (A, B)
        record(LOBPCGAutogradFunctionBackward, inputs, (values, vectors), (A, values, vectors),
               generalized=B is not None)
    return values, vectors
