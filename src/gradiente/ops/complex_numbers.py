"""Complex numbers: building them (``complex``, ``polar``), taking them apart (``real``, ``imag``, ``angle``,
``view_as_real``, ``view_as_complex``), and conjugating (``conj``, ``conj_physical``, ``resolve_conj``,
``resolve_neg``, ``is_conj``, ``is_neg``).

Gradients follow PyTorch's convention for a real loss L of complex z = a + ib: the gradient is
dL/da + i·dL/db. Every rule here is written on real and imaginary parts (``_parts``, ``_join``), never as a
complex product, so that it stays right when recorded under create_graph.

Intended difference from PyTorch: ``conj`` of a complex tensor is a conjugated copy, not a lazy view with
a conjugate bit (NumPy has no such bit). ``is_conj()`` is True on it and ``resolve_conj`` copies it, as in
PyTorch, but it does not share memory with its input: a later change of either is not seen by the other.
"""
import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.errors import _require_tensor, broadcast_shape
from ..core.inplace import make_inplace
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from .arithmetic import NegBackward0
from .autocast import autocast_entry
from .views import _view, clone, select

__all__ = ["angle", "complex", "conj", "conj_physical", "conj_physical_", "imag", "is_conj", "is_neg", "polar", "real",
           "resolve_conj", "resolve_neg", "view_as_complex", "view_as_real"]


# --- the gradient on real and imaginary parts ------------------------------------------------------------

def _parts(ops, z):
    """The real and imaginary parts of a complex array (or tensor, under create_graph)."""
    if ops.recording:
        return real(z), imag(z)
    return np.real(z), np.imag(z)


def _join(ops, a, b):
    """a + ib from two real arrays (or tensors)."""
    if ops.recording:
        return complex(a, b)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a.dtype, np.complex64))
    out.real, out.imag = a, b
    return out


def _conjugate(ops, z):
    # conj_physical, not conj, under create_graph: a conjugated gradient must be an ordinary tensor (a
    # conjugate-flagged one would refuse view_as_real in the next rule)
    return conj_physical(z) if ops.recording else np.conj(z)


def _is_complex(t):
    return t._data.dtype.kind == "c"


# --- view_as_real, view_as_complex, real, imag ------------------------------------------------------------

class ViewAsRealBackward0(Node):
    """out[..., 0] = Re z, out[..., 1] = Im z (a view);  dz = grad[..., 0] + i·grad[..., 1]"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ view_as_real(z)/∂z: the last dim's two entries joined back as a + ib"

    def backward(self, ops, grad):
        return (_join(ops, ops.getitem(grad, (Ellipsis, 0)), ops.getitem(grad, (Ellipsis, 1))),)


class ViewAsComplexBackward0(Node):
    """out = x[..., 0] + i·x[..., 1] (a view);  dx[..., 0] = Re grad, dx[..., 1] = Im grad"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ view_as_complex(x)/∂x: the gradient's real and imaginary parts, side by side"

    def backward(self, ops, grad):
        return (ops.stack(list(_parts(ops, grad)), -1),)


def view_as_real(input):
    """A real view of a complex tensor, with a last dim of size 2 holding the real and imaginary parts."""
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return _as_real(input)


def _as_real(input):
    a = input._data
    # A size-1 last dim is contiguous whatever the strides, so NumPy can reinterpret it as two reals.
    return _view(input, a[..., None].view(a.real.dtype), ViewAsRealBackward0)


@autocast_entry
def view_as_complex(input):
    """A complex view of a real tensor whose last dim has size 2 (real part, imaginary part) and stride 1."""
    a = input._data
    if a.dtype not in (np.float16, np.float32, np.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {scalar_name(a.dtype)}")
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * a.itemsize) for s in a.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if a.dtype == np.float16:
        raise TypeError("gradiente has no complex32 (ComplexHalf) dtype: NumPy has no such type")
    complex_type = np.complex64 if a.dtype == np.float32 else np.complex128
    return _view(input, a.view(complex_type)[..., 0], ViewAsComplexBackward0)


