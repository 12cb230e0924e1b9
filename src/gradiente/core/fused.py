"""Fused multiply-add on NumPy arrays: ``a·b + c`` rounded once, as the FMA instruction computes it.

PyTorch's CPU kernels are compiled with GCC, which contracts ``a * b + c`` into one FMA instruction wherever it
can (``1 - y*y`` in tanh's backward, ``x * (to - from) + from`` for uniform random numbers, the affine step of batch
norm). NumPy has no fused multiply-add, and rounding the product first changes the last bit of about a third of the
results: it shows wherever a learner checks a gradient for exact equality, and in random numbers.

Computed in one complex product where NumPy's fuses (checked once per dtype; see below), else exactly by other
means: a product of two float32 numbers is exact in float64, and for float64 Dekker's product and Knuth's sum give
the exact value as an unevaluated sum of doubles, rounded once with the round-to-odd trick (Boldo & Melquiond) so
that double rounding cannot land on the wrong side of a tie. ``Fma32`` keeps the buffers of chains of such steps
(Sleef's and oneDNN's polynomials) between calls.
"""
import math
import sys

# ``threading.local`` is this class; importing all of ``threading`` would add 1.5 ms to ``import gradiente``
from _thread import _local as thread_local
from typing import Any

import numpy as np

from .meta import MetaArray

__all__ = ["fma", "exact_sum_to_float32", "one_minus_square", "two_sum", "Fma32", "complex_product_fuses"]


def fma(a, b, c, dtype=None):
    """``a * b + c`` rounded once to ``dtype``: float32, else float64 (by default the operands' result type)."""
    requested = np.dtype(np.result_type(a, b, c) if dtype is None else dtype)
    dtype = _FLOAT32 if requested == _FLOAT32 else _FLOAT64
    if _holds(a, dtype) and _holds(b, dtype) and _holds(c, dtype) and complex_product_fuses(dtype):
        shape = _broadcast_shape(a, b, c)
        if len(shape) and math.prod(shape) >= _COMPLEX_MIN:
            return _fma_by_complex_product(a, b, c, shape, dtype)
    if np.ndim(b) == 0 and np.ndim(c) == 0 and (b == 1 or c == 0):
        # one of the two operations is exact, so rounding the other one is rounding once
        return np.asanyarray(a, requested) * np.asanyarray(b, requested) + np.asanyarray(c, requested)
    return _fma32_wide(a, b, c) if dtype == _FLOAT32 else _fma64_exact(a, b, c)


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def _broadcast_shape(a, b, c):
    shapes = np.shape(a), np.shape(b), np.shape(c)
    if shapes[0] == shapes[1] == shapes[2]:
        return shapes[0]
    return np.broadcast_shapes(*shapes)


def _holds(v, dtype):
    """Whether ``v`` holds values of ``dtype`` as it is: an array or number of that dtype (or a Python float for
    float64). The complex route rounds any other operand to the dtype first, where the exact routes take it as it
    is."""
    if type(v) is float:
        return dtype == np.float64
    return getattr(v, "dtype", None) == dtype and type(v) is not MetaArray


def _fma32_wide(a, b, c):
    """``a * b + c`` of float32 values rounded once to float32, through float64."""
    # widened before they broadcast (a row or a number stays small), and broadcast by the arithmetic
    a, b, c = (np.asanyarray(v, np.float64) for v in (a, b, c))
    return exact_sum_to_float32(a * b, c)       # (a product of float32 values is exact in float64)


