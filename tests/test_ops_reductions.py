"""The reductions and scans of ``ops/reductions.py`` from the op table (among them std_mean, var_mean, aminmax,
nanmedian, trapezoid, cumulative_trapezoid and renorm): float64 gradcheck on contiguous and strided inputs,
differential tests against PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names) in
float32 and float64, second derivatives; then dim / keepdim / negative dims / error messages, dtype rules, NaNs,
ties of nanmedian, returned pairs and their reprs, degrees-of-freedom warnings, the values and errors of
std_mean, var_mean, aminmax, nanmedian, trapezoid and renorm, and renorm_'s node and gradient on a non-leaf,
against PyTorch."""
import warnings

import numpy as np
import pytest
from harness import (
    OpSpec,
    assert_same_tensors,
    both,
    both_quietly,
    check_in_place_chain,
    check_same_error,
    check_strides_match_torch,
    on_both,
    same_tensor,
    spec_tests,
)
from test_config import same_repr
from test_ops_sorting import QUANTILE_INPUT, with_nans

import gradiente

torch = pytest.importorskip("torch")

SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),)]
MATRIX = [((2, 3),), ((3, 4, 2),)]
MATRIX_3_4 = [((3, 4),), ((2, 3, 4),)]


def with_zeros(count):
    """Values with ``count`` exact zeros placed at random (prod and cumprod take another path then)."""
    def make(rng, shapes):
        a = rng.uniform(0.5, 1.5, size=shapes[0]) * rng.choice([-1, 1], size=shapes[0])
        a.reshape(-1)[rng.choice(a.size, count, replace=False)] = 0
        return [a]
    return make


def zeros_in_first_column(rng, shapes):
    a = rng.uniform(-1.5, 1.5, size=shapes[0])
    a[..., 1, 0] = 0
    return [a]


def with_ties(rng, shapes):
    """Values drawn from a few levels, so that maxima and minima repeat (the gradient is shared among ties)."""
    return [rng.choice([-1.0, 0.5, 2.0], size=shapes[0]).astype(np.float64)]


def distinct(rng, shapes):
    """Distinct values, well apart, so that no max, min or median is tied."""
    n = int(np.prod(shapes[0]))
    return [(rng.permutation(n) * 0.37 - n / 5).reshape(shapes[0])]


def _with_nans(rng, shapes):
    """Inputs with NaNs at fixed places (never a whole row), for the NaN-aware reductions."""
    arrays = [rng.uniform(-2.0, 2.0, size=s) for s in shapes]
    flat = arrays[0].reshape(-1)
    flat[::3] = np.nan
    return arrays


def renorm_rows(rng, shapes):
    """Rows whose norms lie well above and well below the maxnorm of 1.5 (none near it)."""
    a = rng.uniform(-1, 1, size=shapes[0])
    scales = np.where(np.arange(a.shape[0]) % 2 == 0, 3.0, 0.2).reshape((-1,) + (1,) * (a.ndim - 1))
    return [a * scales]


def _quiet(fn):
    """``fn`` with PyTorch's and our 'degrees of freedom <= 0' warning silenced."""
    def call(lib, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *xs)
    return call


