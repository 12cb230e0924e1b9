"""Indexing from the op table (``x[...]``, ``x[...] = v``, gather/scatter, index_select, masks, take), with gradcheck
and differential tests against PyTorch; plus named tests for index assignment, repeated indices, in-place
rules, unravel_index's values and dtypes, and PyTorch's error messages."""
import numpy as np
import pytest
from harness import (
    OpSpec,
    assert_same_tensors,
    backward_of,
    both,
    both_quietly,
    check_same_error,
    check_strides_match_torch,
    on_both,
    overlap_outcome,
    plain,
    same_tensor,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")


def _index(lib, values):
    return lib.tensor(values)


def _mask(lib, rows):
    return lib.tensor(rows)


def _set(index, value=None):
    """``y = x * 1; y[index] = v; return y`` (v: the second input, or a number)."""
    def fn(lib, x, *v):
        y = x * 1
        index_ = index(lib) if callable(index) else index
        y[index_] = v[0] if v else value
        return y
    return fn


def _nested_list_index(x):
    """``x[[[0, 1], [1, 2]]]`` reads as ``x[[0, 1], [1, 2]]``, with PyTorch's deprecation warning."""
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        return x[[[0, 1], [1, 2]]]


ROW_IDX = [0, 2, 0]          # a repeated index: its gradient must add up
GATHER_IDX = [[0, 1], [2, 2], [1, 0]]
SCATTER_IDX = [[0, 1], [3, 2]]   # no position written twice: PyTorch leaves the winner of a tie unspecified

SPECS = [
    OpSpec("int", lambda lib, x: x[1], [((3, 4),), ((3,),)]),
    OpSpec("negative_int", lambda lib, x: x[-1], [((3, 4),)]),
    OpSpec("int_pair", lambda lib, x: x[0, 1], [((3, 4),)]),
    OpSpec("slice", lambda lib, x: x[1:], [((3, 4),)]),
    OpSpec("full_slice", lambda lib, x: x[:], [((3, 4),)]),
    OpSpec("slice_step", lambda lib, x: x[::2], [((5, 2),)]),
    OpSpec("slice_second_dim", lambda lib, x: x[:, 1:3], [((3, 4),)]),
    OpSpec("slice_clamped", lambda lib, x: x[-10:10, -2:], [((3, 4),)]),
    OpSpec("empty_slice", lambda lib, x: x[2:1], [((3, 4),)]),
    OpSpec("none", lambda lib, x: x[None], [((3,),)]),
    OpSpec("none_middle", lambda lib, x: x[:, None, 1], [((3, 4),)]),
    OpSpec("ellipsis", lambda lib, x: x[..., 0], [((2, 3, 4),)]),
    OpSpec("ellipsis_alone", lambda lib, x: x[...], [((2, 3),)]),
    OpSpec("full_slices", lambda lib, x: x[:, :], [((2, 3),)]),
    OpSpec("int_ellipsis_none", lambda lib, x: x[0, ..., None], [((2, 3, 4),)]),
    OpSpec("list", lambda lib, x: x[[0, 2]], [((3, 4),)]),
    OpSpec("list_repeated", lambda lib, x: x[ROW_IDX], [((3, 4),)]),
    OpSpec("long_tensor", lambda lib, x: x[_index(lib, ROW_IDX)], [((3, 4),)]),
    OpSpec("long_tensor_2d", lambda lib, x: x[_index(lib, [[0, 1], [1, 1]])], [((3, 2),)]),
    OpSpec("two_lists", lambda lib, x: x[[0, 1, 1], [1, 2, 2]], [((3, 4),)]),
    OpSpec("nested_list", lambda lib, x: _nested_list_index(x), [((3, 4),)]),
    OpSpec("int_and_list", lambda lib, x: x[0, :, [0, 1]], [((2, 3, 4),)]),
    OpSpec("list_and_int", lambda lib, x: x[[1, 0], 2], [((2, 3, 4),)]),
    OpSpec("slice_and_list", lambda lib, x: x[:, [0, 1], :2], [((2, 3, 4),)]),
    OpSpec("lists_apart", lambda lib, x: x[[0, 1], :, [2, 3]], [((2, 3, 4),)]),
    OpSpec("mask", lambda lib, x: x[_mask(lib, [True, False, True])], [((3, 4),)]),
    OpSpec("mask_2d", lambda lib, x: x[_mask(lib, [[True, False], [False, True], [True, True]])], [((3, 2),)]),
    OpSpec("mask_from_values", lambda lib, x: x[x > 0], [((3, 4),)]),
    OpSpec("mask_second_dim", lambda lib, x: x[:, _mask(lib, [True, False, False, True])], [((3, 4),)]),
    OpSpec("true", lambda lib, x: x[True], [((3,),)]),
    OpSpec("zero_dim_index", lambda lib, x: x[_index(lib, 1)], [((3, 4),)]),
    OpSpec("numpy_index", lambda lib, x: x[np.array([2, 0])], [((3, 4),)]),
    OpSpec("setitem_int", _set(0, 5.0), [((3, 4),)]),
    OpSpec("setitem_tensor", _set(1), [((3, 4), (4,))]),
    OpSpec("setitem_broadcast", _set(slice(1, None)), [((3, 4), (4,)), ((3, 4), (1,))]),
    OpSpec("setitem_column", _set((slice(None), 1)), [((3, 4), (3,))]),
    OpSpec("setitem_element", _set((0, 1)), [((3, 4), ())]),
    OpSpec("setitem_none", _set(None, 1.0), [((3, 4),)]),
    OpSpec("setitem_everything", _set(Ellipsis), [((3, 4), (3, 4)), ((3, 4), (4,))]),
    OpSpec("setitem_fill", _set(slice(None), 2.0), [((3, 4),)]),
    OpSpec("setitem_mask", _set(lambda lib: _mask(lib, [[True, False], [False, True], [True, True]]), 0.0),
           [((3, 2),)]),
    OpSpec("setitem_mask_tensor", _set(lambda lib: _mask(lib, [True, False, True])), [((3, 4), (4,))]),
    OpSpec("setitem_list", _set([0, 2]), [((3, 4), (4,))]),
    OpSpec("setitem_lists", _set(([0, 1], [1, 2])), [((3, 4), (2,))]),
    OpSpec("setitem_int_and_list", _set((0, [1, 3])), [((3, 4), (2,))]),
    OpSpec("gather", lambda lib, x: x.gather(1, _index(lib, GATHER_IDX)), [((3, 4),)]),
    OpSpec("gather_dim0", lambda lib, x: lib.gather(x, 0, _index(lib, [[2, 0, 0, 1]])), [((3, 4),)]),
    OpSpec("scatter", lambda lib, x, s: x.scatter(1, _index(lib, SCATTER_IDX), s), [((3, 4), (2, 2))]),
    OpSpec("scatter_value", lambda lib, x: lib.scatter(x, 1, _index(lib, GATHER_IDX), 2.5), [((3, 4),)]),
    OpSpec("scatter_add", lambda lib, x, s: x.scatter_add(1, _index(lib, GATHER_IDX), s), [((3, 4), (3, 2))]),
    OpSpec("index_select", lambda lib, x: x.index_select(0, _index(lib, ROW_IDX)), [((3, 4),)]),
    OpSpec("index_select_dim1", lambda lib, x: lib.index_select(x, -1, _index(lib, [3, 0])), [((3, 4),)]),
    OpSpec("masked_fill", lambda lib, x: x.masked_fill(x > 0, 0.5), [((3, 4),)]),
    OpSpec("masked_fill_broadcast", lambda lib, x: x.masked_fill(_mask(lib, [True, False, False, True]), -1.0),
           [((3, 4),)]),
    OpSpec("masked_fill_tensor", lambda lib, x, v: x.masked_fill(_mask(lib, [True, False, True]), v),
           [((2, 3), ())]),
    OpSpec("masked_select", lambda lib, x: x.masked_select(x > 0), [((3, 4),)]),
    OpSpec("masked_select_broadcast", lambda lib, x: lib.masked_select(x, _mask(lib, [[True], [False]])),
           [((2, 3),)]),
    OpSpec("take_along_dim", lambda lib, x: lib.take_along_dim(x, _index(lib, [[0], [3], [1]]), 1), [((3, 4),)]),
    OpSpec("take_along_dim_flat", lambda lib, x: lib.take_along_dim(x, _index(lib, [5, 0])), [((3, 4),)]),
    OpSpec("nonzero", lambda lib, x: lib.nonzero(x > 0), [((3, 4),)], gradcheck=False, torch_grad=False),
    OpSpec("scatter_inplace", lambda lib, x, s: (x * 1).scatter_(1, _index(lib, SCATTER_IDX), s),
           [((3, 4), (2, 2))]),
    OpSpec("masked_fill_inplace", lambda lib, x: (x * 1).masked_fill_(x < 0, 0.0), [((3, 4),)]),
    # the gradients of x[...] as ops of their own (inputs x and the upstream gradient): double-backward nodes
    OpSpec("int_backward", backward_of(lambda lib, x: x[1]), [((3, 4), (4,))]),
    OpSpec("slice_backward", backward_of(lambda lib, x: x[:, 1:3]), [((3, 4), (3, 2))]),
    OpSpec("list_backward", backward_of(lambda lib, x: x[ROW_IDX]), [((3, 4), (3, 4))]),
    # take: the input read as flat, at any index tensor's shape
    OpSpec("take", lambda lib, x: lib.take(x, _index(lib, [[0, 5], [5, -1]])), [((3, 4),)]),
    OpSpec("take_0d_index", lambda lib, x: x.take(_index(lib, -1)), [((4,),), ((),)]),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- index assignment -----------------------------------------------------------------------------------

def test_setitem_gradient_flows_to_old_values_and_to_value():
    def run(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        v = lib.tensor([10.0, 20.0], requires_grad=True)
        y = x * 2
        y[1] = v * 3
        (y * lib.tensor([[1.0], [2.0], [3.0]])).sum().backward()
        return x.grad.tolist(), v.grad.tolist(), type(y.grad_fn).__name__, y._version
    assert run(gradiente) == run(torch)


def test_setitem_with_mask_gradient():
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
        v = lib.tensor(7.0, requires_grad=True)
        y = x * 1
        y[y < 0] = v
        (y * lib.arange(1.0, 5.0)).sum().backward()
        return x.grad.tolist(), v.grad.item(), type(y.grad_fn).__name__
    assert run(gradiente) == run(torch)


def test_setitem_value_requires_grad_target_does_not():
    def run(lib):
        v = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.zeros(3, 2)
        y[0] = v
        y[2] = v * 2
        y.sum().backward()
        return v.grad.tolist(), type(y.grad_fn).__name__, [type(n).__name__ for n, _ in y.grad_fn.next_functions]
    assert run(gradiente) == run(torch)


def test_setitem_without_grad_writes_in_place():
    for lib in (gradiente, torch):
        x = lib.zeros(3, 4)
        row = x[1]
        x[1, 2:] = lib.tensor([1.0, 2.0])
        x[x == 0] = -1.0
        x[[0, 2], 0] = 5
        assert row.tolist() == [-1.0, -1.0, 1.0, 2.0]
        assert x._version == 3


def test_setitem_under_no_grad_on_a_leaf():
    for lib in (gradiente, torch):
        w = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            w[0] = 0.0
        assert w.tolist() == [0.0, 1.0, 1.0] and w.is_leaf and w.requires_grad


def test_setitem_in_place_detection():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        z = y * y            # saves y
        y[0] = 0.0
        with pytest.raises(RuntimeError) as err:
            z.sum().backward()
        return "modified by an inplace operation" in str(err.value)
    assert run(gradiente) and run(torch)


@pytest.mark.parametrize("index", [0, slice(None), Ellipsis, "mask", [0]], ids=["int", "slice", "ellipsis", "mask",
                                                                                  "list"])
def test_setitem_on_a_leaf_that_requires_grad(index):
    def message(lib):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            w[w > 0 if index == "mask" else index] = 0.0
        return str(err.value)
    assert message(gradiente) == message(torch)


def test_repeated_indices_accumulate():
    for lib in (gradiente, torch):
        x = lib.arange(4.0, requires_grad=True)
        x[[0, 0, 1, 0]].sum().backward()
        assert x.grad.tolist() == [3.0, 1.0, 0.0, 0.0]
        x.grad = None
        x.index_select(0, lib.tensor([3, 3])).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0, 2.0]
        x.grad = None
        x.gather(0, lib.tensor([2, 2, 2])).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 3.0, 0.0]


def test_scatter_add_inplace_gradients():
    def run(lib):
        x = lib.zeros(2, 3, requires_grad=True)
        s = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        y.scatter_add_(1, lib.tensor([[0, 0], [2, 1]]), s)
        (y * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return y.tolist(), x.grad.tolist(), s.grad.tolist(), type(y.grad_fn).__name__
    assert run(gradiente) == run(torch)


@pytest.mark.parametrize("index", [np.array(0), np.array(2), (np.array(1),), (np.array(1), slice(None))],
                         ids=["zero", "two", "tuple", "with_slice"])
def test_a_zero_dim_integer_array_selects_like_an_int(index):
    g, t = both(lambda lib: lib.arange(6.0).reshape(3, 2)[index])
    same_tensor(g, t)


@pytest.mark.parametrize("write", [
    lambda y, v: y.__setitem__(0, v),
    lambda y, v: y.__setitem__((0, 1), v),
    lambda y, v: y.select(0, 1).select(0, 2).add_(v),
    lambda y, v: y[1, 0].mul_(v),
], ids=["setitem_row", "setitem_element", "select_add_", "getitem_mul_"])
def test_in_place_write_into_a_zero_dim_view_under_create_graph(write):
    """The view's gradient rule reads its region back at a 0-d position: first and second derivatives."""
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.ones(2, 3) * lib.tensor([[1.0], [2.0]])
        write(y, (x * x).sum())
        gx, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        ggx, = lib.autograd.grad((gx * gx).sum(), x)
        return gx, ggx
    assert_same_tensors(*both(run))


def test_nonzero_as_tuple():
    g, t = both(lambda lib: [i.tolist() for i in lib.nonzero(lib.tensor([[0, 1], [1, 1]]), as_tuple=True)])
    assert g == t
    assert gradiente.nonzero(gradiente.tensor([[0.0, 2.0]])).dtype == gradiente.int64


def test_double_backward_through_indexing():
    x = gradiente.randn(3, 4, dtype=gradiente.float64, requires_grad=True)
    idx = gradiente.tensor([0, 2, 0])
    fns = [lambda x: (x[idx] ** 3).sum(), lambda x: (x[0, 1:] ** 3).sum(), lambda x: (x[x > 0] ** 3).sum(),
           lambda x: (x.gather(1, gradiente.tensor([[0], [3], [3]])) ** 3).sum(),
           lambda x: (x.index_select(1, idx) ** 3).sum(), lambda x: (x.masked_fill(x > 0.5, 1.0) ** 3).sum()]
    for fn in fns:
        assert gradiente.autograd.gradgradcheck(fn, (x,))


# --- take -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.take(lib.arange(6).reshape(2, 3), lib.tensor([[5, 0], [-1, -6]])),
], ids=lambda fn: "")
def test_values_and_dtypes_match_torch(fn):
    g, t = both(fn)
    same_tensor(g.detach(), t.detach())


