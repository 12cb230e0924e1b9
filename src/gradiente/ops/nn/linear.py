"""``linear`` (x·Wᵀ + b), decomposed exactly as PyTorch decomposes it, so the graph has PyTorch's nodes:

* 2-D input with bias: ``addmm(b, x, Wᵀ)`` (``AddmmBackward0`` over ``TBackward0``);
* contiguous input of another rank with a 1-D bias: flattened to 2-D, ``addmm``, viewed back
  (``ViewBackward0`` / ``AddmmBackward0`` / ``ViewBackward0``);
* otherwise ``matmul(x, Wᵀ)`` and, with a bias, an in-place ``add_`` of it (``AddBackward0``).
"""
import math

from ..autocast import autocast_entry
from ..matmul import addmm
from .trilinear import trilinear

__all__ = ["bilinear", "linear"]


def _check_bilinear_shapes(input1, input2, weight, bias):
    """PyTorch's checks of ``bilinear``'s shapes, in its order and words."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {input1.shape[d]} "
                               f"and {input2.shape[d]}")
    for which, size, expected in (("input1", input1.shape[-1], weight.shape[1]),
                                  ("input2", input2.shape[-1], weight.shape[2])):
        if size != expected:
            raise RuntimeError(f"bilinear(): {which} size does not match weight size: got {size} but expected "
                               f"{expected}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")


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
    As PyTorch: the batch dims flattened (``ViewBackward0``), one ``TrilinearBackward0``, viewed back, plus the
    bias (``AddBackward0``)."""
    _check_bilinear_shapes(input1, input2, weight, bias)
    rows1 = input1.reshape(-1, input1.shape[-1])
    rows2 = input2.reshape(-1, input2.shape[-1])
    out = trilinear(rows1, weight, rows2).reshape(*input1.shape[:-1], weight.shape[0])
    return out + bias if bias is not None else out

