"""Top-level API parity, part A, what is left of it: the tests that wait for their module's file, against PyTorch.

* the statistics of ``ops/statistics.py`` (cov, corrcoef, bincount, histogram), for test_ops_statistics.py;
* the scatter family of ``ops/scattering.py`` (select/slice/diagonal/as_strided_scatter, index_put, put,
  index_reduce, and the chain of in-place forms), for test_ops_scattering.py;
* and, because their files are being rewritten, the rows of ``ops/reductions.py`` (std_mean, var_mean, aminmax,
  nanmedian, trapezoid, cumulative_trapezoid, renorm), ``ops/views.py`` (ravel), ``ops/comparison.py`` (isin) and
  ``ops/indexing.py`` (unravel_index).

Everything else that was here is in its module's file (test_config.py, test_windows.py,
test_ops_complex_numbers.py, test_ops_arithmetic.py, test_ops_matmul.py, test_ops_sorting.py).

Gradients come from the op-spec table (float64 gradcheck, float32/float64 against PyTorch with the grad_fn
name, gradgradcheck). The rest compares values, dtypes, reprs, warnings and error messages with PyTorch's.
"""
import warnings

import numpy as np
import pytest
from harness import OpSpec, assert_same_tensors, both_quietly, check_same_error, spec_tests
from test_config import same_repr
from test_ops_sorting import QUANTILE_INPUT, with_nans

import gradiente

torch = pytest.importorskip("torch")


# --- input makers -----------------------------------------------------------------------------------------

def distinct(rng, shapes):
    """Distinct values, well apart, in every input: no ties for sorts, extremes and quantiles."""
    out = []
    for shape in shapes:
        n = int(np.prod(shape))
        out.append((rng.permutation(n) * 0.37 - n / 5).reshape(shape).astype(np.float64))
    return out


def renorm_rows(rng, shapes):
    """Rows whose norms lie well above and well below the maxnorm of 1.5 (none near it)."""
    a = rng.uniform(-1, 1, size=shapes[0])
    scales = np.where(np.arange(a.shape[0]) % 2 == 0, 3.0, 0.2).reshape((-1,) + (1,) * (a.ndim - 1))
    return [a * scales]


def cov_with_weights(rng, shapes):
    return [rng.uniform(-2, 2, size=shapes[0]), rng.uniform(0.5, 2, size=shapes[1])]


def index_reduce_inputs(rng, shapes):
    """Positive values (products stay well scaled), none of the input's equal to one of the source's (no ties
    between them for amax and amin)."""
    x, src = (np.abs(a) + 0.5 for a in distinct(rng, shapes))
    return [x, src + 0.123]


# --- the op-spec table --------------------------------------------------------------------------------------

def _quiet(fn):
    def call(lib, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *xs)
    return call


SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),)]
MATRIX = [((3, 4),), ((2, 3, 4),)]

