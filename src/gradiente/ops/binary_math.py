"""Math of two or more tensors with rules of their own: ``atan2``, ``hypot``, ``lerp``, ``xlogy``."""
from typing import Optional

import numpy as np

from ..core import dtype as dt
from ..core.dtype import cpp_name, scalar_name
from ..core.errors import _require_tensor, broadcasting
from ..core.node import Node, tangent_sum
from ..core.record import as_result, promote_operands, record, wants_grad
from ..core.rules import numpy_ops
from ..core.tensor import Tensor
from .arithmetic import _tensor_pair_op, _without_derivative, _write_out, op_name
from .unary import _LN2, _finish, _rule_fn, exp2

__all__ = ["arctan2", "atan2", "hypot", "lerp", "xlogy", "logaddexp", "logaddexp2", "nextafter", "copysign", "ldexp",
           "heaviside", "gcd", "lcm"]


class Atan2Backward0(Node):
    """out = atan2(x, y);  dx = grad * y / (x² + y²);  dy = -grad * x / (x² + y²)"""
    formula = "∂atan2(x, y)/∂x = y/(x² + y²),  ∂atan2(x, y)/∂y = -x/(x² + y²)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        # at (0, 0) the reciprocal is inf: PyTorch sets it to 0 there, so the gradient is (0, -0), not nan
        recip = 1 / (x * x + y * y)
        recip = ops.mask(~np.isinf(ops.raw(recip)), recip)
        edges = self.next_functions
        return (grad * y * recip if edges[0][0] is not None else None,
                grad * -x * recip if edges[1][0] is not None else None)


def _via_double(np_fn):
    """``np_fn`` computed in double for float32 and float16 and rounded once: NumPy's single-precision atan2 is
    off by an ulp where PyTorch's is not."""
    def fn(xa, ya):
        dtype = np.result_type(xa, ya)
        if dtype in (np.float32, np.float16):
            return np_fn(np.asanyarray(xa, np.float64), np.asanyarray(ya, np.float64)).astype(dtype)
        return np_fn(xa, ya)
    return fn


_atan2_arrays, _hypot_arrays = _via_double(np.arctan2), _via_double(np.hypot)


atan2 = arctan2 = _tensor_pair_op("atan2", _atan2_arrays, Atan2Backward0, "The angle of the point (other, input): "
                                  "atan(input / other) in the right quadrant.", floating=True)


class HypotBackward0(Node):
    """out = √(x² + y²);  dx = grad * x / out;  dy = grad * y / out"""
    formula = "∂hypot(x, y)/∂x = x/hypot(x, y)"

    def backward(self, ops, grad):
        x, y, out = self.saved(ops)
        edges = self.next_functions
        return (grad * x / out if edges[0][0] is not None else None,
                grad * y / out if edges[1][0] is not None else None)


def hypot(input, other, *, out=None):
    """√(input² + other²) without overflow; floating tensors only."""
    _require_tensor("hypot", other)
    xa, ya, target = promote_operands(input, other)
    if dt.kind(target) != "f":
        raise NotImplementedError(f'"hypot_cpu" not implemented for \'{scalar_name(target)}\'')
    result = as_result(broadcasting(_hypot_arrays, xa, ya), target)
    if wants_grad(input, other):
        record(HypotBackward0, (input, other), result, (input, other, result))
    return result if out is None else _write_out(result, out, "hypot")


class LerpBackward0(Node):
    """out = x + w * (end - x) with a number w;  dx = grad * (1 - w);  dend = grad * w"""
    holomorphic = True
    formula = "∂lerp/∂x = 1 - w,  ∂lerp/∂end = w"

    def backward(self, ops, grad):
        w = self.weight
        edges = self.next_functions
        return (grad * (1 - w) if edges[0][0] is not None else None,
                grad * w if edges[1][0] is not None else None)


class LerpBackward1(Node):
    """out = x + w * (end - x) with a tensor w;  dx = grad * (1 - w);  dend = grad * w;
    dw = grad * (end - x)"""
    holomorphic = True
    formula = "∂lerp/∂x = 1 - w,  ∂lerp/∂end = w,  ∂lerp/∂w = end - x"

    def backward(self, ops, grad):
        x, end, w = self.saved(ops)
        edges = self.next_functions
        return (grad * (1 - w) if edges[0][0] is not None else None,
                grad * w if edges[1][0] is not None else None,
                grad * (end - x) if edges[2][0] is not None else None)


def _check_lerp_dtypes(input, end, weight):
    a = input._data.dtype
    for name, other in (("end", end), ("weight", weight)):       # PyTorch checks the dtypes first
        # a 0-d weight acts as a number, of any dtype (PyTorch's wrapped scalar)
        if isinstance(other, Tensor) and other._data.dtype != a and not (name == "weight" and other._data.ndim == 0):
            raise RuntimeError(f"expected dtype {cpp_name(a)} for `{name}` but got dtype "
                               f"{cpp_name(other._data.dtype)}")
    if dt.kind(a) not in "fc":
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a)}\'')


