"""float32 square roots as PyTorch's CPU ``sqrt`` takes them: MKL's vector math library, one unit low at times.

``torch.sqrt`` of float32 (``Tensor.sqrt``, ``sqrt_``, ``pow(x, 0.5)``, and the optimizers' ``exp_avg_sq.sqrt()``:
Adam, AdamW, Adagrad, Adadelta, RMSprop, NAdam, RAdam) is MKL's ``vsSqrt``, which is not correctly rounded. On the
CPUs measured here (Intel Xeon with AVX-512 FP16: Sapphire and Emerald Rapids) it is, step for step, equal to::

    r = vrsqrt14ps(a)               # the CPU's 14-bit approximation of 1/sqrt(a)
    s = a * r                       # rounded to float32
    result = fma(fma(-s, s, a), 0.5 * r, s)     # one Newton step

which is NumPy's correctly rounded ``sqrt`` except for 0.59% of inputs, whose result is one unit lower. Every
Adam-family optimizer step goes through it, so a training run printed its losses differently from its first steps.

NumPy cannot run ``vrsqrt14ps``, so ``tools/vml_sqrt_table.py`` ran those steps once, on every float32 in [1, 4),
and stored which inputs come out one unit low (``vml_sqrt_rounded_down.bin``, 70 KB). The steps scale exactly
with powers of 4, so those 2^24 inputs stand for all: an input's key is its mantissa, plus 2^23 when its power of 2
is odd. ``sqrt`` here is NumPy's, then one unit down where the key is listed (a lookup in a 2 MB bit table, read
from the file the first time a float32 square root is taken).

Other CPUs' MKL may compute otherwise (its code differs by instruction set, as its ``tanh`` does), so this is taken
only on CPUs with AVX-512 FP16, the ones measured; elsewhere, and for other dtypes, ``sqrt`` is NumPy's.
``GRADIENTE_VML_SQRT=1`` (or ``0``) takes (or leaves) it on any CPU.
"""
import functools
import os
import warnings
import zlib

import numpy as np

from .cpu_flags import cpu_flags

__all__ = ["sqrt", "TAKEN"]

_TABLE_FILE = os.path.join(os.path.dirname(__file__), "vml_sqrt_rounded_down.bin")
_MANTISSA_BITS = 23


def _taken(environ=os.environ, cpuinfo="/proc/cpuinfo"):
    setting = environ.get("GRADIENTE_VML_SQRT")
    if setting in ("0", "1"):
        return setting == "1"
    if setting is not None:
        warnings.warn(f"GRADIENTE_VML_SQRT={setting!r} is neither 0 nor 1; it is ignored", stacklevel=2)
    return "avx512_fp16" in cpu_flags(cpuinfo)      # (False where Linux's description cannot be read)


#: whether float32 square roots take MKL's rounding on this machine
TAKEN = _taken()


@functools.lru_cache(maxsize=1)
def _table():
    """One bit per key, set where MKL's result is one unit low (read from the file on first use)."""
    with open(_TABLE_FILE, "rb") as fh:
        gaps = np.frombuffer(zlib.decompress(fh.read()), "<u2")
    keys = np.cumsum(gaps, dtype=np.int64)
    bits = np.zeros(1 << (_MANTISSA_BITS + 1 - 3), np.uint8)
    np.bitwise_or.at(bits, keys >> 3, (1 << (keys & 7)).astype(np.uint8))
    return bits


