"""The ops of ``ops/rearranging.py`` from the op table (repeat, tile, repeat_interleave, flip, fliplr, roll, tril,
triu, diag; diff, rot90, vander): gradcheck in float64, differential tests against PyTorch with a non-trivial
upstream gradient, grad_fn names and second derivatives. Then named tests for what the table cannot see: outputs
that carry no gradient (tril_indices, triu_indices, integer inputs), rot90's memory layout, vander's gradient,
diag's backward, and PyTorch's error messages."""
import numpy as np
import pytest
from harness import (
    LAYOUT_IDS,
    NON_CONTIGUOUS_LAYOUTS,
    OpSpec,
    both,
    check_same_error,
    check_strides_match_torch,
    on_both,
    same_tensor,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")

SPECS = [
    OpSpec("repeat", lambda lib, x: x.repeat(2, 1, 3), [((2, 3),)]),
    OpSpec("repeat_same_rank", lambda lib, x: x.repeat(2, 2), [((2, 3),)]),
    OpSpec("tile", lambda lib, x: x.tile((2,)), [((2, 3),)]),
    OpSpec("repeat_interleave", lambda lib, x: x.repeat_interleave(2, dim=1), [((2, 3),)]),
    OpSpec("repeat_interleave_flat", lambda lib, x: lib.repeat_interleave(x, 3), [((2, 3),)]),
    OpSpec("repeat_interleave_counts", lambda lib, x: x.repeat_interleave(lib.tensor([1, 0, 2]), dim=0),
           [((3, 2),)]),
    OpSpec("flip", lambda lib, x: x.flip(0), [((3, 4),)]),
    OpSpec("flip_dims", lambda lib, x: lib.flip(x, (0, -1)), [((2, 3, 4),)]),
    OpSpec("fliplr", lambda lib, x: lib.fliplr(x), [((2, 3),)]),
    OpSpec("roll", lambda lib, x: x.roll(1, 0), [((3, 4),)]),
    OpSpec("roll_dims", lambda lib, x: x.roll((1, -2), (0, 1)), [((3, 4),)]),
    OpSpec("roll_flat", lambda lib, x: x.roll(5), [((3, 4),)]),
    OpSpec("tril", lambda lib, x: x.tril(), [((3, 4),), ((2, 3, 3),)]),
    OpSpec("tril_k", lambda lib, x: lib.tril(x, -1), [((4, 3),)]),
    OpSpec("triu", lambda lib, x: x.triu(1), [((3, 4),)]),
    OpSpec("diag_matrix", lambda lib, x: lib.diag(x), [((3, 4),)]),
    OpSpec("diag_vector", lambda lib, x: lib.diag(x, 1), [((3,),)]),
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
    # vander: PyTorch 2.13 cannot backpropagate through it (see test_vander_gradient), so only the forward is
    # compared with it here; the gradient is checked numerically
    OpSpec("vander", lambda lib, x: lib.vander(x), [((3,),)], torch_grad=False),
    OpSpec("vander_increasing", lambda lib, x: lib.vander(x, 4, increasing=True), [((3,),)], torch_grad=False),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- outputs that carry no gradient ---------------------------------------------------------------------

@pytest.mark.parametrize("fn_name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3), (3, 4), (4, 2), (3, 4, 1), (3, 4, -1), (3, 4, -5), (3, 4, 10), (0, 3),
                                  (1, 1)])
def test_triangle_indices_match_torch(fn_name, args):
    g, t = both(lambda lib: getattr(lib, fn_name)(*args))
    same_tensor(g, t)
    g, t = both(lambda lib: getattr(lib, fn_name)(*args, dtype=lib.int32))
    same_tensor(g, t)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.diff(lib.tensor([True, False, False, True])),
    lambda lib: lib.diff(lib.tensor([1, 4, 9, 16]), n=2),
    lambda lib: lib.diff(lib.tensor([1.0, 2.0]), prepend=lib.tensor([1])),
    lambda lib: lib.diff(lib.tensor([1.0, 2.0, 4.0]), n=5),
    lambda lib: lib.vander(lib.tensor([1, 2, 3], dtype=lib.int32)),
    lambda lib: lib.vander(lib.tensor([True, False]), 3),
    lambda lib: lib.vander(lib.tensor([2.0, 3.0]), 0),
], ids=lambda fn: "")
def test_values_and_dtypes_match_torch(fn):
    g, t = both(fn)
    same_tensor(g.detach(), t.detach())


