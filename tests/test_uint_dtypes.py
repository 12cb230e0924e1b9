"""The wide unsigned dtypes (uint16, uint32, uint64) against PyTorch 2.13: made, printed, converted and viewed
like any dtype, with the few CPU kernels PyTorch has for them (``*``, ``==``, bitwise ops, sort, sums, casts) and
its NotImplementedError for the ones it lacks (``+``, ``-``, comparisons, ``max``, ``neg``, ``//``, ``arange``),
and its refusal to promote them with another integer type."""
import numpy as np
import pytest
from harness import assert_same

import gradiente

torch = pytest.importorskip("torch")

WIDE = ["uint16", "uint32", "uint64"]
LARGEST = {"uint16": 65535, "uint32": 4294967295, "uint64": 18446744073709551615}


def text(value):
    """What ``print`` shows, with PyTorch's module name."""
    return str(value).replace("gradiente.", "torch.")


def values(lib, name):
    return lib.tensor([1, 2, 3], dtype=getattr(lib, name))


@pytest.mark.parametrize("name", WIDE)
def test_dtype_object_matches_torch(name):
    ours, theirs = getattr(gradiente, name), getattr(torch, name)
    assert text(ours) == str(theirs)
    assert (ours.is_signed, ours.itemsize, ours.is_floating_point, ours.is_complex) == \
        (theirs.is_signed, theirs.itemsize, theirs.is_floating_point, theirs.is_complex)


@pytest.mark.parametrize("name", WIDE)
def test_printing_and_largest_value(name):
    for lib_call in (lambda lib: values(lib, name), lambda lib: lib.tensor(LARGEST[name], dtype=getattr(lib, name)),
                     lambda lib: lib.tensor([LARGEST[name] // 2, 0], dtype=getattr(lib, name))):
        assert text(lib_call(gradiente)) == str(lib_call(torch))


@pytest.mark.parametrize("name", WIDE)
@pytest.mark.parametrize("call", [
    lambda lib, d: lib.zeros(3, dtype=d), lambda lib, d: lib.ones(2, 2, dtype=d),
    lambda lib, d: lib.full((2,), 7, dtype=d), lambda lib, d: lib.empty(2, dtype=d).fill_(3),
    lambda lib, d: lib.tensor([1.5, 2.0, 3.9]).to(d), lambda lib, d: lib.tensor([-1, 70000]).to(d),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).float(), lambda lib, d: lib.tensor([1, 2, 3], dtype=d).double(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).long(), lambda lib, d: lib.tensor([0, 2], dtype=d).bool(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) * 2, lambda lib, d: lib.tensor([1, 2, 3], dtype=d) * 1.5,
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) + 0.5,
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) * lib.tensor([1, 2, 3], dtype=d),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) == 2, lambda lib, d: lib.tensor([1, 2, 3], dtype=d).sum(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).cumsum(0), lambda lib, d: lib.tensor([3, 1, 2], dtype=d).sort()[0],
    lambda lib, d: lib.tensor([6, 5], dtype=d).bitwise_and(lib.tensor([3, 3], dtype=d)),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d)[1:], lambda lib, d: lib.cat([lib.tensor([1, 2], dtype=d)] * 2),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).clone(),
    lambda lib, d: lib.from_numpy(np.array([1, 2], dtype=str(d).split(".")[-1])),
    # what PyTorch has no kernel for: NotImplementedError "add_stub" not implemented for 'UInt16' ...
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) + 1, lambda lib, d: lib.tensor([1, 2, 3], dtype=d) - 1,
    lambda lib, d: lib.tensor([1, 2], dtype=d) + lib.tensor([1, 2], dtype=d),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) < 2, lambda lib, d: lib.tensor([1, 2, 3], dtype=d) >= 2,
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).max(), lambda lib, d: lib.tensor([1, 2, 3], dtype=d).min(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).max(0), lambda lib, d: lib.tensor([1, 2, 3], dtype=d).neg(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d) // 2, lambda lib, d: lib.arange(3, dtype=d),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).mean(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).amax(), lambda lib, d: lib.tensor([1, 2, 3], dtype=d).amin(),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).argmax(), lambda lib, d: lib.tensor([1, 2, 3], dtype=d).argmin(0),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).clamp(1, 2),
    lambda lib, d: lib.tensor([1, 2, 3], dtype=d).clamp(min=2),
    lambda lib, d: lib.tensor([1.0, 2.0]).to(d).requires_grad_(),
])
def test_ops_match_torch(name, call):
    assert_same(lambda lib: call(lib, getattr(lib, name)))


@pytest.mark.parametrize("name", WIDE)
def test_numpy_tolist_and_legacy_type(name):
    ours, theirs = values(gradiente, name), values(torch, name)
    assert ours.numpy().dtype == theirs.numpy().dtype
    assert ours.tolist() == theirs.tolist()
    assert ours.type() == theirs.type()
    assert str(gradiente.iinfo(getattr(gradiente, name))) == str(torch.iinfo(getattr(torch, name)))


@pytest.mark.parametrize("name", WIDE)
@pytest.mark.parametrize("other", ["int64", "uint8", "bool", "complex64", "float32", "float64", "float16", "uint16"])
def test_promotion_matches_torch(name, other):
    assert_same(lambda lib: str(lib.promote_types(getattr(lib, name), getattr(lib, other))).split(".")[-1])


def test_view_as_other_dtype():
    assert_same(lambda lib: lib.tensor([1, 2, 3], dtype=lib.uint64).view(lib.int32))
    assert_same(lambda lib: lib.tensor([1, 2, 3], dtype=lib.uint16).view(lib.int16))
