"""The C library's float32 logarithm, ``logf``, as glibc computes it, for the numbers PyTorch's kernels hand to its
scalar code (``std::log`` of a float: the log-sum-exp the CPU flash-attention kernel keeps for its backward).

glibc's ``logf`` is not correctly rounded: it computes in double and rounds once, and is off the correctly rounded
value for about 0.09% of inputs (measured against the machine's libm), enough to change one row of attention
probabilities in a few hundred. The algorithm (Szabolcs Nagy's, shared by glibc, musl and Arm's optimized routines):
x = 2^k·z with z in [0x1.66p-1, 0x1.66p0), split into 16 subintervals; for the subinterval's c,
log(x) = log1p(z/c − 1) + log(c) + k·ln 2, with 1/c and log(c) from a table and log1p of r = z·(1/c) − 1 a
polynomial of degree 4 in double. On x86-64 with FMA, glibc takes the build of it whose multiply-adds are fused
(its ``-fma`` variant, chosen at load time), and so does this. Special values (zero, negative, inf, NaN) and
subnormals take NumPy's float64 logarithm rounded once, which is glibc's for them.
"""
import numpy as np

from .fused import fma
from .meta import shapes_from

__all__ = ["c_logf"]

# (1/c, log c) for the 16 subintervals, as glibc's e_logf_data.c lists them
_TABLE = np.array([[float.fromhex(a), float.fromhex(b)] for a, b in (
    ("0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2"), ("0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2"),
    ("0x1.49539f0f010bp+0", "-0x1.01eae7f513a67p-2"), ("0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3"),
    ("0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3"), ("0x1.25e227b0b8eap+0", "-0x1.1aa2bc79c81p-3"),
    ("0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4"), ("0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4"),
    ("0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5"), ("0x1p+0", "0x0p+0"),
    ("0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5"), ("0x1.ca4b31f026aap-1", "0x1.c5e53aa362eb4p-4"),
    ("0x1.b2036576afce6p-1", "0x1.526e57720db08p-3"), ("0x1.9c2d163a1aa2dp-1", "0x1.bc2860d22477p-3"),
    ("0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2"), ("0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2"))])
_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_A0, _A1, _A2 = (float.fromhex(c) for c in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2"))
_OFF = np.uint32(0x3F330000)        # the bits of 0x1.66p-1, where the subintervals start


@shapes_from(lambda x: np.log(x).astype(np.float32))
def c_logf(x):
    """glibc's ``logf`` of each element of the float32 array ``x``."""
    x = np.asarray(x, np.float32)
    bits = x.reshape(-1).view(np.uint32)
    normal = (bits - np.uint32(0x00800000)) < np.uint32(0x7F800000 - 0x00800000)     # positive, finite, normal
    out = np.empty(bits.size, np.float32)
    special = ~normal
    if special.any():                   # zero, negative, inf, NaN, subnormal: rounded once from float64
        with np.errstate(divide="ignore", invalid="ignore"):
            out[special] = np.log(x.reshape(-1)[special].astype(np.float64)).astype(np.float32)
    ix = bits[normal]
    tmp = ix - _OFF
    index = (tmp >> np.uint32(19)) & np.uint32(15)
    k = tmp.view(np.int32) >> 23                        # (an arithmetic shift: k may be negative)
    z = (ix - (tmp & np.uint32(0x1FF << 23))).view(np.float32).astype(np.float64)
    invc, logc = _TABLE[index, 0], _TABLE[index, 1]
    r = fma(z, invc, np.float64(-1), np.float64)
    y0 = fma(k.astype(np.float64), np.float64(_LN2), logc, np.float64)
    r2 = r * r
    y = fma(np.float64(_A1), r, np.float64(_A2), np.float64)
    y = fma(np.float64(_A0), r2, y, np.float64)
    y = fma(y, r2, y0 + r, np.float64)
    out[normal] = y.astype(np.float32)
    return out.reshape(x.shape)