def real(input):
    """The real part: for a complex tensor a view (``view_as_real(z)[..., 0]``, recorded as PyTorch records it),
    for a real tensor the tensor itself."""
    if not _is_complex(input):
        return input
    return select(_as_real(input), -1, 0)


def imag(input):
    """The imaginary part of a complex tensor, a view (``view_as_real(z)[..., 1]``)."""
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if not is_conj(input):
        return select(_as_real(input), -1, 1)
    # PyTorch reads the imaginary part of a lazy conjugate through the unconjugated values (a second
    # ConjBackward0), negated as a view (NegViewBackward0): the result says so with is_neg
    out = select(_neg_view(_as_real(conj(input))), -1, 1)
    out.__dict__["_is_neg"] = True
    return out


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    # into self's own imaginary parts, conjugated or not (imag's checks first)
    (select(_as_real(self), -1, 1) if is_conj(self) else imag(self)).copy_(value)



# --- building complex numbers ------------------------------------------------------------------------------

class ComplexBackward0(Node):
    """out = a + ib;  da = Re grad;  db = Im grad"""
    complex_ok = True
    __slots__ = ()
    formula = "∂(a + ib)/∂a = 1, ∂(a + ib)/∂b = i: the gradient's real and imaginary parts"

    def backward(self, ops, grad):
        return _parts(ops, grad)


class PolarBackward0(Node):
    """out = r·(cos θ + i sin θ);  dr = Re(grad)·cos θ + Im(grad)·sin θ;  dθ = r·(Im(grad)·cos θ - Re(grad)·sin θ)"""
    complex_ok = True
    __slots__ = ()
    formula = "∂/∂r: the gradient along (cos θ, sin θ);  ∂/∂θ: r times it along (-sin θ, cos θ)"

    def backward(self, ops, grad):
        r, theta = self.saved(ops)
        g_re, g_im = _parts(ops, grad)
        cos, sin = ops.cos(theta), ops.sin(theta)
        return g_re * cos + g_im * sin, r * (g_im * cos - g_re * sin)


def _check_parts(name, a, b):
    """PyTorch's checks on the two real tensors that ``complex`` and ``polar`` put together."""
    _require_tensor(name, b, 2, "imag" if name == "complex" else "angle")
    xa, ya = a._data, b._data
    floats = (np.float16, np.float32, np.float64)
    if xa.dtype not in floats or ya.dtype not in floats:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {scalar_name(xa.dtype)} "
                           f"and {scalar_name(ya.dtype)}")
    if xa.dtype != ya.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_name(xa.dtype)} but got scalar type "
                           f"{scalar_name(ya.dtype)} for second argument")
    if xa.dtype == np.float16:
        raise TypeError("gradiente has no complex32 (ComplexHalf) dtype: NumPy has no such type")
    return broadcast_shape(xa.shape, ya.shape)


def complex(real, imag):
    """The complex tensor real + i·imag (two float or double tensors of one dtype, broadcast)."""
    _require_tensor("complex", real, 1, "real")
    shape = _check_parts("complex", real, imag)
    out = np.empty(shape, dtype=np.complex64 if real._data.dtype == np.float32 else np.complex128)
    out.real, out.imag = real._data, imag._data
    result = wrap(out)
    if wants_grad(real, imag):
        record(ComplexBackward0, (real, imag), result)
    return result


@autocast_entry
def polar(abs, angle):
    """The complex tensor with modulus ``abs`` and argument ``angle``: abs·(cos(angle) + i·sin(angle))."""
    _require_tensor("polar", abs, 1, "abs")
    shape = _check_parts("polar", abs, angle)
    r, theta = abs._data, angle._data
    out = np.empty(shape, dtype=np.complex64 if r.dtype == np.float32 else np.complex128)
    out.real, out.imag = r * np.cos(theta), r * np.sin(theta)
    result = wrap(out)
    if wants_grad(abs, angle):
        record(PolarBackward0, (abs, angle), result, (abs, angle))
    return result


# --- angle ---------------------------------------------------------------------------------------------------