def _lerp_arrays(xa, ea, wa):
    """PyTorch's two-sided formula: from x for small weights, from end for large, for accuracy at both ends.
    float32 is computed in float64 and rounded once, as PyTorch's fused multiply-add rounds once."""
    work = np.float64 if xa.dtype == np.float32 else xa.dtype
    x, e, w = xa.astype(work, copy=False), ea.astype(work, copy=False), np.asanyarray(wa).astype(work, copy=False)
    diff = e - x if work == xa.dtype else (ea - xa).astype(work)
    small = np.abs(w) < 0.5
    if small.ndim == 0:
        out = x + w * diff if small else e + (w - 1) * diff
    else:
        out = np.where(small, x + w * diff, e + (w - 1) * diff)
    return out.astype(xa.dtype, copy=False)


def check_lerp_method_arguments(*args, **kwargs):
    """PyTorch's parser refusing ``x.lerp_(end, weight)`` with positional arguments of the wrong types, in the
    method's words, before the in-place op checks anything (a leaf that requires grad included)."""
    if kwargs or len(args) != 2:
        return
    end, weight = args
    number = (bool, int, float, complex)
    if isinstance(end, Tensor) and isinstance(weight, (Tensor, *number)):
        return
    names = [type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args]

    def marked(fits):
        return ", ".join(n if ok else f"!{n}!" for n, ok in zip(names, fits))
    raise TypeError(f"lerp_() received an invalid combination of arguments - got ({', '.join(names)}), but expected "
                    "one of:\n"
                    " * (Tensor end, Tensor weight)\n"
                    "      didn't match because some of the arguments have invalid types: "
                    f"({marked((isinstance(end, Tensor), isinstance(weight, Tensor)))})\n"
                    " * (Tensor end, Number weight)\n"
                    "      didn't match because some of the arguments have invalid types: "
                    # (PyTorch's report marks a number weight too when end is no tensor)
                    f"({marked((isinstance(end, Tensor), isinstance(end, Tensor) and isinstance(weight, number)))})\n")


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input): linear interpolation (weight a number or a broadcastable tensor)."""
    if not isinstance(end, Tensor) or not isinstance(weight, (Tensor, bool, int, float, complex)):
        got = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in (input, end, weight))
        raise TypeError(f"lerp() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                        " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")
    _check_lerp_dtypes(input, end, weight)
    xa, ea = input._data, end._data
    if isinstance(weight, Tensor):
        wa = weight._data
        if wa.dtype != xa.dtype and wa.dtype.kind != "c":
            wa = wa.astype(xa.dtype)
    else:
        # a number weight meets a bfloat16 kernel unrounded, in float32
        wa = np.asanyarray(weight, dtype=np.float32 if xa.dtype == dt.BFLOAT16 else xa.dtype)
    result_dtype = xa.dtype if wa.dtype.kind != "c" else None
    xa, ea, wa = dt.widened(xa), dt.widened(ea), dt.widened(wa)
    if isinstance(weight, Tensor):
        values = broadcasting(_lerp_arrays, xa, ea, wa)
    else:   # a number weight is the kernel's argument, not an operand of PyTorch's TensorIterator (its layout)
        values = broadcasting(lambda x, e: _lerp_arrays(x, e, wa), xa, ea)
    result = as_result(values, result_dtype)
    if isinstance(weight, Tensor):
        if wants_grad(input, end, weight):
            record(LerpBackward1, (input, end, weight), result, (input, end, weight))
    elif wants_grad(input, end):
        record(LerpBackward0, (input, end), result, weight=weight)
    return result if out is None else _write_out(result, out, "lerp")


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


def _with_numbers(array_fn, nodes, input, other, out):
    """``array_fn`` of two operands, either of which may be a number, recorded as PyTorch names the three
    overloads: ``nodes`` = (two tensors, a number first (kept as ``x``), a number second (kept as ``y``))."""
    xa, ya, target = promote_operands(input, other, floating=True)
    result = as_result(broadcasting(array_fn, xa, ya), target)
    if wants_grad(input, other):
        both, number_first, number_second = nodes
        if not isinstance(input, Tensor):
            record(number_first, (other,), result, (other,), x=input)
        elif not isinstance(other, Tensor):
            record(number_second, (input,), result, (input,), y=other)
        else:
            record(both, (input, other), result, (input, other))
    return result if out is None else _write_out(result, out, op_name(nodes[0]))


def xlogy(input, other, *, out=None):
    """input * log(other), with 0 where input is 0 (unless other is nan); one side may be a number."""
    return _with_numbers(numpy_ops.xlogy, (XlogyBackward0, XlogyBackward1, XlogyBackward2), input, other, out)


# --- logaddexp, logaddexp2 ----------------------------------------------------------------------------------

def _floating_pair(name, input, other):
    """The promoted arrays of two tensors for a kernel PyTorch has for floating dtypes only."""
    _require_tensor(name, other)
    xa, ya, target = promote_operands(input, other)
    if dt.kind(target) != "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_name(target)}\'')
    return xa, ya, target


def _needs(node, i):
    """Whether the node's i-th input wants a gradient."""
    return node.next_functions[i][0] is not None