SPECS = [
    OpSpec("sum", lambda lib, x: x.sum(), [((3,),), ((2, 3),), ((),)]),
    OpSpec("sum_dim", lambda lib, x: x.sum(1), [((2, 3),), ((2, 3, 4),)]),
    OpSpec("sum_dims_keepdim", lambda lib, x: x.sum((0, 2), keepdim=True), [((2, 3, 4),)]),
    OpSpec("mean", lambda lib, x: x.mean(), [((3,),), ((2, 3),)]),
    OpSpec("mean_dim", lambda lib, x: x.mean(-1, keepdim=True), [((2, 3),)]),
    OpSpec("sum_dtype", lambda lib, x: x.sum(dtype=lib.float64), [((2, 3),)], dtypes=("float32",)),
    OpSpec("sum_neg_dims", lambda lib, x: lib.sum(x, (-1, 0)), [((2, 3, 4),)]),
    # prod
    OpSpec("prod", lambda lib, x: x.prod(), SHAPES + [((),)], domain=(0.5, 1.5)),
    OpSpec("prod_dim", lambda lib, x: lib.prod(x, 1), MATRIX, domain=(-1.5, 1.5)),
    OpSpec("prod_dim_keepdim", lambda lib, x: x.prod(-1, keepdim=True), MATRIX),
    OpSpec("prod_one_zero", lambda lib, x: x.prod(), [((2, 3),), ((5,),)], make_inputs=with_zeros(1)),
    OpSpec("prod_two_zeros", lambda lib, x: x.prod(), [((2, 3),)], make_inputs=with_zeros(2)),
    OpSpec("prod_dim_zero", lambda lib, x: x.prod(0), [((3, 2),), ((2, 3, 2),)], make_inputs=zeros_in_first_column),
    OpSpec("prod_dim_zeros", lambda lib, x: x.prod(1), [((2, 4),)], make_inputs=with_zeros(3)),
    # max / min: all elements, along a dim, ties
    OpSpec("max", lambda lib, x: x.max(), SHAPES + [((),)], make_inputs=distinct),
    OpSpec("min", lambda lib, x: lib.min(x), SHAPES, make_inputs=distinct),
    OpSpec("max_dim", lambda lib, x: x.max(1), MATRIX, make_inputs=distinct),
    OpSpec("max_dim_values", lambda lib, x: lib.max(x, dim=-1, keepdim=True).values, MATRIX, make_inputs=distinct),
    OpSpec("min_dim", lambda lib, x: x.min(0)[0], MATRIX, make_inputs=distinct),
    OpSpec("max_ties", lambda lib, x: x.max(), [((4, 5),)], make_inputs=with_ties, gradcheck=False),
    OpSpec("min_ties", lambda lib, x: x.min(), [((4, 5),)], make_inputs=with_ties, gradcheck=False),
    # amax / amin
    OpSpec("amax", lambda lib, x: x.amax(), SHAPES, make_inputs=distinct),
    OpSpec("amax_dim", lambda lib, x: lib.amax(x, 1), MATRIX, make_inputs=distinct),
    OpSpec("amin_dims_keepdim", lambda lib, x: x.amin((0, -1), keepdim=True), [((3, 4, 2),)], make_inputs=distinct),
    OpSpec("amax_ties", lambda lib, x: x.amax(1), [((4, 5),)], make_inputs=with_ties, gradcheck=False),
    OpSpec("amin_ties", lambda lib, x: lib.amin(x, (0, 1)), [((4, 5),)], make_inputs=with_ties, gradcheck=False),
    # argmax / argmin: integer results, no gradient
    OpSpec("argmax", lambda lib, x: x.argmax(), SHAPES, make_inputs=distinct, gradcheck=False, torch_grad=False),
    OpSpec("argmax_dim", lambda lib, x: lib.argmax(x, 1, keepdim=True), MATRIX, make_inputs=distinct,
           gradcheck=False, torch_grad=False),
    OpSpec("argmin_dim", lambda lib, x: x.argmin(-1), MATRIX, make_inputs=distinct, gradcheck=False,
           torch_grad=False),
    OpSpec("argmax_ties", lambda lib, x: x.argmax(0), [((6, 5),)], make_inputs=with_ties, gradcheck=False,
           torch_grad=False),
    # median
    OpSpec("median", lambda lib, x: x.median(), SHAPES, make_inputs=distinct),
    OpSpec("median_dim", lambda lib, x: lib.median(x, 1), MATRIX + [((4, 4),)], make_inputs=distinct),
    # var / std with every argument form
    OpSpec("var", lambda lib, x: x.var(), SHAPES),
    OpSpec("var_dim", lambda lib, x: lib.var(x, 1), MATRIX),
    OpSpec("var_unbiased_false", lambda lib, x: x.var(0, False), MATRIX),
    OpSpec("var_bool_first", lambda lib, x: x.var(False), MATRIX),
    OpSpec("var_correction", lambda lib, x: x.var(dim=(0, -1), correction=2, keepdim=True), [((3, 4, 2),)]),
    OpSpec("std", lambda lib, x: x.std(), SHAPES),
    OpSpec("std_dim", lambda lib, x: lib.std(x, -1, keepdim=True), MATRIX),
    OpSpec("std_correction0", lambda lib, x: x.std(dim=0, correction=0), MATRIX),
    OpSpec("std_unbiased_kw", lambda lib, x: x.std(1, unbiased=False), MATRIX),
    OpSpec("var_single_element", _quiet(lambda lib, x: x.var(0, correction=0)), [((1, 3),)]),
    # norm
    OpSpec("norm", lambda lib, x: x.norm(), SHAPES),
    OpSpec("norm_fro", lambda lib, x: lib.norm(x, "fro"), [((2, 3),)]),
    OpSpec("norm_fro_dims", lambda lib, x: lib.norm(x, "fro", dim=(0, 1)), [((2, 3, 2),)]),
    OpSpec("norm_1", lambda lib, x: x.norm(1), SHAPES),
    OpSpec("norm_inf", lambda lib, x: x.norm(float("inf")), SHAPES, make_inputs=distinct),
    OpSpec("norm_neg_inf", lambda lib, x: x.norm(float("-inf"), dim=1), MATRIX, make_inputs=distinct),
    OpSpec("norm_3", lambda lib, x: x.norm(3), SHAPES),
    OpSpec("norm_1_5", lambda lib, x: x.norm(p=1.5, dim=0), MATRIX),
    OpSpec("norm_0_5", lambda lib, x: x.norm(0.5, dim=-1, keepdim=True), MATRIX),
    OpSpec("norm_0", lambda lib, x: x.norm(0), [((2, 3),)]),
    OpSpec("norm_dim", lambda lib, x: lib.norm(x, dim=1), MATRIX),
    OpSpec("norm_dims_keepdim", lambda lib, x: x.norm(dim=(0, 2), keepdim=True), [((3, 4, 2),)]),
    OpSpec("norm_inf_ties", lambda lib, x: x.norm(float("inf"), dim=0), [((6, 5),)], make_inputs=with_ties,
           gradcheck=False),
    # logsumexp
    OpSpec("logsumexp", lambda lib, x: x.logsumexp(1), MATRIX),
    OpSpec("logsumexp_dims", lambda lib, x: lib.logsumexp(x, (0, -1), keepdim=True), [((3, 4, 2),)]),
    OpSpec("logsumexp_large", lambda lib, x: lib.logsumexp(x, 0), [((4, 3),)], domain=(80.0, 120.0),
           rtol32=1e-6),
    OpSpec("logsumexp_0d", lambda lib, x: x.logsumexp(0), [((),)]),
    # scans
    OpSpec("cumsum", lambda lib, x: x.cumsum(0), SHAPES + [((),)]),
    OpSpec("cumsum_neg_dim", lambda lib, x: lib.cumsum(x, -1), MATRIX),
    OpSpec("cumsum_dtype", lambda lib, x: x.cumsum(1, dtype=lib.float64), [((2, 3),)], dtypes=("float32",)),
    OpSpec("cumprod", lambda lib, x: x.cumprod(0), SHAPES + [((),)]),
    OpSpec("cumprod_dim", lambda lib, x: lib.cumprod(x, -1), MATRIX),
    OpSpec("cumprod_zeros", lambda lib, x: x.cumprod(1), [((3, 5),), ((2, 4, 3),)], make_inputs=with_zeros(3)),
    OpSpec("cumprod_zero_first", lambda lib, x: x.cumprod(0), [((3, 2),)], make_inputs=zeros_in_first_column),
    # NaN-aware reductions and the log-sum-exp scan
    OpSpec("nansum", lambda lib, x: lib.nansum(x), [((3, 4),), ((),)], make_inputs=_with_nans),
    OpSpec("nansum_dim", lambda lib, x: x.nansum(1, keepdim=True), [((3, 4),)], make_inputs=_with_nans),
    OpSpec("nansum_dims", lambda lib, x: lib.nansum(x, (0, 2)), [((2, 3, 2),)], make_inputs=_with_nans),
    OpSpec("nanmean", lambda lib, x: lib.nanmean(x), [((3, 4),)], make_inputs=_with_nans),
    OpSpec("nanmean_dim", lambda lib, x: x.nanmean(-1), [((3, 4),)], make_inputs=_with_nans),
    OpSpec("logcumsumexp", lambda lib, x: lib.logcumsumexp(x, -1), [((3, 4),), ((5,),), ((),)]),
    OpSpec("logcumsumexp_dim0", lambda lib, x: x.logcumsumexp(0), [((4, 2),)]),
    OpSpec("logcumsumexp_wide_range", lambda lib, x: lib.logcumsumexp(x, 0), [((6,),)], domain=(-100.0, 100.0)),
    # joint moments
    OpSpec("std_mean", lambda lib, x: lib.std_mean(x), SHAPES),
    OpSpec("std_mean_dim_mean", lambda lib, x: lib.std_mean(x, 1, keepdim=True)[1], MATRIX_3_4),
    OpSpec("std_mean_dim", lambda lib, x: lib.std_mean(x, (0, -1), correction=0), MATRIX_3_4),
    OpSpec("var_mean", lambda lib, x: lib.var_mean(x, 0), MATRIX_3_4),
    OpSpec("var_mean_mean", lambda lib, x: lib.var_mean(x, -1, False)[1], MATRIX_3_4),
    OpSpec("aminmax", lambda lib, x: lib.aminmax(x), SHAPES, make_inputs=distinct),
    OpSpec("aminmax_max", lambda lib, x: lib.aminmax(x, dim=1, keepdim=True).max, MATRIX_3_4, make_inputs=distinct),
    OpSpec("aminmax_min", lambda lib, x: x.aminmax(dim=-1).min, MATRIX_3_4, make_inputs=distinct),
    OpSpec("nanmedian", lambda lib, x: lib.nanmedian(x), [((3, 4),)], make_inputs=with_nans),
    OpSpec("nanmedian_dim", lambda lib, x: x.nanmedian(1)[0], [((2, 5),), ((2, 2, 5),)], make_inputs=with_nans),
    # integration
    OpSpec("trapezoid", lambda lib, y: lib.trapezoid(y), SHAPES),
    OpSpec("trapezoid_dx", lambda lib, y: lib.trapezoid(y, dx=0.5, dim=0), MATRIX_3_4),
    OpSpec("trapezoid_x", lambda lib, y, x: lib.trapezoid(y, x), [((3, 4), (4,)), ((4,), (4,)), ((3, 4), (3, 4))]),
    OpSpec("trapezoid_x_dim0", lambda lib, y, x: lib.trapezoid(y, x, dim=0), [((3, 4), (3,))]),
    OpSpec("trapz", lambda lib, y: lib.trapz(y, dx=2.0), [((2, 5),)]),
    OpSpec("cumulative_trapezoid", lambda lib, y: lib.cumulative_trapezoid(y), SHAPES),
    OpSpec("cumulative_trapezoid_dx", lambda lib, y: lib.cumulative_trapezoid(y, dx=3, dim=0), MATRIX_3_4),
    OpSpec("cumulative_trapezoid_x", lambda lib, y, x: lib.cumulative_trapezoid(y, x), [((3, 4), (4,))]),
    # renorm
    *[OpSpec(f"renorm_p{p}", lambda lib, x, p=p: lib.renorm(x, p, 0, 1.5), [((4, 3),), ((4, 2, 3),)],
             make_inputs=renorm_rows) for p in (2, 1, 3, 1.5)],
    OpSpec("renorm_inf", lambda lib, x: x.renorm(float("inf"), 0, 1.5), [((4, 3),)], make_inputs=renorm_rows),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- dim, keepdim, negative dims, errors ---------------------------------------------------------------

def _outcome(fn, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # compared with what PyTorch raises
        return ("error", type(e).__name__, str(e).split("\n")[0])
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    return tuple((str(o.dtype).split(".")[-1], tuple(o.shape), o.tolist()) if hasattr(o, "dtype") else o
                 for o in outs)


def assert_same(fn):
    ours, theirs = _outcome(fn, gradiente), _outcome(fn, torch)
    if (ours and ours[0] == "error") or (theirs and theirs[0] == "error"):
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for (gd, gs, gv), (td, ts, tv) in zip(ours, theirs):
        assert (gd, gs) == (td, ts)
        np.testing.assert_allclose(np.array(gv, dtype=float), np.array(tv, dtype=float), rtol=1e-6, equal_nan=True)


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 7 - 2.5


def _x(lib, dtype=None):
    t = lib.from_numpy(X.copy())
    return t if dtype is None else t.to(getattr(lib, dtype))


REDUCTIONS = {
    "sum": lambda lib, x, **kw: x.sum(**kw), "mean": lambda lib, x, **kw: x.mean(**kw),
    "prod": lambda lib, x, **kw: x.prod(**kw), "max": lambda lib, x, **kw: x.max(**kw),
    "min": lambda lib, x, **kw: lib.min(x, **kw), "amax": lambda lib, x, **kw: x.amax(**kw),
    "amin": lambda lib, x, **kw: lib.amin(x, **kw), "argmax": lambda lib, x, **kw: x.argmax(**kw),
    "argmin": lambda lib, x, **kw: lib.argmin(x, **kw), "var": lambda lib, x, **kw: x.var(**kw),
    "std": lambda lib, x, **kw: lib.std(x, **kw), "norm": lambda lib, x, **kw: x.norm(**kw),
    "logsumexp": lambda lib, x, **kw: x.logsumexp(**kw), "all": lambda lib, x, **kw: x.all(**kw),
    "any": lambda lib, x, **kw: lib.any(x, **kw), "median": lambda lib, x, **kw: x.median(**kw),
    "cumsum": lambda lib, x, **kw: x.cumsum(**kw), "cumprod": lambda lib, x, **kw: lib.cumprod(x, **kw),
    "count_nonzero": lambda lib, x, **kw: lib.count_nonzero(x, **kw),
}
SINGLE_DIM = {"prod", "max", "min", "argmax", "argmin", "median", "cumsum", "cumprod"}
NO_KEEPDIM = {"cumsum", "cumprod", "count_nonzero"}


DIMS = [0, 1, 2, -1, -3, 3, -4, (0, 2), (-1, 1), (0, 0), (1, 5)]
# every call form PyTorch accepts: tuples of dims only where the reduction takes several, keepdim where it has one
DIM_CASES = [(name, dim, keepdim) for name in sorted(REDUCTIONS) for dim in DIMS for keepdim in (False, True)
             if not (isinstance(dim, tuple) and name in SINGLE_DIM) and not (keepdim and name in NO_KEEPDIM)]


@pytest.mark.parametrize("name,dim,keepdim", DIM_CASES)
def test_dim_keepdim_and_errors(name, dim, keepdim):
    """Every reduction with positive, negative, out-of-range, repeated and multiple dims, with and without
    keepdim: same shapes, values and dtypes as PyTorch, or the same error and message."""
    kw = {"dim": dim} if name in NO_KEEPDIM else {"dim": dim, "keepdim": keepdim}
    assert_same(lambda lib: REDUCTIONS[name](lib, _x(lib), **kw))


@pytest.mark.parametrize("name", sorted(set(REDUCTIONS) - {"cumsum", "cumprod", "logsumexp"}))
def test_full_reduction(name):
    assert_same(lambda lib: REDUCTIONS[name](lib, _x(lib)))


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float64", "float16"])
def test_dtype_rules(name, dtype):
    """Sum of bool is int64, mean of int raises PyTorch's message, var of int raises ..."""
    kw = {"dim": 1} if name in ("cumsum", "cumprod", "logsumexp") else {}
    assert_same(lambda lib: REDUCTIONS[name](lib, _x(lib, dtype), **kw))


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "argmax", "argmin", "prod", "sum", "median",
                                  "norm", "var", "logsumexp", "cumsum", "all"])
