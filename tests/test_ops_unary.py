"""The ops of ops/unary.py, the unary math table: trigonometric and hyperbolic functions and their inverses,
logarithms, sigmoid, logit, relu, the piecewise constant ones (sign, floor, ceil, round, trunc, sgn) and frac,
abs, and the special functions (sinc, deg2rad, rad2deg, erfc, erfinv, lgamma, digamma, polygamma, i0, fix,
nan_to_num, frexp). From the op table: float64 gradcheck on contiguous and strided inputs, differential tests
against PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names) in float32 and float64,
and second derivatives; then dtypes against PyTorch, values over wide ranges (nan, ±inf, -0.0, subnormals, the
poles) against PyTorch in float64, float32 and float16, in-place forms, and PyTorch's error messages.

Where gradiente is the more accurate of the two (PyTorch's trigamma and digamma reflect through tan(πx) and
lose digits near the poles; its float32 I₀ overflows at 88.7), the comparison leaves those points out and a
named test checks gradiente against the true value instead."""
import math

import numpy as np
import pytest
from harness import (
    OPERANDS,
    POSITIVE,
    UNARY,
    OpSpec,
    assert_same,
    assert_same_tensors,
    assert_same_values,
    both,
    check_api_names_match_torch,
    check_inplace_form_matches_torch,
    check_same_error,
    check_same_error_first_line,
    check_zero_dim_result_is_writable,
    operand,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")


def away_from_integers(lo, hi):
    """Values in (lo, hi) at least 0.1 from an integer (the poles of lgamma, digamma, polygamma)."""
    def make(rng, shapes):
        out = []
        for s in shapes:
            v = rng.uniform(lo, hi, size=s)
            frac = v - np.floor(v)
            out.append(np.asarray(np.floor(v) + 0.1 + 0.8 * frac))
        return out
    return make


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
    # the special functions, unit conversions, fix, nan_to_num and frexp's mantissa
    OpSpec("sinc", lambda lib, x: lib.sinc(x), UNARY),
    OpSpec("sinc_method", lambda lib, x: (x * 3).sinc(), [((2, 3),)]),
    OpSpec("deg2rad", lambda lib, x: lib.deg2rad(x), UNARY),
    OpSpec("rad2deg", lambda lib, x: x.rad2deg(), UNARY),
    OpSpec("erfc", lambda lib, x: lib.erfc(x), UNARY),
    OpSpec("erfinv", lambda lib, x: lib.erfinv(x), UNARY, domain=(-0.95, 0.95)),
    OpSpec("lgamma", lambda lib, x: lib.lgamma(x), UNARY, domain=(0.1, 6)),
    OpSpec("lgamma_negative", lambda lib, x: x.lgamma(), [((2, 3),)], make_inputs=away_from_integers(-4, 0)),
    OpSpec("digamma", lambda lib, x: lib.digamma(x), UNARY, domain=(0.2, 6)),
    OpSpec("digamma_negative", lambda lib, x: x.digamma(), [((2, 3),)], make_inputs=away_from_integers(-4, 0)),
    # PyTorch's float64 trigamma is accurate to about 1e-9 only (ψ⁽¹⁾(1) = π²/6 comes out 5e-10 high), outside
    # the float64 tolerance: compared in float32 here, and against exact values in test_trigamma_is_accurate
    OpSpec("polygamma1", lambda lib, x: lib.polygamma(1, x), UNARY, domain=(0.2, 6), dtypes=("float32",)),
    OpSpec("polygamma2_method", lambda lib, x: x.polygamma(2), [((2, 3),)], domain=(0.3, 5)),
    OpSpec("polygamma_", lambda lib, x: (x * 1).polygamma_(2), [((2, 3),)], domain=(0.3, 5)),
    OpSpec("polygamma3_negative", lambda lib, x: lib.polygamma(3, x), [((2, 3),)],
           make_inputs=away_from_integers(-3, 0)),
    OpSpec("polygamma0", lambda lib, x: lib.polygamma(0, x), [((3,),)], domain=(0.5, 4)),
    OpSpec("i0", lambda lib, x: lib.i0(x), UNARY, domain=(-4, 4)),
    OpSpec("fix", lambda lib, x: lib.fix(x * 3), UNARY),
    OpSpec("nan_to_num", lambda lib, x: lib.nan_to_num(x, nan=1.0), UNARY),
    OpSpec("frexp_mantissa", lambda lib, x: lib.frexp(x).mantissa, UNARY),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- dtypes, complex input, 0-d results ----------------------------------------------------------------------

@pytest.mark.parametrize("op", ["sign", "floor", "ceil", "round", "trunc", "sigmoid", "logit", "abs", "relu", "frac"])
@pytest.mark.parametrize("a", OPERANDS)
def test_unary_dtypes_against_torch(op, a):
    assert_same(lambda lib: getattr(lib, op)(operand(lib, a)))


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


@pytest.mark.parametrize("op", [lambda x: x.sign(), lambda x: x.logit()])
def test_zero_dim_results_are_writable_arrays(op):
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    check_zero_dim_result_is_writable(op)


# --- values over wide ranges, against PyTorch -----------------------------------------------------------------

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, -2.5, 1e-300, -1e-300, 5e-324,
           1e-30, 1e300, -1e300, 171.6, 200.0, 1e-8, 1 - 1e-16, -1 + 1e-16, 1.4616321449683622]