SPECS = [
    # joint moments
    OpSpec("std_mean", lambda lib, x: lib.std_mean(x), SHAPES),
    OpSpec("std_mean_dim_mean", lambda lib, x: lib.std_mean(x, 1, keepdim=True)[1], MATRIX),
    OpSpec("std_mean_dim", lambda lib, x: lib.std_mean(x, (0, -1), correction=0), MATRIX),
    OpSpec("var_mean", lambda lib, x: lib.var_mean(x, 0), MATRIX),
    OpSpec("var_mean_mean", lambda lib, x: lib.var_mean(x, -1, False)[1], MATRIX),
    OpSpec("aminmax", lambda lib, x: lib.aminmax(x), SHAPES, make_inputs=distinct),
    OpSpec("aminmax_max", lambda lib, x: lib.aminmax(x, dim=1, keepdim=True).max, MATRIX, make_inputs=distinct),
    OpSpec("aminmax_min", lambda lib, x: x.aminmax(dim=-1).min, MATRIX, make_inputs=distinct),
    OpSpec("nanmedian", lambda lib, x: lib.nanmedian(x), [((3, 4),)], make_inputs=with_nans),
    OpSpec("nanmedian_dim", lambda lib, x: x.nanmedian(1)[0], [((2, 5),), ((2, 2, 5),)], make_inputs=with_nans),
    # covariance, correlation
    OpSpec("cov", lambda lib, x: lib.cov(x), [((3, 5),), ((5,),)]),
    OpSpec("cov_correction", lambda lib, x: x.cov(correction=0), [((2, 4),)]),
    OpSpec("cov_aweights", lambda lib, x, w: lib.cov(x, aweights=w), [((3, 5), (5,))], make_inputs=cov_with_weights),
    OpSpec("cov_fweights", lambda lib, x: lib.cov(x, fweights=lib.tensor([1, 3, 2, 1]), correction=2), [((2, 4),)]),
    OpSpec("corrcoef", lambda lib, x: lib.corrcoef(x), [((3, 5),)]),
    OpSpec("corrcoef_vector", lambda lib, x: x.corrcoef(), [((5,),)]),
    # integration
    OpSpec("trapezoid", lambda lib, y: lib.trapezoid(y), SHAPES),
    OpSpec("trapezoid_dx", lambda lib, y: lib.trapezoid(y, dx=0.5, dim=0), MATRIX),
    OpSpec("trapezoid_x", lambda lib, y, x: lib.trapezoid(y, x), [((3, 4), (4,)), ((4,), (4,)), ((3, 4), (3, 4))]),
    OpSpec("trapezoid_x_dim0", lambda lib, y, x: lib.trapezoid(y, x, dim=0), [((3, 4), (3,))]),
    OpSpec("trapz", lambda lib, y: lib.trapz(y, dx=2.0), [((2, 5),)]),
    OpSpec("cumulative_trapezoid", lambda lib, y: lib.cumulative_trapezoid(y), SHAPES),
    OpSpec("cumulative_trapezoid_dx", lambda lib, y: lib.cumulative_trapezoid(y, dx=3, dim=0), MATRIX),
    OpSpec("cumulative_trapezoid_x", lambda lib, y, x: lib.cumulative_trapezoid(y, x), [((3, 4), (4,))]),
    # ravel, renorm
    OpSpec("ravel", lambda lib, x: lib.ravel(x), SHAPES),
    OpSpec("ravel_transposed", lambda lib, x: x.t().ravel(), [((3, 4),)]),
    *[OpSpec(f"renorm_p{p}", lambda lib, x, p=p: lib.renorm(x, p, 0, 1.5), [((4, 3),), ((4, 2, 3),)],
             make_inputs=renorm_rows) for p in (2, 1, 3, 1.5)],
    OpSpec("renorm_inf", lambda lib, x: x.renorm(float("inf"), 0, 1.5), [((4, 3),)], make_inputs=renorm_rows),
    # scatters
    OpSpec("select_scatter", lambda lib, x, s: lib.select_scatter(x, s, 0, 1), [((3, 4), (4,))]),
    OpSpec("select_scatter_last", lambda lib, x, s: x.select_scatter(s, -1, -1), [((2, 3, 4), (2, 3))]),
    OpSpec("slice_scatter", lambda lib, x, s: lib.slice_scatter(x, s, 1, 0, 4, 2), [((3, 4), (3, 2))]),
    OpSpec("slice_scatter_start", lambda lib, x, s: x.slice_scatter(s, start=1), [((3, 4), (2, 4))]),
    OpSpec("diagonal_scatter", lambda lib, x, s: lib.diagonal_scatter(x, s, 1), [((3, 4), (3,))]),
    OpSpec("diagonal_scatter_dims", lambda lib, x, s: x.diagonal_scatter(s, -1, 0, 2), [((3, 2, 4), (2, 2))]),
    # PyTorch 2.13's gradient for the input of as_strided_scatter is wrong (it fails PyTorch's own gradcheck,
    # see test_as_strided_scatter_input_gradient): values and the grad_fn name are compared here.
    OpSpec("as_strided_scatter", lambda lib, x, s: lib.as_strided_scatter(x, s, (2, 2), (1, 2), 1),
           [((3, 4), (2, 2))], torch_grad=False, extra={"contiguous_only": True}),
    OpSpec("index_put", lambda lib, x, v: lib.index_put(x, (lib.tensor([0, 2]),), v), [((3, 4), (4,)), ((3, 4), ())]),
    OpSpec("index_put_pairs", lambda lib, x, v: x.index_put((lib.tensor([0, 2]), lib.tensor([1, 3])), v),
           [((3, 4), (2,))]),
    OpSpec("index_put_accumulate", lambda lib, x, v: lib.index_put(x, (lib.tensor([0, 0, 2]), lib.tensor([1, 1, 3])), v,
                                                                    accumulate=True), [((3, 4), (3,)), ((3, 4), ())]),
    OpSpec("index_put_mask", lambda lib, x, v: lib.index_put(x, (lib.tensor([True, False, True]),), v,
                                                              accumulate=True), [((3, 4), (1, 4))]),
    OpSpec("put", lambda lib, x, s: lib.put(x, lib.tensor([0, 5, -1]), s), [((3, 4), (3,))]),
    OpSpec("put_accumulate", lambda lib, x, s: x.put(lib.tensor([[0, 0], [3, 11]]), s, accumulate=True),
           [((3, 4), (2, 2))]),
    *[OpSpec(f"index_reduce_{r}_{include}", _quiet(lambda lib, x, s, r=r, include=include: lib.index_reduce(
        x, 0, lib.tensor([0, 2, 0]), s, r, include_self=include)), [((3, 4), (3, 4))], make_inputs=index_reduce_inputs)
      for r in ("prod", "mean", "amax", "amin") for include in (True, False)],
    OpSpec("index_reduce_dim1", _quiet(lambda lib, x, s: x.index_reduce(1, lib.tensor([3, 3]), s, "mean")),
           [((3, 4), (3, 2))]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- moments, nanmedian (ops/reductions.py) ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.std_mean(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]])),
    lambda lib: lib.std_mean(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]]), 1, keepdim=True),
    lambda lib: lib.var_mean(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]]), 1, False),
    lambda lib: lib.var_mean(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]]), False),
    lambda lib: lib.var_mean(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]]), unbiased=False),
    lambda lib: lib.var_mean(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]]), dim=0, correction=2),
    lambda lib: lib.std_mean(lib.ones(1)),
    lambda lib: tuple(lib.aminmax(lib.tensor([[1.0, 5.0, 3.0], [2.0, 2.0, 0.0]]), dim=0, keepdim=True)),
    lambda lib: tuple(lib.aminmax(lib.tensor([[1.0, 5.0], [2.0, 0.0]]), keepdim=True)),
    lambda lib: tuple(lib.aminmax(lib.tensor([True, False]))),
    lambda lib: tuple(lib.aminmax(lib.tensor(3.0), dim=0)),
    lambda lib: tuple(lib.aminmax(lib.ones(2, 0), dim=0)),
    lambda lib: tuple(lib.aminmax(lib.tensor([1.0, float("nan")]))),
    lambda lib: tuple(lib.aminmax(lib.tensor([[3, 1], [2, 7]], dtype=lib.int32), dim=1)),
], ids=lambda fn: "")
def test_moments_match_torch(fn):
    assert_same_tensors(*both_quietly(fn))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nanmedian(lib.tensor(QUANTILE_INPUT)),
    lambda lib: tuple(lib.nanmedian(lib.tensor(QUANTILE_INPUT), 1)),
    lambda lib: tuple(lib.nanmedian(lib.tensor(QUANTILE_INPUT), 0, keepdim=True)),
    lambda lib: lib.nanmedian(lib.tensor([float("nan")])),
    lambda lib: lib.nanmedian(lib.tensor([1, 5, 2, 3])),
    lambda lib: tuple(lib.nanmedian(lib.tensor([[1, 5, 2], [3, 3, 0]]), 1)),
], ids=lambda fn: "")
def test_order_statistics_match_torch(fn):
    assert_same_tensors(*both_quietly(fn))


