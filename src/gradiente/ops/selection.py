"""Selection: ops whose result takes, per element, one of their inputs (``clamp``, ``where``, ``maximum``,
``minimum``, ``fmax``, ``fmin``); each gradient flows to the input that was chosen.
"""
import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.errors import broadcasting
from ..core.node import Node, self_adjoint_jvp, tangent_sum
from ..core.record import as_result, promote_operands, record, wants_grad, wrap
from ..core.tensor import Tensor
from .arithmetic import _as_tensor_like, _tensor_pair_op, _write_out

__all__ = [
    "clamp",
    "clamp_max",
    "clamp_min",
    "clip",
    "fmax",
    "fmin",
    "maximum",
    "minimum",
    "where",
]


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

    jvp = self_adjoint_jvp


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

    jvp = self_adjoint_jvp


class ClampMaxBackward0(Node):
    """out = min(x, hi) with a number hi;  dx = grad where x <= hi, else 0"""
    formula = "d/dx min(x, hi) = 1 if x ≤ hi else 0"

    def backward(self, ops, grad):
        (x,) = self.saved(ops)
        return (ops.mask(ops.raw(x) <= self.max, grad),)

    jvp = self_adjoint_jvp


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


_C_INTEGER_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def _check_integer_bound(bound, target):
    """A Python int bound must fit the integer result type, as PyTorch converts it (NumPy would raise its
    own OverflowError)."""
    if target.kind not in "iu" or bound.__class__ is not int:
        return
    if not -2**63 <= bound < 2**64:
        raise RuntimeError("int too big to convert")
    info = np.iinfo(target)
    lowest = -info.max if target.kind == "u" else info.min     # an unsigned type takes -max..-1, wrapped
    if not lowest <= bound <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_INTEGER_NAMES[target.name]} without overflow")


def _clamp_arrays(input, lo, hi):
    """The forward of every clamp: promote x and the bounds together, then max with lo, min with hi."""
    target = dt.result_type(*(v for v in (input, lo, hi) if v is not None))._np
    if (target == np.bool_ or target in dt.UNSIGNED_WIDE_NP) and not isinstance(lo, Tensor) \
            and not isinstance(hi, Tensor):
        kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else \
            "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt.scalar_name(target)}\'')
    for bound in (lo, hi):
        _check_integer_bound(bound, target)
    xa, la, ha = (v._data.astype(target, copy=False) if isinstance(v, Tensor) else
                  np.array(v).astype(target) if v.__class__ is int and target.kind == "u" else v
                  for v in (input, lo, hi))
    if la is None:
        return as_result(broadcasting(np.minimum, xa, ha), target)
    if ha is None:
        return as_result(broadcasting(np.maximum, xa, la), target)
    return as_result(broadcasting(lambda a, b, c: np.minimum(np.maximum(a, b), c), xa, la, ha), target)


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
    return result if out is None else _write_out(result, out, "clamp")


clip = clamp


def clamp_min(input, min):
    """max(input, min), elementwise."""
    result = _clamp_arrays(input, min, None)
    if wants_grad(input, min):
        if isinstance(min, Tensor):
            record(ClampMinBackward1, (input, min), result, (input, min))
        else:
            record(ClampMinBackward0, (input,), result, (input,), min=min)
    return result


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
    complex_ok = True
    formula = "∂where(c, x, y)/∂x = c,  ∂where(c, x, y)/∂y = 1 - c"

    def backward(self, ops, grad):
        cond = ops.raw(self.saved(ops)[0])
        edges = self.next_functions
        return (ops.mask(cond, grad) if edges[0][0] is not None else None,
                ops.mask(~cond, grad) if edges[1][0] is not None else None)

    def jvp(self, ops, x_t, y_t):
        cond = ops.raw(self.saved(ops)[0])
        return tangent_sum(ops.mask(cond, x_t) if x_t is not None else None,
                           ops.mask(~cond, y_t) if y_t is not None else None)


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` holds, ``other`` elsewhere (broadcasting; numbers allowed on either side).
    With only ``condition``: the indices of its non-zero elements, one tensor per dimension."""
    if input is None and other is None:
        return tuple(wrap(idx.astype(np.int64)) for idx in np.nonzero(condition._data))
    if not isinstance(condition, Tensor):
        condition = wrap(np.asanyarray(condition))
    cond = condition._data
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{scalar_name(cond.dtype)}")
    xa, ya, target = promote_operands(input, other)
    result = as_result(broadcasting(np.where, cond, xa, ya), target)
    if wants_grad(input, other):
        record(WhereBackward0, (input, other), result, (condition,))
    return result if out is None else _write_out(result, out, "where")


def _where_method(self, condition, y):
    """``x.where(condition, y)`` is ``where(condition, x, y)``."""
    return where(condition, self, y)



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


maximum = _tensor_pair_op("maximum", np.maximum, MaximumBackward0,
                          "Elementwise maximum of two tensors (broadcasting); nan wins, as in PyTorch.")
minimum = _tensor_pair_op("minimum", np.minimum, MinimumBackward0,
                          "Elementwise minimum of two tensors (broadcasting); nan wins, as in PyTorch.")
fmax = _tensor_pair_op("fmax", np.fmax, FmaxBackward0,
                       "Elementwise maximum that ignores nan (nan only where both are nan).")
fmin = _tensor_pair_op("fmin", np.fmin, FminBackward0,
                       "Elementwise minimum that ignores nan (nan only where both are nan).")