def wide_values(lo=-1e6, hi=None):
    rng = np.random.default_rng(7)
    values = np.concatenate([SPECIAL, rng.uniform(-10, 10, 600), rng.uniform(-200, 200, 200),
                             10 ** rng.uniform(-30, 30, 200), -(10 ** rng.uniform(-30, 6, 200))])
    values = values[(values >= lo) | np.isnan(values)]
    return values if hi is None else values[(values <= hi) | np.isnan(values)]


def as_dtype(values, dtype):
    with np.errstate(over="ignore"):            # values beyond float16's or float32's range become ±inf
        return np.asarray(values, dtype=dtype)


def compare_unary(name, values, dtype, rtol, atol=0.0, torch_fn=None, ours_fn=None):
    x = as_dtype(values, dtype)
    ours = (ours_fn or getattr(gradiente, name))(gradiente.from_numpy(x.copy()))
    theirs = (torch_fn or getattr(torch, name))(torch.from_numpy(x.copy()))
    assert_same_values(ours, theirs, rtol, atol)


_DIGAMMA_VALUES = wide_values()[np.abs(wide_values() - (-1 + 1e-16)) > 1e-15]

#: name -> (float64 (rtol, atol), float32 (rtol, atol), values)
WIDE = {
    # near lgamma's zeros on the negative axis (ln|Γ| = 0 between the poles) the reflection formula loses a few
    # digits relative to the small value: 3e-14, still far inside the tolerance
    "lgamma": ((1e-12, 0), (1e-6, 1e-8), wide_values()),
    "erfc": ((1e-13, 0), (2e-6, 1e-44), wide_values()),
    "sinc": ((1e-13, 1e-300), (2e-6, 1e-44), wide_values()),
    "deg2rad": ((0, 0), (0, 0), wide_values()),
    "rad2deg": ((0, 0), (0, 0), wide_values()),
    "fix": ((0, 0), (0, 0), wide_values()),
    "nan_to_num": ((0, 0), (0, 0), wide_values()),
    # I₀ overflows past 713.98; in float32 PyTorch's overflows early (at 88.7: its e^x is a float32), so float32
    # is compared below that
    "i0": ((1e-13, 0), (2e-6, 0), wide_values(-85, 85)),
    # digamma has a zero at 1.4616 and one between each pair of negative poles: there the value is small and
    # PyTorch's (like any shifted sum) keeps absolute accuracy only; PyTorch's reflection loses digits right next
    # to the poles (-1 + 1e-16), left out
    "digamma": ((1e-12, 1e-13), (1e-6, 1e-6), _DIGAMMA_VALUES),
}


