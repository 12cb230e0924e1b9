"""``linear`` (x·Wᵀ + b), decomposed exactly as PyTorch decomposes it, so the graph has PyTorch's nodes:

* 2-D input with bias: ``addmm(b, x, Wᵀ)`` (``AddmmBackward0`` over ``TBackward0``);
* contiguous input of another rank with a 1-D bias: flattened to 2-D, ``addmm``, viewed back
  (``ViewBackward0`` / ``AddmmBackward0`` / ``ViewBackward0``);
* otherwise ``matmul(x, Wᵀ)`` and, with a bias, an in-place ``add_`` of it (``AddBackward0``).
"""
import math

from ..autocast import autocast_entry
from ..einsum import einsum
from ..matmul import addmm
from ._common import shape_text

__all__ = ["bilinear", "linear"]


@autocast_entry
def linear(input, weight, bias=None):
    """input @ weightᵀ + bias. Shapes: input (*, in), weight (out, in), bias (out) -> (*, out)."""
    dim = input.dim()
    if dim == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {dim}D and "
                           f"{weight.dim()}D")
    if dim == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    if bias is not None and input.is_contiguous() and (dim == 3 or bias.dim() == 1):
        rows = math.prod(input.shape[:-1])
        out = addmm(bias, input.reshape(rows, input.shape[-1]), weight.t())
        return out.view(*input.shape[:-1], out.shape[1])
    out = input.matmul(weight.t())
    if bias is not None:
        out.add_(bias)
    return out


def bilinear(input1, input2, weight, bias=None):
    """x1ᵀ·A·x2 + b for each output feature: input1 (*, in1), input2 (*, in2), weight (out, in1, in2).
    Composed from ``einsum`` here; PyTorch records one ``_trilinear`` node instead (same values and gradients)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{shape_text(input1.shape[:-1])} and {shape_text(input2.shape[:-1])}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out + bias if bias is not None else out

