"""Discrete Fourier transforms, as ``torch.fft``, differentiable in both modes.

Every transform is one of three primitives, as in PyTorch, each a node with PyTorch's name:

* ``_fft_c2c`` (complex to complex, ``FftC2CBackward0``),
* ``_fft_r2c`` (real to complex, the full spectrum or its non-negative half, ``FftR2CBackward0``),
* ``_fft_c2r`` (the non-negative half of a Hermitian spectrum to real, ``FftC2RBackward0``).

The public functions reduce to them the way PyTorch's do, so graphs show the same nodes: ``ifft`` of a real
tensor is ``conj(r2c(x))``, a signal cut to ``n`` points is a ``narrow`` (``SliceBackward0``) and one padded to
``n`` a ``constant_pad_nd``; ``fftn`` of a real tensor first converts it to complex (``ToCopyBackward0``).

A transform's scale is a ``normalization``: ``"none"``, ``"by_root_n"`` (1/√n) or ``"by_n"`` (1/n), n the number
of points transformed. ``norm="backward"`` (the default) leaves the forward transforms unscaled and divides the
inverse ones by n; ``"forward"`` does the opposite; ``"ortho"`` scales both by 1/√n.

Each primitive is linear, so its derivative rules are transforms too (PyTorch's, in FunctionsManual):

* c2c: the adjoint of the DFT matrix F is its conjugate, the transform with the opposite sign and the same scale;
* r2c: the gradient of a real input is the real part of the adjoint applied to the gradient, zero-padded back to
  the full spectrum when only half was kept;
* c2r: the adjoint is the one-sided r2c transform of the gradient, the bins that stand for two (their mirror
  images were dropped) counted twice.
"""
import math

import numpy as np

from ..core.dtype import FROM_NUMPY, get_default_dtype, scalar_name
from ..core.node import Node
from ..core.record import record, wants_grad
from ..core.tensor import Tensor, _wrap_dim
from .arithmetic import cast
from .complex_numbers import conj
from .nn.padding import pad as _pad
from .rearranging import roll
from .views import narrow

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_COMPLEX_OF = {np.dtype(np.float16): np.complex64, np.dtype(np.float32): np.complex64,
               np.dtype(np.float64): np.complex128}


# --- the three primitives on arrays ---------------------------------------------------------------------

def _scale(array, normalization, points):
    if normalization == "none" or points == 0:
        return array
    factor = 1 / math.sqrt(points) if normalization == "by_root_n" else 1 / points
    return array * array.dtype.type(factor)


def _points(shape, dims):
    return math.prod(shape[d] for d in dims)


def _c2c_array(a, dims, normalization, forward):
    # NumPy's norm="forward" leaves its inverse transform unscaled: both signs unscaled, then ours applied
    transform = np.fft.fftn(a, axes=dims) if forward else np.fft.ifftn(a, axes=dims, norm="forward")
    return _scale(transform.astype(a.dtype, copy=False), normalization, _points(a.shape, dims))


def _r2c_array(a, dims, normalization, onesided):
    transform = np.fft.rfftn(a, axes=dims) if onesided else np.fft.fftn(a, axes=dims)
    return _scale(transform.astype(_COMPLEX_OF[a.dtype], copy=False), normalization, _points(a.shape, dims))


def _c2r_array(a, dims, normalization, last_dim_size):
    shape = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    transform = np.fft.irfftn(a, s=shape, axes=dims, norm="forward")
    real = np.finfo(a.dtype).dtype
    return _scale(transform.astype(real, copy=False), normalization, math.prod(shape))


# --- the primitives as recorded ops ---------------------------------------------------------------------

class FftC2CBackward0(Node):
    """out = F x (F the DFT over ``dims``, of either sign, scaled);  dx = Fᴴ grad, the opposite sign, same scale"""
    complex_ok = True
    formula = "∂(F x)/∂x = F: the gradient is the transform with the opposite sign"

    def backward(self, ops, grad):
        return (_apply(ops, grad, _fft_c2c, self.dims, self.normalization, not self.forward),)

    def jvp(self, ops, x_t):
        return _apply(ops, x_t, _fft_c2c, self.dims, self.normalization, self.forward)


class FftR2CBackward0(Node):
    """out = F x of a real x (the non-negative half of the spectrum if ``onesided``);  dx = Re(Fᴴ grad), the
    gradient zero-padded back to the full spectrum first"""
    complex_ok = True
    formula = "∂(F x)/∂x = F: the gradient is the real part of the inverse-sign transform"

    def backward(self, ops, grad):
        if self.onesided:
            full = self._input_meta[0][0][self.dims[-1]]
            kept = (grad._data if ops.recording else grad).shape[self.dims[-1]]
            widths = [0, 0] * (self.ndim - 1 - self.dims[-1]) + [0, full - kept]
            grad = _pad(grad, widths) if ops.recording else np.pad(
                grad, [(0, full - kept) if d == self.dims[-1] else (0, 0) for d in range(self.ndim)])
        return (ops.real(_apply(ops, grad, _fft_c2c, self.dims, self.normalization, False)),)

    def jvp(self, ops, x_t):
        return _apply(ops, x_t, _fft_r2c, self.dims, self.normalization, self.onesided)


