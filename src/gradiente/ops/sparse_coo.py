"""Sparse COO ops: making, coalescing and reading sparse tensors, to_dense/to_sparse, sparse @ dense, sums.

A gradient that reaches a sparse tensor is one value per stored entry (``core/sparse_tensor.py``): the gradient
at that entry's position, duplicates each getting the whole of it, as PyTorch's ``sparse_mask`` gives. So the
rules below move per-entry arrays, and build a dense array only where the result is dense (``to_dense``, the
products, a dense input's gradient). Every rule computes with ``ops``, so it also serves ``create_graph`` (second
derivatives); only the tangent rules of forward mode compute on arrays.
"""
import os
import sys
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.layouts import sparse_coo as sparse_coo_layout
from ..core.layouts import strided as strided_layout
from ..core.node import Node
from ..core.record import record, wants_grad
from ..core.sparse_compressed import LAYOUT_WORDS
from ..core.sparse_tensor import make_sparse, not_on_sparse
from ..core.tensor import Tensor, _wrap_dim
from .reductions import sum as sum_of_dense

#: whether sparse_coo_tensor checks its indices (torch.sparse.check_sparse_tensor_invariants sets it)
# "explicit": set by enable(), disable() or the context manager; until then PyTorch warns, once, that the checks are
# off by default
invariant_checks = {"enabled": False, "explicit": False, "warned": False}
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def checking_invariants(check_invariants):
    """Whether a sparse constructor checks its indices: its ``check_invariants``, else the global switch, of which
    PyTorch's first implicit use warns that it is off."""
    if check_invariants is not None:
        return check_invariants
    if not invariant_checks["explicit"] and not invariant_checks["warned"]:
        invariant_checks["warned"] = True
        warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when "
                      "operating on a sparse tensor which violates the invariants, but checks incur performance "
                      "overhead. To silence this warning, explicitly opt in or out. See "
                      "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered internally at "
                      "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)",
                      stacklevel=_first_frame_outside_the_library())
    return invariant_checks["enabled"]


def _first_frame_outside_the_library():
    """The stacklevel that names the user's line, past the dispatch wrappers between it and the constructor."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _layout_name(t):
    return LAYOUT_WORDS[t.layout]


def _need_sparse(t, what, layout_words="sparse coordinate tensor"):
    if not t.is_sparse:
        raise RuntimeError(f"{what} expected {layout_words} layout but got {_layout_name(t)}")


def _as_array(value, dtype=None):
    if isinstance(value, Tensor):
        return value._data if dtype is None else value._data.astype(dtype)
    return np.asanyarray(value, dtype=dtype)


# --- making a sparse tensor ----------------------------------------------------------------------------------

class SparseCooTensorWithDimsAndTensorsBackward0(Node):
    """out = sparse(indices, values);  dvalues = the gradient at each entry (already one value per entry)"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out/∂values = the gradient at each stored entry"

    def backward(self, ops, grad):
        return (grad,)

    def jvp(self, ops, values_t):
        return values_t


def _check_invariants(indices, size, sparse_dim):
    for d in range(sparse_dim):
        row = indices[d]
        if row.size and row.min() < 0:
            raise RuntimeError(f"found negative index {int(row.min())} for dim {d}")
        if row.size and row.max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                               f"index {int(row.max())}")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor from ``indices`` (sparse_dim × nnz integers) and ``values`` (nnz × dense dims).
    ``size`` defaults to the smallest that holds the indices. A ``values`` tensor that requires grad receives
    the gradient of each entry (node SparseCooTensorWithDimsAndTensorsBackward0); ``requires_grad=True`` makes
    a sparse leaf whose ``.grad`` is sparse."""
    index_array = _as_array(indices)
    if index_array.dtype.kind not in "iu":
        raise RuntimeError("indices must be an int64 tensor")
    index_array = index_array.astype(np.int64)
    if index_array.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(index_array.shape)}")
    values_tensor = values if isinstance(values, Tensor) else None
    if values_tensor is not None:
        value_array = values._data if dtype is None else values._data.astype(dtype._np)
    else:
        value_array = _as_array(values, None if dtype is None else dtype._np)
        if dtype is None and value_array.dtype.kind == "f":
            value_array = value_array.astype(dt.get_default_dtype()._np)
    if value_array.ndim == 0:
        raise RuntimeError("values must have at least one dimension")     # PyTorch's own wording differs
    sparse_dim, nnz = index_array.shape
    if value_array.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
                           f"nnz from values: {value_array.shape[0]}")
    if size is None:
        size = tuple(int(m) + 1 if nnz else 0 for m in (index_array.max(axis=1) if nnz else [0] * sparse_dim))
        size += value_array.shape[1:]
    else:
        size = tuple(int(n) for n in size)
        if len(size) != sparse_dim + value_array.ndim - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sparse_dim}, dense_dim = {value_array.ndim - 1}")
    if checking_invariants(check_invariants):
        _check_invariants(index_array, size, sparse_dim)
    out = make_sparse(index_array, value_array, size, bool(is_coalesced), requires_grad)
    if values_tensor is not None and wants_grad(values_tensor):
        record(SparseCooTensorWithDimsAndTensorsBackward0, (values_tensor,), out)
    return out


# --- coalescing ----------------------------------------------------------------------------------------------

def _linear_index(indices, size):
    """Each entry's position as one integer (row-major over the sparse dims), for sorting and merging."""
    if indices.shape[0] == 0:
        return np.zeros(indices.shape[1], dtype=np.int64)
    return np.ravel_multi_index(tuple(indices), size[:indices.shape[0]])