def test_nanmedian_ties_pick_torchs_index():
    rng = np.random.RandomState(0)
    for _ in range(50):
        a = rng.choice([1.0, 2.0, 3.0, np.nan], size=(4, rng.randint(1, 9)))
        a[np.isnan(a).all(1), 0] = 1.0      # an all-NaN slice: PyTorch's index there is std::nth_element's choice
        ours, theirs = gradiente.nanmedian(gradiente.from_numpy(a), 1), torch.nanmedian(torch.from_numpy(a), 1)
        assert ours.indices.tolist() == theirs.indices.tolist()


def test_returned_pairs_print_as_torch_prints_them():
    x = [[1.0, 5.0], [2.0, 0.0]]
    same_repr(*both_quietly(lambda lib: lib.aminmax(lib.tensor(x), dim=1)))
    same_repr(*both_quietly(lambda lib: lib.nanmedian(lib.tensor(x), 1)))
    same_repr(*both_quietly(lambda lib: lib.histogram(lib.tensor([1.0, 2.0, 1.0, 4.0]), 2)))
    ours = gradiente.nanmedian(gradiente.tensor(x), 1)
    assert ours.values is ours[0] and ours.indices is ours[1]
    hist = gradiente.histogram(gradiente.tensor([1.0]), 2)
    assert hist.hist is hist[0] and hist.bin_edges is hist[1]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.std_mean(lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.aminmax(lib.tensor([])),
    lambda lib: lib.aminmax(lib.ones(2, 0), dim=1),
    lambda lib: lib.aminmax(lib.ones(2, 2), dim=(0, 1)),
    lambda lib: lib.nanmedian(lib.tensor([True])),
    lambda lib: lib.nanmedian(lib.ones(2, 0), 1),
], ids=lambda fn: "")
def test_statistics_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


