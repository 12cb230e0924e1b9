"""``core/c_expf.py``: glibc's float32 exponential, bit for bit, against the machine's own C library."""
import ctypes
import ctypes.util

import numpy as np
import pytest
import torch

import gradiente
from gradiente.core.c_expf import c_expf


def _libm_expf():
    name = ctypes.util.find_library("m")
    if name is None or "libm.so.6" not in name:
        pytest.skip("glibc's libm is what PyTorch's scalar code calls; this C library is another")
    libm = ctypes.CDLL(name)
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
    return libm.expf


def test_every_bit_is_the_c_librarys():
    expf = _libm_expf()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-110, 90, 60000), rng.standard_normal(60000) * 5,
                        [0.0, -0.0, 88.0, 88.72, 88.73, -87.9, -103.9, -104.0, -150.0, 1e-30, np.inf, -np.inf]])
    x = x.astype(np.float32)
    theirs = np.array([expf(float(v)) for v in x], np.float32)
    np.testing.assert_array_equal(c_expf(x), theirs)
    assert np.isnan(c_expf(np.array([np.nan], np.float32)))[0]
    assert c_expf(np.float32(1)).shape == () and c_expf(np.ones((2, 3), np.float32)).shape == (2, 3)
    with np.errstate(over="ignore"):
        correctly_rounded = np.exp(x.astype(np.float64)).astype(np.float32)
    assert (theirs != correctly_rounded).sum() > 10          # (so the port is not merely rounding correctly)


@pytest.mark.parametrize("name", ["sigmoid", "silu"])
def test_a_sigmoid_shorter_than_a_vector_is_pytorchs(name):
    """PyTorch's sigmoid and silu take std::exp (glibc's expf) on what their vector loop leaves: on 4-element
    tensors (an XOR net's output) 8 and 7 of 40,000 elements differed with the correctly rounded exponential."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((10000, 4)) * 6).astype(np.float32)
    theirs, ours = (np.stack([getattr(lib.nn.functional, name)(lib.from_numpy(row)).numpy() for row in x])
                    for lib in (torch, gradiente))
    np.testing.assert_array_equal(ours, theirs)
