"""GELU of float32 arrays as PyTorch computes it on the CPU: through oneDNN, in oneDNN's own arithmetic.

For a contiguous float32 tensor of two or more elements, PyTorch hands ``gelu`` (exact, ``approximate='none'``) and
its backward to oneDNN's ``eltwise_gelu_erf`` kernels. They do not compute erf at all in the forward pass, and
approximate it differently in the backward one, so a GELU computed from an accurate erf differs from PyTorch's in
the last bit of about a third of the outputs and two thirds of the gradients; a transformer's printed losses then
drift from PyTorch's after a few steps. Here both kernels are followed operation by operation (measured equal to
torch 2.13 in every element, ``tests/test_kernel_order.py``):

* forward, on AVX-512 CPUs: ``x·(1 + sign(x)·P_i(|x|))/2`` where ``P_i`` is one of 24 degree-5 minimax polynomials
  approximating erf(|x|/√2), chosen by the exponent and two leading mantissa bits of |x| (two pieces a binade),
  evaluated by Horner's rule with fused multiply-adds. Past ``_ERF_IS_ONE`` the piece is the constant 1;
* backward: ``Φ(x) + x·φ(x)`` with Φ from Abramowitz and Stegun's formula 7.1.26,
  ``erf(r) ≈ 1 - t(p1 + t(p2 + t(p3 + t(p4 + t·p5))))·e^(-r²)``, ``t = 1/(1 + p·r)``, and oneDNN's exponential
  (``vector_exp.exp_u20`` with x·log2 e rounded on its own); the result times the incoming gradient.

The coefficients are oneDNN's (``src/cpu/x64/injectors/jit_uni_eltwise_injector.cpp``), written as the float32 bit
patterns it stores, so that they are these numbers exactly.
"""
import numpy as np

from .vector_exp import Fma32, exp_u20

__all__ = ["gelu", "gelu_derivative"]

_F32 = np.float32


def _floats(*bits):
    return np.array(bits, np.uint32).view(np.float32)


# _PIECES[k][i]: the coefficient of |x|^k in piece i. Piece 0 is never chosen (indices are clamped to 1..24);
# piece 23 is the constant 1 (|x| past _ERF_IS_ONE), piece 24 is |x| itself and is reached only by NaN and by
# infinities (which the bound sends to 23), so that a NaN stays NaN.
_PIECES = (
    _floats(0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229, 0x37b8a3bb,
            0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b, 0x3c515ed3, 0xbb503236,
            0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced, 0x3f470d99, 0x3f7abb28, 0x3f800000, 0),
    _floats(0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f, 0x3f4c2d40,
            0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07, 0x3f3b980f, 0x3f48dff3,
            0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e, 0x3e6c8684, 0x3c98f936, 0, 0x3f800000),
    _floats(0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb, 0x3af9b960,
            0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660, 0x3e0f27ab, 0x3d94004b,
            0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8, 0xbdc4f8a8, 0xbbde6422, 0, 0),
    _floats(0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0, 0xbe0e400a,
            0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f, 0xbe96cbca, 0xbe8044aa,
            0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91, 0x3ca46568, 0x3aa1e00a, 0, 0),
    _floats(0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527, 0x3c221712,
            0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910, 0x3dd53f69, 0x3db7dcef,
            0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab, 0xbb097a32, 0xb8ebf380, 0, 0),
    _floats(0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623, 0x3c4c824b,
            0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366, 0xbc492c9e, 0xbc2a7aa6,
            0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792, 0x38b84375, 0x3689bb5a, 0, 0),
)
# the same coefficients a row per piece, highest power first (padded to 8, 32 bytes a row): one gather of rows fetches
# a piece's six coefficients at once, six times faster than a gather per coefficient
_PIECE_ROWS = np.zeros((len(_PIECES[0]), 8), np.float32)
_PIECE_ROWS[:, :6] = np.stack(_PIECES[::-1], axis=1)
_ERF_IS_ONE = _floats(0x40b15cee)[0]        # ≈ 5.54: erf(x/√2) rounds to 1 from here on
# (|x|'s bits - _INDEX_BIAS) >> 21 counts half binades: 2^-4 ≤ |x| < 2^-3 is pieces 1 (clamped) and 2, 1 ≤ |x| < 2
# pieces 13 and 14, ...
_INDEX_BIAS = 0x3DE00001

