"""The C library's float32 ``tanhf``, ``expm1f`` and ``log1pf`` as glibc (2.36: fdlibm's algorithms) computes them,
for the numbers PyTorch's kernels hand to their scalar code: ``std::tanh``, ``std::expm1``, ``std::log1p`` of a
float, which its elementwise loops take on the last elements of an array (those that do not fill a pair of 16-lane
vectors, where Sleef's functions run: ``vector_exp``).

None of them is correctly rounded, and none is Sleef's. For |x| ≥ 1, tanh x = 1 − 2/(expm1(2|x|) + 2), below it
−t/(t + 2) with t = expm1(−2|x|). ``expm1f`` reduces its argument by multiples of ln 2 (in two parts) to r in
[−ln2/2, ln2/2], takes a rational approximation of e^r − 1 there, and puts the power of two back by adding to the
exponent bits. ``log1pf`` writes 1 + x as 2^k·(1 + f) with a correction term for the rounding of 1 + x, and takes
log(1 + f) from s = f/(2 + f) by a polynomial in s². Every step is a float32 operation rounded on its own (glibc's
x86-64 build of these has no fused multiply-adds), and each branch is followed here on the elements that take it.
Measured equal to this machine's libm (glibc 2.36) on over 100,000 inputs each.

glibc 2.41 replaced these with CORE-MATH's, which are correctly rounded: where the C library says it is that
version or later, each is the float64 function rounded once to float32 instead.
"""
import os

import numpy as np

from .meta import shapes_from

__all__ = ["c_tanhf", "c_expm1f", "c_log1pf", "FDLIBM"]

_F32 = np.float32
_LN2_HI, _LN2_LO, _INV_LN2 = _F32(6.9313812256e-01), _F32(9.0580006145e-06), _F32(1.4426950216e+00)
_Q = [_F32(q) for q in (-3.3333335072e-02, 1.5873016091e-03, -7.9365076090e-05, 4.0082177293e-06,
                        -2.0109921195e-07)]


def _glibc_version():
    """(major, minor) of the C library when it is glibc, else None."""
    try:
        name, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").split()
        return tuple(int(part) for part in version.split(".")[:2]) if name == "glibc" else None
    except (ValueError, OSError, AttributeError):
        return None


#: whether the C library's tanhf is fdlibm's (glibc before 2.41), followed step by step here
FDLIBM = (_glibc_version() or (2, 0)) < (2, 41)


def _bits(x):
    return x.view(np.int32)


def _from_bits(bits):
    return np.asarray(bits, np.int32).view(np.float32)


def _add_to_exponent(y, k):
    """y·2^k as glibc does it: k added to y's exponent bits."""
    return _from_bits(_bits(y) + (k.astype(np.int32) << 23))


def c_expm1f(x):
    """The C library's ``expm1f`` of a float32 array."""
    x = np.asarray(x, np.float32)
    if not FDLIBM:
        return np.expm1(x.astype(np.float64)).astype(np.float32)
    magnitude_bits = _bits(x) & 0x7FFFFFFF
    negative = x < 0
    with np.errstate(all="ignore"):
        # argument reduction: k multiples of ln 2, r = hi − lo with the rounding error c
        near = magnitude_bits < 0x3F851592                          # |x| < 1.5 ln 2: k = ±1
        k = np.where(negative, -1, 1).astype(np.int32)
        k_far = (_INV_LN2 * x + np.where(negative, _F32(-0.5), _F32(0.5))).astype(np.int32)     # (truncated)
        k = np.where(near, k, k_far)
        t = k.astype(np.float32)
        hi = np.where(near, x - np.where(negative, -_LN2_HI, _LN2_HI), x - t * _LN2_HI)
        lo = np.where(near, np.where(negative, -_LN2_LO, _LN2_LO), t * _LN2_LO)
        reduced = magnitude_bits > 0x3EB17218                       # |x| > ln2/2
        k = np.where(reduced, k, 0)
        r = np.where(reduced, hi - lo, x)
        c = np.where(reduced, (hi - r) - lo, _F32(0))
        # the rational approximation on r
        hfx = _F32(0.5) * r
        hxs = r * hfx
        poly = hxs * _Q[4]
        for q in (_Q[3], _Q[2], _Q[1], _Q[0]):
            poly = hxs * (q + poly)
        r1 = _F32(1) + poly
        t = _F32(3) - r1 * hfx
        e = hxs * ((r1 - t) / (_F32(6) - r * t))
        result = r - (r * e - hxs)                                  # k == 0
        e = r * (e - c) - c
        e = e - hxs
        by_k = {
            -1: _F32(0.5) * (r - e) - _F32(0.5),
            1: np.where(r < _F32(-0.25), _F32(-2) * (e - (r + _F32(0.5))), _F32(1) + _F32(2) * (r - e)),
        }
        for value, branch in by_k.items():
            result = np.where(k == value, branch, result)
        extreme = (k <= -2) | (k > 56)
        y = _add_to_exponent(_F32(1) - (e - r), k)
        result = np.where(extreme, y - _F32(1), result)
        small_k = (k >= 2) & (k < 23)
        one_minus = _from_bits(0x3F800000 - (0x1000000 >> np.clip(k, 0, 31)))        # 1 − 2^-k
        result = np.where(small_k, _add_to_exponent(one_minus - (e - r), k), result)
        large_k = (k >= 23) & (k <= 56)
        power = _from_bits((0x7F - np.clip(k, 0, 127)) << 23)                          # 2^-k
        result = np.where(large_k, _add_to_exponent((r - (e + power)) + _F32(1), k), result)
        result = np.where(magnitude_bits < 0x33000000, x, result)  # |x| < 2^-25: x itself
        result = np.where(negative & (magnitude_bits >= 0x4195B844), _F32(-1), result)     # x ≤ −27·ln 2: −1
        result = np.where(x > _F32(8.8721679688e+01), _F32(np.inf), result)               # overflow
        result = np.where(np.isnan(x), x, result)
    return result.astype(np.float32)




