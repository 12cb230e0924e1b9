"""Elementwise operations: arithmetic; selection (``clamp``, ``where``, ``maximum`` ...); binary math
(``atan2``, ``lerp``, ``hypot``, ``xlogy``); filling and copying in place (``zero_``, ``fill_``, ``copy_``);
casts. The unary math table lives in ``unary``, comparisons and logical ops in ``comparison``.

Each op is a forward function next to its node class; each node's docstring is its math. The gradients
of broadcast inputs are reduced by the engine, never here.
"""
from typing import ClassVar

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import Node
from ..autograd.rule_ops import numpy_ops
from ._record import as_result, promote_operands, record, tensor_method, wants_grad, wrap

__all__ = [
    "add",
    "arctan2",
    "atan2",
    "clamp",
    "clamp_max",
    "clamp_min",
    "clip",
    "div",
    "divide",
    "fill",
    "fill_",
    "float_power",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "hypot",
    "lerp",
    "maximum",
    "minimum",
    "mul",
    "multiply",
    "neg",
    "negative",
    "positive",
    "pow",
    "reciprocal",
    "remainder",
    "rsub",
    "square",
    "sub",
    "subtract",
    "true_divide",
    "where",
    "xlogy",
    "zero_",
]

_FLOAT_DEFAULT = dt.get_default_dtype


# --- binary arithmetic ---------------------------------------------------------------------------------

class AddBackward0(Node):
    """out = x + alpha * y;  dx = grad;  dy = alpha * grad"""
    __slots__ = ()
    formula = "∂(x + y)/∂x = 1,  ∂(x + y)/∂y = 1"

    def backward(self, ops, grad):
        alpha = self.__dict__.get("alpha", 1)
        return grad, (grad if alpha == 1 else grad * alpha)


class SubBackward0(Node):
    """out = x - alpha * y;  dx = grad;  dy = -alpha * grad"""
    __slots__ = ()
    formula = "∂(x - y)/∂x = 1,  ∂(x - y)/∂y = -1"

    def backward(self, ops, grad):
        return grad, -grad * self.__dict__.get("alpha", 1)


class RsubBackward1(Node):
    """out = c - x;  dx = -grad"""
    __slots__ = ()
    formula = "∂(c - x)/∂x = -1"

    def backward(self, ops, grad):
        return (-grad,)


class MulBackward0(Node):
    """out = x * y;  dx = grad * y;  dy = grad * x"""
    __slots__ = ()
    formula = "∂(x·y)/∂x = y,  ∂(x·y)/∂y = x"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (grad * y if edges[0][0] is not None else None,
                grad * x if edges[1][0] is not None else None)


class DivBackward0(Node):
    """out = x / y;  dx = grad / y;  dy = -grad * x / y²"""
    __slots__ = ()
    formula = "∂(x/y)/∂x = 1/y,  ∂(x/y)/∂y = -x/y²"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        return (grad / y if edges[0][0] is not None else None,
                -grad * x / (y * y) if edges[1][0] is not None else None)


class ReciprocalBackward0(Node):
    """out = 1 / x;  dx = -grad * out²"""
    __slots__ = ()
    formula = "d/dx (1/x) = -1/x²"

    def backward(self, ops, grad):
        (out,) = self.saved(ops)
        return (-grad * (out * out),)


class PowBackward0(Node):
    """out = x ** p (p a number);  dx = grad * p * x ** (p - 1)"""
    formula = "d/dx xⁿ = n·xⁿ⁻¹"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        p = self.exponent
        if p == 0:
            return (grad * 0,)
        return (grad * (p * x ** (p - 1)),)


class PowBackward1(Node):
    """out = x ** y;  dx = grad * y * x ** (y - 1);  dy = grad * out * log(x)"""
    __slots__ = ()
    formula = "∂(xʸ)/∂x = y·xʸ⁻¹,  ∂(xʸ)/∂y = xʸ·ln x"

    def backward(self, ops, grad):
        x, y, out = self.saved(ops)
        edges = self.next_functions
        dx = grad * (y * x ** (y - 1)) if edges[0][0] is not None else None
        dy = None
        if edges[1][0] is not None:
            # PyTorch's convention: where x == 0 and y >= 0 the y-derivative is 0, not nan.
            dy = ops.mask(ops.logical_not((ops.raw(x) == 0) & (ops.raw(y) >= 0)), grad * (out * ops.log(x)))
        return dx, dy


class PowBackward2(Node):
    """out = c ** x (c a number);  dx = grad * out * log(c)"""
    formula = "d/dx cˣ = cˣ·ln c"

    def backward(self, ops, grad):
        (out,) = self.saved(ops)
        c = self.base
        if c == 0:
            return (ops.mask(ops.raw(out) * 0 == 0, grad * 0),)
        return (grad * (out * float(np.log(c))),)


class NegBackward0(Node):
    """out = -x;  dx = -grad"""
    __slots__ = ()
    formula = "d/dx (-x) = -1"

    def backward(self, ops, grad):
        return (-grad,)


