"""gradiente.distributions against torch.distributions (torch==2.13.0, CPU).

A table of specs (one per distribution and parameterization) drives most tests: each builds the same
distribution in both libraries from the same arrays. For each spec, in float32 and float64: the samples drawn
for the same seed (and how much of the generator they use), reparameterized samples and their gradients,
log_prob, entropy and the moments with their gradients, cdf/icdf, reprs, expand and enumerate_support. Then
validation errors, KL divergences, the triangular solve the multivariate normal uses, and a small VAE trained
in both libraries.
"""
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
from harness import OpSpec, spec_tests

import gradiente
import gradiente.distributions as GD

torch = pytest.importorskip("torch")
TD = torch.distributions

DTYPES = ["float32", "float64"]
TOL = {"float32": {"rtol": 2e-6, "atol": 2e-6}, "float64": {"rtol": 1e-12, "atol": 1e-12}}


def lib_of(D):
    return gradiente if D is GD else torch


def to_np(t):
    """A tensor of either library (or a number) as a NumPy array."""
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    if isinstance(t, gradiente.Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def assert_close(ours, theirs, dtype=None, scale=1.0, exact=False):
    """Same dtype, shape and values (nan and inf in the same places)."""
    a, b = to_np(ours), to_np(theirs)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    if exact:
        np.testing.assert_array_equal(a, b)
    elif a.dtype.kind == "f":
        tol = TOL[dtype or a.dtype.name]
        np.testing.assert_allclose(a, b, rtol=tol["rtol"] * scale, atol=tol["atol"] * scale, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


# --- the spec table -------------------------------------------------------------------------------------------

SPD = [[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]]
TRILS = [[[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [0.1, -0.3, 0.7]], [[2.0, 0.0, 0.0], [0.1, 1.0, 0.0], [0.0, 0.2, 0.5]]]


@dataclass
class Spec:
    name: str
    build: Callable                    # build(D, *params) -> distribution, D the distributions module
    params: list                       # arrays (float64; cast to the test's dtype)
    grads: tuple = ()                  # indices of the params that require grad (default: all)
    sample_exact: bool = True          # samples equal bit for bit (else to the dtype's tolerance)
    # rtol for the gradients of rsample where PyTorch approximates them (see gradiente.distributions._reparam)
    rsample_grad_rtol: float = 0.0
    tol_scale: float = 1.0             # tolerance multiplier for the other values
    # float64 gradients through digamma use gradiente's trigamma, within ~1e-10 of PyTorch's
    grad_scale64: float = 1.0
    extra: dict = field(default_factory=dict)

    def __str__(self):
        return self.name


SPECS = [
    Spec("Normal", lambda D, loc, scale: D.Normal(loc, scale), [[0.0, 1.0, -2.0], [1.0, 0.5, 2.0]]),
    Spec("Normal-batch2d", lambda D, loc, scale: D.Normal(loc, scale), [[[0.0], [1.5]], [0.3, 1.0, 2.5]]),
    Spec("Normal-numbers", lambda D: D.Normal(0.5, 2.0), []),
    Spec("Bernoulli-probs", lambda D, p: D.Bernoulli(probs=p), [[0.2, 0.5, 0.9, 0.0]]),
    Spec("Bernoulli-logits", lambda D, logits: D.Bernoulli(logits=logits), [[[-1.0, 0.0], [3.0, 0.5]]]),
    Spec("Categorical-probs", lambda D, p: D.Categorical(probs=p), [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]]),
    Spec("Categorical-logits", lambda D, logits: D.Categorical(logits=logits), [[-1.0, 0.0, 2.0, 0.5]]),
    Spec("OneHotCategorical", lambda D, p: D.OneHotCategorical(probs=p), [[[2.0, 3.0, 5.0], [6.0, 1.0, 3.0]]]),
    Spec("OneHotCategorical-logits", lambda D, logits: D.OneHotCategorical(logits=logits), [[0.5, -1.0, 1.0]]),
    Spec("Uniform", lambda D, low, high: D.Uniform(low, high), [[0.0, -1.0, 2.0], [1.0, 3.0, 2.5]]),
    Spec("Exponential", lambda D, rate: D.Exponential(rate), [[0.5, 2.0, 3.0]]),
    Spec("Laplace", lambda D, loc, scale: D.Laplace(loc, scale), [[0.0, 1.0], [1.0, 3.0]], sample_exact=False),
    Spec("Gamma", lambda D, a, b: D.Gamma(a, b), [[0.5, 2.0, 9.0], [1.0, 3.0, 0.5]], rsample_grad_rtol=2e-3,
         grad_scale64=1e3),
    Spec("Beta", lambda D, a, b: D.Beta(a, b), [[0.5, 2.0, 9.0], [1.0, 3.0, 0.5]], rsample_grad_rtol=2e-3,
         grad_scale64=1e3),
    Spec("Dirichlet", lambda D, c: D.Dirichlet(c), [[[0.5, 2.0, 9.0], [1.0, 1.0, 1.0]]], rsample_grad_rtol=2e-3,
         grad_scale64=1e3),
    Spec("Binomial", lambda D, n, p: D.Binomial(n, p), [[5.0, 20.0, 100.0], [0.3, 0.6, 0.95]], grads=(1,),
         tol_scale=5),
    Spec("Binomial-logits", lambda D, logits: D.Binomial(10, logits=logits), [[-2.0, 0.0, 1.0]], tol_scale=5),
    Spec("Poisson", lambda D, rate: D.Poisson(rate), [[0.5, 5.0, 30.0]]),
    Spec("MultivariateNormal-cov", lambda D, loc, cov: D.MultivariateNormal(loc, covariance_matrix=cov),
         [[0.0, 1.0, 2.0], SPD], sample_exact=False, tol_scale=10),
    Spec("MultivariateNormal-tril", lambda D, loc, tril: D.MultivariateNormal(loc, scale_tril=tril),
         [[0.0, 1.0, 2.0], TRILS], sample_exact=False, tol_scale=10),
    Spec("MultivariateNormal-prec", lambda D, loc, prec: D.MultivariateNormal(loc, precision_matrix=prec),
         [[[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]], SPD], sample_exact=False, tol_scale=10),
    Spec("Independent-Normal", lambda D, loc, scale: D.Independent(D.Normal(loc, scale), 1),
         [[[0.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 4.0]]]),
    Spec("Independent-Bernoulli", lambda D, p: D.Independent(D.Bernoulli(p), 2), [[[0.1, 0.5], [0.7, 0.3]]]),
]


def build(spec, D, dtype):
    """The spec's distribution in library D (its modules), and its leaf parameters."""
    lib = lib_of(D)
    wanted = spec.grads or range(len(spec.params))
    leaves = [lib.tensor(np.asarray(p, dtype=dtype), requires_grad=i in wanted) for i, p in enumerate(spec.params)]
    return spec.build(D, *leaves), leaves


def both(spec, dtype):
    return build(spec, GD, dtype), build(spec, TD, dtype)


def upstream(shape, dtype, seed=7):
    """A non-trivial upstream gradient (weights) for ``.backward``."""
    return np.random.RandomState(seed).uniform(0.5, 1.5, size=tuple(shape)).astype(dtype)


def backward_and_compare(ours, theirs, our_leaves, their_leaves, dtype, scale=1.0, grad_scale64=1.0, exact=False,
                         grad_rtol=0.0):
    """Backpropagate the same weights through both results; compare the values and each leaf's gradient (to
    ``grad_rtol`` if given, else to the dtype's tolerance)."""
    assert_close(ours, theirs, dtype, scale, exact=exact)
    grad_scale = scale * (grad_scale64 if dtype == "float64" else 1.0)
    if not theirs.requires_grad:
        return
    weights = upstream(theirs.shape, dtype)
    ours.backward(gradiente.tensor(weights))
    theirs.backward(torch.tensor(weights))
    for a, b in zip(our_leaves, their_leaves):
        if b.grad is None:
            assert a.grad is None or not np.any(to_np(a.grad))
        elif grad_rtol:
            np.testing.assert_allclose(to_np(a.grad), to_np(b.grad), rtol=grad_rtol, atol=1e-6)
        else:
            assert_close(a.grad, b.grad, dtype, grad_scale)
        a.grad, b.grad = None, None


def value_for(theirs, shape=(3,)):
    """A value in the support to score: a torch sample, shared by both libraries as an array."""
    torch.manual_seed(11)
    return theirs.sample(shape).numpy()


# --- samples ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)])
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_sample_draws_torchs_numbers(spec, sample_shape, dtype):
    (ours, _), (theirs, _) = both(spec, dtype)
    gradiente.manual_seed(3)
    torch.manual_seed(3)
    a, b = ours.sample(sample_shape), theirs.sample(sample_shape)
    assert a.shape == b.shape == theirs._extended_shape(sample_shape)
    assert not a.requires_grad
    assert_close(a, b, dtype, exact=spec.sample_exact)
    # The samplers used as much of the generator as PyTorch's: the next numbers agree too.
    assert_close(gradiente.rand(4, dtype=gradiente.float64), torch.rand(4, dtype=torch.float64), exact=True)
    assert_close(gradiente.randn(3), torch.randn(3), exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", [s for s in SPECS if s.build(TD, *[torch.tensor(p) for p in s.params]).has_rsample],
                         ids=str)
def test_rsample_draws_torchs_numbers_and_backpropagates(spec, dtype):
    for sample_shape in [(), (4,)]:
        # built anew each time: a backward pass frees the graph of parameters computed at construction
        (ours, our_leaves), (theirs, their_leaves) = both(spec, dtype)
        gradiente.manual_seed(5)
        torch.manual_seed(5)
        a, b = ours.rsample(sample_shape), theirs.rsample(sample_shape)
        backward_and_compare(a, b, our_leaves, their_leaves, dtype, spec.tol_scale, exact=spec.sample_exact,
                             grad_rtol=spec.rsample_grad_rtol)


def test_sample_n_warns_and_samples():
    d = GD.Normal(gradiente.zeros(2), gradiente.ones(2))
    gradiente.manual_seed(0)
    torch.manual_seed(0)
    with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
        ours = d.sample_n(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = TD.Normal(torch.zeros(2), torch.ones(2)).sample_n(3)
    assert_close(ours, theirs, exact=True)


def test_large_samples_use_the_vectorized_normal_path():
    """16 or more normals take PyTorch's block path, fewer the pairwise one: both must match."""
    for n in (15, 16, 17, 100):
        gradiente.manual_seed(2)
        torch.manual_seed(2)
        ours = GD.Normal(gradiente.zeros(n), gradiente.ones(n)).rsample()
        theirs = TD.Normal(torch.zeros(n), torch.ones(n)).rsample()
        assert_close(ours, theirs, exact=True)


# --- densities, moments and their gradients ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_log_prob_and_its_gradients(spec, dtype):
    (ours, our_leaves), (theirs, their_leaves) = both(spec, dtype)
    value = value_for(theirs)
    a, b = ours.log_prob(gradiente.tensor(value)), theirs.log_prob(torch.tensor(value))
    backward_and_compare(a, b, our_leaves, their_leaves, dtype, spec.tol_scale, spec.grad_scale64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("prop", ["mean", "variance", "stddev", "mode", "entropy", "perplexity"])
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_moments_and_entropy_with_gradients(spec, prop, dtype):
    (ours, our_leaves), (theirs, their_leaves) = both(spec, dtype)

    def get(d):
        value = getattr(d, prop)
        return value() if callable(value) else value
    try:
        b = get(theirs)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            get(ours)
        return
    a = get(ours)
    backward_and_compare(a, b, our_leaves, their_leaves, dtype, spec.tol_scale, spec.grad_scale64)


CDF_SPECS = [s for s in SPECS if s.name in ("Normal", "Normal-batch2d", "Uniform", "Exponential", "Laplace")] + [
    # P(α, βx) is differentiable in β and x only; PyTorch's igamma is itself within ~1e-9 of the exact value.
    Spec("Gamma", lambda D, a, b: D.Gamma(a, b), [[0.5, 2.0, 9.0, 60.0], [1.0, 3.0, 0.5, 1.2]], grads=(1,),
         grad_scale64=1e3, tol_scale=1e3),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", CDF_SPECS, ids=str)
def test_cdf_and_icdf_with_gradients(spec, dtype):
    (ours, our_leaves), (theirs, their_leaves) = both(spec, dtype)
    value = value_for(theirs)
    scale = spec.tol_scale if dtype == "float64" else 1.0
    backward_and_compare(ours.cdf(gradiente.tensor(value)), theirs.cdf(torch.tensor(value)), our_leaves,
                         their_leaves, dtype, scale)
    quantiles = np.random.RandomState(0).uniform(0.05, 0.95, size=(3,) + tuple(theirs.batch_shape)).astype(dtype)
    try:
        expected = theirs.icdf(torch.tensor(quantiles))
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.icdf(gradiente.tensor(quantiles))
        return
    backward_and_compare(ours.icdf(gradiente.tensor(quantiles)), expected, our_leaves, their_leaves, dtype, scale=10)


# The regularized incomplete gamma function behind Gamma.cdf (IgammaBackward0) as an op: differentiable in the rate
# and the value only. PyTorch's igamma is within ~1e-9 of the exact value, beyond the float64 tolerance: compared
# in float32; float64 gradcheck checks the rule.
CDF_OPS = [
    OpSpec("gamma_cdf", lambda lib, a, b, x: lib.distributions.Gamma(a, b).cdf(x), [((4,), (4,), (4,))],
           domain=(0.5, 3.0), grad_inputs=(1, 2), dtypes=("float32",)),
]

test_gradcheck_cdf, test_against_torch_cdf, test_gradgradcheck_cdf = spec_tests(CDF_OPS)


def test_gamma_cdf_is_not_differentiable_in_the_concentration():
    for D in (GD, TD):
        lib = lib_of(D)
        concentration = lib.tensor([2.0], requires_grad=True)
        cdf = D.Gamma(concentration, lib.tensor([1.0])).cdf(lib.tensor([1.5]))
        assert type(cdf.grad_fn).__name__ == "IgammaBackward0"
        with pytest.raises(NotImplementedError, match=r"the derivative for 'igamma: input' is not implemented\."):
            cdf.sum().backward()


def test_value_given_as_differentiable_tensor():
    """log_prob is differentiable in the value too (the score of a reparameterized sample)."""
    for D in (GD, TD):
        lib = lib_of(D)
        x = lib.tensor([0.3, -1.2], requires_grad=True)
        D.Laplace(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 2.0])).log_prob(x).sum().backward()
        D.Normal(0.0, 2.0).log_prob(x).sum().backward()
        if D is GD:
            ours = x.grad
    assert_close(ours, x.grad)


# --- shapes, repr, expand, support ----------------------------------------------------------------------------

@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_shapes_and_repr(spec):
    (ours, _), (theirs, _) = both(spec, "float32")
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert isinstance(ours.batch_shape, gradiente.Size)
    assert repr(ours) == repr(theirs).replace("torch.", "gradiente.")
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert repr(ours.support) == repr(theirs.support).replace("torch.", "gradiente.")


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_expand(spec):
    (ours, _), (theirs, _) = both(spec, "float64")
    new_shape = (2,) + tuple(theirs.batch_shape)
    a, b = ours.expand(new_shape), theirs.expand(new_shape)
    assert type(a) is type(ours)
    assert tuple(a.batch_shape) == tuple(b.batch_shape)
    assert tuple(a.event_shape) == tuple(b.event_shape)
    assert repr(a) == repr(b).replace("torch.", "gradiente.")
    gradiente.manual_seed(4)
    torch.manual_seed(4)
    assert_close(a.sample((2,)), b.sample((2,)), exact=spec.sample_exact)
    value = value_for(b, ())
    assert_close(a.log_prob(gradiente.tensor(value)), b.log_prob(torch.tensor(value)), scale=spec.tol_scale)


@pytest.mark.parametrize("expand", [True, False])
@pytest.mark.parametrize("spec", [s for s in SPECS if s.name in ("Bernoulli-probs", "Categorical-probs",
                                                                  "OneHotCategorical", "Binomial-logits")], ids=str)
def test_enumerate_support(spec, expand):
    (ours, _), (theirs, _) = both(spec, "float32")
    assert_close(ours.enumerate_support(expand), theirs.enumerate_support(expand), exact=True)


def test_binomial_entropy_needs_one_total_count():
    for D in (GD, TD):
        lib = lib_of(D)
        with pytest.raises(NotImplementedError, match=r"Inhomogeneous total count not supported by `entropy`\."):
            D.Binomial(lib.tensor([2.0, 3.0]), lib.tensor([0.5, 0.5])).entropy()


def test_lazy_parameterizations_and_probs_normalization():
    for name in ("probs", "logits"):
        ours = GD.Categorical(**{name: gradiente.tensor([1.0, 2.0, 3.0])})
        theirs = TD.Categorical(**{name: torch.tensor([1.0, 2.0, 3.0])})
        for attr in ("probs", "logits"):
            assert_close(getattr(ours, attr), getattr(theirs, attr))
    ours, theirs = GD.Bernoulli(logits=gradiente.tensor([0.3])), TD.Bernoulli(logits=torch.tensor([0.3]))
    assert "probs" not in ours.__dict__
    assert_close(ours.probs, theirs.probs)
    assert "probs" in ours.__dict__


def test_lazy_property_keeps_history_under_no_grad():
    logits = gradiente.tensor([0.3, -0.2], requires_grad=True)
    d = GD.Bernoulli(logits=logits)
    with gradiente.no_grad():
        probs = d.probs
    assert probs.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("prop", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_parameterizations(given, prop, dtype):
    """Each of the three matrices, computed from whichever was given (and differentiable in it)."""
    matrix = np.array(SPD) if given != "scale_tril" else np.linalg.cholesky(SPD)
    results = []
    for D in (GD, TD):
        lib = lib_of(D)
        leaves = [lib.tensor(np.array([[0.0, 1.0, 2.0]] * 2, dtype), requires_grad=True),
                  lib.tensor(matrix.astype(dtype), requires_grad=True)]
        d = D.MultivariateNormal(leaves[0], **{given: leaves[1]})
        results.append((getattr(d, prop), leaves))
    (a, our_leaves), (b, their_leaves) = results
    backward_and_compare(a, b, our_leaves, their_leaves, dtype, scale=10)


def test_one_hot_straight_through_rsample():
    results = []
    for D in (GD, TD):
        lib = lib_of(D)
        logits = lib.tensor([[0.2, -1.0, 0.7], [1.0, 0.0, 0.0]], requires_grad=True)
        lib.manual_seed(6)
        sample = D.OneHotCategoricalStraightThrough(logits=logits).rsample((4,))
        results.append((sample, [logits]))
    (a, our_leaves), (b, their_leaves) = results
    backward_and_compare(a, b, our_leaves, their_leaves, "float32")


# --- validation ---------------------------------------------------------------------------------------------------

def _error(call):
    """The type and message of what ``call`` raises (None if it does not)."""
    try:
        call()
    except Exception as e:
        return type(e).__name__, str(e).replace("torch.", "gradiente.")
    return None


INVALID = [
    ("negative scale", lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, -1.0]))),
    ("number scale", lambda D, t: D.Normal(0.0, -1.0)),
    ("nan loc", lambda D, t: D.Laplace(t([math.nan]), t([1.0]))),
    ("probs above 1", lambda D, t: D.Bernoulli(probs=t([0.5, 1.5]))),
    ("probs and logits", lambda D, t: D.Bernoulli(probs=t([0.5]), logits=t([0.0]))),
    ("neither", lambda D, t: D.Categorical()),
    ("0-d probs", lambda D, t: D.Categorical(probs=t(0.5))),
    ("negative category", lambda D, t: D.Categorical(probs=t([-0.1, 1.1]))),
    ("low above high", lambda D, t: D.Uniform(t([0.0, 2.0]), t([1.0, 1.0]))),
    ("zero rate", lambda D, t: D.Exponential(t([0.0, 1.0]))),
    ("gamma concentration", lambda D, t: D.Gamma(t([-1.0]), t([1.0]))),
    ("beta concentration", lambda D, t: D.Beta(t([1.0]), t([0.0]))),
    ("dirichlet 0-d", lambda D, t: D.Dirichlet(t(1.0))),
    ("fractional count", lambda D, t: D.Binomial(t([2.5]), t([0.5]))),
    ("negative poisson", lambda D, t: D.Poisson(t([-1.0]))),
    ("not positive-definite", lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]]))),
    ("not symmetric", lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.5], [0.0, 1.0]]))),
    ("tril upper part", lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]]))),
    ("two matrices", lambda D, t: D.MultivariateNormal(t([0.0]), t([[1.0]]), scale_tril=t([[1.0]]))),
    ("0-d loc", lambda D, t: D.MultivariateNormal(t(0.0), t([[1.0]]))),
    ("1-d covariance", lambda D, t: D.MultivariateNormal(t([0.0]), t([1.0]))),
    ("batch mismatch", lambda D, t: D.MultivariateNormal(t([[0.0, 0.0]] * 3), t([[[1.0, 0.0], [0.0, 1.0]]] * 2))),
    ("too many reinterpreted", lambda D, t: D.Independent(D.Normal(t([0.0]), t([1.0])), 2)),
    ("string parameter", lambda D, t: D.Normal("0", 1.0)),
    ("log_prob outside the support", lambda D, t: D.Exponential(t([1.0])).log_prob(t([-1.0]))),
    ("log_prob not a tensor", lambda D, t: D.Normal(t([0.0]), t([1.0])).log_prob(0.5)),
    ("log_prob event shape", lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]]))
     .log_prob(t([1.0, 2.0, 3.0]))),
    ("log_prob batch shape", lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 1.0])).log_prob(t([1.0, 2.0, 3.0]))),
    ("category out of range", lambda D, t: D.Categorical(t([0.5, 0.5])).log_prob(t(2.0))),
    ("not one-hot", lambda D, t: D.OneHotCategorical(t([0.5, 0.5])).log_prob(t([1.0, 1.0]))),
    ("bernoulli value", lambda D, t: D.Bernoulli(t([0.5])).log_prob(t([0.5]))),
    ("uniform outside", lambda D, t: D.Uniform(t([0.0]), t([1.0])).cdf(t([2.0]))),
    ("beta outside", lambda D, t: D.Beta(t([1.0]), t([2.0])).log_prob(t([1.5]))),
    ("binomial above count", lambda D, t: D.Binomial(t([3.0]), t([0.5])).log_prob(t([4.0]))),
    ("simplex", lambda D, t: D.Dirichlet(t([1.0, 1.0])).log_prob(t([0.5, 0.6]))),
]