class FftC2RBackward0(Node):
    """out = the real signal of a Hermitian spectrum given by its non-negative half;  dx = the one-sided transform
    of grad, the bins that stand for two counted twice"""
    complex_ok = True
    formula = "the adjoint of the Hermitian inverse: one-sided forward transform, mirrored bins doubled"

    def backward(self, ops, grad):
        result = _apply(ops, grad, _fft_r2c, self.dims, self.normalization, True)
        last = self.dims[-1]
        kept = (result._data if ops.recording else result).shape[last]
        twice = self.last_dim_size - kept          # bins 1 .. twice have a dropped mirror image
        if twice > 0:
            weights = np.ones(kept, dtype=np.finfo((result._data if ops.recording else result).dtype).dtype)
            weights[1:1 + twice] = 2
            weights = weights.reshape([-1 if d == last else 1 for d in range(self.ndim)])
            result = result * ops.constant(weights, result)
        return (result,)

    def jvp(self, ops, x_t):
        return _apply(ops, x_t, _fft_c2r, self.dims, self.normalization, self.last_dim_size)


def _apply(ops, value, primitive, *args):
    """A primitive inside a rule: recorded on Tensors under create_graph, on arrays otherwise."""
    if ops.recording:
        return primitive(value, *args)
    return _ARRAY_FORMS[primitive](value, *args)


def _fft_c2c(x, dims, normalization, forward):
    out = Tensor._make(_c2c_array(x._data, dims, normalization, forward))
    if wants_grad(x):
        record(FftC2CBackward0, (x,), out, dims=dims, normalization=normalization, forward=forward)
    return out


def _fft_r2c(x, dims, normalization, onesided):
    out = Tensor._make(_r2c_array(x._data, dims, normalization, onesided))
    if wants_grad(x):
        record(FftR2CBackward0, (x,), out, dims=dims, normalization=normalization, onesided=onesided,
               ndim=x._data.ndim)
    return out


def _fft_c2r(x, dims, normalization, last_dim_size):
    out = Tensor._make(_c2r_array(x._data, dims, normalization, last_dim_size))
    if wants_grad(x):
        record(FftC2RBackward0, (x,), out, dims=dims, normalization=normalization, last_dim_size=last_dim_size,
               ndim=x._data.ndim)
    return out


_ARRAY_FORMS = {_fft_c2c: _c2c_array, _fft_r2c: _r2c_array, _fft_c2r: _c2r_array}


# --- arguments as PyTorch reads them --------------------------------------------------------------------

def _normalization(norm, forward):
    if norm is None or norm == "backward":
        return "none" if forward else "by_n"
    if norm == "forward":
        return "by_n" if forward else "none"
    if norm == "ortho":
        return "by_root_n"
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _floating(x, function_name):
    """The input as PyTorch's fft functions take it: integers and bools in the default float dtype."""
    if x._data.dtype.kind in "fc":
        if x._data.dtype == np.float16:
            raise RuntimeError("Unsupported dtype Half")
        return x
    return cast(x, get_default_dtype())


def _as_complex(x):
    return x if x._data.dtype.kind == "c" else cast(x, _complex_dtype(x))


def _complex_dtype(x):
    return FROM_NUMPY[np.dtype(_COMPLEX_OF[x._data.dtype])]


def _resized(x, sizes, dims, function_name):
    """``x`` cut (``narrow``) or zero-padded (``constant_pad_nd``) along each of ``dims`` to ``sizes``."""
    for size, d in zip(sizes, dims):
        if size is None or size == -1:
            continue
        if size < 1:
            raise RuntimeError(f"Invalid number of data points ({size}) specified")
        have = x._data.shape[d]
        if size < have:
            x = narrow(x, d, 0, size)
        elif size > have:
            widths = [0, 0] * (x._data.ndim - 1 - d) + [0, size - have]
            x = _pad(x, widths)
    return x


def _one_dim(x, n, dim):
    d = _wrap_dim(dim, x._data.ndim)
    return d, (None if n is None else int(n))


def _many_dims(x, s, dim):
    """PyTorch's ``fftn`` reading of ``s`` and ``dim``: all dims by default, the last ``len(s)`` when only ``s``
    is given, and an error when they disagree."""
    ndim = x._data.ndim
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    sizes = list(s) if s is not None else [None] * len(dims)
    return tuple(dims), sizes