def _binary(x, y, fn, node_cls, floating=False, save=True):
    """The shared body of binary ops: promote, compute, wrap, record.

    ``save``: True keeps both operands for the rule, False neither, or a function
    ``save(x, y, x_needs_grad, y_needs_grad)`` returning what to keep: keeping only what the rule will read
    lets the graph release the other operand (as PyTorch does), which matters for long chains."""
    xa, ya, target = promote_operands(x, y, floating)
    try:
        out = fn(xa, ya)
    except ValueError:
        raise broadcast_error(np.shape(xa), np.shape(ya)) from None
    out = wrap(out) if out.__class__ is np.ndarray and out.dtype == target else as_result(out, target)
    if _grad_state.enabled and ((isinstance(x, Tensor) and x._requires_grad) or
                                (isinstance(y, Tensor) and y._requires_grad)):
        if out._data.dtype.kind not in "fc":
            raise RuntimeError("derivative for this operation is not implemented for integer results")
        if save is True:
            saved = (x, y)
        elif save is False:
            saved = ()
        else:
            saved = save(x, y, isinstance(x, Tensor) and x._requires_grad, isinstance(y, Tensor) and y._requires_grad)
        record(node_cls, (x, y), out, saved)
    return out


def _mul_saves(x, y, x_needs, y_needs):
    """dx = grad·y needs y; dy = grad·x needs x."""
    return (x if y_needs else None, y if x_needs else None)


def _div_saves(x, y, x_needs, y_needs):
    """dx = grad/y needs y; dy = -grad·x/y² needs x and y."""
    return (x if y_needs else None, y)


def _check_differentiable(out):
    if out._data.dtype.kind not in "fc":
        raise RuntimeError("derivative for this operation is not implemented for integer results")


def _scale(y, alpha):
    if alpha == 1:
        return y
    return y * alpha


@tensor_method("add", "__add__", "__radd__")
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, broadcasting."""
    if alpha != 1:
        other = _scale(other, alpha)
    result = _binary(input, other, np.add, AddBackward0, save=False)
    return result if out is None else _write_out(result, out)


@tensor_method("sub", "subtract", "__sub__")
def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other, broadcasting."""
    if isinstance(input, Tensor) and input._data.dtype == np.bool_ and isinstance(other, Tensor) \
            and other._data.dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        other = _scale(other, alpha)
    if not isinstance(input, Tensor):
        return rsub(other, input)
    return _write_out(_binary(input, other, np.subtract, SubBackward0, save=False), out)


subtract = sub


