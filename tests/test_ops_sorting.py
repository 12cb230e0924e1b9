"""Sorting and selection, ``ops/sorting.py``, from the op table: float64 gradcheck on contiguous and strided inputs,
differential tests against PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names) in float32
and float64, second derivatives; then indices, tie-breaking and NaN order, unique, searchsorted/bucketize, quantile
and nanquantile (values, all-NaN slices, the gradient of q) and error messages, each against PyTorch."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, assert_same_tensors, both_quietly, check_same_error, check_strides_match_torch, spec_tests

import gradiente

torch = pytest.importorskip("torch")

NAN = float("nan")
SHAPES = [((5,),), ((3, 4),), ((2, 3, 4),)]
WITH_SCALAR = [((),)] + SHAPES
MATRIX = [((3, 4),), ((2, 5, 3),)]
QUANTILE_SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),)]
QUANTILE_MATRIX = [((3, 4),), ((2, 3, 4),)]
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def distinct(rng, shapes):
    """Distinct values, well apart, so that no two elements tie (the gradient of a selection is exact)."""
    n = int(np.prod(shapes[0]))
    return [(rng.permutation(n) * 0.37 - n / 5).reshape(shapes[0])]


def with_ties(rng, shapes):
    """Values drawn from a few levels, so that many elements tie."""
    return [rng.choice([-1.0, 0.5, 2.0], size=shapes[0]).astype(np.float64)]


def short_rows_with_ties(rng, shapes):
    """Few levels in rows short enough (<= 16) that PyTorch's mode kernel breaks ties deterministically."""
    return [rng.randint(0, 3, size=shapes[0]).astype(np.float64) - 0.5]


def with_nans(rng, shapes):
    """Distinct values with NaNs in the first row (an all-NaN row gives NaN, which finite differences cannot
    check: test_all_nan_slices_match_torch covers it)."""
    (a,) = distinct(rng, shapes)
    a[..., 0, 1] = np.nan
    a[..., 0, -1] = np.nan
    return [a]


def quantile_and_q(rng, shapes):
    (a,) = distinct(rng, shapes[:1])
    return [a, np.array([0.1, 0.55, 0.9])]


