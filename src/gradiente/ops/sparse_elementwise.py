"""Elementwise math on sparse tensors (COO and CSR): the functions that keep zeros at zero, scaling by a number, and
sums and products of two tensors of which at least one is sparse.

A function f with f(0) = 0 (sin, sqrt, relu, isnan ...) changes the stored values only, so its sparse result is the
input's pattern with f of the values (``on_values``). Because a sparse tensor's ``_data`` is its values array, the
dense op runs on the sparse tensor as it is and records its own node (``SinBackward0``, PyTorch's name too) with an
edge to the sparse tensor, whose gradient is then one value per stored entry, the sparse convention
(``core/sparse_tensor.py``); the result is re-wrapped in the input's pattern. A function that is not linear needs
each position's total first, so an uncoalesced COO input is coalesced before it, as PyTorch does.

Sums and products of two tensors work on *entries*: each tensor as (the linear position of every stored element,
a dense values tensor whose gradient flows back to it). Their last step is the dense ``add`` or ``mul`` of values
gathered at the result's positions, so the result's node has PyTorch's name.

Which names run here, on which layouts, is decided by the tables below; everything else refuses a sparse tensor
with PyTorch's error (``sparse_dispatch.py`` on the API floor applies both, to every torch-level function and
Tensor method).
"""
import numpy as np

from ..core.layouts import sparse_coo as coo_layout
from ..core.sparse_compressed import ROW_LAYOUTS, element_positions, is_compressed, make_compressed
from ..core.sparse_tensor import SparseLayoutTensor, make_sparse
from ..core.tensor import Tensor
from .arithmetic import add as dense_add
from .arithmetic import mul as dense_mul
from .arithmetic import sub as dense_sub

__all__ = []        # reached through the API floor's dispatch (sparse_dispatch.py), never by name

# --- which functions run on the values ------------------------------------------------------------------------

#: f(0) = 0 and PyTorch has a kernel for a COO and for a compressed input: the result has the input's pattern
_ON_BOTH = ("abs", "absolute", "asin", "arcsin", "asinh", "arcsinh", "atan", "arctan", "atanh", "arctanh", "ceil",
            "conj_physical", "deg2rad", "erf", "erfinv", "expm1", "fix", "floor", "frac", "isinf", "isnan",
            "isneginf", "isposinf", "log1p", "neg", "negative", "positive", "rad2deg", "relu", "round", "sgn",
            "sign", "signbit", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "__neg__", "__abs__")
#: the same, in place (the predicates and ``positive`` have no in-place form)
_NO_IN_PLACE_FORM = ("isinf", "isnan", "isneginf", "isposinf", "signbit", "positive")
_IN_PLACE_ON_BOTH = tuple(name + "_" for name in _ON_BOTH
                          if not name.startswith("__") and name not in _NO_IN_PLACE_FORM)
#: copies and zeros of the values, which keep the pattern too
_COPIES = ("clone", "zero_", "zeros_like")
VALUEWISE = {
    "coo": frozenset(_ON_BOTH + _IN_PLACE_ON_BOTH + _COPIES + ("square", "nan_to_num", "nan_to_num_", "tanhshrink")),
    "compressed": frozenset(_ON_BOTH + _IN_PLACE_ON_BOTH + _COPIES + ("angle",)),
}
#: the functions linear in the values: an uncoalesced COO input need not be coalesced first
LINEAR = frozenset({"clone", "zero_", "zeros_like", "__neg__", "neg", "negative", "neg_", "negative_", "positive",
                    "conj_physical", "conj_physical_",
                    "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "mul", "multiply", "div", "divide", "true_divide",
                    "mul_", "multiply_", "div_", "divide_", "true_divide_", "__mul__", "__rmul__", "__truediv__",
                    "__imul__", "__itruediv__"})
#: (function, a number or a 0-dim dense tensor): the values with that number, on these layouts
WITH_A_NUMBER = {
    "coo": frozenset({"mul", "multiply", "mul_", "multiply_", "__mul__", "__rmul__", "__imul__", "div", "divide",
                      "true_divide", "div_", "divide_", "true_divide_", "__truediv__", "__itruediv__", "floor_divide",
                      "floor_divide_", "__floordiv__", "pow", "__pow__", "float_power"}),
    "compressed": frozenset({"mul", "multiply", "mul_", "multiply_", "__mul__", "__rmul__", "__imul__"}),
}


def _coo():
    """``ops/sparse_coo.py``, imported when a sparse tensor first reaches this module: ``import gradiente`` loads the
    tables below (``sparse_dispatch.py`` binds the sparse classes' methods from them), not the sparse kernels."""
    from . import sparse_coo
    return sparse_coo


def layout_key(t):
    """The tables' key for ``t``'s layout: 'coo', or 'compressed' for CSR, CSC, BSR and BSC (whose values PyTorch
    maps alike)."""
    return "coo" if t.layout is coo_layout else "compressed"


def is_sparse_tensor(value):
    """Whether ``value`` is a tensor of a sparse layout."""
    return isinstance(value, SparseLayoutTensor)


def is_number(value):
    """A Python number, or a dense tensor of one element with no dims (PyTorch's "scalar" divisor)."""
    if isinstance(value, (bool, int, float, complex)):
        return True
    return isinstance(value, Tensor) and not is_sparse_tensor(value) and value._data.ndim == 0


# --- f of the values ------------------------------------------------------------------------------------------

