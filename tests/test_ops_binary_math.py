"""The ops of ops/binary_math.py: atan2, hypot, lerp, xlogy, logaddexp, logaddexp2, copysign, nextafter, ldexp,
heaviside, gcd and lcm. From the op table: float64 gradcheck on contiguous and strided inputs, differential tests
against PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names) in float32 and float64,
and second derivatives; then dtypes against PyTorch, values at the edges (infinities, nan, ±0.0, overflow) in
float64, float32 and float16, the integer ops, in-place forms, node names, and PyTorch's error messages.

Where gradiente is the more accurate of the two (PyTorch's gradient of ldexp for a negative integer exponent is
0), a named test checks gradiente against the true value instead."""
import math

import numpy as np
import pytest
from harness import (
    BCAST,
    OPERANDS,
    POSITIVE,
    UNARY,
    OpSpec,
    assert_same,
    assert_same_tensors,
    assert_same_values,
    both,
    check_api_names_match_torch,
    check_same_error,
    check_same_error_first_line,
    check_zero_dim_result_is_writable,
    on_both,
    operand,
    plain,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")

#: BCAST without its 3-d case, for the rows of logaddexp, copysign, nextafter and ldexp
BCAST_2D = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]


def with_zeros(rng, shapes):
    """Positive values, the first input with some exact zeros (xlogy is 0 there, its x-derivative log y)."""
    arrays = [rng.uniform(0.5, 2, size=s) for s in shapes]
    arrays[0] = arrays[0] * (rng.uniform(size=shapes[0]) > 0.4)
    return arrays


def unit_weights(rng, shapes):
    """start, end, and weights in (-1, 2): both of lerp's formulas (|w| < 0.5 and not) are used."""
    return [rng.uniform(-2, 2, size=shapes[0]), rng.uniform(-2, 2, size=shapes[1]), rng.uniform(-1, 2, size=shapes[2])]


def float_and_int_exponents(rng, shapes):
    """Exponents from 0 up: PyTorch's gradient for a negative integer exponent is 0 (it computes 2^y in integers),
    see test_ldexp_gradient_for_negative_integer_exponents."""
    return [np.asarray(rng.uniform(-2, 2, size=shapes[0])), np.asarray(rng.randint(0, 5, size=shapes[1]))]


def away_from_zero(rng, shapes):
    """Values with |x| in (0.2, 2) and either sign: copysign's derivative is ±1 there."""
    return [np.asarray(rng.uniform(0.2, 2, size=s) * rng.choice([-1.0, 1.0], size=s)) for s in shapes]


