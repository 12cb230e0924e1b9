"""The torch-level norms PyTorch keeps only for old programs: ``nuclear_norm`` and ``frobenius_norm`` (deprecated,
with PyTorch's warning, once per process) and ``native_norm`` (a kernel for sparse tensors only)."""
import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.sparse_tensor import not_on_sparse
from ..core.tensor import _wrap_dim
from ..core.warnings_at_caller import warn
from .arithmetic import _without_derivative
from .linalg import matrix_norm
from .reductions import unsqueeze_reduced

__all__ = ["frobenius_norm", "native_norm", "nuclear_norm"]

_WARNING = ("at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in a future "
            "PyTorch release. Please use `{instead}` instead (Triggered internally at /__w/pytorch/pytorch/aten/src/"
            "ATen/native/LinearAlgebra.cpp:{line}.)")
_warned: set = set()


def _deprecated(name, instead, line):
    if name not in _warned:
        _warned.add(name)
        warn(_WARNING.format(name=name, instead=instead, line=line), UserWarning, stacklevel=3)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The nuclear norm (the sum of the singular values) of the matrices in the last two dims, or in the two dims
    ``dim``: ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``. Like PyTorch's two overloads, a bool second
    argument is ``keepdim``, and a single int ``dim`` means that dim twice."""
    _deprecated("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)", 3229)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dim = (-2, -1) if dim is None else (dim, dim) if isinstance(dim, int) else tuple(dim)
    result = matrix_norm(input, "nuc", dim, keepdim)
    return result if out is None else out.copy_(result)


class NormBackward1(Node):
    """out = ‖x‖₂ over ``axes``;  dx = grad · x / out (0 where out is 0)"""
    __slots__ = ()
    complex_ok = True           # x / ‖x‖ is the conjugate Wirtinger derivative (times 2) for complex x too
    formula = "∂‖x‖₂/∂x = x / ‖x‖₂"

    def backward(self, ops, grad):
        x, out = self.saved(ops)
        ndim = len(self._input_meta[0][0])
        grad = unsqueeze_reduced(ops, grad, self.axes, self.keepdim, ndim)
        out = unsqueeze_reduced(ops, out, self.axes, self.keepdim, ndim)
        zero = ops.raw(out) == 0
        scale = ops.select(zero, ops.zeros_like(out), grad / ops.select(zero, ops.ones_like(out), out))
        return (x * scale,)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The 2-norm of the elements over one or two dims ``dim`` (the Frobenius norm of matrices); an empty
    ``dim`` means all elements."""
    _deprecated("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)", 3175)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    x = input._data
    if dt.kind(x.dtype) not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{scalar_name(x.dtype)} instead.")
    axes = tuple(sorted(_wrap_dim(d, x.ndim) for d in dims)) if dims else tuple(range(x.ndim))
    if len(set(axes)) < len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    wide = dt.widened(x)
    value = np.sqrt(np.sum(np.abs(wide) ** 2, axis=axes, keepdims=keepdim))
    result = wrap(np.asanyarray(value, dtype=np.abs(np.zeros((), x.dtype)).dtype))
    if wants_grad(input):
        record(NormBackward1, (input,), result, (input, result), axes=axes, keepdim=keepdim)
    return result if out is None else out.copy_(result)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm (``p=None`` is 2) of a sparse COO tensor's stored values, over all of its dims (``dim`` may
    only name them all, or be empty). PyTorch has this kernel for sparse tensors only, and so refuses a dense
    one here; it has no derivative."""
    if not getattr(input, "is_sparse", False):
        raise not_on_sparse("native_norm", "CPU")
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    if dim is not None and len(dim) not in (0, input.dim()):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must either be empty or "
                           "contain all dimensions of the input")
    values = np.abs(dt.widened(input.coalesce()._data))
    p = 2 if p is None else p
    if p == np.inf:
        value = values.max(initial=0)
    elif p == -np.inf:
        value = values.min(initial=np.inf)
    elif p == 0:
        value = np.count_nonzero(values)
    else:
        value = np.sum(values ** p) ** (1 / p)
    real_dtype = values.dtype if input._data.dtype.kind == "c" else input._data.dtype
    result = wrap(np.asanyarray(value, dtype=real_dtype))
    return _without_derivative("native_norm", (input,), result)
