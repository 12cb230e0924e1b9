"""``gradiente.testing`` against ``torch.testing``: ``assert_close`` raises what PyTorch raises, message for message,
over a catalogue of mismatches (values, shapes, dtypes, nan, inf, integers, nested sequences and mappings, custom
messages); ``make_tensor`` draws the very values PyTorch draws from the same seed."""
import math

import numpy as np
import pytest
from harness import check_same_error

import gradiente

torch = pytest.importorskip("torch")


NAN, INF = math.nan, math.inf


def _tensor_cases(lib):
    t = lib.tensor
    return [
        (t([1.0, 2.0, 3.0]), t([1.0, 2.1, 3.0]), {}),
        (t([1.0, 2.0, 3.0], dtype=lib.float64), t([1.0, 2.1, 3.5], dtype=lib.float64), {}),
        (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 5.0]]), {}),
        (t(1.0), t(1.5), {}),
        (t([1.0]), t([1.5]), {}),
        (t([1, 2, 3]), t([1, 5, 3]), {}),
        (t(1), t(2), {}),
        (t([True, False]), t([True, True]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0, 3.0]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0], dtype=lib.float64), {}),
        (t([1.0, 2.0]), t([1, 2, 3]), {}),
        (t([1, 2], dtype=lib.int32), t([1, 2]), {}),
        (t([NAN, 1.0]), t([NAN, 1.0]), {}),
        (t([NAN, 1.0]), t([NAN, 1.0]), {"equal_nan": True}),
        (t([NAN, 1.0]), t([1.0, 1.0]), {}),
        (t([NAN]), t([1.0]), {"equal_nan": True}),
        (t([INF, 1.0]), t([-INF, 1.0]), {}),
        (t([INF, 1.0]), t([INF, 1.0]), {}),
        (t([1.0]), t([1.05]), {"rtol": 0.1, "atol": 0}),
        (t([1.0, 2.0]), t([1.0, 2.5]), {"rtol": 0.0, "atol": 0.2}),
        (t([1.0, 2.0]), t([1.0, 3.0]), {"rtol": 0, "atol": 0}),
        (t([1, 2]), t([1, 3]), {"rtol": 0.1, "atol": 0.1}),
        (t([1.0, 2.0]), t([1.0, 2.5], dtype=lib.float64), {"check_dtype": False}),
        (t([1, 2]), t([1.0, 2.5]), {"check_dtype": False}),
        (t([1.0, 2.0], dtype=lib.float16), t([1.0, 2.5], dtype=lib.float16), {}),
        (t(1.0, dtype=lib.float16), t(1.1, dtype=lib.float16), {}),
        (t([0.0, 1.0]), t([1e-3, 1.0]), {}),
        (t([1.0]), t([0.0]), {}),
        (t(1.0), t(0.0), {}),
        (t([1e10]), t([2e10]), {}),
        (t([0.1]), t([0.2]), {}),
        (t([1 + 1j]), t([1 + 2j]), {}),
        (t(1 + 1j), t(1 + 2j), {}),
        (t([100, -100], dtype=lib.int8), t([-100, 100], dtype=lib.int8), {}),
        (t([1, 200], dtype=lib.uint8), t([250, 100], dtype=lib.uint8), {}),
        (t([2 ** 62]), t([-(2 ** 62)])) + ({},),
        (t([-0.0]), t([0.0]), {}),
        (t([1e-40]), t([0.0]), {}),
        (t([1.0], requires_grad=True), t([2.0]), {}),
        (t([]), t([]), {}),
        (lib.arange(10.0), lib.arange(10.0) + t([0, 0, 0, 1.0, 0, 0, 2, 0, 0, 0]), {}),
        (lib.zeros(7), t([0.0, 0, 1, 0, 0, 0, 0]), {}),
        (lib.zeros(1000), lib.cat([lib.ones(999), lib.zeros(1)]), {}),
        (lib.zeros(2, 3, 4), lib.zeros(2, 3, 4) + (lib.arange(24.0).reshape(2, 3, 4) == 23), {}),
        (lib.zeros(2, 2).t(), lib.zeros(2, 2), {"check_stride": True}),
        (t([1.0]), t([2.0]), {"msg": "custom"}),
        (t([1.0]), t([2.0]), {"msg": lambda m: "X" + m + "Y"}),
        (t([1.0]), t([1.0]), {"rtol": 0.1}),
        (t([1.0]), t([1.0]), {"atol": 0.1}),
    ]


