"""The assembling ops (``ops/assembling.py``) from the op table: gradcheck in float64, differential tests against
PyTorch with a non-trivial upstream gradient, grad_fn names and second derivatives. Then named tests for what
the table cannot see: outputs that carry no gradient (positions, counts), views and in-place forms, the
meshgrid warning, ties and zeros in scatter_reduce, and PyTorch's error messages."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def _pieces_weighted(lib, pieces):
    """Every output of a multi-output op, each scaled differently, joined so that each piece's gradient counts."""
    return lib.cat([p.reshape(-1) * (k + 1) for k, p in enumerate(pieces)])


SPECS = [
    # differences and rotations
    OpSpec("diff", lambda lib, x: lib.diff(x), [((3, 4),), ((5,),)]),
    OpSpec("diff_n2_dim0", lambda lib, x: x.diff(n=2, dim=0), [((4, 3),)]),
    OpSpec("diff_n_past_length", lambda lib, x: lib.diff(x, n=3), [((2, 3),)]),
    OpSpec("diff_prepend_append", lambda lib, x, p, q: lib.diff(x, prepend=p, append=q), [((3, 4), (3, 1), (3, 2))]),
    OpSpec("diff_n0", lambda lib, x: lib.diff(x, n=0), [((3,),)]),
    OpSpec("rot90", lambda lib, x: lib.rot90(x), [((3, 4),)]),
    OpSpec("rot90_k2", lambda lib, x: x.rot90(2), [((3, 4),)]),
    OpSpec("rot90_k3_dims", lambda lib, x: lib.rot90(x, 3, (1, 2)), [((2, 3, 4),)]),
    OpSpec("rot90_negative", lambda lib, x: lib.rot90(x, -1, [1, 0]), [((3, 4),)]),
    OpSpec("rot90_k0", lambda lib, x: lib.rot90(x, 4), [((3, 4),)]),
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
    # vander: PyTorch 2.13 cannot backpropagate through it (see test_vander_gradient), so only the forward is
    # compared with it here; the gradient is checked numerically
    OpSpec("vander", lambda lib, x: lib.vander(x), [((3,),)], torch_grad=False),
    OpSpec("vander_increasing", lambda lib, x: lib.vander(x, 4, increasing=True), [((3,),)], torch_grad=False),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _both(fn):
    """``fn(lib)`` for gradiente and for PyTorch."""
    return fn(gradiente), fn(torch)


def _same_tensor(g, t):
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_array_equal(g.numpy(), t.numpy())


# --- outputs that carry no gradient ---------------------------------------------------------------------

@pytest.mark.parametrize("fn_name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3), (3, 4), (4, 2), (3, 4, 1), (3, 4, -1), (3, 4, -5), (3, 4, 10), (0, 3),
                                  (1, 1)])
def test_triangle_indices_match_torch(fn_name, args):
    g, t = _both(lambda lib: getattr(lib, fn_name)(*args))
    _same_tensor(g, t)
    g, t = _both(lambda lib: getattr(lib, fn_name)(*args, dtype=lib.int32))
    _same_tensor(g, t)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.diff(lib.tensor([True, False, False, True])),
    lambda lib: lib.diff(lib.tensor([1, 4, 9, 16]), n=2),
    lambda lib: lib.diff(lib.tensor([1.0, 2.0]), prepend=lib.tensor([1])),
    lambda lib: lib.diff(lib.tensor([1.0, 2.0, 4.0]), n=5),
    lambda lib: lib.combinations(lib.tensor([1, 2, 3])),
    lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 0),
    lambda lib: lib.combinations(lib.tensor([1.0, 2.0]), 3),
    lambda lib: lib.combinations(lib.tensor([1, 2]), 3, with_replacement=True),
    lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])),
    lambda lib: lib.vander(lib.tensor([1, 2, 3], dtype=lib.int32)),
    lambda lib: lib.vander(lib.tensor([True, False]), 3),
    lambda lib: lib.vander(lib.tensor([2.0, 3.0]), 0),
], ids=lambda fn: "")
def test_values_and_dtypes_match_torch(fn):
    g, t = _both(fn)
    _same_tensor(g.detach(), t.detach())


def test_tensor_split_pieces_match_torch():
    for args in [(3,), (4,), ([1, 10, 2],), ([-1],), ((2, 2),), (1,)]:
        for dim in (0, 1):
            g, t = _both(lambda lib, args=args, dim=dim: lib.tensor_split(lib.arange(35.0).reshape(5, 7), *args,
                                                                         dim=dim))
            assert len(g) == len(t)
            for a, b in zip(g, t):
                _same_tensor(a, b)


