"""Group norm's float32 backward as PyTorch's CPU kernel computes it (``ops/nn/group_norm_kernel.py``): dx, dw and db
compared with torch 2.13 element by element, for every way the kernel splits a group's channels (whole vectors of
8, then fours, then single ones) and its rows (vectors of 8 and a tail), with and without an affine step, and a
small network with ``nn.GroupNorm`` trained to PyTorch's losses."""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


def _run(lib, x, weight, bias, groups, grad, layout="contiguous"):
    base = lib.tensor(x)
    if layout == "transposed":
        base = base.transpose(-1, -2).contiguous().transpose(-1, -2)
    elif layout == "leading columns":
        base = lib.tensor(np.concatenate([x, x], axis=-1))[..., :x.shape[-1]]
    xt = base.detach().requires_grad_(True)
    wt = None if weight is None else lib.tensor(weight, requires_grad=True)
    bt = None if bias is None else lib.tensor(bias, requires_grad=True)
    y = lib.nn.functional.group_norm(xt, groups, wt, bt)
    y.backward(lib.tensor(grad))
    return [y.detach().numpy(), xt.grad.numpy()] + ([] if wt is None else [wt.grad.numpy(), bt.grad.numpy()])


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 17, 23])
@pytest.mark.parametrize("spatial", [1, 3, 8, 35])
def test_gradients_equal_pytorchs_for_every_split_of_a_group(depth, spatial):
    rng = np.random.default_rng(depth * 100 + spatial)
    groups, n = 2, 5
    shape = (n, groups * depth, spatial)
    x, grad = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    weight, bias = (rng.standard_normal(shape[1]).astype(np.float32) for _ in range(2))
    for theirs, ours in zip(_run(torch, x, weight, bias, groups, grad), _run(gradiente, x, weight, bias, groups, grad)):
        assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("shape, groups, affine, layout", [
    ((4, 32, 8, 8), 8, True, "contiguous"), ((2, 64, 9, 9), 2, True, "contiguous"), ((4, 30, 5, 5), 5, False,
                                                                                   "contiguous"),
    ((5, 6), 3, True, "contiguous"), ((4, 32, 8, 8), 8, True, "transposed"), ((2, 6, 5, 5), 3, True, "leading columns"),
])
def test_gradients_equal_pytorchs_in_images_and_layouts(shape, groups, affine, layout):
    rng = np.random.default_rng(len(shape) + shape[1])
    x, grad = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    weight, bias = ((rng.standard_normal(shape[1]).astype(np.float32) for _ in range(2)) if affine else (None, None))
    theirs = _run(torch, x, weight, bias, groups, grad, layout)
    ours = _run(gradiente, x, weight, bias, groups, grad, layout)
    for a, b in zip(ours, theirs):
        assert np.array_equal(a, b)


def test_a_network_with_group_norm_trains_to_pytorchs_losses():
    """Convolutions, GroupNorm, ReLU and a linear head, Adam: every loss of 5 steps, printed in full, equals
    PyTorch's."""
    def run(lib):
        nn = lib.nn
        lib.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
                              nn.Conv2d(16, 16, 3, padding=1), nn.GroupNorm(8, 16), nn.ReLU(),
                              nn.Flatten(), nn.Linear(16 * 8 * 8, 10))
        optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
        images, labels = lib.randn(8, 3, 8, 8), lib.randint(0, 10, (8,))
        losses = []
        for _ in range(5):
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(repr(loss.item()))
        return losses
    assert run(gradiente) == run(torch)