def _other_cases(lib):
    t = lib.tensor
    return [
        (1.0, 1.1, {}), (1, 2, {}), (1, 1.0, {}), (1, 1.0, {"check_dtype": False}), (2.5, 2, {"check_dtype": False}),
        (1.0, 1 + 1j, {"check_dtype": False}), (1 + 1j, 1 + 2j, {}), (True, False, {}), (NAN, NAN, {}),
        (NAN, NAN, {"equal_nan": True}), (1.0, 0.0, {}), (INF, -INF, {}), (1.0, 1.0 + 1e-8, {}),
        (np.float64(1.0), np.float64(1.5), {}), (np.float32(1.0), 1.5, {}), (None, None, {}), (None, 1, {}),
        ("a", "b", {}), (t(1.0), 1.0, {}), ([1.0, 2.0], t([1.0, 2.0]), {}), (t([1.0]), [1.0], {"msg": "custom"}),
        ([1.0, 2.0], [1.0, 2.5], {}), ([1.0, 2.0], [1.0, 2.0, 3.0], {}), ((1.0, 2.0), [1.0, 2.0], {}),
        ([t([1.0, 2.0]), (t(3.0), t([4.0, 5.0]))], [t([1.0, 2.0]), (t(3.0), t([4.0, 6.0]))], {}),
        ({"a": t([1.0]), "b": t([2.0])}, {"a": t([1.0]), "b": t([3.0])}, {}),
        ({"a": 1.0}, {"b": 1.0}, {}), ({"a": 1.0}, {"a": 1.0, "b": 2.0, "c": 3.0}, {}),
        ({"a": 1.0, "z": 2.0, "c": 3}, {"a": 1.0}, {}), ({1: 1.0}, {2: 1.0}, {}), ({"a": 1.0}, [1.0], {}),
        ({"a": [1.0, {"b": 2.0}]}, {"a": [1.0, {"b": 3.0}]}, {}), ([1.0], [t(1.0)], {}), (["a"], ["a"], {}),
        ([[1.0], [1.0, 2.0]], [[1.0], [1.0]], {}), ([t([0.0, 0.0])], [t([0.0, 0.0, 0.0])], {}),
        ([1.0, 2.0], [1.0, 3.0], {"msg": "custom"}), ([1.0, 2.0], [1.0, 3.0], {"msg": lambda m: "<" + m + ">"}),
        (np.array([1.0, 2.0]), np.array([1.0, 3.0]), {}), (np.array([1.0, 2.0]), t([1.0, 2.0]), {}),
        (t([1.0, 2.0], dtype=lib.float64), np.array([1.0, 3.0]), {}),
    ]


def _outcome(lib, actual, expected, kwargs):
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as error:      # the outcome is the exception, whatever its type
        return type(error), str(error).replace("torch.", "gradiente.")
    return None


@pytest.mark.parametrize("case", range(len(_tensor_cases(gradiente))))
def test_assert_close_on_tensors_raises_what_torch_raises(case):
    ours = _outcome(gradiente, *_tensor_cases(gradiente)[case])
    theirs = _outcome(torch, *_tensor_cases(torch)[case])
    assert ours == theirs


@pytest.mark.parametrize("case", range(len(_other_cases(gradiente))))
def test_assert_close_on_numbers_and_containers_raises_what_torch_raises(case):
    ours = _outcome(gradiente, *_other_cases(gradiente)[case])
    theirs = _outcome(torch, *_other_cases(torch)[case])
    assert ours == theirs


def test_assert_close_message_example():
    with pytest.raises(AssertionError) as failure:
        gradiente.testing.assert_close(gradiente.tensor([1.0, 2.0, 3.0]), gradiente.tensor([1.0, 2.5, 3.0]))
    assert str(failure.value) == ("Tensor-likes are not close!\n\n"
                                  "Mismatched elements: 1 / 3 (33.3%)\n"
                                  "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
                                  "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 "
                                  "allowed)")
    gradiente.testing.assert_close(gradiente.tensor([1.0, 2.0]), gradiente.tensor([1.0, 2.0 + 1e-6]))


MAKE = [((2, 3), "float32", {}), ((4,), "float64", {"low": -2, "high": 3}), ((2, 3), "int64", {}),
        ((5,), "uint8", {}), ((5,), "int8", {"low": -200, "high": 200}), ((3, 2), "bool", {}),
        ((2, 2), "complex64", {}), ((6,), "float16", {}), ((3, 4), "float32", {"noncontiguous": True}),
        ((3, 4), "int64", {"low": 0, "high": 2, "exclude_zero": True}),
        ((5,), "float32", {"low": 0, "high": 1e-30, "exclude_zero": True}), ((), "int32", {}),
        ((2, 3), "float32", {"requires_grad": True})]


@pytest.mark.parametrize("shape,dtype,kwargs", MAKE)
def test_make_tensor_draws_torchs_values(shape, dtype, kwargs):
    torch.manual_seed(3)
    gradiente.manual_seed(3)
    theirs = torch.testing.make_tensor(shape, dtype=getattr(torch, dtype), device="cpu", **kwargs)
    ours = gradiente.testing.make_tensor(shape, dtype=getattr(gradiente, dtype), device="cpu", **kwargs)
    assert ours.detach().tolist() == theirs.detach().tolist()
    assert ours.stride() == theirs.stride() and ours.requires_grad == theirs.requires_grad
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def test_make_tensor_takes_the_shape_as_several_ints():
    assert tuple(gradiente.testing.make_tensor(2, 3, dtype=gradiente.float32, device="cpu").shape) == (2, 3)


MAKE_ERRORS = [
    lambda lib: lib.testing.make_tensor(3, dtype=lib.float32, device="cpu", low=5, high=3),
    lambda lib: lib.testing.make_tensor(3, dtype=lib.int64, device="cpu", low=2, high=2),
    lambda lib: lib.testing.make_tensor(3, dtype=lib.float32, device="cpu", low=math.nan),
    lambda lib: lib.testing.make_tensor(3, dtype=lib.float32),
]


@pytest.mark.parametrize("call", MAKE_ERRORS)
def test_make_tensor_errors_match_torch(call):
    check_same_error(call)
