"""The ops of ops/selection.py: clamp (clip, clamp_min, clamp_max, with number or tensor bounds, and in place),
where, maximum, minimum, fmax and fmin (max and min of two tensors are maximum and minimum). From the op table:
float64 gradcheck on contiguous and strided inputs, and differential tests against PyTorch (forward, backward
with a non-trivial upstream gradient, grad_fn names) in float32 and float64. Then dtypes and errors, checked
value for value and dtype for dtype against PyTorch, and the details the table cannot express."""
import numpy as np
import pytest
from harness import (
    BCAST,
    OPERANDS,
    UNARY,
    OpSpec,
    assert_same,
    check_api_names_match_torch,
    check_same_error_first_line,
    check_zero_dim_result_is_writable,
    operand,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")


def condition_and_values(rng, shapes):
    """A boolean condition, then uniform values for the other inputs."""
    return [np.asarray(rng.uniform(size=shapes[0]) > 0.5)] + [rng.uniform(-2, 2, size=s) for s in shapes[1:]]


def ordered_bounds(rng, shapes):
    """x, then a lower bound in (-1, 0) and an upper bound in (0, 1): clamp cuts on both sides."""
    return [rng.uniform(-2, 2, size=shapes[0]), rng.uniform(-1, 0, size=shapes[1]), rng.uniform(0, 1, size=shapes[2])]


SPECS = [
    # clamp / clip, number bounds (ClampBackward1) and tensor bounds (ClampBackward0)
    OpSpec("clamp", lambda lib, x: lib.clamp(x, -0.5, 0.7), UNARY),
    OpSpec("clamp_min_kw", lambda lib, x: lib.clamp(x, min=-0.3), UNARY),
    OpSpec("clamp_max_kw", lambda lib, x: x.clamp(max=0.4), UNARY),
    OpSpec("clip", lambda lib, x: x.clip(-1, 1), UNARY),
    OpSpec("clamp_int_bounds", lambda lib, x: lib.clamp(x, -1, 1), [((2, 3),)]),
    OpSpec("clamp_tensor", lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
           [((3,), (3,), (3,)), ((2, 3), (3,), (2, 1)), ((2, 3), (), ())], make_inputs=ordered_bounds),
    OpSpec("clamp_tensor_crossed", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), [((4, 3), (4, 3), (3,))]),
    OpSpec("clamp_tensor_min", lambda lib, x, lo: lib.clamp(x, min=lo), BCAST),
    OpSpec("clamp_tensor_max", lambda lib, x, hi: x.clamp(max=hi), BCAST),
    OpSpec("clamp_min", lambda lib, x: lib.clamp_min(x, 0.2), UNARY),
    OpSpec("clamp_max", lambda lib, x: x.clamp_max(-0.2), UNARY),
    OpSpec("clamp_min_tensor", lambda lib, x, lo: lib.clamp_min(x, lo), BCAST),
    OpSpec("clamp_max_tensor", lambda lib, x, hi: x.clamp_max(hi), BCAST),
    OpSpec("clamp_", lambda lib, x: (x * 1).clamp_(-0.5, 0.5), UNARY),
    OpSpec("clamp_tensor_", lambda lib, x, lo: (x * 1).clamp_(min=lo), [((2, 3), (3,))]),
    # where
    OpSpec("where", lambda lib, c, x, y: lib.where(c, x, y),
           [((2, 3), (2, 3), (2, 3)), ((2, 1), (3,), (2, 3)), ((3,), (), (2, 3)), ((), (2,), (2,))],
           make_inputs=condition_and_values),
    OpSpec("where_scalar_other", lambda lib, c, x: lib.where(c, x, 0.5), [((2, 3), (2, 3)), ((2, 3), (3,))],
           make_inputs=condition_and_values),
    OpSpec("where_scalar_input", lambda lib, c, y: lib.where(c, 1.5, y), [((2, 3), (2, 3))],
           make_inputs=condition_and_values),
    OpSpec("where_method", lambda lib, c, x, y: x.where(c, y), [((2, 3), (2, 3), (3,))],
           make_inputs=condition_and_values),
    # maximum, minimum, fmax, fmin, max/min of two tensors (ops/reductions.py hands those to maximum/minimum)
    OpSpec("maximum", lambda lib, x, y: lib.maximum(x, y), BCAST),
    OpSpec("minimum", lambda lib, x, y: x.minimum(y), BCAST),
    OpSpec("max_binary", lambda lib, x, y: lib.max(x, y), BCAST),
    OpSpec("min_binary", lambda lib, x, y: x.min(y), BCAST),
    OpSpec("fmax", lambda lib, x, y: lib.fmax(x, y), BCAST),
    OpSpec("fmin", lambda lib, x, y: lib.fmin(x, y), BCAST),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- dtypes and errors against PyTorch ---------------------------------------------------------------------

@pytest.mark.parametrize("op", ["maximum", "minimum", "fmax"])
@pytest.mark.parametrize("a", OPERANDS)
@pytest.mark.parametrize("b", OPERANDS)
def test_binary_dtypes_against_torch(op, a, b):
    assert_same(lambda lib: getattr(lib, op)(operand(lib, a), operand(lib, b)))


@pytest.mark.parametrize("a", OPERANDS)
@pytest.mark.parametrize("bounds", [(0, 2), (0.5, None), (None, 1), (-1, 1.5), (True, None)])
def test_clamp_dtypes(a, bounds):
    assert_same(lambda lib: lib.clamp(operand(lib, a), *bounds))


@pytest.mark.parametrize("a", OPERANDS)
@pytest.mark.parametrize("x", [2, 2.5])
@pytest.mark.parametrize("y", ["i", "f", 0.5, 3])
def test_where_dtypes(a, x, y):
    def fn(lib):
        cond = lib.tensor([True, False, True, False])
        return lib.where(cond, operand(lib, a) if isinstance(x, int) and x == 2 else x,
                         operand(lib, y) if isinstance(y, str) else y)
    assert_same(fn)


@pytest.mark.parametrize("call", [
    lambda lib: lib.clamp(lib.ones(2)),
    lambda lib: lib.where(lib.tensor([1, 0]), lib.ones(2), lib.zeros(2)),
    lambda lib: lib.where(lib.tensor([True]), lib.zeros(2), lib.zeros(3)),
    lambda lib: lib.maximum(lib.zeros(2), lib.zeros(3)),
    lambda lib: lib.maximum(lib.zeros(2), 1),
    lambda lib: lib.tensor([1, 2]).clamp_(0.5),
], ids=lambda f: f.__code__.co_firstlineno)
def test_error_first_lines_match_torch(call):
    check_same_error_first_line(call)


def test_api_names_match_torch():
    check_api_names_match_torch(["clamp_min", "clamp_max"])


# --- details the table cannot express ------------------------------------------------------------------

def test_where_single_argument_gives_indices():
    cond = [[True, False], [False, True]]
    ours, theirs = gradiente.where(gradiente.tensor(cond)), torch.where(torch.tensor(cond))
    assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]
    assert all(t.dtype is gradiente.int64 for t in ours)


