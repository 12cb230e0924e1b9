"""The ops of ``ops/scattering.py`` from the op table (index_add, index_copy, index_fill, masked_scatter,
scatter_reduce, select/slice/diagonal/as_strided_scatter, index_put, put, index_reduce): gradcheck in float64,
differential tests against PyTorch with a non-trivial upstream gradient, grad_fn names and second derivatives.
Then named tests for what the table cannot see: integer inputs, the in-place forms (on views too, and in a chain:
their nodes, gradient, or the error when index_reduce_'s saved result is changed), ties and zeros in
scatter_reduce, as_strided_scatter's input gradient (where PyTorch's is wrong), index_reduce's beta warning, and
PyTorch's error messages."""
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
    overlap_outcome,
    same_tensor,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")


def _index(lib, values):
    return lib.tensor(values)


def distinct(rng, shapes):
    """Distinct values, well apart, in every input: no ties for sorts, extremes and quantiles."""
    out = []
    for shape in shapes:
        n = int(np.prod(shape))
        out.append((rng.permutation(n) * 0.37 - n / 5).reshape(shape).astype(np.float64))
    return out


def index_reduce_inputs(rng, shapes):
    """Positive values (products stay well scaled), none of the input's equal to one of the source's (no ties
    between them for amax and amin)."""
    x, src = (np.abs(a) + 0.5 for a in distinct(rng, shapes))
    return [x, src + 0.123]


def _quiet(fn):
    def call(lib, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *xs)
    return call


MASK = [[True, False, True, True], [False, False, True, False], [True, True, False, False]]
REPEATED = [[0, 1, 0], [2, 2, 2], [3, 0, 0]]     # scatter_reduce's index: positions written once, twice, thrice

SPECS = [
    # the index_* family, masked_scatter and scatter_reduce
    OpSpec("index_add", lambda lib, x, s: lib.index_add(x, 1, _index(lib, [0, 2, 0]), s, alpha=2.0),
           [((3, 4), (3, 3))]),
    OpSpec("index_add_dim0", lambda lib, x, s: x.index_add(0, _index(lib, [2]), s), [((3, 4), (1, 4))]),
    OpSpec("index_add_source_only", lambda lib, x, s: lib.index_add(x, 0, _index(lib, [1, 1]), s),
           [((3,), (2,))], grad_inputs=[1]),
    OpSpec("index_copy", lambda lib, x, s: x.index_copy(1, _index(lib, [3, 0]), s), [((3, 4), (3, 2))]),
    OpSpec("index_copy_0d_source", lambda lib, x, s: lib.index_copy(x, 0, _index(lib, 1), s), [((3,), ())]),
    OpSpec("index_fill", lambda lib, x: lib.index_fill(x, 1, _index(lib, [0, -1, 0]), 2.5), [((3, 4),)]),
    OpSpec("index_fill_tensor", lambda lib, x, v: x.index_fill(0, _index(lib, [1, 1, 2]), v), [((3, 2), ())]),
    OpSpec("masked_scatter", lambda lib, x, s: x.masked_scatter(_index(lib, MASK), s), [((3, 4), (8,))]),
    OpSpec("masked_scatter_broadcast", lambda lib, x, s: lib.masked_scatter(x, _index(lib, [[True], [False]]), s),
           [((4,), (2, 3))]),
    *[OpSpec(f"scatter_reduce_{reduce}{'' if include_self else '_excluding_self'}",
             lambda lib, x, s, reduce=reduce, include_self=include_self:
             x.scatter_reduce(1, _index(lib, REPEATED), s, reduce, include_self=include_self),
             [((3, 4), (3, 3))])
      for reduce in ("sum", "prod", "mean", "amax", "amin") for include_self in (True, False)],
    OpSpec("scatter_reduce_0d", lambda lib, x, s: lib.scatter_reduce(x, 0, _index(lib, 0), s, "prod"),
           [((), ())]),
    # the scatters of a part of a tensor, index_put, put, index_reduce
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


# --- outputs that carry no gradient ---------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.index_add(lib.zeros(3, dtype=lib.long), 0, lib.tensor([1, 1]), lib.tensor([3, 4]), alpha=2),
    lambda lib: lib.index_add(lib.zeros(3), 0, lib.tensor([2], dtype=lib.int32), lib.ones(1)),
    lambda lib: lib.index_fill(lib.zeros(3, dtype=lib.long), 0, lib.tensor([0, 2]), 2.5),
    lambda lib: lib.index_fill(lib.zeros(2, 2), 1, lib.tensor([1]), lib.tensor(3, dtype=lib.long)),
    lambda lib: lib.scatter_reduce(lib.tensor([5, -5, 2]), 0, lib.tensor([0, 0, 1]), lib.tensor([2, 2, 2]), "mean"),
    lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0, 0]), lib.tensor([-2.0, -1.0]), "amax",
                                   include_self=False),
    lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0, 2]), lib.tensor([-2.0, 4.0]), "max"),
], ids=lambda fn: "")
def test_values_and_dtypes_match_torch(fn):
    g, t = both(fn)
    same_tensor(g.detach(), t.detach())


