"""``core/fused.py``'s fused multiply-add, against the exact value rounded once.

Two routes compute it: NumPy's complex product (where it fuses, which the library checks once per dtype) and an
exact one (float32: through float64, with a check for halfway cases; float64: Dekker's product and round-to-odd).
Each is compared here with the exact ``a·b + c`` (fractions) rounded to the nearest float32 or float64, on every
shape of operand the callers use (rows, columns, numbers, arrays larger than a block, rows larger than a block), on
sums built to land exactly halfway between two float32 numbers once rounded to float64, and on infinities, NaNs
and signed zeros.
"""
from fractions import Fraction

import numpy as np
import pytest

from gradiente.core import fused


def _nearest_float32(value):
    """The float32 nearest the fraction ``value``, ties to even."""
    guess = np.float32(float(value))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - value), int(np.array(c).view(np.uint32)) & 1))


def _exact(a, b, c, dtype=np.float32):
    a, b, c = np.broadcast_arrays(a, b, c)
    nearest = _nearest_float32 if dtype == np.float32 else float      # (float() of a fraction rounds it once)
    flat = [nearest(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
            for x, y, z in zip(a.reshape(-1), b.reshape(-1), c.reshape(-1))]
    return np.array(flat, dtype).reshape(a.shape)


def _exact_route(dtype):
    return fused._fma32_wide if dtype == np.float32 else fused._fma64_exact


def _sample(rng, shape, dtype=np.float32):
    # magnitudes spread over a few decades, so that the sum often loses bits of the product
    return (rng.standard_normal(shape) * 2.0 ** rng.integers(-12, 12, shape)).astype(dtype)


@pytest.mark.parametrize("shapes", [
    ((2,), (2,), (2,)),
    ((37,), (), (37,)),
    ((16, 24), (24,), (24,)),                  # a layer norm's affine step: rows of weights and biases
    ((3, 5, 7), (1, 5, 1), (1, 5, 1)),         # a channel's scale and shift
    ((9, 11), (9, 1), (9, 11)),                # a column
    ((4, 6), (4, 6), ()),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_is_the_exact_value_rounded_once(shapes, dtype):
    rng = np.random.default_rng(sum(map(len, shapes)))
    a, b, c = (_sample(rng, s, dtype) if s else dtype(rng.standard_normal()) for s in shapes)
    expected = _exact(a, b, c, dtype)
    assert np.array_equal(fused.fma(a, b, c, dtype), expected)
    assert np.array_equal(_exact_route(dtype)(a, b, c), expected)


@pytest.mark.parametrize("shape, b_shape", [((300_000,), ()), ((3, 70_000), (70_000,)), ((1200, 130), (130,)),
                                            ((2, 3, 40_000), (1, 3, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocks_of_a_large_array_agree_with_the_exact_route(shape, b_shape, dtype):
    """Arrays past a block (and rows past one) go a block at a time: every element as the exact route (itself
    checked against fractions above) gives it, and a sample of them against fractions directly."""
    rng = np.random.default_rng(len(shape))
    a, c = _sample(rng, shape, dtype), _sample(rng, shape, dtype)
    b = _sample(rng, b_shape, dtype) if b_shape else dtype(1.7)
    ours = fused.fma(a, b, c, dtype)
    assert np.array_equal(ours, _exact_route(dtype)(a, b, c))
    picks = tuple(rng.integers(0, n, 200) for n in shape)
    b_full = np.broadcast_to(b, shape)
    assert np.array_equal(ours[picks], _exact(a[picks], b_full[picks], c[picks], dtype))


def _products_just_past_a_power_of_two(count):
    """Pairs of 24-bit integers p, q whose product is 2⁴⁷ + k with 0 < k < 2¹⁸: p·q·2⁻⁷¹ is 2⁻²⁴ + k·2⁻⁷¹, half a
    float32 unit of 1 and a little more, that little lost when it is added to 1 in float64."""
    p = np.arange(2 ** 23 + 2 ** 22, 2 ** 23 + 2 ** 22 + 400_000, dtype=np.int64)
    q = -(-(2 ** 47) // p)
    k = p * q - 2 ** 47
    found = (k > 0) & (k < 2 ** 18) & (q < 2 ** 24)
    return p[found][:count], q[found][:count]


@pytest.mark.parametrize("route", ["fma", "wide"])
def test_sums_that_round_to_a_halfway_point_in_float64(route):
    p, q = _products_just_past_a_power_of_two(50)
    assert len(p) == 50
    a = np.ldexp(p.astype(np.float64), -47).astype(np.float32)      # in [1, 2), exact
    b = np.ldexp(q.astype(np.float64), -24).astype(np.float32)      # a·b = 2⁻²⁴(1 + k·2⁻⁴⁷)
    sign = np.where(np.arange(50) % 2 == 0, 1, -1).astype(np.float32)
    a, c = a * sign, sign                                             # ±(1 + 2⁻²⁴ + a little)
    wide = a.astype(np.float64) * b + c
    assert ((wide.view(np.uint64) & 0x1FFFFFFF) == 0x10000000).all()      # halfway in float64, as built
    expected = _exact(a, b, c)
    assert (np.abs(expected) == np.float32(1 + 2.0 ** -23)).all()          # the exact value is past it: away from 1
    # alone and inside a large array (the halfway cases at the end of a block and in a vector loop's tail)
    big_a, big_b, big_c = (np.ones(70_001, np.float32) for _ in range(3))
    for at in (slice(0, 50), slice(65_500, 65_550), slice(69_951, 70_001)):
        big_a[at], big_b[at], big_c[at] = a, b, c
    compute = fused.fma if route == "fma" else (lambda x, y, z, dtype: fused._fma32_wide(x, y, z))
    assert np.array_equal(compute(a, b, c, np.float32), expected)
    result = compute(big_a, big_b, big_c, np.float32)
    for at in (slice(0, 50), slice(65_500, 65_550), slice(69_951, 70_001)):
        assert np.array_equal(result[at], expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_infinities_nans_and_signed_zeros_as_the_exact_route(dtype):
    # (float64's exact route splits its factors in halves by a product with 2²⁷ + 1, which overflows past 2⁹⁹⁶)
    big, tiny = dtype(3e38 if dtype == np.float32 else 2.0 ** 600), np.finfo(dtype).smallest_subnormal
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, big, -big, tiny], dtype)
    a, b, c = (v.reshape(-1) for v in np.meshgrid(values, values, values, indexing="ij"))
    ours, wide = fused.fma(a, b, c, dtype), _exact_route(dtype)(a, b, c)
    assert np.array_equal(ours, wide, equal_nan=True)
    numbers = ~np.isnan(wide)           # (a NaN's sign bit is the hardware's choice)
    assert np.array_equal(np.signbit(ours[numbers]), np.signbit(wide[numbers]))


def test_operands_that_are_not_float32_are_multiplied_as_they_are():
    """A float64 number (a caller's constant) takes the float64 route, which multiplies it unrounded."""
    x = np.arange(1, 200, dtype=np.float32)
    unrounded = [_nearest_float32(Fraction(float(v)) * Fraction(0.1) + 1) for v in x]
    rounded_first = [_nearest_float32(Fraction(float(v)) * Fraction(float(np.float32(0.1))) + 1) for v in x]
    assert unrounded != rounded_first
    assert np.array_equal(fused.fma(x, 0.1, np.float32(1), np.float32), np.array(unrounded, np.float32))


def test_the_optimizers_fma_redoes_halfway_sums():
    """The optimizers' own float32 route (``optim/_kernels.py``: float64 blocks, in place) on the sums above."""
    from gradiente.optim import _kernels
    p, q = _products_just_past_a_power_of_two(50)
    a = np.ldexp(p.astype(np.float64), -47).astype(np.float32)
    b = np.ldexp(q.astype(np.float64), -24).astype(np.float32)
    c = np.ones(50, np.float32)
    expected = _exact(a, b, c)
    big = [np.ones(70_001, np.float32) for _ in range(3)]
    for at in (slice(0, 50), slice(65_510, 65_560)):
        for full, part in zip(big, (a, b, c)):
            full[at] = part
    out = big[2].copy()
    _kernels.fma(big[0], big[1], out, out)              # (in place, as addcmul_ writes)
    for at in (slice(0, 50), slice(65_510, 65_560)):
        assert np.array_equal(out[at], expected)