@pytest.mark.parametrize("shape,dim", [((0,), None), ((0, 3), 0), ((0, 3), 1), ((), 0), ((), -1), ((), 1)])
def test_empty_and_zero_dim_inputs(name, shape, dim):
    def fn(lib):
        x = lib.zeros(shape)
        if dim is None:
            return REDUCTIONS[name](lib, x) if name not in ("logsumexp", "cumsum") else REDUCTIONS[name](lib, x, dim=0)
        return REDUCTIONS[name](lib, x, dim=dim)
    assert_same(fn)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([1.0, 2.0]).var(correction=2),
    lambda lib: lib.tensor([1.0, 2.0]).std(0, correction=3),
])
def test_degrees_of_freedom_warning(call):
    for lib in (gradiente, torch):
        with pytest.warns(UserWarning, match=r"\(\): degrees of freedom is <= 0"):
            call(lib)


def test_max_with_dim_returns_a_named_pair():
    x = gradiente.tensor([[1.0, 5.0], [7.0, 2.0]])
    result = x.max(1)
    values, indices = result
    assert result.values is values and result[1] is indices and len(result) == 2
    assert indices.tolist() == [1, 0] and indices.dtype is gradiente.int64
    assert isinstance(result, gradiente.return_types.max) and isinstance(result, tuple)
    assert repr(result) == repr(torch.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1)).replace("torch.", "gradiente.")
    assert type(x.min(0)).__name__ == "min" and type(x.median(0)).__module__ == "gradiente.return_types"


