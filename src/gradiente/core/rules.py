"""The seam between derivative rules and array math: the namespace ``ops`` every rule computes with.

A rule (``Node.backward``) never calls NumPy or gradiente directly; it calls ``ops.exp(x)``, ``ops.sum_to(g,
shape)``, ``ops.mask(cond, g)``. ``RuleOps`` below is that interface: every name a rule may use, with its
meaning. Two namespaces implement it, name for name, taking the same arguments (a test checks it):

* ``NumpyOps`` (here): rules see NumPy arrays and nothing is recorded. An ordinary backward pass uses it,
  which keeps the cost per node low.
* ``TensorOps`` (``ops/tensor_rules.py``): rules see gradiente Tensors, and every step of the backward pass is
  itself recorded, so higher-order derivatives follow (``create_graph=True``). It calls the ops, which stand a
  floor above the core, so the ops package hands it down once, at import, through ``use_tensor_ops``.

Arithmetic operators (``+ - * / **``) and ``.T``/``.shape`` work on both directly. Each rule is written once.
"""
from typing import Any

import numpy as np

from . import blas_order, rounded_math, vml_sqrt
from . import dtype as dt
from . import tensor as _tensor  # a module: tensor -> node -> rules -> tensor is a cycle within the core
from .c_expf import c_expf
from .creation import once_per_element
from .erf import erf as erf_array
from .fused import one_minus_square
from .grad_dtype import first_grad_dtype
from .grad_layout import empty_in_contract_layout, obeys_layout_contract
from .grad_layout import is_enforced as grad_layout_enforced
from .meta import MetaArray
from .power import power, rounded_power
from .scatter import add_rows_at
from .summation import mean_as_torch, sum_as_torch, torch_order_sums
from .vector_exp import sleef_exp
from .vector_loop import in_row_blocks, in_vector_blocks


def sum_to(array, shape):
    """Sum ``array`` down to ``shape``: the reverse of broadcasting ``shape`` up to ``array.shape``."""
    if array.shape == shape:
        return array
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and array.shape[i + lead] != 1)
    if not axes:
        return array.reshape(shape) if lead else array
    # np.add.reduce (what ndarray.sum calls) from here, so that an overflow's RuntimeWarning is gradiente's own, and
    # silenced as PyTorch is silent; bfloat16 accumulates in float32 and is rounded once, as PyTorch's sum
    if array.dtype == dt.BFLOAT16:
        out = np.add.reduce(array, axis=axes, keepdims=True, dtype=np.float32).astype(dt.BFLOAT16)
    else:
        # over everything, the last dim or the leading ones (a bias's gradient) PyTorch's sum kernel adds in an order
        # of its own (summation.py): a gradient reduced here equals the same sum written by hand, as in PyTorch
        out = torch_order_sums(array, axes)
        if out is None:
            out = np.add.reduce(array, axis=axes, keepdims=True)
        else:
            out = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(array.shape)))
    return out.reshape(shape) if lead else out


def sigmoid_array(a):
    """1 / (1 + e^-a), PyTorch's formula, so that results agree to the last bit (e^-a may overflow to inf,
    giving 0)."""
    with np.errstate(over="ignore"):
        if a.dtype == np.float32:
            # e^-a as the C library's expf rounds it (c_expf.py), which PyTorch's scalar code calls: NumPy's float32
            # exp is off by an ulp in many values, and silu's gradient (σ's) then in more (seed 2789)
            return np.float32(1) / (np.float32(1) + c_expf(-a))
        return (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False)


def one_plus_sleef_exp_of_minus(x):
    """1 + e^-x with Sleef's exponential (``vector_exp.sleef_exp``), as sigmoid's and silu's vector code take it."""
    e = sleef_exp(np.negative(x))
    e += np.float32(1)
    return e


def _sigmoid_vector_code(x):
    """1 / (1 + e^-x) as sigmoid's vector code computes it (Sleef's e^-x)."""
    return np.float32(1) / one_plus_sleef_exp_of_minus(x)


def sigmoid_kernel_array(a):
    """``torch.sigmoid``'s values: 1 / (1 + e^-x) with Sleef's exponential on the vector blocks, and the C library's
    (correctly rounded, as ``sigmoid_array``'s) on the rest (``in_vector_blocks``)."""
    return in_vector_blocks(a, _sigmoid_vector_code, sigmoid_array)


