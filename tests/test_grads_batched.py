"""``autograd.grad(..., is_grads_batched=True)`` and gradcheck's batched-gradient check through vmap (issue 11).

The batch of ``grad_outputs`` goes through one backward walk whose rules compute on the batched gradient; these
tests compare its results with PyTorch's on the same float64 arrays and with one ``grad`` per entry, check that the
walk is one walk (no per-example loop) where the rules batch, that rules written on arrays still give the right
values, and that the errors and the freeing of the graph are PyTorch's.
"""
import numpy as np
import pytest

import gradiente
from gradiente.core import backward as core_backward
from gradiente.func import _dispatch

torch = pytest.importorskip("torch")

RNG = np.random.RandomState(0)
X, W1, W2 = RNG.standard_normal((5, 4)), RNG.standard_normal((4, 6)), RNG.standard_normal((6, 3))
BATCH = RNG.standard_normal((7, 5, 3))

GRAPHS = {
    "mlp": lambda lib, x, w1, w2: lib.tanh(x @ w1) @ w2,
    "leaky_relu and layer_norm": lambda lib, x, w1, w2: lib.nn.functional.layer_norm(
        lib.nn.functional.leaky_relu(x @ w1, 0.1), (6,)) @ w2,
    "softmax, indexing and a broadcast": lambda lib, x, w1, w2: lib.softmax(x @ w1, 1)[:, :3] * w2[0] + x[:, :1],
    "conv1d (a rule on arrays)": lambda lib, x, w1, w2: lib.nn.functional.conv1d(
        x.unsqueeze(0), w1.t().reshape(6, 1, 4)[:3, :, :2].expand(3, 5, 2).contiguous())[0].t()[:5, :3].exp() * w2[0],
}


def _leaves(lib):
    return [lib.tensor(a, requires_grad=True) for a in (X, W1, W2)]


def _batched_grads(lib, graph, **kwargs):
    leaves = _leaves(lib)
    out = GRAPHS[graph](lib, *leaves)
    batch = lib.tensor(BATCH[:, :out.shape[0], :out.shape[1]])
    return lib.autograd.grad(out, leaves, batch, is_grads_batched=True, **kwargs), out, leaves, batch


@pytest.mark.parametrize("graph", GRAPHS)
def test_batched_grads_match_torch_and_one_grad_per_entry(graph):
    ours, out, leaves, batch = _batched_grads(gradiente, graph, retain_graph=True)
    theirs, *_ = _batched_grads(torch, graph)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    for i in range(batch.shape[0]):
        entry = gradiente.autograd.grad(out, leaves, batch[i], retain_graph=True)
        for a, b in zip(ours, entry):
            np.testing.assert_allclose(a[i].numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


def test_an_mlp_takes_one_walk_without_the_per_example_loop(monkeypatch):
    walks = []
    real = core_backward.grad_of_batched

    def counting(*args, **kwargs):
        result = real(*args, **kwargs)
        walks.append(result is not None)
        return result
    monkeypatch.setattr("gradiente.func._batching_rules._grad_of_batched", counting)
    _dispatch.FALLBACK_COUNTS.clear()
    _batched_grads(gradiente, "mlp")
    assert walks == [True]
    assert not _dispatch.FALLBACK_COUNTS


def test_a_rule_on_arrays_runs_per_example_inside_the_one_walk():
    _dispatch.FALLBACK_COUNTS.clear()
    _batched_grads(gradiente, "conv1d (a rule on arrays)")
    assert _dispatch.FALLBACK_COUNTS["one_example"] >= 1       # that node's rule, per example; the rest batched


def test_the_graph_is_freed_once_unless_retained():
    messages = []
    for lib in (gradiente, torch):
        _, out, leaves, batch = _batched_grads(lib, "mlp")
        with pytest.raises(RuntimeError) as second:
            lib.autograd.grad(out, leaves, batch, is_grads_batched=True)
        messages.append(str(second.value))
    assert messages[0] == messages[1]


def test_create_graph_gives_differentiable_batched_grads():
    results = []
    for lib in (gradiente, torch):
        (gx, _, _), _, leaves, _ = _batched_grads(lib, "mlp", create_graph=True)
        assert gx.requires_grad
        (again,) = lib.autograd.grad((gx ** 2).sum(), leaves[1])
        results.append(again.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)


def test_grad_outputs_of_the_wrong_shape_are_refused_as_torch_does():
    messages = []
    for lib in (gradiente, torch):
        leaves = _leaves(lib)
        out = GRAPHS["mlp"](lib, *leaves)
        with pytest.raises(RuntimeError) as refused:
            lib.autograd.grad(out, leaves, lib.zeros(7, 5, 4, dtype=lib.float64), is_grads_batched=True)
        messages.append(str(refused.value).replace("gradiente.Size", "torch.Size"))
    assert messages[0] == messages[1]


def test_unused_inputs_none_or_materialized_as_torch():
    shapes = []
    for lib in (gradiente, torch):
        x, unused = lib.tensor(X, requires_grad=True), lib.tensor(W2, requires_grad=True)
        out = x.sin()
        batch = lib.ones(2, 5, 4, dtype=lib.float64)
        _, none = lib.autograd.grad(out, (x, unused), batch, is_grads_batched=True, allow_unused=True,
                                    retain_graph=True)
        assert none is None
        _, zeros = lib.autograd.grad(out, (x, unused), batch, is_grads_batched=True, materialize_grads=True)
        shapes.append(tuple(zeros.shape))
        assert not zeros.detach().numpy().any()
    assert shapes[0] == shapes[1]


# --- gradcheck's batched-gradient check --------------------------------------------------------------------

@pytest.mark.parametrize("graph", GRAPHS)
def test_gradcheck_with_check_batched_grad_passes_in_float64(graph):
    leaves = _leaves(gradiente)
    assert gradiente.autograd.gradcheck(lambda *t: GRAPHS[graph](gradiente, *t), tuple(leaves),
                                        check_batched_grad=True)


def _item_in_backward(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * (g.sum().item() * 0 + 3)         # .item() of a batched value: vmap refuses it
    return Scale.apply


def test_gradcheck_reports_a_backward_that_vmap_cannot_run_as_torch_does():
    messages = []
    for lib in (gradiente, torch):
        x = lib.tensor([0.5, -0.25], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as failed:
            lib.autograd.gradcheck(_item_in_backward(lib), (x,), check_batched_grad=True)
        assert type(failed.value).__name__ == "GradcheckError"
        messages.append(str(failed.value).split("\n")[0])
    assert messages[0] == messages[1]
