"""The ops of ``ops/joining.py`` from the op table (cat, concat, stack, hstack, vstack, split, chunk, unbind and
iteration; tensor_split, vsplit, hsplit, dsplit, meshgrid, cartesian_prod, combinations, broadcast_tensors,
atleast_3d, column_stack, dstack): gradcheck in float64, differential tests against PyTorch with a non-trivial
upstream gradient, grad_fn names and second derivatives. Then named tests for what the table cannot see: split
outputs without a gradient, pieces that are views, inputs returned as they are, the meshgrid warning, and
PyTorch's error messages."""
import warnings

import pytest
from harness import OpSpec, both, check_same_error, check_strides_match_torch, same_tensor, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def _pieces_weighted(lib, pieces):
    """Combine every output of a multi-output op, each scaled differently, so each piece's gradient counts."""
    return lib.cat([p.reshape(-1) * (k + 1) for k, p in enumerate(pieces)])


SPECS = [
    OpSpec("cat", lambda lib, x, y: lib.cat([x, y]), [((2, 3), (4, 3)), ((3,), (2,))]),
    OpSpec("cat_dim1", lambda lib, x, y, z: lib.cat((x, y, z), dim=1), [((2, 3), (2, 1), (2, 2))]),
    OpSpec("cat_partial_grad", lambda lib, x, y: lib.cat([x, y], -1), [((2, 3), (2, 2))], grad_inputs=[1]),
    OpSpec("concat", lambda lib, x, y: lib.concat([x, y], 0), [((2, 3), (1, 3))]),
    OpSpec("concatenate", lambda lib, x, y: lib.concatenate([x, y], 1), [((2, 3), (2, 1))]),
    OpSpec("stack", lambda lib, x, y: lib.stack([x, y]), [((2, 3), (2, 3)), ((), ())]),
    OpSpec("stack_dim", lambda lib, x, y: lib.stack([x, y], dim=-1), [((2, 3), (2, 3))]),
    OpSpec("hstack", lambda lib, x, y: lib.hstack([x, y]), [((2, 3), (2, 1)), ((3,), (2,))]),
    OpSpec("vstack", lambda lib, x, y: lib.vstack([x, y]), [((3,), (3,)), ((2, 3), (1, 3))]),
    OpSpec("split", lambda lib, x: x.split(2)[0], [((5, 3),)]),
    OpSpec("split_all", lambda lib, x: _pieces_weighted(lib, x.split(2, dim=1)), [((3, 5),)], check_name=False),
    OpSpec("split_sizes", lambda lib, x: lib.split(x, [1, 3], 1)[1], [((2, 4),)]),
    OpSpec("split_sizes_all", lambda lib, x: _pieces_weighted(lib, x.split([2, 0, 3])), [((5, 2),)],
           check_name=False),
    OpSpec("chunk", lambda lib, x: x.chunk(3)[1], [((5, 2),)]),
    OpSpec("chunk_all", lambda lib, x: _pieces_weighted(lib, x.chunk(4, -1)), [((2, 6),)], check_name=False),
    OpSpec("unbind", lambda lib, x: x.unbind(1)[2], [((2, 3),)]),
    OpSpec("unbind_all", lambda lib, x: _pieces_weighted(lib, x.unbind()), [((3, 2),)], check_name=False),
    OpSpec("iter", lambda lib, x: _pieces_weighted(lib, list(x)), [((3, 2),)], check_name=False),
    # splitting
    OpSpec("tensor_split_sections", lambda lib, x: lib.tensor_split(x, 3, dim=1)[0], [((3, 7),)]),
    OpSpec("tensor_split_last", lambda lib, x: x.tensor_split(3, 1)[2], [((3, 7),)]),
    OpSpec("tensor_split_indices", lambda lib, x: lib.tensor_split(x, [1, 4])[1], [((5, 2),)]),
    OpSpec("tensor_split_all", lambda lib, x: _pieces_weighted(lib, lib.tensor_split(x, [-1, 1, 10])), [((6,),)]),
    OpSpec("tensor_split_tensor", lambda lib, x: lib.tensor_split(x, lib.tensor([2]))[1], [((4,),)]),
    OpSpec("vsplit", lambda lib, x: _pieces_weighted(lib, lib.vsplit(x, 2)), [((4, 3),)]),
    OpSpec("hsplit", lambda lib, x: x.hsplit([1])[1], [((2, 3),), ((4,),)]),
    OpSpec("dsplit", lambda lib, x: lib.dsplit(x, 2)[1], [((2, 1, 4),)]),
    # grids, broadcasting, combinations
    OpSpec("meshgrid_ij", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")[1], [((3,), (4,)), ((), (2,))]),
    OpSpec("meshgrid_xy", lambda lib, a, b, c: lib.meshgrid([a, b, c], indexing="xy")[0], [((3,), (4,), (2,))]),
    OpSpec("meshgrid_xy_second", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[1], [((3,), (4,))]),
    OpSpec("cartesian_prod", lambda lib, a, b: lib.cartesian_prod(a, b), [((3,), (4,))]),
    OpSpec("cartesian_prod_three", lambda lib, a, b, c: lib.cartesian_prod(a, b, c), [((2,), (3,), (2,))]),
    OpSpec("combinations", lambda lib, x: lib.combinations(x), [((4,),)]),
    OpSpec("combinations_r3", lambda lib, x: lib.combinations(x, 3), [((5,),)]),
    OpSpec("combinations_replacement", lambda lib, x: lib.combinations(x, 2, with_replacement=True), [((3,),)]),
    OpSpec("broadcast_tensors", lambda lib, x, y: lib.broadcast_tensors(x, y)[1], [((3, 4), (4,)), ((2, 1), (1, 3))]),
    # stacking
    OpSpec("atleast_3d", lambda lib, x: lib.atleast_3d(x), [((),), ((4,),), ((2, 3),), ((2, 3, 1, 2),)]),
    OpSpec("atleast_3d_many", lambda lib, x, y: lib.atleast_3d(x, y)[1], [((), (3,))]),
    OpSpec("column_stack", lambda lib, x, y, z: lib.column_stack([x, y, z]), [((3,), (3, 2), (3,)), ((), (1, 2), ())]),
    OpSpec("dstack", lambda lib, x, y: lib.dstack([x, y]), [((3,), (3,)), ((2, 3), (2, 3, 2))]),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def test_split_output_without_gradient_gets_zeros():
    for lib in (gradiente, torch):
        x = lib.arange(6.0, requires_grad=True)
        _, b, _ = x.split(2)
        (b * 3).sum().backward()
        assert x.grad.tolist() == [0, 0, 3, 3, 0, 0]


# --- outputs that carry no gradient ---------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.combinations(lib.tensor([1, 2, 3])),
    lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 0),
    lambda lib: lib.combinations(lib.tensor([1.0, 2.0]), 3),
    lambda lib: lib.combinations(lib.tensor([1, 2]), 3, with_replacement=True),
    lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])),
], ids=lambda fn: "")
def test_values_and_dtypes_match_torch(fn):
    g, t = both(fn)
    same_tensor(g.detach(), t.detach())