@tensor_method("__rsub__")
def rsub(input, other, alpha=1):
    """other - alpha * input (``2 - x``)."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    xa, ca, target = promote_operands(input, other)
    out = as_result(np.subtract(ca, xa), target)
    if wants_grad(input):
        record(RsubBackward1, (input,), out)
    return out


@tensor_method("mul", "multiply", "__mul__", "__rmul__")
def mul(input, other, *, out=None):
    """input * other, broadcasting."""
    result = _binary(input, other, np.multiply, MulBackward0, save=_mul_saves)
    return result if out is None else _write_out(result, out)


multiply = mul


@tensor_method("div", "divide", "true_divide", "__truediv__")
def div(input, other, *, rounding_mode=None, out=None):
    """input / other; integer inputs give the default float dtype unless a rounding_mode is given."""
    if rounding_mode is not None:
        return _write_out(_rounded_div(input, other, rounding_mode), out)
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    return _write_out(_binary(input, other, np.true_divide, DivBackward0, floating=True, save=_div_saves), out)


divide = true_divide = div


@tensor_method("__rtruediv__")
def _rtruediv(self, other):
    """``c / x`` is ``reciprocal(x) * c``, as PyTorch records it."""
    return mul(reciprocal(self), other)


def _rounded_div(x, y, mode):
    xa, ya, target = promote_operands(x, y)
    if mode == "floor":
        out = np.floor_divide(xa, ya) if target.kind in "iu" else np.floor(np.true_divide(xa, ya))
    elif mode == "trunc":
        out = np.trunc(np.true_divide(xa, ya)) if target.kind not in "iu" else _int_trunc_div(xa, ya)
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'")
    out = as_result(out, target)
    if wants_grad(x, y):
        record(_ZeroGradBackward.named("DivBackward1" if not isinstance(y, Tensor) else "DivBackward0"),
               (x, y), out)
    return out


def _int_trunc_div(xa, ya):
    q = np.floor_divide(xa, ya)
    fix = (np.remainder(xa, ya) != 0) & ((np.asarray(xa) < 0) != (np.asarray(ya) < 0))
    return q + fix


@tensor_method("floor_divide", "__floordiv__")
def floor_divide(input, other):
    """Floor of input / other. Its gradient is zero almost everywhere; PyTorch does not define one."""
    xa, ya, target = promote_operands(input, other)
    out = np.floor_divide(xa, ya) if target.kind in "iu" else np.floor(np.true_divide(xa, ya))
    out = as_result(out, target)
    if wants_grad(input, other):
        record(_NotImplementedBackward, (input, other), out, op="floor_divide")
    return out


@tensor_method("__rfloordiv__")
def _rfloordiv(self, other):
    return floor_divide(other, self) if isinstance(other, Tensor) else floor_divide(_as_tensor_like(other, self), self)


@tensor_method("remainder", "__mod__")
def remainder(input, other):
    """Python-style modulus (sign of the divisor); d/dx = 1, d/dy = -floor(x / y)."""
    xa, ya, target = promote_operands(input, other)
    out = as_result(np.remainder(xa, ya), target)
    if wants_grad(input, other):
        record(RemainderBackward1 if isinstance(other, Tensor) else RemainderBackward0, (input, other), out,
               (input, other))
    return out


@tensor_method("__rmod__")
def _rmod(self, other):
    return remainder(_as_tensor_like(other, self), self)


@tensor_method("fmod")
def fmod(input, other):
    """C-style modulus (sign of the dividend)."""
    xa, ya, target = promote_operands(input, other)
    out = as_result(np.fmod(xa, ya), target)
    if wants_grad(input, other):
        record(FmodBackward0, (input, other), out, (input, other))
    return out


class RemainderBackward0(Node):
    """out = x - floor(x / y) * y;  dx = grad;  dy = -grad * floor(x / y)"""
    formula = "∂(x mod y)/∂x = 1,  ∂(x mod y)/∂y = -⌊x/y⌋"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        dy = None
        if self.next_functions[1][0] is not None:
            dy = -grad * ops.constant(np.floor(np.true_divide(ops.raw(x), ops.raw(y))), ops.raw(grad))
        return grad, dy


class RemainderBackward1(RemainderBackward0):
    """out = x - floor(x / y) * y with a tensor y (PyTorch's name for the tensor-tensor overload)"""


class FmodBackward0(Node):
    """out = x - trunc(x / y) * y;  dx = grad;  dy = -grad * trunc(x / y)"""
    formula = "∂fmod(x, y)/∂x = 1,  ∂fmod(x, y)/∂y = -trunc(x/y)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        dy = None
        if self.next_functions[1][0] is not None:
            dy = -grad * ops.constant(np.trunc(np.true_divide(ops.raw(x), ops.raw(y))), ops.raw(grad))
        return grad, dy


class _ZeroGradBackward(Node):
    """A piecewise-constant op: its gradient is zero wherever it is defined."""
    formula = "derivative 0 (piecewise constant)"
    _cache: ClassVar[dict] = {}

    @classmethod
    def named(cls, name):
        if name not in cls._cache:
            cls._cache[name] = type(name, (cls,), {"__doc__": cls.__doc__})
        return cls._cache[name]

    def backward(self, ops, grad):
        return tuple(grad * 0 if e[0] is not None else None for e in self.next_functions)


class _NotImplementedBackward(Node):
    """An op PyTorch gives no derivative; backward through it raises as PyTorch does."""
    formula = "no derivative defined"

    def name(self):
        return "NotImplemented"

    def backward(self, ops, grad):
        raise RuntimeError(f"the derivative for '{self.op}' is not implemented.")


_NotImplementedBackward.__name__ = "NotImplemented"
_NotImplementedBackward.__qualname__ = "NotImplemented"


def _as_tensor_like(value, like):
    return wrap(np.asarray(value, dtype=dt.result_type(like, value)._np))


@tensor_method("pow", "__pow__")
def pow(input, exponent):
    """input ** exponent; tensor or number on either side."""
    if not isinstance(input, Tensor):
        return _pow_scalar_base(input, exponent)
    if isinstance(exponent, Tensor):
        xa, ya, target = promote_operands(input, exponent)
        out = as_result(np.power(xa, ya), target)
        if wants_grad(input, exponent):
            record(PowBackward1, (input, exponent), out, (input, exponent, out))
        return out
    xa, p, target = promote_operands(input, exponent)
    if target.kind in "iu" and isinstance(p, int) and p < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    out = as_result(_power(xa, p), target)
    if wants_grad(input):
        record(PowBackward0, (input,), out, (input,), exponent=exponent)
    return out


def _power(xa, p):
    # Small integer powers as products, as PyTorch's kernels do: x**2 must equal x*x to the last bit.
    if p == 2:
        return xa * xa
    if p == 1:
        return xa.copy()
    if p == 0.5:
        return np.sqrt(xa)
    if p == -1:
        return np.reciprocal(xa)
    if p == 3:
        return xa * xa * xa
    return np.power(xa, p)


@tensor_method("__rpow__")
def _pow_scalar_base(exponent, base):
    """base ** exponent with a number as the base."""
    if not isinstance(exponent, Tensor):
        exponent, base = base, exponent
    xa, ca, target = promote_operands(exponent, base)
    out = as_result(np.power(ca, xa), target)
    if wants_grad(exponent):
        record(PowBackward2, (exponent,), out, (out,), base=base)
    return out


@tensor_method("float_power")
def float_power(input, exponent):
    return pow(input.double() if isinstance(input, Tensor) else input,
               exponent.double() if isinstance(exponent, Tensor) else exponent)


@tensor_method("square")
def square(input):
    """input ** 2 (recorded as PowBackward0, as in PyTorch)."""
    if input._data.dtype == np.bool_:
        return pow(input.long(), 2)
    return pow(input, 2)


@tensor_method("neg", "negative", "__neg__")
def neg(input):
    if input._data.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    out = np.negative(input._data)
    out = wrap(out) if out.__class__ is np.ndarray else as_result(out)     # NumPy gives 0-d results as scalars
    if wants_grad(input):
        record(NegBackward0, (input,), out)
    return out


negative = neg


@tensor_method("__pos__", "positive")
def positive(input):
    return input


@tensor_method("reciprocal")
def reciprocal(input):
    """1 / input; integer input gives the default float dtype."""
    xa = input._data
    if xa.dtype.kind not in "fc":
        xa = xa.astype(_FLOAT_DEFAULT()._np)
    out = as_result(np.reciprocal(xa))
    if wants_grad(input):
        record(ReciprocalBackward0, (input,), out, (out,))
    return out


def _write_out(result, out):
    """Support for the ``out=`` keyword: copy into ``out`` (which must not require grad)."""
    if out is None:
        return result
    if out._requires_grad and wants_grad(out):
        raise RuntimeError(f"{type(result.grad_fn).__name__ if result.grad_fn else 'op'}(): functions with out=... "
                           "arguments don't support automatic differentiation, but one of the arguments requires grad.")
    out._data = np.array(result._data, dtype=out._data.dtype) if out._data.shape != result._data.shape \
        else out._data
    if out._data is not result._data:
        np.copyto(out._data, result._data, casting="unsafe")
    out._bump_version()
    return out


# --- casts ---------------------------------------------------------------------------------------------

class ToCopyBackward0(Node):
    """out = x converted to another dtype;  dx = grad converted back"""
    __slots__ = ()
    formula = "d/dx convert(x) = 1 (converted back to x's dtype)"

    def backward(self, ops, grad):
        return (grad,)      # the engine converts it back to the input's dtype


def cast(input, dtype):
    """The tensor converted to ``dtype`` (a copy; recorded when both are floating)."""
    if dtype._np is None:
        raise TypeError(f"gradiente has no storage for {dtype}: NumPy has no such type")
    out = wrap(input._data.astype(dtype._np))
    if wants_grad(input) and dtype.is_floating_point:
        record(ToCopyBackward0, (input,), out)
    return out


# --- broadcasting errors -------------------------------------------------------------------------------

def broadcast_error(*shapes):
    """PyTorch's error for shapes that do not broadcast, naming the first pair and dimension that clash."""
    common = tuple(shapes[0])
    for shape in shapes[1:]:
        shape = tuple(shape)
        n = max(len(common), len(shape))
        a, b = (1,) * (n - len(common)) + common, (1,) * (n - len(shape)) + shape
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                    f"non-singleton dimension {i}")
        common = np.broadcast_shapes(common, shape)
    return RuntimeError(f"shapes {' and '.join(str(list(s)) for s in shapes)} cannot be broadcast together")


