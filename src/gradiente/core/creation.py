"""Creating tensors from data and from shapes (random creation lives in ``random``)."""
import collections.abc
import math
import numbers

import numpy as np

from . import dtype as dt
from . import layouts
from .device import COPY, check_device
from .fused import fma
from .meta import MetaArray, is_meta, meta_array
from .size import Size
from .tensor import Tensor, _size_args, warn_once_of_scalar_with_grad
from .warnings_at_caller import warn_at_caller

__all__ = ["tensor", "from_numpy", "from_dlpack", "zeros", "ones", "full", "empty", "eye", "arange",
           "linspace", "logspace", "zeros_like", "ones_like", "full_like", "empty_like", "scalar_tensor",
           "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor",
           "ShortTensor", "CharTensor", "empty_strided", "empty_permuted", "frombuffer"]

_FLOAT_ERROR = "Only Tensors of floating point and complex dtype can require gradients"


def _check_dtype(dtype, fname):
    if dtype is not None and not isinstance(dtype, dt.dtype):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")


def _finish(array, requires_grad, fname=None, meta=False):
    """Wrap a factory's new array (as a meta tensor's shape and dtype alone when ``meta``)."""
    t = Tensor._make(meta_array(array.shape, array.dtype) if meta else array)
    if requires_grad:
        if dt.kind(array.dtype) not in "fc":
            raise RuntimeError(_FLOAT_ERROR)
        t._requires_grad = True
    return t


def _ragged_error(data):
    """PyTorch's message for nested lists of unequal lengths, found breadth-first without recursion."""
    level = [data]
    dim = 0
    while level:
        first = level[0]
        if not isinstance(first, (list, tuple)):
            return None
        n = len(first)
        nxt: list = []
        for item in level:
            if not isinstance(item, (list, tuple)):
                return ValueError(f"expected sequence of length {n} at dim {dim} (got {type(item).__name__})")
            if len(item) != n:
                return ValueError(f"expected sequence of length {n} at dim {dim} (got {len(item)})")
            nxt.extend(item)
        level = nxt
        dim += 1
    return None


