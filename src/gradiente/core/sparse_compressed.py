"""Compressed sparse tensors (CSR, CSC, BSR, BSC): a Tensor that keeps compressed indices, plain indices and values.

Data model. A ``SparseCompressedTensor`` is a ``Tensor`` whose ``_data`` is its *values* array, as for a sparse COO
tensor (``core/sparse_tensor.py``): ``(nnz,)`` plus dense dims for CSR and CSC, ``(nnz, blockrows, blockcols)`` plus
dense dims for BSR and BSC. Beside it: ``_compressed_indices`` (``crow_indices`` for the row layouts, ``ccol_indices``
for the column ones; one more entry than there are rows, or row blocks, or columns ...), ``_plain_indices``
(``col_indices`` / ``row_indices``, one per stored entry), ``_sparse_size`` (the full shape) and ``layout`` (an
instance attribute). Values in ``_data`` let autograd run unchanged, as for COO: the gradient that reaches a
compressed tensor is one value per stored element, and a compressed leaf's ``.grad`` wraps it with the leaf's
indices. An intended difference: PyTorch 2.13 gives a CSR leaf a dense gradient through ``mm`` and ``sum`` (and a
CSR one through ``to_dense`` and ``values``); gradiente's is always in the leaf's layout, with PyTorch's values at
the stored positions.

gradiente's compressed tensors are matrices (2 sparse dims) with optional trailing dense dims; PyTorch's leading batch
dims are not supported. Index arrays keep the integer dtype they were given (int32 or int64), as in PyTorch.
"""
import numpy as np

from . import dtype as dt
from . import printing
from .layouts import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .sparse_tensor import SparseLayoutTensor, not_on_sparse
from .tensor import Tensor

__all__ = ["SparseCompressedTensor", "make_compressed", "COMPRESSED_LAYOUTS", "ROW_LAYOUTS", "BLOCK_LAYOUTS",
           "LAYOUT_WORDS", "is_compressed", "element_positions", "compressed_repr"]

COMPRESSED_LAYOUTS = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
#: the layouts that compress rows (crow_indices / col_indices); the others compress columns
ROW_LAYOUTS = (sparse_csr, sparse_bsr)
BLOCK_LAYOUTS = (sparse_bsr, sparse_bsc)
#: how PyTorch's messages name each layout ("... but got SparseCsr")
LAYOUT_WORDS = {strided: "Strided", sparse_coo: "Sparse", sparse_csr: "SparseCsr", sparse_csc: "SparseCsc",
                sparse_bsr: "SparseBsr", sparse_bsc: "SparseBsc"}

#: the Tensor methods and properties that mean something for a compressed tensor; any other public one refuses it
#: (a set: tensor_methods adds the names it binds for the sparse check, gradiente/sparse_dispatch.py)
COMPRESSED_METHODS = set({
    "to_dense", "to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc",
    "crow_indices", "col_indices", "ccol_indices", "row_indices", "values", "sparse_dim", "dense_dim", "mm",
    "matmul", "sum", "t", "transpose", "requires_grad_",
    "requires_grad", "backward", "register_hook", "retain_grad", "retains_grad", "is_leaf", "grad", "grad_fn",
    "dtype", "device", "shape", "size", "dim", "ndim", "numel", "layout", "is_sparse", "is_sparse_csr", "data",
    "detach", "is_cpu", "is_cuda", "is_meta", "is_quantized", "is_floating_point", "is_complex", "get_device", "cpu",
    "name", "output_nr", "is_coalesced", "coalesce", "indices", "to", "double", "float", "numpy",
})


def is_compressed(t):
    """Whether ``t`` has one of the four compressed layouts."""
    return isinstance(t, SparseCompressedTensor)


