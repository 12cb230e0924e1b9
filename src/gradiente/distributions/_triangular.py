"""``solve_triangular``: X with A X = B for a triangular A, by substitution, with its derivative.

The multivariate normal needs it (Mahalanobis distances, the precision matrix's factor) and
``gradiente.linalg`` does not have it yet. It follows ``torch.linalg.solve_triangular``: only the triangle of A
that ``upper`` names is read, so the gradient reaches only that triangle, and batch dims broadcast.
"""
import numpy as np

from ..autograd.graph import Node
from ..ops._record import record, wants_grad, wrap

__all__ = ["solve_triangular"]


def _substitute(a, b, upper, unitriangular):
    """Forward (lower) or back (upper) substitution on arrays, one row of X at a time, all columns and
    batch entries together."""
    n = a.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    x = np.zeros(shape, np.result_type(a.dtype, b.dtype))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        solved = slice(i + 1, n) if upper else slice(0, i)
        row = b[..., i, :] - (a[..., i:i + 1, solved] @ x[..., solved, :])[..., 0, :]
        x[..., i, :] = row if unitriangular else row / a[..., i, i, None]
    return x


def _mT(ops, x):
    return ops.transpose(x, -1, -2)


class LinalgSolveTriangularBackward0(Node):
    """X = A⁻¹B, A triangular;  dB = A⁻ᵀ·grad;  dA = −dB·Xᵀ, kept to A's triangle"""
    __slots__ = ()
    formula = "∂(A⁻¹B)/∂B: G ↦ A⁻ᵀG,  ∂/∂A: G ↦ tri(−A⁻ᵀG·Xᵀ)"

    def backward(self, ops, grad):
        a, x = self.saved(ops)
        # Aᵀ is triangular on the other side.
        if ops.recording:
            grad_b = solve_triangular(_mT(ops, a), grad, upper=not self.upper, unitriangular=self.unitriangular)
        else:
            grad_b = _substitute(np.swapaxes(a, -1, -2), grad, not self.upper, self.unitriangular)
        grad_a = -ops.matmul(grad_b, _mT(ops, x))
        # A unit diagonal is not read, so it gets no gradient.
        offset = 1 if self.unitriangular else 0
        grad_a = ops.triu(grad_a, offset) if self.upper else ops.tril(grad_a, -offset)
        return (grad_a if self.next_functions[0][0] is not None else None,
                grad_b if self.next_functions[1][0] is not None else None)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with ``A X = B`` (``X A = B`` with ``left=False``), A ``(..., n, n)`` upper or lower triangular and B
    ``(..., n, k)``; only A's ``upper`` (or lower) triangle is read, and its diagonal is taken as ones with
    ``unitriangular``."""
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    result = wrap(_substitute(A._data, B._data, upper, unitriangular))
    if wants_grad(A, B):
        record(LinalgSolveTriangularBackward0, (A, B), result, (A, result), upper=upper,
               unitriangular=unitriangular)
    return result
