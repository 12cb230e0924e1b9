"""``gradiente.special`` (the ops of ``ops/special.py`` and the aliases it publishes) against ``torch.special``: the op
table (float64 gradcheck, forward/backward/grad_fn against PyTorch in float32 and float64, second
derivatives), the nodes each alias records, and values over wide ranges including nan, ±inf and the tails;
mvlgamma (``special.multigammaln``), igamma and igammac under their top-level names, with their methods and
in-place forms. ``gradiente.testing`` is tested in test_testing.py."""
import math

import numpy as np
import pytest
from harness import (
    OpSpec,
    assert_same_values,
    check_api_names_match_torch,
    check_inplace_form_matches_torch,
    check_same_error,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")

UNARY = [((3,),), ((2, 3),), ((),)]
BCAST = [((3,), (3,)), ((2, 3), (3,)), ((), (2, 3))]


def positive_second(lo, hi):
    """x in (-2, 2), then y in (lo, hi)."""
    def make(rng, shapes):
        return [np.asarray(rng.uniform(-2, 2, size=shapes[0])), np.asarray(rng.uniform(lo, hi, size=shapes[1]))]
    return make


def zeta_inputs(rng, shapes):
    """s in (1.5, 5) (ζ is differentiated in q only), q in (0.3, 3)."""
    return [np.asarray(rng.uniform(1.5, 5, size=shapes[0])), np.asarray(rng.uniform(0.3, 3, size=shapes[1]))]


def sp(lib):
    return lib.special


SPECS = [
    OpSpec("expit", lambda lib, x: sp(lib).expit(x), UNARY),
    OpSpec("logit", lambda lib, x: sp(lib).logit(x), UNARY, domain=(0.05, 0.95)),
    OpSpec("logit_eps", lambda lib, x: sp(lib).logit(x, eps=0.2), [((2, 3),)], domain=(0.05, 0.95)),
    OpSpec("erf", lambda lib, x: sp(lib).erf(x), UNARY),
    OpSpec("erfc", lambda lib, x: sp(lib).erfc(x), UNARY),
    OpSpec("erfcx", lambda lib, x: sp(lib).erfcx(x), UNARY, domain=(-2, 6)),
    OpSpec("erfinv", lambda lib, x: sp(lib).erfinv(x), UNARY, domain=(-0.9, 0.9)),
    OpSpec("expm1", lambda lib, x: sp(lib).expm1(x), UNARY),
    OpSpec("exp2", lambda lib, x: sp(lib).exp2(x), UNARY),
    OpSpec("log1p", lambda lib, x: sp(lib).log1p(x), UNARY, domain=(-0.5, 2)),
    OpSpec("logsumexp", lambda lib, x: sp(lib).logsumexp(x, 1), [((2, 3),), ((4, 5),)]),
    OpSpec("logsumexp_keepdim", lambda lib, x: sp(lib).logsumexp(x, 0, keepdim=True), [((2, 3),)]),
    OpSpec("softmax", lambda lib, x: sp(lib).softmax(x, 1), [((2, 3),)]),
    OpSpec("log_softmax", lambda lib, x: sp(lib).log_softmax(x, 0), [((2, 3),)]),
    OpSpec("softmax_dtype", lambda lib, x: sp(lib).softmax(x, -1, dtype=lib.float64), [((2, 3),)]),
    OpSpec("xlogy", lambda lib, x, y: sp(lib).xlogy(x, y), BCAST, make_inputs=positive_second(0.3, 3)),
    OpSpec("xlog1py", lambda lib, x, y: sp(lib).xlog1py(x, y), BCAST, make_inputs=positive_second(-0.7, 3)),
    OpSpec("xlog1py_number_x", lambda lib, y: sp(lib).xlog1py(2.5, y), UNARY, domain=(-0.7, 3)),
    OpSpec("xlog1py_number_y", lambda lib, x: sp(lib).xlog1py(x, 0.75), UNARY),
    OpSpec("gammaln", lambda lib, x: sp(lib).gammaln(x), UNARY, domain=(0.2, 5)),
    OpSpec("digamma", lambda lib, x: sp(lib).digamma(x), UNARY, domain=(0.3, 5)),
    OpSpec("psi", lambda lib, x: sp(lib).psi(x), UNARY, domain=(0.3, 5)),
    OpSpec("polygamma", lambda lib, x: sp(lib).polygamma(2, x), UNARY, domain=(0.3, 5)),
    OpSpec("multigammaln", lambda lib, x: sp(lib).multigammaln(x, 2), UNARY, domain=(1.0, 5)),
    OpSpec("i0", lambda lib, x: sp(lib).i0(x), UNARY, domain=(-3, 3)),
    OpSpec("i0e", lambda lib, x: sp(lib).i0e(x), UNARY, domain=(-3, 3)),
    OpSpec("i1", lambda lib, x: sp(lib).i1(x), UNARY, domain=(-3, 3)),
    OpSpec("i1e", lambda lib, x: sp(lib).i1e(x), UNARY, domain=(-3, 3)),
    OpSpec("sinc", lambda lib, x: sp(lib).sinc(x), UNARY),
    OpSpec("entr", lambda lib, x: sp(lib).entr(x), UNARY, domain=(0.1, 3)),
    OpSpec("ndtr", lambda lib, x: sp(lib).ndtr(x), UNARY, domain=(-3, 3)),
    OpSpec("ndtri", lambda lib, x: sp(lib).ndtri(x), UNARY, domain=(0.02, 0.98)),
    OpSpec("log_ndtr", lambda lib, x: sp(lib).log_ndtr(x), UNARY, domain=(-6, 4)),
    OpSpec("round", lambda lib, x: sp(lib).round(x * 3), UNARY),
    OpSpec("round_decimals", lambda lib, x: sp(lib).round(x * 3, decimals=1), [((2, 3),)]),
    OpSpec("zeta", lambda lib, x, q: sp(lib).zeta(x, q), [((3,), (3,)), ((2, 3), (3,))], grad_inputs=[1],
           make_inputs=zeta_inputs),
    OpSpec("zeta_number_s", lambda lib, q: sp(lib).zeta(2.5, q), UNARY, domain=(0.3, 3)),
    # The incomplete gamma functions, differentiable in x only. PyTorch's are within ~1e-9 of the exact values,
    # beyond the float64 tolerance: compared with torch in float32, while float64 gradcheck checks the rules.
    OpSpec("gammainc", lambda lib, a, x: sp(lib).gammainc(a, x), [((4,), (4,)), ((2, 3), (3,))], grad_inputs=[1],
           domain=(0.3, 4), dtypes=("float32",)),
    OpSpec("gammaincc", lambda lib, a, x: sp(lib).gammaincc(a, x), [((4,), (4,)), ((3,), (2, 3))], grad_inputs=[1],
           domain=(0.3, 4), dtypes=("float32",)),
    OpSpec("igamma_method", lambda lib, a, x: a.igamma(x), [((4,), (4,))], grad_inputs=[1], domain=(0.3, 4),
           dtypes=("float32",)),
    OpSpec("igammac_top_level", lambda lib, a, x: lib.igammac(a, x), [((4,), (4,))], grad_inputs=[1],
           domain=(0.3, 4), dtypes=("float32",)),
    # mvlgamma, the top-level name of multigammaln
    OpSpec("mvlgamma", lambda lib, x: lib.mvlgamma(x, 3), UNARY, domain=(1.2, 5)),
    OpSpec("mvlgamma_p1", lambda lib, x: x.mvlgamma(1), [((4,),)], domain=(0.5, 5)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- names and aliases --------------------------------------------------------------------------------------

def test_namespace_holds_pytorchs_names():
    names = ["expit", "logit", "erf", "erfc", "erfcx", "erfinv", "expm1", "exp2", "log1p", "logsumexp", "softmax",
             "log_softmax", "xlogy", "xlog1py", "gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0", "i0e",
             "i1", "i1e", "sinc", "entr", "ndtr", "ndtri", "log_ndtr", "round", "zeta", "gammainc", "gammaincc"]
    for name in names:
        assert hasattr(torch.special, name), name
        assert callable(getattr(gradiente.special, name)), name
    # issue 16's polynomials and Bessel functions are listed and tested in
    # test_ops_special_{polynomials,bessel,bessel_j}.py
    from gradiente.ops import special_bessel, special_bessel_j, special_polynomials
    assert sorted(gradiente.special.__all__) == sorted(names + special_bessel.__all__ + special_bessel_j.__all__
                                                       + special_polynomials.__all__)
    # the same ops (each namespace puts its functions behind the sparse check, sparse_dispatch.py, under its own name)
    def op(f):
        return getattr(f, "sparse_dispatch_of", f)
    assert op(gradiente.special.expit) is op(gradiente.sigmoid) and op(gradiente.special.psi) is op(gradiente.digamma)


@pytest.mark.parametrize("name,args", [("expit", ()), ("logit", ()), ("erf", ()), ("erfc", ()), ("erfinv", ()),
                                       ("expm1", ()), ("exp2", ()), ("log1p", ()), ("gammaln", ()),
                                       ("digamma", ()), ("psi", ()), ("i0", ()), ("sinc", ()), ("round", ()),
                                       ("logsumexp", (0,)), ("softmax", (0,)), ("log_softmax", (0,)),
                                       ("multigammaln", (1,))])
def test_aliases_record_pytorchs_node(name, args):
    g = gradiente.tensor(np.array([0.3, 0.6]), requires_grad=True)
    t = torch.tensor([0.3, 0.6], dtype=torch.float64, requires_grad=True)
    ours, theirs = getattr(gradiente.special, name)(g, *args), getattr(torch.special, name)(t, *args)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_api_names_match_torch():
    check_api_names_match_torch(["mvlgamma"])


@pytest.mark.parametrize("name,args", [("mvlgamma_", (1,))], ids=["mvlgamma_"])
def test_inplace_forms_match_torch(name, args):
    check_inplace_form_matches_torch(name, args)


def test_ndtr_records_pytorchs_composite_graph():
    x = gradiente.tensor(np.array([0.3, -1.0]), requires_grad=True)
    node, names = gradiente.special.ndtr(x).grad_fn, []
    while node is not None and node.next_functions:
        names.append(type(node).__name__)
        node = node.next_functions[0][0]
    assert names == ["MulBackward1", "AddBackward1", "ErfBackward0", "MulBackward1"]


# --- values over wide ranges --------------------------------------------------------------------------------

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.5, 0.5, 1e-300, -1e-300, 5e-324, 30.0,
           -30.0, 700.0, 714.0, -700.0, 26.6, -26.6, 38.0, -38.0]


def wide_values(lo=-1e6, hi=1e6):
    rng = np.random.default_rng(11)
    values = np.concatenate([SPECIAL, rng.uniform(-10, 10, 600), rng.uniform(-40, 40, 300), rng.uniform(-800, 800, 200),
                             10 ** rng.uniform(-30, 6, 100), -(10 ** rng.uniform(-30, 6, 100))])
    return values[((values >= lo) & (values <= hi)) | np.isnan(values)]


#: name -> (values, float64 (rtol, atol), float32 (rtol, atol))
WIDE = {
    # erfcx overflows below -26.6: PyTorch's is off by up to 5e-14 near there (gradiente's keeps x² split exactly)
    "erfcx": (wide_values(), (1e-13, 0), (1e-5, 0)),
    # PyTorch's float32 I₁ overflows at 88.7 (its e^x is a float32)
    "i0e": (wide_values(), (1e-13, 0), (2e-6, 0)),
    "i1": (wide_values(-85, 85), (1e-13, 5e-324), (2e-6, 0)),      # I₁(5e-324) is a tie between 0 and 5e-324
    "i1e": (wide_values(), (1e-13, 5e-324), (2e-6, 0)),
    # ndtr is PyTorch's composite (1 + erf(x/√2))/2, which cancels in the lower tail: absolute agreement there
    "ndtr": (wide_values(), (1e-13, 1e-16), (2e-6, 1e-7)),
    # the upper tail of log_ndtr is -Φ(-x) ≈ -e^(-x²/2)/(x√2π): PyTorch's keeps x/√2 rounded, 1.6e-13 off at 35
    "log_ndtr": (wide_values(), (2e-13, 1e-320), (1e-5, 1e-40)),
    "entr": (wide_values(), (1e-15, 0), (2e-7, 0)),
    "expit": (wide_values(), (1e-15, 0), (4e-7, 0)),
}


@pytest.mark.parametrize("name", sorted(WIDE))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_over_wide_ranges_match_torch(name, dtype):
    values, tol64, tol32 = WIDE[name]
    rtol, atol = tol64 if dtype == "float64" else tol32
    with np.errstate(over="ignore"):
        x = values.astype(dtype)
    assert_same_values(getattr(gradiente.special, name)(gradiente.from_numpy(x.copy())),
                       getattr(torch.special, name)(torch.from_numpy(x.copy())), rtol, atol)


def test_ndtri_over_its_domain_including_subnormals():
    rng = np.random.default_rng(5)
    p = np.concatenate([[math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 5e-324, 1e-320, 1 - 1e-16],
                        rng.uniform(0, 1, 2000), 10 ** rng.uniform(-320, 0, 500), 1 - 10 ** rng.uniform(-16, 0, 200)])
    for dtype, rtol in (("float64", 1e-14), ("float32", 5e-7)):
        with np.errstate(under="ignore"):
            x = p.astype(dtype)
        assert_same_values(gradiente.special.ndtri(gradiente.from_numpy(x.copy())),
                           torch.special.ndtri(torch.from_numpy(x.copy())), rtol)


def test_ndtri_inverts_log_ndtr_in_the_far_tail():
    p = np.array([1e-300, 1e-100, 1e-20, 0.3])
    z = gradiente.special.ndtri(gradiente.from_numpy(p))
    np.testing.assert_allclose(gradiente.special.log_ndtr(z).numpy(), np.log(p), rtol=1e-14)


def test_xlog1py_values_and_conventions():
    x = np.array([0.0, 0.0, 1.0, 2.0, 0.0, math.nan, 3.0, -1.0])
    y = np.array([-1.0, math.nan, -1.0, -2.0, -3.0, 0.0, 1e-20, 0.5])
    assert_same_values(gradiente.special.xlog1py(gradiente.from_numpy(x), gradiente.from_numpy(y)),
                       torch.special.xlog1py(torch.from_numpy(x), torch.from_numpy(y)), 1e-15)
    assert_same_values(gradiente.special.xlog1py(gradiente.tensor([1, 0]), gradiente.tensor([1, 2])),
                       torch.special.xlog1py(torch.tensor([1, 0]), torch.tensor([1, 2])), 1e-7)


def test_zeta_values_off_its_domain_match_torch():
    s = [2.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 1.0, 0.9, math.inf, math.inf, math.nan, 2.0, 2.0, -2.0, 2.0, 3.0, 4.0, 2.5,
         math.inf, math.inf, 3.5, 1.5, 20.0, 2.0]
    q = [math.inf, -math.inf, math.nan, 0.0, -0.0, -1.0, -2.5, 2.0, 2.0, 2.0, 0.5, 1.0, -1e8 + 0.5, 1e-300, 2.0,
         -1e-300, -1e-300, -0.5, -1.5, 1.0, -2.0, 0.3, 1e5, 0.7, 1e300]
    ours = gradiente.special.zeta(gradiente.from_numpy(np.array(s)), gradiente.from_numpy(np.array(q)))
    theirs = torch.special.zeta(torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64))
    assert_same_values(ours, theirs, 1e-12)
    assert_same_values(gradiente.special.zeta(gradiente.tensor([2, 3]), 2), torch.special.zeta(torch.tensor([2, 3]), 2),
                       1e-7)


def test_zeta_has_no_derivative_in_s():
    s = gradiente.tensor([2.5, 3.0], requires_grad=True)
    q = gradiente.tensor([1.5, 2.0], requires_grad=True)
    for out in (gradiente.special.zeta(s, q), gradiente.special.zeta(s, 2.0)):
        with pytest.raises(NotImplementedError) as failure:
            out.sum().backward()
        assert str(failure.value) == "the derivative for 'zeta' is not implemented."
    assert type(gradiente.special.zeta(s, 2.0).grad_fn).__name__ == "SpecialZetaBackward2"


def test_mvlgamma_of_integers_computes_in_the_default_float_dtype():
    assert_same_values(gradiente.mvlgamma(gradiente.tensor([3, 4]), 2), torch.mvlgamma(torch.tensor([3, 4]), 2),
                       1e-6)


def test_round_matches_torch_with_decimals():
    values = np.array([0.5, 1.5, 2.5, -0.5, 1.25, 1.35, -2.675])
    for decimals in (0, 1, 2):
        assert_same_values(gradiente.special.round(gradiente.from_numpy(values), decimals=decimals),
                           torch.special.round(torch.from_numpy(values), decimals=decimals), 1e-15)


SPECIAL_ERRORS = [
    lambda lib: lib.special.polygamma(-1, lib.tensor([0.5])),
    lambda lib: lib.special.multigammaln(lib.tensor([2.5]), 0),
    lambda lib: lib.special.softmax(lib.tensor([1, 2]), 0),
    lambda lib: lib.special.xlog1py(lib.ones(2, 3), lib.ones(4)),
    lambda lib: lib.mvlgamma(lib.tensor([2.5]), 0),
]


@pytest.mark.parametrize("call", SPECIAL_ERRORS)
def test_special_errors_match_torch(call):
    check_same_error(call)


# --- testing.assert_close ----------------------------------------------------------------------------------------


# --- testing.make_tensor -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_matches_torch_on_dtypes_and_errors(name):
    def run(lib):
        outcomes = []
        for a, x in [(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])), (lib.tensor([1, 2]), lib.tensor([1, 2])),
                     (lib.tensor([2.0], dtype=lib.float64), lib.tensor([1.0])),
                     (lib.tensor([2.0], requires_grad=True), lib.tensor([1.0], requires_grad=True))]:
            try:
                out = getattr(lib, name)(a, x)
                if out.requires_grad:
                    out.sum().backward()
                outcomes.append((str(out.dtype).split(".")[-1], round(float(out.detach()[0]), 5)))
            except Exception as error:      # the outcome is the exception, whatever its type
                outcomes.append((type(error).__name__, str(error)))
        return outcomes
    assert run(gradiente) == run(torch)