class CoalesceBackward0(Node):
    """out = the entries merged and sorted;  dx = the gradient of the entry each input entry merged into"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out/∂x[k] = the gradient of out's entry that x's entry k was added into"

    def backward(self, ops, grad):
        return (ops.getitem(grad, (self.merged_into,)),)

    def jvp(self, ops, x_t):
        out = np.zeros((self.nnz,) + x_t.shape[1:], dtype=x_t.dtype)
        np.add.at(out, self.merged_into, x_t)
        return out


def coalesce(input):
    """The same sparse tensor with duplicate entries summed and entries sorted by index (``input`` itself if it
    is coalesced already, as in PyTorch)."""
    _need_sparse(input, "coalesce")
    if input._coalesced:
        return input
    out, merged_into = _merged_entries(input)
    if wants_grad(input):
        record(CoalesceBackward0, (input,), out, merged_into=merged_into, nnz=out._data.shape[0])
    return out


def _merged_entries(input):
    """``input`` coalesced, unrecorded, and for each of its entries the position of the entry it merged into."""
    indices, values, size = input._sparse_indices, input._data, input._sparse_size
    positions, first, merged_into = np.unique(_linear_index(indices, size), return_index=True,
                                              return_inverse=True)
    merged_into = merged_into.reshape(-1)
    summed = np.zeros((positions.size,) + values.shape[1:], dtype=values.dtype)
    np.add.at(summed, merged_into, values)
    return make_sparse(indices[:, first], summed, size, coalesced=True), merged_into


def is_coalesced(input):
    """Whether ``input`` is known to hold no duplicate index, sorted (``coalesce()``'s results, ``to_sparse``'s)."""
    _need_sparse(input, "is_coalesced")
    return input._coalesced


# --- reading the parts ---------------------------------------------------------------------------------------

def indices(input):
    """The int64 indices (sparse_dim × nnz) of a coalesced sparse tensor."""
    _need_sparse(input, "indices")
    if not input._coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return Tensor._make(input._sparse_indices)


def _indices(input):
    """The indices as stored, coalesced or not."""
    _need_sparse(input, "_indices")
    return Tensor._make(input._sparse_indices)


class ValuesBackward0(Node):
    """out = the values of a sparse tensor;  dx = grad, one value per entry"""
    __slots__ = ()
    complex_ok = True
    formula = "∂values/∂x = identity on the stored entries"

    def backward(self, ops, grad):
        return (grad,)

    def jvp(self, ops, x_t):
        return x_t


def values(input):
    """The values (nnz × dense dims) of a coalesced sparse tensor, differentiable (node ValuesBackward0)."""
    _need_sparse(input, "values", "sparse tensor")
    if not input._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    out = Tensor._make(input._data)
    if wants_grad(input):
        record(ValuesBackward0, (input,), out)
    return out


def _values(input):
    """The values as stored, outside the graph (PyTorch's ``_values()`` is not differentiable either)."""
    _need_sparse(input, "_values")
    return Tensor._make(input._data)


def _nnz(input):
    """The number of stored entries, duplicates included."""
    if not input.is_sparse:
        raise not_on_sparse("_nnz", backend="CPU")
    return input._data.shape[0]


def sparse_dim(input):
    """How many leading dims the indices address (0 for a dense tensor)."""
    return input._sparse_indices.shape[0] if input.is_sparse else 0


def dense_dim(input):
    """How many trailing dims each value has (a dense tensor's dim())."""
    return input._data.ndim - 1 if input.is_sparse else input._data.ndim


# --- converting ------------------------------------------------------------------------------------------------

class ToDenseBackward0(Node):
    """out = the dense tensor;  dx = grad at each stored entry's position"""
    __slots__ = ()
    complex_ok = True
    formula = "∂dense/∂x[k] = the gradient at entry k's position"

    def backward(self, ops, grad):
        return (ops.getitem(grad, tuple(self.indices)),)

    def jvp(self, ops, x_t):
        out = np.zeros(self.size, dtype=x_t.dtype)
        np.add.at(out, tuple(self.indices), x_t)
        return out


def to_dense(input, dtype=None, *, masked_grad=None):
    """The dense tensor a sparse one stands for, duplicates summed (a dense tensor comes back as it is)."""
    if not input.is_sparse:
        return input
    indices, values = input._sparse_indices, input._data
    out_array = np.zeros(input._sparse_size, dtype=values.dtype if dtype is None else dtype._np)
    np.add.at(out_array, tuple(indices), values)
    out = Tensor._make(out_array)
    if wants_grad(input):
        record(ToDenseBackward0, (input,), out, indices=indices, size=input._sparse_size)
    return out


class ToSparseBackward1(Node):
    """out = the nonzero entries of x (``to_sparse()``; ToSparseBackward0 is ``to_sparse(sparse_dim)``'s);
    dx = zeros with each entry's gradient at its position"""
    __slots__ = ()
    complex_ok = True
    formula = "∂sparse/∂x = the entries' gradients scattered into x's shape"

    def backward(self, ops, grad):
        return (ops.embed(grad, self.size, tuple(self.indices)),)

    def jvp(self, ops, x_t):
        return x_t[tuple(self.indices)]


class ToSparseBackward0(ToSparseBackward1):
    """``to_sparse(sparse_dim)``'s node: the same rule"""
    __slots__ = ()


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A coalesced sparse COO tensor holding ``input``'s nonzero entries; with ``sparse_dim`` k, the first k dims
    are indexed and each entry holds a whole dense slice that is not all zeros."""
    if input.is_sparse:
        if sparse_dim is not None and sparse_dim != input._sparse_indices.shape[0]:
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return input
    array = input._data
    k = array.ndim if sparse_dim is None else sparse_dim
    if not 0 <= k <= array.ndim:
        raise RuntimeError(f"sparse_dim argument must be in [0,{array.ndim}] but got {k}")
    nonzero = array != 0
    if k < array.ndim:
        nonzero = nonzero.any(axis=tuple(range(k, array.ndim)))
    index_array = np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(k, -1)
    out = make_sparse(index_array, array[tuple(index_array)], array.shape, coalesced=True)
    if wants_grad(input):
        record(ToSparseBackward1 if sparse_dim is None else ToSparseBackward0, (input,), out,
               indices=index_array, size=array.shape)
    return out


# --- sparse @ dense --------------------------------------------------------------------------------------------

def _check_mm(s, d):
    if s.dim() != 2 or s._sparse_indices.shape[0] != 2:
        raise RuntimeError(f"mm: expected a sparse matrix with 2 sparse dims, got sparse_dim={sparse_dim(s)}, "
                           f"dense_dim={dense_dim(s)}")
    if d.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {d.dim()}-D tensor")
    if s._sparse_size[1] != d._data.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._sparse_size[1]}, "
                           f"got {d._data.shape[0]}")
    if s._data.dtype != d._data.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{dt.cpp_name(s._data.dtype)} != {dt.cpp_name(d._data.dtype)}")


def _spmm_array(indices, values, rows, d):
    """Σ over entries k of values[k] · d[col_k], added into row row_k: the product without a dense matrix."""
    out = np.zeros((rows, d.shape[1]), dtype=np.result_type(values, d))
    np.add.at(out, indices[0], values[:, None] * d[indices[1]])
    return out


def _entry_values(s):
    """S's values as a dense tensor whose gradient goes to S entry for entry (a product's rule under create_graph
    reads them so; ``values()`` would refuse an uncoalesced S)."""
    out = Tensor._make(s._data)
    if wants_grad(s):
        record(ValuesBackward0, (s,), out)
    return out


def _sparse_and_dense_grads(node, ops, grad, edges_at):
    """The two gradients of S @ D: S's at each entry (the row of grad dotted with D's row), D's = Sᵀ @ grad,
    computed with ``ops`` from the saved S and D, so that under create_graph they are recorded."""
    rows, cols = node.indices
    s_values, d = node.saved(ops)
    if ops.recording:
        s_values = _entry_values(s_values)
    s_edge, d_edge = edges_at
    grad_rows = ops.getitem(grad, (rows,))
    grad_s = ops.sum(grad_rows * ops.getitem(d, (cols,)), 1) if s_edge else None
    grad_d = ops.embed(ops.unsqueeze(s_values, 1) * grad_rows, node.dense_shape, (cols,)) if d_edge else None
    return grad_s, grad_d


class MmBackward0(Node):
    """out = S @ D for a sparse S (torch.mm, matmul, spmm: PyTorch names the node as for dense mm);
    dS[k] = grad[row_k] · D[col_k];  dD = Sᵀ @ grad"""
    __slots__ = ()
    formula = "∂(SD)/∂S = (G·Dᵀ) at S's entries,  ∂(SD)/∂D = Sᵀ·G"

    def backward(self, ops, grad):
        edges = self.next_functions
        return _sparse_and_dense_grads(self, ops, grad, (edges[0][0] is not None, edges[1][0] is not None))

    def jvp(self, ops, s_t, d_t):
        out = None
        if s_t is not None:
            out = _spmm_array(self.indices, s_t, self.rows, self.saved_dense[0])
        if d_t is not None:
            part = _spmm_array(self.indices, self.values, self.rows, d_t)
            out = part if out is None else out + part
        return out


class SparseAddmmBackward0(Node):
    """out = beta·M + alpha·(S @ D);  dM = beta·grad;  dS, dD as for S @ D, times alpha"""
    __slots__ = ()
    formula = "∂out/∂M = β·G,  ∂out/∂S = α(G·Dᵀ) at S's entries,  ∂out/∂D = α·Sᵀ·G"

    def backward(self, ops, grad):
        edges = self.next_functions
        grad_m = grad * self.beta if edges[0][0] is not None else None
        grad_s, grad_d = _sparse_and_dense_grads(self, ops, grad * self.alpha,
                                                 (edges[1][0] is not None, edges[2][0] is not None))
        return grad_m, grad_s, grad_d

    def jvp(self, ops, m_t, s_t, d_t):
        out = None if m_t is None else self.beta * m_t
        for tangent, part in ((s_t, lambda: _spmm_array(self.indices, s_t, self.rows, self.saved_dense[0])),
                              (d_t, lambda: _spmm_array(self.indices, self.values, self.rows, d_t))):
            if tangent is not None:
                out = self.alpha * part() if out is None else out + self.alpha * part()
        return out


def _product_record(node_cls, inputs, out, s, d, **attrs):
    # S and D saved for the rule (S reads as its values); their arrays kept as well for the tangent rule
    record(node_cls, inputs, out, (s, d), indices=s._sparse_indices, values=s._data, rows=s._sparse_size[0],
           saved_dense=(d._data,), dense_shape=d._data.shape, **attrs)


def sparse_dense_mm(s, d, node_cls=MmBackward0):
    """S @ D for a sparse matrix S (2 sparse dims) and a dense matrix D: a dense matrix; S is not densified."""
    _check_mm(s, d)
    out = Tensor._make(_spmm_array(s._sparse_indices, s._data, s._sparse_size[0], d._data))
    if wants_grad(s, d):
        _product_record(node_cls, (s, d), out, s, d)
    return out


def sparse_addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta · input + alpha · (mat1 @ mat2) for a sparse mat1 and dense input and mat2 (``torch.sparse.addmm``)."""
    _need_sparse(mat1, "addmm")
    _check_mm(mat1, mat2)
    product = _spmm_array(mat1._sparse_indices, mat1._data, mat1._sparse_size[0], mat2._data)
    out = Tensor._make((beta * input._data + alpha * product).astype(product.dtype))
    if wants_grad(input, mat1, mat2):
        _product_record(SparseAddmmBackward0, (input, mat1, mat2), out, mat1, mat2, beta=beta, alpha=alpha)
    return out


