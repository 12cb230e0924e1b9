"""The sparse COO tensor: a Tensor of layout ``sparse_coo`` that keeps index and value arrays, never a dense one.

Data model. A ``SparseCooTensor`` is a ``Tensor`` whose ``_data`` is its *values* array, of shape
``(nnz, *dense_shape)``, beside ``_sparse_indices``, an int64 array of shape ``(sparse_dim, nnz)``, and
``_sparse_size``, the full shape. Keeping the values in ``_data`` is what lets autograd run unchanged: the engine
records each input's shape from ``_data``, so the gradient that flows to a sparse tensor is an array of one value
per stored entry (the gradient at that entry's position), summed where paths meet like any other gradient. A sparse
leaf's ``.grad`` wraps that array with the leaf's indices, so it is sparse COO, as in PyTorch.

Dense-only methods refuse a sparse tensor with PyTorch's "Could not run 'aten::...' with arguments from the
'SparseCPU' backend" error (``__getattribute__`` below; only sparse tensors pay for it). Torch-level functions and
the dense class's methods check their arguments for a sparse tensor (gradiente/sparse_dispatch.py, issue 13).
"""
import numpy as np

from . import dtype as dt
from . import printing
from .layouts import sparse_coo
from .size import Size
from .tensor import Tensor

__all__ = ["SparseLayoutTensor", "SparseCooTensor", "make_sparse", "not_on_sparse", "SPARSE_METHODS",
           "sparse_rows_view"]

#: the Tensor methods and properties that mean something for a sparse COO tensor; any other public one refuses it
#: (a set: tensor_methods adds the names it binds for the sparse check, gradiente/sparse_dispatch.py)
SPARSE_METHODS = set({
    "to_dense", "to_sparse", "to_sparse_coo", "coalesce", "is_coalesced", "indices", "values", "sparse_dim",
    "dense_dim",
    "mm", "matmul", "sum", "requires_grad_", "requires_grad", "backward", "register_hook",
    "retain_grad", "retains_grad", "is_leaf", "grad", "grad_fn", "dtype", "device", "shape", "size", "dim",
    "ndim", "numel", "layout", "is_sparse", "data", "detach", "is_cpu", "is_cuda", "is_meta", "is_quantized",
    "is_floating_point", "is_complex", "get_device", "cpu", "name", "output_nr", "sparse_mask", "t", "transpose",
    "to", "double", "float", "smm", "sspaddmm", "permute", "movedim", "moveaxis", "swapaxes", "swapdims", "unsqueeze",
    "index_select", "select", "unbind",
    # conversions to and reads of the compressed layouts, which refuse a COO tensor in PyTorch's words (issue 16)
    "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc", "crow_indices",
    "col_indices", "ccol_indices", "row_indices", "is_sparse_csr", "sparse_resize_", "sparse_resize_and_clear_",
    "resize_as_sparse_",
})