def test_incomplete_gamma_in_place_and_extreme_values():
    for lib in (gradiente, torch):
        a = lib.tensor([2.0, 2.0, 2.0, 0.5])
        a.igamma_(lib.tensor([0.0, float("inf"), 60.0, 1e-6]))
        assert a.tolist()[:3] == [0.0, 1.0, 1.0]
    q = gradiente.igammac(gradiente.tensor([2.0], dtype=gradiente.float64), gradiente.tensor([60.0],
                                                                                           dtype=gradiente.float64))
    assert 0 < q.item() < 1e-20      # Q from its continued fraction, not 1 - P (which would be 0)


def _ulps(got, want):
    return np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(np.float64).tiny))


def test_erf_is_within_3_ulp_of_math_erf_on_a_dense_grid_with_its_tails():
    """core/erf.py against the C library's erf: within 2 ulp on the polynomial's |x| < 1, within 3 beyond (just
    above 1, where 1 - e^(-x²)R(x) cancels a little), exactly ±1 from 6 on, odd, and NaN/inf as math.erf."""
    from gradiente.core.erf import erf
    x = np.concatenate([np.linspace(-7, 7, 1_400_001), np.geomspace(1e-300, 1, 2001), [5e-324, 1e-320]])
    want = np.array([math.erf(v) for v in x])
    got = erf(x)
    small = np.abs(x) < 1
    assert _ulps(got[small], want[small]).max() <= 2
    assert _ulps(got, want).max() <= 3
    np.testing.assert_array_equal(erf(-x), -got)
    np.testing.assert_array_equal(erf(np.array([np.inf, -np.inf, 6.0, 1e300])), [1.0, -1.0, 1.0, 1.0])
    assert np.isnan(erf(np.array([np.nan]))).all() and np.signbit(erf(np.array([-0.0])))[0]


def test_float32_erf_is_the_correctly_rounded_value_and_torchs_within_an_ulp():
    """In float32 erf is computed in float64 and rounded once: on a dense grid that is math.erf rounded to float32,
    bit for bit; PyTorch's vectorized float32 erf is within 1 float32 ulp of it."""
    from gradiente.core.erf import erf
    x = np.linspace(-7, 7, 1_400_001).astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32))
    theirs = torch.erf(torch.from_numpy(x)).numpy()
    assert (np.abs(got - theirs) <= np.spacing(np.abs(got))).all()
