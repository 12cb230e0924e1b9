"""Compressed sparse ops (CSR, CSC, BSR, BSC): making and reading them, converting between layouts, to_dense,
products with a dense matrix, sums, scaling and transposes.

The COO machinery (``ops/sparse_coo.py``) does the work wherever PyTorch's semantics allow, through each stored
element's matrix position (``core/sparse_compressed.element_positions``): ``to_dense`` is COO's scatter and records
COO's ``ToDenseBackward0``, a product is COO's scatter-add product and records COO's ``MmBackward0`` or
``SparseAddmmBackward0``, ``values()`` records COO's ``ValuesBackward0``. What is new here is the one rule that moves
stored elements from one layout into another (``_RegatherBackward``): every conversion, dense or sparse to any
sparse layout, is "the output's element k is the input's element pick[k], or zero", so its gradient gathers back.
"""
import numpy as np

from ..core import dtype as dt
from ..core.layouts import sparse_bsc, sparse_bsr, sparse_csc, sparse_csr, strided
from ..core.layouts import sparse_coo as sparse_coo_layout
from ..core.node import Node
from ..core.record import record, wants_grad
from ..core.sparse_compressed import (
    BLOCK_LAYOUTS,
    COMPRESSED_LAYOUTS,
    LAYOUT_WORDS,
    ROW_LAYOUTS,
    element_positions,
    is_compressed,
    make_compressed,
)
from ..core.sparse_tensor import make_sparse
from ..core.tensor import Tensor, _wrap_dim
from . import reductions, sparse_coo


def _layout_word(t):
    return LAYOUT_WORDS[t.layout]


def _index_array(indices):
    if isinstance(indices, Tensor) and indices.layout is not strided:
        indices = indices.to_dense()        # (PyTorch reads a sparse argument as the tensor it stands for)
    array = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    return array.astype(np.int64) if array.dtype.kind == "i" and array.dtype.itemsize not in (4, 8) else array


def _values_array(values, dtype):
    if isinstance(values, Tensor):
        return values._data if dtype is None else values._data.astype(dtype._np)
    array = np.asarray(values, dtype=None if dtype is None else dtype._np)
    if dtype is None and array.dtype.kind == "f":
        array = array.astype(dt.get_default_dtype()._np)
    elif dtype is None and array.dtype.kind in "iu":
        array = array.astype(np.int64)
    return array


# --- making a compressed tensor ------------------------------------------------------------------------------

class SparseCompressedTensorBackward0(sparse_coo.SparseCooTensorWithDimsAndTensorsBackward0):
    """out = compressed(indices, values);  dvalues = the gradient at each stored element: COO's constructor's rule"""
    __slots__ = ()


def _names(layout):
    """(compressed, plain, what the compressed index counts) as PyTorch's messages name them."""
    blocked = layout in BLOCK_LAYOUTS
    if layout in ROW_LAYOUTS:
        return "crow_indices", "col_indices", "row blocks" if blocked else "rows"
    return "ccol_indices", "row_indices", "column blocks" if blocked else "columns"


def _check_arguments(compressed, plain, values, size, layout):
    """PyTorch's argument checks (``_validate_sparse_compressed_tensor_args``), in its order and words."""
    c_name, p_name, counted = _names(layout)
    if compressed.dtype != plain.dtype:
        raise RuntimeError(f"{c_name} and {p_name} must have the same dtype, bot got {dt.scalar_name(compressed.dtype)}"
                           f" and {dt.scalar_name(plain.dtype)}, respectively")
    if compressed.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{c_name} and {p_name} dtype must be Int or Long, but got "
                           f"{dt.scalar_name(compressed.dtype)}")
    if compressed.ndim != plain.ndim:
        raise RuntimeError(f"{c_name} and {p_name} dimensionalities must be equal but got {compressed.ndim} and "
                           f"{plain.ndim}, respectively")
    block_dims = 2 if layout in BLOCK_LAYOUTS else 0
    if values.ndim <= block_dims:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block dimensionalities (=0 + "
                           f"{block_dims}) but got {values.ndim}")
    dense_dims = values.ndim - 1 - block_dims
    if len(size) != 2 + dense_dims:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities (=0 + 2 + "
                           f"{dense_dims}) but got {len(size)}")
    block = values.shape[1:3] if block_dims else (1, 1)
    for d in (0, 1):
        if size[d] % block[d]:
            raise RuntimeError(f"tensor shape[{d}] (={size[d]}) must be divisible with blocksize[{d}] (={block[d]}) "
                               "as defined by values shape")
    compressed_dim = 0 if layout in ROW_LAYOUTS else 1
    expected = size[compressed_dim] // block[compressed_dim] + 1
    if compressed.shape[-1] != expected:
        raise RuntimeError(f"{c_name}.shape[-1] must be equal to the number of {counted} + 1 (={expected}), but got "
                           f"{compressed.shape[-1]}")
    if plain.shape[-1] != values.shape[0]:
        raise RuntimeError(f"{p_name}.shape[-1] must be equal to nnz (={values.shape[0]}) as defined by "
                           f"values.shape[0], but got {plain.shape[-1]}")


