"""The ops of ``ops/statistics.py``. cov and corrcoef from the op table (float64 gradcheck, float32/float64 against
PyTorch with the grad_fn name, gradgradcheck). Then, against PyTorch: the values and dtypes of cov, corrcoef and
bincount, the degrees-of-freedom warning, histc (a function and a tensor method) and histogram (its returned
pair printed as PyTorch prints it); bincount and histogram have no derivative (counts carry no gradient, and
histc has no op-table row); and PyTorch's error messages."""
import numpy as np
import pytest
from harness import (
    OpSpec,
    assert_same_tensors,
    both,
    both_quietly,
    check_same_error,
    on_both,
    same_tensor,
    spec_tests,
)
from test_config import same_repr

import gradiente

torch = pytest.importorskip("torch")


def cov_with_weights(rng, shapes):
    return [rng.uniform(-2, 2, size=shapes[0]), rng.uniform(0.5, 2, size=shapes[1])]


SPECS = [
    OpSpec("cov", lambda lib, x: lib.cov(x), [((3, 5),), ((5,),)]),
    OpSpec("cov_correction", lambda lib, x: x.cov(correction=0), [((2, 4),)]),
    OpSpec("cov_aweights", lambda lib, x, w: lib.cov(x, aweights=w), [((3, 5), (5,))], make_inputs=cov_with_weights),
    OpSpec("cov_fweights", lambda lib, x: lib.cov(x, fweights=lib.tensor([1, 3, 2, 1]), correction=2), [((2, 4),)]),
    OpSpec("corrcoef", lambda lib, x: lib.corrcoef(x), [((3, 5),)]),
    OpSpec("corrcoef_vector", lambda lib, x: x.corrcoef(), [((5,),)]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- cov, corrcoef, bincount ------------------------------------------------------------------------------

COV_INPUT = [[0.0, 1.0, 2.0], [2.0, 1.0, 0.5]]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.cov(lib.tensor(COV_INPUT)),
    lambda lib: lib.cov(lib.tensor(COV_INPUT), correction=0),
    lambda lib: lib.cov(lib.tensor(COV_INPUT)[0]),
    lambda lib: lib.cov(lib.tensor(COV_INPUT), fweights=lib.tensor([1, 2, 3])),
    lambda lib: lib.cov(lib.tensor(COV_INPUT), aweights=lib.tensor([0.5, 1.0, 2.0])),
    lambda lib: lib.cov(lib.tensor(COV_INPUT), fweights=lib.tensor([1, 2, 3]), aweights=lib.tensor([0.5, 1.0, 2.0])),
    lambda lib: lib.cov(lib.tensor(COV_INPUT), aweights=lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)),
    lambda lib: lib.cov(lib.tensor([[1, 2, 3], [3, 1, 0]])),
    lambda lib: lib.cov(lib.tensor(COV_INPUT), correction=5),
    lambda lib: lib.cov(lib.tensor(2.0)),
    lambda lib: lib.cov(lib.tensor([[1 + 1j, 2, 3], [1, 0, 2j]])),
    lambda lib: lib.corrcoef(lib.tensor(COV_INPUT)),
    lambda lib: lib.corrcoef(lib.tensor(COV_INPUT)[0]),
    lambda lib: lib.corrcoef(lib.tensor([[1, 2, 3], [3, 1, 0]])),
    lambda lib: lib.corrcoef(lib.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])),
    lambda lib: lib.corrcoef(lib.tensor([[1 + 1j, 2, 3], [1, 0, 2j]])),
    lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3])),
    lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3]), minlength=6),
    lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3]), lib.tensor([0.5, 1.0, 2.0, 3.0])),
    lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3]), lib.tensor([0.5, 1.0, 2.0, 3.0], dtype=lib.float64)),
    lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3]), lib.tensor([1, 1, 2, 3])),
    lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64)),
    lambda lib: lib.tensor([1, 2], dtype=lib.uint8).bincount(),
], ids=lambda fn: "")
def test_numerics_match_torch(fn):
    assert_same_tensors(*both_quietly(fn), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.cov(lib.ones(2, 2, 2)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1.0, 2.0, 3.0])),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([-1, 2, 3])),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1, 2])),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([[1, 2, 3]])),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([1, 2, 3])),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([-1.0, 2.0, 3.0])),
    lambda lib: lib.corrcoef(lib.ones(2, 2, 2)),
    lambda lib: lib.bincount(lib.tensor([-1])),
    lambda lib: lib.bincount(lib.tensor([[1]])),
    lambda lib: lib.bincount(lib.tensor([1.0])),
    lambda lib: lib.bincount(lib.tensor([True])),
    lambda lib: lib.bincount(lib.tensor([1]), minlength=-1),
    lambda lib: lib.bincount(lib.tensor([1, 2]), lib.ones(3)),
], ids=lambda fn: "")
def test_numerics_errors_match_torch(fn):
    check_same_error(fn)