SPECS = [
    # sort, msort: every dim, both directions, the stable overload (SortBackward1)
    OpSpec("sort", lambda lib, x: lib.sort(x).values, WITH_SCALAR, make_inputs=distinct),
    OpSpec("sort_dim0", lambda lib, x: x.sort(0).values, MATRIX, make_inputs=distinct),
    OpSpec("sort_descending", lambda lib, x: lib.sort(x, 1, descending=True).values, MATRIX, make_inputs=distinct),
    OpSpec("sort_stable", lambda lib, x: x.sort(stable=True, dim=-2).values, MATRIX, make_inputs=distinct),
    OpSpec("sort_stable_false", lambda lib, x: lib.sort(x, stable=False).values, [((3, 4),)], make_inputs=distinct),
    OpSpec("sort_ties", lambda lib, x: x.sort(dim=1, stable=True).values, [((4, 6),)], make_inputs=with_ties,
           gradcheck=False),
    OpSpec("msort", lambda lib, x: lib.msort(x), [((),), ((5,),), ((4, 3),)], make_inputs=distinct),
    OpSpec("msort_method", lambda lib, x: x.msort(), [((3, 2, 2),)], make_inputs=distinct),
    # topk
    OpSpec("topk", lambda lib, x: lib.topk(x, 2).values, SHAPES, make_inputs=distinct),
    OpSpec("topk_smallest", lambda lib, x: x.topk(3, dim=0, largest=False).values, [((4, 3),), ((5, 2, 2),)],
           make_inputs=distinct),
    OpSpec("topk_all", lambda lib, x: x.topk(4, 1).values, [((3, 4),)], make_inputs=distinct),
    OpSpec("topk_scalar", lambda lib, x: lib.topk(x, 1).values, [((),)], make_inputs=distinct),
    # kthvalue
    OpSpec("kthvalue", lambda lib, x: lib.kthvalue(x, 2).values, SHAPES, make_inputs=distinct),
    OpSpec("kthvalue_keepdim", lambda lib, x: x.kthvalue(3, 0, keepdim=True).values, [((4, 3),), ((3, 2, 2),)],
           make_inputs=distinct),
    OpSpec("kthvalue_scalar", lambda lib, x: x.kthvalue(1).values, [((),)], make_inputs=distinct),
    # mode: with distinct values the mode is the smallest; with ties, PyTorch's choice on short rows
    OpSpec("mode", lambda lib, x: lib.mode(x).values, WITH_SCALAR, make_inputs=distinct),
    OpSpec("mode_keepdim", lambda lib, x: x.mode(0, keepdim=True).values, MATRIX, make_inputs=distinct),
    OpSpec("mode_ties", lambda lib, x: x.mode(1).values, [((6, 9),), ((3, 16),)], make_inputs=short_rows_with_ties,
           gradcheck=False),
    # cummax, cummin: the gradient sums over the outputs that share a running extreme
    OpSpec("cummax", lambda lib, x: lib.cummax(x, 0).values, WITH_SCALAR, make_inputs=distinct),
    OpSpec("cummax_dim", lambda lib, x: x.cummax(-1).values, MATRIX, make_inputs=distinct),
    OpSpec("cummin", lambda lib, x: lib.cummin(x, 1).values, MATRIX, make_inputs=distinct),
    OpSpec("cummin_scalar", lambda lib, x: x.cummin(0).values, [((),)], make_inputs=distinct),
    OpSpec("cummax_ties", lambda lib, x: x.cummax(1).values, [((4, 7),)], make_inputs=with_ties, gradcheck=False),
    OpSpec("cummin_ties", lambda lib, x: lib.cummin(x, 0).values, [((7, 4),)], make_inputs=with_ties,
           gradcheck=False),
    # integer results: no gradient
    OpSpec("argsort", lambda lib, x: lib.argsort(x, 1), MATRIX, make_inputs=distinct, gradcheck=False,
           torch_grad=False),
    OpSpec("argsort_stable_ties", lambda lib, x: x.argsort(dim=0, descending=True, stable=True), [((6, 3),)],
           make_inputs=with_ties, gradcheck=False, torch_grad=False),
    OpSpec("sort_indices", lambda lib, x: x.sort(dim=0, descending=True, stable=True).indices, [((6, 3),)],
           make_inputs=with_ties, gradcheck=False, torch_grad=False),
    OpSpec("topk_indices", lambda lib, x: x.topk(2).indices, MATRIX, make_inputs=distinct, gradcheck=False,
           torch_grad=False),
    OpSpec("cummax_indices", lambda lib, x: x.cummax(1).indices, [((4, 7),)], make_inputs=with_ties,
           gradcheck=False, torch_grad=False),
    # quantiles, every interpolation
    *[OpSpec(f"quantile_{m}", lambda lib, x, m=m: lib.quantile(x, 0.3, dim=1, interpolation=m), QUANTILE_MATRIX,
             make_inputs=distinct) for m in INTERPOLATIONS],
    *[OpSpec(f"quantile_q_{m}", lambda lib, x, q, m=m: x.quantile(q, dim=0, keepdim=True, interpolation=m),
             [((4, 3), (3,))], make_inputs=quantile_and_q) for m in INTERPOLATIONS],
    OpSpec("quantile_all", lambda lib, x: lib.quantile(x, 0.7), QUANTILE_SHAPES, make_inputs=distinct),
    OpSpec("quantile_all_keepdim", lambda lib, x: x.quantile(0.25, keepdim=True), QUANTILE_MATRIX,
           make_inputs=distinct),
    *[OpSpec(f"nanquantile_{m}", lambda lib, x, m=m: lib.nanquantile(x, 0.4, dim=-1, interpolation=m),
             [((3, 4),), ((2, 2, 5),)], make_inputs=with_nans) for m in INTERPOLATIONS],
    OpSpec("nanquantile_all", lambda lib, x: x.nanquantile(0.6), [((2, 4),)], make_inputs=with_nans),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- helpers -----------------------------------------------------------------------------------------------

def _arrays(out):
    """An op's result as a list of (dtype name, shape, array): one per tensor of a tuple."""
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    return [(str(o.dtype).split(".")[-1], tuple(o.shape), o.detach().numpy()) for o in outs]


def assert_same(fn):
    """``fn(lib)`` gives the same tensors (dtype, shape, values, NaN in the same places) in both libraries."""
    ours, theirs = _arrays(fn(gradiente)), _arrays(fn(torch))
    assert len(ours) == len(theirs)
    for (gd, gs, ga), (td, ts, ta) in zip(ours, theirs):
        assert (gd, gs) == (td, ts)
        np.testing.assert_array_equal(ga, ta)


def _tensor(lib, values, dtype="float32"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


TIES_AND_NANS = [[2.0, NAN, 1.0, 2.0, NAN, -np.inf, np.inf, 1.0, 0.0, -0.0],
                 [NAN, 3.0, 3.0, 1.0, 3.0, 1.0, NAN, 0.0, 0.0, 2.0]]


# --- sort, argsort: stable order, NaN as the largest, every dtype ----------------------------------------------

@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stable_sort_indices_with_ties_and_nans(descending, dim):
    assert_same(lambda lib: lib.sort(_tensor(lib, TIES_AND_NANS), dim=dim, descending=descending, stable=True))
    assert_same(lambda lib: lib.argsort(_tensor(lib, TIES_AND_NANS), dim=dim, descending=descending, stable=True))


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_of_every_dtype(dtype, descending):
    values = np.random.RandomState(3).randint(0, 4, size=(3, 12)).tolist()
    assert_same(lambda lib: _tensor(lib, values, dtype).sort(descending=descending, stable=True))
    assert_same(lambda lib: _tensor(lib, values, dtype).argsort(dim=1, descending=descending, stable=True))


def test_default_sort_of_distinct_values_matches_torch():
    a = np.random.RandomState(0).permutation(600).reshape(3, 200).astype(np.float32)
    for descending in (False, True):
        assert_same(lambda lib, d=descending: lib.sort(lib.from_numpy(a.copy()), descending=d))
        assert_same(lambda lib, d=descending: lib.argsort(lib.from_numpy(a.copy()), 0, d))


def test_sort_of_zero_dim_and_empty_tensors():
    assert_same(lambda lib: lib.sort(lib.tensor(1.5)))
    assert_same(lambda lib: lib.sort(lib.zeros(2, 0)))
    assert_same(lambda lib: lib.sort(lib.zeros(0, 3), 0, True))
    assert_same(lambda lib: lib.argsort(lib.tensor(2)))
    assert_same(lambda lib: lib.msort(lib.tensor([[3.0, 1.0], [1.0, 2.0]])))


def test_sort_returns_a_named_pair_printed_as_torch():
    x = [[3.0, 1.0, 2.0]]
    result = gradiente.sort(gradiente.tensor(x))
    values, indices = result
    assert result.values is values and result[1] is indices
    assert isinstance(result, gradiente.return_types.sort)
    for name, fn in [("sort", lambda lib: lib.sort(lib.tensor(x))), ("topk", lambda lib: lib.topk(lib.tensor(x), 2)),
                     ("kthvalue", lambda lib: lib.kthvalue(lib.tensor(x), 2)),
                     ("mode", lambda lib: lib.mode(lib.tensor(x))),
                     ("cummax", lambda lib: lib.cummax(lib.tensor(x), 1)),
                     ("cummin", lambda lib: lib.cummin(lib.tensor(x), 1))]:
        ours, theirs = fn(gradiente), fn(torch)
        assert type(ours).__name__ == name and repr(ours) == repr(theirs).replace("torch.", "gradiente.")


# --- grad_fn names, integer outputs, saved indices -------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.sort(x), lambda lib, x: lib.sort(x, stable=True), lambda lib, x: lib.sort(x, stable=False),
    lambda lib, x: x.sort(stable=None), lambda lib, x: lib.msort(x), lambda lib, x: x.topk(1),
    lambda lib, x: x.kthvalue(1), lambda lib, x: lib.mode(x), lambda lib, x: x.cummax(0), lambda lib, x: x.cummin(0),
])
def test_node_names_and_indices_without_grad(call):
    names = []
    for lib in (gradiente, torch):
        result = call(lib, lib.tensor([2.0, 1.0, 3.0], requires_grad=True))
        values = result if isinstance(result, lib.Tensor) else result.values
        names.append(type(values.grad_fn).__name__)
        assert isinstance(result, lib.Tensor) or not result.indices.requires_grad
    assert names[0] == names[1]
    assert not gradiente.argsort(gradiente.tensor([2.0, 1.0], requires_grad=True)).requires_grad


