"""The ops of ``ops/conversions.py`` (``to``, ``double``, ``type`` ...) from the op table: the gradient of a
dtype conversion is the incoming gradient cast back, compared with PyTorch (grad_fn ``ToCopyBackward0``) and,
where the result is precise enough, checked by finite differences in float64."""
import pytest
from harness import OpSpec, spec_tests

torch = pytest.importorskip("torch")

SPECS = [
    # a float32 result is too coarse for float64 finite differences: compared with PyTorch only
    OpSpec("to_float32", lambda lib, x: x.to(lib.float32), [((2, 3),)], dtypes=("float64",), gradcheck=False),
    OpSpec("double", lambda lib, x: x.double(), [((2, 3),)], dtypes=("float32",), gradcheck=False),
    OpSpec("to_copy", lambda lib, x: x.to(lib.float64, copy=True), [((2, 3),)], dtypes=("float64",)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)