def _check_invariants(compressed, plain, size, layout, block):
    """PyTorch's index invariants (``check_invariants=True``): compressed indices start at 0, end at nnz and step by
    0 to the plain dim's size; the plain indices are in range and sorted and distinct within each compressed slot."""
    c_name, p_name, _ = _names(layout)
    row_major = layout in ROW_LAYOUTS
    plain_dim_name = "ncols" if row_major else "nrows"
    n_plain = size[1 if row_major else 0] // block[1 if row_major else 0]
    if compressed.size and compressed[0] != 0:
        raise RuntimeError(f"`{c_name}[..., 0] == 0` is not satisfied.")
    if compressed.size and compressed[-1] != plain.size:
        raise RuntimeError(f"`{c_name}[..., -1] == nnz` is not satisfied.")
    steps = np.diff(compressed)
    if steps.size and (steps.min() < 0 or steps.max() > n_plain):
        raise RuntimeError(f"`0 <= {c_name}[..., 1:] - {c_name}[..., :-1] <= {plain_dim_name}` is not satisfied.")
    if plain.size and (plain.min() < 0 or plain.max() >= n_plain):
        raise RuntimeError(f"`0 <= {p_name} < {plain_dim_name}` is not satisfied.")
    slot = np.repeat(np.arange(compressed.size - 1), steps)
    if plain.size > 1 and np.any((np.diff(plain) <= 0) & (slot[1:] == slot[:-1])):
        counted = "nrows" if row_major else "ncols"
        raise RuntimeError(f"`{p_name}[..., {c_name}[..., i - 1]:{c_name}[..., i]] for all i = 1, ..., {counted} are "
                           "sorted and distinct along the last dimension values` is not satisfied.")


def _inferred_size(compressed, plain, values, layout):
    """The smallest shape that holds the indices, as PyTorch infers it when no size is given."""
    block = values.shape[1:3] if layout in BLOCK_LAYOUTS else (1, 1)
    dense_shape = values.shape[1 + (2 if layout in BLOCK_LAYOUTS else 0):]
    n_compressed = compressed.shape[-1] - 1
    n_plain = int(plain.max()) + 1 if plain.size else 0
    base = (n_compressed, n_plain) if layout in ROW_LAYOUTS else (n_plain, n_compressed)
    return (base[0] * block[0], base[1] * block[1]) + tuple(dense_shape)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """A compressed sparse matrix of ``layout`` (sparse_csr, sparse_csc, sparse_bsr or sparse_bsc) from its compressed
    indices (one more than the rows, or row blocks, or columns ...), plain indices (one per stored element or block)
    and values (nnz, then the block's two dims for BSR/BSC, then dense dims). ``size`` defaults to the smallest that
    holds the indices. A ``values`` tensor that requires grad gets each stored element's gradient (node
    SparseCompressedTensorBackward0). ``check_invariants=True`` (or torch.sparse.check_sparse_tensor_invariants)
    checks the arguments and indices with PyTorch's messages; otherwise, as in PyTorch, they are taken as they are.
    Differences: no batch dims (indices must be 1-D); the checks' warning that they are off is not given."""
    if layout not in COMPRESSED_LAYOUTS:
        word = "none" if layout is None else LAYOUT_WORDS.get(layout, str(layout))
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got {word}")
    compressed, plain = _index_array(compressed_indices), _index_array(plain_indices)
    value_array = _values_array(values, dtype)
    size = (_inferred_size(compressed, plain, value_array, layout) if size is None
            else tuple(int(n) for n in size))
    if sparse_coo.checking_invariants(check_invariants):
        _check_arguments(compressed, plain, value_array, size, layout)
        if compressed.ndim == 1:
            block = value_array.shape[1:3] if layout in BLOCK_LAYOUTS else (1, 1)
            _check_invariants(compressed, plain, size, layout, block)
    if compressed.ndim != 1:
        raise NotImplementedError("gradiente's compressed sparse tensors have no batch dims: the indices must be 1-D")
    out = make_compressed(compressed, plain, value_array, size, layout, requires_grad)
    if isinstance(values, Tensor) and wants_grad(values):
        record(SparseCompressedTensorBackward0, (values,), out)
    return out


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A sparse CSR matrix: ``crow_indices`` (rows + 1: where each row's entries start), ``col_indices`` and
    ``values`` (one per entry). See ``sparse_compressed_tensor``."""
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype, layout=sparse_csr,
                                    requires_grad=requires_grad, check_invariants=check_invariants)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A sparse CSC matrix: ``ccol_indices`` (columns + 1), ``row_indices`` and ``values`` (one per entry, column
    by column). See ``sparse_compressed_tensor``."""
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype, layout=sparse_csc,
                                    requires_grad=requires_grad, check_invariants=check_invariants)


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A sparse BSR matrix: CSR over blocks; ``values`` is (nnz blocks, blockrows, blockcols). See
    ``sparse_compressed_tensor``."""
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype, layout=sparse_bsr,
                                    requires_grad=requires_grad, check_invariants=check_invariants)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A sparse BSC matrix: CSC over blocks; ``values`` is (nnz blocks, blockrows, blockcols). See
    ``sparse_compressed_tensor``."""
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype, layout=sparse_bsc,
                                    requires_grad=requires_grad, check_invariants=check_invariants)