class LogaddexpBackward0(Node):
    """out = ln(eˣ + eʸ);  dx = grad / (1 + e^(y-x));  dy = grad / (1 + e^(x-y));
    out' = x' / (1 + e^(y-x)) + y' / (1 + e^(x-y))"""
    formula = "∂ln(eˣ + eʸ)/∂x = eˣ/(eˣ + eʸ)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):     # nan where both are the same infinity
            return (grad / (1 + ops.exp(y - x)) if _needs(self, 0) else None,
                    grad / (1 + ops.exp(x - y)) if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return tangent_sum(None if x_t is None else x_t / (1 + ops.exp(y - x)),
                               None if y_t is None else y_t / (1 + ops.exp(x - y)))


class Logaddexp2Backward0(Node):
    """out = log₂(2ˣ + 2ʸ);  dx = grad / (1 + 2^(y-x));  dy = grad / (1 + 2^(x-y));
    out' = x' / (1 + 2^(y-x)) + y' / (1 + 2^(x-y))"""
    formula = "∂log₂(2ˣ + 2ʸ)/∂x = 2ˣ/(2ˣ + 2ʸ)"

    def backward(self, ops, grad):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return (grad / (1 + ops.exp((y - x) * _LN2)) if _needs(self, 0) else None,
                    grad / (1 + ops.exp((x - y) * _LN2)) if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        x, y = self.saved(ops)
        with np.errstate(invalid="ignore", over="ignore"):
            return tangent_sum(None if x_t is None else x_t / (1 + ops.exp((y - x) * _LN2)),
                               None if y_t is None else y_t / (1 + ops.exp((x - y) * _LN2)))


def _logaddexp_op(name, np_fn, node_cls, doc):
    def op(input, other, *, out=None):
        xa, ya, target = _floating_pair(name, input, other)
        with np.errstate(invalid="ignore"):     # inf - inf inside, where the result is ±inf or nan as in PyTorch
            result = as_result(broadcasting(np_fn, xa, ya), target)
        if wants_grad(input, other):
            record(node_cls, (input, other), result, (input, other))
        return _finish(result, out, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


logaddexp = _logaddexp_op("logaddexp", np.logaddexp, LogaddexpBackward0,
                          "ln(e^input + e^other), without overflow: the larger term is taken out first.")


logaddexp2 = _logaddexp_op("logaddexp2", np.logaddexp2, Logaddexp2Backward0, "log₂(2^input + 2^other), stably.")


# --- nextafter, copysign, ldexp, heaviside ------------------------------------------------------------------

class NextafterBackward0(Node):
    """out = the next float after x towards y;  dx = grad;  dy = 0;  out' = x' (as PyTorch defines them)"""
    formula = "d/dx nextafter(x, y) = 1"

    def backward(self, ops, grad):
        return (grad if _needs(self, 0) else None, ops.zeros_like(grad) if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        return x_t if x_t is not None else ops.zeros_like(y_t)


def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` in the direction of ``other``, elementwise."""
    xa, ya, target = _floating_pair("nextafter", input, other)
    result = as_result(broadcasting(np.nextafter, xa, ya), target)
    if wants_grad(input, other):
        record(NextafterBackward0, (input, other), result)
    return _finish(result, out, "nextafter")


class CopysignBackward0(Node):
    """out = |x| with the sign of y;  dx = grad·(out/x) (±1; 0 where x = 0);  dy = 0;  out' = x'·(out/x)"""
    formula = "∂copysign(x, y)/∂x = ±1 (1 where the sign is kept)"

    def backward(self, ops, grad):
        dx = grad * self._sign_ratio(ops, grad) if _needs(self, 0) else None
        return (dx, ops.zeros_like(grad)) if len(self.next_functions) == 2 else dx

    def _recorded_ratio(self, ops):
        """out/x with 0 where x = 0, recorded from the saved values as PyTorch's formula computes it: so the
        gradient requires grad wherever x does, and its derivative at x = 0 is PyTorch's (0/0: nan)."""
        x, out = self.saved(ops)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ops.mask(ops.raw(x) != 0, out / x)

    def jvp(self, ops, x_t, y_t=None):
        return ops.zeros_like(y_t) if x_t is None else x_t * self._sign_ratio(ops, x_t)

    def _sign_ratio(self, ops, like):
        """out/x: ±1, and 0 where x = 0."""
        if ops.recording:
            return self._recorded_ratio(ops)
        x, out = self.saved(ops)
        xa = ops.raw(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ops.constant(np.where(xa == 0, 0, ops.raw(out) / xa), like)


class CopysignBackward1(CopysignBackward0):
    """out = |x| with the sign of the number c;  dx = grad·(out/x) (±1; 0 where x = 0)"""


def copysign(input, other, *, out=None):
    """|input| with the sign of ``other`` (a tensor or a number; the sign of -0.0 counts); a floating result."""
    xa, ya, target = promote_operands(input, other, floating=True)
    result = as_result(broadcasting(np.copysign, xa, ya), target)
    if isinstance(other, Tensor):
        if wants_grad(input, other):
            record(CopysignBackward0, (input, other), result, (input, result))
    elif wants_grad(input):
        record(CopysignBackward1, (input,), result, (input, result))
    return _finish(result, out, "copysign")


class LdexpBackward0(Node):
    """out = x·2ʸ;  dx = grad·2ʸ;  dy = grad·out·ln 2;  out' = x'·2ʸ + y'·out·ln 2"""
    formula = "∂(x·2ʸ)/∂x = 2ʸ,  ∂(x·2ʸ)/∂y = x·2ʸ·ln 2"
    scale: Optional[np.ndarray]     # 2ʸ, exact, when y is an integer tensor (else computed from y)

    def backward(self, ops, grad):
        y, out = self.saved(ops)
        scale = ops.constant(self.scale, grad) if self.scale is not None else _rule_fn(ops, np.exp2, exp2)(y)
        return (grad * scale if _needs(self, 0) else None,
                grad * out * _LN2 if _needs(self, 1) else None)

    def jvp(self, ops, x_t, y_t):
        y, out = self.saved(ops)
        through_x = None
        if x_t is not None:
            scale = ops.constant(self.scale, x_t) if self.scale is not None else _rule_fn(ops, np.exp2, exp2)(y)
            through_x = x_t * scale
        return tangent_sum(through_x, None if y_t is None else y_t * out * _LN2)


def ldexp(input, other, *, out=None):
    """input·2^other. With a floating ``input`` and an integer ``other`` the power is exact and never overflows
    on its own (as C's ldexp); otherwise it is computed as input·exp2(other), as PyTorch does."""
    _require_tensor("ldexp", other)
    target = dt.result_type(input, other)._np
    if dt.kind(target) != "f":
        target = dt.get_default_dtype()._np
    xa, ea = input._data, other._data
    scale = None
    if ea.dtype.kind in "iub" and dt.kind(xa.dtype) == "f":
        if ea.dtype.kind == "b":
            raise NotImplementedError('"ldexp_cpu_exp" not implemented for \'Bool\'')
        exponent = np.clip(ea, -2 ** 20, 2 ** 20).astype(np.int64)
        with np.errstate(over="ignore"):
            values = broadcasting(np.ldexp, xa.astype(target), exponent)
            scale = np.ldexp(np.ones((), target), exponent)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            values = broadcasting(np.multiply, xa.astype(target), np.exp2(ea.astype(target)))
    result = as_result(values, target)
    if wants_grad(input, other):
        record(LdexpBackward0, (input, other), result, (other, result), scale=scale)
    return _finish(result, out, "ldexp")


def heaviside(input, values, *, out=None):
    """The step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0 (same dtypes only)."""
    _require_tensor("heaviside", values, arg="values")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    xa, va = input._data, values._data
    step = broadcasting(lambda a, v: np.where(a == 0, v, a > 0), xa, va)
    result = as_result(step, xa.dtype)
    _without_derivative("heaviside", (input, values), result)
    return _finish(result, out, "heaviside")


# --- gcd, lcm: integers only, no gradient -------------------------------------------------------------------

def _integer_pair_op(name, np_fn, doc):
    """An op of two integer tensors, with no gradient (the integers have none)."""
    def op(input, other, *, out=None):
        _require_tensor(name, other)
        xa, ya, target = promote_operands(input, other)
        if target.kind not in "iu":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_name(target)}\'')
        return _finish(as_result(broadcasting(np_fn, xa, ya), target), out, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


gcd = _integer_pair_op("gcd", np.gcd, "The greatest common divisor (non-negative; gcd(0, 0) = 0), elementwise.")


lcm = _integer_pair_op("lcm", np.lcm, "The least common multiple (non-negative; 0 if either is 0), elementwise; it "
                                      "wraps around on overflow, as PyTorch's does.")
