"""The ops of ``ops/rearranging.py`` from the op table (repeat, tile, repeat_interleave, flip, fliplr, roll, tril,
triu, diag): gradcheck in float64, differential tests against PyTorch. Then diag's backward, and PyTorch's error
messages."""
import pytest
from harness import OpSpec, check_same_error, spec_tests

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
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- PyTorch's error messages ---------------------------------------------------------------------------

ERRORS = [
    ("repeat_dims", lambda lib: lib.zeros(3, 4).repeat(2)),
    ("tril_1d", lambda lib: lib.zeros(3).tril()),
    ("flip_repeated", lambda lib: lib.zeros(3, 4).flip(0, 0)),
    ("roll_align", lambda lib: lib.zeros(3, 4).roll((1, 2), 0)),
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