# --- reading the parts ---------------------------------------------------------------------------------------

def _index_reader(name, row_major, part):
    kind = "row" if row_major else "column"

    def read(input):
        if input.layout not in (ROW_LAYOUTS if row_major else (sparse_csc, sparse_bsc)):
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {_layout_word(input)}")
        return Tensor._make(getattr(input, part))
    read.__name__ = read.__qualname__ = name
    read.__doc__ = (f"The {name.replace('_', ' ')} of a {'CSR or BSR' if row_major else 'CSC or BSC'} tensor "
                    "(not differentiable; shares memory).")
    return read


crow_indices = _index_reader("crow_indices", True, "_compressed_indices")
col_indices = _index_reader("col_indices", True, "_plain_indices")
ccol_indices = _index_reader("ccol_indices", False, "_compressed_indices")
row_indices = _index_reader("row_indices", False, "_plain_indices")


def _copying(reader):
    def copy(input, *, out=None):
        return Tensor._make(reader(input)._data.copy())
    copy.__name__ = copy.__qualname__ = f"{reader.__name__}_copy"
    copy.__doc__ = f"A copy of ``Tensor.{reader.__name__}()``."
    return copy


crow_indices_copy = _copying(crow_indices)
col_indices_copy = _copying(col_indices)
ccol_indices_copy = _copying(ccol_indices)
row_indices_copy = _copying(row_indices)


def values(input):
    """The stored values (nnz, block dims, dense dims), differentiable (node ValuesBackward0); COO's for COO."""
    if not is_compressed(input):
        return sparse_coo.values(input)
    out = Tensor._make(input._data)
    if wants_grad(input):
        record(sparse_coo.ValuesBackward0, (input,), out)
    return out


def _nnz(input):
    """The number of stored elements (CSR, CSC) or blocks (BSR, BSC)."""
    return input._plain_indices.shape[-1] if is_compressed(input) else sparse_coo._nnz(input)


def sparse_dim(input):
    """2 for a compressed tensor (its matrix dims)."""
    return 2 if is_compressed(input) else sparse_coo.sparse_dim(input)


def dense_dim(input):
    """The trailing dims each stored element holds."""
    if not is_compressed(input):
        return sparse_coo.dense_dim(input)
    return input._data.ndim - 1 - (2 if input.layout in BLOCK_LAYOUTS else 0)


def is_sparse_csr(input):
    """Whether ``input`` has the CSR layout (a dense tensor: False)."""
    return input.layout is sparse_csr


# --- to_dense: COO's scatter at each stored element's position -------------------------------------------------

def to_dense(input, dtype=None, *, masked_grad=None):
    """The dense tensor a compressed (or COO) one stands for; gradients go to the stored values (ToDenseBackward0)."""
    if not is_compressed(input):
        return sparse_coo.to_dense(input, dtype, masked_grad=masked_grad)
    positions = element_positions(input)
    out_array = np.zeros(input._sparse_size, dtype=input._data.dtype if dtype is None else dtype._np)
    np.add.at(out_array, positions, input._data)
    out = Tensor._make(out_array)
    if wants_grad(input):
        record(sparse_coo.ToDenseBackward0, (input,), out, indices=positions, size=input._sparse_size)
    return out


# --- converting between layouts: one rule, "output element k is input element pick[k], or zero" -----------------