def sparse_mm(mat1, mat2):
    """``torch.sparse.mm``: sparse @ dense. PyTorch computes it as addmm onto zeros with beta 0, and records
    that node (SparseAddmmBackward0, its first edge empty); so does this."""
    _need_sparse(mat1, "sparse.mm")
    _check_mm(mat1, mat2)
    zeros = Tensor._make(np.zeros((mat1._sparse_size[0], mat2._data.shape[1]), dtype=mat2._data.dtype))
    return sparse_addmm(zeros, mat1, mat2, beta=0)


# --- sums ------------------------------------------------------------------------------------------------------

class SumBackward0(Node):
    """out = the sum of every entry;  dx[k] = grad"""
    __slots__ = ()
    complex_ok = True
    formula = "∂Σx/∂x[k] = 1"

    def backward(self, ops, grad):
        return (ops.expand(grad, self.values_shape),)

    def jvp(self, ops, x_t):
        return x_t.sum()


class SparseSumBackward0(Node):
    """out = the sum over some dims;  dx[k] = out's gradient at the entry k was summed into"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out/∂x[k] = the gradient at the position entry k was summed into"

    def backward(self, ops, grad):
        if not self.dense_result:
            picked = ops.getitem(grad, (self.merged_into,))
        else:       # every sparse dim summed: each entry gets the whole (dense) gradient
            picked = ops.expand(ops.unsqueeze(grad, 0), (self.values_shape[0],) + tuple(grad.shape))
        # summed dense dims come back as size-1 axes, then broadcast to each entry's values
        for axis in self.summed_dense_axes:
            picked = ops.unsqueeze(picked, axis)
        return (ops.expand(picked, self.values_shape),)

    def jvp(self, ops, x_t):
        summed = ops.sum(x_t, self.summed_dense_axes) if self.summed_dense_axes else x_t
        if self.dense_result:
            return ops.sum(summed, 0)
        return ops.embed(summed, (self.nnz_out,) + tuple(summed.shape[1:]), (self.merged_into,))


def sparse_sum(input, dim=None, dtype=None, *, _node=None, _keepdim=False):
    """``torch.sparse.sum``: the sum of all entries (a dense scalar), or over ``dim`` (an int or a tuple): a sparse
    tensor while some sparse dims remain, else dense. (``_node``: the node class of the method form.)"""
    _need_sparse(input, "coalesce")      # PyTorch coalesces first, and says so
    if dim is None and _node is None:
        # PyTorch sums the values of the coalesced tensor (CoalesceBackward0, ValuesBackward0, SumBackward0)
        return sum_of_dense(values(coalesce(input)), dtype=dtype)
    entries = input._data if dtype is None else input._data.astype(dtype._np)
    if dim is None:
        out = Tensor._make(np.asanyarray(entries.sum(), dtype=entries.dtype))
        if wants_grad(input):
            record(SumBackward0, (input,), out, values_shape=entries.shape)
        return out
    dims = sorted({_wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim)})
    k = input._sparse_indices.shape[0]
    sparse_summed = [d for d in dims if d < k]
    dense_axes = tuple(d - k + 1 for d in dims if d >= k)
    summed_values = entries.sum(axis=dense_axes) if dense_axes else entries
    kept = [d for d in range(k) if d not in sparse_summed]
    kept_indices = input._sparse_indices[kept]
    size = tuple(n for d, n in enumerate(input._sparse_size) if d not in dims)
    record_attrs = {"values_shape": entries.shape, "summed_dense_axes": dense_axes, "kept_indices": kept_indices}
    if not kept:
        out = Tensor._make(summed_values.sum(axis=0).astype(entries.dtype))
        record_attrs.update(dense_result=True)
    else:
        positions, first, merged_into = np.unique(_linear_index(kept_indices, size), return_index=True,
                                                  return_inverse=True)
        merged_into = merged_into.reshape(-1)
        merged = np.zeros((positions.size,) + summed_values.shape[1:], dtype=entries.dtype)
        np.add.at(merged, merged_into, summed_values)
        if _keepdim:        # the summed dims stay, of size 1, each entry at index 0 of them
            out_indices = np.zeros((k, positions.size), dtype=kept_indices.dtype)
            out_indices[kept] = kept_indices[:, first]
            size = tuple(1 if d in dims else n for d, n in enumerate(input._sparse_size))
            out = make_sparse(out_indices, merged, size, coalesced=True)
        else:
            out = make_sparse(kept_indices[:, first], merged, size, coalesced=True)
        record_attrs.update(dense_result=False, merged_into=merged_into, nnz_out=positions.size)
    if wants_grad(input):
        record(_node or SparseSumBackward0, (input,), out, **record_attrs)
    return out


class SumBackward1(SparseSumBackward0):
    """``Tensor.sum(dim)`` of a sparse tensor, recorded under PyTorch's name. PyTorch 2.13 cannot run this node
    backward (its rule expands a sparse gradient), so neither does gradiente: the same error, where torch.sparse.sum
    has a gradient."""
    __slots__ = ()

    def backward(self, ops, grad):
        raise RuntimeError("expand is unsupported for Sparse tensors")


def sum_of_sparse(input, dim=None, keepdim=False, *, dtype=None):
    """``Tensor.sum()`` of a sparse tensor: all entries, a dense scalar (SumBackward0); over ``dim``, as
    ``torch.sparse.sum`` but recorded as SumBackward1. ``keepdim=True`` keeps the summed dims with size 1, where
    some sparse dim is not summed and there are no dense dims (PyTorch's other cases, which turn dense dims into
    sparse ones or give a dense result, are not in gradiente)."""
    if keepdim:
        if dim is None or input._data.ndim != 1 or {_wrap_dim(d, input.dim()) for d in (
                (dim,) if isinstance(dim, int) else dim)} >= set(range(input.dim())):
            raise NotImplementedError("gradiente's sum of a sparse tensor keeps dims only when some sparse dim is "
                                      "not summed and there are no dense dims")
        return sparse_sum(input, dim, dtype, _node=SumBackward1, _keepdim=True)
    return sparse_sum(input, dim, dtype, _node=SumBackward1)


# --- rearranging and converting: the entries keep their order, so gradients pass entry for entry --------------

class TBackward0(Node):
    """out = the sparse tensor with two index rows swapped;  dx = grad (the entries keep their order)"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out[k]/∂x[k] = 1"

    def backward(self, ops, grad):
        return (grad,)

    def jvp(self, ops, x_t):
        return x_t


