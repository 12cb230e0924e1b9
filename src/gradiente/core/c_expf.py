"""The C library's float32 exponential, ``expf``, as glibc computes it, for the elements PyTorch's loops hand to its
scalar code (``std::exp`` of a float: the tail of a sigmoid's or attention's vector loop).

glibc's ``expf`` is not correctly rounded: it computes in double and rounds once at the end, and the double result
is close enough to round right nearly always, but not always (measured here: 64 of 100,000 random inputs differ from
the correctly rounded value, and so did PyTorch's sigmoid of a 4-element tensor). The algorithm (Szabolcs Nagy's,
shared by glibc, musl and Arm's optimized routines): x·32/ln 2 = k + r with k an integer and |r| ≤ 1/2;
e^x = 2^(k/32) · 2^(r/32), the first factor from a table of 32 doubles with k's high bits added to the exponent,
the second a cubic in r. Every step is a double operation, so NumPy's float64 reproduces it exactly (checked against
the machine's libm on 400,000 inputs, ``tests/test_c_expf.py``); the cubic's multiply-adds give the same doubles
fused or not for these inputs.
"""
import numpy as np

from .meta import shapes_from

__all__ = ["c_expf"]

_TABLE_BITS = 5
_N = 1 << _TABLE_BITS
# 2^(i/32) as the bits of a double, less i << 47 (the part of k that the shift below adds back into the exponent)
_TABLE = np.array([
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540], dtype=np.uint64)
_CUBIC = [float.fromhex(c) for c in ("0x1.c6af84b912394p-5", "0x1.ebfce50fac4f3p-3", "0x1.62e42ff0c52d6p-1")]
_C0, _C1, _C2 = (c / _N ** (3 - i) for i, c in enumerate(_CUBIC))     # (the cubic in r/32: exact power-of-2 scalings)
_INV_LN2_N = float.fromhex("0x1.71547652b82fep+0") * _N
_SHIFT = float.fromhex("0x1.8p52")      # adding it rounds z to an integer held in the low bits of the double
_OVERFLOW = np.float32(float.fromhex("0x1.62e42ep6"))       # log(2^128)
_UNDERFLOW = np.float32(-float.fromhex("0x1.9fe368p6"))     # log(2^-150)


@shapes_from(lambda x: np.exp(x).astype(np.float32))
def c_expf(x):
    """``expf`` of each element of a float32 array (0-d included), glibc's bits (0 below -103.97, inf above
    88.72)."""
    shape = np.shape(x)
    x = np.asarray(x, np.float32).reshape(-1)       # (1-D: NumPy gives a 0-d array's arithmetic back as scalars)
    xd = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        z = _INV_LN2_N * xd
        kd = z + _SHIFT
        ki = kd.view(np.uint64)
        kd = kd - _SHIFT                    # (a new array: ki views the sum's bits)
        r = z - kd
        scale = (_TABLE[ki % np.uint64(_N)] + (ki << np.uint64(52 - _TABLE_BITS))).view(np.float64)
        y = (_C0 * r + _C1) * (r * r) + (_C2 * r + 1)
        out = (y * scale).astype(np.float32)
    out[x > _OVERFLOW] = np.inf             # (glibc's special cases; NaN comes through the arithmetic as NaN)
    out[x < _UNDERFLOW] = 0
    return out.reshape(shape)