@pytest.mark.parametrize("fn, name", [(lambda lib: lib.var_mean(lib.ones(2, 3), dim=0, correction=2), "var_mean"),
                                      (lambda lib: lib.std_mean(lib.ones(1)), "std_mean")])
def test_degrees_of_freedom_warning_names_the_function(fn, name):
    with pytest.warns(UserWarning, match=rf"^{name}\(\): degrees of freedom is <= 0"):
        fn(gradiente)


# --- cov, corrcoef, counting, integration, unravel_index, renorm ------------------------------------------

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
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2, 5])),
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2),
    lambda lib: lib.isin(2, lib.tensor([2, 3])),
    lambda lib: lib.isin(lib.tensor([1.0, 2.0]), lib.tensor([2]), invert=True),
    lambda lib: lib.isin(lib.tensor([[1.0, float("nan")]]), lib.tensor([float("nan"), 1.0])),
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 3])),
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 3]), dx=2),
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 3]), lib.tensor([1, 2, 4])),
    lambda lib: lib.trapezoid(lib.tensor([])),
    lambda lib: lib.trapezoid(lib.ones(2, 0)),
    lambda lib: lib.trapezoid(lib.tensor([[1.0]])),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.tensor([0.0, 1.0, 3.0], dtype=lib.float64)),
    lambda lib: lib.cumulative_trapezoid(lib.tensor([[1.0]])),
    lambda lib: lib.cumulative_trapezoid(lib.tensor([1, 2, 3])),
    lambda lib: lib.unravel_index(lib.tensor([4, 1, -1, 6, -7]), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor(4), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor([[1, 2]]), 3),
    lambda lib: lib.unravel_index(lib.tensor([0]), ()),
    lambda lib: lib.unravel_index(lib.tensor([1], dtype=lib.int32), lib.Size([4])),
    lambda lib: lib.renorm(lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1], [4.0, -4.0, 0.0]]), 2, 0, 1.0),
    lambda lib: lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1]]).renorm_(1, 1, 2.0),
    lambda lib: lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1]]).renorm(float("inf"), 0, 1.0),
    lambda lib: lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1]]).renorm(0.5, 0, 1.0),
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
    lambda lib: lib.isin(lib.tensor([1j]), lib.tensor([1j])),
    lambda lib: lib.trapezoid(lib.tensor(1.0)),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.tensor([0.0, 1.0])),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.tensor([0.0, 1.0, 2.0]), dx=1.0),
    lambda lib: lib.unravel_index(lib.tensor([1.0]), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor([True]), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor([1]), (2, -3)),
    lambda lib: lib.unravel_index(lib.tensor([1]), (2.0, 3)),
    lambda lib: lib.unravel_index(5, (2, 3)),
    lambda lib: lib.renorm(lib.ones(2, 2), -1, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), 0, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 0, -1.0),
    lambda lib: lib.renorm(lib.ones(2, 2, dtype=lib.int64), 2, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2), 2, 0, 1.0),
    lambda lib: lib.renorm(lib.tensor(1.0), 2, 0, 1.0),
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


# --- scatters ---------------------------------------------------------------------------------------------

