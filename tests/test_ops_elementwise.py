"""Elementwise ops from the op table (clamp, where, maximum ..., sin, acosh, log2 ..., fills and copies):
float64 gradcheck on contiguous and strided inputs, and differential tests against PyTorch (forward, backward
with a non-trivial upstream gradient, grad_fn names) in float32 and float64. Then the ops without gradients
(comparisons, logical and bitwise ops), checked value for value and dtype for dtype against PyTorch."""
import numpy as np
import pytest
from harness import (
    OPERANDS,
    POSITIVE,
    UNARY,
    OpSpec,
    assert_same,
    check_same_error_first_line,
    check_zero_dim_result_is_writable,
    operand,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")


SPECS = [
    # logit, sigmoid, relu
    OpSpec("logit", lambda lib, x: lib.logit(x), UNARY, domain=(0.05, 0.95)),
    OpSpec("logit_eps", lambda lib, x: x.logit(eps=0.2), [((4, 3),)], domain=(0.01, 0.99)),
    OpSpec("sigmoid", lambda lib, x: lib.sigmoid(x), UNARY, domain=(-4, 4)),
    OpSpec("relu", lambda lib, x: lib.relu(x), UNARY),
    # trigonometric and hyperbolic functions and their inverses, logarithms to bases 2 and 10
    OpSpec("sin", lambda lib, x: lib.sin(x), UNARY),
    OpSpec("cos", lambda lib, x: x.cos(), UNARY),
    OpSpec("tan", lambda lib, x: lib.tan(x), UNARY, domain=(-1.2, 1.2)),
    OpSpec("asin", lambda lib, x: lib.asin(x), UNARY, domain=(-0.9, 0.9)),
    OpSpec("arccos_method", lambda lib, x: x.arccos(), UNARY, domain=(-0.9, 0.9)),
    OpSpec("atan", lambda lib, x: lib.atan(x), UNARY),
    OpSpec("sinh", lambda lib, x: lib.sinh(x), UNARY),
    OpSpec("cosh", lambda lib, x: x.cosh(), UNARY),
    OpSpec("asinh", lambda lib, x: lib.asinh(x), UNARY),
    OpSpec("acosh", lambda lib, x: lib.acosh(x), UNARY, domain=(1.2, 3.0)),
    OpSpec("arctanh_method", lambda lib, x: x.arctanh(), UNARY, domain=(-0.9, 0.9)),
    OpSpec("log2", lambda lib, x: lib.log2(x), UNARY, domain=POSITIVE),
    OpSpec("log10", lambda lib, x: x.log10(), UNARY, domain=POSITIVE),
    # piecewise constant: gradient zero
    OpSpec("sign", lambda lib, x: lib.sign(x), UNARY),
    OpSpec("floor", lambda lib, x: x.floor(), UNARY, domain=(-5, 5)),
    OpSpec("ceil", lambda lib, x: lib.ceil(x), UNARY, domain=(-5, 5)),
    OpSpec("round", lambda lib, x: lib.round(x), UNARY, domain=(-5, 5)),
    OpSpec("round_decimals", lambda lib, x: x.round(decimals=2), UNARY, domain=(-5, 5)),
    OpSpec("trunc", lambda lib, x: lib.trunc(x), UNARY, domain=(-5, 5)),
    OpSpec("sgn", lambda lib, x: lib.sgn(x), UNARY),
    # frac(x) = x - trunc(x): derivative 1
    OpSpec("frac", lambda lib, x: lib.frac(x), UNARY, domain=(-5, 5)),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- details the table cannot express ------------------------------------------------------------------

@pytest.mark.parametrize("op", ["sign", "floor", "ceil",
                                "round", "trunc", "sigmoid", "logit", "abs", "relu", "frac"])
@pytest.mark.parametrize("a", OPERANDS)
def test_unary_dtypes_against_torch(op, a):
    assert_same(lambda lib: getattr(lib, op)(operand(lib, a)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.round(lib.tensor([1, 2]), decimals=1),
], ids=lambda f: f.__code__.co_firstlineno)
def test_errors_match_torch(call):
    check_same_error_first_line(call)


@pytest.mark.parametrize("op", [lambda x: x.sign(), lambda x: x.logit()])
def test_zero_dim_results_are_writable_arrays(op):
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    check_zero_dim_result_is_writable(op)


def test_abs_of_complex_is_real_with_pytorchs_gradient():
    a = np.array([1 + 2j, -3 + 0.5j, 0j], np.complex64)
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.abs()
        y.backward(lib.tensor([1.0, -2.0, 0.5]))
        results.append((str(y.dtype).split(".")[-1], y.detach().numpy(), x.grad.numpy()))
    (g_dtype, g_y, g_grad), (t_dtype, t_y, t_grad) = results
    assert g_dtype == t_dtype == "float32"
    np.testing.assert_allclose(g_y, t_y, rtol=2e-7)        # NumPy's complex64 abs may differ by 1 ulp
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-6)