def broadcasting(np_fn, *arrays):
    """``np_fn(*arrays)``, raising PyTorch's error where NumPy finds the shapes do not broadcast."""
    try:
        return np_fn(*arrays)
    except ValueError:
        shapes = [np.shape(a) for a in arrays]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise broadcast_error(*shapes) from None
        raise


def broadcast_shape(*shapes):
    """The shape ``shapes`` broadcast to, or PyTorch's error."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise broadcast_error(*shapes) from None


def _require_tensor(name, value, position=2, arg="other"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(value).__name__}")


# C++ type names, as PyTorch's dtype-mismatch messages print them ("expected dtype float ... got dtype double").
_CPP_NAMES = {np.dtype(k): v for k, v in [("float32", "float"), ("float64", "double"), ("float16", "c10::Half"),
                                          ("int64", "long int"), ("int32", "int"), ("int16", "short int"),
                                          ("int8", "signed char"), ("uint8", "unsigned char"), ("bool", "bool"),
                                          ("complex64", "c10::complex<float>"),
                                          ("complex128", "c10::complex<double>")]}


def type_name(np_dtype):
    """PyTorch's scalar type name of a NumPy dtype, as its messages print it: Float, Long, Bool ..."""
    return dt.FROM_NUMPY[np.dtype(np_dtype)]._legacy[:-len("Tensor")]


# --- clamp ---------------------------------------------------------------------------------------------

def _within(xa, lo, hi):
    """Where lo <= x <= hi (either bound may be absent): where clamp passes x through."""
    if lo is None:
        return xa <= hi
    if hi is None:
        return xa >= lo
    return (xa >= lo) & (xa <= hi)


class ClampBackward1(Node):
    """out = min(max(x, lo), hi) with number bounds;  dx = grad where lo <= x <= hi, else 0"""
    formula = "d/dx clamp(x, lo, hi) = 1 if lo ≤ x ≤ hi else 0"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (ops.mask(_within(ops.raw(x), self.min, self.max), grad),)


