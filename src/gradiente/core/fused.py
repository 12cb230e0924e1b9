"""Fused multiply-add on NumPy arrays: ``a·b + c`` rounded once, as the FMA instruction computes it.

PyTorch's CPU kernels are compiled with GCC, which contracts ``a * b + c`` into one FMA instruction wherever it
can (``1 - y*y`` in tanh's backward, ``x * (to - from) + from`` for uniform random numbers, the affine step of batch
norm). NumPy has no fused multiply-add, and rounding the product first changes the last bit of about a third of the
results: it shows wherever a learner checks a gradient for exact equality, and in random numbers.

Computed exactly: a product of two float32 numbers is exact in float64, and for float64 Dekker's product and Knuth's
sum give the exact value as an unevaluated sum of doubles, rounded once with the round-to-odd trick (Boldo &
Melquiond) so that double rounding cannot land on the wrong side of a tie.
"""
import math

import numpy as np

from .meta import MetaArray

__all__ = ["fma", "exact_sum_to_float32", "one_minus_square", "two_sum"]


def fma(a, b, c, dtype=None):
    """``a * b + c`` rounded once to ``dtype``: float32, else float64 (by default the operands' result type)."""
    dtype = np.dtype(np.result_type(a, b, c) if dtype is None else dtype)
    if np.ndim(b) == 0 and np.ndim(c) == 0 and (b == 1 or c == 0):
        # one of the two operations is exact, so rounding the other one is rounding once
        return np.asanyarray(a, dtype) * np.asanyarray(b, dtype) + np.asanyarray(c, dtype)
    if dtype == np.float32:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
        if len(shape) > 1 and shape[0] > 1 and math.prod(shape) > _BLOCK and not any(
                type(v) is MetaArray for v in (a, b, c)):
            return _fma32_in_blocks(a, b, c, shape)
        return _fma32(a, b, c)
    a, b, c = (np.asanyarray(v, np.float64) for v in np.broadcast_arrays(a, b, c))
    p, p_err = _two_prod(a, b)
    s, s_err = two_sum(c, p)
    return np.where(np.isfinite(s), s + _add_round_to_odd(s_err, p_err), a * b + c)


_BLOCK = 16384      # float64 elements a block: its temporaries (128 KB each) stay in a core's cache


def _fma32_in_blocks(a, b, c, shape):
    """``_fma32`` a block of leading rows at a time, into one float32 result: the float64 temporaries of a whole
    large array cost more in memory traffic (and the allocator's fresh pages) than the arithmetic itself."""
    out = np.empty(shape, np.float32)
    a, b, c = (np.broadcast_to(v, shape) for v in (a, b, c))
    rows = max(1, _BLOCK // math.prod(shape[1:]))
    for start in range(0, shape[0], rows):
        block = slice(start, start + rows)
        out[block] = _fma32(a[block], b[block], c[block])
    return out


def _fma32(a, b, c):
    """``a * b + c`` of float32 values rounded once to float32, through float64."""
    # widened before they broadcast (a row or a number stays small), and broadcast by the arithmetic
    a, b, c = (np.asanyarray(v, np.float64) for v in (a, b, c))
    return exact_sum_to_float32(a * b, c)       # (a product of float32 values is exact in float64)


def exact_sum_to_float32(exact, c):
    """``exact + c`` rounded once to float32, for float64 ``exact`` and ``c`` that each hold a value exactly (a
    product of two float32 numbers, a float32 number)."""
    s = np.asanyarray(exact + c)      # (an array even for 0-d operands, whose sum NumPy makes a scalar)
    # Rounding s to float32 rounds the exact sum correctly, unless s landed exactly halfway between
    # two float32 values (low 29 bits 1000...0): then the side the exact sum was on decides.
    tie = (s.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
    if tie.any():
        s[tie] = _add_round_to_odd(np.broadcast_to(exact, s.shape)[tie],
                                   np.broadcast_to(np.asanyarray(c, np.float64), s.shape)[tie])
    return s.astype(np.float32)


def one_minus_square(x):
    """``1 - x²`` rounded once (``fma(-x, x, 1)``) for a float32 or float64 array with |x| ≤ 1 (tanh's output),
    spelled out for the backward pass it sits on: ``fma``'s general path costs ~10 µs on a small array."""
    if x.dtype == np.float32:
        if x.ndim == 0:         # (NumPy's arithmetic on 0-d arrays gives scalars, which the tie step cannot write into)
            return one_minus_square(x.reshape(1)).reshape(())
        # x² is exact in float64 and so, for |x| ≥ 1/8, is 1 - x²; rounding it to float32 is then rounding once.
        # Below that the float64 difference may round first, which matters only if it lands exactly on a float32
        # tie: fma decides those.
        wide = x.astype(np.float64)
        result = 1.0 - wide * wide
        ties = (result.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
        rounded = result.astype(np.float32)
        if ties.any():      # only there: fma's general path on a large array costs as much as the rest ten times
            at_ties = x[ties]
            rounded[ties] = fma(-at_ties, at_ties, np.float32(1), np.float32)
        return rounded
    # float64: x² = square + error exactly (Dekker), 1 - square = rest + rest_error exactly (Fast2Sum, as |x| ≤ 1);
    # their sum, added smallest first, rounds once but where the exact value lies within 2⁻¹⁰⁴ of a tie (fma's
    # round-to-odd step, which settles even that, costs as much again)
    square, error = _two_prod(x, x)
    rest = 1.0 - square
    rest_error = (1.0 - rest) - square
    return rest + (rest_error - error)


def two_sum(a, b):
    """``s, err`` with ``s`` the rounded ``a + b`` and ``s + err == a + b`` exactly (Knuth)."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _two_prod(a, b):
    """``p, err`` with ``p`` the rounded ``a * b`` and ``p + err == a * b`` exactly (Dekker)."""
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _split(a):
    """``a == hi + lo`` with 26-bit halves, whose products are exact in float64 (Veltkamp)."""
    scaled = a * 134217729.0   # 2**27 + 1
    hi = scaled - (scaled - a)
    return hi, a - hi


def _add_round_to_odd(a, b):
    """``a + b`` in float64, an inexact sum rounded to the neighbour whose last bit is odd.

    Rounding such a result again, to nearest, gives the same as rounding the exact sum once
    (Boldo & Melquiond, 2008): the odd bit remembers which side of a tie the exact value was on.
    """
    s, err = two_sum(a, b)
    fix = (err != 0) & np.isfinite(s) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    return np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
