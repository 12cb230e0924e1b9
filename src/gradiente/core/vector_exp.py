"""The float32 exponentials of PyTorch's vectorized CPU kernels, operation for operation, so that softmax and
attention round as PyTorch's do.

PyTorch computes ``torch.exp`` with Intel's vector math library (correctly rounded for 99% of float32 inputs, which
``rounded_math.exp`` stands in for), but its softmax and attention kernels take their exponentials from its own
vector code, built (in the x86-64 wheels, on a CPU with AVX-512) from two other algorithms:

* ``sleef_exp``: Sleef's ``expf`` (the u10 variant), which ``softmax`` and ``log_softmax`` use. It differs from the
  correctly rounded value for about a tenth of inputs, and a softmax computed with any other exponential differs
  from PyTorch's in as many elements;
* ``exp_u20``: a faster degree-5 polynomial, within 20 units in the last place, which the fused flash-attention
  kernel of ``scaled_dot_product_attention`` uses on whole 16-lane vectors.

Each is a chain of fused multiply-adds (``a·b + c`` rounded once), which NumPy lacks: ``fused.Fma32`` computes
each step, in buffers kept between calls (a fresh 1 MB temporary per step costs more in page faults than the
arithmetic itself).
"""
import functools

# ``threading.local`` is this class; importing all of ``threading`` would add 1.5 ms to ``import gradiente``
from _thread import _local as thread_local

import numpy as np

from .fused import Fma32, fma, two_sum
from .meta import shapes_from

__all__ = ["sleef_exp", "sleef_expm1", "sleef_log", "sleef_log1p", "sleef_pow", "sleef_tanh", "exp_u20", "Fma32"]

_F32 = np.float32
_LOW_29, _HALFWAY = 0x1FFFFFFF, 0x10000000      # the float64 bits below float32's last, and their halfway pattern


# --- Sleef's expf (u10) -----------------------------------------------------------------------------------------
_R_LN2 = _F32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = _F32(0.693145751953125), _F32(1.428606765330187045e-06)
_SLEEF_POLY = [_F32(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                                 0.00833336077630519866943359, 0.0416664853692054748535156,
                                 0.166666671633720397949219, 0.5)]


@shapes_from(np.exp)
def sleef_exp(x):
    """e^x for a float32 array as Sleef's ``expf`` computes it:

        q = rint(x / ln 2);  s = x - q·ln 2 (ln 2 in two parts, each step fused)
        u = polynomial in s (Horner's rule, fused);  e^x ≈ (1 + (s²·u + s)) · 2^q
    """
    shape = np.shape(x)
    x = np.asanyarray(x, np.float32).reshape(-1)
    if x.size <= _SMALL:
        small = _sleef_exp_small(x)
        if small is not None:
            return small.reshape(shape)
    fma32 = Fma32.of_size(x.size)
    mask = fma32.halfway                # (a scratch boolean buffer between the fused steps)
    q, s, square = fma32.scratch
    with np.errstate(invalid="ignore", over="ignore"):
        np.multiply(x, _R_LN2, out=q)
        np.rint(q, out=q)
        np.clip(q, -256, 256, out=q)    # (beyond, the result is 0 or inf, set below; a NaN stays, and is too)
        # q·L2U is exact (L2U has 15 significant bits) and so is x - q·L2U: the first fused step is two plain ones
        np.multiply(q, -_L2U, out=s)
        s += x
        fma32(q, -_L2L, s, out=s)
        u = np.empty_like(x)
        fma32(_SLEEF_POLY[0], s, _SLEEF_POLY[1], out=u)
        for c in _SLEEF_POLY[2:]:
            fma32(u, s, c, out=u)
        np.multiply(s, s, out=square)
        fma32(square, u, s, out=u)
        u += _F32(1)
        # · 2^q as two powers of two, each in float32's normal range: 2^(q >> 1), then 2^(q - (q >> 1))
        whole, part = s.view(np.int32), square.view(np.int32)
        np.copyto(whole, q, casting="unsafe")
        np.right_shift(whole, 1, out=part)
        u *= _power_of_two(part)
        np.right_shift(whole, 1, out=part)
        np.subtract(whole, part, out=part)
        u *= _power_of_two(part)
    np.copyto(u, 0, where=np.less(x, _F32(-104), out=mask))
    np.copyto(u, np.inf, where=np.greater(x, _F32(100), out=mask))
    np.copyto(u, x, where=np.isnan(x, out=mask))
    return u.reshape(shape)


