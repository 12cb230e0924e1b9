"""Meta tensors: a shape and a dtype, and no values.

PyTorch's ``"meta"`` device makes tensors that have a shape and a dtype and nothing else, so a program can
ask what shape a model's output will have, or build a model too large for memory and load its weights
later (``with torch.device("meta"): model = Net()``, then ``load_state_dict(..., assign=True)`` or
``to_empty``).

gradiente's ops are written for NumPy arrays, so a meta tensor holds a ``MetaArray``: a NumPy array of the
right shape and dtype whose elements all share one zero (``np.broadcast_to`` of a 0-d array), which takes
no memory at any size. NumPy hands every ufunc and function applied to a ``MetaArray`` back to this class
(its ``__array_ufunc__`` and ``__array_function__`` overrides), and the class works out only the result's
shape and dtype. So every op runs unchanged on meta tensors, records the graph it records on the CPU, and
costs next to nothing even on a 1024×3×65536×65536 input:

* a ufunc (``+``, ``exp``, ``@``, a reduction such as ``sum``) broadcasts or reduces the shapes, and takes
  its result's dtype from running it on one-element stand-ins, so NumPy's type rules decide as they do on
  real arrays;
* a view (a slice, ``reshape``, ``transpose``) is made by NumPy itself on the shared zero, without copying;
* a few functions have a shape rule here (``concatenate``, ``stack``, ``einsum``, ``tensordot``, the
  ``*_like`` makers);
* any other function runs on stand-ins of real zeros of the inputs' shapes, when they are small enough to
  make (``STAND_IN_LIMIT`` elements); beyond that it raises a NotImplementedError that names it;
* writes (``out=``, ``a[i] = v``, ``np.copyto``) are dropped: there is nothing to write to;
* reading a value (``float``, ``tolist``, ``tobytes``) raises PyTorch's "Cannot copy out of meta tensor".

The ops take ``np.asanyarray`` where an array is wanted: ``np.asarray`` would turn a MetaArray into a plain array
of its zeros, and the result would silently be a CPU tensor.

An op whose NumPy code does not pass through these overrides (the convolution's strided windows) asks
``is_meta`` and answers with its shape rule instead.
"""
import functools
from typing import Any

import numpy as np

__all__ = ["MetaArray", "meta_array", "is_meta", "kept_meta", "no_meta_kernel", "row_major_strides", "shapes_from",
           "STAND_IN_LIMIT", "NO_DATA", "NONZERO"]

# The most elements that the stand-ins of one call may hold (32 MiB of float64): enough for any shape a
# program checks by hand, small enough that no call surprises the machine.
STAND_IN_LIMIT = 1 << 22

NO_DATA = "Cannot copy out of meta tensor; no data!"