class ClampBackward0(Node):
    """out = min(max(x, lo), hi) with tensor bounds;  dx = grad where lo <= x <= hi;
    dlo = grad where x < lo (and lo < hi);  dhi = grad where x > hi (or hi < lo)"""
    formula = "∂clamp/∂x = 1 inside [lo, hi];  ∂clamp/∂lo = 1 below lo;  ∂clamp/∂hi = 1 above hi"

    def backward(self, ops, grad):
        x, lo, hi = self.saved(ops)
        xa = ops.raw(x)
        la = ops.raw(lo) if lo is not None else None
        ha = ops.raw(hi) if hi is not None else None
        edges = self.next_functions
        dx = ops.mask(_within(xa, la, ha), grad) if edges[0][0] is not None else None
        dlo = dhi = None
        if la is not None and edges[1][0] is not None:
            dlo = ops.mask((xa < la) & (la < ha) if ha is not None else xa < la, grad)
        if ha is not None and edges[2][0] is not None:
            dhi = ops.mask((xa > ha) | (ha < la) if la is not None else xa > ha, grad)
        return dx, dlo, dhi


class ClampMinBackward0(Node):
    """out = max(x, lo) with a number lo;  dx = grad where x >= lo, else 0"""
    formula = "d/dx max(x, lo) = 1 if x ≥ lo else 0"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (ops.mask(ops.raw(x) >= self.min, grad),)


class ClampMaxBackward0(Node):
    """out = min(x, hi) with a number hi;  dx = grad where x <= hi, else 0"""
    formula = "d/dx min(x, hi) = 1 if x ≤ hi else 0"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (ops.mask(ops.raw(x) <= self.max, grad),)


class ClampMinBackward1(Node):
    """out = max(x, lo) with a tensor lo;  dx = grad where x >= lo;  dlo = grad where x < lo"""
    formula = "∂max(x, lo)/∂x = 1 if x ≥ lo,  ∂max(x, lo)/∂lo = 1 if x < lo"

    def backward(self, ops, grad):
        x, lo = self.saved(ops)
        keep = ops.raw(x) >= ops.raw(lo)
        return ops.mask(keep, grad), ops.mask(~keep, grad)


class ClampMaxBackward1(Node):
    """out = min(x, hi) with a tensor hi;  dx = grad where x <= hi;  dhi = grad where x > hi"""
    formula = "∂min(x, hi)/∂x = 1 if x ≤ hi,  ∂min(x, hi)/∂hi = 1 if x > hi"

    def backward(self, ops, grad):
        x, hi = self.saved(ops)
        keep = ops.raw(x) <= ops.raw(hi)
        return ops.mask(keep, grad), ops.mask(~keep, grad)


def _clamp_arrays(input, lo, hi):
    """The forward of every clamp: promote x and the bounds together, then max with lo, min with hi."""
    target = dt.result_type(*(v for v in (input, lo, hi) if v is not None))._np
    if target == np.bool_ and not isinstance(lo, Tensor) and not isinstance(hi, Tensor):
        kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else \
            "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    xa, la, ha = (v._data.astype(target, copy=False) if isinstance(v, Tensor) else v for v in (input, lo, hi))
    if la is None:
        return as_result(broadcasting(np.minimum, xa, ha), target)
    if ha is None:
        return as_result(broadcasting(np.maximum, xa, la), target)
    return as_result(broadcasting(lambda a, b, c: np.minimum(np.maximum(a, b), c), xa, la, ha), target)


@tensor_method("clamp", "clip")
def clamp(input, min=None, max=None, *, out=None):
    """Each element limited to [min, max] (either may be None; numbers or broadcastable tensors). Where
    min > max the result is max, as in PyTorch."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo, hi = (_as_tensor_like(b, input) if b is not None and not isinstance(b, Tensor) else b for b in (min, max))
        result = _clamp_arrays(input, lo, hi)
        if wants_grad(input, lo, hi):
            record(ClampBackward0, (input, lo, hi), result, (input, lo, hi))
    else:
        result = _clamp_arrays(input, min, max)
        if wants_grad(input):
            record(ClampBackward1, (input,), result, (input,), min=min, max=max)
    return result if out is None else _write_out(result, out)


clip = clamp


@tensor_method("clamp_min")
def clamp_min(input, min):
    """max(input, min), elementwise."""
    result = _clamp_arrays(input, min, None)
    if wants_grad(input, min):
        if isinstance(min, Tensor):
            record(ClampMinBackward1, (input, min), result, (input, min))
        else:
            record(ClampMinBackward0, (input,), result, (input,), min=min)
    return result


@tensor_method("clamp_max")
def clamp_max(input, max):
    """min(input, max), elementwise."""
    result = _clamp_arrays(input, None, max)
    if wants_grad(input, max):
        if isinstance(max, Tensor):
            record(ClampMaxBackward1, (input, max), result, (input, max))
        else:
            record(ClampMaxBackward0, (input,), result, (input,), max=max)
    return result


# --- where ---------------------------------------------------------------------------------------------

class WhereBackward0(Node):
    """out = x where cond else y;  dx = grad where cond, else 0;  dy = grad where not cond, else 0"""
    formula = "∂where(c, x, y)/∂x = c,  ∂where(c, x, y)/∂y = 1 - c"

    def backward(self, ops, grad):
        cond = ops.raw(self.saved(ops)[0])
        edges = self.next_functions
        return (ops.mask(cond, grad) if edges[0][0] is not None else None,
                ops.mask(~cond, grad) if edges[1][0] is not None else None)


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` holds, ``other`` elsewhere (broadcasting; numbers allowed on either side).
    With only ``condition``: the indices of its non-zero elements, one tensor per dimension."""
    if input is None and other is None:
        return tuple(wrap(idx.astype(np.int64)) for idx in np.nonzero(condition._data))
    if not isinstance(condition, Tensor):
        condition = wrap(np.asarray(condition))
    cond = condition._data
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{type_name(cond.dtype)}")
    xa, ya, target = promote_operands(input, other)
    result = as_result(broadcasting(np.where, cond, xa, ya), target)
    if wants_grad(input, other):
        record(WhereBackward0, (input, other), result, (condition,))
    return result if out is None else _write_out(result, out)


