"""``interpolate`` rounded as PyTorch's CPU kernels round it: linear, bicubic and trilinear forwards with GCC's fused
multiply-adds (the first product fused into the sum with the rounded second, then each further one), bilinear as
one sum over the four corners, the nearest modes' gradients added output after output, the linear modes' corner by
corner, bicubic's column by column. Compared with torch 2.13 element by element. (Antialiasing, and bicubic with
aligned corners or a size that is not a whole multiple, are not yet PyTorch's to the last bit.)"""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


@pytest.mark.parametrize("mode, shape, kwargs", [
    ("nearest", (2, 4, 8, 8), {"scale_factor": 2}), ("nearest", (2, 3, 5, 7), {"size": (12, 9)}),
    ("nearest", (2, 3, 9, 9), {"size": (4, 5)}), ("nearest", (2, 3, 10), {"scale_factor": 3}),
    ("nearest-exact", (2, 3, 5, 7), {"size": (12, 9)}),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nearest_forward_and_backward_equal_pytorchs(mode, shape, kwargs, dtype):
    x = np.random.default_rng(shape[-1]).standard_normal(shape).astype(dtype)
    results = []
    for lib in (torch, gradiente):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(xt, mode=mode, **kwargs)
        y.backward(lib.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(dtype)))
        results.append((y.detach().numpy(), xt.grad.numpy()))
    assert np.array_equal(results[1][0], results[0][0])
    assert np.array_equal(results[1][1], results[0][1])


@pytest.mark.parametrize("mode, shape, kwargs, dtype", [
    ("linear", (2, 3, 10), {"scale_factor": 2}, "float32"), ("linear", (2, 3, 10), {"scale_factor": 2}, "float64"),
    ("bilinear", (2, 4, 8, 8), {"scale_factor": 2}, "float32"),
    ("bilinear", (2, 4, 8, 8), {"scale_factor": 2, "align_corners": True}, "float32"),
    ("bilinear", (2, 3, 5, 7), {"size": (12, 9)}, "float32"), ("bilinear", (2, 3, 5, 7), {"size": (12, 9)}, "float64"),
    ("bilinear", (2, 3, 8, 8), {"scale_factor": 0.5}, "float32"),
    ("bicubic", (2, 3, 6, 6), {"scale_factor": 2}, "float32"),
    ("bicubic", (2, 3, 6, 6), {"scale_factor": 2}, "float64"),
    ("trilinear", (2, 2, 4, 5, 6), {"scale_factor": 2}, "float32"),
])
def test_interpolating_forwards_equal_pytorchs(mode, shape, kwargs, dtype):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    ours, theirs = (lib.nn.functional.interpolate(lib.tensor(x), mode=mode, **kwargs).numpy()
                    for lib in (gradiente, torch))
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("mode, shape, kwargs, dtype", [
    ("linear", (2, 3, 10), {"scale_factor": 2}, "float32"), ("linear", (2, 3, 10), {"scale_factor": 2}, "float64"),
    ("bilinear", (2, 4, 8, 8), {"scale_factor": 2}, "float32"),
    ("bilinear", (2, 4, 8, 8), {"scale_factor": 2, "align_corners": True}, "float32"),
    ("bilinear", (2, 3, 5, 7), {"size": (12, 9)}, "float64"),
    ("bilinear", (2, 3, 8, 8), {"scale_factor": 0.5}, "float32"),
    ("trilinear", (2, 2, 4, 5, 6), {"scale_factor": 2}, "float32"),
    ("bicubic", (2, 3, 6, 6), {"scale_factor": 2}, "float32"),
    ("bicubic", (2, 3, 7, 5), {"scale_factor": 2}, "float64"),
])
def test_the_interpolating_modes_gradients_equal_pytorchs(mode, shape, kwargs, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    grads = []
    for lib in (torch, gradiente):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(xt, mode=mode, **kwargs)
        y.backward(lib.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(dtype)))
        grads.append(xt.grad.numpy())
    assert np.array_equal(grads[1], grads[0])