_SMALL = 4096


class _KeptSums(thread_local):
    """``_sleef_exp_small``'s float64 sums (229 KB), kept per thread: a fresh array that size takes fresh pages from
    the system on every call (the C allocator hands memory that large back when it is freed), which cost as much as
    the arithmetic."""
    sums: "np.ndarray | None" = None


_kept_sums = _KeptSums()


def _sleef_exp_small(x):
    """``sleef_exp`` of a small flat array in fewer NumPy calls (each costs about a microsecond, which on a loss's
    few hundred values outweighs the arithmetic): every fused step's float64 sum is kept in one array and checked
    for a halfway case once at the end. None in the rare case one was found: the general path then decides."""
    n = x.size
    kept = _kept_sums.sums
    if kept is None:
        kept = _kept_sums.sums = np.empty((7, _SMALL))
    sums = kept[:, :n]                      # the float64 sum of each fused step, before its rounding
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.rint(x * _R_LN2)
        np.clip(q, -256, 256, out=q)
        s = q * -_L2U
        s += x
        wide_q, wide_s = q.astype(np.float64), s.astype(np.float64)
        np.multiply(wide_q, float(-_L2L), out=sums[0])
        sums[0] += wide_s
        s = sums[0].astype(np.float32)
        wide_s = s.astype(np.float64)
        u = np.float64(_SLEEF_POLY[0])
        for step, c in enumerate(_SLEEF_POLY[1:], start=1):
            np.multiply(wide_s, u, out=sums[step])
            sums[step] += float(c)
            u = sums[step].astype(np.float32).astype(np.float64)
        square = (s * s).astype(np.float64)
        np.multiply(square, u, out=sums[6])
        sums[6] += wide_s
        t = sums[6].astype(np.float32)
        if ((sums.view(np.int64) & _LOW_29) == _HALFWAY).any():
            return None
        t += _F32(1)
        whole = q.astype(np.int32)
        half = whole >> 1
        t *= _power_of_two(half.copy())
        t *= _power_of_two(whole - half)
    t[x < _F32(-104)] = 0
    t[x > _F32(100)] = np.inf
    nan = np.isnan(x)
    t[nan] = x[nan]
    return t


# --- Sleef's logf (u10) ------------------------------------------------------------------------------------------
# log_softmax takes the logarithm of each row's Σ e^(x - max) with Sleef's logf, which differs from the correctly
# rounded value for about one sum in 250: enough for a batch's mean cross-entropy to differ in its last digits.
_LN2_HI, _LN2_LO = _F32(0.69314718246459960938), _F32(-1.904654323148236017e-09)
_LOG_POLY = (_F32(0.3027294874), _F32(0.3996108174), _F32(0.6666694880))


def _fused_steps(n):
    """``fma(a, b, c)`` for the steps of a double-float algorithm on n values: each result rounded once to float32,
    into a fresh array (the steps' results stay alive together)."""
    fused = Fma32.of_size(n)
    return lambda a, b, c: fused(a, b, c, out=np.empty(n, np.float32))


@shapes_from(np.log)
def sleef_log(d):
    """ln d for a float32 array as Sleef's ``logf`` (u10, AVX-512 build) computes it, in double-float arithmetic
    (a value carried as an unevaluated sum hi + lo of two floats):

        d = m·2^e with m in [0.75, 1.5);  x = (m - 1)/(m + 1) as hi + lo;  ln d = e·ln 2 + 2x + x³·P(x²)

    every multiply-add fused, as there."""
    shape = np.shape(d)
    d = np.asanyarray(d, np.float32).reshape(-1)
    _fma32 = _fused_steps(d.size)
    with np.errstate(all="ignore"):
        scaled = d * _F32(1 / 0.75)
        e = (np.frexp(scaled)[1] - 1).astype(np.float32)        # ⌊log2(d·4/3)⌋, as the vgetexp instruction
        e[np.isinf(scaled)] = 128
        fraction = np.frexp(d)[0]                                 # in [0.5, 1): the mantissa in [0.75, 1.5)
        m = np.where(fraction < _F32(0.75), fraction * _F32(2), fraction).astype(np.float32)
        r = _log_of_quotient(e, two_sum(_F32(-1), m), two_sum(_F32(1), m), _fma32)
        r[np.isposinf(d)] = np.inf
        r[(d < 0) | np.isnan(d)] = np.nan
        r[d == 0] = -np.inf
    return r.reshape(shape)