@pytest.mark.parametrize("name", sorted(WIDE))
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_values_over_wide_ranges_match_torch(name, dtype):
    tol64, tol32, values = WIDE[name]
    rtol, atol = {"float64": tol64, "float32": tol32, "float16": (1e-3, 1e-7)}[dtype]
    compare_unary(name, values, dtype, rtol, atol)


def test_erfinv_over_its_domain_matches_torch():
    rng = np.random.default_rng(3)
    values = np.concatenate([SPECIAL, rng.uniform(-1, 1, 2000), 1 - 10 ** rng.uniform(-16, 0, 300),
                             -1 + 10 ** rng.uniform(-16, 0, 300), [1.5, -1.5]])
    compare_unary("erfinv", values, "float64", 1e-14)
    compare_unary("erfinv", values, "float32", 2e-7)
    compare_unary("erfinv", values, "float16", 1e-3)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_polygamma_values_match_torch(n):
    # PyTorch's trigamma reflects through sin(πx) computed after rounding πx: at and next to the negative poles it
    # gives finite values (6.6e32 at -1) where the true value is infinite or much larger; those are left out
    # (test_polygamma_near_negative_poles). Its zeta loops forever for very negative x: kept above -1e6.
    values = wide_values(-1e6)
    if n == 1:
        with np.errstate(invalid="ignore"):
            values = values[~((values < 0) & (np.abs(values - np.round(values)) < 1e-6))]
    # PyTorch's trigamma is good to 2e-9 (see test_trigamma_is_accurate); float32 results in the subnormal range
    # keep few digits in either library
    rtol64 = 2e-9 if n == 1 else 1e-11
    for dtype, rtol, atol in (("float64", rtol64, 1e-300), ("float32", 1e-5, 1e-40)):
        x = as_dtype(values, dtype)
        if dtype == "float32" and n == 1:
            x = x[x > 0]        # PyTorch's float32 reflection, sin(πx) in float32, is off by up to 10% below 0
        ours = gradiente.polygamma(n, gradiente.from_numpy(x.copy()))
        theirs = torch.polygamma(n, torch.from_numpy(x.copy()))
        assert_same_values(ours, theirs, rtol, atol)


def test_polygamma_near_negative_poles_is_the_true_value():
    x = gradiente.tensor(np.array([-1.0, -2.0, -0.9999999999999999, -3.5, -1e300]))
    assert gradiente.polygamma(1, x).tolist()[:2] == [math.inf, math.inf]
    # ψ⁽¹⁾(x) ≈ 1/(x + 1)² next to -1; at -3.5 by reflection, π² - ψ⁽¹⁾(4.5)
    assert gradiente.polygamma(1, x)[2].item() == pytest.approx(1 / (1 - 0.9999999999999999) ** 2, rel=1e-14)
    assert gradiente.polygamma(1, x)[3].item() == pytest.approx(9.6208792980503482, rel=1e-14)
    assert gradiente.polygamma(2, x)[:2].tolist() == [-math.inf, -math.inf]
    d = gradiente.digamma(gradiente.tensor(np.array([-1.0, 0.0, -0.0]))).tolist()
    assert math.isnan(d[0]) and d[1:] == [-math.inf, math.inf]


def test_special_functions_are_accurate_in_float64():
    """Against reference values computed with mpmath at 30 digits: a few ulp, near the zeros of lgamma too."""
    cases = [("lgamma", 0.5, 0.57236494292470008707), ("lgamma", 1 + 1e-10, -5.772157125783244041e-11),
             ("lgamma", 2 - 1e-9, -4.2278436975733279119e-10), ("lgamma", -2.5, -0.056243716497674050673),
             ("lgamma", 1e10, 220258509288.81058147), ("digamma", 1e-5, -100000.57719921567289),
             ("digamma", 25.5, 3.2189424728839197665), ("erfc", 10.0, 2.088487583762544757e-45),
             ("erfc", -3.0, 1.9999779095030014146), ("erfinv", 1 - 1e-15, 5.6759157397447131788),
             ("erfinv", -0.3, -0.27246271472675434502), ("i0", 700.0, 1.5295933476718737363e+302)]
    for name, x, expected in cases:
        got = getattr(gradiente, name)(gradiente.tensor(np.array([x]))).item()
        assert got == pytest.approx(expected, rel=4e-15), name