def test_prod_with_zeros_second_derivative():
    for values in ([0.5, 0.0, 2.0, -1.5], [0.0, 0.0, 3.0, 1.2], [1.1, -0.7, 2.0, 0.4]):
        x = gradiente.tensor(values, dtype=gradiente.float64, requires_grad=True)
        assert gradiente.autograd.gradgradcheck(lambda t: t.prod(), (x,))
        assert gradiente.autograd.gradgradcheck(lambda t: t.reshape(2, 2).prod(1), (x,))


def test_second_derivatives_of_reductions():
    x = gradiente.tensor([[0.3, -0.8, 1.7], [0.9, 0.2, -1.1]], dtype=gradiente.float64, requires_grad=True)
    for fn in (lambda t: t.var(1), lambda t: t.std(), lambda t: t.norm(), lambda t: t.norm(3, dim=0),
               lambda t: t.logsumexp(1), lambda t: t.cumsum(1) ** 2, lambda t: t.cumprod(1),
               lambda t: t.amax(1) * t.sum(), lambda t: t.max(0).values ** 2):
        assert gradiente.autograd.gradgradcheck(fn, (x,))


def test_logsumexp_is_stable():
    big = gradiente.tensor([1000.0, 1000.0, float("-inf")])
    assert abs(gradiente.logsumexp(big, 0).item() - (1000 + np.log(2))) < 1e-3
    assert gradiente.logsumexp(gradiente.full((2,), float("-inf")), 0).item() == float("-inf")
    assert gradiente.logsumexp(gradiente.tensor([float("inf"), 1.0]), 0).item() == float("inf")