def _where_method(self, condition, y):
    """``x.where(condition, y)`` is ``where(condition, x, y)``."""
    return where(condition, self, y)


Tensor.where = _where_method


# --- maximum, minimum, fmax, fmin ----------------------------------------------------------------------

def _split_ties(ops, grad, x, y, x_loses):
    """The gradient of max/min of two tensors: each side gets it where it wins, both get half at ties."""
    xa, ya = ops.raw(x), ops.raw(y)
    shared = ops.select(xa == ya, grad / 2, grad)
    return ops.mask(~x_loses(xa, ya), shared), ops.mask(~x_loses(ya, xa), shared)


class MaximumBackward0(Node):
    """out = max(x, y);  dx = grad where x > y;  dy = grad where y > x;  grad / 2 each at ties"""
    formula = "∂max(x, y)/∂x = 1 if x > y (½ if x = y)"

    def backward(self, ops, grad):
        return _split_ties(ops, grad, *self.saved(ops), np.less)


class MinimumBackward0(Node):
    """out = min(x, y);  dx = grad where x < y;  dy = grad where y < x;  grad / 2 each at ties"""
    formula = "∂min(x, y)/∂x = 1 if x < y (½ if x = y)"

    def backward(self, ops, grad):
        return _split_ties(ops, grad, *self.saved(ops), np.greater)


def _nan_ignoring(ops, grad, x, y, x_wins):
    """The gradient of fmax/fmin: all of it to x where x wins or y is nan (x wins ties), else all to y."""
    xa, ya = ops.raw(x), ops.raw(y)
    to_x = x_wins(xa, ya) | np.isnan(ya)
    return ops.mask(to_x, grad), ops.mask(~to_x, grad)


class FmaxBackward0(Node):
    """out = fmax(x, y) (nan ignored);  dx = grad where x >= y or y is nan;  dy = grad elsewhere"""
    formula = "∂fmax(x, y)/∂x = 1 if x ≥ y or y is nan"

    def backward(self, ops, grad):
        return _nan_ignoring(ops, grad, *self.saved(ops), np.greater_equal)


class FminBackward0(Node):
    """out = fmin(x, y) (nan ignored);  dx = grad where x <= y or y is nan;  dy = grad elsewhere"""
    formula = "∂fmin(x, y)/∂x = 1 if x ≤ y or y is nan"

    def backward(self, ops, grad):
        return _nan_ignoring(ops, grad, *self.saved(ops), np.less_equal)