class _RegatherBackward(Node):
    """out.flat[k] = x.flat[pick[k]] where pick[k] >= 0, else 0;  dx = the gradients of out's elements added back at
    the elements they were read from"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out[k]/∂x[pick[k]] = 1"

    def backward(self, ops, grad):
        flat = ops.reshape(grad, (-1,) + self.dense_shape)
        taken = ops.getitem(flat, (self.found,))
        return (ops.reshape(ops.embed(taken, (self.n_in,) + self.dense_shape, (self.pick[self.found],)),
                            self.in_shape),)

    def jvp(self, ops, x_t):
        flat = x_t.reshape((self.n_in,) + self.dense_shape)
        out = np.zeros((self.pick.size,) + self.dense_shape, dtype=x_t.dtype)
        out[self.found] = flat[self.pick[self.found]]
        return out.reshape(self.out_shape)


class ToSparseBackward1(_RegatherBackward):
    """``to_sparse()``/``to_sparse_coo()`` (and ``to_sparse(layout=...)`` of a dense tensor): the regathering rule"""
    __slots__ = ()


class ToSparseCsrBackward0(_RegatherBackward):
    """``to_sparse_csr()``: the regathering rule"""
    __slots__ = ()


class ToSparseCscBackward0(_RegatherBackward):
    """``to_sparse_csc()``: the regathering rule"""
    __slots__ = ()


class ToSparseBsrBackward0(_RegatherBackward):
    """``to_sparse_bsr()``: the regathering rule"""
    __slots__ = ()


class ToSparseBscBackward0(_RegatherBackward):
    """``to_sparse_bsc()``: the regathering rule"""
    __slots__ = ()


_NODES = {sparse_csr: ToSparseCsrBackward0, sparse_csc: ToSparseCscBackward0,
          sparse_bsr: ToSparseBsrBackward0, sparse_bsc: ToSparseBscBackward0}


def _stored_elements(input):
    """(positions, source, flat values, dense shape): the row-major linear position of each element the input
    stores (a dense tensor: its nonzero ones; COO: coalesced first), where it is in ``flat values``, and the values
    with one row per element (the input's own values, or the dense array, flattened)."""
    if input.layout is strided:
        array = input._data
        flat = array.reshape(-1)
        positions = np.flatnonzero(flat)
        return positions, positions, flat, ()
    if input.layout is sparse_coo_layout:
        rows, cols = input._sparse_indices
        values_array = input._data
        dense_shape = values_array.shape[1:]
    else:
        rows, cols = (np.broadcast_to(p, input._data.shape[:p.ndim]) for p in element_positions(input))
        values_array = input._data
        dense_shape = values_array.shape[rows.ndim:]
    positions = (rows * input._sparse_size[1] + cols).reshape(-1)
    return positions, np.arange(positions.size), values_array.reshape((positions.size,) + tuple(dense_shape)), \
        tuple(dense_shape)


def _target_grid(positions, shape, layout, block):
    """The output's structure from the stored positions: (compressed, plain, element positions of its values'
    leading shape)."""
    n_cols = shape[1]
    rows, cols = np.divmod(np.unique(positions), n_cols)
    if layout not in BLOCK_LAYOUTS:
        row_major = layout in ROW_LAYOUTS
        order = np.lexsort((cols, rows) if row_major else (rows, cols))
        rows, cols = rows[order], cols[order]
        major, minor, n_major = (rows, cols, shape[0]) if row_major else (cols, rows, shape[1])
        compressed = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n_major))]).astype(np.int64)
        return compressed, minor.astype(np.int64), rows * n_cols + cols
    block_rows, block_cols = rows // block[0], cols // block[1]
    n_block_rows, n_block_cols = shape[0] // block[0], shape[1] // block[1]
    if layout is sparse_bsr:
        keys = np.unique(block_rows * n_block_cols + block_cols)
        major, minor = np.divmod(keys, n_block_cols)
        block_r, block_c, n_major = major, minor, n_block_rows
    else:
        keys = np.unique(block_cols * n_block_rows + block_rows)
        major, minor = np.divmod(keys, n_block_rows)
        block_r, block_c, n_major = minor, major, n_block_cols
    compressed = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n_major))]).astype(np.int64)
    grid_rows = block_r[:, None, None] * block[0] + np.arange(block[0])[None, :, None]
    grid_cols = block_c[:, None, None] * block[1] + np.arange(block[1])[None, None, :]
    return compressed, minor.astype(np.int64), grid_rows * n_cols + grid_cols


