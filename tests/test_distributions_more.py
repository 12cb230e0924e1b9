"""The distributions built on transforms and the other distributions added with them (LogNormal, HalfNormal,
Cauchy, HalfCauchy, Gumbel, Weibull, Pareto, Kumaraswamy, Chi2, StudentT, Geometric), against torch 2.13.

Each spec builds the same distribution in both libraries from the same arrays. For float32 and float64: the
samples drawn for the same seed, rsample and its gradients, log_prob and its gradients, the moments and the
entropy, cdf/icdf, reprs, expand; float64 gradchecks of log_prob and rsample; validation errors.
"""
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import gradiente
import gradiente.distributions as GD
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")
TD = torch.distributions

DTYPES = ["float32", "float64"]
TOL = {"float32": 3e-6, "float64": 1e-12}


def lib_of(D):
    return gradiente if D is GD else torch


def to_np(t):
    if isinstance(t, (torch.Tensor, gradiente.Tensor)):
        return t.detach().numpy()
    return np.asarray(t)


def assert_close(ours, theirs, scale=1.0):
    a, b = to_np(ours), to_np(theirs)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    tol = TOL.get(a.dtype.name, 0) * scale
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


@dataclass
class Spec:
    name: str
    build: Callable          # build(D, *params) -> distribution
    params: list             # float64 arrays, cast to the test's dtype
    rsample: bool = True     # has a reparameterized sampler
    gamma_based: bool = False  # rsample's gradient goes through Gamma's (exact here, approximate in torch)
    moments: tuple = ("mean", "variance", "stddev", "mode")
    cdf: bool = True
    tol: float = 1.0
    torch64_fails: bool = False  # torch's log_prob raises for float64 parameters (see GeneralizedPareto)

    def __str__(self):
        return self.name