def test_cumsum_float32_matches_torch_bit_for_bit():
    a = np.random.RandomState(0).randn(4, 1000).astype(np.float32)
    np.testing.assert_array_equal(gradiente.from_numpy(a).cumsum(1)._data, torch.from_numpy(a).cumsum(1).numpy())
    np.testing.assert_array_equal(gradiente.from_numpy(a[:, :60]).cumprod(1)._data,
                                  torch.from_numpy(a[:, :60]).cumprod(1).numpy())


def test_var_float32_matches_torch_bit_for_bit():
    a = np.random.RandomState(1).randn(3, 500).astype(np.float32) * 3 + 1
    for kw in ({}, {"dim": 1}, {"dim": 0, "correction": 0}):
        np.testing.assert_array_equal(gradiente.from_numpy(a).var(**kw)._data, torch.from_numpy(a).var(**kw).numpy())
        np.testing.assert_array_equal(gradiente.from_numpy(a).std(**kw)._data, torch.from_numpy(a).std(**kw).numpy())


def test_nan_propagates_like_torch():
    values = [1.0, float("nan"), 3.0, 0.5]
    for fn in (lambda lib, x: x.max(), lambda lib, x: x.max(0), lambda lib, x: x.argmax(), lambda lib, x: x.amin(),
               lambda lib, x: x.median(), lambda lib, x: x.median(0), lambda lib, x: x.logsumexp(0),
               lambda lib, x: x.norm(float("inf"))):
        assert_same(lambda lib, fn=fn: fn(lib, lib.tensor(values)))