def test_trigamma_is_accurate():
    """ψ⁽¹⁾ at points where it is known exactly: π²/6 at 1, π²/2 at 1/2, π²/6 - 1 at 2 (mpmath for 3.4)."""
    x = gradiente.tensor(np.array([1.0, 0.5, 2.0, 3.4]))
    expected = [math.pi ** 2 / 6, math.pi ** 2 / 2, math.pi ** 2 / 6 - 1, 0.341541397785833275468]
    np.testing.assert_allclose(gradiente.polygamma(1, x).numpy(), expected, rtol=4e-16)


def test_float32_rounds_the_float64_value():
    """float32 (and float16) results are the float64 value rounded once: within half an ulp where PyTorch's float32
    kernels may be a few ulp off (its float32 digamma next to the root 1.4616, say)."""
    x = np.linspace(0.05, 6, 301, dtype=np.float32)
    for name in ("lgamma", "digamma", "erfc", "i0", "erfinv"):
        v = x / 7 if name == "erfinv" else x
        ours32 = getattr(gradiente, name)(gradiente.from_numpy(v.copy())).numpy()
        ours64 = getattr(gradiente, name)(gradiente.from_numpy(v.astype(np.float64))).numpy()
        np.testing.assert_array_equal(ours32, ours64.astype(np.float32))


def test_integer_and_bool_inputs_compute_in_the_default_float_dtype():
    for name in ("lgamma", "digamma", "erfc", "erfinv", "i0", "sinc", "deg2rad", "rad2deg"):
        for values in ([1, 2, 3], [True, False]):
            ours = getattr(gradiente, name)(gradiente.tensor(values))
            theirs = getattr(torch, name)(torch.tensor(values))
            assert_same_values(ours, theirs, 1e-6)
    assert_same_values(gradiente.polygamma(1, gradiente.tensor([1, 2])), torch.polygamma(1, torch.tensor([1, 2])),
                       1e-6)
    assert gradiente.fix(gradiente.tensor([1, -2])).dtype is gradiente.int64
    assert gradiente.nan_to_num(gradiente.tensor([1, 2])).dtype is gradiente.int64


def test_nan_to_num_replacements_and_gradient():
    values = np.array([math.nan, math.inf, -math.inf, 1.5, -0.0])
    for dtype in ("float64", "float32", "float16"):
        for kwargs in ({}, {"nan": 1.0, "posinf": 2.0, "neginf": -3.0}, {"nan": 1e40, "posinf": 1e39},
                       {"neginf": 7}):
            ours = gradiente.nan_to_num(gradiente.from_numpy(values.astype(dtype)), **kwargs)
            theirs = torch.nan_to_num(torch.from_numpy(values.astype(dtype)), **kwargs)
            assert_same_values(ours, theirs, 0)
    x = gradiente.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    gradiente.nan_to_num(x).backward(gradiente.full((5,), 2.0, dtype=gradiente.float64))
    torch.nan_to_num(t).backward(torch.full((5,), 2.0, dtype=torch.float64))
    assert x.grad.tolist() == t.grad.tolist() == [0.0, 0.0, 0.0, 2.0, 2.0]


def test_frexp_returns_mantissa_and_int32_exponent():
    values = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -2.5, 1e-300, 5e-324, 1e300, 0.75])
    for dtype in ("float64", "float32", "float16"):
        v = as_dtype(values, dtype)
        ours, theirs = gradiente.frexp(gradiente.from_numpy(v)), torch.frexp(torch.from_numpy(v))
        np.testing.assert_array_equal(ours.mantissa.numpy(), theirs.mantissa.numpy())
        np.testing.assert_array_equal(ours.exponent.numpy(), theirs.exponent.numpy())
        assert ours.exponent.dtype is gradiente.int32
    result = gradiente.tensor([1.5]).frexp()
    assert repr(result).startswith("gradiente.return_types.frexp(\nmantissa=tensor([0.7500]),\nexponent=")
    mantissa, exponent = result
    assert (mantissa.item(), exponent.item()) == (0.75, 1)
    x = gradiente.tensor([1.5, 6.0], requires_grad=True)
    m = gradiente.frexp(x).mantissa
    assert type(m.grad_fn).__name__ == "FrexpBackward0" and gradiente.frexp(x).exponent.grad_fn is None
    m.sum().backward()
    assert x.grad.tolist() == [0.5, 0.125]