@pytest.mark.parametrize("case", INVALID, ids=[c[0] for c in INVALID])
def test_validation_errors_match_torch(case):
    _, call = case
    theirs = _error(lambda: call(TD, torch.tensor))
    ours = _error(lambda: call(GD, gradiente.tensor))
    assert theirs is not None
    assert ours == theirs


def test_validate_args_false_skips_the_checks():
    for D in (GD, TD):
        lib = lib_of(D)
        d = D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=False)
        assert np.isnan(to_np(d.log_prob(lib.tensor([0.5])))).all()
        assert to_np(D.Exponential(lib.tensor([1.0]), validate_args=False).log_prob(lib.tensor([-1.0])))[0] == 1.0


def test_set_default_validate_args():
    try:
        GD.Distribution.set_default_validate_args(False)
        GD.Normal(0.0, -1.0)
        with pytest.raises(ValueError):
            GD.Normal(0.0, -1.0, validate_args=True)
        with pytest.raises(ValueError):
            GD.Distribution.set_default_validate_args("yes")
    finally:
        GD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        GD.Normal(0.0, -1.0)


def test_constraints_reprs_and_checks():
    c, tc = GD.constraints, TD.constraints
    names = ["boolean", "real", "real_vector", "positive", "nonnegative", "unit_interval", "simplex", "one_hot",
             "nonnegative_integer", "positive_integer", "lower_cholesky", "lower_triangular", "positive_definite",
             "positive_semidefinite", "symmetric", "square", "corr_cholesky"]
    for name in names:
        assert repr(getattr(c, name)) == repr(getattr(tc, name))
        assert getattr(c, name).event_dim == getattr(tc, name).event_dim
        assert getattr(c, name).is_discrete == getattr(tc, name).is_discrete
    values = np.random.RandomState(1).uniform(-0.5, 1.5, size=(4, 3, 3))
    values[0] = np.eye(3)
    values[1] = np.tril(np.abs(values[1]) + 0.1)
    for name in names:
        assert_close(getattr(c, name).check(gradiente.tensor(values)), getattr(tc, name).check(torch.tensor(values)))
    bounded = [("interval", (0.0, 1.0)), ("half_open_interval", (0.0, 1.0)), ("greater_than", (0.5,)),
               ("greater_than_eq", (0.5,)), ("less_than", (0.5,)), ("integer_interval", (0, 1))]
    for name, args in bounded:
        ours, theirs = getattr(c, name)(*args), getattr(tc, name)(*args)
        assert repr(ours) == repr(theirs)
        assert_close(ours.check(gradiente.tensor(values)), theirs.check(torch.tensor(values)))
    assert repr(c.independent(c.positive, 2)) == repr(tc.independent(tc.positive, 2))
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)
    assert c.is_dependent(GD.Uniform.support)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        c.dependent.check(gradiente.tensor([1.0]))
    stacked = c.stack([c.positive, c.real], dim=-1)
    catted = c.cat([c.positive, c.unit_interval], dim=-1, lengths=[1, 2])
    pairs = gradiente.tensor([[1.0, -1.0, 0.5], [-1.0, 2.0, 0.5]])
    assert_close(stacked.check(pairs[:, :2]), tc.stack([tc.positive, tc.real], dim=-1).check(torch.tensor(
        pairs.numpy()[:, :2])))
    assert_close(catted.check(pairs), tc.cat([tc.positive, tc.unit_interval], dim=-1, lengths=[1, 2]).check(
        torch.tensor(pairs.numpy())))


