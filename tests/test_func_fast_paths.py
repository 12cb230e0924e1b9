"""``jacfwd`` and ``jacrev`` the way functorch computes them (issue 11's benchmark rows): jacfwd runs the function
once, its inputs carrying the identity's columns as tangents batched together (the values themselves not mapped
over); jacrev runs it once and batches only the backward pass over the identity's rows. Where that cannot hold (a
transform inside the function, a Jacobian that must stay differentiable, random ops) the whole call is vmapped as
before; every case gives torch.func's result."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")


def _inputs(lib):
    rng = np.random.default_rng(0)
    return tuple(lib.tensor(rng.standard_normal(shape)) for shape in ((5, 4), (4,), (3,)))


def _f(w, x, b):
    return ((w @ x).tanh()[:3] * b.sin() + b).exp(), x.sum() * w


def _counted(lib, calls):
    def f(w, x, b):
        calls.append(1)
        return _f(w, x, b)
    return f


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 2), (1, 2)])
def test_jacobians_match_torch_and_run_the_function_once(transform, argnums):
    calls = []
    ours = getattr(gradiente.func, transform)(_counted(gradiente, calls), argnums=argnums)(*_inputs(gradiente))
    theirs = getattr(torch.func, transform)(_f, argnums=argnums)(*_inputs(torch))
    _same(ours, theirs)
    assert len(calls) == 1


def test_jacfwd_of_a_function_that_runs_a_transform_runs_it_again_vmapped():
    calls = []

    def f(x):
        calls.append(1)
        return gradiente.func.grad(lambda y: (y.sin() * y).sum())(x)

    def g(x):
        return torch.func.grad(lambda y: (y.sin() * y).sum())(x)

    x = np.linspace(-1, 1, 4)
    _same(gradiente.func.jacfwd(f)(gradiente.tensor(x)), torch.func.jacfwd(g)(torch.tensor(x)))
    assert len(calls) == 2          # the call that found the inner transform, then the vmapped one
    _same(gradiente.func.hessian(lambda y: (y.sin() * y).sum())(gradiente.tensor(x)),
          torch.func.hessian(lambda y: (y.sin() * y).sum())(torch.tensor(x)))


def test_jacfwd_refuses_random_ops_in_error_mode_and_maps_them_otherwise():
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            lib.func.jacfwd(lambda x, lib=lib: x * lib.rand(1))(lib.ones(3))
    out = gradiente.func.jacfwd(lambda x: x * gradiente.rand(1), randomness="same")(gradiente.ones(3))
    assert out.shape == (3, 3) and np.count_nonzero(out.numpy() - np.diag(np.diag(out.numpy()))) == 0


def test_jacobians_of_inputs_that_require_grad_stay_differentiable():
    for transform in ("jacfwd", "jacrev"):
        results = []
        for lib in (gradiente, torch):
            w, x, b = _inputs(lib)
            x.requires_grad_()
            jac = getattr(lib.func, transform)(lambda x, w=w, b=b: _f(w, x, b)[0])(x)
            results.append(lib.autograd.grad(jac.sum(), x)[0])
        _same(*results)


@pytest.mark.parametrize("rows", [None, 3], ids=["a vector per example", "3 rows per example"])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("stacked", [False, True], ids=["shared weights", "a weight per example"])
def test_per_sample_gradients_of_linear_layers_match_torch(rows, with_bias, stacked):
    """vmap(grad) of an MLP loss: the weights broadcast over the examples (in_dims None) or stacked (in_dims 0),
    each linear layer one batched matrix product (``_batching_rules._per_example_linear``)."""
    rng = np.random.default_rng(1)
    batch = 5
    shapes = ((6, 4), (6,), (3, 6), (3,))
    arrays = [rng.standard_normal(((batch,) if stacked else ()) + s) for s in shapes]
    xs = rng.standard_normal((batch,) + ((rows,) if rows else ()) + (4,))
    results = []
    for lib in (gradiente, torch):
        F = lib.nn.functional

        def loss(p, x, F=F, lib=lib):
            h = F.relu(F.linear(x, p[0], p[1] if with_bias else None))
            return F.linear(h, p[2], p[3] if with_bias else None).tanh().sum()

        params = [lib.tensor(a) for a in arrays]
        results.append(lib.func.vmap(lib.func.grad(loss), in_dims=(0 if stacked else None, 0))(params, lib.tensor(xs)))
    _same(*results)
