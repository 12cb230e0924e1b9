"""Math of two or more tensors with rules of their own: ``atan2``, ``hypot``, ``lerp``, ``xlogy``."""
import numpy as np

from ..core.dtype import cpp_name, scalar_name
from ..core.errors import _require_tensor, broadcasting
from ..core.node import Node
from ..core.record import as_result, promote_operands, record, wants_grad
from ..core.rules import numpy_ops
from ..core.tensor import Tensor
from .arithmetic import _tensor_pair_op, _write_out

__all__ = [
    "arctan2",
    "atan2",
    "hypot",
    "lerp",
    "xlogy",
]


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
    if target.kind != "f":
        raise NotImplementedError(f'"hypot_cpu" not implemented for \'{scalar_name(target)}\'')
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
    for name, other in (("end", end), ("weight", weight)):       # PyTorch checks the dtypes first
        if isinstance(other, Tensor) and other._data.dtype != a:
            raise RuntimeError(f"expected dtype {cpp_name(a)} for `{name}` but got dtype "
                               f"{cpp_name(other._data.dtype)}")
    if a.kind not in "fc":
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a)}\'')


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
    return result if out is None else _write_out(result, out)


def xlogy(input, other, *, out=None):
    """input * log(other), with 0 where input is 0 (unless other is nan); one side may be a number."""
    return _with_numbers(numpy_ops.xlogy, (XlogyBackward0, XlogyBackward1, XlogyBackward2), input, other, out)

