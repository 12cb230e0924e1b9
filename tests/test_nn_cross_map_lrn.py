"""``nn.CrossMapLRN2d``, PyTorch's legacy local response normalisation (an ``autograd.Function``), against PyTorch:
values, gradients, node name (``CrossMapLRN2dBackward``), repr, and errors. Its gradient is PyTorch's legacy
formula, which is not the derivative of its forward: gradcheck fails for PyTorch's layer, and must fail the same way
for gradiente's (a test below says so), rather than gradiente giving a different gradient than PyTorch."""
import numpy as np
import pytest
from harness import OpSpec, spec_tests

import gradiente

torch = pytest.importorskip("torch")

# the layer as an op-spec row: values, gradients and node name against PyTorch in float32 and float64, contiguous and
# strided; no gradcheck (the legacy gradient is not the derivative, see the module docstring)
SPECS = [OpSpec("cross_map_lrn2d", lambda lib, x: lib.nn.CrossMapLRN2d(3, alpha=0.3, k=1.2)(x), [((2, 5, 3, 3),)],
                gradcheck=False)]
_, test_against_torch, _ = spec_tests(SPECS)

X = np.random.RandomState(0).randn(2, 6, 3, 4)


def _run(lib, size, dtype, **kwargs):
    module = lib.nn.CrossMapLRN2d(size, **kwargs)
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    out = module(x)
    out.backward(lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=x.dtype))
    return module, out, x.grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 7, 9])
def test_values_gradients_and_node_match_torch(size, dtype):
    kwargs = {"alpha": 0.3, "beta": 0.75, "k": 1.5}
    (module, out, dx), (t_module, t_out, t_dx) = (_run(lib, size, dtype, **kwargs) for lib in (gradiente, torch))
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(dx.numpy(), t_dx.numpy(), rtol=tol, atol=tol)
    assert out.dtype == dx.dtype == getattr(gradiente, dtype)
    assert out.grad_fn.name() == t_out.grad_fn.name() == "CrossMapLRN2dBackward"
    assert repr(module) == repr(t_module)
    assert list(module.state_dict()) == list(t_module.state_dict()) == []


def test_default_arguments_match_torch():
    (module, out, dx), (t_module, t_out, t_dx) = (_run(lib, 3, "float64") for lib in (gradiente, torch))
    assert repr(module) == repr(t_module) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(dx.numpy(), t_dx.numpy(), rtol=1e-13)


def test_gradcheck_fails_as_it_does_for_torch():
    # the legacy backward is not the derivative of the legacy forward, in PyTorch as here
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor(X[:1, :4, :2, :2], requires_grad=True)
        results.append(lib.autograd.gradcheck(lib.nn.CrossMapLRN2d(3, alpha=0.5), (x,), raise_exception=False))
    assert results == [False, False]


def test_errors_match_torch():
    messages = []
    for lib in (gradiente, torch):
        with pytest.raises(ValueError) as error:
            lib.nn.CrossMapLRN2d(3)(lib.zeros(2, 3, 4))
        messages.append(str(error.value))
        # size 1: PyTorch's backward narrows past its buffer
        out = lib.nn.CrossMapLRN2d(1)(lib.tensor(X, requires_grad=True))
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        messages.append(str(error.value))
    assert messages[:2] == messages[2:]


def test_no_second_derivative_as_in_torch():
    # PyTorch's backward refuses create_graph at once (its out= products); gradiente's gradient refuses to be
    # differentiated (once_differentiable)
    for lib in (gradiente, torch):
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError):
            (dx,) = lib.autograd.grad(lib.nn.CrossMapLRN2d(3)(x).sum(), x, create_graph=True)
            dx.sum().backward()