def _fma64_exact(a, b, c):
    """``a * b + c`` in float64 rounded once: Dekker's product and Knuth's sum give the exact value as an
    unevaluated sum of doubles, rounded once by round-to-odd."""
    a, b, c = (np.asanyarray(v, np.float64) for v in np.broadcast_arrays(a, b, c))
    p, p_err = _two_prod(a, b)
    s, s_err = two_sum(c, p)
    with np.errstate(invalid="ignore", over="ignore"):
        plain = a * b + c
        # beyond the finite: an infinite c stays as it is after a finite a·b (which, exact, cannot overflow)
        beyond = np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, plain)
    out = np.where(np.isfinite(s), s + _add_round_to_odd(s_err, p_err), beyond)
    # a zero's sign as the plain sum gives it (−0 + −0 is −0, which the error terms' +0 would lose)
    return np.where((out == 0) & (plain == 0), plain, out)


# --- a fused multiply-add in a complex product ---------------------------------------------------------------
# NumPy's complex product computes the real part of (ar + ai·i)(br + bi·i), ar·br − ai·bi, as one fused
# multiply-add of ar·br and the rounded ai·bi in its vector loops (AVX-512 and AVX2 alike, complex64 and
# complex128). With ai = c and bi = −1, ai·bi = −c is exact, so the real part of (a + c·i)(b − i) is a·b + c
# rounded once: a whole array's fused multiply-add in one pass of arithmetic in the array's own dtype, three times
# faster than float32's float64 route (and without its check for halfway cases), ten times float64's exact one.
# Whether this NumPy fuses is decided once per dtype (``complex_product_fuses``), against the exact routes; where it
# does not, every call takes them.

_COMPLEX_MIN = 2            # (an array of one element takes NumPy's scalar loop, which rounds the product first)
_COMPLEX_BLOCK = 65536      # elements a block: the pair (512 KB of complex64) stays in a core's cache between passes
_COMPLEX_OF: dict = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _fma_by_complex_product(a, b, c, shape, dtype):
    out = np.empty(shape, dtype)
    if math.prod(shape) <= _COMPLEX_BLOCK:
        _complex_block(a, b, c, out)
        return out
    a, b, c = (np.asanyarray(v) for v in (a, b, c))
    rows = _COMPLEX_BLOCK // max(1, math.prod(shape[1:]))
    if rows == 0:                           # rows larger than a block: each row on its own
        for i in range(shape[0]):
            row_a, row_b, row_c = (_row(v, i, len(shape)) for v in (a, b, c))
            out[i] = _fma_by_complex_product(row_a, row_b, row_c, shape[1:], dtype)
        return out
    for start in range(0, shape[0], rows):
        block = slice(start, start + rows)
        block_a, block_b, block_c = (_row(v, block, len(shape)) for v in (a, b, c))
        _complex_block(block_a, block_b, block_c, out[block])
    return out


def _row(v, index, ndim):
    """The part of operand ``v`` (broadcast to ``ndim`` dimensions) that lines up with rows ``index`` of the
    result: v itself where it has no leading dimension of its own to index."""
    if v.ndim < ndim or v.shape[0] == 1:
        return v if isinstance(index, slice) or v.ndim < ndim else v[0]
    return v[index]


def _complex_block(a, b, c, out):
    """``out = a·b + c`` rounded once, as the real part of (a + c·i)(b − i)."""
    size = out.size
    pair, multiplier = _pairs.of(size, _COMPLEX_OF[out.dtype])
    if np.size(a) < np.size(b):
        a, b = b, a                         # (the larger factor in the pair, the smaller in the multiplier)
    pair = pair.reshape(out.shape)
    np.copyto(pair.real, a)
    np.copyto(pair.imag, c)
    if np.size(b) == size:
        multiplier = multiplier.reshape(out.shape)          # (its imaginary parts stay −1)
        np.copyto(multiplier.real, b)
    else:
        scalar = pair.dtype.type                # (a number's multiplier as a NumPy scalar: a 0-d array costs more)
        multiplier = scalar(b) - scalar(1j) if np.ndim(b) == 0 else np.asanyarray(b, pair.dtype) - scalar(1j)
    with np.errstate(over="ignore", invalid="ignore"):      # (the imaginary part, discarded, may overflow)
        np.multiply(pair, multiplier, out=pair)
    copy_real_parts(out, pair)


