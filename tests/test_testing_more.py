"""gradiente.testing.assert_allclose, the deprecated alias, against torch.testing's: warning, tolerances, errors."""
import math

import pytest
import torch

import gradiente


def _outcome(lib, actual, expected, **kwargs):
    with pytest.warns(FutureWarning) as caught:
        try:
            lib.testing.assert_allclose(actual, expected, **kwargs)
            result = None
        except AssertionError as error:
            result = type(error)
    return result, str(caught[0].message)


@pytest.mark.parametrize("make, kwargs", [
    (lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.00005])), {}),       # within float32's 1e-4
    (lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.01])), {}),
    (lambda lib: (lib.tensor([1.0, math.nan]), [1.0, math.nan]), {}),             # nan equal by default
    (lambda lib: (lib.tensor([1.0, math.nan]), [1.0, math.nan]), {"equal_nan": False}),
    (lambda lib: (lib.tensor([1, 2]), lib.tensor([1.0, 2.0])), {}),               # dtype not checked
    (lambda lib: (lib.tensor([1, 2]), [1, 3]), {}),
    (lambda lib: (1.0, 1.00001), {}),
    (lambda lib: (lib.tensor([1.0], dtype=lib.float64), lib.tensor([1.00001], dtype=lib.float64)), {}),
    (lambda lib: (lib.tensor([1.0]), lib.tensor([1.1])), {"rtol": 0.2, "atol": 0.0}),
])
def test_assert_allclose_matches_torch(make, kwargs):
    ref = _outcome(torch, *make(torch), **kwargs)
    got = _outcome(gradiente, *make(gradiente), **kwargs)
    assert got == ref


def test_assert_allclose_message_override():
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match=r"^custom$"):
        gradiente.testing.assert_allclose(gradiente.tensor([1.0]), gradiente.tensor([2.0]), msg="custom")
