"""The ops of ``ops/joining.py`` from the op table (cat, concat, stack, hstack, vstack, split, chunk, unbind and
iteration): gradcheck in float64, differential tests against PyTorch. Then split's outputs without a gradient,
and PyTorch's error messages."""
import pytest
from harness import OpSpec, check_same_error, spec_tests

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
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def test_split_output_without_gradient_gets_zeros():
    for lib in (gradiente, torch):
        x = lib.arange(6.0, requires_grad=True)
        _, b, _ = x.split(2)
        (b * 3).sum().backward()
        assert x.grad.tolist() == [0, 0, 3, 3, 0, 0]


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
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)