POS = [0.5, 1.5, 3.0]
SPECS = [
    Spec("LogNormal", lambda D, m, s: D.LogNormal(m, s), [[-0.5, 0.0, 1.0], POS]),
    Spec("HalfNormal", lambda D, s: D.HalfNormal(s), [POS]),
    Spec("Cauchy", lambda D, m, s: D.Cauchy(m, s), [[-1.0, 0.0, 2.0], POS]),
    Spec("HalfCauchy", lambda D, s: D.HalfCauchy(s), [POS]),
    Spec("Gumbel", lambda D, m, s: D.Gumbel(m, s), [[-1.0, 0.0, 2.0], POS], cdf=False),
    Spec("Weibull", lambda D, s, k: D.Weibull(s, k), [POS, [0.8, 1.5, 3.0]], tol=10),
    Spec("Pareto", lambda D, s, a: D.Pareto(s, a), [POS, [0.7, 1.5, 3.0]], tol=10),
    Spec("Kumaraswamy", lambda D, a, b: D.Kumaraswamy(a, b), [[0.5, 2.0, 3.0], [0.7, 1.5, 4.0]],
         moments=("mean", "variance", "mode"), cdf=False, tol=100),
    Spec("Chi2", lambda D, df: D.Chi2(df), [[0.7, 2.0, 5.0]], gamma_based=True, cdf=False),
    Spec("StudentT", lambda D, df, m, s: D.StudentT(df, m, s), [[0.7, 1.5, 5.0], [-1.0, 0.0, 2.0], POS],
         gamma_based=True, cdf=False, tol=10),
    Spec("Geometric", lambda D, p: D.Geometric(p), [[0.2, 0.5, 0.9]], rsample=False, cdf=False),
    Spec("Geometric_logits", lambda D, lg: D.Geometric(logits=lg), [[-1.0, 0.0, 2.0]], rsample=False,
         cdf=False),
    Spec("NegativeBinomial", lambda D, n, p: D.NegativeBinomial(n, p), [[2.0, 3.5, 10.0], [0.2, 0.5, 0.8]],
         rsample=False, cdf=False, tol=10),
    Spec("NegativeBinomial_logits", lambda D, n, lg: D.NegativeBinomial(n, logits=lg),
         [[2.0, 3.5, 10.0], [-1.0, 0.0, 1.0]], rsample=False, cdf=False, moments=("mean", "variance", "mode"),
         tol=10),
    Spec("Multinomial", lambda D, p: D.Multinomial(6, p), [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]], rsample=False,
         cdf=False, moments=("mean", "variance")),
    Spec("Multinomial_logits", lambda D, lg: D.Multinomial(4, logits=lg), [[[0.2, -1.3, 0.5], [0.6, 0.1, 2.3]]],
         rsample=False, cdf=False, moments=("mean", "variance")),
    Spec("InverseGamma", lambda D, a, b: D.InverseGamma(a, b), [[0.7, 1.5, 3.0], POS], gamma_based=True,
         cdf=False, tol=10),
    Spec("FisherSnedecor", lambda D, d1, d2: D.FisherSnedecor(d1, d2), [[1.5, 3.0, 6.0], [1.5, 3.0, 9.0]],
         gamma_based=True, cdf=False, tol=10),
    Spec("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(p), [[0.2, 0.4995, 0.9]], tol=10),
    Spec("ContinuousBernoulli_logits", lambda D, lg: D.ContinuousBernoulli(logits=lg), [[-1.0, 0.001, 2.0]],
         tol=10),
    Spec("RelaxedBernoulli", lambda D, p: D.RelaxedBernoulli(gradiente_or_torch(D).tensor(0.7, dtype=p.dtype), p),
         [[0.2, 0.5, 0.9]], moments=(), cdf=False, tol=10),
    Spec("RelaxedOneHotCategorical", lambda D, lg: D.RelaxedOneHotCategorical(
        gradiente_or_torch(D).tensor(0.5, dtype=lg.dtype), logits=lg), [[[0.2, -1.0, 0.5], [1.0, 0.0, 0.3]]],
         moments=(), cdf=False, tol=10),
    Spec("LogisticNormal", lambda D, m, s: D.LogisticNormal(m, s), [[-0.5, 0.0, 1.0], POS], moments=(),
         cdf=False, tol=10),
    Spec("MixtureSameFamily", lambda D, w, m, s: D.MixtureSameFamily(D.Categorical(w), D.Normal(m, s)),
         [[0.2, 0.3, 0.5], [-1.0, 0.0, 2.0], POS], rsample=False, moments=("mean", "variance"), cdf=True),
    Spec("MixtureSameFamily_mvn", lambda D, w, m: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Independent(D.Normal(m, 1.0), 1)),
         [[[0.2, 0.3], [0.5, -1.0]], [[[-1.0, 0.0], [2.0, 1.0]], [[0.5, 0.5], [1.0, -1.0]]]], rsample=False,
         moments=("mean", "variance"), cdf=False),
    Spec("LowRankMultivariateNormal", lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
         [[[0.0, 1.0, 2.0], [-1.0, 0.5, 0.0]], [[1.0, 0.5], [0.2, -1.0], [0.3, 0.4]], [1.0, 2.0, 0.5]],
         moments=("mean", "variance", "mode", "covariance_matrix", "precision_matrix", "scale_tril"),
         cdf=False, tol=10),
    Spec("GeneralizedPareto", lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
         [[0.0, 1.0, -1.0], POS, [0.3, 0.05, -0.2]], tol=10, torch64_fails=True),
    Spec("GeneralizedPareto_heavy", lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
         [[0.0, 1.0, -1.0], POS, [1.5, 0.7, 0.45]], tol=10, torch64_fails=True),
    Spec("VonMises", lambda D, m, k: D.VonMises(m, k), [[0.0, 1.0, -2.0], [0.5, 4.0, 0.05]], rsample=False,
         cdf=False, moments=("mean", "variance", "mode"), tol=10),
    Spec("LKJCholesky", lambda D, c: D.LKJCholesky(3, c), [[0.5, 1.0, 2.5]], rsample=False, cdf=False, moments=(),
         tol=10),
]


def gradiente_or_torch(D):
    return gradiente if D is GD else torch