def test_indices_changed_in_place_before_backward_raise_as_in_torch():
    def fn(lib):
        x = lib.tensor([2.0, 1.0, 3.0], requires_grad=True)
        values, indices = lib.sort(x)
        indices += 1
        values.sum().backward()
    check_same_error(fn)


def test_cummax_gradient_sums_over_shared_maxima():
    """Each running maximum's gradient goes to the element that holds it: an early maximum gets many."""
    grads = []
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, 3.0, 2.0, 0.5, 4.0, 4.0], requires_grad=True)
        lib.cummax(x, 0).values.backward(lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [1.0, 9.0, 0.0, 0.0, 5.0, 6.0]


def test_second_derivative_flows_through_the_selection():
    x = gradiente.tensor([[0.3, -0.8, 1.7], [0.9, 0.2, -1.1]], dtype=gradiente.float64, requires_grad=True)
    for fn in (lambda t: t.sort(1).values ** 2, lambda t: t.topk(2, 0).values ** 3,
               lambda t: t.kthvalue(2, 1).values * t.sum(), lambda t: t.mode(0).values ** 2,
               lambda t: t.cummax(1).values ** 2, lambda t: t.cummin(0).values * t):
        assert gradiente.autograd.gradgradcheck(fn, (x,))


# --- topk, kthvalue, mode: values, indices where PyTorch's are determined ----------------------------------------

@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [0, 1, 3, 10])
def test_topk_indices_of_distinct_values(k, largest):
    a = np.random.RandomState(k).permutation(30).reshape(3, 10).astype(np.float64)
    assert_same(lambda lib: lib.topk(lib.from_numpy(a.copy()), k, largest=largest))
    assert_same(lambda lib: lib.topk(lib.from_numpy(a.T.copy()), min(k, 3), 0, largest))