def test_tensor_methods_exist_where_torch_has_them():
    assert hasattr(torch.Tensor, "take") and hasattr(gradiente.Tensor, "take")


# --- unravel_index --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.unravel_index(lib.tensor([4, 1, -1, 6, -7]), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor(4), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor([[1, 2]]), 3),
    lambda lib: lib.unravel_index(lib.tensor([0]), ()),
    lambda lib: lib.unravel_index(lib.tensor([1], dtype=lib.int32), lib.Size([4])),
], ids=lambda fn: "")
def test_unravel_index_matches_torch(fn):
    assert_same_tensors(*both_quietly(fn), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.unravel_index(lib.tensor([1.0]), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor([True]), (2, 3)),
    lambda lib: lib.unravel_index(lib.tensor([1]), (2, -3)),
    lambda lib: lib.unravel_index(lib.tensor([1]), (2.0, 3)),
    lambda lib: lib.unravel_index(5, (2, 3)),
], ids=lambda fn: "")
def test_unravel_index_errors_match_torch(fn):
    check_same_error(fn)


# --- PyTorch's error messages ---------------------------------------------------------------------------

ERRORS = [
    ("int_out_of_range", lambda lib: lib.zeros(3)[5]),
    ("negative_out_of_range", lambda lib: lib.zeros(3)[-4]),
    ("second_dim_out_of_range", lambda lib: lib.zeros(3, 4)[:, 7]),
    ("too_many", lambda lib: lib.zeros(3)[0, 0]),
    ("zero_dim", lambda lib: lib.tensor(1.0)[0]),
    ("list_out_of_range", lambda lib: lib.zeros(3)[[0, 5]]),
    ("list_second_dim", lambda lib: lib.zeros(3, 4)[:, [0, 7, 9]]),
    ("mask_shape", lambda lib: lib.zeros(3)[lib.tensor([True, False])]),
    ("mask_shape_2d", lambda lib: lib.zeros(3, 4)[lib.zeros(3, 2, dtype=lib.bool)]),
    ("float_index", lambda lib: lib.zeros(3)[1.5]),
    ("float_tensor_index", lambda lib: lib.zeros(3)[lib.tensor([0.5])]),
    ("negative_step", lambda lib: lib.zeros(3)[::-1]),
    ("zero_step", lambda lib: lib.zeros(3)[::0]),
    ("setitem_out_of_range", lambda lib: lib.zeros(3).__setitem__(5, 1.0)),
    ("setitem_shape", lambda lib: lib.zeros(3).__setitem__(slice(0, 2), lib.zeros(3))),
    ("setitem_rank", lambda lib: lib.zeros(3).__setitem__(0, lib.zeros(2))),
    ("setitem_list", lambda lib: lib.zeros(3).__setitem__(0, [1.0])),
    ("gather_out_of_range", lambda lib: lib.zeros(3, 4).gather(1, lib.tensor([[5]]))),
    ("gather_float_index", lambda lib: lib.zeros(3, 4).gather(1, lib.tensor([[1.0]]))),
    ("gather_ndim", lambda lib: lib.zeros(3, 4).gather(1, lib.tensor([1]))),
    ("gather_size", lambda lib: lib.zeros(3, 4).gather(1, lib.tensor([[1]] * 4))),
    ("scatter_out_of_range", lambda lib: lib.zeros(3, 4).scatter(1, lib.tensor([[5]]), 1.0)),
    ("scatter_dtype", lambda lib: lib.zeros(3, 4).scatter(1, lib.tensor([[1]]), lib.zeros(1, 1, dtype=lib.float64))),
    ("index_select_range", lambda lib: lib.zeros(3, 4).index_select(1, lib.tensor([5]))),
    ("index_select_2d", lambda lib: lib.zeros(3, 4).index_select(0, lib.tensor([[0]]))),
    ("index_select_float", lambda lib: lib.zeros(3, 4).index_select(0, lib.tensor([0.0]))),
    ("masked_fill_mask", lambda lib: lib.zeros(3, 4).masked_fill(lib.zeros(3, 4), 1.0)),
    ("masked_fill_value", lambda lib: lib.zeros(3, 4).masked_fill(lib.zeros(3, 4, dtype=lib.bool), lib.zeros(2))),
    ("masked_fill_shape", lambda lib: lib.zeros(3, 4).masked_fill(lib.zeros(5, dtype=lib.bool), 1.0)),
    ("take_out_of_range", lambda lib: lib.take(lib.zeros(3, 4), lib.tensor([12]))),
    ("take_negative_out_of_range", lambda lib: lib.take(lib.zeros(3, 4), lib.tensor([-13]))),
    ("take_float_index", lambda lib: lib.take(lib.zeros(3), lib.tensor([1.0]))),
    ("take_list", lambda lib: lib.take(lib.zeros(3), [1])),
    ("take_empty", lambda lib: lib.take(lib.zeros(0), lib.tensor([0]))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.index_select(x, 0, lib.tensor([0, 2])),
    lambda lib, x: lib.index_select(x, 1, lib.tensor([0, 2])),
    lambda lib, x: lib.index_select(x.t(), 1, lib.tensor([2, 0])),
    lambda lib, x: x.t().masked_fill(x.t() > 2, 0.0),
    lambda lib, x: x[:, [0, 2]].reshape(-1),
], ids=["index_select_rows", "index_select_columns", "index_select_transposed", "masked_fill_transposed",
        "index_select_then_view"])
