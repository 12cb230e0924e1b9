"""Average pooling and sums over an image's last dims, added in the order of PyTorch's CPU kernels: each window's values
one after another from zero, the adaptive pool's quotient taken by the window's height and then its width, the
gradients spread output after output (so overlapping windows add their shares in PyTorch's order), and a mean over
``(-1, -2)`` (``adaptive_avg_pool2d(x, 1)``, a ResNet's head) as a sum of rows. Compared with torch 2.13 element by
element, float32 and float64."""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")

_CASES = [
    ("avg_pool2d", (2, 4, 16, 16), {"kernel_size": 2}),
    ("avg_pool2d", (2, 4, 15, 15), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d", (2, 3, 9, 9), {"kernel_size": 3, "stride": 1, "padding": 1, "count_include_pad": False}),
    ("avg_pool2d", (2, 3, 11, 11), {"kernel_size": 3, "stride": 2, "ceil_mode": True, "padding": 1}),
    ("avg_pool1d", (2, 3, 20), {"kernel_size": 4, "stride": 1}),
    ("adaptive_avg_pool2d", (2, 4, 16, 16), {"output_size": 3}),
    ("adaptive_avg_pool2d", (2, 4, 7, 7), {"output_size": (5, 3)}),
    ("adaptive_avg_pool2d", (2, 8, 7, 7), {"output_size": 1}),
    ("adaptive_avg_pool1d", (2, 3, 17), {"output_size": 5}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, shape, kwargs", _CASES)
def test_pooling_equals_pytorchs(name, shape, kwargs, dtype):
    rng = np.random.default_rng(shape[-1])
    x = rng.standard_normal(shape).astype(dtype)
    results = []
    for lib in (torch, gradiente):
        xt = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xt, **kwargs)
        y.backward(lib.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)).astype(dtype)))
        results.append((y.detach().numpy(), xt.grad.numpy()))
    (y_t, dx_t), (y_g, dx_g) = results
    assert np.array_equal(y_g, y_t)
    assert np.array_equal(dx_g, dx_t)


@pytest.mark.parametrize("shape, dims", [((2, 8, 7, 7), (-1, -2)), ((3, 5, 6, 9), (2, 3)),
                                         ((2, 3, 4, 5, 6), (2, 3, 4))])
def test_sums_and_means_over_the_last_dims_equal_pytorchs(shape, dims):
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    for op in ("sum", "mean"):
        ours, theirs = (getattr(lib.tensor(x), op)(dims).numpy() for lib in (gradiente, torch))
        assert np.array_equal(ours, theirs)