def build(spec, D, dtype, requires_grad=False):
    lib = lib_of(D)
    leaves = [lib.tensor(np.array(p), dtype=getattr(lib, dtype), requires_grad=requires_grad) for p in spec.params]
    return spec.build(D, *leaves), leaves


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_sample_draws_torchs_numbers(spec, dtype):
    ours, _ = build(spec, GD, dtype)
    theirs, _ = build(spec, TD, dtype)
    gradiente.manual_seed(3)
    torch.manual_seed(3)
    a, b = ours.sample((4,)), theirs.sample((4,))
    assert_close(a, b, spec.tol)
    # The generators moved on by the same amount: the next draws agree too.
    assert_close(gradiente.rand(2, dtype=getattr(gradiente, dtype)), torch.rand(2, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", [s for s in SPECS if s.rsample], ids=str)
def test_rsample_and_its_gradients(spec, dtype):
    ours, our_leaves = build(spec, GD, dtype, requires_grad=True)
    theirs, their_leaves = build(spec, TD, dtype, requires_grad=True)
    gradiente.manual_seed(5)
    torch.manual_seed(5)
    a, b = ours.rsample((2,)), theirs.rsample((2,))
    assert_close(a, b, spec.tol)
    weights = np.linspace(0.5, 1.5, a.numel()).reshape(tuple(a.shape))
    (a * gradiente.tensor(weights, dtype=a.dtype)).sum().backward()
    (b * torch.tensor(weights, dtype=b.dtype)).sum().backward()
    for x, y in zip(our_leaves, their_leaves):
        if spec.gamma_based:  # PyTorch approximates the Gamma gradient in its concentration (see Gamma)
            np.testing.assert_allclose(to_np(x.grad), to_np(y.grad), rtol=5e-3, atol=1e-4)
        else:
            assert_close(x.grad, y.grad, spec.tol * 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_log_prob_and_its_gradients(spec, dtype):
    if spec.torch64_fails and dtype == "float64":
        _compare_float64_with_torchs_float32(spec)
        return
    ours, our_leaves = build(spec, GD, dtype, requires_grad=True)
    theirs, their_leaves = build(spec, TD, dtype, requires_grad=True)
    torch.manual_seed(11)
    value = theirs.sample((2,))
    a = ours.log_prob(gradiente.tensor(value.numpy()))
    b = theirs.log_prob(value)
    assert_close(a, b, spec.tol)
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(our_leaves, their_leaves):
        assert_close(x.grad, y.grad, spec.tol * 10)


def _compare_float64_with_torchs_float32(spec):
    """Where torch cannot compute in float64: torch raises, and ours agrees with torch's float32 numbers."""
    ours, our_leaves = build(spec, GD, "float64", requires_grad=True)
    theirs64, _ = build(spec, TD, "float64")
    theirs, their_leaves = build(spec, TD, "float32", requires_grad=True)
    torch.manual_seed(11)
    value = theirs.sample((2,))
    with pytest.raises(RuntimeError, match="Double did not match Float"):
        theirs64.log_prob(value.double())
    a, b = ours.log_prob(gradiente.tensor(value.numpy(), dtype=gradiente.float64)), theirs.log_prob(value)
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-5)
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(our_leaves, their_leaves):
        np.testing.assert_allclose(to_np(x.grad), to_np(y.grad), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_moments_and_entropy(spec, dtype):
    ours, _ = build(spec, GD, dtype)
    theirs, _ = build(spec, TD, dtype)
    for name in (*spec.moments, "mode", "entropy"):
        def read(d, name=name):
            value = getattr(d, name)
            return value() if name == "entropy" else value
        try:
            b = read(theirs)
        except NotImplementedError:  # not written in torch either: ours says so too
            with pytest.raises(NotImplementedError):
                read(ours)
            continue
        assert_close(read(ours), b, spec.tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", [s for s in SPECS if s.cdf], ids=str)
def test_cdf_and_icdf(spec, dtype):
    if spec.torch64_fails and dtype == "float64":
        pytest.skip("torch's cdf raises for float64 parameters; float32 is compared, float64 gradchecked")
    ours, our_leaves = build(spec, GD, dtype, requires_grad=True)
    theirs, their_leaves = build(spec, TD, dtype, requires_grad=True)
    torch.manual_seed(2)
    value = theirs.sample()
    a, b = ours.cdf(gradiente.tensor(value.numpy())), theirs.cdf(value)
    assert_close(a, b, spec.tol)
    probs = np.array([0.1, 0.5, 0.8])
    try:
        d = theirs.icdf(torch.tensor(probs, dtype=getattr(torch, dtype)))
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.icdf(gradiente.tensor(probs, dtype=getattr(gradiente, dtype)))
        c, d = gradiente.zeros(()), torch.zeros(())
    else:
        c = ours.icdf(gradiente.tensor(probs, dtype=getattr(gradiente, dtype)))
        assert_close(c, d, spec.tol * 10)
    (a.sum() + c.sum()).backward()
    (b.sum() + d.sum()).backward()
    for x, y in zip(our_leaves, their_leaves):
        assert_close(x.grad, y.grad, spec.tol * 10)


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_gradcheck_log_prob_and_rsample(spec):
    _, leaves = build(spec, GD, "float64", requires_grad=True)
    torch.manual_seed(4)
    value = gradiente.tensor(build(spec, TD, "float64")[0].sample((2,)).numpy())
    assert gradcheck(lambda *params: spec.build(GD, *params).log_prob(value), leaves)
    if spec.rsample and not spec.gamma_based:
        def draw(*params):
            gradiente.manual_seed(0)
            return spec.build(GD, *params).rsample((2,))
        assert gradcheck(draw, leaves)


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_repr_shapes_expand_and_support(spec):
    ours, _ = build(spec, GD, "float64")
    theirs, _ = build(spec, TD, "float64")
    assert repr(ours) == repr(theirs).replace("torch.", "gradiente.")
    assert repr(ours.support) == repr(theirs.support).replace("torch.", "gradiente.")
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    new_shape = (2, *theirs.batch_shape)
    big, their_big = ours.expand(new_shape), theirs.expand(new_shape)
    assert type(big) is type(ours)
    assert tuple(big.batch_shape) == tuple(their_big.batch_shape) == new_shape
    gradiente.manual_seed(1)
    torch.manual_seed(1)
    assert_close(big.sample(), their_big.sample(), spec.tol)
    for name in spec.moments[:1]:
        assert_close(getattr(big, name), getattr(their_big, name), spec.tol)


def test_scalar_parameters_give_reprs_with_numbers():
    for make in (lambda D: D.Gumbel(0.0, 2.0), lambda D: D.Weibull(1.0, 2.0), lambda D: D.Pareto(1.0, 3.0),
                 lambda D: D.Cauchy(0.0, 1.0), lambda D: D.StudentT(3.0), lambda D: D.Geometric(0.3),
                 lambda D: D.Chi2(3.0), lambda D: D.Kumaraswamy(2.0, 3.0)):
        ours, theirs = make(GD), make(TD)
        assert repr(ours) == repr(theirs)
        assert ours.batch_shape == theirs.batch_shape == ()
        assert_close(ours.mean, theirs.mean)


def _error(call):
    try:
        call()
    except Exception as e:  # the test compares whatever was raised
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("make", [
    lambda D, lib: D.LogNormal(lib.tensor([0.0]), lib.tensor([-1.0])),
    lambda D, lib: D.HalfNormal(lib.tensor([0.0, 1.0])),
    lambda D, lib: D.Cauchy(lib.tensor([0.0]), lib.tensor([-1.0])),
    lambda D, lib: D.HalfCauchy(lib.tensor([-2.0])),
    lambda D, lib: D.Gumbel(lib.tensor([0.0]), lib.tensor([0.0])),
    lambda D, lib: D.Weibull(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda D, lib: D.Pareto(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda D, lib: D.Kumaraswamy(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda D, lib: D.Chi2(lib.tensor([-1.0])),
    lambda D, lib: D.StudentT(lib.tensor([-1.0])),
    lambda D, lib: D.Geometric(lib.tensor([0.0, 0.5])),
    lambda D, lib: D.Geometric(lib.tensor([1.5])),
    lambda D, lib: D.Geometric(),
    lambda D, lib: D.LKJCholesky(1, 1.0),
    lambda D, lib: D.LKJCholesky(3, lib.tensor([-1.0])),
    lambda D, lib: D.LKJCholesky(2, 1.0).log_prob(lib.tensor([[1.0, 0.0], [0.5, 0.5]])),
    lambda D, lib: D.LowRankMultivariateNormal(lib.tensor(0.0), lib.ones(1, 1), lib.ones(1)),
    lambda D, lib: D.LowRankMultivariateNormal(lib.zeros(3), lib.ones(2, 1), lib.ones(3)),
    lambda D, lib: D.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(2)),
    lambda D, lib: D.LowRankMultivariateNormal(lib.zeros(2, 3), lib.ones(4, 3, 1), lib.ones(3)),
    lambda D, lib: D.Multinomial(2.5, lib.tensor([0.5, 0.5])),
    lambda D, lib: D.NegativeBinomial(lib.tensor([-1.0]), lib.tensor([0.5])),
    lambda D, lib: D.NegativeBinomial(lib.tensor([1.0]), lib.tensor([1.0])),
    lambda D, lib: D.ContinuousBernoulli(lib.tensor([1.5]), validate_args=True),
    lambda D, lib: D.FisherSnedecor(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda D, lib: D.InverseGamma(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda D, lib: D.LogisticNormal(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda D, lib: D.RelaxedBernoulli(lib.tensor(0.5), lib.tensor([1.5])),
    lambda D, lib: D.RelaxedOneHotCategorical(lib.tensor(0.5), lib.tensor([0.5, -0.6])),
    lambda D, lib: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(lib.zeros(2), 1.0)),
    lambda D, lib: D.MixtureSameFamily(D.Categorical(lib.ones(3)), 3),
    lambda D, lib: D.MixtureSameFamily(D.Categorical(lib.ones(3)), D.Normal(lib.zeros(2), 1.0)),
    lambda D, lib: D.MixtureSameFamily(D.Categorical(lib.ones(4, 2)), D.Normal(lib.zeros(3, 2), 1.0)),
    lambda D, lib: D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.HalfNormal(lib.ones(2))).log_prob(
        lib.tensor(-1.0)),
    lambda D, lib: D.HalfNormal(lib.tensor([1.0])).log_prob(lib.tensor([-1.0])),
    lambda D, lib: D.LogNormal(0.0, 1.0).log_prob(lib.tensor([-1.0])),
    lambda D, lib: D.Pareto(lib.tensor([2.0]), lib.tensor([1.0])).log_prob(lib.tensor([1.0])),
    lambda D, lib: D.Kumaraswamy(lib.tensor([2.0]), lib.tensor([1.0])).log_prob(lib.tensor([1.5])),
    lambda D, lib: D.Geometric(lib.tensor([0.5])).log_prob(lib.tensor([0.5])),
    lambda D, lib: D.Weibull(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0])).log_prob(lib.tensor([1.0, 2.0, 3.0])),
])
def test_validation_errors_match_torch(make):
    ours, theirs = _error(lambda: make(GD, gradiente)), _error(lambda: make(TD, torch))
    assert theirs is not None
    assert ours == (theirs[0], theirs[1].replace("torch.", "gradiente."))


def test_out_of_support_values_without_validation():
    value = [-1.0, 0.5, 2.0]
    for make in (lambda D: D.HalfNormal(1.0, validate_args=False), lambda D: D.HalfCauchy(2.0, validate_args=False),
                 lambda D: D.Geometric(1.0, validate_args=False)):
        a = make(GD).log_prob(gradiente.tensor(value))
        b = make(TD).log_prob(torch.tensor(value))
        assert_close(a, b)


def test_geometric_with_probs_one_puts_all_mass_on_zero():
    a = GD.Geometric(gradiente.tensor([1.0, 1.0])).log_prob(gradiente.tensor([0.0, 2.0]))
    b = TD.Geometric(torch.tensor([1.0, 1.0])).log_prob(torch.tensor([0.0, 2.0]))
    assert_close(a, b)


def test_student_t_moments_at_small_df():
    df = [0.5, 1.0, 1.5, 2.0, 3.0]
    a, b = GD.StudentT(gradiente.tensor(df)), TD.StudentT(torch.tensor(df))
    assert_close(a.mean, b.mean)
    assert_close(a.variance, b.variance)


def test_pareto_and_weibull_laws_by_their_moments():
    # A law check on top of the exact draws: 20000 samples' mean is within 3 standard errors of the mean.
    gradiente.manual_seed(0)
    for d in (GD.Weibull(gradiente.tensor(2.0), gradiente.tensor(1.5)), GD.Pareto(gradiente.tensor(1.0),
                                                                                    gradiente.tensor(4.0)),
              GD.Gumbel(gradiente.tensor(1.0), gradiente.tensor(2.0)), GD.LogNormal(0.0, 0.5)):
        x = d.sample((20000,))
        assert abs(x.mean().item() - d.mean.item()) < 3 * math.sqrt(d.variance.item() / 20000)


# --- KL divergences ---------------------------------------------------------------------------------------------

def _kl_makers(lib):
    f = lib.float64

    def t(values):
        return lib.tensor(values, dtype=f, requires_grad=True)

    return {
        "Cauchy": lambda D: D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])),
        "ContinuousBernoulli": lambda D: D.ContinuousBernoulli(t([0.2, 0.7])),
        "Geometric": lambda D: D.Geometric(t([0.3, 0.6])),
        "Gumbel": lambda D: D.Gumbel(t([0.5, -1.0]), t([1.5, 0.7])),
        "HalfNormal": lambda D: D.HalfNormal(t([1.0, 2.5])),
        "Pareto": lambda D: D.Pareto(t([1.0, 2.0]), t([3.5, 2.5])),
        "Pareto_low": lambda D: D.Pareto(t([0.5, 3.0]), t([0.8, 1.5])),
        "Beta": lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
        "Exponential": lambda D: D.Exponential(t([1.5, 0.5])),
        "Gamma": lambda D: D.Gamma(t([2.0, 0.5]), t([1.5, 3.0])),
        "Laplace": lambda D: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])),
        "Normal": lambda D: D.Normal(t([0.3, -0.4]), t([1.2, 0.6])),
        "Uniform": lambda D: D.Uniform(t([0.1, 0.2]), t([0.8, 0.9])),
        "Uniform_wide": lambda D: D.Uniform(t([1.5, 2.0]), t([3.0, 4.5])),
        "LogNormal": lambda D: D.LogNormal(t([0.3, -0.4]), t([1.2, 0.6])),
    }


