"""torch.special's Bessel functions that gradiente has, against torch: values in float32/float64 over edges (±0,
tiny, negative, large, ±inf, nan), dtypes of integer inputs. Their no-gradient test is in
test_ops_special_polynomials.py."""
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


@pytest.mark.parametrize("name", BESSEL)
@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-5), ("float64", 1e-12)])
def test_bessel_values_match_torch(name, dtype, rtol):
    x = [0.0, -0.0, 1e-8, 0.3, -2.0, 7.5, 30.0, math.inf, -math.inf, math.nan]
    theirs = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)))
    ours = getattr(gradiente.special, name)(gradiente.tensor(x, dtype=getattr(gradiente, dtype)))
    _close(ours, theirs, rtol)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0)  # tiny values relatively too
    ints = getattr(gradiente.special, name)(gradiente.tensor([1, 2]))
    _close(ints, getattr(torch.special, name)(torch.tensor([1, 2])), 1e-6)




@pytest.mark.parametrize("name", ["modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                                  "scaled_modified_bessel_k1"])
@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-5), ("float64", 1e-12)])
def test_bessel_k_over_its_range_matches_torch(name, dtype, rtol):
    # across the switch from the integral to Hankel's series at 50, and from tiny to underflowing values
    x = np.concatenate([[1e-300, 49.9, 50.0, 50.1, 80.0, 700.0, 800.0, 1e5], np.geomspace(1e-5, 1e3, 300)])
    theirs = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)))
    ours = getattr(gradiente.special, name)(gradiente.tensor(x, dtype=getattr(gradiente, dtype)))
    _close(ours, theirs, rtol)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0)  # tiny values relatively too