def _tensor_pair_op(name, np_fn, node_cls, doc, floating=False):
    """An op of two tensors (a number as ``other`` is a TypeError, as in PyTorch), broadcasting."""
    def op(input, other, *, out=None):
        _require_tensor(name, other)
        result = _binary(input, other, np_fn, node_cls, floating=floating)
        return result if out is None else _write_out(result, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return tensor_method(name)(op)


maximum = _tensor_pair_op("maximum", np.maximum, MaximumBackward0,
                          "Elementwise maximum of two tensors (broadcasting); nan wins, as in PyTorch.")
minimum = _tensor_pair_op("minimum", np.minimum, MinimumBackward0,
                          "Elementwise minimum of two tensors (broadcasting); nan wins, as in PyTorch.")
fmax = _tensor_pair_op("fmax", np.fmax, FmaxBackward0,
                       "Elementwise maximum that ignores nan (nan only where both are nan).")
fmin = _tensor_pair_op("fmin", np.fmin, FminBackward0,
                       "Elementwise minimum that ignores nan (nan only where both are nan).")


# --- atan2, hypot, lerp, xlogy -------------------------------------------------------------------------

class Atan2Backward0(Node):
    """out = atan2(x, y);  dx = grad * y / (x² + y²);  dy = -grad * x / (x² + y²)"""
    formula = "∂atan2(x, y)/∂x = y/(x² + y²),  ∂atan2(x, y)/∂y = -x/(x² + y²)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        recip = 1 / (x * x + y * y)
        edges = self.next_functions
        return (grad * y * recip if edges[0][0] is not None else None,
                grad * -x * recip if edges[1][0] is not None else None)


def _via_double(np_fn):
    """``np_fn`` computed in double for float32 and float16 and rounded once: NumPy's single-precision atan2 is
    off by an ulp where PyTorch's is not."""
    def fn(xa, ya):
        dtype = np.result_type(xa, ya)
        if dtype in (np.float32, np.float16):
            return np_fn(np.asarray(xa, np.float64), np.asarray(ya, np.float64)).astype(dtype)
        return np_fn(xa, ya)
    return fn


_atan2_arrays, _hypot_arrays = _via_double(np.arctan2), _via_double(np.hypot)


atan2 = arctan2 = _tensor_pair_op("atan2", _atan2_arrays, Atan2Backward0, "The angle of the point (other, input): "
                                  "atan(input / other) in the right quadrant.", floating=True)
Tensor.arctan2 = atan2


class HypotBackward0(Node):
    """out = √(x² + y²);  dx = grad * x / out;  dy = grad * y / out"""
    formula = "∂hypot(x, y)/∂x = x/hypot(x, y)"

    def backward(self, ops, grad):
        x, y, out = self.saved(ops)
        edges = self.next_functions
        return (grad * x / out if edges[0][0] is not None else None,
                grad * y / out if edges[1][0] is not None else None)


@tensor_method("hypot")
def hypot(input, other, *, out=None):
    """√(input² + other²) without overflow; floating tensors only."""
    _require_tensor("hypot", other)
    xa, ya, target = promote_operands(input, other)
    if target.kind != "f":
        raise NotImplementedError(f'"hypot_cpu" not implemented for \'{type_name(target)}\'')
    result = as_result(broadcasting(_hypot_arrays, xa, ya), target)
    if wants_grad(input, other):
        record(HypotBackward0, (input, other), result, (input, other, result))
    return result if out is None else _write_out(result, out)


class LerpBackward0(Node):
    """out = x + w * (end - x) with a number w;  dx = grad * (1 - w);  dend = grad * w"""
    formula = "∂lerp/∂x = 1 - w,  ∂lerp/∂end = w"

    def backward(self, ops, grad):
        w = self.weight
        edges = self.next_functions
        return (grad * (1 - w) if edges[0][0] is not None else None,
                grad * w if edges[1][0] is not None else None)


class LerpBackward1(Node):
    """out = x + w * (end - x) with a tensor w;  dx = grad * (1 - w);  dend = grad * w;
    dw = grad * (end - x)"""
    formula = "∂lerp/∂x = 1 - w,  ∂lerp/∂end = w,  ∂lerp/∂w = end - x"

    def backward(self, ops, grad):
        x, end, w = self.saved(ops)
        edges = self.next_functions
        return (grad * (1 - w) if edges[0][0] is not None else None,
                grad * w if edges[1][0] is not None else None,
                grad * (end - x) if edges[2][0] is not None else None)


def _check_lerp_dtypes(input, end, weight):
    a = input._data.dtype
    if a.kind not in "fc":
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(a)}\'')
    for name, other in (("end", end), ("weight", weight)):
        if isinstance(other, Tensor) and other._data.dtype != a:
            raise RuntimeError(f"expected dtype {_CPP_NAMES[a]} for `{name}` but got dtype "
                               f"{_CPP_NAMES[other._data.dtype]}")


def _lerp_arrays(xa, ea, wa):
    """PyTorch's two-sided formula: from x for small weights, from end for large, for accuracy at both ends.
    float32 is computed in float64 and rounded once, as PyTorch's fused multiply-add rounds once."""
    work = np.float64 if xa.dtype == np.float32 else xa.dtype
    x, e, w = xa.astype(work, copy=False), ea.astype(work, copy=False), np.asarray(wa).astype(work, copy=False)
    diff = e - x if work == xa.dtype else (ea - xa).astype(work)
    small = np.abs(w) < 0.5
    if small.ndim == 0:
        out = x + w * diff if small else e + (w - 1) * diff
    else:
        out = np.where(small, x + w * diff, e + (w - 1) * diff)
    return out.astype(xa.dtype, copy=False)