@pytest.mark.parametrize("k", range(-2, 5))
def test_rot90_memory_layout_matches_torch(k):
    """An odd number of turns gives a transposed (non-contiguous) copy, as in PyTorch."""
    g, t = _both(lambda lib: lib.rot90(lib.arange(12.0).reshape(3, 4), k))
    _same_tensor(g, t)
    assert g.stride() == t.stride() and g.is_contiguous() == t.is_contiguous()


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
    g, t = _both(lambda lib: _warnings_of(lambda: lib.meshgrid(lib.zeros(2), lib.zeros(3))))
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
    names = ["diff", "rot90", "tensor_split", "vsplit", "hsplit", "dsplit"]
    for name in names:
        assert hasattr(torch.Tensor, name) and hasattr(gradiente.Tensor, name), name
    for name in ["meshgrid", "cartesian_prod", "broadcast_tensors", "combinations", "tril_indices", "vander",
                 "atleast_3d", "column_stack", "dstack"]:
        assert hasattr(gradiente, name) and not hasattr(gradiente.Tensor, name), name


# --- numerics ---------------------------------------------------------------------------------------------


def test_vander_gradient():
    """Intended difference: PyTorch 2.13's vander raises on backward (its cumprod's saved input is then
    overwritten); gradiente's gives the gradient of the same values, here checked against PyTorch's gradient
    of the powers written out."""
    x = torch.tensor([1.5, -2.0, 0.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.vander(x).sum().backward()
    upstream = torch.arange(1.0, 13.0).reshape(3, 4)
    powers = torch.stack([x ** k for k in range(3, -1, -1)], 1)
    powers.backward(upstream)
    g = gradiente.tensor([1.5, -2.0, 0.5], requires_grad=True)
    out = gradiente.vander(g, 4)
    out.backward(gradiente.arange(1.0, 13.0).reshape(3, 4))
    np.testing.assert_allclose(out.detach().numpy(), powers.detach().numpy())
    np.testing.assert_allclose(g.grad.numpy(), x.grad.numpy(), rtol=1e-6)
    t_out = torch.vander(x.detach().requires_grad_(), 4)
    assert type(out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "FlipBackward0"
    assert type(out.grad_fn.next_functions[0][0]).__name__ == type(t_out.grad_fn.next_functions[0][0]).__name__


# --- PyTorch's error messages -------------------------------------------------------------------------------

ERRORS = [
    ("diff_0d", lambda lib: lib.diff(lib.tensor(1.0))),
    ("diff_negative_order", lambda lib: lib.diff(lib.zeros(3), n=-1)),
    ("diff_dim", lambda lib: lib.diff(lib.zeros(3, 4), dim=2)),
    ("diff_prepend_ndim", lambda lib: lib.diff(lib.zeros(3, 4), prepend=lib.zeros(4))),
    ("diff_prepend_shape", lambda lib: lib.diff(lib.zeros(3, 4), prepend=lib.zeros(2, 2))),
    ("diff_prepend_number", lambda lib: lib.diff(lib.zeros(3), prepend=1.0)),
    ("rot90_three_dims", lambda lib: lib.rot90(lib.zeros(3, 4), 1, [0, 1, 2])),
    ("rot90_1d", lambda lib: lib.rot90(lib.zeros(3))),
    ("rot90_same_dims", lambda lib: lib.rot90(lib.zeros(3, 4), 1, [0, -2])),
    ("rot90_dim_range", lambda lib: lib.rot90(lib.zeros(3, 4), 1, [0, 2])),
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
    ("tril_indices_row", lambda lib: lib.tril_indices(-1, 3)),
    ("triu_indices_col", lambda lib: lib.triu_indices(3, -2)),
    ("tril_indices_float", lambda lib: lib.tril_indices(3, 3, dtype=lib.float32)),
    ("triu_indices_int16", lambda lib: lib.triu_indices(3, 3, dtype=lib.int16)),
    ("combinations_2d", lambda lib: lib.combinations(lib.zeros(3, 4))),
    ("combinations_negative_r", lambda lib: lib.combinations(lib.zeros(3), -1)),
    ("column_stack_empty", lambda lib: lib.column_stack([])),
    ("dstack_empty", lambda lib: lib.dstack([])),
    ("dstack_shapes", lambda lib: lib.dstack([lib.zeros(3, 4), lib.zeros(3)])),
    ("vander_2d", lambda lib: lib.vander(lib.zeros(2, 2))),
    ("vander_negative_n", lambda lib: lib.vander(lib.zeros(2), -1)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)