def test_clamp_min_above_max_gives_max():
    assert gradiente.clamp(gradiente.tensor([0.0, 5.0]), 2, 1).tolist() == [1.0, 1.0]


def test_maximum_splits_the_gradient_at_ties():
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
        (lib.maximum(x, y) * lib.tensor([2.0, 2.0, 2.0])).sum().backward()
        assert x.grad.tolist() == [1.0, 0.0, 2.0] and y.grad.tolist() == [1.0, 2.0, 0.0]


def test_clamp_gradient_passes_at_the_bounds():
    for lib in (gradiente, torch):
        x = lib.tensor([0.0, 0.5, 1.0, 1.5], requires_grad=True)
        lib.clamp(x, 0.0, 1.0).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0, 1.0, 0.0]


def test_where_next_functions_skip_the_condition():
    x = gradiente.ones(3, requires_grad=True)
    node = gradiente.where(x > 0, x, 0.0).grad_fn
    assert len(node.next_functions) == 2 and node.next_functions[1] == (None, 0)


def test_inplace_modification_of_a_saved_input_is_detected():
    x = gradiente.tensor([0.5, 2.0], requires_grad=True)
    y = x * 1
    z = y.clamp(0, 1)
    y.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_second_derivatives_of_selection_ops():
    x = gradiente.tensor([0.3, -0.8, 1.7], dtype=gradiente.float64, requires_grad=True)
    y = gradiente.tensor([0.9, 0.2, -1.1], dtype=gradiente.float64, requires_grad=True)
    for fn in (lambda a, b: gradiente.maximum(a, b) * a,
               lambda a, b: gradiente.where(a > 0, a * a, b * b * b),
               lambda a, b: gradiente.clamp(a * b, -0.5, 0.5) * a):
        assert gradiente.autograd.gradgradcheck(fn, (x, y))


@pytest.mark.parametrize("op", [lambda x: x.clamp(0, 1), lambda x: gradiente.where(x > 0, x, 0.0),
                                lambda x: gradiente.maximum(x, x), lambda x: gradiente.fmin(x, x)])
def test_zero_dim_results_are_writable_arrays(op):
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    check_zero_dim_result_is_writable(op)