@pytest.mark.parametrize("k", range(-2, 5))
def test_rot90_memory_layout_matches_torch(k):
    """An odd number of turns gives a transposed (non-contiguous) copy, as in PyTorch."""
    g, t = both(lambda lib: lib.rot90(lib.arange(12.0).reshape(3, 4), k))
    same_tensor(g, t)
    assert g.stride() == t.stride() and g.is_contiguous() == t.is_contiguous()


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


def test_tensor_methods_exist_where_torch_has_them():
    for name in ["diff", "rot90"]:
        assert hasattr(torch.Tensor, name) and hasattr(gradiente.Tensor, name), name
    for name in ["tril_indices", "vander"]:
        assert hasattr(gradiente, name) and not hasattr(gradiente.Tensor, name), name


# --- PyTorch's error messages ---------------------------------------------------------------------------

ERRORS = [
    ("repeat_dims", lambda lib: lib.zeros(3, 4).repeat(2)),
    ("tril_1d", lambda lib: lib.zeros(3).tril()),
    ("flip_repeated", lambda lib: lib.zeros(3, 4).flip(0, 0)),
    ("roll_align", lambda lib: lib.zeros(3, 4).roll((1, 2), 0)),
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
    ("tril_indices_row", lambda lib: lib.tril_indices(-1, 3)),
    ("triu_indices_col", lambda lib: lib.triu_indices(3, -2)),
    ("tril_indices_float", lambda lib: lib.tril_indices(3, 3, dtype=lib.float32)),
    ("triu_indices_int16", lambda lib: lib.triu_indices(3, 3, dtype=lib.int16)),
    ("vander_2d", lambda lib: lib.vander(lib.zeros(2, 2))),
    ("vander_negative_n", lambda lib: lib.vander(lib.zeros(2), -1)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("fn", [lambda lib, x: lib.diag(x, 1), lambda lib, x: lib.diag_embed(x, -1, 0, 1)])
def test_diag_of_a_vector_and_diag_embed_share_pytorchs_backward(fn):
    """Both record DiagEmbedBackward0, whose gradient is ``grad.diagonal(...)``: recorded as PyTorch records it
    under create_graph."""
    names = []
    for lib in (torch, gradiente):
        x = lib.arange(3.0, requires_grad=True)
        y = fn(lib, x)
        v = lib.arange(float(y.numel())).reshape(tuple(y.shape)).requires_grad_()
        (gx,) = lib.autograd.grad(y, x, v, create_graph=True)
        names.append((type(y.grad_fn).__name__, type(gx.grad_fn).__name__, gx.tolist()))
    assert names[1] == names[0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2).repeat(2.0),
    lambda lib: lib.ones(2).repeat(2, 1.0),
    lambda lib: lib.ones(2).tile(2.0),
    lambda lib: lib.ones(2).flip(0.0),
], ids=["repeat", "repeat_later", "tile", "flip"])
def test_counts_that_are_not_integers_raise_torchs_type_error(call):
    check_same_error(call)


@pytest.mark.parametrize("layout", NON_CONTIGUOUS_LAYOUTS, ids=LAYOUT_IDS)
def test_flip_result_is_laid_out_as_the_input_as_in_torch(layout):
    check_strides_match_torch(lambda lib, x: layout(x).flip(0))


def test_flip_of_no_dims_is_a_copy():
    for lib in (gradiente, torch):
        x = lib.arange(3.0)
        x.flip(()).add_(1)
        assert x.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("order", [(1, 0), (2, 1, 0)])
def test_triangles_of_a_transposed_input_are_contiguous(name, order):
    """Issue 13, found by tools/random_programs.py: np.tril kept a transposed input's layout; PyTorch's
    result is contiguous."""
    values = np.random.RandomState(0).standard_normal((2, 3, 4)[:len(order)])
    ours, theirs = (getattr(lib.from_numpy(values).permute(*order), name)() for lib in (gradiente, torch))
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape,dims", [((1,), (-1,)), ((2, 1), (1,)), ((1, 1), (0, 1))])
def test_flip_along_size_one_dims_is_a_copy(shape, dims):
    """Issue 13, found by tools/random_programs.py: flipping dims of size 1 returned a tensor sharing the input's
    memory (NumPy's flipped view counts as contiguous), so a later in-place change of the input showed in it."""
    def scenario(lib):
        x = lib.ones(*shape) * 1
        flipped = x.flip(*dims)
        x.mul_(5)
        return flipped.tolist(), x.tolist()
    on_both(scenario)