KL_PAIRS = [(p, q) for p in ["Cauchy", "ContinuousBernoulli", "Geometric", "Gumbel", "HalfNormal", "Pareto",
                             "Pareto_low", "Beta", "Exponential", "Gamma", "Laplace", "Normal", "Uniform",
                             "Uniform_wide", "LogNormal"]
            for q in ["Cauchy", "ContinuousBernoulli", "Geometric", "Gumbel", "HalfNormal", "Pareto", "Beta",
                      "Exponential", "Gamma", "Normal", "Uniform", "LogNormal"]]


@pytest.mark.parametrize(("p_name", "q_name"), KL_PAIRS)
def test_kl_divergence_matches_torch(p_name, q_name):
    ours_make, theirs_make = _kl_makers(gradiente), _kl_makers(torch)
    tp, tq = theirs_make[p_name](TD), theirs_make[q_name](TD)
    try:
        expected = TD.kl_divergence(tp, tq)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            GD.kl_divergence(ours_make[p_name](GD), ours_make[q_name](GD))
        return
    gp, gq = ours_make[p_name](GD), ours_make[q_name](GD)
    got = GD.kl_divergence(gp, gq)
    assert_close(got, expected, scale=100)
    if not np.isfinite(expected.detach().numpy()).all() or not expected.requires_grad:
        return
    got.sum().backward()
    expected.sum().backward()
    ours_leaves = [v for v in (*gp.__dict__.values(), *gq.__dict__.values())
                   if isinstance(v, gradiente.Tensor) and v.is_leaf and v.requires_grad]
    their_leaves = [v for v in (*tp.__dict__.values(), *tq.__dict__.values())
                    if isinstance(v, torch.Tensor) and v.is_leaf and v.requires_grad]
    for a, b in zip(ours_leaves, their_leaves):
        if b.grad is not None:
            assert_close(a.grad, b.grad, scale=1000)