def test_cov_warns_when_degrees_of_freedom_run_out():
    with pytest.warns(UserWarning, match=r"^cov\(\): degrees of freedom is <= 0"):
        gradiente.cov(gradiente.ones(2, 3), correction=5)


def test_bincount_and_histogram_have_no_derivative():
    for lib in (gradiente, torch):
        counts = lib.bincount(lib.tensor([0, 1]), lib.tensor([1.0, 2.0], requires_grad=True))
        hist = lib.histogram(lib.tensor([1.0, 2.0], requires_grad=True), 2)
        assert type(counts.grad_fn).__name__ == type(hist.hist.grad_fn).__name__ == "NotImplemented"
        assert hist.bin_edges.grad_fn is hist.hist.grad_fn
    for op in ("bincount", "histogram"):
        def backward(lib, op=op):
            if op == "bincount":
                out = lib.bincount(lib.tensor([0, 1]), lib.tensor([1.0, 2.0], requires_grad=True))
            else:
                out = lib.histogram(lib.tensor([1.0, 2.0], requires_grad=True), 2).hist
            out.sum().backward()
        check_same_error(backward)


# --- histogram ------------------------------------------------------------------------------------------

HISTOGRAM_INPUT = [1.0, 2.0, 1.0, 4.0, 2.5, 0.0]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.histogram(lib.tensor(HISTOGRAM_INPUT), 4),
    lambda lib: lib.histogram(lib.tensor(HISTOGRAM_INPUT), 3, range=(0.0, 3.0)),
    lambda lib: lib.histogram(lib.tensor(HISTOGRAM_INPUT), bins=3, range=[0, 3]),
    lambda lib: lib.histogram(lib.tensor(HISTOGRAM_INPUT), lib.tensor([0.0, 1.0, 2.0, 5.0])),
    lambda lib: lib.histogram(lib.tensor(HISTOGRAM_INPUT), 3, weight=lib.arange(1.0, 7.0), density=True),
    lambda lib: lib.histogram(lib.tensor(HISTOGRAM_INPUT, dtype=lib.float64), 2),
    lambda lib: lib.histogram(lib.tensor([]), 2),
    lambda lib: lib.histogram(lib.ones(3), 2),
    lambda lib: lib.histogram(lib.tensor([5.0]), 2),
    lambda lib: lib.histogram(lib.tensor([0.0, 1.0]), 3, range=(2.0, 2.0)),
    lambda lib: lib.tensor(HISTOGRAM_INPUT).view(2, 3).histogram(2),
    lambda lib: lib.histogram(lib.from_numpy(np.random.RandomState(0).randn(1000).astype(np.float32)), 17),
    lambda lib: lib.histogram(lib.from_numpy(np.random.RandomState(1).randn(500)), 13, range=(-1.0, 1.5),
                              density=True),
], ids=lambda fn: "")
def test_histogram_matches_torch(fn):
    assert_same_tensors(*both_quietly(lambda lib: tuple(fn(lib))), rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.histogram(lib.tensor([1, 2]), 3),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 3, range=(3.0, 1.0)),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), torch_like_edges(lib)),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 3, range=(0.0, float("inf"))),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 4, weight=lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.histogram(lib.tensor([5.0, float("nan")]), 2),
    lambda lib: lib.histogram(lib.tensor([0.0, 1.0]), lib.tensor([[0.0, 1.0]])),
    lambda lib: lib.histogram(lib.tensor([0.0, 1.0]), 2, weight=lib.tensor([1.0])),
], ids=lambda fn: "")
def test_histogram_errors_match_torch(fn):
    check_same_error(fn)


def torch_like_edges(lib):
    return lib.tensor([0.0, 1.0, 2.0], dtype=lib.float64)


def test_returned_pairs_print_as_torch_prints_them():
    same_repr(*both_quietly(lambda lib: lib.histogram(lib.tensor([1.0, 2.0, 1.0, 4.0]), 2)))
    hist = gradiente.histogram(gradiente.tensor([1.0]), 2)
    assert hist.hist is hist[0] and hist.bin_edges is hist[1]


# --- histc: outputs that carry no gradient ---------------------------------------------------------------------

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


def test_histogram_counts_in_100_bins_by_default():
    def scenario(lib):
        hist, edges = lib.histogram(lib.tensor([1.0, 2.0, 1.0, 1.5]))
        return hist.tolist(), edges.tolist()

    on_both(scenario)
