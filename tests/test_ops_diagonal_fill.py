"""``Tensor.fill_diagonal_`` (``ops/diagonal_fill.py``) against PyTorch 2.13: square, tall, wide and n-d tensors,
``wrap``, strided inputs, integer tensors, the errors, and, on a non-leaf, the in-place node (CopySlices) with
PyTorch's gradient (none at the filled entries) and a float64 gradcheck."""
import pytest
from harness import OpSpec, assert_same, check_same_error, spec_tests

torch = pytest.importorskip("torch")

SPECS = [
    OpSpec("fill_diagonal_", lambda lib, x: (x * 1).fill_diagonal_(3.0), [((5, 3),), ((3, 3),), ((3, 3, 3),)]),
    OpSpec("fill_diagonal_wrapped", lambda lib, x: (x * 1).fill_diagonal_(0.5, wrap=True), [((7, 2),), ((9, 3),)]),
]
test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(3, 3).fill_diagonal_(5),
    lambda lib: lib.zeros(7, 3).fill_diagonal_(5.0),
    lambda lib: lib.zeros(7, 3).fill_diagonal_(5.0, wrap=True),
    lambda lib: lib.zeros(8, 3).fill_diagonal_(5.0, wrap=True),
    lambda lib: lib.zeros(3, 7).fill_diagonal_(5.0, wrap=True),
    lambda lib: lib.zeros(3, 3, 3).fill_diagonal_(2.0),
    lambda lib: lib.zeros(3, 3, dtype=lib.int64).fill_diagonal_(2.7),
    lambda lib: lib.zeros(8, 6).t().fill_diagonal_(1.0, wrap=True),
    lambda lib: lib.zeros(9, 8)[::2, 1:4].fill_diagonal_(1.0, wrap=True),
    lambda lib: lib.zeros(2, 3, 4).fill_diagonal_(1.0),
    lambda lib: lib.zeros(3).fill_diagonal_(1.0),
])
def test_fill_diagonal_matches_torch(call):
    assert_same(call)


def test_a_leaf_that_requires_grad_is_refused():
    check_same_error(lambda lib: lib.ones(2, 2, requires_grad=True).fill_diagonal_(1.0))