def _infer_array(data, exact=False):
    """``data`` (number, nested sequence, ndarray, tensor) as an ndarray of PyTorch's inferred dtype.
    ``exact``: a dtype was requested, so Python floats stay doubles until they are converted to it (PyTorch
    converts each number once; going through the default float32 first would round 0.7 twice)."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, np.ndarray):
        dt.from_numpy_dtype(data.dtype)
        return data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, bool):
        return np.asarray(data)
    if isinstance(data, numbers.Integral):
        if exact and int(data) > np.iinfo(np.int64).max:      # a uint64 value beyond int64 (issue 16)
            return np.asarray(int(data), dtype=np.uint64)
        return np.asarray(int(data), dtype=np.int64)
    if isinstance(data, numbers.Real):
        return np.asarray(float(data), dtype=np.float64 if exact else dt.get_default_dtype()._np)
    if isinstance(data, numbers.Complex):
        return np.asarray(data, dtype=np.complex128 if exact else dt.get_default_dtype().to_complex()._np)
    if isinstance(data, (list, tuple)):
        if _holds_tensor(data):
            read_with_grad: list = []
            data = _tensors_as_numbers(data, read_with_grad)
            if read_with_grad:
                warn_once_of_scalar_with_grad()
        if not _warned["arrays in a list"] and _holds_array(data):
            _warned["arrays in a list"] = True      # (once per process, as PyTorch's TORCH_WARN_ONCE)
            warn_at_caller(_ARRAYS_IN_A_LIST_WARNING, UserWarning)
        err = _ragged_error(data)
        if err is not None:
            raise err
        try:
            arr = np.array(data)
        except (ValueError, TypeError) as e:
            raise TypeError(f"new(): invalid data type '{_first_leaf_type(data)}'") from e
        if arr.dtype.kind in "US" or arr.dtype == object:
            raise TypeError(f"new(): invalid data type '{_first_bad_type(data)}'")
        if exact and dt.kind(arr.dtype) in "fc":
            return arr
        if arr.dtype == np.float64 and not _has_numpy_double(data):
            arr = arr.astype(dt.get_default_dtype()._np)
        elif arr.dtype == np.complex128:
            arr = arr.astype(dt.get_default_dtype().to_complex()._np)
        elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and not (exact and arr.dtype == np.uint64):
            arr = arr.astype(np.int64)
        elif arr.dtype == np.float32 and arr.size == 0:
            arr = arr.astype(dt.get_default_dtype()._np)
        return arr
    if hasattr(data, "__array__"):
        return np.asarray(data)
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _infer_array(list(data), exact)      # any other sequence (a deque, ...), read as PyTorch reads it
    raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")


_ARRAYS_IN_A_LIST_WARNING = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the list to a "
    "single numpy.ndarray with numpy.array() before converting to a tensor. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)")
_COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor).")
_warned = {"arrays in a list": False}


def _holds_array(data):
    """Whether an ndarray of one or more dimensions is among the items of the nested sequence ``data``."""
    types = set(map(type, data))
    if any(issubclass(t, np.ndarray) for t in types) and any(
            isinstance(d, np.ndarray) and d.ndim for d in data):
        return True
    return (list in types or tuple in types) and any(_holds_array(d) for d in data if isinstance(d, (list, tuple)))


def _holds_tensor(data):
    """Whether a tensor is among the leaves of the nested sequence ``data`` (``type`` is mapped in C: cheap)."""
    types = set(map(type, data))
    if any(issubclass(t, Tensor) for t in types):
        return True
    return (list in types or tuple in types) and any(_holds_tensor(d) for d in data if isinstance(d, (list, tuple)))


def _tensors_as_numbers(data, read_with_grad):
    """``data`` with each tensor in it replaced by its one number, as PyTorch reads a tensor inside a sequence
    (``tensor([loss1, loss2])``): a NumPy scalar of the tensor's dtype, so that the dtype takes part in the
    inference. A tensor of several elements is refused; one that requires grad is noted in ``read_with_grad``
    (the caller warns once, as PyTorch does)."""
    if isinstance(data, (list, tuple)):
        return [_tensors_as_numbers(d, read_with_grad) for d in data]
    if not isinstance(data, Tensor):
        return data
    if data._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if data._requires_grad:
        read_with_grad.append(True)
    return data._data.reshape(())[()]


def _first_leaf_type(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return type(data).__name__


def _first_bad_type(data):
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif not isinstance(item, (numbers.Number, np.generic, Tensor)):
            return type(item).__name__
    return "object"


def _has_numpy_double(data):
    """``tensor([np.float64(1.)])`` is float64 in PyTorch: NumPy doubles keep their type."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (np.float64, np.ndarray)) or (isinstance(item, Tensor)
                                                             and item._data.dtype == np.float64):
            return True
    return False


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data``; dtype inferred as PyTorch does (ints -> int64, floats ->
    the default float dtype, bools -> bool) unless given."""
    if isinstance(data, Tensor):
        warn_at_caller(_COPY_CONSTRUCT_WARNING.format("torch.tensor"), UserWarning)
    return _tensor_of(data, dtype, device, requires_grad)


def _tensor_of(data, dtype, device, requires_grad):
    _check_dtype(dtype, "tensor")
    meta = check_device(device, "tensor", COPY)
    arr = _infer_array(data, exact=dtype is not None)
    arr = np.array(arr, dtype=dtype._np if dtype is not None else arr.dtype, copy=True)
    return _finish(arr, requires_grad, meta=meta)


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray``: changes to one show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a copy "
                         "of your array  with array.copy().) ")
    return Tensor._make(ndarray)


def from_dlpack(ext_tensor):
    """A tensor sharing memory with ``ext_tensor``, any object with ``__dlpack__`` on the CPU (a NumPy array, a
    PyTorch tensor, ...): changes to one show in the other."""
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__, got {type(ext_tensor).__name__}")
    array = np.from_dlpack(ext_tensor)
    dt.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _shape(size, fname=None):
    shape = _size_args(size, fname)
    for s in shape:
        if s < 0:
            if fname == "zeros" and len(shape) == 1:
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, shape))}]")
    return shape


def _size_and(size, kwargs, fname, overloaded=False):
    """``size`` given as varargs, one sequence, or ``size=`` (pytorch/examples' GAT writes ``torch.empty(size=...)``);
    both at once, or any other keyword, is PyTorch's TypeError (that of its overload resolution where the function
    has several signatures: ``rand``, ``randn``)."""
    if "size" in kwargs:
        if size and overloaded:
            got = ", ".join([type(n).__name__ for n in size] + [f"size={type(kwargs['size']).__name__}"])
            raise TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), but expected "
                            "one of: (tuple of ints size, *, ...)")
        if size:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        size = _size_args((kwargs.pop("size"),))
    if kwargs:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return size


def _filled(size, value, dtype, requires_grad, fname, device=None):
    _check_dtype(dtype, fname)
    meta = check_device(device, fname)
    shape = _shape(size, fname)
    np_dtype = (dtype or dt.get_default_dtype())._np
    return _finish(meta_array(shape, np_dtype) if meta else np.full(shape, value, dtype=np_dtype), requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          **kwargs):
    """A tensor of the given size filled with 0 (float32 by default, or ``dtype``). The size is a sequence or
    separate integers; anything else raises PyTorch's TypeError."""
    return _filled(_size_and(size, kwargs, "zeros"), 0, dtype, requires_grad, "zeros", device)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
         **kwargs):
    """A tensor of the given size filled with 1 (float32 by default, or ``dtype``). The size is a sequence or
    separate integers; anything else raises PyTorch's TypeError."""
    return _filled(_size_and(size, kwargs, "ones"), 1, dtype, requires_grad, "ones", device)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kwargs):
    """Uninitialized in PyTorch; zeros here (deterministic, and as fast with NumPy). ``memory_format``: the layout
    of the new memory (``channels_last``: the channel dim fastest)."""
    if layouts.name_of(memory_format) == "preserve_format":
        raise RuntimeError("unsupported memory format Preserve")
    result = _filled(_size_and(size, kwargs, "empty"), 0, dtype, requires_grad, "empty", device)
    if layouts.is_channels_last(memory_format) and not is_meta(result._data):
        result._data = layouts.in_memory_format(result._data, memory_format)
    return result


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of ``size`` with the given ``stride`` (in elements), in new memory just large enough for it
    (zeros here, as ``empty``)."""
    meta = check_device(device, "empty_strided", "aten::empty_strided")
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    np_dtype = (dtype or dt.get_default_dtype())._np
    if meta:
        return _finish(meta_array(size, np_dtype), requires_grad)
    extent = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    memory = np.zeros(extent, np_dtype)
    itemsize = memory.itemsize
    array = np.lib.stride_tricks.as_strided(memory, size, tuple(st * itemsize for st in stride))
    return _finish(array, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """A tensor of ``size`` whose dims lie in memory in the order ``physical_layout`` (outermost first), dense."""
    meta = check_device(device, "empty_permuted")
    size, order = tuple(int(n) for n in size), tuple(int(d) for d in physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"got {len(size)} != {len(order)}" if len(order) != len(size) else
                           "physical_layout is not a permutation")
    np_dtype = (dtype or dt.get_default_dtype())._np
    if meta:
        return _finish(meta_array(size, np_dtype), requires_grad)
    array = np.zeros([size[d] for d in order], np_dtype).transpose(np.argsort(order))
    return _finish(array, requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of a Python buffer (``bytearray``, ``array.array``, ``memoryview``...),
    sharing it: writing one changes the other. A read-only buffer gives PyTorch's warning."""
    array = np.frombuffer(buffer, dtype=dtype._np, count=count, offset=offset)
    if not array.flags.writeable:
        import warnings
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
                      "You may want to copy the buffer to protect its data or make it writable before converting "
                      "it to a tensor. This type of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=2)
    return _finish(array, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``; dtype inferred from the value (bool, int64, float)."""
    if dtype is None:
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        dtype = dt.scalar_dtype(fill_value)
    return _filled((size,) if not isinstance(size, (tuple, list, Size)) else (tuple(size),), fill_value, dtype,
                   requires_grad, "full", device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding the number ``s``, of the default floating dtype unless ``dtype`` is given."""
    return _filled((), s, dtype or dt.get_default_dtype(), requires_grad, "scalar_tensor", device)


def _like(input, value, dtype, requires_grad, meta=None):
    """A new tensor shaped like ``input``, filled with ``value``. PyTorch's default ``preserve_format`` keeps
    the input's memory layout (a transposed tensor gives a transposed result), which shows wherever values are
    then written in memory order, as ``bernoulli_`` does for dropout. It is meta when ``device`` said meta or,
    with no device given (``meta`` None), when ``input`` is."""
    np_dtype = (dtype or input.dtype)._np
    if meta or (meta is None and is_meta(input._data)):
        return _finish(meta_array(input._data.shape, np_dtype), requires_grad)
    if is_meta(input._data):        # from meta to the CPU (``to_empty``): row-major, as a meta tensor is laid out
        out = np.empty(input._data.shape, np_dtype)
    else:
        out = empty_in_layout_of(input._data, np_dtype)
    out.fill(value)
    return _finish(out, requires_grad)


def _dense_order(shape, *operand_strides):
    """The dims from fastest to slowest in memory, as PyTorch's TensorIterator (and ``infer_dense_strides``, for
    one operand) orders them: by the first operand's strides, ties broken by size or left to the next operand,
    and a broadcast (stride 0) dim left where it stands."""
    def should_swap(d0, d1):
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        moving = i
        for before in range(i - 1, -1, -1):
            swap = should_swap(perm[before], perm[moving])
            if swap > 0:
                perm[before], perm[moving] = perm[moving], perm[before]
                moving = before
            elif swap < 0:
                break
    return perm


def empty_in_layout_of(like, np_dtype):
    """An uninitialized array shaped as ``like`` in PyTorch's ``preserve_format`` layout: ``like``'s own strides
    where it is dense, else the dense strides in the order of ``like``'s (``infer_dense_strides``)."""
    if type(like) is MetaArray:
        return meta_array(like.shape, np_dtype)
    if like.flags.c_contiguous or like.ndim < 2:
        return np.empty(like.shape, np_dtype)
    if is_dense(like):
        return np.empty_like(like, dtype=np_dtype, order="K")
    slow_to_fast = _dense_order(like.shape, like.strides)[::-1]
    return np.empty([like.shape[d] for d in slow_to_fast], np_dtype).transpose(np.argsort(slow_to_fast))


def _iteration_strides(array, shape):
    """``array``'s strides broadcast to ``shape`` as TensorIterator reads them: 0 for a dim it lacks or stretches
    from 1, its own stride elsewhere, a dim of size 1 included (``np.broadcast_to`` zeroes those too)."""
    lead = len(shape) - array.ndim
    return (0,) * lead + tuple(0 if n == 1 and shape[lead + i] != 1 else st
                               for i, (n, st) in enumerate(zip(array.shape, array.strides)))


def _strictly_c_order(array):
    """C-contiguous with C strides on its dims of size 1 too. NumPy's flag (like PyTorch's is_contiguous) ignores
    those, but TensorIterator orders a broadcast's dims by them: a transposed (1, 1, 3) is (3, 1, 1) with
    strides (1, 3, 3), contiguous by the flag, yet its dim 0 is the fastest when it meets another operand."""
    if not array.flags.c_contiguous:
        return False
    if 1 not in array.shape:
        return True
    expected = array.itemsize
    for size, stride in zip(reversed(array.shape), reversed(array.strides)):
        if stride != expected:
            return False
        expected *= size
    return True


def _strictly_decreasing(strides):
    return strides[-1] > 0 and all(a > b for a, b in zip(strides, strides[1:]))


def in_iteration_layout(values, *operands):
    """``values``, the result of an elementwise op of ``operands`` (arrays or numbers), in the layout PyTorch's
    TensorIterator gives it (NumPy's differs where the operands' layouts disagree): a copy only then. The
    operands are best given as they came, before any cast: a cast (``astype``) resets the strides of dims of
    size 1, which TensorIterator reads. A number decides nothing."""
    if values.__class__ is not np.ndarray or values.ndim < 2:
        return values
    arrays = [a for a in operands if a.__class__ is np.ndarray]
    if len(arrays) == 1:    # with numbers only: a dense operand's strides, its size-1 dims' included
        a = arrays[0]
        if a.shape != values.shape or not values.flags.owndata or _strictly_c_order(a) or not is_dense(a):
            return values
        wanted = tuple(st // a.itemsize * values.itemsize for st in a.strides)
        if values.strides != wanted and all(n == 1 or st == w for n, st, w in zip(values.shape, values.strides,
                                                                                  wanted)):
            return np.lib.stride_tricks.as_strided(values, values.shape, wanted)
        return values
    if not arrays or all(_strictly_c_order(a) for a in arrays):
        return values
    fast = _fast_setup_strides(values, operands, arrays)
    if fast is not None:
        return _restrided(values, fast)
    shape = values.shape
    if values.flags.c_contiguous and arrays[0].shape == shape and _strictly_decreasing(arrays[0].strides):
        # the first operand's strides all differ and fall from the first dim to the last (a row-major slice, such
        # as a chunk of the gates): it alone orders every dim, in C order (``_dense_order``), which NumPy gave
        return values
    strides = [_iteration_strides(a, shape) for a in arrays]
    fast_to_slow = _dense_order(shape, *strides)
    by_dim, step = [0] * len(shape), values.itemsize
    for d in fast_to_slow:      # TensorIterator's strides, a size-1 dim's included (a later op reads them)
        by_dim[d] = step
        step *= shape[d]
    return _restrided(values, tuple(by_dim))


def _fast_setup_strides(values, operands, arrays):
    """The result's strides where TensorIterator takes its fast setup, else None: every operand a tensor of the
    result's shape (a number is a 0-d operand there), all contiguous by the flag (then C order, size-1 dims'
    strides included) or all dense with the same strides (then theirs). The general path would order the dims
    alike but read the size-1 dims' strides, which a later broadcast reads (seed 60424: ``where`` of three
    contiguous (2, 1, 1) operands with strides (1, 2, 2) is (1, 1, 1) in PyTorch)."""
    if len(arrays) != len(operands) or any(a.shape != values.shape for a in arrays):
        return None
    step, by_dim = values.itemsize, []
    if all(a.flags.c_contiguous for a in arrays):
        for n in reversed(values.shape):
            by_dim.append(step)
            step *= n
        return tuple(reversed(by_dim))
    in_elements = {tuple(st // a.itemsize for st in a.strides) for a in arrays}
    if len(in_elements) == 1 and is_dense(arrays[0]) and min(arrays[0].strides) >= 0:
        return tuple(st * values.itemsize for st in in_elements.pop())
    return None


def _restrided(values, wanted):
    """``values`` with the dense strides ``wanted``: the same memory where only size-1 dims' strides differ, else a
    copy laid out so."""
    if values.strides == wanted:
        return values
    shape = values.shape
    if all(n == 1 or st == w for n, st, w in zip(shape, values.strides, wanted)) and values.flags.owndata:
        return np.lib.stride_tricks.as_strided(values, shape, wanted)    # the same memory: only size-1 strides
    out = np.lib.stride_tricks.as_strided(np.empty(values.size, values.dtype), shape, wanted)
    out[...] = values
    return out


def in_layout_of(values, like):
    """``values`` (shaped as ``like``) laid out as ``empty_in_layout_of(like)``: a copy only where they are not."""
    if type(values) is MetaArray:
        return values                   # (no memory to lay out: core/meta.py)
    if like.flags.c_contiguous or like.ndim < 2:
        return np.asarray(values, order="C")
    out = empty_in_layout_of(like, values.dtype)
    out[...] = values
    return out


def c_order(values):
    """``values`` in C order (a copy only where they are not); unlike ``np.ascontiguousarray``, a 0-d array stays
    0-d. For the results PyTorch's kernels write contiguous whatever the input's layout."""
    if values.__class__ is np.ndarray and not values.flags.c_contiguous:
        return np.array(values, order="C")
    return values


def keep_layout(values, like):
    """``values``, an elementwise result shaped as ``like``, in the layout PyTorch gives an elementwise op of
    ``like`` (``empty_in_layout_of``). NumPy's ufuncs keep it already; array functions built of masks and
    ``np.where`` return C order, so the copy happens only for them, and only for non-C-contiguous inputs."""
    if like.flags.c_contiguous or like.ndim < 2 or values.__class__ is not np.ndarray or values.shape != like.shape:
        return values
    if values.strides == empty_in_layout_of(like, values.dtype).strides:
        return values
    return in_layout_of(values, like)


def once_per_element(array_fn, array):
    """``array_fn(array)`` for an elementwise ``array_fn``, computed once per distinct element when ``array`` is
    broadcast (a stride of 0, as ``expand`` makes): on the one slice the broadcast repeats, then copied out to the
    full shape. ``vmap`` expands every unbatched input it differentiates, so without this a Jacobian would evaluate
    ``sin`` once per row of the identity on the same values. The result is a fresh C-contiguous array."""
    if type(array) is MetaArray:        # every stride of a meta array is 0, and it has no values to spare
        return array_fn(array)
    index = tuple(slice(0, 1) if stride == 0 else slice(None) for stride in array.strides)
    return np.ascontiguousarray(np.broadcast_to(array_fn(array[index]), array.shape))


def is_dense(array):
    """Whether ``array``'s elements fill a block of memory without gaps or overlaps, in some order of dims."""
    expected = array.itemsize
    for stride, size in sorted((abs(st), n) for st, n in zip(array.strides, array.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor shaped like ``input`` (with its dtype unless ``dtype`` is given, and its memory layout) filled
    with 0."""
    meta = check_device(device, "zeros_like", "aten::empty_strided") if device is not None else None
    return _like(input, 0, dtype, requires_grad, meta)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor shaped like ``input`` (with its dtype unless ``dtype`` is given, and its memory layout) filled
    with 1."""
    meta = check_device(device, "ones_like", "aten::empty_strided") if device is not None else None
    return _like(input, 1, dtype, requires_grad, meta)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor shaped like ``input``, its values unspecified in PyTorch; gradiente fills it with 0, so a program
    that reads it before writing sees zeros rather than garbage."""
    meta = check_device(device, "empty_like", "aten::empty_strided") if device is not None else None
    return _like(input, 0, dtype, requires_grad, meta)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor shaped like ``input`` (with its dtype unless ``dtype`` is given, and its memory layout) filled
    with ``fill_value``."""
    meta = check_device(device, "full_like", "aten::empty_strided") if device is not None else None
    return _like(input, fill_value, dtype, requires_grad, meta)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The n-by-m identity matrix (m = n unless given): ones on the main diagonal, zeros elsewhere."""
    _check_dtype(dtype, "eye")
    meta = check_device(device, "eye")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    np_dtype = (dtype or dt.get_default_dtype())._np
    return _finish(meta_array((n, n if m is None else m), np_dtype) if meta else np.eye(n, m, dtype=np_dtype),
                   requires_grad)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Values ``start, start + step, ...`` below ``end``; int64 when all arguments are integers."""
    _check_dtype(dtype, "arange")
    meta = check_device(device, "arange")
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, end, step))
        dtype = dt.int64 if ints else dt.get_default_dtype()
    dt.refuse_unsigned_wide("arange_cpu", dtype._np)
    n = max(math.ceil((end - start) / step), 0)
    if dtype.is_floating_point:
        values = (start + np.arange(n, dtype=np.float64) * step).astype(dtype._np)
    elif all(float(v).is_integer() for v in (start, step)):
        values = (int(start) + np.arange(n, dtype=np.int64) * int(step)).astype(dtype._np)
    else:
        values = np.floor(start + np.arange(n) * step).astype(dtype._np)
    return _finish(values, requires_grad, meta=meta)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, computed as PyTorch does (from both
    ends towards the middle, so both ends are exact)."""
    _check_dtype(dtype, "linspace")
    meta = check_device(device, "linspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or dt.get_default_dtype()
    return _finish(_linspace_values(_number(start), _number(end), steps, dtype._np), requires_grad, meta=meta)


def _linspace_values(start, end, steps, np_dtype):
    if steps == 0:
        return np.zeros(0, dtype=np_dtype)
    if steps == 1:
        return np.full(1, start, dtype=np_dtype)
    # PyTorch's kernel: the step in the result's own precision (double for integers), then
    # start + step·i for the first half and end - step·(n-1-i) for the second, so both ends are exact.
    # Its compiled loop fuses each multiply-add (one rounding), which a wider type reproduces here.
    floating = dt.kind(np.dtype(np_dtype)) == "f"
    compute = np.dtype(np_dtype) if floating else np.dtype(np.float64)
    start_c, end_c = compute.type(start), compute.type(end)
    step = (end_c - start_c) / compute.type(steps - 1)
    idx = np.arange(steps)
    half = steps // 2
    # (the index converted to the result's precision first, as the kernel converts it; each multiply-add exact)
    first = fma(step, idx[:half].astype(compute), start_c, compute)
    second = fma(-step, (steps - 1 - idx[half:]).astype(compute), end_c, compute)
    values = np.concatenate([first, second])
    return values.astype(np_dtype) if floating else np.trunc(values).astype(np_dtype)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    _check_dtype(dtype, "logspace")
    meta = check_device(device, "logspace")
    dtype = dtype or dt.get_default_dtype()
    exps = _linspace_values(_number(start), _number(end), steps, np.float64 if dtype is dt.float64 else dtype._np)
    return _finish(np.power(np.asarray(base, dtype=exps.dtype), exps).astype(dtype._np), requires_grad, meta=meta)


# --- legacy constructors -------------------------------------------------------------------------------

def tensor_new(cls, *args, **kwargs):
    """``Tensor.__new__``, the legacy constructor: ``Tensor([1, 2])`` is a float tensor of those values,
    ``Tensor(2, 3)`` an uninitialized 2x3 float tensor (as in PyTorch)."""
    return legacy_new(cls, dt.get_default_dtype(), args, kwargs)


def legacy_new(cls, dtype, args, kwargs):
    """``FloatTensor([1, 2])`` (data), ``FloatTensor(2, 3)`` (an uninitialized shape), ``FloatTensor()``."""
    kwargs.pop("device", None)
    if not args:
        arr = np.zeros((0,), dtype=dtype._np)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        src = args[0]
        if src._data.dtype != dtype._np:
            raise TypeError(f"expected {dtype} (got {src.dtype})")
        t = cls._make(src._data)
        t._version_box = src._version_box
        return t
    elif all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], Size)):
        arr = np.zeros(_shape(args), dtype=dtype._np)
    elif len(args) == 1:
        arr = np.array(_infer_array(args[0], exact=True), dtype=dtype._np, copy=True)
    else:
        raise TypeError("new() received an invalid combination of arguments")
    return cls._make(arr)


class tensortype(type):
    """The class of the legacy tensor types (``torch.FloatTensor``, ...): each is a dtype's constructor, the answer
    of ``isinstance`` for tensors of that dtype, and an argument ``x.type(torch.LongTensor)`` takes."""

    dtype = None
    is_cuda = is_sparse = is_sparse_csr = is_xpu = False

    layout = layouts.strided

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


tensortype.__module__ = "gradiente"


def _legacy_type(dtype):
    def construct(cls, *args, **kwargs):
        return legacy_new(Tensor, dtype, args, kwargs)

    return tensortype(dtype._legacy, (), {
        "__new__": construct, "__module__": "gradiente", "dtype": dtype,
        "__doc__": f"Legacy constructor: ``{dtype._legacy}(data)`` or ``{dtype._legacy}(*size)``."})


FloatTensor = _legacy_type(dt.float32)
DoubleTensor = _legacy_type(dt.float64)
HalfTensor = _legacy_type(dt.float16)
LongTensor = _legacy_type(dt.int64)
IntTensor = _legacy_type(dt.int32)
ShortTensor = _legacy_type(dt.int16)
CharTensor = _legacy_type(dt.int8)
ByteTensor = _legacy_type(dt.uint8)
BoolTensor = _legacy_type(dt.bool)


# --- x.new_*: tensors made like another one (its dtype unless given) ----------------------------------------

def new(self, *args, **kwargs):
    """``x.new(...)``: the legacy constructor (``Tensor(...)``) in x's dtype: ``x.new(2, 3)`` an uninitialized
    2x3 tensor, ``x.new([1, 2])`` one of those values, ``x.new(t)`` a tensor on t's memory, ``x.new()`` empty."""
    return legacy_new(Tensor, self.dtype, args, kwargs)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """``x.new_tensor(data)``: a new tensor of ``data``, in x's dtype unless ``dtype`` is given."""
    if isinstance(data, Tensor):
        warn_at_caller(_COPY_CONSTRUCT_WARNING.format("tensor.new_tensor"), UserWarning)
    return _tensor_of(data, dtype or self.dtype, _own_device(self, device), requires_grad)


def _own_device(self, device):
    """The device of a ``new_*`` tensor: ``device`` if given, else ``self``'s (as PyTorch's)."""
    return "meta" if device is None and is_meta(self._data) else device


def _new_filled(self, fill, size, dtype, device, requires_grad):
    return full(_size_args(size), fill, dtype=dtype or self.dtype, device=_own_device(self, device),
                requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """``x.new_zeros(*size)``: zeros in x's dtype unless ``dtype`` is given."""
    return _new_filled(self, 0, size, dtype, device, requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """``x.new_ones(*size)``: ones in x's dtype unless ``dtype`` is given."""
    return _new_filled(self, 1, size, dtype, device, requires_grad)


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    """``x.new_full(size, fill_value)``: ``fill_value`` everywhere, in x's dtype unless ``dtype`` is given."""
    return _new_filled(self, fill_value, (size,), dtype, device, requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """``x.new_empty(*size)``: an uninitialized tensor (zeros here) in x's dtype unless ``dtype`` is given."""
    return _new_filled(self, 0, size, dtype, device, requires_grad)
