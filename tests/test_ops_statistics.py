"""The ops of ``ops/statistics.py``: histc against PyTorch, as a function and as a tensor method (it counts, and
counts carry no gradient, so it has no op-table row), and PyTorch's error messages."""
import numpy as np
import pytest
from harness import both, check_same_error, same_tensor

import gradiente

torch = pytest.importorskip("torch")


# --- outputs that carry no gradient ---------------------------------------------------------------------

HISTC_CASES = [
    ([1.0, 2.0, 1.0, 4.0, 2.5], {"bins": 4}),
    ([1.0, 2.0, 1.0, 4.0, 2.5], {"bins": 4, "min": 0, "max": 3}),
    ([2.0, 2.0], {"bins": 4}),
    ([], {"bins": 3}),
    ([1.0, float("nan"), 0.5], {"bins": 3, "min": 0, "max": 2}),
    ([0.0, 0.1, 0.2, 0.3, 0.7, 1.0], {"bins": 10, "min": 0.0, "max": 1.0}),
    ([-3.0, 5.0, 0.25], {"bins": 7, "min": -1, "max": 1}),
]


@pytest.mark.parametrize("values,kwargs", HISTC_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_matches_torch(values, kwargs, dtype):
    array = np.array(values, dtype=dtype)
    g, t = both(lambda lib: lib.histc(lib.from_numpy(array.copy()), **kwargs))
    same_tensor(g, t)


def test_histc_of_random_values_matches_torch():
    values = np.random.RandomState(0).randn(1000).astype(np.float32)
    g, t = both(lambda lib: lib.from_numpy(values.copy()).histc(bins=13))
    same_tensor(g, t)


def test_histc_is_not_recorded():
    x = gradiente.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = gradiente.histc(x, 3)
    assert out.grad_fn is None and not out.requires_grad


def test_tensor_methods_exist_where_torch_has_them():
    assert hasattr(torch.Tensor, "histc") and hasattr(gradiente.Tensor, "histc")


# --- PyTorch's error messages -------------------------------------------------------------------------------

ERRORS = [
    ("histc_int", lambda lib: lib.histc(lib.tensor([1, 2]), 4)),
    ("histc_bins", lambda lib: lib.histc(lib.zeros(2), 0)),
    ("histc_min_max", lambda lib: lib.histc(lib.zeros(2), 3, min=3, max=1)),
    ("histc_infinite_data", lambda lib: lib.histc(lib.tensor([1.0, float("inf")]), 3)),
    ("histc_infinite_max", lambda lib: lib.histc(lib.tensor([1.0]), 3, 0, float("inf"))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)
