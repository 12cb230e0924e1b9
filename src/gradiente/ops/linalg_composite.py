"""``torch.linalg`` functions PyTorch composes from other ops, composed here the same way so their gradients
come from the parts: ``vander`` (cumulative products), ``tensorinv`` and ``tensorsolve`` (reshapes around
``inv``/``solve``) and ``cond`` (singular values, or a norm of A times the norm of its inverse)."""
import math

from ..core.creation import ones
from .arithmetic import div, mul
from .joining import cat
from .linalg import inv, inv_ex, matrix_norm, solve, svdvals
from .reductions import cumprod
from .selection import where
from .views import expand, movedim, reshape, unsqueeze

__all__ = ["cond", "tensorinv", "tensorsolve", "vander"]


def vander(x, N=None):
    """The Vandermonde matrix of the last dimension of ``x``: shape (*, n) gives (*, n, N) whose column j is
    x**j (so the first column is ones); N defaults to n and must be greater than 1."""
    n = x.shape[-1] if x.dim() else 1
    N = n if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    first = ones(*x.shape, 1, dtype=x.dtype)
    powers = cumprod(expand(unsqueeze(x, -1), *x.shape, N - 1), -1)
    return cat([first, powers], -1)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` seen as a matrix of its first ``ind`` dimensions by the rest: shape
    A.shape[ind:] + A.shape[:ind], such that tensordot(tensorinv(A), A, ind) is the identity."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    result = reshape(inv(reshape(A, rows, cols)), *A.shape[ind:], *A.shape[:ind])
    return result if out is None else out.copy_(result)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) == B: A's leading dimensions match B's shape (after moving ``dims`` of A
    to the end); X has A's remaining shape."""
    if dims is not None:
        A = movedim(A, list(dims), list(range(A.dim() - len(dims), A.dim())))
    rest = A.shape[B.dim():]
    rows = math.prod(B.shape)
    result = reshape(solve(reshape(A, rows, math.prod(rest)), reshape(B, rows)), *rest)
    return result if out is None else out.copy_(result)


def _square_matrices(A, ord):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.cond(ord={ord}): The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={ord}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def cond(A, p=None, *, out=None):
    """The condition number of the matrices of ``A`` (shape (*, m, n) gives (*,)): for p None, 2 or -2 the ratio
    of the largest and smallest singular values (any shape; nan for a zero matrix), otherwise
    ‖A‖_p·‖A⁻¹‖_p for square A ('fro', 'nuc', inf, -inf, 1, -1), inf where A is singular."""
    if p is None or p in (2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        result = div(small, big) if p == -2 else div(big, small)
        return result if out is None else out.copy_(result)
    _square_matrices(A, p)
    inverse, info = inv_ex(A)
    result = mul(matrix_norm(A, p), matrix_norm(inverse, p))
    infinity = ones((), dtype=result.dtype) * math.inf
    result = where(info > 0, infinity, result)
    return result if out is None else out.copy_(result)