def test_norm_rejects_unknown_orders_and_integers():
    assert_same(lambda lib: lib.norm(lib.ones(2, 2), "abc"))
    assert_same(lambda lib: lib.norm(lib.ones(2, 2, 2), "fro", dim=(0, -1, 1)))
    assert_same(lambda lib: lib.norm(lib.ones(2, 2, 2), "abc", dim=(0, -1, 1)))
    assert_same(lambda lib: lib.tensor([1, 2]).norm())



def test_nuclear_norm_matches_torch_with_its_graph():
    a = np.random.RandomState(3).standard_normal((2, 3, 4))
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.norm("nuc", dim=(1, 2), keepdim=True)
        y.sum().backward()
        results.append((type(y.grad_fn).__name__, tuple(y.shape), y.detach().numpy(), x.grad.numpy()))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-10)


@pytest.mark.parametrize("op", ["max", "min", "median"])
def test_changing_returned_indices_in_place_is_caught_at_backward(op):
    # The rule reads the indices: changed in place, they would send the gradient to the wrong element.
    messages = []
    for lib in (gradiente, torch):
        x = lib.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], requires_grad=True)
        values, indices = getattr(x, op)(1)
        indices.zero_()
        with pytest.raises(RuntimeError) as info:
            values.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


NAN = float("nan")
MEDIAN_INPUTS = [
    [[1.0, NAN, 3.0, 2.0], [NAN, NAN, 1.0, 5.0], [4.0, 2.0, 2.0, 9.0]],     # NaNs first, several, none
    [[NAN, NAN, NAN], [2.0, 1.0, 3.0]],                                      # a slice of NaNs only
    [[7.0], [NAN]],
]


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("values", MEDIAN_INPUTS)
def test_median_and_nanmedian_share_one_body_and_differ_only_on_nans(op, values):
    """One body serves both: median gives the first NaN of a slice holding one, nanmedian the median of the
    rest. Values, indices, node names and gradients against PyTorch, over all elements and along each dim."""
    results = []
    for lib in (torch, gradiente):
        row = []
        for dim in (None, 0, 1):
            x = lib.tensor(values, requires_grad=True)
            out = getattr(lib, op)(x) if dim is None else getattr(lib, op)(x, dim)
            value = out if dim is None else out.values
            value.backward(lib.ones_like(value))
            row.append((type(value.grad_fn).__name__, value.detach().numpy(),
                        None if dim is None else out.indices.numpy(), x.grad.numpy()))
        results.append(row)
    for theirs, ours in zip(*results):
        assert ours[0] == theirs[0]
        for t, o in zip(theirs[1:], ours[1:]):
            np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("call", [lambda lib, f: f(lib.tensor([], dtype=lib.long)),
                                  lambda lib, f: f(lib.tensor([3, 1, 2])),
                                  lambda lib, f: tuple(f(lib.tensor([[3, 1, 2], [0, 5, 5]]), 1))])
def test_median_and_nanmedian_of_integers_match_torch(op, call):
    results = [call(lib, getattr(lib, op)) for lib in (torch, gradiente)]
    flat = [[t.tolist() for t in (r if isinstance(r, tuple) else (r,))] for r in results]
    assert flat[1] == flat[0]


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("dim", [None, 0])
@pytest.mark.parametrize("dtype", ["bool", "complex64"])
def test_median_refuses_bool_and_complex_as_torch(op, dim, dtype):
    def call(lib):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        return getattr(lib, op)(x) if dim is None else getattr(lib, op)(x, dim)
    check_same_error(call)


# --- NaN-aware reductions and the log-sum-exp scan ------------------------------------------------------