def test_kl_gradcheck_for_the_new_pairs():
    def make(values):
        return gradiente.tensor(values, dtype=gradiente.float64, requires_grad=True)

    loc, scale = make([0.5, -1.0]), make([1.5, 0.7])
    loc2, scale2 = make([0.3, -0.4]), make([1.2, 0.6])
    assert gradcheck(lambda a, b, c, d: GD.kl_divergence(GD.Gumbel(a, b), GD.Gumbel(c, d)), (loc, scale, loc2, scale2))
    assert gradcheck(lambda a, b, c, d: GD.kl_divergence(GD.Cauchy(a, b), GD.Cauchy(c, d)), (loc, scale, loc2, scale2))
    assert gradcheck(lambda a, b, c, d: GD.kl_divergence(GD.Gumbel(a, b), GD.Normal(c, d)), (loc, scale, loc2, scale2))
    assert gradcheck(lambda a, b, c, d: GD.kl_divergence(GD.LogNormal(a, b), GD.LogNormal(c, d)),
                     (loc, scale, loc2, scale2))
    probs, probs2 = make([0.2, 0.7]), make([0.4, 0.9])
    assert gradcheck(lambda a, b: GD.kl_divergence(GD.ContinuousBernoulli(a), GD.ContinuousBernoulli(b)),
                     (probs, probs2))
    assert gradcheck(lambda a, b: GD.kl_divergence(GD.Geometric(a), GD.Geometric(b)), (probs, probs2))
    alpha, alpha2 = make([3.5, 2.5]), make([3.0, 4.0])
    assert gradcheck(lambda a, b, c, d: GD.kl_divergence(GD.Pareto(a, b), GD.Pareto(c, d)),
                     (scale2, alpha, scale2.detach() * 0.5, alpha2))