def sigmoid_row_kernel_array(a):
    """``sigmoid_kernel_array`` of each row of ``a`` on its own (``in_row_blocks``): ``Tensor.sigmoid_`` of a
    chunk view."""
    return in_row_blocks(a, _sigmoid_vector_code, sigmoid_array)


def tanh_backward_array(grad, out):
    """grad·(1 - out²) with ``1 - out²`` rounded once, as PyTorch's CPU kernel computes it (a fused multiply-add),
    so a hand-derived ``(1 - h**2) * dh`` differs from autograd's in the last bit exactly where it does in PyTorch."""
    if out.dtype.kind != "f" or out.dtype.itemsize == 2:
        return grad * (1 - out * out)
    return grad * one_minus_square(out)


def sigmoid_backward_array(grad, out):
    """(grad·(1 - out))·out, in the order PyTorch's CPU kernel multiplies (the product rounds differently in any
    other order)."""
    return grad * (1 - out) * out


def pad_amounts(pad, ndim):
    """``(dim, before, after)`` for each dim a ``pad`` list (last_before, last_after, ...) names, last dim first."""
    return [(ndim - 1 - j, pad[2 * j], pad[2 * j + 1]) for j in range(len(pad) // 2)]


def constant_pad_array(a, pad, value):
    """``a`` padded with ``value`` (negative amounts crop), ``pad`` as in ``nn.functional.pad``."""
    shape = list(a.shape)
    source, target = [slice(None)] * a.ndim, [slice(None)] * a.ndim
    for dim, before, after in pad_amounts(pad, a.ndim):
        n = a.shape[dim]
        start, stop = max(-before, 0), n - max(-after, 0)
        if stop < start:
            raise RuntimeError("narrow(): length must be non-negative.")
        shape[dim] = n + before + after
        source[dim] = slice(start, stop)
        target[dim] = slice(max(before, 0), max(before, 0) + stop - start)
    out = np.full_like(a, value, shape=shape, order="C")       # (meta for a meta ``a``: core/meta.py)
    out[tuple(target)] = a[tuple(source)]
    return out


def _sole_view(array):
    """True if ``array`` owns its memory, or is a view (a transpose, say) that spans all the memory of a plain
    array owning it: keeping ``array`` then keeps no memory outside it."""
    base = array.base
    return base is None or (base.__class__ is np.ndarray and base.base is None and base.nbytes == array.nbytes)


#: an unsigned integer type as wide as a float or complex dtype (complex128 has none: np.where serves it)
_SAME_SIZE_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
#: (by name: bfloat16's NumPy type is imported on first use, core/dtype.py)
_SCAN_ACCUMULATOR = {"float32": np.float64, "float16": np.float64, "bfloat16": np.float32}


class RuleOps:
    """The interface: every name a rule may call on its ``ops``, and what it means. ``NumpyOps`` and
    ``TensorOps`` define each one themselves, taking these arguments; here each is only documented.
    ``x``, ``y`` are values of the namespace (arrays or tensors); a ``condition`` is always a raw boolean
    array (it carries no gradient); ``shape``/``dim``/``dims`` are Python ints and tuples."""

    #: whether values are recorded Tensors (create_graph) rather than NumPy arrays
    recording: bool

    # --- elementwise math (each as PyTorch computes it)
    def exp(self, x): """e^x"""
    def log(self, x): """ln x"""
    def log1p(self, x): """ln(1 + x)"""
    def sqrt(self, x): """√x"""
    def sin(self, x): """sin x"""
    def cos(self, x): """cos x"""
    def sinh(self, x): """sinh x"""
    def cosh(self, x): """cosh x"""
    def tanh(self, x): """tanh x"""
    def abs(self, x): """|x|"""
    def conj(self, x): """the complex conjugate (x itself when real)"""
    def real(self, x): """the real part (x itself when real)"""
    def imag(self, x): """the imaginary part of a complex x"""
    def sign(self, x): """-1, 0 or 1 (0 at nan, as PyTorch's sign); z/|z| for complex z (sgn)"""
    def sigmoid(self, x): """1 / (1 + e^-x)"""
    def erf(self, x): """the error function"""
    def xlogy(self, x, y): """x·ln y, 0 where x == 0 (unless y is nan)"""
    def pow(self, x, p): """x ** p, p a number or a value like x, rounded as the forward pow (PyTorch's kernel)"""
    def matmul(self, x, y): """the matrix product, NumPy's/PyTorch's matmul"""
    def einsum(self, equation, *operands): """Einstein summation"""
    def logical_not(self, condition): """not, of a raw boolean condition (a raw boolean array again)"""

    # --- making and unmaking values
    def raw(self, x): """the NumPy array behind x (for conditions and shapes; no gradient flows through it)"""
    def wrap(self, array): """a gradient as hooks see it: a Tensor"""
    def unwrap(self, tensor): """a hook's Tensor back as the namespace's value"""
    def constant(self, value, like): """``value`` (a number or array) as a value of ``like``'s dtype"""
    def zeros(self, shape, like): """zeros of ``shape`` in ``like``'s dtype"""
    def times_number(self, x, c): """x · c for a real Python number c (MulBackward1 when recorded, as PyTorch's
        formulas record a product with a number)"""
    def over_number(self, x, c): """x / c for a real Python number c (DivBackward1 when recorded)"""
    def zeros_like(self, x): """zeros shaped and typed like x"""
    def ones_like(self, x): """ones shaped and typed like x"""
    def unpack_output(self, saved, node): """a node's saved output (``_SavedOutput``) as a value; under
        create_graph a tensor whose grad_fn is ``node``, so derivatives flow back through it"""

    # --- the engine's own steps
    def sum_to(self, x, shape): """x summed down to ``shape``: the reverse of broadcasting"""
    def fix_meta(self, grad, shape, np_dtype): """grad brought to an input's shape and dtype (un-broadcast)"""
    def accumulate(self, variable, grad, owned=False):
        """add grad into the leaf ``variable``'s .grad; ``owned``: the engine vouches nothing else holds grad"""

    # --- selection, reductions and scans
    def mask(self, condition, x): """x where the condition holds, 0 elsewhere"""
    def threshold_backward(self, grad, x, threshold):
        """grad where x > threshold (or nan), 0 elsewhere: relu's and threshold's derivative, recorded under
        create_graph as the one node PyTorch records (ThresholdBackwardBackward0)"""
    def tanh_backward(self, grad, out):
        """grad·(1 - out²): tanh's derivative from its output, rounded as PyTorch's kernel rounds it and recorded
        under create_graph as the one node PyTorch records (TanhBackwardBackward0)"""
    def sigmoid_backward(self, grad, out):
        """grad·(1 - out)·out: sigmoid's derivative from its output (SigmoidBackwardBackward0 under create_graph)"""
    def select(self, condition, x, y): """x where the condition holds, y elsewhere"""
    def sum(self, x, dim=None, keepdim=False): """the sum over ``dim`` (an int or tuple; all if None)"""
    def mean(self, x, dim, keepdim=False): """the mean over ``dim``"""
    def cumsum(self, x, dim): """running sums along dim (float32/16 accumulate in double, as PyTorch's CPU)"""
    def cumprod(self, x, dim): """running products along dim (likewise)"""

    # --- shapes
    def expand(self, x, shape): """x broadcast to shape (a view)"""
    def reshape(self, x, shape): """x reshaped"""
    def unsqueeze(self, x, dim): """x with a new axis of size 1 at dim"""
    def transpose(self, x, a, b): """x with axes a and b swapped"""
    def permute(self, x, dims): """x with its axes in the order ``dims``"""
    def narrow(self, x, dim, start, length): """x[..., start:start + length, ...] along dim"""
    def flip(self, x, dims): """x reversed along each of dims"""
    def roll(self, x, shifts, dims): """x rolled by shifts along dims (flattened if dims is None)"""
    def tril(self, x, k): """the lower triangle (diagonal k and below) of the last two axes"""
    def triu(self, x, k): """the upper triangle (diagonal k and above) of the last two axes"""
    def cat(self, arrays, dim): """concatenation along dim"""
    def stack(self, arrays, dim): """stacking along a new axis dim"""
    def constant_pad(self, x, pad): """x padded with zeros (negative amounts crop), pad as in F.pad"""

    # --- indexing
    def getitem(self, x, index): """x[index] for a NumPy-style index (no integer next to an array)"""
    def embed(self, values, shape, index): """zeros of shape with values added at index (repeats add up): the
        adjoint of x[index]"""
    def put(self, x, index, values): """a copy of x with the elements at flat positions index replaced"""


def _rounded_once(array_fn):
    """``array_fn`` computing a bfloat16 array in float32 and rounding its result once, as PyTorch's kernel for that
    op does (NumPy would round after each of its steps, or accumulate a sum in bfloat16); other arrays as they are."""
    def on_arrays(x, *args, **kwargs):
        if x.dtype == dt.BFLOAT16:
            return np.asanyarray(array_fn(x.astype(np.float32), *args, **kwargs)).astype(dt.BFLOAT16)
        return array_fn(x, *args, **kwargs)
    on_arrays.__name__ = on_arrays.__qualname__ = array_fn.__name__
    on_arrays.__doc__ = array_fn.__doc__
    return on_arrays


def _matmul(x, y):
    """NumPy's matmul, bfloat16 multiplied in float32 and rounded once (as PyTorch's CPU gemm accumulates)."""
    if dt.BFLOAT16 in (x.dtype, y.dtype):
        result = np.matmul(dt.widened(x), dt.widened(y))
        return result.astype(dt.BFLOAT16) if x.dtype == y.dtype else result
    if x.ndim == 3 and y.ndim == 3:
        if x.shape[-1] == 1:
            # stacks of outer products (per-example weight gradients under vmap): with one term per element, the
            # broadcast product is the same numbers, about twice as fast as NumPy's loop of tiny matrix products
            return x * y
        # one matrix broadcast over the stack (a parameter under vmap, expanded: a batch stride of 0): one matrix
        # product over all the rows at once, where NumPy would copy the expansion and loop
        if x.strides[0] == 0 and x.shape[0] == y.shape[0]:
            return (y.transpose(0, 2, 1).reshape(-1, y.shape[1]) @ x[0].T).reshape(
                y.shape[0], y.shape[2], x.shape[1]).transpose(0, 2, 1)
        if y.strides[0] == 0 and x.shape[0] == y.shape[0]:
            return (x.reshape(-1, x.shape[2]) @ y[0]).reshape(x.shape[0], x.shape[1], y.shape[2])
        return blas_order.bmm(x, y)         # (a stack's gradient is PyTorch's bmm too)
    return blas_order.matmul(x, y)


def _once_per_element(ufunc):
    """``ufunc`` on arrays, evaluated once per distinct element of a broadcast input (see ``once_per_element``)."""
    def on_arrays(x):
        if x.__class__ is np.ndarray and 0 in x.strides and x.size:
            return once_per_element(ufunc, x)
        return ufunc(x)
    on_arrays.__name__ = on_arrays.__qualname__ = ufunc.__name__
    return on_arrays


class NumpyOps:
    """``RuleOps`` on raw NumPy arrays (an ordinary, first-order backward pass)."""

    recording = False
    # the transcendental ones evaluate a broadcast input once per distinct element (``once_per_element``): the
    # saved inputs of a graph vmapped for a Jacobian are the same values expanded over the rows of an identity
    exp, log, log1p, sqrt, sin, cos, sinh, cosh, tanh = (
        staticmethod(_once_per_element(f))
        # (rounded as the forward ops round: a backward's sin or exp is the same kernel in PyTorch)
        for f in (rounded_math.exp, rounded_math.log, rounded_math.log1p, vml_sqrt.sqrt, rounded_math.sin,
                  rounded_math.cos, rounded_math.sinh, rounded_math.cosh, rounded_math.tanh))
    abs = np.abs
    logical_not = np.logical_not
    sum_to = staticmethod(sum_to)
    matmul = staticmethod(_matmul)

    @staticmethod
    def unpack_output(saved, node):
        return saved.array

    @staticmethod
    def conj(x):
        return np.conj(x) if x.dtype.kind == "c" else x

    @staticmethod
    def real(x):
        return x.real if x.dtype.kind == "c" else x

    @staticmethod
    def imag(x):
        return x.imag

    @staticmethod
    def sign(x):
        """PyTorch's sign: 0 for nan (NumPy gives nan), so that abs passes no nan gradient at nan."""
        s = np.asanyarray(np.sign(x))          # an array even for 0-d input (NumPy returns a scalar)
        if dt.kind(x.dtype) == "f":
            s[np.isnan(x)] = 0
        return s

    @staticmethod
    @_rounded_once
    def sum(x, dim=None, keepdim=False):
        return np.asanyarray(sum_as_torch(x, dim, keepdim))

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
    def times_number(x, c):
        return x * c

    @staticmethod
    def over_number(x, c):
        return x / c

    @staticmethod
    def ones_like(x):
        return np.ones_like(x)

    @staticmethod
    def threshold_backward(grad, x, threshold):
        return NumpyOps.mask(~(x <= threshold), grad)

    tanh_backward = staticmethod(tanh_backward_array)
    sigmoid_backward = staticmethod(sigmoid_backward_array)

    @staticmethod
    def mask(condition, x):
        """``x`` where ``condition`` (a non-differentiable boolean array) holds, 0 elsewhere."""
        uint = _SAME_SIZE_UINT.get(x.dtype.itemsize) if dt.kind(x.dtype) in "fc" else None
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
        return np.asanyarray(value, dtype=like.dtype)

    @staticmethod
    def raw(x):
        return x

    @staticmethod
    def fix_meta(grad, shape, np_dtype):
        if grad.shape != shape:
            grad = sum_to(grad, shape) if grad.ndim >= len(shape) else np.broadcast_to(grad, shape)
        if grad.dtype != np_dtype:
            # a real input's share of a complex gradient is its real part (PyTorch's handle_r_to_c)
            grad = (grad.real if grad.dtype.kind == "c" and np_dtype.kind != "c" else grad).astype(np_dtype)
        return grad

    @staticmethod
    def wrap(array):
        return _tensor.Tensor._make(array)

    @staticmethod
    def unwrap(tensor):
        return tensor._data

    @staticmethod
    def accumulate(variable, grad, owned=False):
        """Add ``grad`` into ``variable.grad``. The first gradient is stored in the leaf's dtype (or its
        ``grad_dtype``) and in the layout of PyTorch's gradient layout contract (``core/grad_layout.py``: the
        leaf's strides for a dense leaf, C-contiguous otherwise): the array itself when the engine vouches that
        nothing else can reach its memory (``owned``) and it already has that form and spans its whole memory,
        else a copy. (A transposed matmul result is copied once here rather than slowing every optimizer step
        that reads it.)"""
        current = variable._grad
        if current is None:
            dtype = first_grad_dtype(variable, grad.dtype)
            if type(grad) is MetaArray:     # a meta gradient (core/meta.py) has no memory to lay out or share
                variable._grad = _tensor.Tensor._make(grad.astype(dtype))
            elif (owned and grad.flags.writeable and grad.dtype == dtype and _sole_view(grad)
                    and (obeys_layout_contract(grad, variable) or not grad_layout_enforced())):
                variable._grad = _tensor.Tensor._make(grad)
            else:
                array = empty_in_contract_layout(variable, dtype)
                array[...] = grad
                variable._grad = _tensor.Tensor._make(array)
        elif current._requires_grad:
            variable._grad = _tensor.Tensor._make(current._data + grad)
        else:
            current._data += grad

    # --- selection and scans (elementwise-selection and reduction rules) -------------------------------
    @staticmethod
    def select(condition, x, y):
        """``x`` where ``condition`` (a non-differentiable boolean array) holds, ``y`` elsewhere."""
        return np.where(condition, x, y)

    @staticmethod
    @_rounded_once
    def mean(x, dim, keepdim=False):
        return np.asanyarray(mean_as_torch(x, dim, keepdim))

    @staticmethod
    def cumsum(x, dim):
        # PyTorch's CPU scans accumulate in a wider type (its acc_type: double for float32 and float16, float for
        # bfloat16) and round each partial result.
        if x.dtype.name in _SCAN_ACCUMULATOR:
            return np.cumsum(x, axis=dim, dtype=_SCAN_ACCUMULATOR[x.dtype.name]).astype(x.dtype)
        return np.cumsum(x, axis=dim)

    @staticmethod
    def cumprod(x, dim):
        if x.dtype.name in _SCAN_ACCUMULATOR:
            return np.cumprod(x, axis=dim, dtype=_SCAN_ACCUMULATOR[x.dtype.name]).astype(x.dtype)
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
    def pow(x, p):
        return power(x, p) if np.ndim(p) == 0 else rounded_power(x, p)

    @staticmethod
    def xlogy(x, y):
        """x * log(y), 0 where x == 0 unless y is nan (PyTorch's convention)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(x == 0, 0, x * np.log(y))
        return np.where(np.isnan(y), np.nan, out)

    # --- activations and padding (nn.functional rules) ---------------------------------------------------
    sigmoid = staticmethod(_rounded_once(sigmoid_array))
    erf = staticmethod(_rounded_once(erf_array))

    @staticmethod
    def constant_pad(x, pad):
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
        if (len(index) == 1 and type(index[0]) is np.ndarray and index[0].ndim == 1 and index[0].dtype.kind in "iu"
                and len(shape) > 1 and values.shape == (index[0].size, *shape[1:])):
            # x[rows] of whole rows (an embedding-like lookup): np.add.at's sums, faster (core/scatter.py)
            rows = index[0] % shape[0] if index[0].dtype.kind == "i" else index[0]
            add_rows_at(out.reshape(shape[0], -1), rows, values.reshape(rows.size, -1))
        elif any(type(i) is np.ndarray and i.dtype != np.bool_ for i in index):
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
        if any(o.dtype == dt.BFLOAT16 for o in operands):
            return np.einsum(equation, *map(dt.widened, operands), optimize=len(operands) > 1).astype(dt.BFLOAT16)
        return np.einsum(equation, *operands, optimize=len(operands) > 1)

    @staticmethod
    def put(x, index, values):
        """A copy of ``x`` with the elements at flat (C-order) positions ``index`` replaced by ``values``
        (``torch.put``): how an in-place change through a view reaches its base's gradient."""
        out = np.array(x, copy=True, order="C")
        np.put(out, index, values)
        return out


numpy_ops = NumpyOps()
#: the Tensor namespace, handed down by the ops package at import (``use_tensor_ops``)
tensor_ops: "RuleOps | None" = None


def namespace(create_graph):
    """The namespace a backward pass computes with: ``tensor_ops`` under create_graph, else ``numpy_ops``."""
    if not create_graph:
        return numpy_ops
    assert tensor_ops is not None, "gradiente.ops hands TensorOps down when it is imported"
    return tensor_ops


def use_tensor_ops(tensor_namespace):
    """Install ``namespace`` (``ops.tensor_rules.TensorOps()``) as the rules' namespace under create_graph."""
    global tensor_ops  # noqa: PLW0603 - set once, at import, by the ops package
    tensor_ops = tensor_namespace


# --- values batched by vmap ---------------------------------------------------------------------------------
#: the namespace on vmap-batched values (``func/_batched_rule_ops.py``): rules run on a batched gradient or
#: tangent through vmap's dispatch. Handed down when ``gradiente.func`` is imported (a batched value exists
#: only inside a vmap, so always before one is met).
batched_ops: Any = None


def use_batched_ops(namespace):
    global batched_ops  # noqa: PLW0603 - set once, at import, by gradiente.func
    batched_ops = namespace


def is_batched(value):
    """Whether ``value`` is a vmap-batched tensor (its values live in a physical tensor, not in ``_data``)."""
    return value.__class__ is not _tensor.Tensor and batched_ops is not None and batched_ops.is_batched(value)


def array_of(value):
    """The array behind a Tensor (a batched one's physical array, batch dims in front)."""
    return batched_ops.physical(value)._data if is_batched(value) else value._data


def meta_of(value):
    """A Tensor's shape (logical, for a batched one) and NumPy dtype."""
    if is_batched(value):
        return tuple(value.shape), batched_ops.physical(value)._data.dtype
    return value._data.shape, value._data.dtype

