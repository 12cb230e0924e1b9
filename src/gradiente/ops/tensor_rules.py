"""``TensorOps``: the rule namespace on recorded gradiente Tensors, for ``create_graph=True``.

Every name of ``core.rules.RuleOps`` is here, taking the same arguments as ``NumpyOps``'s, and computed with
the differentiable ops themselves, so a backward pass run through this namespace is recorded like any other
computation and can be differentiated again. The ops package hands an instance down to the core at import
(``core.rules.use_tensor_ops``): the core cannot import the ops, which stand a floor above it.
"""
import numpy as np

from ..core import forward_grad
from ..core.creation import from_numpy, ones_like, tensor, zeros, zeros_like
from ..core.dtype import FROM_NUMPY
from ..core.grad_dtype import first_grad_dtype
from ..core.grad_layout import empty_in_contract_layout
from ..core.tensor import Tensor
from . import arithmetic, binary_math, complex_numbers, joining, rearranging, reductions, selection, unary, views
from . import einsum as einsum_ops
from . import matmul as matrix_products
from .indexing import embed as _embed
from .nn._common import div_scalar as _div_scalar
from .nn._common import mul_scalar as _mul_scalar

__all__ = ["TensorOps"]


def _condition(condition):
    """A rule's condition as a bool tensor: conditions are raw boolean arrays in both namespaces (no gradient)."""
    return from_numpy(np.asanyarray(condition._data if isinstance(condition, Tensor) else condition))


class TensorOps:
    """Rules on gradiente Tensors, recorded (``create_graph=True``)."""

    recording = True

    # --- elementwise math -------------------------------------------------------------------------------
    exp, log, log1p, sqrt = (staticmethod(f) for f in (unary.exp, unary.log, unary.log1p, unary.sqrt))
    sin, cos, sinh, cosh, tanh = (staticmethod(f) for f in (unary.sin, unary.cos, unary.sinh, unary.cosh, unary.tanh))
    abs, sigmoid, erf = (staticmethod(f) for f in (unary.abs, unary.sigmoid, unary.erf))

    @staticmethod
    def sign(x):
        return unary.sgn(x) if x._data.dtype.kind == "c" else unary.sign(x)     # z/|z| for complex, as NumPy's
    conj, real, imag = (staticmethod(f) for f in (complex_numbers.conj_physical, complex_numbers.real,
                                                  complex_numbers.imag))
    xlogy = staticmethod(binary_math.xlogy)
    pow = staticmethod(arithmetic.pow)
    matmul = staticmethod(matrix_products.matmul)
    einsum = staticmethod(einsum_ops.einsum)

    @staticmethod
    def logical_not(condition):
        return np.logical_not(condition)

    # --- making and unmaking values ---------------------------------------------------------------------
    @staticmethod
    def raw(x):
        return x._data

    @staticmethod
    def wrap(tensor):
        return tensor

    @staticmethod
    def unwrap(tensor):
        return tensor

    @staticmethod
    def constant(value, like):
        return tensor(value, dtype=like.dtype)

    @staticmethod
    def zeros(shape, like):
        return zeros(shape, dtype=like.dtype)

    zeros_like = staticmethod(zeros_like)
    ones_like = staticmethod(ones_like)
    times_number, over_number = staticmethod(_mul_scalar), staticmethod(_div_scalar)

    @staticmethod
    def unpack_output(saved, node):
        t = Tensor._make(saved.array, saved.requires_grad)
        if saved.requires_grad:
            t.grad_fn, t._output_nr = node, saved.output_nr
        if forward_grad.state.on:
            tangent = forward_grad.saved_output_tangent(node, saved.output_nr)
            if tangent is not None:     # forward-over-reverse: the output's tangent goes with it
                forward_grad.set_tangent(t, tangent)
        return t

    # --- the engine's own steps -------------------------------------------------------------------------
    @staticmethod
    def sum_to(x, shape):
        return x.sum_to_size(shape) if tuple(x.shape) != tuple(shape) else x

    @staticmethod
    def fix_meta(grad, shape, np_dtype):
        if tuple(grad.shape) != tuple(shape):
            grad = grad.sum_to_size(shape) if grad.dim() >= len(shape) else grad.expand(shape)
        if grad._data.dtype != np_dtype:
            if grad._data.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
                grad = complex_numbers.real(grad)   # a real input's share: the real part (handle_r_to_c)
            grad = grad.to(FROM_NUMPY[np.dtype(np_dtype)])
        return grad

    @staticmethod
    def accumulate(variable, grad, owned=False):
        # The first gradient is always a copy, recorded (PyTorch's CopyBackwards when grad requires grad):
        # under create_graph it may be a tensor the user holds, or one that reaches two leaves. ``owned`` is
        # NumpyOps' business; it is taken here so that both namespaces have one signature.
        current = variable._grad
        if current is None:
            dtype = first_grad_dtype(variable, grad._data.dtype)
            variable._grad = Tensor._make(empty_in_contract_layout(variable, dtype)).copy_(grad)
        else:
            variable._grad = current + grad

    # --- selection, reductions and scans ----------------------------------------------------------------
    @staticmethod
    def mask(condition, x):
        return selection.where(_condition(condition), x, zeros((), dtype=x.dtype))

    @staticmethod
    def threshold_backward(grad, x, threshold):
        # (imported here: nn's activation kernels load with the first activation, not with ``import gradiente``)
        from .nn.activations import threshold_backward
        return threshold_backward(grad, x, threshold)

    tanh_backward = staticmethod(unary.tanh_backward)
    sigmoid_backward = staticmethod(unary.sigmoid_backward)

    @staticmethod
    def select(condition, x, y):
        return selection.where(_condition(condition), x, y)

    @staticmethod
    def sum(x, dim=None, keepdim=False):
        if dim is None and not keepdim:
            return x.sum()
        return x.sum(dim if dim is not None else tuple(range(x.dim())), keepdim=keepdim)

    mean = staticmethod(reductions.mean)
    cumsum = staticmethod(reductions.cumsum)
    cumprod = staticmethod(reductions.cumprod)

    # --- shapes -----------------------------------------------------------------------------------------
    @staticmethod
    def expand(x, shape):
        return x.expand(shape)

    reshape = staticmethod(views.reshape)
    unsqueeze = staticmethod(views.unsqueeze)
    transpose = staticmethod(views.transpose)
    permute = staticmethod(views.permute)
    narrow = staticmethod(views.narrow)
    flip = staticmethod(rearranging.flip)
    roll = staticmethod(rearranging.roll)
    tril = staticmethod(rearranging.tril)
    triu = staticmethod(rearranging.triu)
    cat = staticmethod(joining.cat)
    stack = staticmethod(joining.stack)

    @staticmethod
    def constant_pad(x, pad):
        from .nn.padding import pad as constant_pad  # (loaded on first use, as threshold_backward)
        return constant_pad(x, pad)

    # --- indexing ---------------------------------------------------------------------------------------
    @staticmethod
    def getitem(x, index):
        return x[index]

    @staticmethod
    def embed(values, shape, index):
        return _embed(values, shape, index)

    @staticmethod
    def put(x, index, values):
        inside = np.zeros(x._data.size, dtype=bool)
        inside[index.reshape(-1)] = True
        placed = _embed(values.reshape(-1), (inside.size,), (index.reshape(-1),))
        return selection.where(from_numpy(inside.reshape(x._data.shape)), placed.reshape(x.shape), x)