class TransposeBackward0(TBackward0):
    """``transpose(a, b)``'s node: the same rule as ``t()``'s"""
    __slots__ = ()


def transpose(input, dim0, dim1):
    """The sparse tensor with sparse dims ``dim0`` and ``dim1`` swapped: index rows swap, values stay."""
    n = input.dim()
    dim0, dim1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    k = input._sparse_indices.shape[0]
    if dim0 >= k or dim1 >= k:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {k}, d0: {dim0}, "
                           f"d1: {dim1}")
    return _swapped(input, dim0, dim1, TransposeBackward0)


def t(input):
    """The transpose of a sparse matrix (2 sparse dims; at most 2 dims, as PyTorch's ``t``)."""
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                           f"{sparse_dim(input)} sparse and {dense_dim(input)} dense dimensions")
    return _swapped(input, 0, input.dim() - 1, TBackward0)


def _swapped(input, dim0, dim1, node_cls):
    order = list(range(input._sparse_indices.shape[0]))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    size = list(input._sparse_size)
    size[dim0], size[dim1] = size[dim1], size[dim0]
    out = make_sparse(input._sparse_indices[order], input._data, size, coalesced=input._coalesced and dim0 == dim1)
    if wants_grad(input):
        record(node_cls, (input,), out)
    return out