def test_topk_with_nans_and_ties_gives_torch_values():
    for largest in (True, False):
        for k in (1, 3, 6):
            g = gradiente.topk(_tensor(gradiente, TIES_AND_NANS), k, largest=largest)
            t = torch.topk(_tensor(torch, TIES_AND_NANS), k, largest=largest)
            np.testing.assert_array_equal(g.values.numpy(), t.values.numpy())
    assert_same(lambda lib: lib.topk(lib.tensor([1.0, NAN, 3.0]), 2))


def test_topk_unsorted_has_torch_elements():
    a = np.random.RandomState(5).permutation(40).reshape(4, 10).astype(np.float32)
    for largest in (True, False):
        g = gradiente.topk(gradiente.from_numpy(a.copy()), 4, largest=largest, sorted=False)
        t = torch.topk(torch.from_numpy(a.copy()), 4, largest=largest, sorted=False)
        np.testing.assert_array_equal(np.sort(g.values.numpy()), np.sort(t.values.numpy()))
        np.testing.assert_array_equal(np.sort(g.indices.numpy()), np.sort(t.indices.numpy()))


def test_topk_and_kthvalue_of_zero_dim_and_empty_tensors():
    assert_same(lambda lib: lib.topk(lib.tensor(2.0), 0))
    assert_same(lambda lib: lib.topk(lib.tensor(2.0), 1))
    assert_same(lambda lib: lib.topk(lib.zeros(2, 3), 0))
    assert_same(lambda lib: lib.topk(lib.zeros(2, 0), 0))
    assert_same(lambda lib: lib.kthvalue(lib.tensor(2.0), 1, keepdim=True))
    assert_same(lambda lib: lib.kthvalue(lib.zeros(0, 3), 2))
    assert_same(lambda lib: lib.mode(lib.zeros(2, 0), 0))
    assert_same(lambda lib: lib.mode(lib.tensor(2.0)))


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_of_distinct_values(k, keepdim):
    a = np.random.RandomState(k).permutation(30).reshape(5, 6).astype(np.float64)
    assert_same(lambda lib: lib.kthvalue(lib.from_numpy(a.copy()), k, keepdim=keepdim))
    assert_same(lambda lib: lib.kthvalue(lib.from_numpy(a.copy()), k, 0, keepdim))


def test_kthvalue_counts_nan_as_the_largest():
    for k in range(1, 11):
        g = gradiente.kthvalue(_tensor(gradiente, TIES_AND_NANS), k)
        t = torch.kthvalue(_tensor(torch, TIES_AND_NANS), k)
        np.testing.assert_array_equal(g.values.numpy(), t.values.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "bool"])
def test_mode_on_short_rows_matches_torch(dtype):
    """The smallest of the most frequent values, at its last occurrence."""
    rng = np.random.RandomState(7)
    for n in (1, 2, 5, 9, 16):
        values = rng.randint(0, 3, size=(6, n)).tolist()
        assert_same(lambda lib, v=values: lib.mode(_tensor(lib, v, dtype)))
        assert_same(lambda lib, v=values: lib.mode(_tensor(lib, v, dtype).T, 0, keepdim=True))


# --- cummax, cummin -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cummax_cummin_indices_with_ties_and_nans(name, dim):
    assert_same(lambda lib: getattr(lib, name)(_tensor(lib, TIES_AND_NANS, "float64"), dim))


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
def test_cummax_cummin_of_every_dtype(name, dtype):
    values = np.random.RandomState(2).randint(0, 3, size=(3, 8)).tolist()
    assert_same(lambda lib: getattr(_tensor(lib, values, dtype), name)(1))


def test_cummax_of_zero_dim_and_empty_tensors():
    assert_same(lambda lib: lib.cummax(lib.tensor(2.0), 0))
    assert_same(lambda lib: lib.cummin(lib.zeros(2, 0), 1))
    assert_same(lambda lib: lib.cummin(lib.zeros(0, 3), 1))


# --- unique, unique_consecutive ---------------------------------------------------------------------------------

FLAGS = [(False, False), (True, False), (False, True), (True, True)]
INTS = np.random.RandomState(4).randint(0, 4, size=(5, 3)).tolist()


@pytest.mark.parametrize("inverse,counts", FLAGS)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("sort", [True, False])
def test_unique_matches_torch(inverse, counts, dim, sort):
    assert_same(lambda lib: lib.unique(lib.tensor(INTS), sort, inverse, counts, dim))
    assert_same(lambda lib: lib.tensor(INTS).float().unique(sorted=sort, return_inverse=inverse,
                                                             return_counts=counts, dim=dim))


