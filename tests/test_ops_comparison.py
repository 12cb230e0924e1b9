"""The ops of ops/comparison.py: comparisons, logical and bitwise ops (and their operators, reflected and in
place), isnan/isinf/isfinite, isclose, allclose, equal, signbit, isin. They have no gradients: each is checked
value for value and dtype for dtype against PyTorch, with PyTorch's errors, and a comparison is never recorded."""
import pytest
from harness import (
    OPERANDS,
    OpSpec,
    assert_same,
    assert_same_tensors,
    both_quietly,
    check_api_names_match_torch,
    check_same_error,
    check_same_error_first_line,
    check_strides_match_torch,
    check_zero_dim_result_is_writable,
    operand,
    spec_tests,
)
from test_ops_arithmetic import MIXED_LAYOUT_IDS, MIXED_LAYOUTS

import gradiente

torch = pytest.importorskip("torch")

SCALARS = [2, 2.5, True, -1]

# The in-place comparisons are recorded (PyTorch's EqBackward0 for a number, EqBackward1 for a tensor), with a zero
# gradient: their rows check it numerically and against PyTorch.
SPECS = [OpSpec(f"{name}_tensor", lambda lib, x, y, name=name: getattr(x * 1, name)(y), [((2, 3), (3,))])
         for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_")] + \
        [OpSpec(f"{name}_number", lambda lib, x, name=name: getattr(x * 1, name)(0.5), [((2, 3),)])
         for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_")]
test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- dtypes and errors against PyTorch ---------------------------------------------------------------------

@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "greater", "less_equal", "not_equal",
                                "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                                "bitwise_xor", "isclose"])
@pytest.mark.parametrize("a", OPERANDS)
@pytest.mark.parametrize("b", OPERANDS)
def test_binary_dtypes_against_torch(op, a, b):
    assert_same(lambda lib: getattr(lib, op)(operand(lib, a), operand(lib, b)))


@pytest.mark.parametrize("op", ["__eq__", "__ne__", "__lt__", "__ge__", "__and__", "__or__", "__xor__", "__rand__",
                                "__ror__", "eq", "gt"])
@pytest.mark.parametrize("a", OPERANDS)
@pytest.mark.parametrize("s", SCALARS)
def test_scalar_operand_dtypes_against_torch(op, a, s):
    assert_same(lambda lib: getattr(operand(lib, a), op)(s))


@pytest.mark.parametrize("op", ["isnan", "isinf", "isfinite", "logical_not", "bitwise_not"])
@pytest.mark.parametrize("a", OPERANDS)
def test_unary_dtypes_against_torch(op, a):
    assert_same(lambda lib: getattr(lib, op)(operand(lib, a)))


@pytest.mark.parametrize("a", OPERANDS)
def test_invert_operator(a):
    assert_same(lambda lib: ~operand(lib, a))


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2) == lib.zeros(3),
    lambda lib: lib.ones(2) & lib.ones(2),
    lambda lib: ~lib.ones(2),
    lambda lib: lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
], ids=lambda f: f.__code__.co_firstlineno)
def test_error_first_lines_match_torch(call):
    check_same_error_first_line(call)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2, 5])),
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2),
    lambda lib: lib.isin(2, lib.tensor([2, 3])),
    lambda lib: lib.isin(lib.tensor([1.0, 2.0]), lib.tensor([2]), invert=True),
    lambda lib: lib.isin(lib.tensor([[1.0, float("nan")]]), lib.tensor([float("nan"), 1.0])),
], ids=lambda fn: "")
def test_isin_matches_torch(fn):
    assert_same_tensors(*both_quietly(fn), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.isin(lib.tensor([1j]), lib.tensor([1j])),
], ids=lambda fn: "")
def test_isin_errors_match_torch(fn):
    check_same_error(fn)


def test_api_names_match_torch():
    check_api_names_match_torch(["signbit"])


# --- details --------------------------------------------------------------------------------------------

def test_python_bool_results():
    for lib in (gradiente, torch):
        a, b = lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0 + 1e-6])
        assert lib.equal(a, a.clone() if hasattr(a, "clone") else a * 1) is True
        assert lib.equal(a, lib.tensor([1.0])) is False
        assert lib.equal(lib.tensor([1, 2]), lib.tensor([1, 2], dtype=lib.int32)) is True
        assert lib.allclose(a, b) is True
        assert lib.allclose(a, b, rtol=0, atol=0) is False
        assert (a == None) is False  # noqa: E711 - Tensor.__eq__ with None is under test
        assert (a != "x") is True


def test_hash_stays_identity_based():
    a, b = gradiente.tensor([1.0]), gradiente.tensor([1.0])
    assert len({a, b}) == 2 and {a: 1}[a] == 1


def test_comparisons_are_not_recorded():
    x = gradiente.tensor([1.0, -1.0], requires_grad=True)
    for result in (x > 0, x == 1, gradiente.isnan(x), gradiente.logical_not(x), x.isclose(x)):
        assert result.grad_fn is None and not result.requires_grad and result.dtype is gradiente.bool


def test_reflected_comparisons_and_bitwise():
    x = gradiente.tensor([1, 2, 3])
    assert (1 < x).tolist() == [False, True, True]  # noqa: SIM300 - the reflected operator is under test
    assert (2 >= x).tolist() == [True, True, False]  # noqa: SIM300
    assert (6 & x).tolist() == [0, 2, 2]
    assert (True ^ gradiente.tensor([True, False])).tolist() == [False, True]


def test_inplace_bitwise_and_logical():
    for lib in (gradiente, torch):
        m = lib.tensor([True, False, True])
        m &= lib.tensor([True, True, False])
        m |= lib.tensor([False, True, False])
        m ^= lib.tensor([True, False, False])
        assert m.tolist() == [False, True, False]
        assert lib.tensor([1.0, 0.0]).logical_and_(lib.tensor([1.0, 1.0])).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("op", [lambda x: ~(x > 0), lambda x: x == 1])
def test_zero_dim_results_are_writable_arrays(op):
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    check_zero_dim_result_is_writable(op)


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_equal_", "less_"])
def test_in_place_comparisons_write_zero_one_and_pass_a_zero_gradient(name):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        getattr(y, name)(lib.tensor([1.0, 0.0, 3.0]))
        ints = lib.tensor([1, 2, 3])
        getattr(ints, name)(2)
        y.sum().backward()
        return y.detach().tolist(), str(y.dtype)[-7:], y.grad_fn.name(), x.grad.tolist(), ints.tolist()
    assert run(gradiente) == run(torch)


@pytest.mark.parametrize("pair", MIXED_LAYOUTS, ids=MIXED_LAYOUT_IDS)
def test_result_of_operands_laid_out_differently_has_torchs_strides(pair):
    check_strides_match_torch(lambda lib, x: pair(x)[0] > pair(x)[1])