def copy_real_parts(out, pair):
    """``out[...] = pair.real`` for a contiguous complex array ``pair``: for complex64, as the low halves of its
    elements seen as 64-bit integers (the real part comes first in memory, and on a little-endian CPU that is the
    low half), a contiguous loop four times faster than NumPy's strided copy of ``.real``."""
    if pair.dtype == np.complex64 and _LITTLE_ENDIAN and pair.flags.c_contiguous:
        np.copyto(out.view(np.uint32), pair.view(np.uint64), casting="unsafe")     # (a cast keeps the low half)
    else:
        np.copyto(out, pair.real)


_LITTLE_ENDIAN = sys.byteorder == "little"


class _Pairs(thread_local):
    """The complex buffers of ``_complex_block``, kept between calls (per thread and dtype): a fresh array's pages
    cost a fault each on first touch, as much as the arithmetic."""

    def __init__(self):
        self.kept = {}

    def of(self, n, dtype):
        kept = self.kept.get(dtype)
        if kept is None or kept[0].size < n:
            kept = np.empty(max(n, 64), dtype), np.full(max(n, 64), -1j, dtype)
            self.kept[dtype] = kept
        return kept[0][:n], kept[1][:n]


_pairs = _Pairs()
_complex_verdict: dict = {}


def complex_product_fuses(dtype=np.float32):
    """Whether NumPy's complex product of ``dtype``'s complex type computes its real part ar·br − ai·bi as one fused
    multiply-add of ar·br and the rounded ai·bi, at every length (its vector loop and its tail) and with a
    multiplier of any shape (an array, a broadcast row, a number): true of NumPy's AVX-512 and AVX2 loops. Decided
    on the first call against the exact route, on numbers where rounding the product first would show, then
    remembered."""
    verdict = _complex_verdict.get(dtype)
    if verdict is not None:
        return verdict
    dtype = np.dtype(dtype)
    if dtype not in _complex_verdict:
        exact = _fma32_wide if dtype == np.float32 else _fma64_exact
        complex_dtype: np.dtype = _COMPLEX_OF[dtype]
        rng = np.random.RandomState(0)
        cases = [[rng.standard_normal(n).astype(dtype) for _ in range(3)] for n in list(range(2, 70)) + [1000, 4099]]
        # a multiplier broadcast along rows (a channel's scale), and a number
        cases.append([rng.standard_normal(shape).astype(dtype) for shape in ((3, 5, 37), (1, 5, 1), (1, 5, 1))])
        cases.append([rng.standard_normal(300).astype(dtype), dtype.type(rng.standard_normal()),
                      rng.standard_normal(300).astype(dtype)])
        verdict = True
        for a, b, c in cases:
            pair = np.empty(a.shape, complex_dtype)
            pair.real, pair.imag = a, c
            np.multiply(pair, np.asanyarray(b, complex_dtype) - complex_dtype.type(1j), out=pair)    # (as used)
            if not np.array_equal(pair.real, exact(a, b, c)):
                verdict = False
                break
        _complex_verdict[dtype] = verdict
    return _complex_verdict[dtype]


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


# --- kept buffers for chains of fused steps ------------------------------------------------------------------
_LOW_29, _HALFWAY = 0x1FFFFFFF, 0x10000000      # the float64 bits below float32's last, and their halfway pattern
_KEEP_AT_MOST = 1 << 22     # elements: the buffers kept between calls stay under 70 MB


