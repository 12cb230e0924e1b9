"""The ops of ``ops/views.py`` from the op table (view, reshape, flatten, unflatten, squeeze, unsqueeze, permute,
transpose, movedim, T, mT, H, expand, broadcast_to, narrow, select, diagonal, clone, contiguous, ravel): gradcheck in
float64, differential tests against PyTorch. Then the behaviours of views: shared memory and version counter,
iteration, and PyTorch's error messages."""
import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")

# ``contiguous_only``: the op needs contiguous input by definition (``view``), so no strided variant.
CONTIGUOUS_ONLY = {"contiguous_only": True}


SPECS = [
    OpSpec("view", lambda lib, x: x.view(6, 4), [((2, 3, 4),)], extra=CONTIGUOUS_ONLY),
    OpSpec("view_infer", lambda lib, x: x.view(-1, 2), [((2, 3, 4),), ((4,),)], extra=CONTIGUOUS_ONLY),
    OpSpec("view_as", lambda lib, x, y: x.view_as(y), [((2, 3), (3, 2))], grad_inputs=[0], extra=CONTIGUOUS_ONLY),
    OpSpec("reshape", lambda lib, x: x.reshape(4, 6), [((2, 3, 4),), ((24,),)]),
    OpSpec("reshape_copy", lambda lib, x: x.transpose(0, 1).reshape(12, 2), [((2, 3, 4),)]),
    OpSpec("reshape_strided_view", lambda lib, x: x.t().reshape(4, 3, 1), [((3, 4),)]),
    OpSpec("reshape_as", lambda lib, x, y: x.reshape_as(y), [((2, 3), (6,))], grad_inputs=[0]),
    OpSpec("flatten", lambda lib, x: x.flatten(), [((2, 3, 4),), ((),)]),
    OpSpec("flatten_range", lambda lib, x: x.flatten(1), [((2, 3, 4),)]),
    OpSpec("flatten_transposed", lambda lib, x: x.t().flatten(), [((3, 4),)]),
    OpSpec("unflatten", lambda lib, x: x.unflatten(1, (2, -1)), [((3, 4),)]),
    OpSpec("unfold_overlapping", lambda lib, x: x.unfold(0, 3, 2), [((7,),), ((7, 2),)]),
    OpSpec("unfold_apart", lambda lib, x: x.unfold(1, 2, 3), [((2, 8),), ((2, 7, 3),)]),
    OpSpec("unfold_0d", lambda lib, x: x.unfold(0, 1, 1), [((),)]),
    OpSpec("squeeze", lambda lib, x: x.squeeze(), [((3, 1, 2),), ((1,),)]),
    OpSpec("squeeze_dim", lambda lib, x: x.squeeze(1), [((3, 1, 2),), ((3, 2),)]),
    OpSpec("squeeze_dims", lambda lib, x: x.squeeze((0, 1)), [((1, 1, 2),), ((3, 1, 2),)]),
    OpSpec("unsqueeze", lambda lib, x: x.unsqueeze(0), [((3,),), ((2, 3),), ((),)]),
    OpSpec("unsqueeze_last", lambda lib, x: x.unsqueeze(-1), [((2, 3),)]),
    OpSpec("permute", lambda lib, x: x.permute(2, 0, 1), [((2, 3, 4),)]),
    OpSpec("permute_tuple", lambda lib, x: x.permute((1, 0)), [((2, 3),)]),
    OpSpec("transpose", lambda lib, x: x.transpose(0, 2), [((2, 3, 4),)]),
    OpSpec("swapaxes", lambda lib, x: x.swapaxes(-1, 0), [((2, 3),)]),
    OpSpec("movedim", lambda lib, x: x.movedim(0, 2), [((2, 3, 4),)]),
    OpSpec("T", lambda lib, x: x.T, [((2, 3),)]),
    OpSpec("mT", lambda lib, x: x.mT, [((2, 3, 4),), ((3, 4),)]),
    OpSpec("H", lambda lib, x: x.H, [((2, 3),)]),
    OpSpec("expand", lambda lib, x: x.expand(2, 3, 4), [((3, 1),), ((4,),), ((1, 1),)]),
    OpSpec("expand_keep", lambda lib, x: x.expand(2, -1, 4), [((3, 1),)]),
    OpSpec("expand_as", lambda lib, x, y: x.expand_as(y), [((3, 1), (3, 4))], grad_inputs=[0]),
    OpSpec("broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 3)), [((3,),)]),
    OpSpec("narrow", lambda lib, x: x.narrow(1, 1, 2), [((3, 4),)]),
    OpSpec("narrow_negative", lambda lib, x: lib.narrow(x, 0, -2, 2), [((3, 4),)]),
    OpSpec("select", lambda lib, x: x.select(1, -1), [((3, 4),)]),
    OpSpec("clone", lambda lib, x: x.clone(), [((2, 3),)]),
    OpSpec("contiguous", lambda lib, x: x.t().contiguous(), [((2, 3),)]),
    OpSpec("diagonal", lambda lib, x: x.diagonal(), [((3, 4),)]),
    OpSpec("diagonal_offset", lambda lib, x: x.diagonal(1, 0, 2), [((3, 2, 4),)]),
    OpSpec("diagonal_negative", lambda lib, x: lib.diagonal(x, -1), [((4, 3),)]),
    OpSpec("ravel", lambda lib, x: lib.ravel(x), [((3,),), ((2, 3),), ((2, 3, 4),)]),
    OpSpec("ravel_transposed", lambda lib, x: x.t().ravel(), [((3, 4),)]),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- views: shared memory, version counter, base ----------------------------------------------------------

VIEWS = [
    ("view", lambda x: x.view(3, 4)),
    ("reshape", lambda x: x.reshape(2, 6)),
    ("flatten", lambda x: x.flatten()),
    ("unflatten", lambda x: x.unflatten(0, (2, 2))),
    ("unfold", lambda x: x.unfold(0, 2, 2)),
    ("squeeze", lambda x: x.unsqueeze(0).squeeze(0)),
    ("unsqueeze", lambda x: x.unsqueeze(1)),
    ("permute", lambda x: x.permute(1, 0)),
    ("transpose", lambda x: x.transpose(0, 1)),
    ("t", lambda x: x.t()),
    ("T", lambda x: x.T),
    ("mT", lambda x: x.mT),
    ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("select", lambda x: x.select(0, 1)),
    ("getitem_int", lambda x: x[1]),
    ("getitem_slice", lambda x: x[:, 1::2]),
    ("getitem_none", lambda x: x[None, 1]),
    ("getitem_ellipsis", lambda x: x[...]),
    ("split", lambda x: x.split(1)[1]),
    ("chunk", lambda x: x.chunk(2, 1)[1]),
    ("unbind", lambda x: x.unbind(1)[2]),
    ("iter", lambda x: list(x)[3]),
    ("diagonal", lambda x: x.diagonal()),
    ("movedim", lambda x: x.movedim(0, 1)),
]


@pytest.mark.parametrize("name,make", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_shares_memory_and_version(name, make):
    for lib in (gradiente, torch):
        base = lib.zeros(4, 3) + lib.arange(12.0).reshape(4, 3)
        v = make(base)
        assert v._base is base, name
        before = base.clone()
        with lib.no_grad():
            v.add_(100)
        changed = (base != before).sum().item()
        assert changed == v.numel(), f"{name}: writing through the view changed {changed} elements of the base"
        assert base._version == v._version == 1, name


def test_expand_is_a_view_that_refuses_writes():
    for lib in (gradiente, torch):
        base = lib.zeros(3, 1)
        e = base.expand(3, 4)
        assert e._base is base
        with pytest.raises(RuntimeError) as err:
            e.add_(1)
        assert "more than one element of the written-to tensor refers to a single memory location" in str(err.value)


def test_copies_do_not_share_memory():
    for lib in (gradiente, torch):
        x = lib.arange(6.0).reshape(2, 3)
        for copy in (x.t().reshape(6), x.clone(), x.flip(0), x.roll(1), x.repeat(1, 1), lib.cat([x]), x.tril()):
            assert copy._base is None
            with lib.no_grad():
                copy.add_(100)
        assert x.max().item() == 5


def test_reshape_views_when_it_can_and_copies_when_it_must():
    x = gradiente.randn(2, 3, 4, requires_grad=True)
    assert type(x.reshape(6, 4).grad_fn).__name__ == "ViewBackward0"
    copied = x.transpose(0, 1).reshape(12, 2)
    assert type(copied.grad_fn).__name__ == "UnsafeViewBackward0"
    assert type(copied.grad_fn.next_functions[0][0]).__name__ == "CloneBackward0"
    assert copied._base is None


def test_view_as_another_dtype_reinterprets_the_bytes():
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, -2.0])
        bits = x.view(lib.int32)
        assert bits.dtype == lib.int32 and bits.shape == (2,) and bits._base is None
        assert bits.tolist() == [1065353216, -1073741824]
        x.add_(1)
        assert bits._version == 1 and bits.tolist() == [1073741824, -1082130432]


def test_contiguous_returns_self_when_contiguous():
    x = gradiente.randn(2, 3, requires_grad=True)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and type(y.grad_fn).__name__ == "CloneBackward0"


def test_clone_keeps_layout():
    g = gradiente.zeros(2, 3).t().clone()
    t = torch.zeros(2, 3).t().clone()
    assert g.stride() == t.stride() and g.is_contiguous() == t.is_contiguous()


def test_iteration_unbinds_rows_and_gradients_flow():
    g, t = gradiente.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True), \
        torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    for x in (g, t):
        rows = list(x)
        assert len(rows) == 3 and all(type(r.grad_fn).__name__ == "UnbindBackward0" for r in rows)
        (rows[0] * rows[2]).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(gradiente.tensor(1.0))