def rewrap(pattern, out):
    """``out``, a dense tensor of values with a node of its own, as a sparse tensor with ``pattern``'s indices."""
    return _coo().adopt_node(pattern._with_values(out._data), out)


def on_values(fn, name, input, args, kwargs):
    """``fn(input, *args, **kwargs)`` for a dense ``fn`` with f(0) = 0, computed on the stored values of a sparse
    ``input`` and returned in its pattern (coalesced first when ``fn`` is not linear and ``input`` is COO)."""
    source = input
    if input.layout is coo_layout and not input._coalesced and name not in LINEAR:
        source = _coo().coalesce(input)
    return rewrap(source, fn(source, *args, **kwargs))


def on_values_(fn, name, input, args, kwargs):
    """The in-place form: ``fn`` changes the stored values of ``input``, which comes back (an uncoalesced COO input
    is refused, as PyTorch does, where ``fn`` is not linear)."""
    if input.layout is coo_layout and not input._coalesced and name not in LINEAR:
        raise RuntimeError(f"{name} requires coalesced input")
    fn(input, *args, **kwargs)
    return input


# --- sums and products: tensors as entries ---------------------------------------------------------------------

def _entries(t):
    """(sorted distinct linear positions, the values tensor at them) of a sparse tensor (coalesced first) or of a
    dense one (every element stored)."""
    if not is_sparse_tensor(t):
        return np.arange(t._data.size, dtype=np.int64), t.reshape(-1)
    if is_compressed(t):
        rows, cols = element_positions(t)
        positions = rows * t._sparse_size[1] + cols
        order = np.argsort(positions, kind="stable")
        values = _coo()._entry_values(t)
        return positions[order], values[Tensor._make(order)]
    t = _coo().coalesce(t)
    k = t._sparse_indices.shape[0]
    positions = _coo()._linear_index(t._sparse_indices, t._sparse_size[:k])
    return positions, _coo()._entry_values(t)


def _scatter(values, at, count):
    """A values tensor of ``count`` entries holding ``values`` at entries ``at`` and zeros elsewhere."""
    zeros = Tensor._make(np.zeros((count,) + tuple(values.shape[1:]), dtype=values._data.dtype))
    return zeros.index_add(0, Tensor._make(at), values)


def _from_entries(like, positions, values):
    """The sparse tensor of ``like``'s layout and shape holding ``values`` (a dense tensor, with its node) at the
    sorted distinct linear ``positions``."""
    size = like._sparse_size
    if like.layout is coo_layout:
        k = like._sparse_indices.shape[0]
        indices = np.stack(np.unravel_index(positions, size[:k])).astype(np.int64).reshape(k, -1)
        return _coo().adopt_node(make_sparse(indices, values._data, size, coalesced=True), values)
    rows, cols = np.divmod(positions, size[1])
    compressed_rows = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=size[0])))).astype(
        like._compressed_indices.dtype)
    if like.layout not in ROW_LAYOUTS:
        raise NotImplementedError("gradiente adds and multiplies sparse tensors of the COO and CSR layouts")
    pattern = make_compressed(compressed_rows, cols.astype(like._plain_indices.dtype), values._data, size, like.layout)
    return rewrap(pattern, values)


def _check_sizes(x, y, name):
    if tuple(x.shape) != tuple(y.shape):
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(x.shape)} while other has size {list(y.shape)} (FYI: op2-sparse feature is "
                           "experimental)")


def sparse_add(input, other, alpha=1, subtract=False):
    """``input + alpha * other`` (``-`` with ``subtract``) for two sparse tensors of one layout: the union of their
    patterns, coalesced."""
    _check_sizes(input, other, "add")
    (pa, va), (pb, vb) = _entries(input), _entries(other)
    positions = np.union1d(pa, pb)
    a_part = _scatter(va, np.searchsorted(positions, pa), positions.size)
    b_part = _scatter(vb, np.searchsorted(positions, pb), positions.size)
    combine = dense_sub if subtract else dense_add
    return _from_entries(input, positions, combine(a_part, b_part, alpha=alpha))


def sparse_mul(input, other):
    """``input * other`` where either is sparse (the other sparse of the same layout, or dense of the same shape):
    the product at the positions both store, in the sparse operand's layout. An intended difference: a dense leaf
    multiplied so gets a dense ``.grad`` (zeros off the pattern), where PyTorch accumulates a sparse one."""
    like = input if is_sparse_tensor(input) else other
    if tuple(input.shape) != tuple(other.shape):
        if not is_sparse_tensor(input) or not is_sparse_tensor(other):
            raise RuntimeError(f"mul(sparse, dense): expected the shapes to match, got {list(input.shape)} and "
                               f"{list(other.shape)}")
        _check_sizes(input, other, "mul")
    (pa, va), (pb, vb) = _entries(input), _entries(other)
    positions, at_a, at_b = np.intersect1d(pa, pb, assume_unique=True, return_indices=True)
    product = dense_mul(va[Tensor._make(at_a)], vb[Tensor._make(at_b)])
    return _from_entries(like, positions, product)


def dense_plus_sparse(input, other, alpha=1, subtract=False):
    """``input + alpha * other`` (``-`` with ``subtract``) for a dense ``input`` and a sparse ``other``: a dense
    tensor."""
    return (dense_sub if subtract else dense_add)(input, other.to_dense(), alpha=alpha)
