"""``torch.slice_inverse`` (``ops/slice_inverse.py``) against PyTorch 2.13: the base of a slice seen again through
the slice, its values, its node (SliceInverseBackward0, with edges to the slice and to ``src``), the gradients
each receives, float64 gradchecks, and the out-of-bounds error of a slice that does not hold ``src``."""
import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")


def _slice(dim, start, end, step):
    index = [slice(None)] * 2
    index[dim] = slice(start, end, step)
    return tuple(index)


def _inverse_of_slice(dim, start, end, step):
    """The op on ``x``: the slice of a base made from x, seen again as the base (both the same memory)."""
    def fn(lib, x):
        base = x * 1
        return lib.slice_inverse(base[_slice(dim, start, end, step)], base, dim, start, end, step)
    return fn


SPECS = [
    OpSpec("slice_inverse_rows", _inverse_of_slice(0, 2, 5, 1), [((6, 5),)]),
    OpSpec("slice_inverse_every_other_row", _inverse_of_slice(0, 0, 6, 2), [((6, 5),)]),
    OpSpec("slice_inverse_columns_to_the_end", _inverse_of_slice(1, 1, None, 1), [((6, 5),)]),
    OpSpec("slice_inverse_last_dim_stepped", _inverse_of_slice(-1, None, 3, 2), [((6, 5),)]),
    OpSpec("tensor_slice_inverse", lambda lib, x: (x * 1)[:, 1:3].slice_inverse(x * 1, 1, 1, 3) * 1, [((4, 5),)]),
]
test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _leaf(lib, shape, seed):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def test_src_gets_the_gradient_outside_the_slice():
    grads = []
    for lib in (gradiente, torch):
        x, src = _leaf(lib, (6,), 0), _leaf(lib, (6,), 1)
        out = lib.slice_inverse((x * 1)[2:4], src * 1, 0, 2, 4)
        assert type(out.grad_fn).__name__ == "SliceInverseBackward0" and len(out.grad_fn.next_functions) == 2
        out.backward(lib.arange(1.0, 7.0, dtype=lib.float64))
        grads.append((x.grad.tolist(), src.grad.tolist()))
    assert grads[0] == grads[1]


def test_gradcheck_through_a_strided_slice():
    x = _leaf(gradiente, (6, 4), 2)
    assert gradcheck(lambda t: (t * 1)[:, ::2].slice_inverse(t * 1, 1, None, None, 2), (x,))


def test_a_slice_that_does_not_hold_src_is_refused():
    check_same_error(lambda lib: lib.slice_inverse(lib.ones(3), lib.zeros(10), 0, 2, 5))