def test_double_backward_through_views():
    x = gradiente.randn(3, 4, dtype=gradiente.float64, requires_grad=True)
    ops = [lambda x: (x.t().reshape(12) ** 2).sum(), lambda x: (x[1:, ::2] ** 3).sum(),
           lambda x: (x.unsqueeze(0).expand(2, 3, 4) ** 2).sum(), lambda x: (lib_cat(x) ** 2).sum(),
           lambda x: (x.diagonal() ** 3).sum(), lambda x: (x.flip(1).roll(1, 0) ** 3).sum(),
           lambda x: (x.tril(1) ** 3).sum(), lambda x: (x.repeat(2, 1) ** 3).sum(),
           lambda x: (gradiente.stack(x.unbind(1)[::2]) ** 3).sum(), lambda x: (x.split([1, 3], 1)[1] ** 3).sum()]
    for fn in ops:
        assert gradiente.autograd.gradgradcheck(fn, (x,))


def lib_cat(x):
    return gradiente.cat([x, x * 2], 1)


def test_T_warns_outside_2d():
    with pytest.warns(UserWarning, match="deprecated"):
        assert gradiente.zeros(2, 3, 4).T.shape == (4, 3, 2)
    with pytest.warns(UserWarning, match="0-D"):
        assert gradiente.tensor(1.0).T.shape == ()


