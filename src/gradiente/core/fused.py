"""Fused multiply-add on NumPy arrays: ``x·y + z`` rounded once, as PyTorch's vectorized CPU kernels compute the
expressions their compiler contracts into one FMA instruction (``1 - y*y`` in ``tanh``'s backward).

NumPy has no fused multiply-add, and rounding twice changes the last bit of about a third of the results, which
shows wherever a learner checks a gradient for exact equality (``torch.all(dt == t.grad)``). So:

* float32: the product of two float32 numbers is exact in float64; the sum is formed there and rounded once to
  float32. (When the float64 sum itself must round, the two roundings can differ from one only if the first lands
  exactly on a float32 tie: about one case in 2²⁸.)
* float64: Dekker's exact product (each factor split into two halves of 26 bits, whose partial products are
  exact) and Knuth's exact sum give ``x·y + z`` as an unevaluated sum of doubles, added last from the smallest.
  The factors must not exceed 2⁹⁹⁶ in magnitude (the split would overflow).
* any other dtype: the plain ``x * y + z``.
"""
import numpy as np

__all__ = ["fma"]

_SPLITTER = 134217729.0     # 2²⁷ + 1: Veltkamp's constant for splitting a double into two 26-bit halves


def fma(x, y, z):
    """``x * y + z`` with one rounding, for float32 and float64 arrays (numbers broadcast); see the module."""
    dtype = np.result_type(x, y, z)
    if dtype == np.float32:
        wide = np.multiply(x, y, dtype=np.float64)
        wide += z
        return wide.astype(np.float32)
    if dtype == np.float64:
        return _fma64(x, y, z)
    return x * y + z


def _split(a):
    scaled = _SPLITTER * a
    high = scaled - (scaled - a)
    return high, a - high


def _fma64(x, y, z):
    product = np.multiply(x, y, dtype=np.float64)
    x_high, x_low = _split(np.asarray(x, np.float64))
    y_high, y_low = _split(np.asarray(y, np.float64))
    # product + product_error == x·y exactly
    product_error = ((x_high * y_high - product) + x_high * y_low + x_low * y_high) + x_low * y_low
    total = product + z
    # total + total_error == product + z exactly
    virtual = total - product
    total_error = (product - (total - virtual)) + (z - virtual)
    return total + (total_error + product_error)