GRID = np.arange(12.0, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(4), 0, -1),
    lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(4, dtype=lib.float64), 0, 1),
    lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(3, 2), 1, -2),
    lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(2, 4), 0, None, None, 2),
    lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(3, 2), 1, 2, 100),
    lambda lib: lib.diagonal_scatter(lib.zeros(3, 4), lib.ones(3), 0, 1, 0),
    lambda lib: lib.as_strided_scatter(lib.zeros(3, 4), lib.ones(2, 2), (2, 2), (1, 1)),
    lambda lib: lib.index_put(lib.from_numpy(GRID), (lib.tensor([0, 0]), lib.tensor([1, 1])), lib.tensor([5.0, 7.0]),
                              accumulate=True),
    lambda lib: lib.index_put(lib.from_numpy(GRID), [lib.tensor([0, 2])], lib.tensor([1.0, 2.0, 3.0, 4.0])),
    lambda lib: lib.index_put(lib.from_numpy(GRID), (lib.from_numpy(GRID % 2 == 0),), lib.tensor(-1.0)),
    lambda lib: lib.index_put(lib.from_numpy(GRID), (lib.tensor([-1]), lib.tensor([-2])), lib.tensor(9.0)),
    lambda lib: lib.from_numpy(GRID.copy()).index_put_((lib.tensor([1]),), lib.tensor(1.0), True),
    lambda lib: lib.index_put_(lib.from_numpy(GRID.copy()), (lib.tensor([2]),), lib.tensor(5.0)),
    lambda lib: lib.put(lib.from_numpy(GRID), lib.tensor([0, 5, -1]), lib.tensor([9.0, 8.0, 7.0])),
    lambda lib: lib.put(lib.from_numpy(GRID), lib.tensor([0, 0]), lib.tensor([9.0, 8.0]), accumulate=True),
    lambda lib: lib.put(lib.from_numpy(GRID), lib.tensor([[1, 2]]), lib.tensor([9.0, 8.0])),
    lambda lib: lib.put(lib.zeros(0), lib.tensor([], dtype=lib.int64), lib.tensor([])),
    lambda lib: lib.from_numpy(GRID.copy()).put_(lib.tensor([3]), lib.tensor([-1.0]), accumulate=True),
    *[lambda lib, r=r, inc=inc: lib.index_reduce(lib.from_numpy(GRID + 1), 0, lib.tensor([0, 2, 0]), lib.tensor(
        [[2.0, 3.0, 0.5, -1.0], [10.0, 20.0, 30.0, 40.0], [1.0, 1.0, 1.0, 1.0]]), r, include_self=inc)
      for r in ("prod", "mean", "amax", "amin") for inc in (True, False)],
    lambda lib: lib.index_reduce(lib.from_numpy(GRID + 1).long(), 0, lib.tensor([0, 2, 0]),
                                 lib.tensor([[2, 3, 0, -1], [10, 20, 30, 40], [1, 1, 1, 1]]), "mean"),
    lambda lib: lib.index_reduce(lib.from_numpy(GRID), 0, lib.tensor([0, 1, 0], dtype=lib.int32), lib.ones(3, 4),
                                 "prod"),
    lambda lib: lib.from_numpy(GRID.copy()).index_reduce_(1, lib.tensor([3, 3]), lib.ones(3, 2), "mean"),
], ids=lambda fn: "")
def test_scatters_match_torch(fn):
    assert_same_tensors(*both_quietly(fn))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(3), 0, 1),
    lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(4), 0, 5),
    lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(4), 2, 1),
    lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(3, 3), 1),
    lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(3, 2), 1, 0, 4, 0),
    lambda lib: lib.diagonal_scatter(lib.zeros(3, 4), lib.ones(2)),
    lambda lib: lib.diagonal_scatter(lib.zeros(3, 4), lib.ones(3), 0, 0, 0),
    lambda lib: lib.as_strided_scatter(lib.zeros(3, 4), lib.ones(2, 3), (2, 2), (1, 2)),
    lambda lib: lib.as_strided_scatter(lib.zeros(3, 4), lib.ones(2, 2), (2, 2), (1, 20)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0]),), lib.tensor([1, 2, 3, 4])),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0]),), 1.0),
    lambda lib: lib.index_put(lib.ones(3, 4), lib.tensor([0]), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([5]),), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0.0]),), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0]), None), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.ones(3, 4), (None, lib.tensor([0])), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0]), lib.tensor([0]), lib.tensor([0])), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0, 1]),), lib.ones(3)),
    lambda lib: lib.index_put(lib.ones(3, 4), (lib.tensor([0, 1]),), lib.ones(3), accumulate=True),
    lambda lib: lib.put(lib.ones(3, 4), lib.tensor([12]), lib.tensor([9.0])),
    lambda lib: lib.put(lib.ones(3, 4), lib.tensor([-13]), lib.tensor([9.0])),
    lambda lib: lib.put(lib.ones(3, 4), lib.tensor([1]), lib.tensor([9.0, 8.0])),
    lambda lib: lib.put(lib.ones(3, 4), lib.tensor([1], dtype=lib.int32), lib.tensor([9.0])),
    lambda lib: lib.put(lib.ones(3, 4), lib.tensor([1]), lib.tensor([9])),
    lambda lib: lib.put(lib.zeros(0), lib.tensor([0]), lib.tensor([1.0])),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([0, 2, 0]), lib.ones(3, 4), "sum"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([0, 2, 0]), lib.ones(3, 4, dtype=lib.float64), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([[0]]), lib.ones(1, 4), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([0, 1]), lib.ones(3, 4), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([5, 1, 0]), lib.ones(3, 4), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([-1, 1, 0]), lib.ones(3, 4), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([0.0, 1, 0]), lib.ones(3, 4), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 4), 0, lib.tensor([0, 2, 0]), lib.ones(3, 2), "prod"),
    lambda lib: lib.index_reduce(lib.tensor(2.0), 0, lib.tensor([0]), lib.tensor([3.0]), "prod"),
], ids=lambda fn: "")
def test_scatter_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


