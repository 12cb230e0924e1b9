"""``torch.sparse.as_sparse_gradcheck``: ``gradcheck`` for functions that take or return sparse COO tensors.

``gradcheck`` perturbs strided tensors only, so each sparse input that requires grad is handed to it as its values
(a strided tensor) beside its indices and shape, and rebuilt as a sparse tensor inside the function; each sparse
output that requires grad is made dense. Without ``masked=True`` an input is first widened to every position of
its sparse dims (the gradient of an unstored zero counts too); with it, only its stored entries are checked.
gradiente has the COO layout only (no CSR, CSC, BSR or BSC), so those are the layouts converted.
"""
import numpy as np

from ..core.tensor import Tensor
from ..ops.sparse_coo import sparse_coo_tensor

__all__ = ["as_sparse_gradcheck"]

_STRIDED_REPRESENTATION = "__STRIDED_REPRESENTATION__"


def _every_position(obj):
    """``obj`` (sparse COO) as the indices of every position of its sparse dims and the values there."""
    sparse_dims = obj._sparse_indices.shape[0]
    shape = obj._sparse_size[:sparse_dims]
    indices = np.indices(shape).reshape(sparse_dims, -1).astype(np.int64)
    dense = obj.detach().to_dense()._data
    return indices, dense[tuple(indices)], True


def _to_strided_representation(args, masked):
    args = args if isinstance(args, (list, tuple)) else (args,)
    out = []
    for obj in args:
        if isinstance(obj, Tensor) and obj.requires_grad and obj.is_sparse:
            if masked:
                indices, values, coalesced = obj._sparse_indices, obj._data, obj._coalesced
            else:
                indices, values, coalesced = _every_position(obj)
            layout = {"shape": tuple(obj.shape), "indices": indices, "is_coalesced": coalesced}
            out.extend((_STRIDED_REPRESENTATION, layout,
                        Tensor._make(np.array(values, copy=True)).requires_grad_(True)))
        else:
            out.append(obj)
    return tuple(out)


def _from_strided_representation(args):
    out, args = [], list(args)
    while args:
        a = args.pop(0)
        if isinstance(a, str) and a == _STRIDED_REPRESENTATION:
            layout, values = args.pop(0), args.pop(0)
            a = sparse_coo_tensor(Tensor._make(layout["indices"]), values, size=layout["shape"],
                                  is_coalesced=layout["is_coalesced"])
        out.append(a)
    return tuple(out)


def as_sparse_gradcheck(gradcheck):
    """``gradcheck`` (``torch.autograd.gradcheck`` or a partial of it) extended to functions whose inputs or
    outputs are sparse COO tensors; the wrapped ``gradcheck`` itself still sees strided tensors only. Takes
    gradcheck's arguments and ``masked`` (default False: check the gradient at every position, stored or not)."""
    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        masked = kwargs.pop("masked", False)

        def func_wrapper(*args, **kw):
            outputs = func(*_from_strided_representation(args), **kw)
            many = isinstance(outputs, (list, tuple))
            strided = tuple(o.to_dense(masked_grad=masked) if isinstance(o, Tensor) and o.requires_grad
                            and o.is_sparse else o for o in (outputs if many else (outputs,)))
            return strided if many else strided[0]

        return gradcheck(func_wrapper, _to_strided_representation(inputs, masked), **kwargs)

    return gradcheck_with_sparse_support