def _log_of_quotient(e, numerator, denominator, _fma32):
    """Sleef's shared end of ``logf`` and ``log1pf``: e·ln 2 + 2x + x³·P(x²) with x = numerator/denominator, each a
    double-float pair (hi, lo), every step as Sleef's double-float arithmetic takes it (multiply-adds fused)."""
    (num_hi, num_lo), (den_hi, den_lo) = numerator, denominator
    s_hi = _LN2_HI * e                                        # e·ln 2, double-float
    s_lo = _fma32(_LN2_LO, e, _fma32(_LN2_HI, e, -s_hi))
    t = _F32(1) / den_hi                                      # the quotient, double-float
    x_hi = num_hi * t
    u = _fma32(t, num_hi, -x_hi)
    v = _fma32(-den_lo, t, _fma32(-den_hi, t, _F32(1)))
    x_lo = _fma32(x_hi, v, _fma32(num_lo, t, u))
    x2 = x_hi * x_hi
    p = _fma32(_fma32(_LOG_POLY[0], x2, _LOG_POLY[1]), x2, _LOG_POLY[2])
    twice_hi, twice_lo = x_hi * _F32(2), x_lo * _F32(2)      # s += 2x, then s += x³·P
    total = s_hi + twice_hi
    s_lo = (((s_hi - total) + twice_hi) + s_lo) + twice_lo
    s_hi = total
    cube = (x2 * x_hi) * p
    total = s_hi + cube
    s_lo = ((s_hi - total) + cube) + s_lo
    return total + s_lo


@shapes_from(np.log1p)
def sleef_log1p(d):
    """ln(1 + d) for a float32 array as Sleef's ``log1pf`` (u10, AVX-512 build) computes it, which PyTorch's
    ``log_sigmoid`` (and so ``binary_cross_entropy_with_logits``) takes of Sleef's e^-|x|:

        1 + d = (1 + m)·2^e with 1 + m in [0.75, 1.5), m = d·2^-e + (2^-e − 1) fused;  x = m/(2 + m) as hi + lo
        ln(1 + d) = e·ln 2 + 2x + x³·P(x²)  (the polynomial of ``sleef_log``), in double-float arithmetic.

    Past 1e38 Sleef takes ``logf`` of d itself (``sleef_log``)."""
    shape = np.shape(d)
    d = np.asanyarray(d, np.float32).reshape(-1)
    _fma32 = _fused_steps(d.size)
    with np.errstate(all="ignore"):
        one_plus = d + _F32(1)
        scaled = one_plus * _F32(1 / 0.75)
        e = (np.frexp(scaled)[1] - 1).astype(np.float32)         # ⌊log2⌋, as the vgetexp instruction
        e[np.isinf(scaled)] = 128
        t = np.ldexp(np.ones_like(d), -np.rint(e).astype(np.int32)).astype(np.float32)
        m = _fma32(d, t, t - _F32(1))
        # x = m / (2 + m), the numerator exact (no low part), the denominator double-float (|2| ≥ |m|)
        r = _log_of_quotient(e, (m, _F32(0)), two_sum(_F32(2), m), _fma32)
        large = d > _F32(1e38)
        if large.any():
            r[large] = sleef_log(d[large])
        r[(d < -1) | np.isnan(d)] = np.nan
        r[d == -1] = -np.inf
        r[(d == 0) & np.signbit(d)] = -0.0
    return r.reshape(shape)


# --- exp_u20 (AVX-512) ------------------------------------------------------------------------------------------
_C1, _C2, _C3, _C4, _C5 = (_F32(c) for c in (0.999999701, 0.499991506, 0.166676521, 0.0418978221, 0.00828929059))
_LOG2E, _LN2, _LN_FLT_MIN, _LN_FLT_MAX = (np.array([bits], np.uint32).view(np.float32)[0]
                                          for bits in (0x3FB8AA3B, 0x3F317218, 0xC2AEAC50, 0x42B17218))