def _keys(a):
    """Each float32's key (above), and which elements have one: positive finite values, subnormals included."""
    raw = a.view(np.uint32)
    biased = raw >> _MANTISSA_BITS                          # the sign is the top bit: negative values are > 255
    mantissa = raw & ((1 << _MANTISSA_BITS) - 1)
    keyed = (biased - 1) < 254                              # normal and positive (uint32: 0 wraps to the top)
    odd_power = (biased & 1) ^ 1                            # the power of 2 is biased - 127
    subnormal = (biased == 0) & (mantissa != 0)
    if subnormal.any():                                     # rare: normalize through float64, exactly
        fraction, power = np.frexp(a[subnormal].astype(np.float64))      # a = fraction·2^power, fraction in [½, 1)
        mantissa = mantissa.copy()
        odd_power = odd_power.copy()
        mantissa[subnormal] = ((fraction * 2 - 1) * (1 << _MANTISSA_BITS)).astype(np.uint32)
        odd_power[subnormal] = (power - 1) & 1
        keyed = keyed | subnormal
    return (odd_power << _MANTISSA_BITS) | mantissa, keyed


# Only a root whose exact value lies just above the half-way point below the correctly rounded one can come out one
# unit low (measured: within 0.44-0.5 of a unit below it), and the first step keeps just those: the correctly rounded
# float32 root less the float64 one is more than 0.43 of a unit, and so more than 0.43·2^-24 of the root. About one
# root in six passes; the table is read only for them (reading it for every element of a million-parameter
# optimizer step cost more than the step itself).
_NEAR_HALF_WAY = 0.43 * 2.0 ** -24


_BLOCK = 65536       # elements: the float64 buffers (512 KB each) stay in a core's cache, and are allocated once


def _near_half_way(a_flat, root_flat):
    """The positions whose exact root lies more than 0.43·2^-24 of the rounded root below it (see above): in float64,
    a block at a time, each step in place (NumPy's mixed-dtype loops cast element by element, several times slower,
    and whole-array temporaries cost their fresh pages)."""
    n = a_flat.size
    below, wide_root = np.empty(min(n, _BLOCK)), np.empty(min(n, _BLOCK))
    found = []
    with np.errstate(invalid="ignore"):
        for start in range(0, n, _BLOCK):
            stop = min(start + _BLOCK, n)
            b, w = below[:stop - start], wide_root[:stop - start]
            np.copyto(b, a_flat[start:stop])
            np.sqrt(b, out=b)
            np.copyto(w, root_flat[start:stop])
            np.subtract(w, b, out=b)                    # how far the exact root is below the rounded one
            np.multiply(w, _NEAR_HALF_WAY, out=w)
            found.append(np.flatnonzero(np.greater(b, w)) + start)
    return found[0] if len(found) == 1 else np.concatenate(found)


_LOOK_UP_ALL = 8192


def sqrt(a, out=None):
    """``np.sqrt(a, out=out)``; a float32 array's as MKL rounds it where ``TAKEN`` (see the module's docstring)."""
    if not (TAKEN and type(a) is np.ndarray and a.dtype == np.float32 and a.size):
        return np.sqrt(a, out=out)
    if a.ndim == 0:                          # (NumPy hands a 0-d array's root back as a scalar)
        root = sqrt(a.reshape(1))[0]
        if out is None:
            return root
        out[...] = root
        return out
    root = np.sqrt(a)                        # laid out in memory as a is (NumPy's order "K"), so that ...
    root_flat = np.ravel(root, order="K")    # ... a view of the fresh root and ...
    a_flat = np.ravel(a, order="K")          # ... a's elements in memory order pair up element by element
    if a_flat.size <= _LOOK_UP_ALL:          # (few elements: the table for each costs fewer NumPy calls)
        keys, keyed = _keys(a_flat)
        low = ((_table()[keys >> 3] >> (keys & 7).astype(np.uint8)) & 1).astype(bool) & keyed
        root_flat.view(np.int32)[low] -= 1
    else:
        candidates = _near_half_way(a_flat, root_flat)
        if candidates.size:
            keys, keyed = _keys(a_flat[candidates])
            low = ((_table()[keys >> 3] >> (keys & 7).astype(np.uint8)) & 1).astype(bool) & keyed
            root_flat.view(np.int32)[candidates[low]] -= 1
    if out is None:
        return root
    out[...] = root
    return out