# --- KL divergence --------------------------------------------------------------------------------------------

KL_PAIRS = [
    ("Normal", lambda D, a, b, c, d: (D.Normal(a, b.exp()), D.Normal(c, d.exp()))),
    ("Bernoulli", lambda D, a, b, c, d: (D.Bernoulli(logits=a), D.Bernoulli(probs=d.sigmoid()))),
    ("Categorical", lambda D, a, b, c, d: (D.Categorical(logits=a), D.Categorical(probs=d.exp()))),
    ("OneHotCategorical", lambda D, a, b, c, d: (D.OneHotCategorical(logits=a), D.OneHotCategorical(logits=c))),
    ("Uniform", lambda D, a, b, c, d: (D.Uniform(a, a + b.exp()), D.Uniform(a - d.exp(), a + b.exp() + 1))),
    ("Exponential", lambda D, a, b, c, d: (D.Exponential(b.exp()), D.Exponential(d.exp()))),
    ("Laplace", lambda D, a, b, c, d: (D.Laplace(a, b.exp()), D.Laplace(c, d.exp()))),
    ("Gamma", lambda D, a, b, c, d: (D.Gamma(a.exp(), b.exp()), D.Gamma(c.exp(), d.exp()))),
    ("Beta", lambda D, a, b, c, d: (D.Beta(a.exp(), b.exp()), D.Beta(c.exp(), d.exp()))),
    ("Dirichlet", lambda D, a, b, c, d: (D.Dirichlet(a.exp()), D.Dirichlet(d.exp()))),
    ("Poisson", lambda D, a, b, c, d: (D.Poisson(a.exp()), D.Poisson(d.exp()))),
    ("Binomial", lambda D, a, b, c, d: (D.Binomial(10, logits=a), D.Binomial(10, logits=d))),
    ("Independent", lambda D, a, b, c, d: (D.Independent(D.Normal(a, b.exp()), 1),
                                           D.Independent(D.Normal(c, d.exp()), 1))),
    ("MultivariateNormal", lambda D, a, b, c, d: (
        D.MultivariateNormal(a, scale_tril=_tril(b)), D.MultivariateNormal(c, scale_tril=_tril(d)))),
    ("Bernoulli-Poisson", lambda D, a, b, c, d: (D.Bernoulli(logits=a), D.Poisson(d.exp()))),
    ("Beta-Exponential", lambda D, a, b, c, d: (D.Beta(a.exp(), b.exp()), D.Exponential(d.exp()))),
    ("Beta-Gamma", lambda D, a, b, c, d: (D.Beta(a.exp(), b.exp()), D.Gamma(c.exp(), d.exp()))),
    ("Beta-Normal", lambda D, a, b, c, d: (D.Beta(a.exp(), b.exp()), D.Normal(c, d.exp()))),
    ("Beta-Uniform", lambda D, a, b, c, d: (D.Beta(a.exp(), b.exp()), D.Uniform(c - 2, d.exp() + 1))),
    ("Exponential-Gamma", lambda D, a, b, c, d: (D.Exponential(b.exp()), D.Gamma(c.exp(), d.exp()))),
    ("Exponential-Normal", lambda D, a, b, c, d: (D.Exponential(b.exp()), D.Normal(c, d.exp()))),
    ("Exponential-Uniform", lambda D, a, b, c, d: (D.Exponential(b.exp()), D.Uniform(c, c + 1))),
    ("Gamma-Exponential", lambda D, a, b, c, d: (D.Gamma(a.exp(), b.exp()), D.Exponential(d.exp()))),
    ("Gamma-Normal", lambda D, a, b, c, d: (D.Gamma(a.exp(), b.exp()), D.Normal(c, d.exp()))),
    ("Laplace-Normal", lambda D, a, b, c, d: (D.Laplace(a, b.exp()), D.Normal(c, d.exp()))),
    ("Normal-Laplace", lambda D, a, b, c, d: (D.Normal(a, b.exp()), D.Laplace(c, d.exp()))),
    ("Normal-Uniform", lambda D, a, b, c, d: (D.Normal(a, b.exp()), D.Uniform(c, c + 1))),
    ("Poisson-Bernoulli", lambda D, a, b, c, d: (D.Poisson(a.exp()), D.Bernoulli(logits=d))),
    ("Uniform-Beta", lambda D, a, b, c, d: (D.Uniform(a.sigmoid() * 0.5, a.sigmoid() * 0.5 + 0.3),
                                            D.Beta(c.exp(), d.exp()))),
    ("Uniform-Exponential", lambda D, a, b, c, d: (D.Uniform(a.exp(), a.exp() + 1), D.Exponential(d.exp()))),
    ("Uniform-Gamma", lambda D, a, b, c, d: (D.Uniform(a.exp(), a.exp() + 1), D.Gamma(c.exp(), d.exp()))),
    ("Uniform-Normal", lambda D, a, b, c, d: (D.Uniform(a, a + b.exp()), D.Normal(c, d.exp()))),
]


