"""Signal windows, ``core/windows.py`` (``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window``, ``kaiser_window``), against PyTorch: values for every length to 64, periodic and symmetric,
in float32 and float64; the optional arguments, ``requires_grad``, and the error messages."""
import numpy as np
import pytest
from harness import assert_same_tensors, both_quietly, check_same_error

import gradiente

torch = pytest.importorskip("torch")

WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name, dtype):
    """Every length to 64, periodic and symmetric. The arithmetic is PyTorch's, step for step: bartlett agrees
    bit for bit; the cosines differ from PyTorch's vectorized ones by an ulp at most; kaiser's I₀ is computed in
    double where PyTorch uses single precision for float32."""
    atol = {"float32": 1e-6 if name == "kaiser_window" else 1.2e-7, "float64": 1e-14}[dtype]
    for n in range(65):
        for periodic in (True, False):
            ours, theirs = both_quietly(lambda lib, n=n, periodic=periodic: getattr(lib, name)(
                n, periodic, dtype=getattr(lib, dtype)))
            assert_same_tensors(ours, theirs, rtol=0, atol=atol)
            if name == "bartlett_window":
                assert np.array_equal(ours.numpy(), theirs.numpy())


def test_window_arguments_match_torch():
    assert_same_tensors(*both_quietly(lambda lib: lib.hamming_window(5, False, 0.5, 0.4)), atol=1e-7)
    assert_same_tensors(*both_quietly(lambda lib: lib.kaiser_window(5, False, 8.0)), atol=1e-6)
    assert_same_tensors(*both_quietly(lambda lib: lib.hann_window(7, dtype=lib.float16)), atol=1e-3)
    for lib in (gradiente, torch):
        window = lib.blackman_window(3, requires_grad=True)
        assert window.requires_grad and window.is_leaf and window.dtype == lib.float32
    for name in WINDOWS:
        check_same_error(lambda lib, name=name: getattr(lib, name)(-1))
        check_same_error(lambda lib, name=name: getattr(lib, name)(3, dtype=lib.int64, requires_grad=True))
        check_same_error(lambda lib, name=name: getattr(lib, name)(3.0))
    check_same_error(lambda lib: lib.hann_window(3, dtype=lib.complex64))

