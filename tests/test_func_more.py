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