def _tril(x):
    """A Cholesky factor from a (.., 3) vector: lower triangle from x, positive diagonal exp(x)."""
    return (x.unsqueeze(-1) * x.unsqueeze(-2) * 0.3).tril(-1) + x.exp().diag_embed()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pair", KL_PAIRS, ids=[p[0] for p in KL_PAIRS])
def test_kl_divergence_values_and_gradients(pair, dtype):
    _, make = pair
    rng = np.random.RandomState(3)
    arrays = [rng.uniform(-1, 1, size=(2, 3)).astype(dtype) for _ in range(4)]
    results = []
    for D in (GD, TD):
        lib = lib_of(D)
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        p, q = make(D, *leaves)
        results.append((D.kl_divergence(p, q), leaves))
    (a, our_leaves), (b, their_leaves) = results
    through_digamma = any(name in pair[0] for name in ("Gamma", "Beta", "Dirichlet"))
    backward_and_compare(a, b, our_leaves, their_leaves, dtype, scale=10, grad_scale64=100 if through_digamma else 1)


def test_kl_infinite_where_q_misses_p_mass():
    for D in (GD, TD):
        lib = lib_of(D)
        u = D.kl_divergence(D.Uniform(lib.tensor([0.0, 0.0]), lib.tensor([1.0, 1.0])),
                            D.Uniform(lib.tensor([0.5, -1.0]), lib.tensor([2.0, 2.0])))
        b = D.kl_divergence(D.Bernoulli(lib.tensor([0.5, 0.0])), D.Bernoulli(lib.tensor([0.0, 0.0])))
        c = D.kl_divergence(D.Categorical(lib.tensor([0.5, 0.5, 0.0])), D.Categorical(lib.tensor([0.5, 0.0, 0.5])))
        results = (u, b, c)
        if D is GD:
            ours = results
    for x, y in zip(ours, results):
        assert_close(x, y)