def test_kl_of_transformed_distributions_with_different_transforms_is_not_implemented():
    for D in (GD, TD):
        p = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.ExpTransform()])
        q = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.SigmoidTransform()])
        with pytest.raises(NotImplementedError):
            D.kl_divergence(p, q)


def test_generalized_pareto_exponential_branch_at_zero_concentration():
    # ξ = 0 takes the exponential formulas (no gradient in ξ there, as in PyTorch); compared in float32.
    value = [0.5, 2.0]
    a = GD.GeneralizedPareto(gradiente.tensor(0.0), gradiente.tensor(1.5), gradiente.tensor([0.0, 0.0]))
    b = TD.GeneralizedPareto(torch.tensor(0.0), torch.tensor(1.5), torch.tensor([0.0, 0.0]))
    assert_close(a.log_prob(gradiente.tensor(value)), b.log_prob(torch.tensor(value)))
    assert_close(a.cdf(gradiente.tensor(value)), b.cdf(torch.tensor(value)))
    assert_close(a.icdf(gradiente.tensor([0.2, 0.9])), b.icdf(torch.tensor([0.2, 0.9])))
    assert repr(a.support) == repr(b.support).replace("torch.", "gradiente.")


def test_von_mises_tiny_concentration_and_float32_samples():
    # κ below 1e-5 takes the Taylor form of the proposal; the sampler runs in float64 and returns float32.
    for loc, kappa in (([0.0, 1.0], [1e-6, 2.0]), ([3.0, -3.0], [50.0, 0.3])):
        gradiente.manual_seed(7)
        torch.manual_seed(7)
        a = GD.VonMises(gradiente.tensor(loc), gradiente.tensor(kappa)).sample((5,))
        b = TD.VonMises(torch.tensor(loc), torch.tensor(kappa)).sample((5,))
        assert_close(a, b)
        assert_close(gradiente.rand(1), torch.rand(1))