def _convert(input, layout, block, node_cls):
    """``input`` (dense, COO or compressed; a matrix) in compressed ``layout``, keeping every element it stores (a
    dense one: its nonzeros; BSR/BSC fill each touched block, zeros where nothing is stored)."""
    if input.dim() != 2:
        raise NotImplementedError(f"gradiente converts only matrices (2 dims, no batch or dense dims) to "
                                  f"{layout!r}, not a {input.dim()}-dim tensor")
    if input.layout is sparse_coo_layout:
        input = sparse_coo.coalesce(input)
    shape = tuple(input.shape)
    positions, source, flat_values, dense_shape = _stored_elements(input)
    compressed, plain, out_positions = _target_grid(positions, shape, layout, block)
    order = np.argsort(positions, kind="stable")
    sorted_positions = positions[order]
    slot = np.searchsorted(sorted_positions, out_positions.reshape(-1))
    slot = np.minimum(slot, max(sorted_positions.size - 1, 0))
    found = (sorted_positions[slot] == out_positions.reshape(-1)) if sorted_positions.size else \
        np.zeros(out_positions.size, dtype=bool)
    pick = np.where(found, source[order][slot] if sorted_positions.size else 0, -1)
    out_values = np.zeros((pick.size,) + dense_shape, dtype=flat_values.dtype)
    out_values[found] = flat_values[pick[found]]
    out_values = out_values.reshape(out_positions.shape + dense_shape)
    out = make_compressed(compressed, plain, out_values, shape, layout)
    if wants_grad(input):
        record(node_cls or _NODES[layout], (input,), out, pick=pick, found=found, n_in=flat_values.shape[0],
               dense_shape=dense_shape, in_shape=input._data.shape, out_shape=out_values.shape)
    return out


def _blocksize(blocksize, what):
    if blocksize is None:
        raise TypeError(f'{what}() missing 1 required positional arguments: "blocksize"')
    return (int(blocksize), int(blocksize)) if isinstance(blocksize, int) else tuple(int(b) for b in blocksize)


def _to_compressed(input, layout, blocksize=None, dense_dim=None, node_cls=None):
    if dense_dim is not None and input.layout is not strided:
        kind = LAYOUT_WORDS[layout][6:].lower()
        source = ("coo_" if input.is_sparse else "" if input.layout is layout else "sparse_compressed_") + \
            f"to_sparse_{kind}"
        raise RuntimeError(f"{source}: conversion from {_layout_word(input)} to {LAYOUT_WORDS[layout]} with dense_dim "
                           "argument given is not supported")
    if dense_dim:
        raise NotImplementedError("gradiente's conversions to compressed layouts take no dense_dim")
    if input.layout is layout and (layout not in BLOCK_LAYOUTS or blocksize is None
                                   or tuple(blocksize) == tuple(input._data.shape[1:3])):
        return input
    if input.layout in BLOCK_LAYOUTS and layout not in BLOCK_LAYOUTS:
        kind = "csr" if layout is sparse_csr else "csc"
        raise RuntimeError(f"sparse_compressed_to_sparse_{kind}: expected SparseCsr or SparseCsc layout but got "
                           f"{_layout_word(input)}")
    block = (1, 1)
    if layout in BLOCK_LAYOUTS:
        block = blocksize
        if input.dim() == 2 and (input.shape[0] % block[0] or input.shape[1] % block[1]):
            kind = "bsr" if layout is sparse_bsr else "bsc"
            source = "dense" if input.layout is strided else "sparse_compressed"
            raise RuntimeError(f"{source}_to_sparse_{kind}: tensor sparse size ({input.shape[0]},{input.shape[1]}) "
                               f"must be divisible by given blocksize ({block[0]},{block[1]})")
    return _convert(input, layout, block, node_cls)


def to_sparse_csr(input, dense_dim=None):
    """``input`` (dense, COO, CSR or CSC; a matrix) in CSR layout (ToSparseCsrBackward0; a CSR tensor: itself)."""
    return _to_compressed(input, sparse_csr, dense_dim=dense_dim)


def to_sparse_csc(input, dense_dim=None):
    """``input`` (dense, COO, CSR or CSC; a matrix) in CSC layout (ToSparseCscBackward0)."""
    return _to_compressed(input, sparse_csc, dense_dim=dense_dim)


def to_sparse_bsr(input, blocksize=None, dense_dim=None):
    """``input`` (a matrix) in BSR layout with (rows, cols) ``blocksize`` blocks: every block holding a nonzero (or
    a stored element) is stored whole (ToSparseBsrBackward0)."""
    return _to_compressed(input, sparse_bsr, _blocksize(blocksize, "to_sparse_bsr"), dense_dim)


