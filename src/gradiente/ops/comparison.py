"""Comparisons, logical and bitwise ops, and value tests (``isnan`` ...): results that carry no gradient.

Every op here returns a tensor that is not recorded, even when its inputs require grad: a comparison is
piecewise constant, and PyTorch gives its result no ``grad_fn``. Operands are promoted first (an int
tensor compared with a float compares as float), as in PyTorch.
"""
import numpy as np

from ..core.creation import in_iteration_layout
from ..core.dtype import refuse_unsigned_wide_operands, scalar_name
from ..core.errors import broadcasting
from ..core.record import as_result, promote_operands, record, wants_grad, wrap
from ..core.tensor import Tensor
from .arithmetic import _ZeroGradBackward

__all__ = ["allclose", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
           "bitwise_xor", "eq", "equal", "ge", "greater", "greater_equal", "gt", "isclose", "isfinite", "isinf",
           "isnan", "isneginf", "isposinf", "isreal", "le", "less", "less_equal", "logical_and", "logical_not",
           "logical_or", "logical_xor", "lt", "ne", "not_equal", "signbit", "isin"]

_OPERANDS = (Tensor, bool, int, float, complex, np.ndarray, np.generic)


def _promoted(input, other):
    """``promote_operands``, with a Python int met by an integer dtype wrapped around into it first
    (``uint8_tensor < -1`` compares with 255), as PyTorch converts it."""
    xa, ya, target = promote_operands(input, other)
    if target.kind in "iu":
        if type(xa) is int:
            xa = np.array(xa).astype(target)
        if type(ya) is int:
            ya = np.array(ya).astype(target)
    return xa, ya, target


def _uncast(operand, promoted):
    """The array of a tensor operand as given (its strides, before any cast), for ``in_iteration_layout``."""
    return operand._data if isinstance(operand, Tensor) else promoted


def _comparison(name, np_fn, aliases=()):
    def compare(input, other, *, out=None):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        if name not in ("eq", "ne"):
            refuse_unsigned_wide_operands(f"{name}_cpu", input, other)
        xa, ya, _ = _promoted(input, other)
        values = broadcasting(np_fn, xa, ya)
        return as_result(in_iteration_layout(values, _uncast(input, xa), _uncast(other, ya)), np.bool_)
    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``input {np_fn.__name__} other`` as a bool tensor (broadcasting; not recorded)."
    return compare


eq = _comparison("eq", np.equal)
ne = _comparison("ne", np.not_equal, ("not_equal",))
lt = _comparison("lt", np.less, ("less",))
le = _comparison("le", np.less_equal, ("less_equal",))
gt = _comparison("gt", np.greater, ("greater",))
ge = _comparison("ge", np.greater_equal, ("greater_equal",))
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def comparison_into_input(compare, op_name):
    """What ``x.eq_(y)`` computes before it is written into ``x``: the comparison as 0/1 in ``x``'s dtype. When
    ``x`` or ``y`` requires grad the result is recorded, as PyTorch's ``EqBackward0`` is, with a zero gradient."""
    # PyTorch's names: ...Backward0 for a number compared with, ...Backward1 for a tensor
    by_number, by_tensor = (_ZeroGradBackward.named(f"{op_name}Backward{i}") for i in (0, 1))

    def into_input(input, other):
        result = compare(input, other)
        if result is NotImplemented:
            raise TypeError(f"{compare.__name__}_() received an invalid combination of arguments")
        out = wrap(result._data.astype(input._data.dtype))
        if wants_grad(input, other):
            record(by_tensor if isinstance(other, Tensor) else by_number,
                   tuple(t for t in (input, other) if isinstance(t, Tensor)), out)
        return out
    into_input.__name__ = into_input.__qualname__ = f"{compare.__name__}_"
    into_input.__doc__ = (f"``x.{compare.__name__}_(other)``: writes ``{compare.__name__}(x, other)`` into ``x`` "
                          "in place, as 1 where it holds and 0 elsewhere, in ``x``'s dtype; returns ``x``.")
    return into_input


def equal(input, other):
    """True if both tensors have the same shape and the same values (a Python bool)."""
    if input._data.shape != other._data.shape:
        return False
    xa, ya, _ = promote_operands(input, other)
    return bool(np.array_equal(xa, ya))