# PyTorch's refusal of ``nonzero`` (and so of a boolean mask's index) on meta: its result's shape is its values'
NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
           "data-independent implementation does not exist. This implementation returns a fake value, assuming all "
           "elements of the tensor are non-zero. To enable this registration, please set "
           "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def meta_array(shape, dtype):
    """A ``MetaArray`` of ``shape`` and ``dtype``: every element is one shared zero, so it costs no memory."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape)).view(MetaArray)


def row_major_strides(shape):
    """The strides, in elements, of a row-major (C-contiguous) tensor of ``shape``: a meta tensor's, as PyTorch
    lays out a new meta tensor (a ``MetaArray``'s own strides are all 0)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_meta(array):
    """Whether ``array`` is the data of a meta tensor."""
    return type(array) is MetaArray


def shapes_from(reference):
    """For an array kernel that computes in scratch buffers of its own (Sleef's exp, written in NumPy steps),
    which cannot stay meta: on a meta array, ``reference``, the plain NumPy function of the same result shape
    and dtype, answers instead. A real array goes straight to the kernel."""
    def decorate(kernel):
        @functools.wraps(kernel)
        def kernel_or_shapes(x, *args, **kwargs):
            if type(x) is MetaArray:
                return reference(x, *args, **kwargs)
            return kernel(x, *args, **kwargs)
        return kernel_or_shapes
    return decorate


def kept_meta(result, source):
    """``result``, computed from ``source`` by code that cannot keep arrays meta (strided windows, fresh buffers
    written in place): a meta array of its shape and dtype when ``source`` is meta, else itself."""
    if type(source) is MetaArray and type(result) is not MetaArray:
        return meta_array(result.shape, result.dtype)
    return result


def no_meta_kernel(name):
    """PyTorch's refusal of an op that has no meta kernel (``unique``, ``masked_select``: a result shaped by
    values)."""
    return NotImplementedError(
        f"aten::{name}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel "
        "registered. You may have run into this message while using an operator with PT2 compilation APIs "
        "(torch.compile/torch.export); in order to use this operator with those APIs you'll need to add a fake "
        "impl. Please see the following for next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def _no_data(*args, **kwargs):
    raise NotImplementedError(NO_DATA)


def _rebuilt(value, items):
    """A tuple or list like ``value`` (a named tuple too, such as ``np.linalg.qr``'s result) holding ``items``."""
    items = list(items)
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def _mapped(value, leaf):
    """``leaf`` of every item of ``value`` that is not a list or a tuple, at any depth, the nesting kept."""
    if isinstance(value, (list, tuple)):
        return _rebuilt(value, (_mapped(v, leaf) for v in value))
    return leaf(value)


def _plain(value):
    """``value`` with every MetaArray in it seen as a plain ndarray."""
    return _mapped(value, lambda v: v.view(np.ndarray) if type(v) is MetaArray else v)


def _as_meta(value):
    """Every array in a result as a fresh MetaArray of its shape and dtype (a NumPy scalar too: the 0-d result of
    a reduction or a dot product)."""
    return _mapped(value, lambda v: meta_array(v.shape, v.dtype) if isinstance(v, (np.ndarray, np.generic)) else v)


def _viewed_as_meta(value):
    """A view's result, still sharing the one zero, marked as meta again."""
    return _mapped(value, lambda v: v.view(MetaArray) if isinstance(v, np.ndarray) else v)


def _tiny(value):
    """A one-element stand-in with ``value``'s dtype and rank (a Python number stays itself, as NumPy weighs
    it by its kind alone)."""
    if isinstance(value, np.ndarray):
        return np.zeros((1,) * value.ndim, value.dtype)
    return value


def _count(value):
    """How many elements the MetaArrays in ``value`` have together."""
    if isinstance(value, (list, tuple)):
        return sum(_count(v) for v in value)
    return value.size if type(value) is MetaArray else 0


def _zeros(value):
    """Stand-ins of real zeros for the MetaArrays in ``value``."""
    return _mapped(value, lambda v: np.zeros(v.shape, v.dtype) if type(v) is MetaArray else v)


def _on_stand_ins(name, call, args, kwargs):
    """Run ``call`` on real zeros of the meta inputs' shapes; its arrays come back as meta."""
    held = _count(args) + _count(list(kwargs.values()))
    if held > STAND_IN_LIMIT:
        raise NotImplementedError(
            f"gradiente works out {name} of meta tensors by running it on zeros of their shapes, and these "
            f"would hold {held} elements; it has no shape rule for {name} that would avoid that")
    with np.errstate(all="ignore"):
        result = call(*_zeros(args), **{k: _zeros(v) for k, v in kwargs.items()})
    return _as_meta(result)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in axes)) if ndim else ()


def _reduced_shape(shape, axis, keepdims):
    gone = _axes(axis, len(shape))
    if keepdims:
        return tuple(1 if d in gone else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in gone)


def _matmul_shape(a, b):
    a_vector, b_vector = a.ndim == 1, b.ndim == 1
    a_shape = (1, *a.shape) if a_vector else a.shape
    b_shape = (*b.shape, 1) if b_vector else b.shape
    if a_shape[-1] != b_shape[-2]:
        raise ValueError("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b_shape[-2]} is different from {a_shape[-1]})")
    shape = (*np.broadcast_shapes(a_shape[:-2], b_shape[:-2]), a_shape[-2], b_shape[-1])
    if b_vector:
        shape = shape[:-1]
    if a_vector:
        shape = shape[:-2] + shape[-1:] if not b_vector else shape[:-1]
    return shape


def _written(out):
    """What a ufunc with ``out=`` returns: its outputs, left as they are (a meta output has nothing to write;
    a real one would receive values that do not exist)."""
    outs = out if isinstance(out, tuple) else (out,)
    if any(type(o) is not MetaArray for o in outs if o is not None):
        raise NotImplementedError(NO_DATA)
    return outs[0] if len(outs) == 1 else outs


# --- functions with a shape rule ------------------------------------------------------------------------