def test_index_reduce_warns_that_it_is_beta():
    with pytest.warns(UserWarning, match=r"index_reduce\(\) is in beta"):
        gradiente.index_reduce(gradiente.ones(2), 0, gradiente.tensor([0]), gradiente.ones(1), "prod")


@pytest.mark.parametrize("change_after_reduce", [False, True])
def test_in_place_forms_record_torchs_nodes(change_after_reduce):
    """The in-place forms in a chain: the same nodes, and the same gradient, or (index_reduce_ saves its result,
    which a later in-place op changes) the same error."""
    outcomes = []
    for lib in (gradiente, torch):
        x = lib.zeros(3, 4, requires_grad=True)
        y = x * 1
        trail = [type(y.index_put_((lib.tensor([0]),), lib.ones(4)).grad_fn).__name__,
                 type(y.put_(lib.tensor([1]), lib.ones(1)).grad_fn).__name__,
                 type(y.addcmul_(lib.ones(4), lib.full((4,), 2.0)).grad_fn).__name__,
                 type(y.addcdiv_(lib.ones(4), lib.full((4,), 2.0)).grad_fn).__name__,
                 type(y.renorm_(2, 0, 1.0).grad_fn).__name__,
                 type(y.addbmm_(lib.ones(2, 3, 2), lib.ones(2, 2, 4)).grad_fn).__name__]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trail.append(type(y.index_reduce_(0, lib.tensor([0]), lib.full((1, 4), 2.0), "prod").grad_fn).__name__)
        if change_after_reduce:
            y.addcmul_(lib.ones(4), lib.ones(4))
        try:
            y.sum().backward()
            outcomes.append((trail, x.grad.numpy()))
        except RuntimeError as error:
            outcomes.append((trail, str(error)))
    (ours_trail, ours), (theirs_trail, theirs) = outcomes
    assert ours_trail == theirs_trail
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, atol=1e-6)       # renorm's gradient is rounding noise here


def test_as_strided_scatter_input_gradient():
    """PyTorch 2.13 gives the input the gradient of the written region instead of the rest (it fails its own
    gradcheck); gradiente gives the rest, which finite differences confirm. The values and src's gradient
    agree with PyTorch."""
    grads = []
    for lib in (gradiente, torch):
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        src = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        lib.as_strided_scatter(x, src, (2, 2), (1, 2), 0).sum().backward()
        grads.append((x.grad.numpy(), src.grad.numpy()))
    (ours_x, ours_src), (theirs_x, theirs_src) = grads
    np.testing.assert_array_equal(ours_src, theirs_src)
    np.testing.assert_array_equal(ours_x, 1 - theirs_x)          # the complement: PyTorch's bug
    x = gradiente.zeros(3, 4, dtype=gradiente.float64, requires_grad=True)
    src = gradiente.ones(2, 2, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradcheck(lambda x, s: gradiente.as_strided_scatter(x, s, (2, 2), (1, 2)), (x, src))
    with pytest.raises(RuntimeError, match="only supported for contiguous inputs"):
        gradiente.as_strided_scatter(x.t(), gradiente.ones(2, 2, dtype=gradiente.float64), (2, 2), (1, 2))
