"""1x1 convolutions (a ResNet's shortcut, a bottleneck, a network-in-network layer) round as PyTorch's do: the kernel
PyTorch picks for each (its own, oneDNN's 1x1 or oneDNN's general one: ``core/onednn_conv.py``), bit for bit in
the output and every gradient, on one thread."""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")

#: (batch, in channels, out channels, size, stride, padding), each of the three kernels and their edges
CASES = [
    (4, 16, 32, 8, 1, 0), (1, 16, 32, 8, 1, 0), (4, 16, 32, 8, 1, 1), (3, 4, 4, 6, 1, 0), (8, 6, 5, 11, 1, 0),
    (4, 512, 256, 7, 1, 0), (1, 100, 10, 30, 1, 0), (2, 16, 16, 33, 1, 0),       # PyTorch's own kernel
    (4, 16, 32, 8, 2, 0), (2, 32, 64, 9, 3, 0), (16, 16, 32, 8, 1, 0), (32, 64, 64, 8, 1, 0),
    (64, 32, 64, 4, 2, 0), (20, 256, 512, 4, 2, 0), (16, 8, 8, 20, 1, 0), (16, 4, 8, 35, 1, 0),    # oneDNN's 1x1
    (4, 16, 32, 7, 2, 0), (2, 64, 32, 9, 2, 0), (16, 16, 32, 7, 2, 0),          # oneDNN's general kernel
]


def _run(lib, x, w, b, g, stride, padding):
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w, requires_grad=True)
    bt = None if b is None else lib.tensor(b, requires_grad=True)
    y = lib.nn.functional.conv2d(xt, wt, bt, stride=stride, padding=padding)
    y.backward(lib.tensor(g))
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()] + ([] if b is None else [bt.grad.numpy()])


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch, inputs, outputs, size, stride, padding", CASES)
def test_one_by_one_convolutions_equal_pytorchs(batch, inputs, outputs, size, stride, padding, bias):
    rng = np.random.default_rng(batch * 1000 + inputs + size)
    x = rng.standard_normal((batch, inputs, size, size)).astype(np.float32)
    w = rng.standard_normal((outputs, inputs, 1, 1)).astype(np.float32)
    b = rng.standard_normal(outputs).astype(np.float32) if bias else None
    out = (size + 2 * padding - 1) // stride + 1
    g = rng.standard_normal((batch, outputs, out, out)).astype(np.float32)
    results = [_run(lib, x, w, b, g, stride, padding) for lib in (gradiente, torch)]
    for name, ours, theirs in zip(("output", "input's gradient", "weight's gradient", "bias's gradient"), *results):
        np.testing.assert_array_equal(ours, theirs, err_msg=name)


def test_a_resnet_shortcut_trains_as_in_pytorch():
    """A residual block with a strided 1x1 shortcut, a few SGD steps: the printed losses are PyTorch's."""
    printed = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        nn = lib.nn
        body = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1))
        shortcut = nn.Conv2d(8, 16, 1, stride=2)
        head = nn.Linear(16, 4)
        params = list(body.parameters()) + list(shortcut.parameters()) + list(head.parameters())
        opt = lib.optim.SGD(params, lr=0.1)
        x, target = lib.randn(20, 8, 8, 8), lib.randint(0, 4, (20,))
        losses = []
        for _ in range(3):
            features = lib.relu(body(x) + shortcut(x)).mean(dim=(2, 3))
            loss = nn.functional.cross_entropy(head(features), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(f"{loss.item():.10f}")
        printed.append(losses)
    assert printed[0] == printed[1]