@pytest.mark.parametrize("inverse,counts", FLAGS)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_unique_consecutive_matches_torch(inverse, counts, dim):
    rows = [[1, 1, 2], [1, 1, 2], [0, 1, 2], [0, 1, 2], [1, 1, 2], [3, 3, 3]]
    # By keyword: PyTorch's unique_consecutive misreads return_inverse and return_counts given by position.
    assert_same(lambda lib: lib.unique_consecutive(lib.tensor(rows), return_inverse=inverse, return_counts=counts,
                                                   dim=dim))
    assert_same(lambda lib: lib.tensor(rows).T.unique_consecutive(return_inverse=inverse, return_counts=counts,
                                                                    dim=dim))


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([0.0, -0.0, NAN, 1.0, NAN, NAN, 1.0, -np.inf]),    # NaNs stay distinct; 0 == -0
    lambda lib: lib.tensor(3.0),
    lambda lib: lib.zeros(0, 3),
    lambda lib: lib.zeros(0, 0),
    lambda lib: lib.tensor([True, False, False, True]),
    lambda lib: lib.tensor([3, 200, 3], dtype=lib.uint8),
    lambda lib: lib.tensor([1.0, 1.0, 2.0], dtype=lib.float16),
])
def test_unique_edge_inputs(name, make):
    assert_same(lambda lib: getattr(lib, name)(make(lib), return_inverse=True, return_counts=True))


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_unique_by_dim_of_empty_slices(name):
    assert_same(lambda lib: getattr(lib, name)(lib.zeros(0, 3), dim=0, return_inverse=True, return_counts=True))
    assert_same(lambda lib: getattr(lib, name)(lib.zeros(2, 0), dim=1, return_inverse=True, return_counts=True))


@pytest.mark.parametrize("call,node", [
    (lambda lib, x: lib.unique(x), "Unique2Backward0"),
    (lambda lib, x: x.unique(sorted=False, return_inverse=True)[0], "Unique2Backward0"),
    (lambda lib, x: lib.unique(x, dim=0), "UniqueDimBackward0"),
    (lambda lib, x: lib.unique_consecutive(x), "UniqueConsecutiveBackward0"),
    (lambda lib, x: x.unique_consecutive(dim=1), "UniqueConsecutiveBackward0"),
])
def test_unique_has_no_derivative_as_in_torch(call, node):
    def backward(lib):
        out = call(lib, lib.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True))
        assert type(out.grad_fn).__name__ == node
        out.sum().backward()
    check_same_error(backward)
    inverse = gradiente.unique(gradiente.tensor([1.0, 2.0], requires_grad=True), return_inverse=True)[1]
    assert not inverse.requires_grad


# --- searchsorted, bucketize ------------------------------------------------------------------------------------

SEQUENCE = [1.0, 2.0, 2.0, 3.0, 5.0, 5.0, 5.0, 8.0]
PROBES = [[0.0, 1.0, 2.0, 2.5, 5.0], [8.0, 9.0, NAN, -np.inf, np.inf]]


@pytest.mark.parametrize("kw", [{}, {"right": True}, {"side": "left"}, {"side": "right"},
                                {"side": "right", "right": True}, {"out_int32": True},
                                {"out_int32": True, "side": "right"}])
def test_searchsorted_matches_torch(kw):
    assert_same(lambda lib: lib.searchsorted(lib.tensor(SEQUENCE), lib.tensor(PROBES), **kw))
    assert_same(lambda lib: lib.searchsorted(lib.tensor(SEQUENCE), 5.0, **kw))
    assert_same(lambda lib: lib.searchsorted(lib.tensor(SEQUENCE), lib.tensor(2), **kw))
    rows = [[1.0, 3.0, 3.0, 7.0], [-2.0, 0.0, 0.0, 0.0]]
    assert_same(lambda lib: lib.searchsorted(lib.tensor(rows), lib.tensor([[3.0, 0.0, 8.0], [0.0, -5.0, 1.0]]), **kw))
    assert_same(lambda lib: lib.searchsorted(lib.tensor(SEQUENCE), lib.zeros(0, 2), **kw))
    assert_same(lambda lib: lib.searchsorted(lib.zeros(0), lib.tensor([1.0]), **kw))


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_matches_torch(right):
    for out_int32 in (False, True):
        kw = {"right": right, "out_int32": out_int32}
        assert_same(lambda lib, kw=kw: lib.bucketize(lib.tensor(PROBES), lib.tensor(SEQUENCE), **kw))
        assert_same(lambda lib, kw=kw: lib.bucketize(2.0, lib.tensor(SEQUENCE), **kw))
        assert_same(lambda lib, kw=kw: lib.bucketize(lib.tensor([[1, 5], [9, 2]]), lib.tensor(SEQUENCE), **kw))


