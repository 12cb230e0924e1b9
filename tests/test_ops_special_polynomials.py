"""torch.special's orthogonal polynomials and the Bessel functions gradiente has, against torch: values in
float32/float64 over edges (0, ±1, negative, ±inf, nan, negative degrees), dtypes, numbers as either operand, and
no gradient (PyTorch records none for these)."""
import math

import numpy as np
import pytest
import torch

import gradiente

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
BESSEL = ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]
POINTS = [-3.0, -1.0, -0.7, -0.5, 0.0, 0.3, 0.5, 0.99, 1.0, 2.0, math.inf, -math.inf]
DEGREES = [-1, 0, 1, 2, 3, 5, 7, 9, 12, 20]


def _close(ours, theirs, rtol):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch", "gradiente")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-4), ("float64", 1e-10)])
def test_polynomial_grid_matches_torch(name, dtype, rtol):
    x, n = np.meshgrid(POINTS, DEGREES)
    theirs = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)), torch.tensor(n))
    ours = getattr(gradiente.special, name)(gradiente.tensor(x, dtype=getattr(gradiente, dtype)),
                                            gradiente.tensor(n))
    _close(ours, theirs, rtol)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_numbers_integers_and_broadcasting(name):
    cases = [lambda lib: (0.5, lib.tensor([3, 2, -1, 0])),
             lambda lib: (lib.tensor([[0.25], [-0.5]]), 4),
             lambda lib: (lib.tensor([1, 2]), lib.tensor([2, 3])),
             lambda lib: (lib.tensor([0.2, 1.5], dtype=lib.float64), 2.7)]
    for make in cases:
        _close(getattr(gradiente.special, name)(*make(gradiente)), getattr(torch.special, name)(*make(torch)), 1e-5)


@pytest.mark.parametrize("name", POLYNOMIALS + BESSEL)
def test_no_gradient_is_recorded_as_in_torch(name):
    def run(lib):
        x = lib.tensor([0.5, -0.25], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(x, 3) if name in POLYNOMIALS else getattr(lib.special, name)(x)
        assert y.grad_fn is None and not y.requires_grad
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
        return str(caught.value)
    assert run(gradiente) == run(torch)


def test_out_argument_and_names_exported():
    out = gradiente.empty(3)
    gradiente.special.legendre_polynomial_p(gradiente.tensor([0.1, 0.2, 0.3]), 2, out=out)
    ref = torch.special.legendre_polynomial_p(torch.tensor([0.1, 0.2, 0.3]), 2)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    for name in POLYNOMIALS + BESSEL:
        assert name in gradiente.special.__all__
