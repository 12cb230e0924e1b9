"""The legacy sparse products of PyTorch's TH era: ``dsmm``, ``smm``, ``hsmm``/``hspmm``, ``saddmm``/``sspaddmm``.

Each multiplies a sparse COO matrix S by a dense matrix D; they differ in what they return:

* ``dsmm(S, D)``: the dense product, as ``torch.mm`` (node MmBackward0, differentiable);
* ``smm(S, D)``: the product as a sparse matrix holding, for each row of S with an entry, every column of the
  product (zeros included);
* ``hspmm(S, D)`` (``hsmm``): the same rows as a *hybrid* sparse tensor, one sparse dim (the row) and one dense dim
  (the row's values);
* ``sspaddmm(M, S, D, beta, alpha)`` (``saddmm``): ``beta·M + alpha·S@D`` as a sparse matrix: M's entries, scaled,
  followed by the product's, uncoalesced (a position in both appears twice until ``coalesce()``).

``torch.hsmm``, ``dsmm`` and ``saddmm`` have no docstring in PyTorch and no Tensor method; ``smm`` and
``sspaddmm`` are Tensor methods too. As in PyTorch 2.13, the sparse results are uncoalesced, are recorded as ops
without a derivative (a backward through them raises "derivative for aten::sspaddmm is not implemented", or
``aten::hspmm``), and S is coalesced before its rows are read.
"""
import numpy as np

from ..core import dtype as dt
from ..core.sparse_tensor import make_sparse, not_on_sparse
from .arithmetic import _without_derivative
from .sparse_coo import _spmm_array, coalesce, sparse_dense_mm

__all__ = ["dsmm", "smm", "hsmm", "hspmm", "saddmm", "sspaddmm"]


def _check_operands(name, s, d, position=3):
    """PyTorch's argument checks of sspaddmm and hspmm, in its order and words."""
    if d.dim() != 2:
        raise RuntimeError(f"{name}: Argument #{position}: matrices expected, got {d.dim()}D tensor")
    if s.dim() != 2:
        raise RuntimeError(f"{name}: Argument #2: matrices expected, got {s.dim()}D tensor")
    if s._sparse_size[1] != d._data.shape[0]:
        raise RuntimeError(f"{name}: Argument #{position}: Expected dim 0 size {s._sparse_size[1]}, "
                           f"got {d._data.shape[0]}")
    if s._data.dtype != d._data.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(s._data.dtype)} but found "
                           f"{dt.scalar_name(d._data.dtype)}")


def _product_rows(s, d):
    """The rows of S that hold an entry (sorted) and those rows of S @ D, S coalesced first."""
    s = coalesce(s.detach())
    rows = np.unique(s._sparse_indices[0])
    product = _spmm_array(s._sparse_indices, s._data, s._sparse_size[0], d._data)
    return rows, product[rows]


def _entries(rows, row_values):
    """Row-wise product values as COO entries: every column of each row, row by row."""
    cols = row_values.shape[1]
    indices = np.stack([np.repeat(rows, cols), np.tile(np.arange(cols), rows.size)]).astype(np.int64)
    return indices, row_values.reshape(-1)


def dsmm(input, mat2):
    """``input @ mat2`` for a sparse matrix ``input`` and a dense ``mat2``: a dense matrix (MmBackward0), as
    ``torch.mm``; dense operands are multiplied as by ``torch.mm``."""
    if not input.is_sparse:
        from .matmul import mm
        return mm(input, mat2)
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(input._data.dtype)} but found "
                           f"{dt.scalar_name(mat2._data.dtype)}")
    return sparse_dense_mm(input, mat2)


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta·input + alpha·(mat1 @ mat2)`` for sparse ``input`` (n × p) and ``mat1`` (n × m) and a dense ``mat2``
    (m × p), as an uncoalesced sparse matrix: ``input``'s entries scaled by beta, then, for each row of mat1 with an
    entry, the product's values in every column, scaled by alpha. Not differentiable (as in PyTorch)."""
    if not mat1.is_sparse:
        raise RuntimeError("sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with layout Strided")
    if not input.is_sparse:     # (PyTorch fails an internal assert here; the same type, a plainer message)
        raise RuntimeError("sspaddmm: expected 'self' to have sparse layout, got 'self' with layout Strided")
    _check_operands("sspaddmm", mat1, mat2)
    rows, row_values = _product_rows(mat1, mat2)
    indices, values = _entries(rows, row_values)
    out_dtype = np.result_type(input._data, row_values)
    out = make_sparse(np.concatenate([input._sparse_indices, indices], axis=1),
                      np.concatenate([beta * input._data, alpha * values]).astype(out_dtype, copy=False),
                      (mat1._sparse_size[0], mat2._data.shape[1]))
    return _without_derivative("sspaddmm", (input, mat1, mat2), out)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``sspaddmm(input, mat1, mat2)`` under its TH-era name."""
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)


def smm(input, mat):
    """``input @ mat`` for a sparse matrix ``input`` and a dense ``mat``, as an uncoalesced sparse matrix holding
    every column of each row of ``input`` that has an entry (PyTorch computes it as ``sspaddmm`` onto an empty
    sparse matrix, and its errors name sspaddmm). Not differentiable (as in PyTorch)."""
    if not input.is_sparse:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    _check_operands("sspaddmm", input, mat)
    rows, row_values = _product_rows(input, mat)
    indices, values = _entries(rows, row_values)
    out = make_sparse(indices, values, (input._sparse_size[0], mat._data.shape[1]))
    return _without_derivative("sspaddmm", (input, mat), out)


def hspmm(mat1, mat2):
    """``mat1 @ mat2`` for a sparse matrix ``mat1`` and a dense ``mat2``, as a hybrid sparse tensor: one sparse dim
    (the rows of mat1 that have an entry) and one dense dim (each such row of the product). Not differentiable
    (as in PyTorch)."""
    if not mat1.is_sparse:
        raise not_on_sparse("hspmm", backend="CPU")
    if mat1.dim() != 2:
        raise RuntimeError(f"hspmm: Argument #2: matrices expected, got {mat1.dim()}D tensor")
    _check_operands("hspmm", mat1, mat2)
    rows, row_values = _product_rows(mat1, mat2)
    out = make_sparse(rows[None, :].astype(np.int64), np.ascontiguousarray(row_values),
                      (mat1._sparse_size[0], mat2._data.shape[1]))
    return _without_derivative("hspmm", (mat1, mat2), out)


def hsmm(mat1, mat2):
    """``hspmm(mat1, mat2)`` under its TH-era name."""
    return hspmm(mat1, mat2)