def test_tensor_split_pieces_match_torch():
    for args in [(3,), (4,), ([1, 10, 2],), ([-1],), ((2, 2),), (1,)]:
        for dim in (0, 1):
            g, t = both(lambda lib, args=args, dim=dim: lib.tensor_split(lib.arange(35.0).reshape(5, 7), *args,
                                                                         dim=dim))
            assert len(g) == len(t)
            for a, b in zip(g, t):
                same_tensor(a, b)


# --- what comes back as it went in, and views -----------------------------------------------------------

def test_inputs_returned_as_they_are():
    for lib in (gradiente, torch):
        x, v = lib.zeros(3, 4), lib.zeros(4)
        out = lib.broadcast_tensors(x, v)
        assert out[0] is x and out[1] is not v
        assert lib.cartesian_prod(v) is v
        assert lib.atleast_3d(x)._base is x
        y = lib.zeros(2, 3, 4)
        assert lib.atleast_3d(y) is y
        assert isinstance(lib.atleast_3d([y]), tuple)


def test_split_pieces_are_views_that_may_change_in_place():
    """tensor_split makes its pieces one slice at a time: unlike split's, they may be changed in place."""
    def run(lib):
        x = lib.arange(6.0, requires_grad=True)
        y = x * 1
        first, second = lib.tensor_split(y, 2)
        second.mul_(10)
        (y * lib.arange(6.0)).sum().backward()
        return y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__, first._version, second._base is y
    assert run(gradiente) == run(torch)


def test_meshgrid_outputs_share_memory_with_inputs():
    for lib in (gradiente, torch):
        a = lib.tensor([1.0, 2.0])
        grid, _ = lib.meshgrid(a, lib.tensor([3.0, 4.0, 5.0]), indexing="ij")
        a[0] = 7.0
        assert grid[0].tolist() == [7.0, 7.0, 7.0] and grid._base is a


# --- the meshgrid warning ---------------------------------------------------------------------------------

def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


def test_meshgrid_warns_without_indexing_as_torch_does():
    g, t = both(lambda lib: _warnings_of(lambda: lib.meshgrid(lib.zeros(2), lib.zeros(3))))
    assert g == t and len(g) == 1


def test_meshgrid_is_quiet_with_indexing():
    for lib in (gradiente, torch):
        assert _warnings_of(lambda lib=lib: lib.meshgrid(lib.zeros(2), indexing="xy")) == []
        assert _warnings_of(lambda lib=lib: lib.cartesian_prod(lib.zeros(2), lib.zeros(3))) == []