# --- the public transforms ------------------------------------------------------------------------------

def _c2c(x, sizes, dims, norm, forward, name):
    x = _resized(_as_complex(_floating(x, name)), sizes, dims, name)
    return _fft_c2c(x, dims, _normalization(norm, forward), forward)


def _r2c(x, sizes, dims, norm, forward, onesided, name):
    x = _floating(x, name)
    if x._data.dtype.kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {scalar_name(x._data.dtype)}")
    x = _resized(x, sizes, dims, name)
    out = _fft_r2c(x, dims, _normalization(norm, forward), onesided)
    return out if forward else conj(out)


def _c2r(x, sizes, dims, norm, forward, name):
    """The real transforms of a Hermitian spectrum: ``sizes[-1]`` (default 2·(m - 1)) real points along the last
    dim from its m non-negative frequencies."""
    x = _as_complex(_floating(x, name))
    last = sizes[-1]
    if last is None or last == -1:
        last = 2 * (x._data.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resized(x, sizes[:-1] + [last // 2 + 1], dims, name)
    if forward:
        x = conj(x)
    return _fft_c2r(x, dims, _normalization(norm, forward), last)


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim`` (``n`` points: cut or zero-padded)."""
    d, n = _one_dim(input, n, dim)
    if input._data.dtype.kind == "c":
        return _c2c(input, [n], (d,), norm, True, "fft")
    return _r2c(input, [n], (d,), norm, True, False, "fft")


def ifft(input, n=None, dim=-1, norm=None):
    """The one-dimensional inverse discrete Fourier transform of ``input`` along ``dim``."""
    d, n = _one_dim(input, n, dim)
    if input._data.dtype.kind == "c":
        return _c2c(input, [n], (d,), norm, False, "ifft")
    return _r2c(input, [n], (d,), norm, False, False, "ifft")


def fftn(input, s=None, dim=None, norm=None):
    """The N-dimensional discrete Fourier transform over ``dim`` (all dims by default), ``s`` points along each."""
    dims, sizes = _many_dims(input, s, dim)
    return _c2c(input, sizes, dims, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None):
    """The N-dimensional inverse discrete Fourier transform over ``dim``."""
    dims, sizes = _many_dims(input, s, dim)
    return _c2c(input, sizes, dims, norm, False, "ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional discrete Fourier transform (``fftn`` over the last two dims)."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional inverse discrete Fourier transform."""
    return ifftn(input, s, dim, norm)


def rfft(input, n=None, dim=-1, norm=None):
    """The transform of a real signal, its non-negative frequencies only (n // 2 + 1 of them)."""
    d, n = _one_dim(input, n, dim)
    return _r2c(input, [n], (d,), norm, True, True, "rfft")


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of ``rfft``: ``n`` real points (default 2·(m - 1)) from m non-negative frequencies."""
    d, n = _one_dim(input, n, dim)
    return _c2r(input, [n], (d,), norm, False, "irfft")


def rfftn(input, s=None, dim=None, norm=None):
    """The N-dimensional transform of a real signal, the last dim's non-negative frequencies only."""
    dims, sizes = _many_dims(input, s, dim)
    return _r2c(input, sizes, dims, norm, True, True, "rfftn")


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of ``rfftn``."""
    dims, sizes = _many_dims(input, s, dim)
    return _c2r(input, sizes, dims, norm, False, "irfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """``rfftn`` over the last two dims."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """``irfftn`` over the last two dims."""
    return irfftn(input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None):
    """The transform of a Hermitian-symmetric signal given by its first half: ``n`` real frequencies."""
    d, n = _one_dim(input, n, dim)
    return _c2r(input, [n], (d,), norm, True, "hfft")


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of ``hfft``: the non-negative half of the spectrum of a real signal, with the inverse's sign."""
    d, n = _one_dim(input, n, dim)
    return _r2c(input, [n], (d,), norm, False, True, "ihfft")


# --- frequencies and shifts -----------------------------------------------------------------------------

def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point transform, for a sample spacing ``d``: 0, 1, ..., -1 over n·d."""
    values = np.fft.fftfreq(n, d).astype((dtype or get_default_dtype())._np)
    return Tensor._make(values).requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of ``rfft`` of ``n`` points."""
    values = np.fft.rfftfreq(n, d).astype((dtype or get_default_dtype())._np)
    return Tensor._make(values).requires_grad_(requires_grad)


def _shift_dims(input, dim):
    if dim is None:
        return tuple(range(input._data.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input, dim=None):
    """The zero frequency moved to the middle (a ``roll`` by half of each dim)."""
    dims = _shift_dims(input, dim)
    return roll(input, [input._data.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``."""
    dims = _shift_dims(input, dim)
    return roll(input, [(input._data.shape[d] + 1) // 2 for d in dims], dims)