class ToCopyBackward0(Node):
    """out = x's values in another dtype;  dx = grad in x's dtype"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out/∂x = 1 (cast back)"

    def backward(self, ops, grad):
        return (grad,)      # the engine brings each gradient to its input's dtype (fix_meta)

    def jvp(self, ops, x_t):
        return x_t.astype(self.target_dtype)


def to_dtype(input, dtype):
    """The sparse tensor with its values in ``dtype`` (itself if they already are)."""
    if input._data.dtype == dtype._np:
        return input
    out = input._with_values(input._data.astype(dtype._np))
    if wants_grad(input):
        record(ToCopyBackward0, (input,), out, source_dtype=input._data.dtype, target_dtype=dtype._np)
    return out


def to(input, *args, **kwargs):
    """``Tensor.to`` of a sparse tensor: a dtype (positional or ``dtype=``), a tensor (its dtype), or a CPU device,
    which it is on."""
    dtype = kwargs.pop("dtype", None)
    for arg in args:
        if isinstance(arg, dt.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            dtype = arg.dtype
        elif str(arg) != "cpu":
            raise NotImplementedError(f"gradiente's sparse Tensor.to takes a dtype or 'cpu', not {arg!r}")
    return input if dtype is None else to_dtype(input, dtype)


def double(input, memory_format=None):
    """The sparse tensor in float64."""
    return to_dtype(input, dt.float64)


def float_(input, memory_format=None):
    """The sparse tensor in float32."""
    return to_dtype(input, dt.float32)


# --- moving, selecting and joining entries (issue 16: the shape ops PyTorch has for COO) -----------------------

class PermuteBackward0(TBackward0):
    """out = the sparse tensor with its sparse dims reordered;  dx = grad (the entries keep their order)"""
    __slots__ = ()


class UnsqueezeBackward0(TBackward0):
    """out = the sparse tensor with a new sparse dim of size 1;  dx = grad (the entries keep their order)"""
    __slots__ = ()


def adopt_node(result, values):
    """``result``, a sparse tensor made around the array of the dense tensor ``values``, given ``values``'s node,
    output number and any forward-mode tangent: the graph, and the node's name (PyTorch's), carry over."""
    if values.grad_fn is not None:
        result.grad_fn, result._output_nr, result._requires_grad = values.grad_fn, values._output_nr, True
    tangents = values.__dict__.get("_fw_grads")
    if tangents:
        result.__dict__["_fw_grads"] = tangents
    return result


def _sparse_dims_only(input, dims, what):
    k = input._sparse_indices.shape[0]
    if any(d >= k for d in dims):
        raise NotImplementedError(f"gradiente's {what} of a sparse tensor moves its sparse dims only")


def permute(input, *dims):
    """The sparse tensor with its dims in the order ``dims`` (sparse dims only): index rows reorder, values stay."""
    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    n = input.dim()
    order = [_wrap_dim(d, n) for d in dims]
    if sorted(order) != list(range(n)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           "of the desired ordering of dimensions i.e. input.dim() = "
                           f"{n} is not equal to len(dims) = {len(dims)}")
    _sparse_dims_only(input, [d for i, d in enumerate(order) if d != i], "permute")
    k = input._sparse_indices.shape[0]
    out = make_sparse(input._sparse_indices[order[:k]], input._data, [input._sparse_size[d] for d in order],
                      coalesced=input._coalesced and order == sorted(order))
    if wants_grad(input):
        record(PermuteBackward0, (input,), out)
    return out


def movedim(input, source, destination):
    """``movedim`` of a sparse tensor: a permutation of its sparse dims."""
    n = input.dim()
    sources = [_wrap_dim(d, n) for d in ((source,) if isinstance(source, int) else source)]
    targets = [_wrap_dim(d, n) for d in ((destination,) if isinstance(destination, int) else destination)]
    rest = [d for d in range(n) if d not in sources]
    order = [None] * n
    for s_dim, t_dim in zip(sources, targets):
        order[t_dim] = s_dim
    free = iter(rest)
    order = [d if d is not None else next(free) for d in order]
    return permute(input, order)


def unsqueeze(input, dim):
    """The sparse tensor with a new sparse dim of size 1 at ``dim`` (at most sparse_dim): a row of zeros joins the
    indices."""
    k = input._sparse_indices.shape[0]
    dim = _wrap_dim(dim, input.dim() + 1)
    if dim > k:
        raise NotImplementedError("gradiente unsqueezes a sparse tensor among its sparse dims only")
    indices = np.insert(input._sparse_indices, dim, 0, axis=0)
    size = list(input._sparse_size)
    size.insert(dim, 1)
    out = make_sparse(indices, input._data, size, coalesced=input._coalesced)
    if wants_grad(input):
        record(UnsqueezeBackward0, (input,), out)
    return out


def index_select(input, dim, index):
    """The entries whose index along sparse ``dim`` is in ``index``, once per occurrence there, renumbered by their
    place in ``index`` (an uncoalesced result, as PyTorch's); the values' gradient flows back entry for entry."""
    from .indexing import index_select as dense_index_select
    dim = _wrap_dim(dim, input.dim())
    _sparse_dims_only(input, [dim], "index_select")
    wanted = np.asanyarray(index._data if isinstance(index, Tensor) else index, dtype=np.int64).reshape(-1)
    size = input._sparse_size[dim]
    if wanted.size and (wanted.min() < -size or wanted.max() >= size):
        raise IndexError(f"index_select(): index out of range for dimension {dim}: index values must be in "
                         f"[{-size}, {size})")
    wanted = np.where(wanted < 0, wanted + size, wanted)
    rows = input._sparse_indices[dim]
    matches = rows[None, :] == wanted[:, None]          # (len(index), nnz): occurrence k picks entry e
    new_position, entry = np.nonzero(matches)
    indices = input._sparse_indices[:, entry].copy()
    indices[dim] = new_position
    new_size = list(input._sparse_size)
    new_size[dim] = wanted.size
    values = dense_index_select(_entry_values(input), 0, Tensor._make(entry))
    return adopt_node(make_sparse(indices, values._data, new_size, coalesced=False), values)


class SelectBackward0(Node):
    """out = the entries at one index of a sparse dim;  dx[entry[k]] = grad[k], 0 for the entries left out"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out[k]/∂x[entry[k]] = 1"

    def backward(self, ops, grad):
        return (ops.embed(grad, (self.nnz,) + tuple(grad.shape[1:]), (self.entry,)),)

    def jvp(self, ops, x_t):
        return x_t[self.entry]


def select(input, dim, index):
    """The sparse tensor of one fewer dim holding the entries whose index along sparse ``dim`` is ``index``."""
    dim = _wrap_dim(dim, input.dim())
    _sparse_dims_only(input, [dim], "select")
    size = input._sparse_size[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._sparse_size)} at "
                         f"dimension {dim}")
    entry = np.nonzero(input._sparse_indices[dim] == index % size)[0]
    keep = [d for d in range(input._sparse_indices.shape[0]) if d != dim]
    out = make_sparse(input._sparse_indices[keep][:, entry], input._data[entry],
                      [n for d, n in enumerate(input._sparse_size) if d != dim], coalesced=input._coalesced)
    if wants_grad(input):
        record(SelectBackward0, (input,), out, entry=entry, nnz=input._data.shape[0])
    return out


