"""The samplers, ``ops/sampling.py`` (and the element-by-element kernels of ``ops/samplers.py`` beneath), as
PyTorch's ``poisson``, ``binomial``, ``_standard_gamma`` and ``_sample_dirichlet`` call them at the top level
(``functional_aliases.py``) and as ``distributions.Dirichlet.rsample`` does: the same draws as PyTorch for the same
seed or generator, the gradients and nodes of the samples (the op-spec table: Poisson's zero gradient by gradcheck,
Gamma's and Dirichlet's reparameterization gradients against PyTorch), argument names, and error messages.
"""
import inspect
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests
from test_ops_linalg import _torch_names, assert_same, both, node_name

import gradiente

torch = pytest.importorskip("torch")


# --- the same draws as PyTorch, for the same seed or generator ----------------------------------------------------

SAMPLERS = [
    ("poisson", lambda lib, g: lib.poisson(lib.tensor([0.5, 2.0, 30.0, 0.0]), g)),
    ("poisson_half", lambda lib, g: lib.poisson(lib.tensor([1.0, 4.0, 12.0], dtype=lib.float16), generator=g)),
    ("binomial", lambda lib, g: lib.binomial(lib.tensor([5.0, 20.0, 100.0]), lib.tensor([0.3, 0.5, 0.9]), g)),
    ("binomial_double", lambda lib, g: lib.binomial(count=lib.tensor([[3.0], [40.0]], dtype=lib.float64),
                                                    prob=lib.tensor([[0.2], [0.7]], dtype=lib.float64),
                                                    generator=g)),
    ("standard_gamma", lambda lib, g: lib._standard_gamma(lib.tensor([0.3, 1.0, 4.0]), g)),
    ("standard_gamma_double", lambda lib, g: lib._standard_gamma(input=lib.tensor([0.5, 9.0], dtype=lib.float64),
                                                                 generator=g)),
    ("sample_dirichlet", lambda lib, g: lib._sample_dirichlet(lib.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]]), g)),
    ("sample_dirichlet_double", lambda lib, g: lib._sample_dirichlet(
        input=lib.tensor([0.2, 5.0], dtype=lib.float64), generator=g)),
]


@pytest.mark.parametrize("name,fn", SAMPLERS, ids=[s[0] for s in SAMPLERS])
@pytest.mark.parametrize("seeding", ["manual_seed", "generator"])
def test_samplers_draw_as_torch(name, fn, seeding):
    results = []
    for lib in (gradiente, torch):
        generator = None
        if seeding == "manual_seed":
            lib.manual_seed(12)
        else:
            generator = lib.Generator().manual_seed(13)
        sample = fn(lib, generator)
        follow = generator if generator is not None else None
        results.append((sample, lib.rand(3, generator=follow)))
    (ours, after), (theirs, t_after) = results
    assert_same(ours, theirs, rtol=1e-6, atol=0)
    assert_same(after, t_after)


# --- gradients and nodes of the samples --------------------------------------------------------------------------

def seeded(sampler):
    """``sampler(lib, x)`` drawing from a fixed seed: every call (gradcheck makes many) draws the same numbers."""
    def fn(lib, x):
        lib.manual_seed(5)
        return sampler(lib, x)
    return fn