@shapes_from(lambda x, fused_scale=True: np.exp(x))
def exp_u20(x, fused_scale=True):
    """e^x for a float32 array as PyTorch's ``Vectorized<float>::exp_u20`` computes it:

        x clamped to [ln FLT_MIN, ln FLT_MAX];  n = floor(x·log2 e + 1/2);  r = x - n·ln 2
        p = 1 + r(c1 + r(c2 + r(c3 + r(c4 + r·c5))));  e^x ≈ p · 2^(n-1) · 2   (0 below ln FLT_MIN)
    every multiply-add fused. PyTorch took this algorithm from oneDNN, whose own kernels (GELU's backward) compute
    it with one difference: x·log2 e is rounded before the 1/2 is added (``fused_scale=False``).
    """
    shape = np.shape(x)
    x = np.asanyarray(x, np.float32).reshape(-1)
    fma32 = Fma32.of_size(x.size)
    clamped, n, r = fma32.scratch
    np.minimum(x, _LN_FLT_MAX, out=clamped)
    np.maximum(clamped, _LN_FLT_MIN, out=clamped)
    # (x86's min returns its second operand when the first is NaN: a NaN score becomes ln FLT_MAX, as there)
    nan = np.isnan(x, out=fma32.halfway)
    if nan.any():                           # (a masked write costs a millisecond a million elements even when empty)
        np.copyto(clamped, _LN_FLT_MAX, where=nan)
    if fused_scale:
        fma32(clamped, _LOG2E, _F32(0.5), out=n)
    else:
        np.multiply(clamped, _LOG2E, out=n)
        n += _F32(0.5)
    np.floor(n, out=n)
    fma32(-n, _LN2, clamped, out=r)
    p = fma32.horner(_C5, (_C4, _C3, _C2, _C1, _F32(1)), r, out=np.empty_like(x))
    n -= _F32(1)
    power = clamped.view(np.int32)
    with np.errstate(invalid="ignore"):
        np.copyto(power, n, casting="unsafe")
    p *= _power_of_two(power)
    p *= _F32(2)
    underflow = np.less(x, _LN_FLT_MIN, out=fma32.halfway)
    if underflow.any():
        np.copyto(p, 0, where=underflow)
    return p.reshape(shape)


def _power_of_two(n):
    """2^n as float32 for int32 n in the normal range, built from its exponent bits, in ``n``'s memory."""
    n += np.int32(127)
    np.left_shift(n, 23, out=n)
    return n.view(np.float32)


# --- Sleef's powf (u10) ------------------------------------------------------------------------------------------
# x^y = e^(y·ln|x|), both in double-float arithmetic (a value as an unevaluated sum hi + lo of two floats), as
# Sleef's ``xpowf`` computes it with ``logkf`` and ``expkf``; every step below is one of its double-float operations
# (``df.h``, the FMA build), named as there. PyTorch's float32 ``pow`` with an exponent other than 2, 3, 0.5, -0.5,
# -1 and -2 takes it on its vectors.

def _f32(value):
    return np.asanyarray(value, np.float32)


def _df_add2(x, y):
    """x + y (floats or pairs) exactly, as a pair (Knuth's two-sum, carrying the low parts)."""
    (x_hi, x_lo), (y_hi, y_lo) = (v if isinstance(v, tuple) else (v, None) for v in (x, y))
    s = _f32(x_hi + y_hi)
    v = _f32(s - x_hi)
    t = _f32(_f32(x_hi - _f32(s - v)) + _f32(y_hi - v))
    low = x_lo if y_lo is None else y_lo if x_lo is None else _f32(x_lo + y_lo)
    return s, (t if low is None else _f32(t + low))


def _df_add(x, y):
    """x + y as a pair, for |x| >= |y| (Dekker's fast two-sum, the low parts added after)."""
    (x_hi, x_lo), (y_hi, y_lo) = (v if isinstance(v, tuple) else (v, None) for v in (x, y))
    s = _f32(x_hi + y_hi)
    t = _f32(_f32(x_hi - s) + y_hi)
    for low in (x_lo, y_lo):
        if low is not None:
            t = _f32(t + low)
    return s, t


def _df_mul(x, y, fused):
    """x · y (a pair times a float or a pair) as a pair, the product's error by a fused multiply-add."""
    (x_hi, x_lo), y_pair = x, isinstance(y, tuple)
    y_hi, y_lo = y if y_pair else (y, None)
    s = _f32(x_hi * y_hi)
    t = fused(x_lo, y_hi, fused(x_hi, y_hi, -s))
    return s, (fused(x_hi, y_lo, t) if y_pair else t)