class AngleBackward0(Node):
    """out = atan2(Im z, Re z);  dz = grad·(-Im z + i·Re z) / |z|² (0 at z = 0);  for a real x, dx = 0"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ arg(z)/∂(a, b) = (-b, a) / (a² + b²)"

    def backward(self, ops, grad):
        (z,) = self.saved(ops)
        if not np.iscomplexobj(ops.raw(z)):
            return (ops.zeros_like(z),)
        a, b = _parts(ops, z)
        nonzero = ops.raw(z) != 0
        # |z|² replaced by 1 where z = 0, so that the masked-out branch divides by nothing
        scale = ops.mask(nonzero, grad) / ops.select(nonzero, a * a + b * b, 1.0)
        return (_join(ops, -b * scale, a * scale),)


def angle(input):
    """The argument of each element, in (-π, π]: atan2(Im, Re) for complex tensors; for real ones π where
    negative, 0 elsewhere (-0.0 too), nan for nan. Integers give the default float dtype."""
    a = input._data
    if a.dtype.kind == "c":
        values = np.angle(a)
    else:
        if dt.kind(a.dtype) not in "f":
            a = a.astype(dt.get_default_dtype()._np)
        values = np.where(a < 0, np.asanyarray(np.pi, a.dtype), np.zeros((), a.dtype))
        values = np.where(np.isnan(a), a, values)
    result = wrap(np.asanyarray(values))
    if wants_grad(input):
        record(AngleBackward0, (input,), result, (input,))
    return result


# --- conjugation -----------------------------------------------------------------------------------------

class ConjBackward0(Node):
    """out = conj(z);  dz = conj(grad)"""
    complex_ok = True
    __slots__ = ()
    formula = "∂ conj(z)/∂z: the conjugated gradient"

    def backward(self, ops, grad):
        return (_conjugate(ops, grad),)


class ConjPhysicalBackward0(ConjBackward0):
    """out = conj(z), written out;  dz = conj(grad)"""
    __slots__ = ()


def _conjugated(input, node_cls):
    result = wrap(np.conj(input._data))
    if wants_grad(input):
        record(node_cls, (input,), result)
    return result


def conj(input):
    """The complex conjugate, flagged so that ``is_conj()`` is True (see the module docstring: a copy, where
    PyTorch makes a lazy view). A real tensor is returned as it is."""
    if not _is_complex(input):
        return input
    result = _conjugated(input, ConjBackward0)
    if not is_conj(input):                      # conjugating twice gives the values back, unflagged
        result.__dict__["_is_conj"] = True
    return result


def conj_physical(input):
    """The complex conjugate as an ordinary tensor; a real tensor is returned as it is."""
    if not _is_complex(input):
        return input
    return _conjugated(input, ConjPhysicalBackward0)


_conj_physical_in_place = make_inplace(conj_physical, "conj_physical_")


def conj_physical_(self):
    """In place; a real tensor is left as it is."""
    return _conj_physical_in_place(self) if _is_complex(self) else self


def is_conj(input):
    """Whether ``input`` came from ``conj`` and has not been resolved."""
    return input.__dict__.get("_is_conj", False)


def is_neg(input):
    """Whether ``input`` is the imaginary part of an unresolved ``conj`` (PyTorch's negative bit)."""
    return input.__dict__.get("_is_neg", False)


class NegViewBackward0(NegBackward0):
    """out = -x, flagged negative (``_neg_view``): negation's rules, under the view's own name"""
    __slots__ = ()


def _neg_view(input):
    """-x with the negative bit (PyTorch's lazy negation; here a negated copy, as ``conj`` is a conjugated one):
    ``is_neg()`` is True on it, and negating it again gives the values back unflagged."""
    result = wrap(np.negative(input._data))
    if wants_grad(input):
        record(NegViewBackward0, (input,), result)
    if not is_neg(input):
        result.__dict__["_is_neg"] = True
    return result


def resolve_conj(input):
    """An unflagged copy of a ``conj`` result (CloneBackward0, as in PyTorch); any other tensor as it is."""
    return clone(input) if is_conj(input) else input


def resolve_neg(input):
    """An unflagged copy of a tensor with the negative bit (see ``is_neg``); any other tensor as it is."""
    return clone(input) if is_neg(input) else input