def _check_same_dtype(input, other):
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{scalar_name(input._data.dtype)} did not match {scalar_name(other._data.dtype)}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise; both tensors of one dtype, as in PyTorch."""
    _check_same_dtype(input, other)
    close = broadcasting(lambda a, b: np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), input._data,
                         other._data)
    return as_result(close, np.bool_)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def _value_test(name, np_fn):
    def test(input):
        return as_result(np_fn(input._data), np.bool_)
    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"``{np_fn.__name__}`` of each element as a bool tensor (integers are never nan or inf)."
    return test


isnan = _value_test("isnan", np.isnan)
isinf = _value_test("isinf", np.isinf)
isfinite = _value_test("isfinite", np.isfinite)
isposinf = _value_test("isposinf", np.isposinf)
isneginf = _value_test("isneginf", np.isneginf)
signbit = _value_test("signbit", np.signbit)


def isreal(input):
    """Elementwise, whether each value has a zero imaginary part (always True for real dtypes); bool."""
    a = input._data
    return as_result(a.imag == 0 if a.dtype.kind == "c" else np.ones(a.shape, np.bool_), np.bool_)


# --- logical: any dtype in, bool out -------------------------------------------------------------------

def _logical(name, np_fn):
    def logical(input, other, *, out=None):
        return as_result(broadcasting(np_fn, input._data, other._data if isinstance(other, Tensor) else other),
                         np.bool_)
    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = f"Elementwise ``{name}`` of the truth values of both tensors, as a bool tensor."
    return logical


logical_and = _logical("logical_and", np.logical_and)
logical_or = _logical("logical_or", np.logical_or)
logical_xor = _logical("logical_xor", np.logical_xor)


def logical_not(input, *, out=None):
    """Elementwise ``not`` of the truth value of each element, as a bool tensor."""
    return as_result(np.logical_not(input._data), np.bool_)



# --- bitwise: bool and integer tensors -----------------------------------------------------------------

def _check_bitwise(name, dtype_np):
    if dtype_np.kind not in "biu":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_name(dtype_np)}\'')


def _bitwise(name, np_fn, dunder):
    def bitwise(input, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        xa, ya, target = _promoted(input, other)
        _check_bitwise(name, target)
        return as_result(broadcasting(np_fn, xa, ya), target)
    bitwise.__name__ = bitwise.__qualname__ = name
    bitwise.__doc__ = f"Elementwise ``{name}`` of bool or integer tensors (``x {dunder} y``)."
    return bitwise


bitwise_and = _bitwise("bitwise_and", np.bitwise_and, "and")
bitwise_or = _bitwise("bitwise_or", np.bitwise_or, "or")
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor, "xor")


def _shift(name, kernel, left, dunder):
    """``x << s`` / ``x >> s`` of integer tensors as PyTorch's kernels shift: a shift by a negative amount or by
    the type's width or more gives 0 (a right shift of a negative number gives -1), where C and NumPy leave it
    undefined; a left shift drops the bits that leave the type."""
    def shift(input, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        xa, ya, target = _promoted(input, other)
        if target.kind not in "iu":
            raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(target)}\'')
        xa, amount = np.asanyarray(xa, dtype=target), np.asanyarray(ya).astype(np.int64)
        outside = (amount < 0) | (amount >= 8 * target.itemsize)
        safe = np.where(outside, 0, amount).astype(target)
        if left:
            shifted = np.where(outside, np.zeros((), target), broadcasting(np.left_shift, xa, safe))
        else:
            fill = np.where(xa < 0, np.array(-1).astype(target), np.zeros((), target))
            shifted = np.where(outside, fill, broadcasting(np.right_shift, xa, safe))
        return as_result(shifted, target)
    shift.__name__ = shift.__qualname__ = name
    shift.__doc__ = f"Elementwise ``x {'<<' if left else '>>'} s`` of integer tensors."
    return shift


bitwise_left_shift = _shift("bitwise_left_shift", "lshift_cpu", True, "lshift")
bitwise_right_shift = _shift("bitwise_right_shift", "rshift_cpu", False, "rshift")


def bitwise_not(input):
    """``~x``: logical not of a bool tensor, two's-complement not of an integer tensor."""
    _check_bitwise("bitwise_not", input._data.dtype)
    return as_result(np.invert(input._data))


def reflected_bitwise(op):
    """Python's reflected operator (``1 & x`` calls ``x.__rand__(1)``) for a commutative bitwise ``op``."""
    def reflected(self, other):
        return op(other, self) if isinstance(other, Tensor) else op(self, other)
    reflected.__name__ = reflected.__qualname__ = f"reflected_{op.__name__}"
    return reflected


def reflected_shift(op):
    """Python's reflected operator (``1 << x`` calls ``x.__rlshift__(1)``) for a shift: the number is shifted."""
    def reflected(self, other):
        return op(other if isinstance(other, Tensor) else Tensor._make(np.asanyarray(other)), self)
    reflected.__name__ = reflected.__qualname__ = f"reflected_{op.__name__}"
    return reflected


def invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


# --- isin ---------------------------------------------------------------------------------------------------

def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number; NaN matches nothing).
    ``invert=True`` asks the opposite question."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__})")
    arrays = [t._data if isinstance(t, Tensor) else np.asanyarray(t) for t in (elements, test_elements)]
    for array in arrays:
        if array.dtype.kind == "c":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {scalar_name(array.dtype)}")
    return wrap(np.asanyarray(np.isin(arrays[0], arrays[1], invert=invert)))
