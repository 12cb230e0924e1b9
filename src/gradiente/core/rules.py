"""The two array namespaces a derivative rule computes with: the seam between rules and array math.

``numpy_ops`` is used for an ordinary backward pass: rules see NumPy arrays and nothing is recorded, which
keeps the per-node cost low. ``tensor_ops`` is used under ``create_graph=True``: rules see gradiente
Tensors, every step of the backward pass is itself recorded, and higher-order derivatives follow. Both
offer the same names, so each rule is written once. Arithmetic operators (``+ - * / **``) and
``.T``/``.shape`` work on both directly; everything else is called through ``ops``.

A future GPU path adds a third namespace here (CuPy arrays) without touching the rules.
"""
import numpy as np

from .dtype import FROM_NUMPY


def sum_to(array, shape):
    """Sum ``array`` down to ``shape``: the reverse of broadcasting ``shape`` up to ``array.shape``."""
    if array.shape == shape:
        return array
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and array.shape[i + lead] != 1)
    out = array.sum(axis=axes, keepdims=True) if axes else array
    return out.reshape(shape) if lead else out


def _sole_view(array):
    """True if ``array`` owns its memory, or is a view (a transpose, say) that spans all the memory of a plain
    array owning it: keeping ``array`` then keeps no memory outside it."""
    base = array.base
    return base is None or (base.__class__ is np.ndarray and base.base is None and base.nbytes == array.nbytes)


#: an unsigned integer type as wide as a float or complex dtype (complex128 has none: np.where serves it)
_SAME_SIZE_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


