"""torch.func's functionalize, debug_unwrap and replace_all_batch_norm_modules_ against torch.func's."""
import numpy as np
import pytest
import torch

import gradiente


def _program(lib):
    def f(x):
        y = x.clone()
        y.add_(1)
        y.mul_(2)
        x.sub_(0.5)  # a mutation of the input, which PyTorch's functionalize copies back
        return y.sum(0)
    return f


def test_functionalize_computes_the_same_and_mutates_inputs_the_same():
    values = np.arange(6.0).reshape(2, 3)
    for remove in ("mutations", "mutations_and_views"):
        ours_in, theirs_in = gradiente.tensor(values), torch.tensor(values)
        ours = gradiente.func.functionalize(_program(gradiente), remove=remove)(ours_in)
        theirs = torch.func.functionalize(_program(torch), remove=remove)(theirs_in)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(ours_in.numpy(), theirs_in.numpy())


def test_functionalize_rejects_an_unknown_remove_as_torch_does():
    with pytest.raises(RuntimeError) as theirs:
        torch.func.functionalize(_program(torch), remove="views")
    with pytest.raises(RuntimeError) as ours:
        gradiente.func.functionalize(_program(gradiente), remove="views")
    assert str(ours.value) == str(theirs.value)


def test_functionalize_composes_with_grad():
    def f(lib):
        return lambda x: (x * x).sum()
    ours = gradiente.func.grad(gradiente.func.functionalize(f(gradiente)))(gradiente.tensor([1.0, -2.0]))
    theirs = torch.func.grad(torch.func.functionalize(f(torch)))(torch.tensor([1.0, -2.0]))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_debug_unwrap_shows_the_batched_value():
    def unwrapped_shapes(lib):
        seen = []

        def f(t):
            seen.append(tuple(lib.func.debug_unwrap(t).shape))
            return t * 2
        lib.func.vmap(f)(lib.ones(4, 3))
        plain = lib.ones(2)
        assert lib.func.debug_unwrap(plain) is plain
        return seen
    assert unwrapped_shapes(gradiente) == unwrapped_shapes(torch) == [(4, 3)]


def test_replace_all_batch_norm_modules_matches_torch():
    def run(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3), lib.nn.Sequential(lib.nn.BatchNorm1d(3)))
        assert lib.func.replace_all_batch_norm_modules_(model) is model
        return [(m.running_mean, m.running_var, m.num_batches_tracked, m.track_running_stats)
                for m in (model[1], model[2][0])]
    assert run(gradiente) == run(torch) == [(None, None, None, False)] * 2
    norm = gradiente.nn.BatchNorm1d(3)
    gradiente.func.replace_all_batch_norm_modules_(norm)
    assert norm.running_mean is None
    x = gradiente.tensor(np.arange(6.0).reshape(2, 3))
    ref = torch.nn.BatchNorm1d(3)
    torch.func.replace_all_batch_norm_modules_(ref)
    np.testing.assert_allclose(norm.eval()(x).detach().numpy(), ref.eval()(torch.tensor(np.arange(6.0).reshape(2, 3),
                               dtype=torch.float32)).detach().numpy(), rtol=1e-6)


def test_a_vjp_made_inside_vmap_and_called_inside_a_nested_vmap():
    """The neural tangent kernel tutorial's NTK-vector products: vjp_fn is made inside vmap over x2, then called
    on the rows of an identity inside a vmap within it, and jvp takes the result as its tangent."""
    def ntk(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        params = {k: v.detach() for k, v in net.named_parameters()}

        def single(p, x):
            return lib.func.functional_call(net, p, (x.unsqueeze(0),)).squeeze(0)

        def get_ntk(x1, x2):
            output, vjp_fn = lib.func.vjp(lambda p: single(p, x1), params)

            def one_slice(vec):
                return lib.func.jvp(lambda p: single(p, x2), (params,), vjp_fn(vec))[1]
            return lib.func.vmap(one_slice)(lib.eye(output.numel()))
        x1, x2 = lib.randn(2, 3), lib.randn(3, 3)
        return [lib.func.vmap(get_ntk, (None, 0))(x1[0], x2),
                lib.func.vmap(lib.func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)]

    for ours, theirs in zip(ntk(gradiente), ntk(torch), strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