def test_kl_errors_and_registration():
    ours = _error(lambda: GD.kl_divergence(GD.Poisson(gradiente.tensor(1.0)), GD.Laplace(0.0, 1.0)))
    theirs = _error(lambda: TD.kl_divergence(TD.Poisson(torch.tensor(1.0)), TD.Laplace(0.0, 1.0)))
    assert ours == theirs
    assert _error(lambda: GD.kl_divergence(GD.MultivariateNormal(gradiente.zeros(2), gradiente.eye(2)),
                                           GD.MultivariateNormal(gradiente.zeros(3), gradiente.eye(3)))) == \
        _error(lambda: TD.kl_divergence(TD.MultivariateNormal(torch.zeros(2), torch.eye(2)),
                                        TD.MultivariateNormal(torch.zeros(3), torch.eye(3))))

    class Shifted(GD.Normal):
        pass

    assert_close(GD.kl_divergence(Shifted(0.0, 1.0), GD.Normal(1.0, 1.0)), torch.tensor(0.5))

    @GD.register_kl(Shifted, GD.Normal)
    def _kl_shifted_normal(p, q):
        return gradiente.tensor(42.0)

    assert GD.kl_divergence(Shifted(0.0, 1.0), GD.Normal(1.0, 1.0)).item() == 42.0
    assert GD.kl_divergence(GD.Normal(0.0, 1.0), GD.Normal(1.0, 1.0)).item() == 0.5
    with pytest.raises(TypeError):
        GD.register_kl(int, GD.Normal)