def test_meshgrid_without_indexing_means_ij():
    with pytest.warns(UserWarning):
        grids = gradiente.meshgrid(gradiente.zeros(2), gradiente.zeros(3))
    assert [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]


def test_tensor_methods_exist_where_torch_has_them():
    for name in ["tensor_split", "vsplit", "hsplit", "dsplit"]:
        assert hasattr(torch.Tensor, name) and hasattr(gradiente.Tensor, name), name
    for name in ["meshgrid", "cartesian_prod", "broadcast_tensors", "combinations", "atleast_3d", "column_stack",
                 "dstack"]:
        assert hasattr(gradiente, name) and not hasattr(gradiente.Tensor, name), name


# --- PyTorch's error messages ---------------------------------------------------------------------------

ERRORS = [
    ("cat_sizes", lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(3, 3)], 1)),
    ("cat_ndim", lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(2, 3, 1)])),
    ("cat_empty", lambda lib: lib.cat([])),
    ("cat_dim", lambda lib: lib.cat([lib.zeros(2, 3)], 2)),
    ("stack_sizes", lambda lib: lib.stack([lib.zeros(2, 3), lib.zeros(3, 3)])),
    ("split_zero", lambda lib: lib.zeros(3, 4).split(0)),
    ("split_sizes", lambda lib: lib.zeros(3, 4).split([1, 1])),
    ("chunk_zero", lambda lib: lib.zeros(3, 4).chunk(0)),
    ("tensor_split_0d", lambda lib: lib.tensor_split(lib.tensor(1.0), 2)),
    ("tensor_split_zero_sections", lambda lib: lib.tensor_split(lib.zeros(3), 0)),
    ("tensor_split_float_tensor", lambda lib: lib.tensor_split(lib.zeros(3), lib.tensor([1.0]))),
    ("tensor_split_int_tensor", lambda lib: lib.tensor_split(lib.zeros(3), lib.tensor([1], dtype=lib.int32))),
    ("tensor_split_2d_tensor", lambda lib: lib.tensor_split(lib.zeros(3), lib.tensor([[1]]))),
    ("vsplit_1d", lambda lib: lib.vsplit(lib.zeros(4), 2)),
    ("vsplit_not_divisible", lambda lib: lib.vsplit(lib.zeros(3, 4), 2)),
    ("vsplit_zero", lambda lib: lib.vsplit(lib.zeros(3, 4), 0)),
    ("vsplit_0d_tensor", lambda lib: lib.vsplit(lib.zeros(3, 4), lib.tensor(2))),
    ("hsplit_0d", lambda lib: lib.hsplit(lib.tensor(1.0), 2)),
    ("hsplit_not_divisible", lambda lib: lib.hsplit(lib.zeros(3, 4), 3)),
    ("dsplit_2d", lambda lib: lib.dsplit(lib.zeros(3, 4), 2)),
    ("meshgrid_empty", lambda lib: lib.meshgrid([], indexing="ij")),
    ("meshgrid_indexing", lambda lib: lib.meshgrid(lib.zeros(2), indexing="foo")),
    ("meshgrid_dtypes", lambda lib: lib.meshgrid(lib.zeros(2), lib.tensor([1, 2]), indexing="ij")),
    ("meshgrid_not_tensor", lambda lib: lib.meshgrid(1, indexing="ij")),
    ("cartesian_prod_2d", lambda lib: lib.cartesian_prod(lib.zeros(2), lib.zeros(3, 4))),
    ("cartesian_prod_0d", lambda lib: lib.cartesian_prod(lib.zeros(2), lib.tensor(1.0))),
    ("cartesian_prod_none", lambda lib: lib.cartesian_prod()),
    ("broadcast_tensors_shapes", lambda lib: lib.broadcast_tensors(lib.zeros(3, 4), lib.zeros(4), lib.zeros(2, 1, 3))),
    ("broadcast_tensors_number", lambda lib: lib.broadcast_tensors(lib.zeros(3), 1.0)),
    ("combinations_2d", lambda lib: lib.combinations(lib.zeros(3, 4))),
    ("combinations_negative_r", lambda lib: lib.combinations(lib.zeros(3), -1)),
    ("column_stack_empty", lambda lib: lib.column_stack([])),
    ("dstack_empty", lambda lib: lib.dstack([])),
    ("dstack_shapes", lambda lib: lib.dstack([lib.zeros(3, 4), lib.zeros(3)])),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.cat([x.t(), x.t()]),
    lambda lib, x: lib.cat([x.t(), x.t()], 1),
    lambda lib, x: lib.stack([x.t(), x.t()]),
    lambda lib, x: lib.stack([x.t(), x.t()], 2),
    lambda lib, x: lib.cat(x.t().chunk(2, 0), 1),
], ids=["cat_transposed", "cat_transposed_dim1", "stack_transposed", "stack_last", "cat_chunks"])
def test_result_strides_match_torch(fn):
    check_strides_match_torch(fn)