def test_logcumsumexp_gradient_with_zero_and_negative_upstream():
    def run(lib):
        x = lib.tensor([[50.0, -80.0, 3.0, 88.0], [0.0, 0.0, 0.0, 0.0]], requires_grad=True)
        y = lib.logcumsumexp(x, 1)
        y.backward(lib.tensor([[1.0, 0.0, -2.0, 0.5], [0.0, -1.0, 0.0, 3.0]]))
        return y.detach().numpy(), x.grad.numpy()
    (gy, gdx), (ty, tdx) = run(gradiente), run(torch)
    np.testing.assert_allclose(gy, ty, rtol=1e-6)
    np.testing.assert_allclose(gdx, tdx, rtol=1e-5, atol=1e-6)
    assert np.isfinite(gdx).all()


def test_nan_gradient_of_nansum_and_nanmean_is_zero_where_nan():
    def run(lib):
        x = lib.tensor([[1.0, float("nan")], [2.0, 4.0]], requires_grad=True)
        (lib.nansum(x) + lib.nanmean(x, 0).sum()).backward()
        return x.grad.tolist()
    assert run(gradiente) == run(torch) == [[1.5, 0.0], [1.5, 2.0]]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nansum(lib.tensor([1, 2], dtype=lib.int32)),
    lambda lib: lib.nansum(lib.tensor([[1.0, float("nan")]]), dtype=lib.float64),
    lambda lib: lib.nanmean(lib.tensor([[float("nan"), float("nan")], [1.0, 2.0]]), 1),
    lambda lib: lib.logcumsumexp(lib.tensor([0.0, float("-inf"), 1000.0, float("inf"), 1.0]), 0),
], ids=lambda fn: "")
def test_values_and_dtypes_match_torch(fn):
    g, t = both(fn)
    same_tensor(g.detach(), t.detach())


def test_tensor_methods_exist_where_torch_has_them():
    for name in ["nansum", "nanmean", "logcumsumexp"]:
        assert hasattr(torch.Tensor, name) and hasattr(gradiente.Tensor, name), name


# --- std_mean, var_mean, aminmax, nanmedian -------------------------------------------------------------

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
def test_moments_and_nanmedian_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


@pytest.mark.parametrize("fn, name", [(lambda lib: lib.var_mean(lib.ones(2, 3), dim=0, correction=2), "var_mean"),
                                      (lambda lib: lib.std_mean(lib.ones(1)), "std_mean")])
def test_degrees_of_freedom_warning_names_the_function(fn, name):
    with pytest.warns(UserWarning, match=rf"^{name}\(\): degrees of freedom is <= 0"):
        fn(gradiente)


# --- trapezoid, cumulative_trapezoid, renorm ------------------------------------------------------------

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
def test_trapezoid_and_renorm_match_torch(fn):
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
def test_trapezoid_and_renorm_errors_match_torch(fn):
    check_same_error(fn)


def test_in_place_forms_record_torchs_nodes():
    """renorm_ on a non-leaf whose rows' norms lie above maxnorm (the values it met in the chain of
    test_ops_scattering.py's test of this name): the same node and the same gradient (rounding noise here)."""
    def chain(lib, y):
        y.add_(lib.tensor([[3.5], [2.5], [2.5]]))
        return [type(y.renorm_(2, 0, 1.0).grad_fn).__name__]
    check_in_place_chain(chain)


# --- PyTorch's error messages -------------------------------------------------------------------------------

ERRORS = [
    ("nansum_complex", lambda lib: lib.nansum(lib.tensor([1j]))),
    ("nanmean_int", lambda lib: lib.nanmean(lib.tensor([1, 2]))),
    ("nanmean_int_dtype", lambda lib: lib.nanmean(lib.zeros(2), dtype=lib.int64)),
    ("logcumsumexp_int", lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 0)),
    ("logcumsumexp_dim", lambda lib: lib.logcumsumexp(lib.zeros(2), 1)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.t().cumsum(0),
    lambda lib, x: x.t().cumprod(1),
    lambda lib, x: x[:, ::2].cumsum(1),
    lambda lib, x: x.t().sum(0),
], ids=["cumsum_transposed", "cumprod_transposed", "cumsum_strided", "sum_transposed"])
def test_result_strides_match_torch(fn):
    check_strides_match_torch(fn)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_moments_outputs_changed_in_place_as_torch(name):
    """var_mean's rule reads only the input (its outputs may then change in place); std_mean's reads std."""
    def run(lib):
        x = lib.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        spread, mean = getattr(lib, name)(x, 1)
        spread.mul_(2)
        mean.mul_(3)
        try:
            (spread * lib.tensor([1.0, 2.0]) + mean).sum().backward()
        except RuntimeError as e:
            return str(e)
        return x.grad, spread, mean
    ours, theirs = both(run)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        assert_same_tensors(ours, theirs)