SPECS = [
    # atan2, hypot, lerp, xlogy
    OpSpec("atan2", lambda lib, x, y: lib.atan2(x, y), BCAST),
    OpSpec("arctan2_method", lambda lib, x, y: x.arctan2(y), [((2, 3), (3,))]),
    OpSpec("hypot", lambda lib, x, y: lib.hypot(x, y), BCAST),
    OpSpec("lerp_small_weight", lambda lib, x, y: lib.lerp(x, y, 0.3), BCAST),
    OpSpec("lerp_large_weight", lambda lib, x, y: x.lerp(y, 0.8), BCAST),
    OpSpec("lerp_tensor_weight", lambda lib, x, y, w: lib.lerp(x, y, w),
           [((3,), (3,), (3,)), ((2, 3), (3,), (2, 1)), ((2, 3), (2, 3), ())], make_inputs=unit_weights),
    OpSpec("lerp_", lambda lib, x, y: (x * 1).lerp_(y, 0.25), [((2, 3), (3,))]),
    OpSpec("xlogy", lambda lib, x, y: lib.xlogy(x, y), BCAST, domain=POSITIVE),
    OpSpec("xlogy_zeros", lambda lib, x, y: lib.xlogy(x, y), [((4, 3), (3,))], make_inputs=with_zeros),
    OpSpec("xlogy_scalar_self", lambda lib, y: lib.xlogy(2.5, y), UNARY, domain=POSITIVE),
    OpSpec("xlogy_scalar_other", lambda lib, x: x.xlogy(3.0), UNARY),
    # logaddexp, logaddexp2, copysign, nextafter, ldexp
    OpSpec("logaddexp", lambda lib, x, y: lib.logaddexp(x, y), BCAST_2D),
    OpSpec("logaddexp2", lambda lib, x, y: x.logaddexp2(y), BCAST_2D),
    OpSpec("copysign", lambda lib, x, y: lib.copysign(x, y), BCAST_2D, make_inputs=away_from_zero),
    OpSpec("copysign_number", lambda lib, x: x.copysign(-1.5), UNARY, make_inputs=away_from_zero),
    OpSpec("nextafter", lambda lib, x, y: lib.nextafter(x, y), BCAST_2D),
    OpSpec("ldexp_float_exponent", lambda lib, x, y: lib.ldexp(x, y), BCAST_2D),
    OpSpec("ldexp_int_exponent", lambda lib, x, e: x.ldexp(e), [((2, 3), (3,)), ((3,), ())],
           make_inputs=float_and_int_exponents),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- details the table cannot express ------------------------------------------------------------------

@pytest.mark.parametrize("op", ["atan2", "hypot", "xlogy"])
@pytest.mark.parametrize("a", OPERANDS)
@pytest.mark.parametrize("b", OPERANDS)
def test_binary_dtypes_against_torch(op, a, b):
    assert_same(lambda lib: getattr(lib, op)(operand(lib, a), operand(lib, b)))


def test_lerp_float32_matches_torch_bit_for_bit():
    rng = np.random.RandomState(0)
    a, b = rng.randn(1000).astype(np.float32), rng.randn(1000).astype(np.float32)
    for w in (0.1, 0.3, 0.7, 0.9):
        ours = gradiente.lerp(gradiente.from_numpy(a), gradiente.from_numpy(b), w)._data
        np.testing.assert_array_equal(ours, torch.lerp(torch.from_numpy(a), torch.from_numpy(b), w).numpy())


def test_second_derivatives_of_binary_math_ops():
    x = gradiente.tensor([0.3, -0.8, 1.7], dtype=gradiente.float64, requires_grad=True)
    y = gradiente.tensor([0.9, 0.2, -1.1], dtype=gradiente.float64, requires_grad=True)
    for fn in (gradiente.atan2, lambda a, b: gradiente.lerp(a, b, 0.3) ** 2, gradiente.hypot):
        assert gradiente.autograd.gradgradcheck(fn, (x, y))


@pytest.mark.parametrize("op", [lambda x: x.lerp(x * 2, 0.3), lambda x: x.atan2(x), lambda x: x.hypot(x),
                                lambda x: x.xlogy(x)])
def test_zero_dim_results_are_writable_arrays(op):
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    check_zero_dim_result_is_writable(op)


# --- values at the edges, against PyTorch ----------------------------------------------------------------------

def test_ldexp_gradient_for_negative_integer_exponents():
    """dx = 2^y. PyTorch computes 2^y in integers for an integer y, so its gradient is 0 for y < 0; gradiente
    gives the true derivative there (and PyTorch's everywhere else)."""
    x = gradiente.tensor([1.5, 2.0, -3.0], requires_grad=True)
    gradiente.ldexp(x, gradiente.tensor([-4, 2, 0])).sum().backward()
    assert x.grad.tolist() == [0.0625, 4.0, 1.0]


def test_logaddexp_at_infinities_matches_torch():
    a = np.array([1.5, -math.inf, math.inf, -math.inf, math.nan, math.inf, 800.0])
    b = np.array([-1.0, 2.5, math.inf, -math.inf, 1.0, 1.0, 799.0])
    for name in ("logaddexp", "logaddexp2"):
        x, y = gradiente.tensor(a, requires_grad=True), gradiente.tensor(b, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        ours, theirs = getattr(gradiente, name)(x, y), getattr(torch, name)(tx, ty)
        assert_same_values(ours, theirs, 1e-15)
        ours.backward(gradiente.ones(7, dtype=gradiente.float64))
        theirs.backward(torch.ones(7, dtype=torch.float64))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-15)
        np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-15)


def test_copysign_values_dtypes_and_gradient_at_zero():
    a = np.array([1.0, -2.0, math.nan, 3.0, 0.0, -0.0, math.inf])
    b = np.array([-0.0, 0.0, -1.0, math.nan, -1.0, 1.0, -2.0])
    x, t = gradiente.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, u = gradiente.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    ours, theirs = gradiente.copysign(x, y), torch.copysign(t, u)
    np.testing.assert_array_equal(np.signbit(ours.detach().numpy()), np.signbit(theirs.detach().numpy()))
    assert_same_values(ours, theirs, 0)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), u.grad.numpy())
    for other in (-1, 2.5, True):
        assert_same_values(gradiente.copysign(gradiente.tensor([1, -2]), other),
                           torch.copysign(torch.tensor([1, -2]), other), 0)
    assert_same_values(gradiente.copysign(gradiente.tensor([1.0, -2.0], dtype=gradiente.float16), -1.0),
                       torch.copysign(torch.tensor([1.0, -2.0], dtype=torch.float16), -1.0), 0)