def test_exponential_family_entropy_by_autograd_matches_the_closed_form():
    """The Bregman entropy of ExponentialFamily (autograd of the log-normalizer) equals each closed form, and
    is differentiable in the parameters."""
    loc = gradiente.tensor([0.5, -1.0], dtype=gradiente.float64, requires_grad=True)
    scale = gradiente.tensor([1.5, 0.3], dtype=gradiente.float64, requires_grad=True)
    for d in (GD.Normal(loc, scale), GD.Exponential(scale), GD.Gamma(scale, loc.exp()), GD.Bernoulli(logits=loc)):
        generic = GD.ExponentialFamily.entropy(d)
        assert_close(generic, d.entropy(), scale=100)
        assert generic.requires_grad


# --- the triangular solve, the samplers' gradients ------------------------------------------------------------------

@pytest.mark.parametrize("unitriangular", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular_against_torch(upper, left, unitriangular):
    from gradiente.distributions._triangular import solve_triangular
    rng = np.random.RandomState(0)
    a = rng.uniform(-1, 1, size=(2, 4, 4)) + 3 * np.eye(4)
    b = rng.uniform(-1, 1, size=(3, 1, 4, 2) if left else (3, 1, 2, 4))
    ours_a, ours_b = gradiente.tensor(a, requires_grad=True), gradiente.tensor(b, requires_grad=True)
    theirs_a, theirs_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    options = {"upper": upper, "left": left, "unitriangular": unitriangular}
    x = solve_triangular(ours_a, ours_b, **options)
    y = torch.linalg.solve_triangular(theirs_a, theirs_b, **options)
    backward_and_compare(x, y, [ours_a, ours_b], [theirs_a, theirs_b], "float64")
    assert gradiente.autograd.gradcheck(lambda m, v: solve_triangular(m, v, **options), (ours_a, ours_b))
    assert gradiente.autograd.gradgradcheck(lambda m, v: solve_triangular(m, v, **options), (ours_a, ours_b))


def test_solve_triangular_node_name():
    from gradiente.distributions._triangular import solve_triangular
    x = solve_triangular(gradiente.eye(2, requires_grad=True), gradiente.ones(2, 1), upper=False)
    assert x.grad_fn.name() == "LinalgSolveTriangularBackward0"


def test_gamma_and_beta_reparameterized_gradients_are_exact():
    """The implicit gradients -(∂F/∂α)/p against central differences of SciPy's regularized CDFs."""
    special = pytest.importorskip("scipy.special")
    from gradiente.ops._reparam import beta_grad, standard_gamma_grad
    for alpha in [0.05, 0.7, 3.0, 40.0]:
        x = special.gammaincinv(alpha, np.array([0.01, 0.3, 0.7, 0.99]))
        h = 1e-6 * alpha
        dcdf = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
        pdf = np.exp((alpha - 1) * np.log(x) - x - special.gammaln(alpha))
        np.testing.assert_allclose(standard_gamma_grad(np.full_like(x, alpha), x), -dcdf / pdf, rtol=1e-5)
    for a, b in [(0.5, 0.5), (2.0, 3.0), (30.0, 7.0), (1.0, 40.0)]:
        x = special.betaincinv(a, b, np.array([0.01, 0.3, 0.7, 0.99]))
        h = 1e-6 * a
        dcdf = (special.betainc(a + h, b, x) - special.betainc(a - h, b, x)) / (2 * h)
        pdf = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - special.betaln(a, b))
        np.testing.assert_allclose(beta_grad(x, np.full_like(x, a), np.full_like(x, a + b)), -dcdf / pdf / (1 - x),
                                   rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rejection_samplers_cover_every_branch(dtype):
    """Parameters that send PyTorch's samplers down each branch: Gamma α < 1, = 0 and large; binomial by
    inversion and by BTRS on either side of ½; Poisson below and above 10."""
    cases = [
        (lambda D, t: D.Gamma(t([0.0, 1e-3, 0.3, 1.0, 50.0, 1e4]), t([1.0] * 6), validate_args=False)),
        (lambda D, t: D.Dirichlet(t([[1e-2, 0.5, 3.0, 100.0], [1.0, 1.0, 1.0, 1.0]]))),
        (lambda D, t: D.Beta(t([0.1, 5.0, 200.0]), t([0.3, 2.0, 100.0]))),
        (lambda D, t: D.Binomial(t([0.0, 4.0, 30.0, 30.0, 1000.0, 1000.0, 50.0]),
                                 t([0.5, 0.3, 0.2, 0.8, 0.5, 0.999, 1.0]))),
        (lambda D, t: D.Poisson(t([0.0, 0.1, 9.5, 10.0, 250.0, 1e5]))),
    ]
    for make in cases:
        gradiente.manual_seed(8)
        torch.manual_seed(8)
        ours = make(GD, lambda v: gradiente.tensor(np.asarray(v, dtype))).sample((50,))
        theirs = make(TD, lambda v: torch.tensor(np.asarray(v, dtype))).sample((50,))
        assert_close(ours, theirs, exact=True)
        assert_close(gradiente.rand(2, dtype=gradiente.float64), torch.rand(2, dtype=torch.float64), exact=True)


def test_sampling_ops_grad_fn_names():
    alpha = gradiente.tensor([1.5, 2.5], requires_grad=True)
    assert GD.Gamma(alpha, 1.0).rsample().grad_fn.next_functions[0][0].name() == "StandardGammaBackward0"
    assert "DirichletBackward" in GD.Dirichlet(alpha).rsample().grad_fn.name()


# --- a variational autoencoder step --------------------------------------------------------------------------------

def _vae_losses(lib, D, steps=5):
    """A tiny VAE on fixed binary data: the encoder gives a Normal posterior, a reparameterized sample is
    decoded into Bernoulli logits, and the loss is the negative ELBO (reconstruction + KL to N(0, 1))."""
    lib.manual_seed(0)
    nn = lib.nn
    encoder, decoder = nn.Linear(6, 2 * 2), nn.Linear(2, 6)
    params = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = lib.optim.Adam(params, lr=0.05)
    x = lib.bernoulli(lib.full((8, 6), 0.4))
    prior = D.Normal(lib.zeros(2), lib.ones(2))
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        mu, log_var = encoder(x).chunk(2, dim=-1)
        posterior = D.Independent(D.Normal(mu, (0.5 * log_var).exp()), 1)
        z = posterior.rsample()
        reconstruction = D.Independent(D.Bernoulli(logits=decoder(z)), 1).log_prob(x)
        kl = D.kl_divergence(posterior, D.Independent(prior, 1))
        loss = (kl - reconstruction).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return np.array(losses), [p.detach().numpy().copy() for p in params]


def test_vae_training_matches_torch():
    ours, our_params = _vae_losses(gradiente, GD)
    theirs, their_params = _vae_losses(torch, TD)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    for a, b in zip(our_params, their_params):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