class NumpyOps:
    """Rules on raw NumPy arrays (first-order backward)."""

    recording = False
    exp, log, sin, cos, tanh, sqrt, abs = np.exp, np.log, np.sin, np.cos, np.tanh, np.sqrt, np.abs
    cosh, sinh, log1p, expm1, square = np.cosh, np.sinh, np.log1p, np.expm1, np.square
    maximum, minimum, where, matmul, logical_not = np.maximum, np.minimum, np.where, np.matmul, np.logical_not
    sum_to = staticmethod(sum_to)

    @staticmethod
    def unpack_output(saved, node):
        return saved.array

    @staticmethod
    def sign(x):
        """PyTorch's sign: 0 for nan (NumPy gives nan), so that abs passes no nan gradient at nan."""
        s = np.asarray(np.sign(x))          # an array even for 0-d input (NumPy returns a scalar)
        if x.dtype.kind == "f":
            s[np.isnan(x)] = 0
        return s

    @staticmethod
    def sum(x, dim=None, keepdim=False):
        return np.asarray(x.sum(axis=dim, keepdims=keepdim))

    @staticmethod
    def expand(x, shape):
        return np.broadcast_to(x, shape)

    @staticmethod
    def reshape(x, shape):
        return x.reshape(shape)

    @staticmethod
    def unsqueeze(x, dim):
        return np.expand_dims(x, dim)

    @staticmethod
    def transpose(x, a, b):
        return np.swapaxes(x, a, b)

    @staticmethod
    def permute(x, dims):
        return np.transpose(x, dims)

    @staticmethod
    def zeros_like(x):
        return np.zeros_like(x)

    @staticmethod
    def zeros(shape, like):
        return np.zeros(shape, dtype=like.dtype)

    @staticmethod
    def ones_like(x):
        return np.ones_like(x)

    @staticmethod
    def cast(x, np_dtype):
        return x.astype(np_dtype, copy=False)

    @staticmethod
    def mask(condition, x):
        """``x`` where ``condition`` (a non-differentiable boolean array) holds, 0 elsewhere."""
        uint = _SAME_SIZE_UINT.get(x.dtype.itemsize) if x.dtype.kind in "fc" else None
        if uint is None or condition.__class__ is not np.ndarray or condition.dtype != np.bool_ \
                or condition.shape != x.shape:
            return np.where(condition, x, np.zeros((), x.dtype))
        # The same result as np.where, bit for bit, without a branch per element (np.where's branch
        # mispredicts on a ReLU's random mask and costs ~10x more): AND x's bits with all-ones where the
        # condition holds and all-zeros (+0.0) elsewhere.
        bits = np.negative(condition.view(np.uint8), dtype=uint)
        bits &= x.view(uint)
        return bits.view(x.dtype)

    @staticmethod
    def constant(value, like):
        return np.asarray(value, dtype=like.dtype)

    @staticmethod
    def raw(x):
        return x

    @staticmethod
    def fix_meta(grad, shape, np_dtype):
        if grad.shape != shape:
            grad = sum_to(grad, shape) if grad.ndim >= len(shape) else np.broadcast_to(grad, shape)
        if grad.dtype != np_dtype:
            grad = grad.astype(np_dtype)
        return grad

    @staticmethod
    def wrap(array):
        from .tensor import Tensor
        return Tensor._make(array)

    @staticmethod
    def unwrap(tensor):
        return tensor._data

    @staticmethod
    def accumulate(variable, grad, owned=False):
        """Add ``grad`` into ``variable.grad``. The first gradient is stored C-contiguous and of the leaf's
        dtype, as PyTorch stores it: the array itself when the engine vouches that nothing else can reach its
        memory (``owned``) and it already has that form and spans its whole memory, else a copy. (A
        transposed matmul result is copied once here rather than slowing every optimizer step that reads it.)"""
        from .tensor import Tensor
        current = variable._grad
        if current is None:
            dtype = variable._data.dtype
            if (owned and grad.flags.c_contiguous and grad.flags.writeable and grad.dtype == dtype
                    and _sole_view(grad)):
                variable._grad = Tensor._make(grad)
            else:
                variable._grad = Tensor._make(np.array(grad, dtype=dtype, copy=True, order="C"))
        elif current._requires_grad:
            variable._grad = Tensor._make(current._data + grad)
        else:
            current._data += grad

    # --- selection and scans (elementwise-selection and reduction rules) -------------------------------
    @staticmethod
    def select(condition, x, y):
        """``x`` where ``condition`` (a non-differentiable boolean array) holds, ``y`` elsewhere."""
        return np.where(condition, x, y)

    @staticmethod
    def mean(x, dim, keepdim=False):
        return np.asarray(x.mean(axis=dim, keepdims=keepdim))

    @staticmethod
    def cumsum(x, dim):
        # PyTorch's CPU scans accumulate float32 and float16 in double and round each partial result.
        if x.dtype in (np.float32, np.float16):
            return np.cumsum(x, axis=dim, dtype=np.float64).astype(x.dtype)
        return np.cumsum(x, axis=dim)

    @staticmethod
    def cumprod(x, dim):
        if x.dtype in (np.float32, np.float16):
            return np.cumprod(x, axis=dim, dtype=np.float64).astype(x.dtype)
        return np.cumprod(x, axis=dim)

    @staticmethod
    def flip(x, dims):
        return np.flip(x, dims)

    @staticmethod
    def cat(arrays, dim):
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def narrow(x, dim, start, length):
        index = [slice(None)] * x.ndim
        index[dim] = slice(start, start + length)
        return x[tuple(index)]

    @staticmethod
    def xlogy(x, y):
        """x * log(y), 0 where x == 0 unless y is nan (PyTorch's convention)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(x == 0, 0, x * np.log(y))
        return np.where(np.isnan(y), np.nan, out)

    # --- activations and padding (nn.functional rules) ---------------------------------------------------
    @staticmethod
    def sigmoid(x):
        from ..ops.unary import _sigmoid
        return _sigmoid(x)

    @staticmethod
    def erf(x):
        from .erf import erf
        return erf(x)

    @staticmethod
    def constant_pad(x, pad):
        """``x`` padded with zeros (negative entries crop), ``pad`` as in ``nn.functional.pad``."""
        from ..ops.nn.padding import constant_pad_array
        return constant_pad_array(x, pad, 0)

    # --- shape, indexing and linear algebra (shape, indexing and linalg rules) ----------------------------
    @staticmethod
    def getitem(x, index):
        """``x[index]`` for a NumPy-style index with no integer next to an array (NumPy and PyTorch agree)."""
        return x[index]

    @staticmethod
    def embed(values, shape, index):
        """Zeros of ``shape`` with ``values`` added at ``index`` (repeated positions add up): the adjoint of
        ``x[index]``."""
        out = np.zeros(shape, dtype=values.dtype)
        if any(type(i) is np.ndarray and i.dtype != np.bool_ for i in index):
            np.add.at(out, index, values)
        else:
            out[index] = values
        return out

    @staticmethod
    def stack(arrays, dim):
        return np.stack(arrays, axis=dim)

    @staticmethod
    def roll(x, shifts, dims):
        if dims is None:
            return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
        return np.roll(x, shifts, dims)

    @staticmethod
    def tril(x, k):
        return np.tril(x, k)

    @staticmethod
    def triu(x, k):
        return np.triu(x, k)

    @staticmethod
    def einsum(equation, *operands):
        return np.einsum(equation, *operands, optimize=len(operands) > 1)

    @staticmethod
    def put(x, index, values):
        """A copy of ``x`` with the elements at flat (C-order) positions ``index`` replaced by ``values``
        (``torch.put``): how an in-place change through a view reaches its base's gradient."""
        out = np.array(x, copy=True, order="C")
        np.put(out, index, values)
        return out


