"""Batch norm of (N, C) rows (``BatchNorm1d`` in an MLP, or images of one pixel) as PyTorch's channels-last CPU kernel
computes it (``batch_norm_kernel._rows_statistics``, ``_rows_backward``): the output, every gradient and the running
statistics compared with torch 2.13 element by element, in training and evaluation, and an MLP with
``BatchNorm1d`` trained to PyTorch's losses."""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


def _batch_norm_run(lib, x, weight, bias, grad, affine):
    norm = lib.nn.BatchNorm1d(x.shape[1], affine=affine)
    if affine:
        with lib.no_grad():
            norm.weight.copy_(lib.tensor(weight))
            norm.bias.copy_(lib.tensor(bias))
    results = []
    for training in (True, False):
        norm.train(training)
        xt = lib.tensor(x, requires_grad=True)
        y = norm(xt)
        y.backward(lib.tensor(grad))
        results += [y.detach().numpy(), xt.grad.numpy()]
    results += [norm.running_mean.numpy(), norm.running_var.numpy()]
    if affine:
        results += [norm.weight.grad.numpy(), norm.bias.grad.numpy()]
    return results


@pytest.mark.parametrize("shape", [(2, 1), (5, 7), (64, 8), (33, 20), (128, 100), (17, 3, 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_rows_equal_pytorchs_in_training_and_evaluation(shape, affine):
    rng = np.random.default_rng(shape[0] * shape[1])
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    grad = rng.standard_normal(shape).astype(np.float32)
    weight, bias = (rng.standard_normal(shape[1]).astype(np.float32) for _ in range(2))
    theirs = _batch_norm_run(torch, x, weight, bias, grad, affine)
    ours = _batch_norm_run(gradiente, x, weight, bias, grad, affine)
    for a, b in zip(ours, theirs):
        assert np.array_equal(a, b)


def test_an_mlp_with_batch_norm_trains_to_pytorchs_losses():
    """Linear, BatchNorm1d and ReLU layers, SGD with momentum: every loss of 6 steps, printed in full, and
    the running statistics after them equal PyTorch's."""
    def run(lib):
        nn = lib.nn
        lib.manual_seed(0)
        model = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 30), nn.BatchNorm1d(30),
                              nn.ReLU(), nn.Linear(30, 5))
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        inputs, labels = lib.randn(32, 20), lib.randint(0, 5, (32,))
        losses = []
        for _ in range(6):
            loss = nn.functional.cross_entropy(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(repr(loss.item()))
        return losses, model[1].running_var.numpy().tolist()
    assert run(gradiente) == run(torch)
