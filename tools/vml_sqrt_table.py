"""Write ``src/gradiente/core/vml_sqrt_rounded_down.bin``: the float32 inputs whose square root MKL's vector math
library rounds one unit below the correctly rounded value, on CPUs with AVX-512 (``core/vml_sqrt.py`` reads it).

PyTorch's CPU ``sqrt`` of float32 takes MKL's ``vsSqrt``. Measured against torch 2.13 on every float32 in [1, 4),
that function is, step for step (all 2^24 inputs equal)::

    r = vrsqrt14ps(a)               # the CPU's 14-bit approximation of 1/sqrt(a)
    s = a * r                       # rounded to float32
    d = fma(-s, s, a)               # the residual, rounded once
    result = fma(d, 0.5 * r, s)     # one Newton step, rounded once

which is the correctly rounded square root except for 98,955 of the 2^24 inputs, where it is one unit lower (the
exact root lies within 0.06 of a unit above a half-way point). NumPy cannot run ``vrsqrt14ps``, whose values Intel
fixes bit for bit but that follow no formula short of its reference implementation, so this tool runs the four
steps above in a few lines of C (compiled with the machine's C compiler, AVX-512 needed) and keeps the list of those
inputs. Since the steps scale exactly with powers of 4, the inputs in [1, 4) stand for every float32: an input's key
is its mantissa, plus 2^23 when it lies in [2, 4) after scaling.

The file holds the sorted keys as gaps between consecutive ones (little-endian uint16, the first from 0),
zlib-compressed: about 70 KB. Run ``python tools/vml_sqrt_table.py`` from the repository root to write it again;
``--check`` compares the file with a fresh run (and, if torch is installed, both with torch's sqrt).
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np

_C_SOURCE = r"""
#include <immintrin.h>
void vml_style_sqrt(const float *x, float *y, long n) {
    const __m512 half = _mm512_set1_ps(0.5f);
    for (long i = 0; i + 16 <= n; i += 16) {
        __m512 a = _mm512_loadu_ps(x + i);
        __m512 r = _mm512_rsqrt14_ps(a);
        __m512 s = _mm512_mul_ps(a, r);
        __m512 d = _mm512_fnmadd_ps(s, s, a);
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(d, _mm512_mul_ps(half, r), s));
    }
}
"""

OUTPUT = os.path.join("src", "gradiente", "core", "vml_sqrt_rounded_down.bin")


def vml_style_sqrt(x):
    """The four steps above on the float32 array ``x`` (its size a multiple of 16), run on this CPU."""
    with tempfile.TemporaryDirectory() as folder:
        source, library = os.path.join(folder, "sqrt.c"), os.path.join(folder, "sqrt.so")
        with open(source, "w") as fh:
            fh.write(_C_SOURCE)
        subprocess.run(["cc", "-O2", "-mavx512f", "-shared", "-fPIC", source, "-o", library], check=True)
        compiled = ctypes.CDLL(library)
        y = np.empty_like(x)
        compiled.vml_style_sqrt(x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p),
                                ctypes.c_long(x.size))
    return y


def rounded_down_keys():
    """The keys (see above) of the inputs in [1, 4) whose result is one unit below the correctly rounded root."""
    inputs = np.arange(0x3F800000, 0x40800000, dtype=np.uint32).view(np.float32)     # every float32 in [1, 4)
    ours, exact = vml_style_sqrt(inputs), np.sqrt(inputs)
    lower = ours != exact
    assert (exact.view(np.int32)[lower] - ours.view(np.int32)[lower] == 1).all(), "only one unit low is expected"
    return np.nonzero(lower)[0]


def encode(keys):
    gaps = np.diff(np.concatenate([[0], keys]))
    assert gaps.max() < 1 << 16
    return zlib.compress(gaps.astype("<u2").tobytes(), 9)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare the stored file instead of writing it")
    args = parser.parse_args()
    keys = rounded_down_keys()
    if not args.check:
        with open(OUTPUT, "wb") as fh:
            fh.write(encode(keys))
        print(f"wrote {OUTPUT}: {len(keys)} keys")
        return
    with open(OUTPUT, "rb") as fh:
        stored = np.cumsum(np.frombuffer(zlib.decompress(fh.read()), "<u2").astype(np.int64))
    print("stored file equals a fresh run:", np.array_equal(stored, keys))
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)
    inputs = np.arange(0x3F800000, 0x40800000, dtype=np.uint32).view(np.float32)
    theirs = torch.from_numpy(inputs).sqrt().numpy()
    print("inputs where torch's sqrt differs from this:", int((theirs != vml_style_sqrt(inputs)).sum()))


if __name__ == "__main__":
    sys.exit(main())