@tensor_method("lerp")
def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input): linear interpolation (weight a number or a broadcastable tensor)."""
    _check_lerp_dtypes(input, end, weight)
    xa, ea = input._data, end._data
    if isinstance(weight, Tensor):
        wa = weight._data
    else:
        wa = np.asarray(weight, dtype=xa.dtype)
    result = as_result(broadcasting(_lerp_arrays, xa, ea, wa))
    if isinstance(weight, Tensor):
        if wants_grad(input, end, weight):
            record(LerpBackward1, (input, end, weight), result, (input, end, weight))
    elif wants_grad(input, end):
        record(LerpBackward0, (input, end), result, weight=weight)
    return result if out is None else _write_out(result, out)


class XlogyBackward0(Node):
    """out = x * log(y) (0 where x = 0);  dx = grad * log(y) (0 where x = 0 and y <= 0);  dy = grad * x / y"""
    formula = "∂(x·ln y)/∂x = ln y,  ∂(x·ln y)/∂y = x/y"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        edges = self.next_functions
        dx = None
        if edges[0][0] is not None:
            dx = ops.mask(~((ops.raw(x) == 0) & (ops.raw(y) <= 0)), ops.xlogy(grad, y))
        return dx, (grad * x / y if edges[1][0] is not None else None)


class XlogyBackward1(Node):
    """out = c * log(y) with a number c;  dy = grad * c / y"""
    formula = "∂(c·ln y)/∂y = c/y"

    def backward(self, ops, grad):
        (y,) = self.saved(ops)
        return (grad * self.x / y,)


class XlogyBackward2(Node):
    """out = x * log(c) with a number c;  dx = grad * log(c) (0 where x = 0 if c <= 0)"""
    formula = "∂(x·ln c)/∂x = ln c"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        dx = ops.xlogy(grad, self.y)
        return (dx if self.y > 0 else ops.mask(ops.raw(x) != 0, dx),)


@tensor_method("xlogy")
def xlogy(input, other, *, out=None):
    """input * log(other), with 0 where input is 0 (unless other is nan); one side may be a number."""
    xa, ya, target = promote_operands(input, other, floating=True)
    result = as_result(broadcasting(numpy_ops.xlogy, xa, ya), target)
    if wants_grad(input, other):
        if not isinstance(input, Tensor):
            record(XlogyBackward1, (other,), result, (other,), x=input)
        elif not isinstance(other, Tensor):
            record(XlogyBackward2, (input,), result, (input,), y=other)
        else:
            record(XlogyBackward0, (input, other), result, (input, other))
    return result if out is None else _write_out(result, out)


# --- filling and copying in place ----------------------------------------------------------------------

class ZeroBackward0(Node):
    """out = 0 (x overwritten);  dx = 0"""
    formula = "d/dx 0 = 0"

    def backward(self, ops, grad):
        return (ops.zeros_like(grad),)


class FillBackward0(Node):
    """out = c everywhere (c a number);  dx = 0"""
    formula = "d/dx c = 0"

    def backward(self, ops, grad):
        return (ops.zeros_like(grad),)


class FillBackward1(Node):
    """out = v everywhere (v a 0-d tensor);  dx = 0;  dv = Σ grad"""
    formula = "∂fill(x, v)/∂x = 0,  ∂fill(x, v)/∂v = Σ grad"

    def backward(self, ops, grad):
        edges = self.next_functions
        return (ops.zeros_like(grad) if edges[0][0] is not None else None,
                ops.sum(grad) if edges[1][0] is not None else None)


class FillBackward2(FillBackward0):
    """out = c everywhere (``x.fill_(c)``, c a number);  dx = 0"""


class FillBackward3(FillBackward1):
    """out = v everywhere (``x.fill_(v)``, v a 0-d tensor);  dx = 0;  dv = Σ grad"""


class CopyBackwards(Node):
    """out = src broadcast to x's shape and dtype (``x.copy_(src)``);  dx = 0;  dsrc = grad"""
    formula = "∂copy/∂x = 0,  ∂copy/∂src = 1"

    def backward(self, ops, grad):
        edges = self.next_functions
        return (ops.zeros_like(grad) if edges[0][0] is not None else None,
                grad if edges[1][0] is not None else None)


def _filled(input, value, by_number, by_tensor):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        result = wrap(np.full(input._data.shape, value._data, dtype=input._data.dtype))
        if wants_grad(input, value):
            record(by_tensor, (input, value), result)
        return result
    result = wrap(np.full(input._data.shape, value, dtype=input._data.dtype))
    if wants_grad(input):
        record(by_number, (input,), result)
    return result


def fill(input, value):
    """A tensor shaped and typed like ``input``, filled with ``value`` (a number or a 0-d tensor)."""
    return _filled(input, value, FillBackward0, FillBackward1)


@tensor_method("fill_")
def fill_(input, value):
    """Fill ``input`` with ``value`` (a number or a 0-d tensor) in place."""
    return _apply_inplace(input, lambda old: _filled(old, value, FillBackward2, FillBackward3))


def _zeros(input):
    result = wrap(np.zeros(input._data.shape, dtype=input._data.dtype))
    if wants_grad(input):
        record(ZeroBackward0, (input,), result)
    return result


@tensor_method("zero_")
def zero_(input):
    """Fill ``input`` with zeros in place (``p.grad.zero_()``)."""
    return _apply_inplace(input, _zeros)


def _copied(input, src):
    shape = broadcast_shape(input._data.shape, src._data.shape)
    result = wrap(np.array(np.broadcast_to(src._data, shape), dtype=input._data.dtype))
    if wants_grad(input, src):
        record(CopyBackwards, (input, src), result)
    return result


@tensor_method("copy_")
def copy_(input, src, non_blocking=False):
    """Copy the values of ``src`` (broadcast to ``input``'s shape, converted to its dtype) into ``input``.
    The gradient flows to ``src``."""
    return _apply_inplace(input, lambda old: _copied(old, src))


def _apply_inplace(tensor, compute):
    # Imported on use: the inplace module reads this module's ops when it is imported.
    from .inplace import apply_inplace
    return apply_inplace(tensor, compute)


def _install_inplace():
    from .inplace import make_inplace
    for fn in (clamp, clamp_min, clamp_max, atan2, hypot, lerp, xlogy):
        setattr(Tensor, fn.__name__ + "_", make_inplace(fn, fn.__name__ + "_"))
    Tensor.clip_ = Tensor.clamp_
    Tensor.arctan2_ = Tensor.atan2_


_install_inplace()
