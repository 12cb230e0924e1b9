"""``torch.hash_tensor`` (``ops/hashing.py``) against PyTorch 2.13: the XOR of the elements' 64-bit patterns, over
all elements or over dims, for each dtype family, and PyTorch's errors (complex input, unknown mode, empty input
without a dim, an empty dim, a dim out of range)."""
import pytest
from harness import assert_same

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", [
    lambda lib: lib.hash_tensor(lib.tensor([1.0, 2.0, 3.0])),
    lambda lib: lib.hash_tensor(lib.tensor([[1, 2], [3, 4]]), 1),
    lambda lib: lib.hash_tensor(lib.tensor([[1, 2], [3, 4]]), 0, keepdim=True),
    lambda lib: lib.hash_tensor(lib.tensor([[1, 2], [3, 4]]), (0, 1)),
    lambda lib: lib.hash_tensor(lib.tensor([[1, 2], [3, 4]]), []),
    lambda lib: lib.hash_tensor(lib.tensor([True, False])),
    lambda lib: lib.hash_tensor(lib.tensor([1.0, 2.0], dtype=lib.float16)),
    lambda lib: lib.hash_tensor(lib.tensor([-1, 2], dtype=lib.int8)),
    lambda lib: lib.hash_tensor(lib.tensor([1, 200], dtype=lib.uint8)),
    lambda lib: lib.hash_tensor(lib.tensor([-0.0, float("nan")])),
    lambda lib: lib.hash_tensor(lib.tensor(5.0)),
    lambda lib: lib.hash_tensor(lib.zeros(0, 3), 1),
    lambda lib: lib.tensor([[1.5, 2.5]], requires_grad=True).hash_tensor(),
    lambda lib: lib.hash_tensor(lib.tensor([1 + 2j])),
    lambda lib: lib.hash_tensor(lib.tensor([1.0]), mode=1),
    lambda lib: lib.hash_tensor(lib.zeros(0)),
    lambda lib: lib.hash_tensor(lib.zeros(3, 0), 1),
    lambda lib: lib.hash_tensor(lib.ones(2), 3),
])
def test_hash_tensor_matches_torch(call):
    assert_same(call)


