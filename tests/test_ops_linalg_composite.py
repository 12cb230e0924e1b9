"""linalg.vander, tensorinv, tensorsolve and cond against torch.linalg: values, shapes, dtypes, errors, and
float64 gradchecks of their gradients (composed from the parts, as in PyTorch)."""
import math

import numpy as np
import pytest
import torch

import gradiente
from gradiente.autograd import gradcheck


def _pair(array, requires_grad=False):
    return (gradiente.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _same(ours, theirs, rtol=1e-6):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-8, equal_nan=True)


def _same_error(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(Exception) as ours:
        fn_ours()
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


RNG = np.random.default_rng(16)


@pytest.mark.parametrize("values, N", [([1.0, 2.0, 3.0], None), ([[0.5, -2.0], [0.0, math.inf]], 4),
                                       ([1, 2, 3], 2), ([-1.5, 0.0, 2.5, 1e3], 3)])
def test_vander_matches_torch(values, N):
    ours, theirs = _pair(values)
    _same(gradiente.linalg.vander(ours, N=N), torch.linalg.vander(theirs, N=N))


def test_vander_errors_and_gradient():
    for N in (0, 1):
        _same_error(lambda n=N: gradiente.linalg.vander(gradiente.tensor([1.0, 2.0]), N=n),
                    lambda n=N: torch.linalg.vander(torch.tensor([1.0, 2.0]), N=n))
    _same_error(lambda: gradiente.linalg.vander(gradiente.tensor(1.0)),
                lambda: torch.linalg.vander(torch.tensor(1.0)))
    x = gradiente.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert gradcheck(lambda t: gradiente.linalg.vander(t, N=4), (x,))
    ours, theirs = _pair(RNG.standard_normal(3), requires_grad=True)
    gradiente.linalg.vander(ours).sum().backward()
    torch.linalg.vander(theirs).sum().backward()
    _same(ours.grad, theirs.grad)


def test_tensorinv_matches_torch_with_gradient():
    A = RNG.standard_normal((4, 6, 8, 3))
    ours, theirs = _pair(A, requires_grad=True)
    _same(gradiente.linalg.tensorinv(ours, ind=2), torch.linalg.tensorinv(theirs, ind=2), rtol=1e-9)
    _same(gradiente.linalg.tensorinv(ours.reshape(24, 8, 3), ind=1),
          torch.linalg.tensorinv(theirs.reshape(24, 8, 3), ind=1), rtol=1e-9)
    small = gradiente.tensor(RNG.standard_normal((2, 3, 6)), requires_grad=True)
    assert gradcheck(lambda t: gradiente.linalg.tensorinv(t, ind=2), (small,))
    _same_error(lambda: gradiente.linalg.tensorinv(ours, ind=0), lambda: torch.linalg.tensorinv(theirs, ind=0))
    _same_error(lambda: gradiente.linalg.tensorinv(gradiente.ones(2, 3, 4), ind=1),
                lambda: torch.linalg.tensorinv(torch.ones(2, 3, 4), ind=1))


@pytest.mark.parametrize("a_shape, b_shape, dims", [((2, 3, 6), (2, 3), None), ((6, 2, 3), (2, 3), (0,)),
                                                     ((2, 3, 2, 3), (2, 3), None)])
def test_tensorsolve_matches_torch_with_gradient(a_shape, b_shape, dims):
    A, B = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
    (a, ta), (b, tb) = _pair(A, True), _pair(B, True)
    _same(gradiente.linalg.tensorsolve(a, b, dims=dims), torch.linalg.tensorsolve(ta, tb, dims=dims), rtol=1e-9)
    assert gradcheck(lambda x, y: gradiente.linalg.tensorsolve(x, y, dims=dims), (a, b))


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cond_matches_torch_with_gradient(p, dtype):
    A = RNG.standard_normal((2, 3, 3))
    ours = gradiente.tensor(A, dtype=getattr(gradiente, dtype))
    theirs = torch.tensor(A, dtype=getattr(torch, dtype))
    _same(gradiente.linalg.cond(ours, p), torch.linalg.cond(theirs, p), rtol=1e-4 if dtype == "float32" else 1e-9)
    if dtype == "float64":
        x = gradiente.tensor(A, requires_grad=True)
        assert gradcheck(lambda t: gradiente.linalg.cond(t, p), (x,))


def test_cond_edges_and_errors_match_torch():
    for p in (None, 1, "fro"):
        _same(gradiente.linalg.cond(gradiente.zeros(2, 2), p), torch.linalg.cond(torch.zeros(2, 2), p))
    rect = RNG.standard_normal((2, 3))
    _same(gradiente.linalg.cond(gradiente.tensor(rect)), torch.linalg.cond(torch.tensor(rect)), rtol=1e-9)
    _same_error(lambda: gradiente.linalg.cond(gradiente.ones(2, 3), "fro"),
                lambda: torch.linalg.cond(torch.ones(2, 3), "fro"))
    _same_error(lambda: gradiente.linalg.cond(gradiente.ones(3), "fro"),
                lambda: torch.linalg.cond(torch.ones(3), "fro"))