def test_nextafter_steps_one_ulp():
    for dtype in ("float64", "float32", "float16"):
        a = np.array([0.0, 1.0, math.nan, math.inf, 1.0, -0.0], dtype=dtype)
        b = np.array([1.0, 0.0, 1.0, 0.0, 1.0, -1.0], dtype=dtype)
        ours = gradiente.nextafter(gradiente.from_numpy(a), gradiente.from_numpy(b))
        theirs = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_ldexp_exact_powers_and_overflow_like_torch():
    cases = [
        (np.array([0.0, 1.0, 3.0, 1e-30], np.float32), np.array([200, 130, -150, 110])),
        (np.array([0.0, 3.0, 1.0], np.float64), np.array([1200, -1075, -1074])),
        (np.array([0.0, 3.0, 1.0], np.float16), np.array([20, -25, -24])),
        (np.array([0, 3, 1]), np.array([200, -150, -149])),                          # integers: x·2^y in float32
        (np.array([0.0, 1.0, 1.5]), np.array([200.0, 0.5, -0.3])),                   # a float exponent
        (np.array([1.5, 2.0], np.float32), np.array([1.0, 2.5], np.float64)),
        (np.array([True, False]), np.array([True, True])),
    ]
    for a, b in cases:
        ours = gradiente.ldexp(gradiente.from_numpy(a), gradiente.from_numpy(b))
        theirs = torch.ldexp(torch.from_numpy(a), torch.from_numpy(b))
        assert_same_values(ours, theirs, 1e-15)


def test_heaviside_values_and_no_derivative():
    a = np.array([-1.0, 0.0, 2.0, math.nan, -0.0])
    v = np.array([0.5, 0.5, 0.5, 0.5, 7.0])
    assert_same_values(gradiente.heaviside(gradiente.from_numpy(a), gradiente.from_numpy(v)),
                       torch.heaviside(torch.from_numpy(a), torch.from_numpy(v)), 0)
    for ints in (np.array([-2, 0, 3]), np.array([True, False, True])):
        np.testing.assert_array_equal(gradiente.heaviside(gradiente.from_numpy(ints), gradiente.from_numpy(ints)),
                                      torch.heaviside(torch.from_numpy(ints), torch.from_numpy(ints)))
    x = gradiente.tensor([1.5, -2.0], requires_grad=True)
    out = gradiente.heaviside(x, gradiente.tensor([0.5, 0.5]))
    assert type(out.grad_fn).__name__ == "NotImplemented"
    assert out.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError) as failure:
        out.sum().backward()
    assert str(failure.value) == "derivative for aten::heaviside is not implemented"


def test_gcd_and_lcm_match_torch():
    a, b = np.array([0, -4, 6, 0, -2 ** 63, 12]), np.array([0, 6, -9, 5, 0, 18])
    for name in ("gcd", "lcm"):
        for dtype in ("int64", "int32", "int16", "int8", "uint8"):
            x = np.abs(a).astype(dtype) if dtype == "uint8" else a.astype(dtype)
            y = np.abs(b).astype(dtype) if dtype == "uint8" else b.astype(dtype)
            ours = getattr(gradiente, name)(gradiente.from_numpy(x), gradiente.from_numpy(y))
            theirs = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
            assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    # lcm wraps around on overflow, as PyTorch's does
    big = gradiente.lcm(gradiente.tensor([2 ** 40]), gradiente.tensor([2 ** 40 + 1]))
    assert big.tolist() == torch.lcm(torch.tensor([2 ** 40]), torch.tensor([2 ** 40 + 1])).tolist()
    assert gradiente.gcd(gradiente.tensor([4], dtype=gradiente.int32), gradiente.tensor([6])).dtype is gradiente.int64


# --- methods, in-place forms, names ---------------------------------------------------------------------------

def test_binary_inplace_forms():
    for name, other in (("copysign_", -1.0), ("heaviside_", np.array([0.5])), ("nextafter_", np.array([0.0])),
                        ("ldexp_", np.array([3]))):
        values = np.array([0.5, -1.5, 0.0])
        ours, theirs = gradiente.from_numpy(values.copy()), torch.from_numpy(values.copy())
        wrap_g = gradiente.from_numpy(other) if isinstance(other, np.ndarray) else other
        wrap_t = torch.from_numpy(other) if isinstance(other, np.ndarray) else other
        getattr(ours, name)(wrap_g)
        getattr(theirs, name)(wrap_t)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    a = gradiente.tensor([12, 18])
    a.gcd_(gradiente.tensor([8, 27]))
    assert a.tolist() == [4, 9]
    a.lcm_(gradiente.tensor([6, 6]))
    assert a.tolist() == [12, 18]