def test_result_strides_match_torch(fn):
    check_strides_match_torch(fn)


@pytest.mark.parametrize("shape,dim,index", [((3,), 0, [5]), ((3,), 0, [-1]), ((3, 4), 0, [3]), ((3, 4), 1, [4]),
                                             ((3, 4, 2), 2, [2]), ((), 0, [1])])
def test_index_select_out_of_range_raises_torchs_error(shape, dim, index):
    check_same_error(lambda lib: lib.index_select(lib.zeros(shape), dim, lib.tensor(index)))


def test_index_select_result_views_as_in_torch():
    """The issue's case: contiguous, so view works and a write through it reaches the result."""
    def run(lib):
        y = lib.index_select(lib.arange(12.0).reshape(3, 4), 1, lib.tensor([0, 2]))
        flat = y.view(-1)
        flat[0] = 100.0
        return y
    same_tensor(*both(run))


@pytest.mark.parametrize("call", [
    lambda lib, y: y.scatter_add_(0, lib.tensor([0, 1, 0]), y),
    lambda lib, y: y.scatter_add_(0, lib.tensor([0, 1]), y[2:4]),
    lambda lib, y: y[:3].scatter_add_(0, lib.tensor([0, 1]), y[2:4]),
    lambda lib, y: y[:2].scatter_add_(0, lib.tensor([0, 1]), y[2:4]),
    lambda lib, y: y[::2].scatter_add_(0, lib.tensor([0, 1]), y[:2]),
    lambda lib, y: y.scatter_(0, lib.tensor([0, 1]), y[3:5]),
    lambda lib, y: y.scatter_(0, lib.tensor([0, 1]), 1.0),
    lambda lib, y: y.view(2, 3).scatter_add_(1, lib.tensor([[0], [1]]), y.view(3, 2).t()[:, :1]),
], ids=["itself", "a_slice", "overlapping_slices", "apart", "strided", "scatter", "scatter_value", "transposed"])
def test_scatter_in_place_refuses_a_source_sharing_memory(call):
    """PyTorch's assert_no_overlap: a source that shares memory with the tensor written to is refused."""
    ours, theirs = both(overlap_outcome(call))
    assert ours == theirs