def test_searchsorted_with_a_sorter():
    unsorted = [[3.0, 1.0, 2.0, 2.0], [0.0, 5.0, 4.0, -1.0]]
    for right in (False, True):
        assert_same(lambda lib, r=right: lib.searchsorted(
            lib.tensor(unsorted[0]), lib.tensor([2.0, 2.5, 0.0, 9.0]), right=r,
            sorter=lib.argsort(lib.tensor(unsorted[0]), stable=True)))
        assert_same(lambda lib, r=right: lib.searchsorted(
            lib.tensor(unsorted), lib.tensor([[2.0], [4.5]]), right=r, sorter=lib.tensor(unsorted).argsort()))


def test_searchsorted_on_unsorted_and_nan_sequences_bisects_as_torch():
    """Undefined inputs, but PyTorch's answer is its bisection's: the same halving gives the same answer."""
    rng = np.random.RandomState(0)
    for n in range(12):
        seq = rng.randint(0, 6, size=n).astype(np.float64)
        if n > 3:
            seq[rng.randint(n)] = np.nan
        for right in (False, True):
            assert_same(lambda lib, s=seq, r=right: lib.searchsorted(lib.from_numpy(s.copy()), lib.tensor(PROBES[1]),
                                                                     right=r))


@pytest.mark.parametrize("seq_dtype,value_dtype", [("int64", "float32"), ("float32", "float64"), ("uint8", "int8"),
                                                    ("int32", "int64"), ("float16", "float32"), ("bool", "float32")])
def test_searchsorted_compares_in_the_promoted_dtype(seq_dtype, value_dtype):
    big = 2 ** 24 + 1                        # not a float32: equal to 2**24 once promoted to float32
    seqs = {"uint8": [1, 200], "bool": [False, True], "float16": [0.5, 1.0]}
    values = {"int8": [-1, 1, 100]}
    seq, probes = seqs.get(seq_dtype, [1, 2, big]), values.get(value_dtype, [0.0, 1.5, 2 ** 24])
    for right in (False, True):
        assert_same(lambda lib, r=right: lib.searchsorted(_tensor(lib, seq, seq_dtype),
                                                          _tensor(lib, probes, value_dtype), right=r))
    assert_same(lambda lib: lib.searchsorted(_tensor(lib, seq, seq_dtype), 1.5))


# --- methods, errors --------------------------------------------------------------------------------------------

NAMES = ["sort", "argsort", "msort", "topk", "kthvalue", "mode", "cummax", "cummin", "unique", "unique_consecutive",
         "searchsorted", "bucketize"]


@pytest.mark.parametrize("name", NAMES)
def test_functions_and_methods_as_in_torch(name):
    assert callable(getattr(gradiente, name))
    assert hasattr(gradiente.Tensor, name) == hasattr(torch.Tensor, name)


X = [[3.0, 1.0, 2.0], [5.0, 4.0, 6.0]]
SORTED = [1.0, 2.0, 3.0]