# --- Wishart ----------------------------------------------------------------------------------------------------

SCALE = [[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]]


def _wishart(D, dtype, given, requires_grad=False):
    lib = lib_of(D)
    df = lib.tensor([4.0, 6.5], dtype=getattr(lib, dtype), requires_grad=requires_grad)
    scale = np.array(SCALE)
    matrix = {"covariance_matrix": scale, "precision_matrix": np.linalg.inv(scale),
              "scale_tril": np.linalg.cholesky(scale)}[given]
    param = lib.tensor(matrix, dtype=getattr(lib, dtype), requires_grad=requires_grad)
    return D.Wishart(df, **{given: param}), (df, param)


@pytest.mark.filterwarnings("ignore:Singular sample detected")
@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_wishart_against_torch(given, dtype):
    ours, our_leaves = _wishart(GD, dtype, given, requires_grad=True)
    theirs, their_leaves = _wishart(TD, dtype, given, requires_grad=True)
    assert repr(ours) == repr(theirs).replace("torch.", "gradiente.")
    tol = 1000 if dtype == "float32" else 100
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        assert_close(getattr(ours, name), getattr(theirs, name), tol)
    assert_close(ours.entropy(), theirs.entropy(), tol)
    gradiente.manual_seed(0)
    torch.manual_seed(0)
    a, b = ours.rsample((2,)), theirs.rsample((2,))
    assert_close(a, b, tol)
    assert_close(gradiente.rand(1), torch.rand(1))
    c, d = ours.log_prob(gradiente.tensor(b.detach().numpy())), theirs.log_prob(b.detach())
    assert_close(c, d, tol)
    c.sum().backward()
    d.sum().backward()
    for x, y in zip(our_leaves, their_leaves):
        np.testing.assert_allclose(to_np(x.grad), to_np(y.grad), rtol=1e-4, atol=1e-4)
    big, their_big = ours.expand((3, 2)), theirs.expand((3, 2))
    assert tuple(big.batch_shape) == tuple(their_big.batch_shape)
    assert_close(big.mean, their_big.mean, tol)