# --- methods, in-place forms, names ---------------------------------------------------------------------------

INPLACE = [("sinc_", ()), ("deg2rad_", ()), ("rad2deg_", ()), ("erfc_", ()), ("erfinv_", ()), ("lgamma_", ()),
           ("digamma_", ()), ("i0_", ()), ("fix_", ()), ("nan_to_num_", ()), ("polygamma_", (2,))]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_forms_match_torch(name, args):
    check_inplace_form_matches_torch(name, args)


def test_api_names_match_torch():
    check_api_names_match_torch(["nan_to_num", "sinc", "deg2rad", "rad2deg", "frexp", "erfc", "erfinv", "lgamma",
                                 "digamma", "polygamma", "i0", "fix", "logit"])


def test_fix_records_trunc_backward():
    x = gradiente.tensor([1.5, 2.0], requires_grad=True)
    assert type(gradiente.fix(x).grad_fn).__name__ == "TruncBackward0"


# --- errors ---------------------------------------------------------------------------------------------------

ERRORS = [
    lambda lib: lib.polygamma(-1, lib.tensor([0.5])),
    lambda lib: lib.polygamma(1.0, lib.tensor([0.5])),
    lambda lib: lib.frexp(lib.tensor([1, 2])),
    lambda lib: lib.fix(lib.tensor([True])),
    lambda lib: lib.tensor([1, 2]).lgamma_(),
    lambda lib: lib.tensor([1, 2]).polygamma_(1),
    lambda lib: lib.tensor([0.5], requires_grad=True).lgamma_(),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    check_same_error(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.round(lib.tensor([1, 2]), decimals=1),
], ids=lambda f: f.__code__.co_firstlineno)
def test_error_first_lines_match_torch(call):
    check_same_error_first_line(call)


def test_erfinv_saves_its_input_as_torch():
    """PyTorch's rule reads erfinv's input: changing the input in place is caught, changing the output is not."""
    def input_changed(lib):
        y = lib.tensor([0.1, -0.4, 0.7], requires_grad=True) * 1
        out = lib.erfinv(y)
        y.mul_(0.5)
        with pytest.raises(RuntimeError) as err:
            out.sum().backward()
        return str(err.value)

    def output_changed(lib):
        x = lib.tensor([0.1, -0.4, 0.7], dtype=lib.float64, requires_grad=True)
        out = lib.erfinv(x * 1)
        out.mul_(2)
        gx, = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        return gx, lib.autograd.grad(gx.sum(), x)[0]
    g, t = both(input_changed)
    assert g == t
    assert_same_tensors(*both(output_changed), rtol=1e-12)


@pytest.mark.parametrize("name", ["erfc", "erfinv", "lgamma", "digamma", "erf", "sinc", "logit", "i0"])
@pytest.mark.parametrize("layout", [lambda a: a.T, lambda a: a.transpose(2, 0, 1)[:, :, ::2]], ids=["t", "strided"])
def test_results_keep_the_inputs_layout(name, layout):
    """Issue 13, found by tools/random_programs.py: ops whose array function is built of masks (erfc, digamma)
    returned C order where PyTorch's TensorIterator keeps the input's layout, so strides differed."""
    values = np.random.RandomState(0).uniform(0.1, 0.9, (2, 3, 4))
    ours, theirs = both(lambda lib: getattr(lib, name)(lib.from_numpy(layout(values))))
    assert ours.stride() == theirs.stride()
    assert_same_tensors(ours, theirs, rtol=1e-12)