def to_sparse_bsc(input, blocksize=None, dense_dim=None):
    """``input`` (a matrix) in BSC layout with (rows, cols) ``blocksize`` blocks (ToSparseBscBackward0)."""
    return _to_compressed(input, sparse_bsc, _blocksize(blocksize, "to_sparse_bsc"), dense_dim)


def to_sparse_coo(input):
    """``input`` in COO layout. A compressed tensor's stored elements keep their storage order, as in PyTorch: the
    result is coalesced for CSR only (CSC is column by column, BSR and BSC block by block)."""
    if not is_compressed(input):
        return sparse_coo.to_sparse(input)
    rows, cols = (np.broadcast_to(p, input._data.shape[:p.ndim]).reshape(-1) for p in element_positions(input))
    dense_shape = input._data.shape[1 + (2 if input.layout in BLOCK_LAYOUTS else 0):]
    values_array = input._data.reshape((rows.size,) + tuple(dense_shape))
    out = make_sparse(np.stack([rows, cols]), values_array, input._sparse_size, coalesced=input.layout is sparse_csr)
    if wants_grad(input):
        # the regathering rule with every element read from its own place
        record(ToSparseBackward1, (input,), out, pick=np.arange(rows.size), found=np.ones(rows.size, dtype=bool),
               n_in=rows.size, dense_shape=tuple(dense_shape), in_shape=input._data.shape,
               out_shape=values_array.shape)
    return out


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse``: COO by default (``sparse_dim``: COO's); ``layout=`` picks a compressed layout, with
    ``blocksize`` for BSR and BSC. PyTorch records ToSparseBackward1 for a dense input whatever the layout."""
    if layout is None or layout is sparse_coo_layout:
        if is_compressed(input):
            if sparse_dim is not None and sparse_dim != 2:
                raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {_layout_word(input)} to Sparse with "
                                   "sparse_dim argument !=2 is not supported")
            return to_sparse_coo(input)
        return sparse_coo.to_sparse(input, sparse_dim)
    if layout in BLOCK_LAYOUTS and blocksize is None:
        source = "dense_to_sparse" if input.layout is strided else "sparse_compressed_to_sparse"
        raise RuntimeError(f"{source}: conversion from {_layout_word(input)} to {LAYOUT_WORDS[layout]} without "
                           "blocksize argument given is not supported")
    node_cls = ToSparseBackward1 if input.layout is strided else None
    block = None if blocksize is None else _blocksize(blocksize, "to_sparse")
    return _to_compressed(input, layout, block, dense_dim, node_cls)


# --- products with a dense matrix: COO's product at each stored element's position ---------------------------------

def _coo_indices(input):
    """(rows, cols) of each stored element, as COO's product reads ``indices``."""
    return np.stack([np.asarray(p, dtype=np.int64) for p in element_positions(input)])


def _check_product(s, d, sparse_first=True):
    """PyTorch's checks of S @ D (or D @ S when not ``sparse_first``): the layouts, the shapes, then the dtypes,
    worded with the operands in the order written."""
    if s.layout in BLOCK_LAYOUTS or s._data.ndim != 1:
        raise NotImplementedError("gradiente multiplies CSR and CSC matrices (no blocks, no dense dims) by a dense "
                                  "matrix")
    if not isinstance(d, Tensor) or d.layout is not strided:
        raise RuntimeError(f"addmm: computation on CPU is not implemented for {_layout_word(s)} + {_layout_word(s)} @ "
                           f"{LAYOUT_WORDS.get(getattr(d, 'layout', None), 'Sparse')}")
    if d._data.ndim != 2:
        raise NotImplementedError("gradiente multiplies a compressed matrix by a dense matrix (2 dims) only")
    first, second = (s._sparse_size[:2], d._data.shape) if sparse_first else (d._data.shape, s._sparse_size[:2])
    if first[1] != second[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({first[0]}x{first[1]} and "
                           f"{second[0]}x{second[1]})")
    expected, found = (s._data.dtype, d._data.dtype) if sparse_first else (d._data.dtype, s._data.dtype)
    if expected != found:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(expected)} but found {dt.scalar_name(found)}")


def _product(node_cls, inputs, s, d, base=None, beta=0, alpha=1):
    _check_product(s, d)
    indices = _coo_indices(s)
    product = sparse_coo._spmm_array(indices, s._data, s._sparse_size[0], d._data)
    out_array = product if base is None else (beta * base._data + alpha * product).astype(product.dtype)
    out = Tensor._make(out_array)
    if wants_grad(*inputs):
        record(node_cls, inputs, out, (s, d), indices=indices, values=s._data, rows=s._sparse_size[0],
               saved_dense=(d._data,), dense_shape=d._data.shape, beta=beta, alpha=alpha)
    return out


def mm(input, mat2):
    """A compressed matrix (CSR or CSC) @ a dense matrix, or a dense one @ a compressed one: dense, differentiable
    in both (MmBackward0, as PyTorch names it); a COO ``input`` goes to COO's product."""
    if is_compressed(mat2) and not is_compressed(input):
        return dense_mm(input, mat2)
    if not is_compressed(input):
        return sparse_coo.sparse_dense_mm(input, mat2)
    return _product(sparse_coo.MmBackward0, (input, mat2), input, mat2)


class MmBackward0(Node):
    """out = D @ S for a dense D and a compressed S (S @ D records COO's MmBackward0);
    dD = grad @ Sᵀ;  dS[k] = Σᵢ D[i, row_k] · grad[i, col_k]"""
    __slots__ = ()
    formula = "∂(DS)/∂D = G·Sᵀ,  ∂(DS)/∂S = (Dᵀ·G) at S's entries"

    def backward(self, ops, grad):
        rows, cols = self.indices
        d, s_values = self.saved(ops)
        if ops.recording:
            s_values = sparse_coo._entry_values(s_values)
        d_edge, s_edge = (edge[0] is not None for edge in self.next_functions)
        grad_columns = ops.getitem(ops.transpose(grad, 0, 1), (cols,))           # grad[:, col_k], one row per k
        grad_d = None
        if d_edge:      # (S @ gradᵀ)ᵀ: each entry adds S_k · grad[:, col_k] into column row_k
            grad_d = ops.transpose(ops.embed(ops.unsqueeze(s_values, 1) * grad_columns, self.transposed_shape,
                                             (rows,)), 0, 1)
        grad_s = ops.sum(ops.getitem(ops.transpose(d, 0, 1), (rows,)) * grad_columns, 1) if s_edge else None
        return grad_d, grad_s

    def jvp(self, ops, d_t, s_t):
        rows, cols = self.indices
        out = None
        for tangent, values_array, dense in ((d_t, self.values, d_t), (s_t, s_t, self.saved_dense[0])):
            if tangent is not None:
                part = sparse_coo._spmm_array(np.stack([cols, rows]), values_array, self.columns, dense.T).T
                out = part if out is None else out + part
        return out


def dense_mm(input, mat2):
    """A dense matrix @ a compressed one (CSR or CSC): dense, differentiable in both (MmBackward0)."""
    _check_product(mat2, input, sparse_first=False)
    indices = _coo_indices(mat2)
    product = sparse_coo._spmm_array(indices[::-1], mat2._data, mat2._sparse_size[1], input._data.T).T
    out = Tensor._make(np.ascontiguousarray(product))
    if wants_grad(input, mat2):
        record(MmBackward0, (input, mat2), out, (input, mat2), indices=indices, values=mat2._data,
               columns=mat2._sparse_size[1], saved_dense=(input._data,),
               transposed_shape=(input._data.shape[1], input._data.shape[0]))
    return out


class AddmmBackward0(sparse_coo.SparseAddmmBackward0):
    """``torch.addmm(M, S, D)`` with a compressed S: beta·M + alpha·(S @ D), recorded under PyTorch's dense name;
    the rule is COO's sparse addmm's"""
    __slots__ = ()


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``torch.addmm`` with a compressed ``mat1``: beta · input + alpha · (mat1 @ mat2), dense (AddmmBackward0)."""
    return _product(AddmmBackward0, (input, mat1, mat2), mat1, mat2, input, beta, alpha)


def sparse_addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``torch.sparse.addmm`` for a COO or compressed ``mat1`` (SparseAddmmBackward0)."""
    if not is_compressed(mat1):
        return sparse_coo.sparse_addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    return _product(sparse_coo.SparseAddmmBackward0, (input, mat1, mat2), mat1, mat2, input, beta, alpha)


def sparse_mm(mat1, mat2):
    """``torch.sparse.mm`` for a COO or compressed ``mat1``: addmm onto zeros with beta 0, as PyTorch records it."""
    if not is_compressed(mat1):
        return sparse_coo.sparse_mm(mat1, mat2)
    _check_product(mat1, mat2)
    zeros = Tensor._make(np.zeros((mat1._sparse_size[0], mat2._data.shape[1]), dtype=mat2._data.dtype))
    return sparse_addmm(zeros, mat1, mat2, beta=0)


# --- sums, division, transposes (scaling and casting are COO's ops, through ``_with_values``) -----------------------

class SumBackward1(Node):
    """``sum(dim, keepdim=True)`` of a CSR matrix, recorded under PyTorch's name. PyTorch 2.13 cannot run this node
    backward (its rule expands a compressed gradient), so neither does gradiente: the same error."""
    __slots__ = ()

    def backward(self, ops, grad):
        raise RuntimeError("expand is unsupported for SparseCsr tensors")


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum of every stored value, a dense scalar (SumBackward0); over ``dim`` (an int or a tuple) of a CSR
    matrix with ``keepdim=True``, a CSR matrix holding the sums of the rows or columns that store something
    (SumBackward1). PyTorch's refusals otherwise: other layouts, keepdim=False."""
    if dim is None:
        return reductions.sum(input, dtype=dtype)
    if input.layout is not sparse_csr:
        raise RuntimeError("Currently the only compressed sparse format supported for sum.dim_IntList is CSR, but got "
                           f"layout {LAYOUT_WORDS[input.layout]}")
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    if input._data.ndim != 1 or len(input._sparse_size) != 2:
        raise NotImplementedError("gradiente sums a CSR tensor over a dim only when it is a matrix without batch or "
                                  "dense dims")
    dims = {_wrap_dim(d, 2) for d in ((dim,) if isinstance(dim, int) else dim)}
    values = input._data if dtype is None else input._data.astype(dtype._np)
    rows, cols = _coo_indices(input)
    n_rows, n_cols = input._sparse_size
    if dims == {0, 1}:
        crow, col, summed = np.array([0, int(values.size > 0)]), np.zeros(int(values.size > 0), np.int64), \
            values.sum(keepdims=True)[:int(values.size > 0)]
        size = (1, 1)
    else:
        kept = cols if dims == {0} else rows
        present, slot = np.unique(kept, return_inverse=True)
        summed = np.zeros(present.size, dtype=values.dtype)
        np.add.at(summed, slot.reshape(-1), values)
        if dims == {0}:
            crow, col, size = np.array([0, present.size]), present, (1, n_cols)
        else:
            has_entry = np.zeros(n_rows, dtype=np.int64)
            has_entry[present] = 1
            crow, col, size = np.concatenate([[0], np.cumsum(has_entry)]), np.zeros(present.size, np.int64), \
                (n_rows, 1)
    index_dtype = input._compressed_indices.dtype
    out = make_compressed(crow.astype(index_dtype), col.astype(index_dtype), summed, size, sparse_csr)
    if wants_grad(input):
        record(SumBackward1, (input,), out)
    return out


class TBackward0(Node):
    """out = the transposed matrix: the same arrays read in the other layout (blocks transposed each);
    dx = grad (each block transposed back)"""
    __slots__ = ()
    complex_ok = True
    formula = "∂out[k]/∂x[k] = 1 (the block's transpose for BSR/BSC)"

    def backward(self, ops, grad):
        return (ops.transpose(grad, 1, 2) if self.blocked else grad,)

    def jvp(self, ops, x_t):
        return x_t.swapaxes(1, 2) if self.blocked else x_t


class TransposeBackward0(TBackward0):
    """``transpose(0, 1)``'s node: the same rule as ``t()``'s"""
    __slots__ = ()


_TRANSPOSED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc, sparse_bsc: sparse_bsr}


