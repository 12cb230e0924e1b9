"""The bilinear form of ``F.bilinear`` as one recorded node, as PyTorch records it (``TrilinearBackward0``, its
``_trilinear`` kernel): out[b, o] = Σ_ij x1[b, i]·W[o, i, j]·x2[b, j], on rows already flattened to 2-D.

The product is linear in each factor, so each derivative is the same contraction with that factor's place
taken by the gradient (or, for the JVP, by its tangent), one ``einsum`` each.
"""
import numpy as np

from ...core.node import Node
from ...core.record import record, wants_grad, wrap

__all__ = ["trilinear"]


class TrilinearBackward0(Node):
    """out = Σ_ij x1_i·W_oij·x2_j;  dx1 = Σ_oj grad_o·W_oij·x2_j;  dW = grad_o·x1_i·x2_j;
    dx2 = Σ_oi grad_o·x1_i·W_oij"""
    formula = "∂(x1ᵀ W_o x2)/∂x1 = W_o x2, ∂/∂W_o = x1 x2ᵀ, ∂/∂x2 = W_oᵀ x1"

    def backward(self, ops, grad):
        x1, w, x2 = self.saved(ops)
        return (ops.einsum("bo,oij,bj->bi", grad, w, x2), ops.einsum("bo,bi,bj->oij", grad, x1, x2),
                ops.einsum("bo,bi,oij->bj", grad, x1, w))

    def jvp(self, ops, x1_t, w_t, x2_t):
        x1, w, x2 = self.saved(ops)
        terms = [ops.einsum("bi,oij,bj->bo", a, b, c)
                 for a, b, c in ((x1_t, w, x2), (x1, w_t, x2), (x1, w, x2_t)) if a is not None and b is not None
                 and c is not None]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total


def trilinear(input1, weight, input2):
    """``(B, in1), (out, in1, in2), (B, in2) -> (B, out)``: x1ᵀ·W_o·x2 for each row and output feature, recorded
    as ``TrilinearBackward0``. The caller (``bilinear``) flattens the batch dims and checks the shapes."""
    x1, w, x2 = input1._data, weight._data, input2._data
    out = wrap(np.einsum("bi,oij,bj->bo", x1, w, x2, optimize=True).astype(np.result_type(x1, w, x2), copy=False))
    if wants_grad(input1, weight, input2):
        record(TrilinearBackward0, (input1, weight, input2), out, (input1, weight, input2))
    return out