@shapes_from(np.tanh)
def c_tanhf(x):
    """The C library's ``tanhf`` of each element of the float32 array ``x``."""
    x = np.asarray(x, np.float32)
    if not FDLIBM:
        return np.tanh(x.astype(np.float64)).astype(np.float32)
    magnitude = np.abs(x)
    with np.errstate(all="ignore"):
        large = c_expm1f(_F32(2) * magnitude)
        small = c_expm1f(_F32(-2) * magnitude)
        z = np.where(magnitude >= _F32(1), _F32(1) - _F32(2) / (large + _F32(2)), -small / (small + _F32(2)))
        z = np.where(magnitude >= _F32(22), _F32(1), z)
        z = np.where(magnitude < _F32(2.0 ** -55), x * (_F32(1) + x), np.copysign(z, x))
        z = np.where(x == 0, x, z)
        z = np.where(np.isinf(x), np.copysign(_F32(1), x), z)
        z = np.where(np.isnan(x), x, z)
    return z.astype(np.float32)


_LP = [_F32(c) for c in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01, 2.2222198546e-01, 1.8183572590e-01,
                         1.5313838422e-01, 1.4798198640e-01)]


@shapes_from(np.log1p)
def c_log1pf(x):
    """The C library's ``log1pf`` of each element of the float32 array ``x``."""
    x = np.asarray(x, np.float32)
    if not FDLIBM:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(x.astype(np.float64)).astype(np.float32)
    bits = _bits(x)
    magnitude_bits = bits & 0x7FFFFFFF
    one = _F32(1)
    with np.errstate(all="ignore"):
        # k = 0 (no reduction) for −0.2929 < x < 0.41422; otherwise 1 + x = 2^k·u, u normalized, with correction c
        small = (bits < 0x3ED413D7) & ((bits > 0) | (bits <= np.int32(-1097468385)))     # (0xbe95f61f)
        u = np.where(bits < 0x5A000000, one + x, x)
        u_bits = _bits(u)
        k = (u_bits >> 23) - 127
        c = np.where(bits < 0x5A000000, np.where(k > 0, one - (u - x), x - (u - one)) / u, _F32(0))
        hu = u_bits & 0x007FFFFF
        upper = hu >= 0x3504F7
        k = np.where(upper, k + 1, k)
        normalized = _from_bits(np.where(upper, hu | 0x3F000000, hu | 0x3F800000))
        hu = np.where(upper, (0x00800000 - hu) >> 2, hu)
        f = np.where(small, x, normalized - one)
        k = np.where(small, 0, k)
        hu = np.where(small, 1, hu)
        c = np.where(small, _F32(0), c)
        kf = k.astype(np.float32)
        hfsq = _F32(0.5) * f * f
        # |f| < 2^-20 (hu == 0)
        r_tiny = hfsq * (one - _F32(0.66666666666666666) * f)
        tiny = np.where(k == 0, f - r_tiny, kf * _LN2_HI - ((r_tiny - (kf * _LN2_LO + c)) - f))
        tiny = np.where(f == 0, np.where(k == 0, _F32(0), kf * _LN2_HI + (c + kf * _LN2_LO)), tiny)
        s = f / (_F32(2) + f)
        z = s * s
        r = z * _LP[6]
        for lp in (_LP[5], _LP[4], _LP[3], _LP[2], _LP[1], _LP[0]):
            r = z * (lp + r)
        general = np.where(k == 0, f - (hfsq - s * (hfsq + r)),
                           kf * _LN2_HI - ((hfsq - (s * (hfsq + r) + (kf * _LN2_LO + c))) - f))
        result = np.where(hu == 0, tiny, general)
        # the early returns
        result = np.where(magnitude_bits < 0x31000000, np.where(magnitude_bits < 0x24800000, x, x - x * x * _F32(0.5)),
                          result)
        result = np.where(bits >= 0x7F800000, x + x, result)                   # +inf, NaN
        result = np.where((bits < 0) & (magnitude_bits >= 0x3F800000),         # x ≤ −1
                          np.where(x == _F32(-1), _F32(-np.inf), _F32(np.nan)), result)
    return result.astype(np.float32)