@pytest.mark.parametrize("call", [
    # dims out of range
    lambda lib: lib.sort(lib.tensor(X), 2), lambda lib: lib.argsort(lib.tensor(X), -3),
    lambda lib: lib.sort(lib.tensor(1.0), 1), lambda lib: lib.topk(lib.tensor(X), 1, 2),
    lambda lib: lib.kthvalue(lib.tensor(X), 1, 3), lambda lib: lib.mode(lib.tensor(X), -3),
    lambda lib: lib.cummax(lib.tensor(X), 2), lambda lib: lib.cummin(lib.tensor(1.0), 1),
    lambda lib: lib.cummax(lib.tensor(1.0), -2),
    lambda lib: lib.unique(lib.tensor(X), dim=2), lambda lib: lib.unique_consecutive(lib.tensor(X), dim=-3),
    lambda lib: lib.topk(lib.zeros(3), 5, dim=2),
    # k out of range
    lambda lib: lib.topk(lib.tensor(X), 4), lambda lib: lib.topk(lib.tensor(X), -1),
    lambda lib: lib.topk(lib.tensor(1.0), 2), lambda lib: lib.topk(lib.tensor(X), 3, 0),
    lambda lib: lib.kthvalue(lib.tensor(X), 0), lambda lib: lib.kthvalue(lib.tensor(X), 4),
    lambda lib: lib.kthvalue(lib.tensor(X), -1), lambda lib: lib.kthvalue(lib.tensor(1.0), 2),
    lambda lib: lib.kthvalue(lib.zeros(0, 3), 4),
    # empty reductions
    lambda lib: lib.kthvalue(lib.zeros(0), 1), lambda lib: lib.kthvalue(lib.zeros(2, 0), 0),
    lambda lib: lib.mode(lib.zeros(0)), lambda lib: lib.mode(lib.zeros(2, 0), 1),
    # dtypes
    lambda lib: lib.sort(lib.tensor([1j])), lambda lib: lib.argsort(lib.tensor([1j]), stable=True),
    lambda lib: lib.msort(lib.tensor([1j])), lambda lib: lib.topk(lib.tensor([1j]), 1),
    lambda lib: lib.topk(lib.tensor([True, False]), 1), lambda lib: lib.kthvalue(lib.tensor([True]), 1),
    lambda lib: lib.kthvalue(lib.tensor([1j], dtype=lib.complex128), 1), lambda lib: lib.mode(lib.tensor([1j])),
    lambda lib: lib.cummax(lib.tensor([1j]), 0), lambda lib: lib.cummin(lib.tensor([1j]), 0),
    lambda lib: lib.unique(lib.tensor([1j])), lambda lib: lib.unique(lib.tensor([[1j]]), dim=0),
    lambda lib: lib.unique_consecutive(lib.tensor([1j])),
    lambda lib: lib.searchsorted(lib.tensor([True]), lib.tensor([True])),
    lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1j])),
    # unique by dim
    lambda lib: lib.unique(lib.tensor(1.0), dim=0), lambda lib: lib.unique(lib.tensor(1.0), dim=-1),
    lambda lib: lib.unique_consecutive(lib.tensor(1.0), dim=1), lambda lib: lib.unique(lib.zeros(0, 3), dim=1),
    lambda lib: lib.unique(lib.zeros(0, 0), dim=1), lambda lib: lib.unique_consecutive(lib.zeros(2, 0), dim=0),
    lambda lib: lib.unique_consecutive(lib.zeros(0, 2, 0), dim=0),
    # searchsorted, bucketize arguments
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), side="middle"),
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), side="left", right=True),
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), sorter=lib.tensor([0, 1])),
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), sorter=lib.tensor([0.0, 1.0, 2.0])),
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), sorter=lib.tensor([0, 1, 2],
                                                                                          dtype=lib.int32)),
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), sorter=lib.tensor([0, 1, 3])),
    lambda lib: lib.searchsorted(lib.tensor(SORTED), lib.tensor([1.0]), sorter=lib.tensor([0, -1, 2])),
    lambda lib: lib.searchsorted(lib.tensor(1.0), lib.tensor([1.0])),
    lambda lib: lib.searchsorted(lib.tensor(1.0), lib.tensor([1.0]), sorter=lib.tensor([0, 1])),
    lambda lib: lib.searchsorted(lib.tensor(X), lib.tensor(1.0)), lambda lib: lib.searchsorted(lib.tensor(X), 1.0),
    lambda lib: lib.searchsorted(lib.tensor(X), lib.tensor([[1.0], [2.0], [3.0]])),
    lambda lib: lib.searchsorted(lib.tensor(X), lib.tensor([1.0, 2.0])),
    lambda lib: lib.searchsorted(lib.zeros(2, 2), lib.zeros(3, 1), sorter=lib.tensor([[5, 0], [0, 1]])),
    lambda lib: lib.bucketize(lib.tensor([1.0]), lib.tensor(X)),
    lambda lib: lib.bucketize(1.0, lib.tensor(1.0)),
])
def test_errors_match_torch(call):
    check_same_error(call)


# --- quantile, nanquantile ----------------------------------------------------------------------------------

QUANTILE_INPUT = [[1.0, float("nan"), 3.0, 2.0], [4.0, 0.0, -1.0, 5.0]]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.quantile(lib.tensor(QUANTILE_INPUT), 0.5),
    lambda lib: lib.nanquantile(lib.tensor(QUANTILE_INPUT), 0.5),
    lambda lib: lib.quantile(lib.tensor(QUANTILE_INPUT), 0.5, dim=1),
    lambda lib: lib.nanquantile(lib.tensor(QUANTILE_INPUT), lib.tensor([0.25, 0.5]), dim=1, keepdim=True),
    lambda lib: lib.nanquantile(lib.full((3,), float("nan")), 0.5),
    lambda lib: lib.quantile(lib.tensor(QUANTILE_INPUT), lib.tensor(0.5)),
    lambda lib: lib.quantile(lib.arange(10.0), lib.tensor([0.0, 0.33, 0.5, 0.77, 1.0]), interpolation="nearest"),
    lambda lib: lib.quantile(lib.arange(10.0), lib.tensor([0.0, 0.33, 0.5, 0.77, 1.0]), interpolation="midpoint"),
    lambda lib: lib.quantile(lib.arange(4.0), lib.tensor([0.5, 1 / 6, 0.5 / 3]), interpolation="nearest"),
    lambda lib: lib.quantile(lib.arange(24.0).view(2, 3, 4), lib.tensor([0.2, 0.8]), dim=1, keepdim=True),
], ids=lambda fn: "")
def test_quantiles_match_torch(fn):
    assert_same_tensors(*both_quietly(fn))