def test_wishart_warns_as_torch_and_gradchecks():
    for D in (GD, TD):
        with pytest.warns(UserWarning, match="Singular sample detected"):
            _wishart(D, "float64", "scale_tril")[0].rsample()
        with pytest.warns(UserWarning, match="Low df values detected"):
            D.Wishart(lib_of(D).tensor(2.5), lib_of(D).eye(3))
    value = gradiente.tensor(np.array(SCALE) * 3)

    def log_prob(df, tril):
        return GD.Wishart(df, scale_tril=tril.tril()).log_prob(value)

    leaves = (gradiente.tensor([4.0, 6.5], dtype=gradiente.float64, requires_grad=True),
              gradiente.tensor(np.linalg.cholesky(np.array(SCALE)), requires_grad=True))
    assert gradcheck(log_prob, leaves)


@pytest.mark.parametrize("call", [
    lambda D, lib: D.Wishart(3.0),
    lambda D, lib: D.Wishart(3.0, lib.eye(2), lib.eye(2)),
    lambda D, lib: D.Wishart(3.0, lib.ones(2)),
    lambda D, lib: D.Wishart(0.5, lib.eye(2)),
    lambda D, lib: D.Wishart(3.0, lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
])
def test_wishart_errors(call):
    ours, theirs = _error(lambda: call(GD, gradiente)), _error(lambda: call(TD, torch))
    assert theirs is not None
    assert ours == (theirs[0], theirs[1].replace("torch.", "gradiente."))


def _gaussians(D, lib):
    t = lambda v: lib.tensor(v, dtype=lib.float64, requires_grad=True)  # noqa: E731
    return {
        "lowrank": lambda: D.LowRankMultivariateNormal(t([[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]]),
                                                       t([[1.0, 0.5], [0.2, -1.0], [0.3, 0.4]]), t([1.0, 2.0, 0.5])),
        "lowrank2": lambda: D.LowRankMultivariateNormal(t([0.5, 0.0, -1.0]), t([[0.3], [1.0], [-0.5]]),
                                                        t([0.7, 1.5, 2.0])),
        "mvn": lambda: D.MultivariateNormal(t([0.2, 0.1, 0.0]), scale_tril=t(np.linalg.cholesky(np.array(SCALE)))),
        "lowrank_2d": lambda: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.5]]), t([1.0, 2.0])),
    }


@pytest.mark.parametrize(("p", "q"), [("lowrank", "lowrank2"), ("lowrank2", "lowrank"), ("mvn", "lowrank"),
                                      ("lowrank", "mvn"), ("lowrank", "lowrank_2d"), ("mvn", "lowrank_2d"),
                                      ("lowrank_2d", "mvn")])
def test_kl_low_rank_gaussians(p, q):
    ours, theirs = _gaussians(GD, gradiente), _gaussians(TD, torch)
    gp, gq, tp, tq = ours[p](), ours[q](), theirs[p](), theirs[q]()
    err_ours = _error(lambda: GD.kl_divergence(gp, gq))
    err_theirs = _error(lambda: TD.kl_divergence(tp, tq))
    assert err_ours == err_theirs
    if err_theirs is not None:
        return
    a, b = GD.kl_divergence(gp, gq), TD.kl_divergence(tp, tq)
    assert_close(a, b, scale=100)
    a.sum().backward()
    b.sum().backward()
    for name in ("loc", "_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_unbroadcasted_scale_tril"):
        for x, y in ((gp, tp), (gq, tq)):
            leaf_x, leaf_y = x.__dict__.get(name), y.__dict__.get(name)
            if leaf_y is not None and leaf_y.is_leaf:
                assert_close(leaf_x.grad, leaf_y.grad, scale=1000)


def test_every_distribution_lives_in_the_module_torch_names():
    import importlib
    for name in TD.__all__:
        theirs = getattr(TD, name)
        if not isinstance(theirs, type) or name in ("OneHotCategorical", "OneHotCategoricalStraightThrough"):
            continue  # gradiente keeps those two in categorical.py
        module = theirs.__module__.replace("torch.", "gradiente.", 1)
        assert getattr(importlib.import_module(module), name) is getattr(GD, name), name
    assert GD.relaxed_bernoulli.LogitRelaxedBernoulli.__name__ == "LogitRelaxedBernoulli"
    assert GD.relaxed_categorical.ExpRelaxedCategorical.__name__ == "ExpRelaxedCategorical"