def unbind(input, dim=0):
    """The sparse tensors ``select(dim, i)`` for each index ``i`` along sparse ``dim``."""
    dim = _wrap_dim(dim, input.dim())
    return tuple(select(input, dim, i) for i in range(input._sparse_size[dim]))


def getitem(input, index):
    """``s[i]`` for an integer ``i``: ``select(0, i)``; other indices have no sparse kernel in PyTorch either."""
    if isinstance(index, int) and not isinstance(index, bool):
        return select(input, 0, index)
    raise not_on_sparse("index.Tensor" if isinstance(index, Tensor) else "as_strided")


def cat(tensors, dim=0):
    """COO tensors joined along sparse ``dim``: indices offset by the sizes before, values one after another."""
    from .joining import cat as dense_cat
    first = tensors[0]
    dim = _wrap_dim(dim, first.dim())
    _sparse_dims_only(first, [dim], "cat")
    offsets = np.cumsum([0] + [t._sparse_size[dim] for t in tensors[:-1]])
    parts = []
    for t, offset in zip(tensors, offsets):
        if not t.is_sparse or t.dim() != first.dim():
            raise RuntimeError("Concatenating sparse tensors, but a dense tensor was found at position "
                               f"{[u.is_sparse for u in tensors].index(False)}.")
        shifted = t._sparse_indices.copy()
        shifted[dim] += offset
        parts.append(shifted)
    size = list(first._sparse_size)
    size[dim] = int(sum(t._sparse_size[dim] for t in tensors))
    values = dense_cat([_entry_values(t) for t in tensors], 0)
    return adopt_node(make_sparse(np.concatenate(parts, axis=1), values._data, size, coalesced=False), values)