# Samples differentiable in their parameters. Gamma and Dirichlet: the implicit reparameterization gradient keeps
# the sample's quantile fixed, not the generator's draws that finite differences would keep, so no gradcheck;
# gradiente's gradients are exact where PyTorch's approximate them (to ~3e-5 for Gamma, ~1e-3 for Dirichlet, beyond
# the float64 tolerance), so they are compared in float32.
SAMPLER_SPECS = [
    OpSpec("poisson", seeded(lambda lib, rate: lib.poisson(rate)), [((2, 3),)], domain=(0.5, 3.0)),
    OpSpec("standard_gamma", seeded(lambda lib, alpha: lib._standard_gamma(alpha)), [((2, 3),)], domain=(0.5, 3.0),
           gradcheck=False, dtypes=("float32",)),
    OpSpec("dirichlet_rsample", seeded(lambda lib, c: lib.distributions.Dirichlet(c).rsample()), [((2, 3),)],
           domain=(0.5, 3.0), gradcheck=False, dtypes=("float32",)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SAMPLER_SPECS)


def test_sampler_gradients_and_nodes():
    rate = np.array([0.5, 2.0, 3.0])
    for lib_pair in [both(lambda lib, a: lib.poisson(a), [rate])]:
        (ours_in, ours), (theirs_in, theirs) = lib_pair
        assert node_name(ours) == node_name(theirs) == "PoissonBackward0"
        ours.sum().backward()
        theirs.sum().backward()
        assert_same(ours_in[0].grad, theirs_in[0].grad)
    gradiente.manual_seed(0)
    torch.manual_seed(0)
    (ours_in, ours), (theirs_in, theirs) = both(lambda lib, a: lib._standard_gamma(a), [rate])
    assert node_name(ours) == node_name(theirs) == "StandardGammaBackward0"
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    (_, ours), (_, theirs) = both(lambda lib, a: lib._sample_dirichlet(a), [rate])
    assert node_name(ours) == node_name(theirs) == "NotImplemented"
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "torch::autograd::NotImplemented"
    (_, ours), (_, theirs) = both(lambda lib, n, p: lib.binomial(n, p), [np.array([3.0, 4.0]), np.array([0.5, 0.2])])
    assert node_name(ours) == node_name(theirs) == "NotImplemented"
    assert len(ours.grad_fn.next_functions) == len(theirs.grad_fn.next_functions) == 2
    with gradiente.no_grad():
        assert gradiente._sample_dirichlet(gradiente.tensor([1.0, 2.0], requires_grad=True)).grad_fn is None


# --- argument names: those of PyTorch's top-level function --------------------------------------------------------

_TOP_LEVEL = ["poisson", "binomial", "_standard_gamma", "_sample_dirichlet"]


@pytest.mark.parametrize("name", _TOP_LEVEL)
def test_top_level_argument_names(name):
    ours = [p for p in inspect.signature(getattr(gradiente, name)).parameters if p != "out"]
    assert ours == _torch_names(torch, name, name)


# --- errors -------------------------------------------------------------------------------------------------------

ERRORS = [
    ("poisson_of_a_list", lambda lib: lib.poisson([1.0, 2.0])),
    ("poisson_int", lambda lib: lib.poisson(lib.tensor([1, 2]))),
    ("poisson_negative", lambda lib: lib.poisson(lib.tensor([-1.0]))),
    ("standard_gamma_int", lambda lib: lib._standard_gamma(lib.tensor([1, 2]))),
    ("standard_gamma_half", lambda lib: lib._standard_gamma(lib.tensor([1.0], dtype=lib.float16))),
    ("sample_dirichlet_int", lambda lib: lib._sample_dirichlet(lib.tensor([1, 2]))),
    ("binomial_int_count", lambda lib: lib.binomial(lib.tensor([1, 2]), lib.tensor([0.5, 0.5]))),
    ("binomial_int_prob", lambda lib: lib.binomial(lib.tensor([1.0, 2.0]), lib.tensor([1, 2]))),
    ("binomial_dtypes", lambda lib: lib.binomial(lib.tensor([1.0]), lib.tensor([0.5], dtype=lib.float64))),
    ("binomial_half", lambda lib: lib.binomial(lib.tensor([1.0], dtype=lib.float16),
                                               lib.tensor([0.5], dtype=lib.float16))),
    ("binomial_backward", lambda lib: lib.binomial(lib.tensor([3.0]), lib.tensor([0.5], requires_grad=True))
     .sum().backward()),
    ("sample_dirichlet_backward", lambda lib: lib._sample_dirichlet(lib.tensor([1.0, 2.0], requires_grad=True))
     .sum().backward()),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)