class Fma32:
    """``a·b + c`` rounded once to float32 for flat arrays of one size (or float32 numbers), in buffers kept between
    calls (per thread): touching fresh memory costs a page fault per 4 KB, as much as the arithmetic."""

    _kept = thread_local()

    @classmethod
    def of_size(cls, n):
        kept = getattr(cls._kept, "buffers", None)
        if kept is None or kept.capacity < n:
            kept = cls(n)
            if n <= _KEEP_AT_MOST:
                cls._kept.buffers = kept
        return kept.sized(n)

    def __init__(self, n):
        self.capacity = n
        self.wide = np.empty(n, np.float64)
        self.bits = np.empty(n, np.int64)
        self.halfway = np.empty(n, bool)
        self.scratch = np.empty((3, n), np.float32)     # for the callers' own intermediate values
        self.pair = np.empty(n, np.complex64)           # Horner's rule by complex products (``horner``)
        self.multiplier = np.full(n, -1j, np.complex64)

    def sized(self, n):
        if n == self.capacity:
            return self
        view = object.__new__(Fma32)
        view.capacity, view.wide, view.bits, view.halfway = n, self.wide[:n], self.bits[:n], self.halfway[:n]
        view.scratch = self.scratch[:, :n]
        view.pair, view.multiplier = self.pair[:n], self.multiplier[:n]
        return view

    def complex_fuses(self):
        """Whether the complex product route fuses here: NumPy's complex product fuses in its vector loop, but an
        array of one element multiplied in place takes a scalar loop that rounds the product first."""
        return self.capacity > 1 and complex_product_fuses()

    def horner(self, first, coefficients, x, out):
        """``out = (…((first·x + c₁)·x + c₂)…)·x + cₙ``, each step a multiply-add rounded once: a polynomial in x
        by Horner's rule (``first`` and the coefficients arrays or float32 numbers).

        Where NumPy's complex product is fused (``complex_product_fuses``), a step is one complex product:
        the real part of (p + c·i)(x − i) is p·x − c·(−1) = p·x + c, and NumPy computes it as one fused
        multiply-add of p·x and the exact product c·(−1). The multiplier x − i stays the same for every step, so a
        step costs one product and one write of c: a third of the float64 route's time."""
        if not self.complex_fuses():
            np.copyto(out, first)
            for c in coefficients:
                self(out, x, c, out=out)
            return out
        pair, multiplier = self.pair, self.multiplier
        np.copyto(multiplier.real, x)
        np.copyto(pair.real, first)
        for c in coefficients:
            np.copyto(pair.imag, c)
            np.multiply(pair, multiplier, out=pair)
        copy_real_parts(out, pair)
        return out

    def __call__(self, a, b, c, out):
        """(``out`` may be one of the operands.)"""
        if self.complex_fuses():                # (see ``horner``: one complex product, no float64 pass)
            pair, multiplier = self.pair, self.multiplier
            if np.ndim(a) == 0:
                a, b = b, a                     # (a number, if there is one, as the multiplier)
            np.copyto(pair.real, a)
            np.copyto(pair.imag, c)
            factor: Any = multiplier
            if np.ndim(b) == 0:                 # a number's multiplier: a complex number, no array to fill
                factor = np.complex64(b) - np.complex64(1j)
            else:
                np.copyto(multiplier.real, b)
            with np.errstate(over="ignore", invalid="ignore"):      # (the imaginary parts, discarded)
                np.multiply(pair, factor, out=pair)
            copy_real_parts(out, pair)
            return out
        wide = self.wide
        np.multiply(a, b, out=wide, dtype=np.float64)        # exact: 24-bit by 24-bit significands
        wide += c
        np.bitwise_and(wide.view(np.int64), _LOW_29, out=self.bits)
        np.equal(self.bits, _HALFWAY, out=self.halfway)
        redone = None
        if self.halfway.any():                                # (before ``out`` overwrites an operand)
            at = np.flatnonzero(self.halfway)
            a_at, b_at, c_at = (v[at] if np.ndim(v) else v for v in (a, b, c))
            redone = at, fma(a_at, b_at, c_at, np.float32)
        np.copyto(out, wide, casting="same_kind")            # rounded to nearest, ties to even
        if redone is not None:
            out[redone[0]] = redone[1]
        return out


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