class StackBackward0(Node):
    """out = the inputs' entries one after another;  dx_i = grad's block of x_i's entries"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out/∂x_i = identity on x_i's block of entries"

    def backward(self, ops, grad):
        return tuple(ops.getitem(grad, (slice(int(a), int(b)),)) for a, b in zip(self.bounds[:-1], self.bounds[1:]))

    def jvp(self, ops, *tangents):
        parts = [t if t is not None else np.zeros((int(b) - int(a),) + self.dense_shape, dtype=self.dtype)
                 for t, a, b in zip(tangents, self.bounds[:-1], self.bounds[1:])]
        return np.concatenate(parts)


def stack(tensors, dim=0):
    """COO tensors stacked along a new sparse ``dim``: each one's indices gain that dim's row (its position), values
    one after another (uncoalesced, as PyTorch's)."""
    first = tensors[0]
    dim = _wrap_dim(dim, first.dim() + 1)
    if dim > first._sparse_indices.shape[0]:
        raise NotImplementedError("gradiente stacks sparse tensors along a new sparse dim only")
    for t in tensors:
        if not t.is_sparse:
            raise RuntimeError("Concatenating sparse tensors, but a dense tensor was found at position "
                               f"{[u.is_sparse for u in tensors].index(False)}.")
    indices = np.concatenate([np.insert(t._sparse_indices, dim, position, axis=0)
                              for position, t in enumerate(tensors)], axis=1)
    size = list(first._sparse_size)
    size.insert(dim, len(tensors))
    out = make_sparse(indices, np.concatenate([t._data for t in tensors]), size, coalesced=False)
    if wants_grad(*tensors):
        bounds = np.cumsum([0] + [t._data.shape[0] for t in tensors])
        record(StackBackward0, tuple(tensors), out, bounds=bounds, dense_shape=tuple(first._data.shape[1:]),
               dtype=first._data.dtype)
    return out


# --- softmax over one dim of a sparse tensor -------------------------------------------------------------------

def _softmax_groups(input, dim):
    """Group the entries that share every sparse index but ``dim``'s: softmax runs within each group."""
    if input._data.ndim != 1:
        raise NotImplementedError("sparse softmax of a tensor with dense dims is not in gradiente")
    kept = [d for d in range(input._sparse_indices.shape[0]) if d != dim]
    key = _linear_index(input._sparse_indices[kept], tuple(input._sparse_size[d] for d in kept) + (1,))
    _, group = np.unique(key, return_inverse=True)
    return group.reshape(-1)


def _group_sums(ops, x, group, groups):
    """Each entry's group total of ``x`` (the softmax's Σ along dim), computed with ``ops``."""
    return ops.getitem(ops.embed(x, (groups,), (group,)), (group,))


def _group_max(values, group, groups):
    top = np.full(groups, -np.inf, dtype=values.dtype)
    np.maximum.at(top, group, values)
    return top


class _SoftmaxOfEntries(Node):
    """A softmax over the entries of the coalesced input, which the node's kernel merges itself, as PyTorch's does:
    ``merged_into`` (None for a coalesced input) maps each input entry to its merged entry."""
    __slots__ = ()
    merged_into = None

    def _to_input(self, ops, dx):
        """The merged entries' gradient, for each entry of the input (each gets its merged entry's)."""
        return dx if self.merged_into is None else ops.getitem(dx, (self.merged_into,))

    def _from_input(self, ops, x_t):
        """The input entries' tangent, merged (duplicates add up)."""
        if self.merged_into is None:
            return x_t
        return ops.embed(x_t, (self.merged_nnz,), (self.merged_into,))


class SparseSoftmaxBackward0(_SoftmaxOfEntries):
    """out = softmax within each group of entries;  dx = out · (grad − Σ_group grad · out)"""
    __slots__ = ()
    formula = "∂softmax/∂x = y·(g − Σ g·y)"

    def backward(self, ops, grad):
        (y,) = self.saved(ops)
        return (self._to_input(ops, y * (grad - _group_sums(ops, grad * y, self.group, self.groups))),)

    def jvp(self, ops, x_t):
        (y,) = self.saved(ops)
        x_t = self._from_input(ops, x_t)
        return y * (x_t - _group_sums(ops, x_t * y, self.group, self.groups))


class SparseLogSoftmaxBackward0(_SoftmaxOfEntries):
    """out = log-softmax within each group;  dx = grad − exp(out) · Σ_group grad"""
    __slots__ = ()
    formula = "∂logsoftmax/∂x = g − softmax·Σ g"

    def backward(self, ops, grad):
        (y,) = self.saved(ops)
        return (self._to_input(ops, grad - ops.exp(y) * _group_sums(ops, grad, self.group, self.groups)),)

    def jvp(self, ops, x_t):
        (y,) = self.saved(ops)
        x_t = self._from_input(ops, x_t)
        return x_t - _group_sums(ops, ops.exp(y) * x_t, self.group, self.groups)


def _sparse_softmax(input, dim, dtype, log):
    _need_sparse(input, "softmax")
    source, merged_into = (input, None) if input._coalesced else _merged_entries(input)
    dim = _wrap_dim(dim, input.dim())
    values = source._data if dtype is None else source._data.astype(dtype._np)
    group = _softmax_groups(source, dim)
    groups = int(group.max()) + 1 if group.size else 0
    shifted = values - _group_max(values, group, groups)[group]
    total = np.zeros(groups, dtype=values.dtype)
    np.add.at(total, group, np.exp(shifted))
    result = shifted - np.log(total)[group] if log else np.exp(shifted) / total[group]
    out = make_sparse(source._sparse_indices, result.astype(values.dtype), source._sparse_size, coalesced=True)
    if wants_grad(input):
        record(SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0, (input,), out, (out,), group=group,
               groups=groups, merged_into=merged_into, merged_nnz=values.shape[0])
    return out


def sparse_softmax(input, dim, dtype=None):
    """``torch.sparse.softmax``: softmax along ``dim`` over the stored entries only (missing ones are -inf, not 0)."""
    return _sparse_softmax(input, dim, dtype, log=False)


def sparse_log_softmax(input, dim, dtype=None):
    """``torch.sparse.log_softmax``: log of ``sparse_softmax``, computed stably."""
    return _sparse_softmax(input, dim, dtype, log=True)


# --- resizing in place ---------------------------------------------------------------------------------------------

_RESIZE_ADVICE = (" on a non-empty sparse tensor is not supported.\nYou could try the following options:\n1. If you "
                  "need an empty sparse tensor of this size, call `x = torch.sparse_coo_tensor(size)`.\n2. If you need "
                  "to resize this tensor, you have the following options:\n    1. For both sparse and dense "
                  "dimensions, keep the number of them constant and the size of them non-shrinking, and then try the "
                  "same call again.\n"
                  "    2. Or, create a new sparse tensor with the correct indices and values from this sparse tensor.")


def _check_resizable(input, name):
    if not input.is_sparse:
        raise not_on_sparse(name, backend="CPU")
    if input._requires_grad and input.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def sparse_resize_(input, size, sparse_dim, dense_dim):
    """Give a sparse COO tensor the shape ``size`` in place, keeping its entries: its sparse and dense dims may only
    grow, and their numbers stay (an empty tensor may change anything). Returns ``input``."""
    _check_resizable(input, "sparse_resize_")
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    old_sparse, old_dense = input._sparse_indices.shape[0], input._data.ndim - 1
    if input._data.shape[0] == 0:
        input._sparse_indices = np.zeros((sparse_dim, 0), dtype=np.int64)
        input._data = np.zeros((0,) + size[sparse_dim:], dtype=input._data.dtype)
    else:
        for what, old, new in (("sparse", old_sparse, sparse_dim), ("dense", old_dense, dense_dim)):
            if old != new:
                raise RuntimeError(f"changing the number of {what} dimensions (from {old} to {new})" + _RESIZE_ADVICE)
        for what, lo, hi in (("sparse", 0, sparse_dim), ("dense", sparse_dim, len(size))):
            old_sizes, new_sizes = list(input._sparse_size[lo:hi]), list(size[lo:hi])
            if any(n < o for n, o in zip(new_sizes, old_sizes)):
                raise RuntimeError(f"shrinking the size of {what} dimensions (from {old_sizes} to {new_sizes})"
                                   + _RESIZE_ADVICE)
        if size[sparse_dim:] != tuple(input._data.shape[1:]):
            grown = np.zeros(input._data.shape[:1] + size[sparse_dim:], dtype=input._data.dtype)
            grown[tuple(slice(0, n) for n in input._data.shape)] = input._data
            input._data = grown
    input._sparse_size = size
    return input


def sparse_resize_and_clear_(input, size, sparse_dim, dense_dim):
    """Make a sparse COO tensor an empty one of shape ``size`` (``sparse_dim`` indexed dims), in place."""
    _check_resizable(input, "sparse_resize_and_clear_")
    input._sparse_indices = np.zeros((0, 0), dtype=np.int64)
    input._data = np.zeros((0,) + input._data.shape[1:], dtype=input._data.dtype)
    input._coalesced = True
    return sparse_resize_(input, size, sparse_dim, dense_dim)


def resize_as_sparse_(input, the_template):
    """Resize a sparse COO tensor in place to ``the_template``'s shape, sparse dims and dense dims, as
    ``sparse_resize_`` does. Returns ``input``."""
    if the_template.layout not in (sparse_coo_layout, strided_layout):
        raise RuntimeError(f"resize_as_sparse_compressed_: self  expected sparse compressed tensor layout but got "
                           f"{_layout_name(input)}")
    if not input.is_sparse:
        raise RuntimeError("self.is_sparse() INTERNAL ASSERT FAILED: _internal_get_SparseTensorImpl: not a sparse "
                           "tensor")
    return sparse_resize_(input, the_template.shape, sparse_dim(the_template), dense_dim(the_template))


def sparse_mask(input, mask):
    """The entries of dense ``input`` at ``mask``'s indices, as a sparse tensor with ``mask``'s pattern."""
    _need_sparse(mask, "sparse_mask")
    picked = input._data[tuple(mask._sparse_indices)]
    return make_sparse(mask._sparse_indices, picked, mask._sparse_size, mask._coalesced)


__all__ = []        # public through gradiente.sparse, gradiente/__init__.py and the methods table

spmm = sparse_dense_mm      # ``torch.spmm``