# Abramowitz and Stegun 7.1.26, for the backward pass
_A_S_P = _floats(0x3ea7ba05)[0]
_A_S_POLY = _floats(0x3f87dc22, 0xbfba00e3, 0x3fb5f0e3, 0xbe91a98e, 0x3e827906)     # p5, p4, ..., p1
_ONE_OVER_SQRT_TWO, _ONE_OVER_SQRT_PI = _floats(0x3f3504f3, 0x3f106eba)


def _take_sign(value, of):
    """value·sign(of), in place, as the kernels do it: the sign bit of ``of`` flipped into ``value``'s (a masked
    negation would cost forty times as much)."""
    bits = value.view(np.int32)
    np.bitwise_xor(bits, np.bitwise_and(of.view(np.int32), np.int32(-2 ** 31)), out=bits)


_BLOCK = 32768      # elements a pass: the dozen float32 and float64 arrays of a block stay in a core's L2 cache


def _blockwise(kernel, x):
    """``kernel`` applied to a float32 array a block at a time (a new array of x's shape)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    if flat.size <= _BLOCK:
        return kernel(flat).reshape(x.shape)
    out = np.empty_like(flat)
    for start in range(0, flat.size, _BLOCK):
        out[start:start + _BLOCK] = kernel(flat[start:start + _BLOCK])
    return out.reshape(x.shape)


def gelu(x):
    """oneDNN's GELU of a float32 array (a new array of x's shape)."""
    return _blockwise(_gelu, x)


def gelu_derivative(x):
    """oneDNN's d GELU(x)/dx of a float32 array: Φ(x) + x·φ(x) (the backward multiplies it by the gradient)."""
    return _blockwise(_gelu_derivative, x)


def _gelu(x):
    fma32 = Fma32.of_size(x.size)
    magnitude = fma32.scratch[0]
    np.abs(x, out=magnitude)
    # (as NumPy's index type: take() would convert 32-bit indices first)
    piece = magnitude.view(np.int32).astype(np.intp)
    piece -= _INDEX_BIAS
    np.right_shift(piece, 21, out=piece)
    np.clip(piece, 1, 24, out=piece)
    saturated = np.greater(magnitude, _ERF_IS_ONE, out=fma32.halfway)
    if saturated.any():                     # (a masked write costs a millisecond a million elements even when empty)
        np.copyto(piece, 23, where=saturated)
    erf = np.empty_like(x)
    coefficients = _PIECE_ROWS.take(piece, axis=0)          # (n, 8): x⁵'s coefficient first
    fma32.horner(coefficients[:, 0], (coefficients[:, k] for k in range(1, 6)), magnitude, out=erf)
    _take_sign(erf, x)
    erf += _F32(1)
    erf *= x
    erf *= _F32(0.5)
    return erf


def _gelu_derivative(x):
    r = x * _ONE_OVER_SQRT_TWO
    minus_square = np.multiply(r, r)
    np.negative(minus_square, out=minus_square)
    gaussian = exp_u20(minus_square, fused_scale=False)          # e^(-r²)
    fma32 = Fma32.of_size(x.size)
    magnitude, t, polynomial = fma32.scratch
    np.abs(r, out=magnitude)
    fma32(_A_S_P, magnitude, _F32(1), out=t)
    np.divide(_F32(1), t, out=t)
    half_density = np.multiply(r, _ONE_OVER_SQRT_PI)              # r/√π · e^(-r²) = x·φ(x)
    half_density *= gaussian
    half_density += _F32(0.5)
    np.negative(gaussian, out=gaussian)
    gaussian *= t                                                 # -e^(-r²)·t
    fma32.horner(_A_S_POLY[0], _A_S_POLY[1:], t, out=polynomial)
    erf = fma32(gaussian, polynomial, _F32(1), out=gaussian)
    _take_sign(erf, r)
    return fma32(erf, _F32(0.5), half_density, out=half_density)        # 1/2 + x·φ + erf/2