class TensorOps:
    """Rules on gradiente Tensors, recorded (``create_graph=True``)."""

    recording = True

    def __getattr__(self, name):
        # Every name not defined below (exp, where, matmul, reshape, cat, cumsum, einsum, ...) is the gradiente
        # function of the same name, which takes the arguments NumpyOps' method of that name takes.
        import gradiente
        fn = getattr(gradiente, name)
        setattr(self, name, fn)
        return fn

    @staticmethod
    def unpack_output(saved, node):
        from .tensor import Tensor
        t = Tensor._make(saved.array, saved.requires_grad)
        if saved.requires_grad:
            t.grad_fn, t._output_nr = node, saved.output_nr
        return t

    @staticmethod
    def sum_to(x, shape):
        return x.sum_to_size(shape) if tuple(x.shape) != tuple(shape) else x

    @staticmethod
    def sum(x, dim=None, keepdim=False):
        return x.sum() if dim is None and not keepdim else x.sum(dim if dim is not None else tuple(range(x.dim())),
                                                                  keepdim=keepdim)

    @staticmethod
    def expand(x, shape):
        return x.expand(shape)

    @staticmethod
    def zeros(shape, like):
        import gradiente
        return gradiente.zeros(shape, dtype=like.dtype)

    @staticmethod
    def cast(x, np_dtype):
        return x.to(FROM_NUMPY[np.dtype(np_dtype)])

    @staticmethod
    def mask(condition, x):
        import gradiente
        cond = condition._data if hasattr(condition, "_data") else condition
        return gradiente.where(gradiente.from_numpy(np.asarray(cond)), x, gradiente.zeros((), dtype=x.dtype))

    @staticmethod
    def constant(value, like):
        import gradiente
        return gradiente.tensor(value, dtype=like.dtype)

    @staticmethod
    def raw(x):
        return x._data

    @staticmethod
    def logical_not(condition):
        # A condition is a raw boolean array in both namespaces: it carries no gradient (see ``mask``).
        return np.logical_not(condition)

    @staticmethod
    def fix_meta(grad, shape, np_dtype):
        if tuple(grad.shape) != tuple(shape):
            grad = grad.sum_to_size(shape) if grad.dim() >= len(shape) else grad.expand(shape)
        if grad._data.dtype != np_dtype:
            grad = grad.to(FROM_NUMPY[np.dtype(np_dtype)])
        return grad

    @staticmethod
    def wrap(tensor):
        return tensor

    @staticmethod
    def unwrap(tensor):
        return tensor

    @staticmethod
    def accumulate(variable, grad, owned=False):
        """Add ``grad`` into ``variable.grad``, recorded. The first gradient is always copied (PyTorch's
        CopyBackwards when ``grad`` requires grad): under create_graph it may be a tensor the user holds."""
        import gradiente
        current = variable._grad
        if current is None:
            variable._grad = gradiente.empty(variable._data.shape, dtype=variable.dtype).copy_(grad)
        else:
            variable._grad = current + grad

    # --- selection (elementwise-selection rules); the scans come from __getattr__ ------------------------
    @staticmethod
    def select(condition, x, y):
        import gradiente
        cond = condition._data if hasattr(condition, "_data") else np.asarray(condition)
        return gradiente.where(gradiente.from_numpy(cond), x, y)

    # --- activations and padding (nn.functional rules); sigmoid and erf come from __getattr__ -------------
    @staticmethod
    def constant_pad(x, pad):
        from ..nn.functional import pad as pad_fn
        return pad_fn(x, pad)

    # --- shape, indexing and linear algebra (shape, indexing and linalg rules) ----------------------------
    @staticmethod
    def getitem(x, index):
        return x[index]

    @staticmethod
    def embed(values, shape, index):
        from ..ops.indexing import embed
        return embed(values, shape, index)

    @staticmethod
    def put(x, index, values):
        import gradiente

        from ..ops.indexing import embed
        inside = np.zeros(x._data.size, dtype=bool)
        inside[index.reshape(-1)] = True
        placed = embed(values.reshape(-1), (inside.size,), (index.reshape(-1),))
        return gradiente.where(gradiente.from_numpy(inside.reshape(x._data.shape)), placed.reshape(x.shape), x)


numpy_ops = NumpyOps()
tensor_ops = TensorOps()