def _like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    a = np.asanyarray(a)
    return meta_array(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(a, dtype, shape=shape)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = [np.asanyarray(a) for a in arrays]
    result_dtype = dtype or np.result_type(*arrays)
    if axis is None:
        return meta_array((sum(a.size for a in arrays),), result_dtype)
    first = arrays[0].shape
    axis %= len(first)
    for a in arrays[1:]:
        if a.ndim != len(first) or any(n != m for d, (n, m) in enumerate(zip(a.shape, first)) if d != axis):
            return _on_stand_ins("concatenate", np.concatenate, (arrays,), {"axis": axis})  # NumPy's error
    shape = (*first[:axis], sum(a.shape[axis] for a in arrays), *first[axis + 1:])
    return meta_array(shape, result_dtype) if out is None else _written(out)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = [np.asanyarray(a) for a in arrays]
    if any(a.shape != arrays[0].shape for a in arrays):
        return _on_stand_ins("stack", np.stack, (arrays,), {"axis": axis})                # NumPy's error
    axis %= arrays[0].ndim + 1
    shape = arrays[0].shape
    return meta_array((*shape[:axis], len(arrays), *shape[axis:]), dtype or np.result_type(*arrays))


def _einsum(subscripts, *operands, out=None, dtype=None, **kwargs):
    if not isinstance(subscripts, str):
        return _on_stand_ins("einsum", np.einsum, (subscripts, *operands), kwargs)
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    sizes: dict = {}
    ellipsis_shapes = []
    for labels, operand in zip(inputs.split(","), operands):
        shape = np.shape(operand)
        if "..." in labels:
            head, tail = labels.split("...")
            ellipsis_shapes.append(shape[len(head):len(shape) - len(tail)])
            labels = head + tail
            shape = shape[:len(head)] + shape[len(shape) - len(tail):]
        for label, n in zip(labels, shape):
            if sizes.setdefault(label, n) != n and 1 not in (n, sizes[label]):
                return _on_stand_ins("einsum", np.einsum, (subscripts, *operands), kwargs)   # NumPy's error
            sizes[label] = max(n, sizes[label]) if 1 in (n, sizes[label]) else n
    if not arrow:
        letters = inputs.replace(",", "").replace("...", "")
        output = ("..." if ellipsis_shapes else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    broadcast = np.broadcast_shapes(*ellipsis_shapes) if ellipsis_shapes else ()
    head, _, tail = output.partition("...") if "..." in output else (output, "", "")
    shape = (*(sizes[c] for c in head), *(broadcast if "..." in output else ()), *(sizes[c] for c in tail))
    result_dtype = dtype or np.result_type(*[np.asanyarray(o).dtype for o in operands])
    return meta_array(shape, result_dtype) if out is None else _written(out)


def _tensordot(a, b, axes=2):
    a, b = np.asanyarray(a), np.asanyarray(b)
    if isinstance(axes, int):
        a_axes, b_axes = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        a_axes, b_axes = ([x] if isinstance(x, int) else list(x) for x in axes)
    a_axes = [x % a.ndim for x in a_axes]
    b_axes = [x % b.ndim for x in b_axes]
    if [a.shape[i] for i in a_axes] != [b.shape[i] for i in b_axes]:
        raise ValueError("shape-mismatch for sum")
    shape = [n for d, n in enumerate(a.shape) if d not in a_axes] + [n for d, n in enumerate(b.shape)
                                                                    if d not in b_axes]
    return meta_array(shape, np.result_type(a.dtype, b.dtype))


def _nonzero(a):
    # An op that looks for special elements (``tail = np.flatnonzero(z >= 1)``) finds none, as on zeros; the
    # public ``nonzero`` of a meta tensor raises PyTorch's NONZERO (``ops/indexing.py``).
    return tuple(np.empty(0, np.intp) for _ in range(np.ndim(a)))


def _flatnonzero(a):
    return np.empty(0, np.intp)


def _argwhere(a):
    return np.empty((0, np.ndim(a)), np.intp)


def _where(condition, *values):
    if not values:
        raise NotImplementedError(NONZERO)
    shapes = [np.shape(condition)] + [np.shape(v) for v in values]
    dtype = np.result_type(*[_tiny(v) for v in values])
    return meta_array(np.broadcast_shapes(*shapes), dtype)


def _all(a, axis=None, out=None, keepdims=False, **kwargs):
    return np.asanyarray(a).all(axis=axis, keepdims=keepdims)


def _any(a, axis=None, out=None, keepdims=False, **kwargs):
    return np.asanyarray(a).any(axis=axis, keepdims=keepdims)


def _copyto(dst, src, casting="same_kind", where=True):
    if type(dst) is not MetaArray:
        raise NotImplementedError(NO_DATA)


_RULES = {np.zeros_like: _like, np.ones_like: _like, np.empty_like: _like, np.full_like: _full_like,
          np.concatenate: _concatenate, np.stack: _stack, np.einsum: _einsum, np.tensordot: _tensordot,
          np.where: _where, np.copyto: _copyto, np.nonzero: _nonzero, np.flatnonzero: _flatnonzero,
          np.argwhere: _argwhere, np.all: _all, np.any: _any}

# Functions whose result is a view of their input (or only looks at its shape): NumPy runs them on the
# shared zero as it is, at no cost whatever the shape.
_VIEWS = {np.transpose, np.moveaxis, np.swapaxes, np.reshape, np.squeeze, np.expand_dims, np.broadcast_to,
          np.broadcast_arrays, np.diagonal, np.flip, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.split,
          np.array_split, np.real, np.imag, np.shape, np.ndim, np.size, np.result_type, np.can_cast,
          np.may_share_memory, np.shares_memory, np.iscomplexobj, np.isrealobj, np.rollaxis, np.ravel}


class MetaArray(np.ndarray):
    """The data of a meta tensor: a shape and a dtype, one shared zero behind every element (see the module's
    docstring)."""

    __array_priority__ = 1000.0      # a meta operand decides the result's type in mixed arithmetic

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at":
            return None                                                  # a write: nothing to write to
        if out is not None and method != "reduce":
            return _written(out)
        with np.errstate(all="ignore"):
            if method == "__call__":
                if ufunc is np.matmul:
                    shape = _matmul_shape(*[np.asanyarray(x) for x in inputs])
                elif ufunc.signature:
                    return _on_stand_ins(ufunc.__name__, ufunc, inputs, kwargs)
                else:
                    shape = np.broadcast_shapes(*[np.shape(x) for x in inputs])
                results = ufunc(*[_tiny(x) for x in inputs], **kwargs)
                if isinstance(results, tuple):
                    return tuple(meta_array(shape, r.dtype) for r in results)
                return meta_array(shape, np.result_type(results))
            if method == "reduce":
                array = inputs[0]
                axis = kwargs.get("axis", 0)
                stand_in = np.zeros(tuple(min(n, 1) for n in array.shape), array.dtype)
                result = ufunc.reduce(stand_in, **kwargs)                 # NumPy's errors and result dtype
                shape = _reduced_shape(array.shape, axis, kwargs.get("keepdims", False))
                if out is not None:
                    return _written(out)
                reduced = meta_array(shape, np.result_type(result))
                if ufunc is np.logical_and:
                    reduced._truth = True                                # ``all``: see ``__bool__``
                return reduced
            if method == "accumulate":
                array = inputs[0]
                stand_in = np.zeros(tuple(min(n, 1) for n in array.shape), array.dtype)
                return meta_array(array.shape, ufunc.accumulate(stand_in, **kwargs).dtype)
            if method == "outer":
                a, b = (np.asanyarray(x) for x in inputs)
                return meta_array(a.shape + b.shape, ufunc(_tiny(a), _tiny(b), **kwargs).dtype)
        return _on_stand_ins(f"{ufunc.__name__}.{method}", getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        rule: Any = _RULES.get(func)
        if rule is not None:
            return rule(*args, **kwargs)
        if func in _VIEWS and func is not np.ravel:
            return _viewed_as_meta(func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()}))
        if func is np.ravel:
            return meta_array((np.size(args[0]),), args[0].dtype)
        return _on_stand_ins(func.__name__, func, args, kwargs)

    # --- methods NumPy runs in C over the values: answered from the shape ---------------------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return meta_array(self.shape, dtype)

    def copy(self, order="C"):
        return meta_array(self.shape, self.dtype)

    def ravel(self, order="C"):
        return meta_array((self.size,), self.dtype)

    flatten = ravel

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        # A meta array pickles as its shape and dtype (``copy.deepcopy`` of a meta model keeps it meta).
        return meta_array, (self.shape, self.dtype)

    def __setitem__(self, index, value):
        return None                                                     # a write: nothing to write to

    def fill(self, value):
        return None

    def sort(self, *args, **kwargs):       # (in place: nothing to sort)
        return None

    def argsort(self, axis=-1, kind=None, order=None, **kwargs):
        return meta_array(self.shape if axis is not None else (self.size,), np.intp)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return meta_array(_reduced_shape(self.shape, axis, keepdims), np.intp)

    argmin = argmax

    def nonzero(self):
        return _nonzero(self)

    _truth = False

    def __bool__(self):
        # An op's check of its values finds nothing wrong: there are no values, and PyTorch's meta kernels make
        # no such checks either. So a meta array is false (``if (index < 0).any(): raise ...`` passes), except
        # the result of ``all``, which is true (``if not (p >= 0).all(): raise ...`` passes too).
        # (``bool`` of a meta *tensor* raises, as PyTorch's does.)
        return self._truth

    # Reading a value: there is none.
    item = tolist = tobytes = __float__ = __int__ = __complex__ = __index__ = _no_data

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__
