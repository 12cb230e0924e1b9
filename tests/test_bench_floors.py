"""The benchmark floors (bench/floors.py) must compute what they claim to: a floor that skipped work
would make a target look out of reach when it is not."""
import os
import sys

import numpy as np
import pytest

import gradiente

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "bench"))
import floors


def test_minimal_engine_gives_gradientes_gradients_on_the_chain():
    results = {}
    for name, lib in (("minimal", None), ("gradiente", gradiente)):
        if lib is None:
            x = floors.MinimalTensor(np.array([0.1, 0.2, 0.3], np.float32), requires_grad=True)
            w = floors.MinimalTensor(np.array([1.001, 0.999, 1.0], np.float32), requires_grad=True)
        else:
            x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
            w = lib.tensor([1.001, 0.999, 1.0], requires_grad=True)
        y = x
        for _ in range(50):
            y = (y * 1.001 + 0.001).tanh() * w
        y.sum().backward()
        grads = [x.grad, w.grad] if lib is None else [x.grad.numpy(), w.grad.numpy()]
        results[name] = grads
    for ours, minimal in zip(results["gradiente"], results["minimal"]):
        np.testing.assert_array_equal(ours, minimal)


@pytest.mark.parametrize("batch", [8, 64])
def test_numpy_mlp_step_matches_a_gradiente_sgd_step(batch):
    arrays, inputs, targets = floors.mlp_arrays(batch)
    params = [gradiente.tensor(a, requires_grad=True) for a in arrays]
    floors.numpy_mlp_step(arrays, inputs, targets)()
    F = gradiente.nn.functional
    h = gradiente.tensor(inputs)
    for i in range(0, 6, 2):
        h = F.linear(h, params[i], params[i + 1])
        h = F.relu(h) if i < 4 else h
    F.cross_entropy(h, gradiente.tensor(targets)).backward()
    with gradiente.no_grad():
        for p in params:
            p -= 0.01 * p.grad
    for ours, by_hand in zip(params, arrays):
        np.testing.assert_allclose(ours.detach().numpy(), by_hand, rtol=1e-5, atol=1e-6)