# --- PyTorch's error messages ---------------------------------------------------------------------------

ERRORS = [
    ("view_incompatible", lambda lib: lib.zeros(3, 4).t().view(12)),
    ("unfold_too_long", lambda lib: lib.zeros(3, 4).unfold(0, 8, 1)),
    ("unfold_zero_step", lambda lib: lib.zeros(3, 4).unfold(1, 2, 0)),
    ("view_size", lambda lib: lib.zeros(3, 4).view(5)),
    ("view_infer", lambda lib: lib.zeros(3, 4).view(-1, 5)),
    ("view_two_infers", lambda lib: lib.zeros(3, 4).view(-1, -1)),
    ("view_negative", lambda lib: lib.zeros(3, 4).view(-2, 6)),
    ("reshape_size", lambda lib: lib.zeros(3, 4).reshape(5)),
    ("expand_mismatch", lambda lib: lib.zeros(3, 4).expand(2, 3)),
    ("expand_too_few", lambda lib: lib.zeros(3, 4).expand(4)),
    ("expand_leading_minus_one", lambda lib: lib.zeros(3, 4).expand(-1, 3, 4)),
    ("permute_length", lambda lib: lib.zeros(3, 4).permute(0)),
    ("permute_duplicate", lambda lib: lib.zeros(3, 4).permute(0, 0)),
    ("transpose_dim", lambda lib: lib.zeros(3, 4).transpose(0, 2)),
    ("squeeze_dim", lambda lib: lib.zeros(3, 4).squeeze(2)),
    ("unsqueeze_dim", lambda lib: lib.zeros(3, 4).unsqueeze(3)),
    ("narrow_length", lambda lib: lib.zeros(3, 4).narrow(0, 2, 2)),
    ("narrow_start", lambda lib: lib.zeros(3, 4).narrow(0, 4, 0)),
    ("select_index", lambda lib: lib.zeros(3, 4).select(0, 3)),
    ("unflatten_sizes", lambda lib: lib.zeros(3, 4).unflatten(1, (3, 2))),
    ("flatten_order", lambda lib: lib.zeros(3, 4).flatten(1, 0)),
    ("movedim_count", lambda lib: lib.zeros(3, 4).movedim((0, 1), (1,))),
    ("mT_1d", lambda lib: lib.zeros(3).mT),
    ("H_3d", lambda lib: lib.zeros(2, 3, 4).H),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(6).view(2.0, 3),
    lambda lib: lib.ones(6).view(2.0),
    lambda lib: lib.ones(6).view(2, 3.0),
    lambda lib: lib.arange(6).view((2, 3.0)),
    lambda lib: lib.ones(6).reshape(2.0, 3),
    lambda lib: lib.ones(6).reshape(2, 3.0),
    lambda lib: lib.ones(6).reshape((2.0, 3)),
    lambda lib: lib.ones(2).expand(2.0, 2),
    lambda lib: lib.ones(2, 2).permute(0, 1.0),
], ids=["view_float_first", "view_float", "view_float_later", "view_tuple", "reshape_float_first",
        "reshape_float_later", "reshape_tuple", "expand_float", "permute_float"])
def test_shapes_that_are_not_integers_raise_torchs_type_error(call):
    check_same_error(call)


def test_writing_into_overlapping_windows_is_refused():
    """An intended difference: PyTorch lets ``add_`` write through overlapping windows (each shared element is
    changed several times, in an order it does not define); gradiente refuses with PyTorch's own overlap message."""
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        gradiente.zeros(6).unfold(0, 3, 1).add_(1)
    apart = gradiente.zeros(6)
    apart.unfold(0, 2, 2).add_(1)                   # windows that do not overlap may be written
    assert apart.tolist() == [1.0] * 6