@pytest.mark.parametrize("write", ["setitem_one", "inplace_on_one", "setitem_slice", "setitem_column"])
def test_writing_into_an_expanded_tensor(write):
    """An expanded tensor's elements share memory: writing one element is allowed, as in PyTorch, writing a
    region where two elements share memory is refused."""
    def scenario(lib):
        g = lib.ones(1, 2).expand(3, 2)
        if write == "setitem_one":
            g[0, 1] = 5.0
        elif write == "inplace_on_one":
            g[1, 0] /= 0
        elif write == "setitem_slice":
            g[0:2, 0] = 7.0
        else:
            g[:, 1] = 7.0
        return plain(g)

    on_both(scenario)


@pytest.mark.parametrize("index", ["rows", "pairs", "empty", "columns", "assign"])
def test_a_range_indexes_as_a_list_of_integers(index):
    def scenario(lib):
        x = lib.arange(12.0).reshape(3, 4)
        if index == "assign":
            x[range(3), lib.tensor([0, 1, 2])] = -1.0
            return plain(x)
        y = {"rows": lambda: x[range(1, 3)], "pairs": lambda: x[range(3), [0, 1, 2]],
             "empty": lambda: x[range(0)], "columns": lambda: x[:, range(0, 4, 2)]}[index]()
        return plain(y), tuple(y.shape)

    on_both(scenario)