def _transposed(input, node_cls):
    blocked = input.layout in BLOCK_LAYOUTS
    if blocked and input._data.ndim != 3:
        raise NotImplementedError("gradiente transposes BSR and BSC tensors without dense dims only")
    values_array = input._data.swapaxes(1, 2) if blocked else input._data
    size = (input._sparse_size[1], input._sparse_size[0]) + input._sparse_size[2:]
    out = make_compressed(input._compressed_indices, input._plain_indices, values_array, size,
                          _TRANSPOSED[input.layout])
    if wants_grad(input):
        record(node_cls, (input,), out, blocked=blocked)
    return out


def t(input):
    """The transposed matrix: CSR becomes CSC over the same arrays (BSR: BSC, each block transposed) (TBackward0)."""
    return _transposed(input, TBackward0)


def transpose(input, dim0, dim1):
    """``transpose`` of the two matrix dims (TransposeBackward0); swapping a dim with itself returns ``input``."""
    dim0, dim1 = _wrap_dim(dim0, input.dim()), _wrap_dim(dim1, input.dim())
    if dim0 == dim1:
        return input
    if {dim0, dim1} != {0, 1}:
        raise NotImplementedError("gradiente transposes only the two matrix dims of a compressed tensor")
    return _transposed(input, TransposeBackward0)


__all__ = ["sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
           "sparse_bsc_tensor", "crow_indices_copy", "col_indices_copy", "ccol_indices_copy", "row_indices_copy"]