def _df_square(x, fused):
    hi, lo = x
    s = _f32(hi * hi)
    return s, fused(_f32(hi + hi), lo, fused(hi, hi, -s))


def _df_divide(numerator, denominator, fused):
    (n_hi, n_lo), (d_hi, d_lo) = numerator, denominator
    t = _f32(np.float32(1) / d_hi)
    s = _f32(n_hi * t)
    u = fused(t, n_hi, -s)
    v = fused(-d_lo, t, fused(-d_hi, t, np.float32(1)))
    return s, fused(s, v, fused(n_lo, t, u))


def _sleef_logk(d, fused):
    """ln d (d > 0) as a pair: Sleef's ``logkf``."""
    scaled = d * _F32(1 / 0.75)
    e = (np.frexp(scaled)[1] - 1).astype(np.float32)            # ⌊log2(d·4/3)⌋, as the vgetexp instruction
    e[np.isinf(scaled)] = 128
    fraction = np.frexp(d)[0].astype(np.float32)
    m = np.where(fraction < _F32(0.75), fraction * _F32(2), fraction).astype(np.float32)   # in [0.75, 1.5)
    x = _df_divide(_df_add2(_F32(-1), m), _df_add2(_F32(1), m), fused)
    x2 = _df_square(x, fused)
    t = fused(fused(_F32(0.240320354700088500976562), x2[0], _F32(0.285112679004669189453125)), x2[0],
              _F32(0.400007992982864379882812))
    s = _df_mul((_F32(0.69314718246459960938), _F32(-1.904654323148236017e-09)), e, fused)
    s = _df_add(s, (_f32(x[0] * _F32(2)), _f32(x[1] * _F32(2))))
    c = (_F32(0.66666662693023681640625), _F32(3.69183861259614332084311e-09))
    return _df_add(s, _df_mul(_df_mul(x2, x, fused), _df_add2(_df_mul(x2, t, fused), c), fused))


_EXPK_POLY = [_F32(c) for c in (0.00136324646882712841033936, 0.00836596917361021041870117,
                                0.0416710823774337768554688, 0.166665524244308471679688, 0.499999850988388061523438)]


def _sleef_expk(d, fused):
    """e^d for a pair d: Sleef's ``expkf`` (0 below e^-104)."""
    hi, lo = d
    q = np.rint(_f32(_f32(hi + lo) * _R_LN2))
    s = _df_add2(d, _f32(q * -_L2U))
    s = _df_add2(s, _f32(q * -_L2L))
    total = _f32(s[0] + s[1])                                   # (normalized)
    s = (total, _f32(_f32(s[0] - total) + s[1]))
    u = _EXPK_POLY[0]
    for c in _EXPK_POLY[1:]:
        u = fused(u, s[0], c)
    t = _df_add(s, _df_mul(_df_square(s, fused), u, fused))
    t = _df_add(_F32(1), t)
    result = np.ldexp(_f32(t[0] + t[1]), q.astype(np.int32)).astype(np.float32)
    result[hi < _F32(-104)] = 0
    return result


@shapes_from(lambda x, y: np.power(x, np.float32(y)))
def sleef_pow(x, y):
    """x^y for a float32 array x and a number y, as Sleef's ``powf`` (u10) computes it, its special cases
    included (a negative x to a non-integer power is NaN; 0 and ±inf by the sign and parity of y)."""
    shape = np.shape(x)
    x = np.asanyarray(x, np.float32).reshape(-1)
    y = np.float32(y)
    fused = functools.partial(fma, dtype=np.float32)            # (each step rounded once)
    integer = bool(np.trunc(y) == y) or abs(y) > 2 ** 24
    odd = integer and abs(y) < 2 ** 24 and int(np.trunc(y)) & 1 == 1
    with np.errstate(all="ignore"):
        result = _sleef_expk(_df_mul(_sleef_logk(np.abs(x), fused), y, fused), fused)
        result[np.isnan(result)] = np.inf
        sign = np.where(x > 0, _F32(1), (_F32(-1) if odd else _F32(1)) if integer else _F32(np.nan))
        result = _f32(result * sign)
        if np.isinf(y):
            beyond = np.copysign(np.abs(x) - 1, y)
            result = np.where(beyond < 0, _F32(0), np.where(beyond == 0, _F32(1), _F32(np.inf))).astype(np.float32)
        edge = np.isinf(x) | (x == 0)
        if edge.any():
            magnitude = np.where(np.signbit(y) ^ (x == 0), _F32(0), _F32(np.inf))
            result[edge] = np.copysign(magnitude, x if odd else _F32(1))[edge]
        result[np.isnan(x) | np.isnan(y)] = np.nan
        if y == 0:
            result[:] = 1
        result[x == 1] = 1
    return result.reshape(shape)