def not_on_sparse(op_name, backend="SparseCPU"):
    """PyTorch's error for an op that has no sparse COO kernel (its first two sentences; PyTorch goes on to list
    the backends that do have one, which differ per op)."""
    return NotImplementedError(
        f"Could not run 'aten::{op_name}' with arguments from the '{backend}' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        "https://fburl.com/ptmfixes for possible resolutions.")


class SparseLayoutTensor(Tensor):
    """What the sparse layouts share (COO here, the compressed ones in ``core/sparse_compressed.py``): ``_data`` holds
    the values only, so the shape is ``_sparse_size``; ``_with_values`` makes the same pattern with other values,
    which serves ``detach``, ``.data`` and every op that changes the values alone (scaling, casting)."""
    __slots__ = ("_sparse_size",)
    _sparse_size: tuple

    def _with_values(self, values):
        raise NotImplementedError

    # --- shape: the full, logical shape (``_data`` holds only the values) ---------------------------------
    @property
    def shape(self):
        return Size(self._sparse_size)

    def size(self, dim=None):
        if dim is None:
            return Size(self._sparse_size)
        return self._sparse_size[dim]

    def dim(self):
        return len(self._sparse_size)

    ndim = property(dim)

    def numel(self):
        return int(np.prod(self._sparse_size, dtype=np.int64))

    def __len__(self):
        return self._sparse_size[0]

    @property
    def data(self):
        """The same indices and values, outside the graph."""
        return self._with_values(self._data)

    @data.setter
    def data(self, value):
        raise NotImplementedError("gradiente does not replace the data of a sparse tensor")

    def detach(self):
        """A sparse tensor with the same indices and values (sharing memory), outside the graph."""
        return self._with_values(self._data)


class SparseCooTensor(SparseLayoutTensor):
    """A sparse tensor in coordinate format: ``indices`` (sparse_dim × nnz, int64) and ``values``
    (nnz × dense dims). Made by ``torch.sparse_coo_tensor`` and ``Tensor.to_sparse``; see the module's docstring."""
    __slots__ = ("_sparse_indices", "_coalesced")
    __module__ = "gradiente"

    layout = sparse_coo
    is_sparse = True
    _sparse_allowed = SPARSE_METHODS

    def __getattribute__(self, name):
        if name[0] != "_" and name not in SPARSE_METHODS:
            value = object.__getattribute__(self, name)
            if callable(value) or name in ("T", "mT", "H", "mH", "real", "imag"):
                raise not_on_sparse(name)
            return value
        return object.__getattribute__(self, name)

    def _with_values(self, values):
        return make_sparse(self._sparse_indices, values, self._sparse_size, self._coalesced)

    # --- autograd: the gradient is stored as one value per entry, shown as a sparse tensor ----------------
    @property
    def grad(self):
        """The accumulated gradient, a sparse COO tensor with this tensor's distinct indices, sorted (as
        PyTorch's). Every rule gives each stored entry the gradient at its position, so duplicates hold equal
        values and the first of each stands for its position."""
        values = self._grad
        if values is None:
            return None
        indices = self._sparse_indices
        if self._coalesced or indices.shape[1] == 0:
            return make_sparse(indices, values._data, self._sparse_size, self._coalesced)
        positions = np.ravel_multi_index(tuple(indices), self._sparse_size[:indices.shape[0]])
        _, first = np.unique(positions, return_index=True)
        return make_sparse(indices[:, first], values._data[first], self._sparse_size, False)

    @grad.setter
    def grad(self, value):
        if value is not None and not (isinstance(value, SparseCooTensor) and value._data.shape == self._data.shape):
            raise NotImplementedError("gradiente assigns to a sparse tensor's .grad only None or a sparse tensor "
                                      "with its own pattern")
        self._grad = None if value is None else Tensor._make(value._data)

    @grad.deleter
    def grad(self):
        self._grad = None

    # --- Python's operators, which bypass __getattribute__ (+, -, *, ** ... are bound by tensor_methods, through
    # the sparse check, gradiente/sparse_dispatch.py) -------------------------------------------------------------
    def __getitem__(self, index):
        raise not_on_sparse("index")

    def __setitem__(self, index, value):
        raise not_on_sparse("index_put_")

    def __repr__(self):
        return sparse_repr(self)

    __str__ = __repr__


def make_sparse(indices, values, size, coalesced=False, requires_grad=False):
    """Wrap an int64 ``indices`` array (sparse_dim × nnz) and a ``values`` array (nnz × dense dims) of a tensor
    of shape ``size``, without copying (internal: the ops check their arguments first)."""
    t = SparseCooTensor._make(values, requires_grad)
    t._sparse_indices = indices
    t._sparse_size = tuple(int(n) for n in size)
    t._coalesced = bool(coalesced)
    return t


def sparse_rows_view(grad, rows):
    """The dense gradient ``grad`` of an embedding weight as the sparse COO tensor PyTorch gives: the looked-up
    ``rows`` (sorted, distinct) with their gradient rows. An intended difference: PyTorch stores one entry per
    lookup, uncoalesced; gradiente stores each looked-up row once (the same tensor, coalesced)."""
    array = grad._data
    return make_sparse(rows[None, :], array[rows], array.shape, coalesced=True)


# --- printing ------------------------------------------------------------------------------------------------

def sparse_repr(t):
    """``repr`` of a sparse COO tensor as PyTorch writes it: indices, values, then size, nnz, dtype and layout on
    lines of their own, and the autograd suffix."""
    indent = len("tensor(")
    indices, values = t._sparse_indices, t._data
    indices_prefix, values_prefix = "indices=tensor(", "values=tensor("
    indices_text = printing._tensor_str(indices, indent + len(indices_prefix))
    if indices.size == 0:
        indices_text += f", size={tuple(indices.shape)}"
    values_text = printing._tensor_str(values, indent + len(values_prefix))
    if values.size == 0:
        values_text += f", size={tuple(values.shape)}"
    text = (f"tensor({indices_prefix}{indices_text}),\n" + " " * indent + f"{values_prefix}{values_text})")
    suffixes = [f"size={tuple(t._sparse_size)}", f"nnz={values.shape[0]}"]
    dtype, default = t.dtype, dt.get_default_dtype()
    if dtype not in (default, dt.complex128 if default is dt.float64 else dt.complex64, dt.int64, dt.bool):
        suffixes.append(f"dtype={dtype!r}")
    suffixes.append("layout=torch.sparse_coo")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    # PyTorch puts the first suffix on a line of its own, then wraps the rest as for a dense tensor
    first, rest = suffixes[0], suffixes[1:]
    return printing._add_suffixes(text + ",\n" + " " * indent + first, rest, indent, last_line_len=indent + len(first))
