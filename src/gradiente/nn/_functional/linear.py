"""``linear`` (x·Wᵀ + b), decomposed exactly as PyTorch decomposes it, so the graph has PyTorch's nodes:

* 2-D input with bias: ``addmm(b, x, Wᵀ)`` (``AddmmBackward0`` over ``TBackward0``);
* contiguous input of another rank with a 1-D bias: flattened to 2-D, ``addmm``, viewed back
  (``ViewBackward0`` / ``AddmmBackward0`` / ``ViewBackward0``);
* otherwise ``matmul(x, Wᵀ)`` and, with a bias, an in-place ``add_`` of it (``AddBackward0``).

``addmm`` itself is a node here: the product and the bias in one step, the bias gradient summed over
the rows by the engine's central un-broadcast.
"""
import numpy as np

from ...autograd.graph import Node
from ...ops._record import record, wants_grad, wrap

__all__ = ["linear", "bilinear", "addmm"]


class AddmmBackward0(Node):
    """out = β·b + α·(x @ y);  db = β·grad;  dx = α·grad @ yᵀ;  dy = α·xᵀ @ grad"""
    formula = "∂(b + XY)/∂b = 1,  ∂/∂X = G·Yᵀ,  ∂/∂Y = Xᵀ·G"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        beta, alpha = self.beta, self.alpha
        db = (grad if beta == 1 else grad * beta) if edges[0][0] is not None else None
        scaled = grad if alpha == 1 else grad * alpha
        dx = ops.matmul(scaled, y.T) if edges[1][0] is not None else None
        dy = ops.matmul(x.T, scaled) if edges[2][0] is not None else None
        return db, dx, dy


def _dims(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """β·input + α·(mat1 @ mat2), ``input`` broadcast to the product's shape (``AddmmBackward0``)."""
    a, b = mat1._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor")
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c_name(a)} != {_c_name(b)}")
    shape = (a.shape[0], b.shape[1])
    bias = input._data
    _check_expandable(bias.shape, shape)
    product = a @ b
    if alpha != 1:
        product *= alpha
    np.add(product, bias if beta == 1 else bias * beta, out=product, casting="unsafe")
    out = wrap(product)
    if wants_grad(input, mat1, mat2):
        record(AddmmBackward0, (input, mat1, mat2), out, (mat1, mat2), beta=beta, alpha=alpha)
    return out


def _check_expandable(shape, target):
    """PyTorch's message when ``shape`` cannot be expanded to ``target``."""
    if len(shape) > len(target):
        raise RuntimeError(f"expand(torch.FloatTensor{{{_dims(shape)}}}, size={_dims(target)}): the number of sizes "
                           f"provided ({len(target)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    for k in range(1, len(shape) + 1):
        s, t = shape[-k], target[-k]
        if s != 1 and s != t:
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing size ({s}) at "
                               f"non-singleton dimension {len(target) - k}.  Target sizes: {_dims(target)}.  "
                               f"Tensor sizes: {_dims(shape)}")


def _c_name(array):
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(array.dtype.name, array.dtype.name)


def linear(input, weight, bias=None):
    """input @ weightᵀ + bias. Shapes: input (*, in), weight (out, in), bias (out) -> (*, out)."""
    dim = input.dim()
    if dim == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {dim}D and "
                           f"{weight.dim()}D")
    if dim == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    if bias is not None and input.is_contiguous() and (dim == 3 or bias.dim() == 1):
        rows = int(np.prod(input.shape[:-1]))
        out = addmm(bias, input.reshape(rows, input.shape[-1]), weight.t())
        return out.view(*input.shape[:-1], out.shape[1])
    out = input.matmul(weight.t())
    if bias is not None:
        out.add_(bias)
    return out


def bilinear(input1, input2, weight, bias=None):
    """x1ᵀ·A·x2 + b for each output feature: input1 (*, in1), input2 (*, in2), weight (out, in1, in2).
    Composed from ``einsum`` here; PyTorch records one ``_trilinear`` node instead (same values and gradients)."""
    import gradiente
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{_dims(input1.shape[:-1])} and {_dims(input2.shape[:-1])}")
    out = gradiente.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out + bias if bias is not None else out

