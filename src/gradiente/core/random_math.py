"""PyTorch's compiled arithmetic, copied in NumPy so that random numbers match it to the last bit: ``a * b + c``
rounded once as a fused multiply-add (``_fma``), the C library's float64 log, sin and cos (``_c_log`` and
friends), and the AVX2 float32 log, sin and cos of ``avx_mathfun.h`` (``_avx2_log``, ``_avx2_sincos``).
``random``'s docstring says where PyTorch uses each.
"""
import math

import numpy as np

from .fused import fma

# ``a * b + c`` rounded once (core/fused.py): the random number formulas round as PyTorch's FMAs do
_fma = fma


def _from_libm(function):
    """``function`` from ``math`` (the C library's) applied to each element of a float64 array."""
    ufunc = np.frompyfunc(function, 1, 1)
    return lambda x: ufunc(x).astype(np.float64)


_c_log, _c_log1p, _c_exp = _from_libm(math.log), _from_libm(math.log1p), _from_libm(math.exp)
_c_sin, _c_cos, _c_tan = _from_libm(math.sin), _from_libm(math.cos), _from_libm(math.tan)

# --- float32 log, sin and cos of avx_mathfun.h (Cephes polynomials), operation for operation ----------
# GCC fuses a multiply into the add that uses it; the _fma calls mark where it does.

_F32 = np.float32
_LOG_POLY = [_F32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                               1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                               3.3333331174e-1)]
_SIN_POLY = [_F32(c) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_COS_POLY = [_F32(c) for c in (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)]
_PI_PARTS = [_F32(c) for c in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]


def _fma32(a, b, c):
    return _fma(a, b, c, np.float32)


def _avx2_log(x):
    """Natural log of positive normal float32 values, as ``log256_ps``: log(m * 2**e) by a polynomial in m."""
    bits = x.view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 127).astype(_F32) + _F32(1)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F32)   # mantissa in [0.5, 1)
    small = m < _F32(0.707106781186547524)        # for m < sqrt(1/2) use 2m - 1, keeping the argument near 0
    e = e - small.astype(_F32)
    m = (m - _F32(1)) + np.where(small, m, _F32(0))
    z = m * m
    y = np.full_like(m, _LOG_POLY[0])
    for c in _LOG_POLY[1:]:
        y = _fma32(y, m, c)
    y = _fma32(y * m, z, e * _F32(-2.12194440e-4))
    y = _fma32(-z, _F32(0.5), y)
    return _fma32(e, _F32(0.693359375), m + y)


def _avx2_sincos(x):
    """``sin(x), cos(x)`` of non-negative float32 values, as ``sincos256_ps``."""
    j = (x * _F32(1.27323954473516)).astype(np.int32)   # octant of x, by 4/pi
    j = (j + 1) & ~1
    y = j.astype(_F32)
    for part in _PI_PARTS:                               # x - j * pi/4, pi/4 in three parts
        x = _fma32(y, part, x)
    z = x * x
    near_cos = np.full_like(x, _COS_POLY[0])             # cos on [-pi/4, pi/4]
    for c in _COS_POLY[1:]:
        near_cos = _fma32(near_cos, z, c)
    near_cos = _fma32(near_cos * z, z, -(z * _F32(0.5))) + _F32(1)
    near_sin = np.full_like(x, _SIN_POLY[0])             # sin on [-pi/4, pi/4]
    for c in _SIN_POLY[1:]:
        near_sin = _fma32(near_sin, z, c)
    near_sin = _fma32(near_sin * z, x, x)
    sin_poly = (j & 2) == 0
    sin = np.where(sin_poly, near_sin, near_cos)
    cos = np.where(sin_poly, near_cos, near_sin)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j - 2) & 4) == 0, -cos, cos)
    return sin, cos