def test_api_names_match_torch():
    check_api_names_match_torch(["logaddexp", "logaddexp2", "heaviside", "copysign", "nextafter", "ldexp", "gcd",
                                 "lcm"])


def test_grad_fn_names_of_the_integer_exponent_and_number_forms():
    x = gradiente.tensor([1.5, 2.0], requires_grad=True)
    assert type(gradiente.copysign(x, -1.0).grad_fn).__name__ == "CopysignBackward1"
    assert type(gradiente.copysign(x, gradiente.tensor([1.0, -1.0])).grad_fn).__name__ == "CopysignBackward0"
    out = gradiente.ldexp(x, gradiente.tensor([1, 2]))
    assert type(out.grad_fn).__name__ == "LdexpBackward0" and out.grad_fn.next_functions[1] == (None, 0)


# --- errors ---------------------------------------------------------------------------------------------------

ERRORS = [
    lambda lib: lib.logaddexp(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.logaddexp2(lib.tensor([True]), lib.tensor([False])),
    lambda lib: lib.logaddexp(lib.tensor([1.0]), 2.0),
    lambda lib: lib.nextafter(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.nextafter(lib.tensor([1.0]), 2.0),
    lambda lib: lib.heaviside(lib.tensor([1.0]), lib.tensor([1], dtype=lib.int64)),
    lambda lib: lib.heaviside(lib.tensor([1.0]), 0.5),
    lambda lib: lib.ldexp(lib.tensor([1.0]), 2.0),
    lambda lib: lib.ldexp(lib.tensor([1.0, 2.0]), lib.tensor([True, False])),
    lambda lib: lib.gcd(lib.tensor([1.0]), lib.tensor([2])),
    lambda lib: lib.gcd(lib.tensor([True]), lib.tensor([True])),
    lambda lib: lib.lcm(lib.tensor([4]), 6),
    lambda lib: lib.tensor([1, 2]).copysign_(lib.tensor([1, -2])),
    lambda lib: lib.logaddexp(lib.ones(2, 3), lib.ones(4)),
    lambda lib: lib.copysign(lib.ones(2, 3), lib.ones(4)),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    check_same_error(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.atan2(lib.zeros(2), 2.0),
    lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5),
    lambda lib: lib.lerp(lib.ones(2), lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.lerp(lib.tensor([1, 2]), lib.tensor([1, 2]), 0.5),
], ids=lambda f: f.__code__.co_firstlineno)
def test_error_first_lines_match_torch(call):
    check_same_error_first_line(call)


@pytest.mark.parametrize("tensors,weight", [("float64", "float32"), ("float32", "float64"), ("float32", "int64"),
                                            ("float64", "float64")])
def test_lerp_zero_dim_weight_of_another_dtype_acts_as_a_number(tensors, weight):
    """A 0-d weight is PyTorch's wrapped number: its dtype neither has to match nor changes the result's."""
    def run(lib):
        kind = getattr(lib, tensors)
        start = lib.tensor([0.0, 1.0, -2.0], dtype=kind, requires_grad=True)
        end = lib.tensor([1.0, 3.0, 2.0], dtype=kind, requires_grad=True)
        w = lib.tensor(0.75 if weight.startswith("float") else 1, dtype=getattr(lib, weight))
        if w.is_floating_point():
            w.requires_grad_()
        out = lib.lerp(start, end, w)
        (out * lib.arange(3.0, dtype=kind)).sum().backward()
        return out, start.grad, end.grad, *((w.grad,) if w.requires_grad else ())
    ours, theirs = both(run)
    assert_same_tensors(ours, theirs)


@pytest.mark.parametrize("weight_shape", [(1,), (3,)])
def test_lerp_weight_with_dims_must_match_dtype(weight_shape):
    check_same_error(lambda lib: lib.lerp(lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64),
                                          lib.full(weight_shape, 0.5)))


def test_atan2_gradient_at_the_origin_is_pytorchs():
    """(0, -0) at (0, 0), where 1/(x² + y²) is infinite, in both orders of differentiation."""
    def scenario(lib):
        x = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([0.0, 2.0], dtype=lib.float64, requires_grad=True)
        first = lib.autograd.grad(lib.atan2(x, y).sum(), (x, y), create_graph=True)
        return [plain(g) for g in first], [str(v) for v in first[1].tolist()]

    on_both(scenario)


def test_lerp_with_a_number_for_end_is_torchs_type_error():
    """Issue 13, found by tools/random_programs.py: ``lerp(x, 1.5, 0.5)`` raised AttributeError; PyTorch's
    argument parser refuses it with a TypeError listing the overloads."""
    check_same_error(lambda lib: lib.lerp(lib.zeros(2), 1.5, 0.5))
