"""``conv1d`` and ``conv_transpose1d`` in float32 as PyTorch computes them: oneDNN's 2-d convolution over a height of
one, in its order of additions (``convolution._AsTwoD`` over ``core/onednn_conv.py``). Output and every gradient
compared with torch 2.13 element by element, and the node is still ``ConvolutionBackward0``."""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("n, c, length, o, k, kwargs", [
    (4, 16, 32, 8, 3, {}), (2, 8, 50, 12, 5, {"stride": 2, "padding": 2}), (3, 4, 20, 6, 4, {"padding": 1}),
    (8, 1, 100, 4, 7, {"stride": 3}),
])
def test_conv1d_equals_pytorchs(n, c, length, o, k, kwargs, transposed):
    rng = np.random.default_rng(n * length + k)
    x = rng.standard_normal((n, c, length)).astype(np.float32)
    w = rng.standard_normal((c, o, k) if transposed else (o, c, k)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        tensors = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        f = lib.nn.functional.conv_transpose1d if transposed else lib.nn.functional.conv1d
        y = f(*tensors, **kwargs)
        y.backward(lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)))
        results.append([y.detach().numpy()] + [t.grad.numpy() for t in tensors] + [type(y.grad_fn).__name__])
    for ours, theirs in zip(results[1], results[0]):
        assert np.array_equal(ours, theirs)