class SparseCompressedTensor(SparseLayoutTensor):
    """A sparse matrix in a compressed layout (``torch.sparse_csr``, ``sparse_csc``, ``sparse_bsr``, ``sparse_bsc``):
    compressed indices, plain indices and values. Made by ``torch.sparse_csr_tensor`` and its siblings and by
    ``Tensor.to_sparse_csr`` and its siblings; see the module's docstring."""
    # (``layout`` is set on each instance, over Tensor's class attribute ``strided``: one class serves four layouts)
    __slots__ = ("_compressed_indices", "_plain_indices")
    __module__ = "gradiente"

    is_sparse = False
    _sparse_allowed = COMPRESSED_METHODS

    def __getattribute__(self, name):
        if name[0] != "_" and name not in COMPRESSED_METHODS:
            value = object.__getattribute__(self, name)
            if callable(value) or name in ("T", "mT", "H", "mH", "real", "imag"):
                # PyTorch's words for most ops without a compressed kernel (exp, div, pow ...)
                raise RuntimeError(f"unsupported tensor layout: {LAYOUT_WORDS[self.layout]}")
            return value
        return object.__getattribute__(self, name)

    @property
    def is_sparse_csr(self):
        """True for the CSR layout only (PyTorch's answer for CSC, BSR and BSC is False too)."""
        return self.layout is sparse_csr

    def _with_values(self, values):
        return make_compressed(self._compressed_indices, self._plain_indices, values, self._sparse_size, self.layout)

    # --- autograd: the gradient is stored as one value per stored element, shown in this tensor's layout ------
    @property
    def grad(self):
        """The accumulated gradient, in this tensor's layout and with its indices (as PyTorch's)."""
        values = self._grad
        if values is None:
            return None
        return self._with_values(values._data)

    @grad.setter
    def grad(self, value):
        if value is not None and not (isinstance(value, SparseCompressedTensor)
                                      and value._data.shape == self._data.shape):
            raise NotImplementedError("gradiente assigns to a compressed sparse tensor's .grad only None or a "
                                      "tensor with its own pattern")
        self._grad = None if value is None else Tensor._make(value._data)

    @grad.deleter
    def grad(self):
        self._grad = None

    # --- Python's operators, which bypass __getattribute__ --------------------------------------------------
    def __getitem__(self, index):
        raise not_on_sparse("index", backend="SparseCsrCPU")

    def __setitem__(self, index, value):
        raise not_on_sparse("index_put_", backend="SparseCsrCPU")

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {LAYOUT_WORDS[self.layout]} layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def __repr__(self):
        return compressed_repr(self)

    __str__ = __repr__


def make_compressed(compressed_indices, plain_indices, values, size, layout, requires_grad=False):
    """Wrap the three arrays of a compressed tensor of shape ``size`` and ``layout``, without copying (internal: the
    ops check their arguments first)."""
    t = SparseCompressedTensor._make(values, requires_grad)
    t._compressed_indices = compressed_indices
    t._plain_indices = plain_indices
    t._sparse_size = tuple(int(n) for n in size)
    t.layout = layout
    return t


def blocksize(t):
    """The (rows, columns) of one stored block: (1, 1) for CSR and CSC."""
    return tuple(t._data.shape[1:3]) if t.layout in BLOCK_LAYOUTS else (1, 1)


def element_positions(t):
    """(rows, cols): the matrix position of every stored element, as integer arrays that broadcast to the values'
    leading shape, ``(nnz,)`` or ``(nnz, blockrows, blockcols)``. This is the bridge to the COO machinery: indexing a
    dense array with them reads the stored elements in storage order, ``np.add.at`` writes them."""
    compressed, plain = t._compressed_indices.astype(np.int64), t._plain_indices.astype(np.int64)
    expanded = np.repeat(np.arange(compressed.size - 1), np.diff(compressed))
    rows, cols = (expanded, plain) if t.layout in ROW_LAYOUTS else (plain, expanded)
    if t.layout not in BLOCK_LAYOUTS:
        return rows, cols
    block_rows, block_cols = blocksize(t)
    return (rows[:, None, None] * block_rows + np.arange(block_rows)[None, :, None],
            cols[:, None, None] * block_cols + np.arange(block_cols)[None, None, :])


# --- printing ------------------------------------------------------------------------------------------------

def compressed_repr(t):
    """``repr`` of a compressed tensor as PyTorch writes it: compressed indices, plain indices and values on lines of
    their own, then size, nnz, dtype, layout and the autograd suffix, wrapped as for a dense tensor."""
    indent = len("tensor(")
    row_major = t.layout in ROW_LAYOUTS
    parts = (("crow_indices" if row_major else "ccol_indices", t._compressed_indices),
             ("col_indices" if row_major else "row_indices", t._plain_indices),
             ("values", t._data))
    texts = []
    for name, array in parts:
        prefix = f"{name}=tensor("
        body = printing._tensor_str(array, indent + len(prefix))
        if array.size == 0:
            body += f", size={tuple(array.shape)}"
        texts.append(f"{prefix}{body})")
    text = "tensor(" + (",\n" + " " * indent).join(texts)
    suffixes = [f"size={tuple(t._sparse_size)}", f"nnz={t._plain_indices.shape[-1]}"]
    dtype, default = t.dtype, dt.get_default_dtype()
    if dtype not in (default, dt.complex128 if default is dt.float64 else dt.complex64, dt.int64, dt.bool):
        suffixes.append(f"dtype={dtype!r}")
    suffixes.append(f"layout={t.layout!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return printing._add_suffixes(text, suffixes, indent)
