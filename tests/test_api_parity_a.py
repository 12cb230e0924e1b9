"""Top-level API parity, part A, what is left of it: the tests that wait for their module's file, against PyTorch.

* because its file was being rewritten, the rows of ``ops/reductions.py`` (std_mean, var_mean, aminmax,
  nanmedian, trapezoid, cumulative_trapezoid, renorm).

Everything else that was here is in its module's file (test_config.py, test_windows.py, test_ops_scattering.py,
test_ops_statistics.py, test_ops_views.py, test_ops_comparison.py, test_ops_indexing.py,
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


# --- the op-spec table --------------------------------------------------------------------------------------

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
    # integration
    OpSpec("trapezoid", lambda lib, y: lib.trapezoid(y), SHAPES),
    OpSpec("trapezoid_dx", lambda lib, y: lib.trapezoid(y, dx=0.5, dim=0), MATRIX),
    OpSpec("trapezoid_x", lambda lib, y, x: lib.trapezoid(y, x), [((3, 4), (4,)), ((4,), (4,)), ((3, 4), (3, 4))]),
    OpSpec("trapezoid_x_dim0", lambda lib, y, x: lib.trapezoid(y, x, dim=0), [((3, 4), (3,))]),
    OpSpec("trapz", lambda lib, y: lib.trapz(y, dx=2.0), [((2, 5),)]),
    OpSpec("cumulative_trapezoid", lambda lib, y: lib.cumulative_trapezoid(y), SHAPES),
    OpSpec("cumulative_trapezoid_dx", lambda lib, y: lib.cumulative_trapezoid(y, dx=3, dim=0), MATRIX),
    OpSpec("cumulative_trapezoid_x", lambda lib, y, x: lib.cumulative_trapezoid(y, x), [((3, 4), (4,))]),
    # renorm
    *[OpSpec(f"renorm_p{p}", lambda lib, x, p=p: lib.renorm(x, p, 0, 1.5), [((4, 3),), ((4, 2, 3),)],
             make_inputs=renorm_rows) for p in (2, 1, 3, 1.5)],
    OpSpec("renorm_inf", lambda lib, x: x.renorm(float("inf"), 0, 1.5), [((4, 3),)], make_inputs=renorm_rows),
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
    ours = gradiente.nanmedian(gradiente.tensor(x), 1)
    assert ours.values is ours[0] and ours.indices is ours[1]


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


# --- integration, renorm -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 3])),
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 3]), dx=2),
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 3]), lib.tensor([1, 2, 4])),
    lambda lib: lib.trapezoid(lib.tensor([])),
    lambda lib: lib.trapezoid(lib.ones(2, 0)),
    lambda lib: lib.trapezoid(lib.tensor([[1.0]])),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.tensor([0.0, 1.0, 3.0], dtype=lib.float64)),
    lambda lib: lib.cumulative_trapezoid(lib.tensor([[1.0]])),
    lambda lib: lib.cumulative_trapezoid(lib.tensor([1, 2, 3])),
    lambda lib: lib.renorm(lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1], [4.0, -4.0, 0.0]]), 2, 0, 1.0),
    lambda lib: lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1]]).renorm_(1, 1, 2.0),
    lambda lib: lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1]]).renorm(float("inf"), 0, 1.0),
    lambda lib: lib.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1]]).renorm(0.5, 0, 1.0),
], ids=lambda fn: "")
def test_numerics_match_torch(fn):
    assert_same_tensors(*both_quietly(fn), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.trapezoid(lib.tensor(1.0)),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.tensor([0.0, 1.0])),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.tensor([0.0, 1.0, 2.0]), dx=1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), -1, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), 0, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 0, -1.0),
    lambda lib: lib.renorm(lib.ones(2, 2, dtype=lib.int64), 2, 0, 1.0),
    lambda lib: lib.renorm(lib.ones(2), 2, 0, 1.0),
    lambda lib: lib.renorm(lib.tensor(1.0), 2, 0, 1.0),
], ids=lambda fn: "")
def test_numerics_errors_match_torch(fn):
    check_same_error(fn)