def test_all_nan_slices_match_torch():
    """A slice of NaNs only: NaN, and the gradient where PyTorch puts it (nanmedian's index aside, see
    test_nanmedian_ties_pick_torchs_index)."""
    a = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [4.0, 0.0, -1.0, 5.0]])
    for fn in (lambda lib, x: lib.nanquantile(x, 0.4, dim=1), lambda lib, x: lib.nanquantile(x, lib.tensor(
            [0.3, 0.8], dtype=lib.float64), dim=1, interpolation="midpoint"), lambda lib, x: lib.quantile(x, 0.5, 1)):
        results = []
        for lib in (gradiente, torch):
            x = lib.from_numpy(a.copy()).requires_grad_()
            out = fn(lib, x)
            out.backward(lib.ones_like(out))
            results.append((out.detach().numpy(), x.grad.numpy()))
        for ours, theirs in zip(*results):
            np.testing.assert_allclose(ours, theirs, equal_nan=True)


def test_quantile_q_receives_torchs_gradient():
    grads = []
    for lib in (gradiente, torch):
        x = lib.tensor([[3.0, 1.0, 2.0, 7.0], [0.5, 4.0, 6.0, -1.0]], dtype=lib.float64, requires_grad=True)
        q = lib.tensor([0.2, 0.9], dtype=lib.float64, requires_grad=True)
        (lib.quantile(x, q, dim=1) * lib.tensor([[1.0], [2.0]], dtype=lib.float64)).sum().backward()
        grads.append((x.grad.numpy(), q.grad.numpy()))
    for g, t in zip(*grads):
        np.testing.assert_allclose(g, t, rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.quantile(lib.ones(2, 2), 1.5),
    lambda lib: lib.quantile(lib.ones(2, 2), -0.1),
    lambda lib: lib.quantile(lib.ones(2, 2), lib.tensor([[0.5]])),
    lambda lib: lib.quantile(lib.ones(2, 2), lib.tensor([0.5, 1.5])),
    lambda lib: lib.quantile(lib.ones(2, 2, dtype=lib.int64), 0.5),
    lambda lib: lib.nanquantile(lib.ones(2, 2), 0.5, interpolation="foo"),
    lambda lib: lib.nanquantile(lib.ones(2, 2), lib.tensor([2.0])),
    lambda lib: lib.quantile(lib.ones(2, 2), lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.quantile(lib.tensor([]), 0.5),
], ids=lambda fn: "")
def test_quantile_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


def test_atens_unique_forms_always_return_every_output():
    def run(lib):
        x = lib.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
        forms = [lib._unique(x), lib._unique(x, return_inverse=True), lib._unique2(x, return_counts=True),
                 lib._VF.unique_dim(x, 0, return_inverse=True)]
        return [[(t.tolist() if t.dtype == lib.int64 else t.detach().tolist(), t.requires_grad) for t in form]
                for form in forms]
    assert run(gradiente) == run(torch)


_LAYOUTS = [
    lambda x: x.t(),
    lambda x: x[:, ::2],
    lambda x: x.reshape(2, 3, 2).permute(1, 2, 0),
    lambda x: x.reshape(2, 3, 2)[:, ::2].transpose(1, 2),
    lambda x: x[:, :1].expand(3, 5),
]
_LAYOUT_IDS = ["transposed", "strided", "permuted", "strided_transposed", "expanded"]


@pytest.mark.parametrize("layout", _LAYOUTS, ids=_LAYOUT_IDS)
@pytest.mark.parametrize("op", [
    lambda x: x.sort(0)[0], lambda x: x.sort(-1, descending=True)[1], lambda x: x.argsort(0), lambda x: x.msort(),
], ids=["sort_values", "sort_indices", "argsort", "msort"])
def test_sort_results_are_laid_out_as_the_input_as_in_torch(op, layout):
    """PyTorch's preserve_format: a dense input's strides, else dense strides in the input's order of dims."""
    check_strides_match_torch(lambda lib, x: op(layout(x)))


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_of_a_transposed_input_are_contiguous(name):
    """Issue 13, found by tools/random_programs.py: values and indices kept the input's layout; PyTorch's are
    contiguous."""
    values = np.random.RandomState(0).standard_normal((3, 2))
    ours, theirs = (getattr(lib.from_numpy(values).t(), name)(-1) for lib in (gradiente, torch))
    assert (ours.values.stride(), ours.indices.stride()) == (theirs.values.stride(), theirs.indices.stride())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