# --- in-place forms ---------------------------------------------------------------------------------------

INPLACE = [
    ("index_add_", lambda lib, y, s: y.index_add_(1, lib.tensor([0, 2, 0]), s, alpha=-1.5), (3, 3)),
    ("index_copy_", lambda lib, y, s: y.index_copy_(1, lib.tensor([3, 1, 0]), s), (3, 3)),
    ("index_fill_", lambda lib, y, s: y.index_fill_(0, lib.tensor([2]), s.sum()), (2, 2)),
    ("masked_scatter_", lambda lib, y, s: y.masked_scatter_(lib.tensor(MASK), s), (3, 3)),
    ("scatter_reduce_", lambda lib, y, s: y.scatter_reduce_(1, lib.tensor(REPEATED), s, "prod"), (3, 3)),
]


@pytest.mark.parametrize("name,fn,source_shape", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_forms_match_torch(name, fn, source_shape):
    source = np.random.RandomState(0).uniform(0.5, 1.5, size=source_shape)
    weights = np.random.RandomState(1).uniform(0.5, 1.5, size=(3, 4))

    def run(lib):
        x = lib.arange(1.0, 13.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        s = lib.from_numpy(source.copy()).requires_grad_()
        y = x * 1
        out = fn(lib, y, s)
        assert out is y
        (y * lib.from_numpy(weights)).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), s.grad.numpy(), type(y.grad_fn).__name__, y._version
    g, t = run(gradiente), run(torch)
    for a, b in zip(g[:3], t[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert g[3:] == t[3:]


@pytest.mark.parametrize("name,fn,source_shape", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_forms_refuse_a_leaf_that_requires_grad(name, fn, source_shape):
    check_same_error(lambda lib: fn(lib, lib.ones(3, 4, requires_grad=True), lib.ones(source_shape)))


@pytest.mark.parametrize("name,fn,source_shape", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_forms_write_into_views_without_grad(name, fn, source_shape):
    """Unrecorded, the write reaches the base's memory and bumps the version counter it shares with its views."""
    for lib in (gradiente, torch):
        base = lib.full((2, 3, 4), 2.0)
        view = base[1]
        fn(lib, view, lib.full(source_shape, 3.0))
        assert view._version == base._version == 1
        assert (base[1] != 2).any() and (base[0] == 2).all()


def test_inplace_detection_through_index_add():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 1
        z = y * y                           # saves y
        y.index_add_(0, lib.tensor([0]), lib.ones(1))
        with pytest.raises(RuntimeError) as err:
            z.sum().backward()
        return "modified by an inplace operation" in str(err.value)
    assert run(gradiente) and run(torch)


def test_tensor_methods_exist_where_torch_has_them():
    names = ["index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_", "masked_scatter",
             "masked_scatter_", "scatter_reduce", "scatter_reduce_"]
    for name in names:
        assert hasattr(torch.Tensor, name) and hasattr(gradiente.Tensor, name), name


# --- scatter_reduce: ties and zeros -----------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("values", [[3.0, 1.0, 0.0, 3.0], [0.0, 2.0, 0.0, 5.0], [3.0, 0.0, 2.0, 2.0]],
                         ids=["tie_with_self", "two_zeros", "one_zero"])
def test_scatter_reduce_ties_and_zeros_match_torch(reduce, include_self, values):
    """Ties share amax/amin's gradient (PyTorch counts x's own value as a tie even with include_self=False);
    prod's gradient stays exact where a value is 0."""
    def run(lib):
        x = lib.tensor([3.0, 2.0, 0.0], dtype=lib.float64, requires_grad=True)
        s = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        y = lib.scatter_reduce(x, 0, lib.tensor([0, 0, 1, 1]), s, reduce, include_self=include_self)
        y.backward(lib.tensor([1.0, 10.0, 100.0], dtype=lib.float64))
        return y.tolist(), x.grad.tolist(), s.grad.tolist()
    g, t = run(gradiente), run(torch)
    np.testing.assert_allclose(np.array(g[0] + g[1] + g[2]), np.array(t[0] + t[1] + t[2]), rtol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_with_a_larger_src(reduce):
    """Only src's part that index covers takes part. Intended difference: PyTorch 2.13's backward raises here
    (its rule returns a gradient of index's shape for src); gradiente's gives src the gradient of its shape,
    zero outside that part."""
    index = [[0, 1, 0], [2, 2, 2], [3, 0, 0]]
    x_values = np.random.RandomState(0).uniform(0.5, 2, (3, 4))
    s_values = np.random.RandomState(1).uniform(0.5, 2, (4, 5))

    def run(lib):
        x, s = lib.from_numpy(x_values.copy()).requires_grad_(), lib.from_numpy(s_values.copy()).requires_grad_()
        return x, s, lib.scatter_reduce(x, 1, lib.tensor(index), s, reduce)
    (x, s, g), (_, _, t) = run(gradiente), run(torch)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError):
        t.sum().backward()
    g.backward(gradiente.ones(3, 4, dtype=gradiente.float64))
    assert tuple(s.grad.shape) == (4, 5) and not s.grad.numpy()[3:].any() and not s.grad.numpy()[:, 3:].any()
    assert gradiente.autograd.gradcheck(lambda x, s: gradiente.scatter_reduce(x, 1, gradiente.tensor(index), s, reduce),
                                        (x, s))


def test_scatter_reduce_prod_second_derivative_with_a_zero():
    x = gradiente.tensor([3.0, 2.0], dtype=gradiente.float64, requires_grad=True)
    s = gradiente.tensor([0.0, 2.0, 1.5], dtype=gradiente.float64, requires_grad=True)
    index = gradiente.tensor([0, 0, 1])
    assert gradiente.autograd.gradgradcheck(lambda x, s: gradiente.scatter_reduce(x, 0, index, s, "prod"), (x, s))


# --- select/slice/diagonal/as_strided_scatter, index_put, put, index_reduce -------------------------------

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
    which a later in-place op changes) the same error. (The chain's other in-place forms are tested by the same
    name in test_ops_arithmetic.py, test_ops_reductions.py and test_ops_matmul.py.)"""
    def chain(lib, y):
        trail = [type(y.index_put_((lib.tensor([0]),), lib.ones(4)).grad_fn).__name__,
                 type(y.put_(lib.tensor([1]), lib.ones(1)).grad_fn).__name__]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trail.append(type(y.index_reduce_(0, lib.tensor([0]), lib.full((1, 4), 2.0), "prod").grad_fn).__name__)
        if change_after_reduce:
            y.addcmul_(lib.ones(4), lib.ones(4))
        return trail
    check_in_place_chain(chain)


@pytest.mark.parametrize("change_after_reduce", [False, True])
def test_a_chain_of_in_place_forms_of_several_families(change_after_reduce):
    """The scatters' in-place forms composed with those of arithmetic, reductions and matmul on one tensor: the
    gradient through all seven (or the error, when the result index_reduce_ saved is changed after it) is
    PyTorch's."""
    def chain(lib, y):
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
        return trail
    check_in_place_chain(chain)          # renorm's gradient is rounding noise here: compared to 1e-6


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


# --- PyTorch's error messages -------------------------------------------------------------------------------

ERRORS = [
    ("index_add_out_of_range", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0, 5]), lib.ones(3, 2))),
    ("index_add_negative", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0, -1]), lib.ones(3, 2))),
    ("index_add_count", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0, 2]), lib.ones(3, 3))),
    ("index_add_shape", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0, 2]), lib.ones(2, 2))),
    ("index_add_source_dims", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0, 2]), lib.ones(2))),
    ("index_add_2d_index", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([[0]]), lib.ones(3, 1))),
    ("index_add_float_index", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0.0]), lib.ones(3, 1))),
    ("index_add_dtype", lambda lib: lib.index_add(lib.zeros(3, 4), 1, lib.tensor([0]),
                                                  lib.ones(3, 1, dtype=lib.float64))),
    ("index_add_0d_source", lambda lib: lib.index_add(lib.zeros(3), 0, lib.tensor(1), lib.tensor(2.0))),
    ("index_copy_out_of_range", lambda lib: lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([0, 5]), lib.ones(3, 2))),
    ("index_copy_negative", lambda lib: lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([-1, 0]), lib.ones(3, 2))),
    ("index_copy_count", lambda lib: lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([0, 2]), lib.ones(3, 3))),
    ("index_copy_slices", lambda lib: lib.index_copy(lib.zeros(2, 3, 4), 1, lib.tensor([0, 1]), lib.ones(2, 2, 5))),
    ("index_copy_2d_index", lambda lib: lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([[0]]), lib.ones(3, 1))),
    ("index_copy_int32_index", lambda lib: lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([0], dtype=lib.int32),
                                                          lib.ones(3, 1))),
    ("index_copy_dtype", lambda lib: lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([0]),
                                                    lib.ones(3, 1, dtype=lib.float64))),
    ("index_fill_out_of_range", lambda lib: lib.index_fill(lib.zeros(3, 4), 1, lib.tensor([0, 5]), 1.0)),
    ("index_fill_negative_out_of_range", lambda lib: lib.index_fill(lib.zeros(3, 4), 1, lib.tensor([-5]), 1.0)),
    ("index_fill_1d_value", lambda lib: lib.index_fill(lib.zeros(3, 4), 1, lib.tensor([0]), lib.tensor([1.0]))),
    ("index_fill_2d_index", lambda lib: lib.index_fill(lib.zeros(3, 4), 1, lib.tensor([[0]]), 1.0)),
    ("index_fill_int32_index", lambda lib: lib.index_fill(lib.zeros(3, 4), 1, lib.tensor([0], dtype=lib.int32), 1.0)),
    ("masked_scatter_float_mask", lambda lib: lib.masked_scatter(lib.zeros(3), lib.zeros(3), lib.ones(3))),
    ("masked_scatter_dtype", lambda lib: lib.masked_scatter(lib.zeros(3), lib.ones(3, dtype=lib.bool),
                                                            lib.ones(3, dtype=lib.float64))),
    ("masked_scatter_too_few", lambda lib: lib.masked_scatter(lib.zeros(3), lib.ones(3, dtype=lib.bool), lib.ones(2))),
    ("masked_scatter_shapes", lambda lib: lib.masked_scatter(lib.zeros(3, 4), lib.ones(2, dtype=lib.bool),
                                                             lib.ones(12))),
    ("masked_scatter_inplace_shape", lambda lib: lib.zeros(4).masked_scatter_(lib.ones(3, dtype=lib.bool),
                                                                              lib.ones(12))),
    ("scatter_reduce_reduce", lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0]), lib.ones(1), "add")),
    ("scatter_reduce_dtype", lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0]),
                                                            lib.ones(1, dtype=lib.float64), "sum")),
    ("scatter_reduce_out_of_range", lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([3]), lib.ones(1),
                                                                   "sum")),
    ("scatter_reduce_dims", lambda lib: lib.scatter_reduce(lib.zeros(3, 4), 1, lib.tensor([0]), lib.ones(1, 1),
                                                           "sum")),
    ("scatter_reduce_src_too_small", lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0, 0]), lib.ones(1),
                                                                    "sum")),
    ("scatter_reduce_float_index", lambda lib: lib.scatter_reduce(lib.zeros(3), 0, lib.tensor([0.0]), lib.ones(1),
                                                                  "sum")),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("call", [
    lambda lib, y: y.index_add_(0, lib.tensor([0, 1]), y[2:4]),
    lambda lib, y: y.index_copy_(0, lib.tensor([0, 1]), y[1:3]),
    lambda lib, y: y.index_fill_(0, lib.tensor([0, 1]), y[2]),
    lambda lib, y: y.scatter_reduce_(0, lib.tensor([0, 1]), y[2:4], "sum"),
    lambda lib, y: y.index_reduce_(0, lib.tensor([0, 1]), y[2:4], "prod"),
    lambda lib, y: y.put_(lib.tensor([0, 1]), y[2:4]),
    lambda lib, y: y[:2].index_add_(0, lib.tensor([0, 1]), y[2:4]),
    lambda lib, y: y.masked_fill_(y > 3, y[1]),
], ids=["index_add_", "index_copy_", "index_fill_allowed", "scatter_reduce_", "index_reduce_", "put_", "apart",
        "masked_fill_allowed"])
def test_in_place_forms_refuse_a_source_sharing_memory(call):
    """PyTorch's assert_no_overlap: a source that shares memory with the tensor written to is refused."""
    ours, theirs = both(overlap_outcome(call))
    assert ours == theirs