@pytest.mark.parametrize("call", ["norm", "vector_norm", "vector_norm_1", "normalize", "norm_dim"])
def test_half_precision_norms_accumulate_in_float32(call):
    """‖[300, 1, 2]‖ in float16 is 300, not inf: the squares overflow float16 but PyTorch accumulates in float32."""
    def scenario(lib):
        x = lib.tensor([[300.0, 1.0, 2.0], [-7.5, 0.25, 1000.0]], dtype=lib.float16)
        result = {"norm": x.norm, "vector_norm": lambda: lib.linalg.vector_norm(x),
                  "vector_norm_1": lambda: lib.linalg.vector_norm(x, 1, dim=1),
                  "normalize": lambda: lib.nn.functional.normalize(x), "norm_dim": lambda: x.norm(dim=0)}[call]()
        return str(result.dtype).split(".")[-1], result.tolist()

    on_both(scenario)


@pytest.mark.parametrize("call", ["mean_of_nothing", "mean_over_empty_dim", "half_sum_overflow", "half_sum_dim"])
def test_reductions_warn_no_more_than_pytorch(call):
    """NumPy's RuntimeWarnings (a mean of nothing, a half-precision overflow) do not reach the user: PyTorch gives
    nan or inf silently."""
    def scenario(lib):
        run = {"mean_of_nothing": lambda: lib.tensor([]).mean(), "mean_over_empty_dim": lambda: lib.zeros(0, 3).mean(0),
               "half_sum_overflow": lambda: lib.tensor([60000.0, 60000.0], dtype=lib.float16).sum(),
               "half_sum_dim": lambda: lib.tensor([[60000.0], [60000.0]], dtype=lib.float16).sum(0)}[call]
        with warnings.catch_warnings(record=True) as caught:
            result = run()
        return str(result.tolist()), [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]

    on_both(scenario)


@pytest.mark.parametrize("call", [
    lambda x: x.sum(1), lambda x: x.mean(-2, keepdim=True), lambda x: x.prod(-1), lambda x: x.amax(0),
    lambda x: x.amin(0), lambda x: x.logsumexp(0), lambda x: x.std(1), lambda x: x.var(0, correction=0),
    lambda x: x.norm(p=1, dim=0), lambda x: x.nansum(-1), lambda x: x.median(-1).values,
    lambda x: x.max(1).values, lambda x: x.logcumsumexp(1), lambda x: x.cumsum(0), lambda x: x.std(1, keepdim=True),
], ids=["sum", "mean_keepdim", "prod", "amax", "amin", "logsumexp", "std", "var", "norm_p1", "nansum", "median",
        "max_dim", "logcumsumexp", "cumsum", "std_keepdim"])
def test_reductions_of_a_transposed_input_are_contiguous(call):
    """Issue 13, found by tools/random_programs.py: NumPy's reductions keep a transposed input's layout, PyTorch
    writes each reduction's result afresh in C order; a later ``view`` depends on the difference."""
    values = np.random.RandomState(0).standard_normal((4, 3, 2))
    ours, theirs = (call(lib.from_numpy(values).permute(2, 1, 0)) for lib in (gradiente, torch))
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_gradient_of_the_mean_alone_ignores_a_nan_spread(name):
    """Issue 13, found by tools/random_programs.py: with one value per reduction the spread is nan (n - 1 = 0);
    the mean's gradient was nan too, because the unused output got zeros and 0·nan is nan. PyTorch gives an
    output without a gradient no term."""
    def scenario(lib):
        x = lib.tensor([0.7, 0.2], dtype=lib.float64, requires_grad=True)
        spread, mean = getattr(lib, name)(x[:1], 0)
        (g_mean,) = lib.autograd.grad(mean, x, retain_graph=True)
        (g_spread,) = lib.autograd.grad(spread, x)
        return g_mean.tolist(), g_spread.isnan().tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert scenario(gradiente) == scenario(torch)


@pytest.mark.parametrize("size", [1, 5, 8, 13, 40, 640, 2000, 4099, 32768])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_whole_sums_and_means_are_torchs_to_the_last_bit(size, dtype):
    """A whole-tensor sum or mean (a printed loss.item()) adds in PyTorch's order (core/summation.py), and so does
    the gradient of a parameter broadcast over everything (a scalar bias), up to PyTorch's grain size."""
    def run(lib):
        lib.manual_seed(size)
        x = lib.randn(size, dtype=getattr(lib, dtype)) * 3
        w = lib.tensor(0.5, dtype=getattr(lib, dtype), requires_grad=True)
        ((x * w) * 2 + w).sum().backward()
        return x.sum().item(), x.mean().item(), x.reshape(-1, 1).sum().item(), w.grad.item()
    assert run(gradiente) == run(torch)