# --- Sleef's tanhf (u10) -----------------------------------------------------------------------------------------
# tanh(x) = (e^|x| − e^−|x|)/(e^|x| + e^−|x|), the exponential in double-float arithmetic (``expk2f``, a pair in, a
# pair out), its reciprocal, both sums and the quotient too; 1 past |x| = 8.66. PyTorch's vectorized ``tanh`` of
# float32 (``Vectorized<float>::tanh``: GELU's tanh approximation, ``tanhshrink``, ``mish``) takes it on its vectors.
_EXPK2_POLY = [_F32(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1)]
_TANH_IS_ONE = _F32(8.664339742)


def _df_reciprocal(d, fused):
    hi, lo = d
    s = _f32(_F32(1) / hi)
    return s, _f32(s * fused(-lo, s, fused(-hi, s, _F32(1))))


def _sleef_expk2(d, fused):
    """e^d for a pair d, as a pair: Sleef's ``expk2f``."""
    hi, lo = d
    q = np.rint(_f32(_f32(hi + lo) * _R_LN2))
    s = _df_add2(d, _f32(q * -_L2U))
    s = _df_add2(s, _f32(q * -_L2L))
    u = _EXPK2_POLY[0]
    for c in _EXPK2_POLY[1:]:
        u = fused(u, s[0], c)
    t = _df_add2(_df_mul(s, u, fused), _F32(0.166666659414234244790680580464))
    t = _df_add2(_df_mul(s, t, fused), _F32(0.5))
    t = _df_add2(s, _df_mul(_df_square(s, fused), t, fused))
    t = _df_add(_F32(1), t)
    whole = q.astype(np.int32)
    half = whole >> 1
    scale = _power_of_two(half.copy()), _power_of_two(whole - half)   # (2^q as two factors, as Sleef's ldexp2)
    return tuple(_f32(_f32(part * scale[0]) * scale[1]) for part in t)


@shapes_from(np.tanh)
def sleef_tanh(x):
    """tanh of a float32 array as Sleef's ``tanhf`` (u10, the FMA build) computes it."""
    shape = np.shape(x)
    x = np.asanyarray(x, np.float32).reshape(-1)
    fused = functools.partial(fma, dtype=np.float32)
    with np.errstate(all="ignore"):
        magnitude = np.abs(x)
        d = _sleef_expk2((magnitude, np.zeros_like(magnitude)), fused)
        e = _df_reciprocal(d, fused)
        minus_e = (-e[0], -e[1])
        quotient = _df_divide(_df_add(d, minus_e), _df_add(d, e), fused)
        y = _f32(quotient[0] + quotient[1])
        y[(magnitude > _TANH_IS_ONE) | np.isnan(y)] = 1
        y = np.copysign(y, x)
        y[np.isnan(x)] = np.nan
    return y.reshape(shape)


@shapes_from(np.expm1)
def sleef_expm1(x):
    """e^x − 1 of a float32 array as Sleef's ``expm1f`` (u10) computes it: ``expk2f``'s pair less one, in
    double-float arithmetic, then rounded; ∞ past 88.72, −1 below −16.64, −0 kept."""
    shape = np.shape(x)
    x = np.asanyarray(x, np.float32).reshape(-1)
    fused = functools.partial(fma, dtype=np.float32)
    with np.errstate(all="ignore"):
        hi, lo = _df_add2(_sleef_expk2((x, np.zeros_like(x)), fused), _F32(-1))
        y = _f32(hi + lo)
        y[x > _F32(88.72283172607421875)] = np.inf
        y[x < _F32(-16.635532333438687426013570)] = -1
        y[(x == 0) & np.signbit(x)] = -0.0
        y[np.isnan(x)] = np.nan
    return y.reshape(shape)
