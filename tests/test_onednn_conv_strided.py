"""Strided convolutions' input gradients and transposed convolutions in oneDNN's order (``core/onednn_conv.py``),
element by element against torch 2.13 on one thread: the strided layers of a CNN classifier (pytorch/tutorials'
``Mnist_CNN``) and a DCGAN's generator and discriminator."""
import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


def _gradient_like(shape):
    return (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 7) * 0.1 - 0.3


def _run(lib, op, x, w, b, **geometry):
    xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
    bt = None if b is None else lib.tensor(b, requires_grad=True)
    y = getattr(lib.nn.functional, op)(xt, wt, bt, **geometry)
    y.backward(lib.tensor(_gradient_like(tuple(y.shape))))
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()] + ([] if b is None else [bt.grad.numpy()])


@pytest.mark.parametrize("batch, channels, outputs, height, width, kernel, padding", [
    (8, 16, 16, 14, 14, 3, 1),      # Mnist_CNN's second layer: an even width, one chain per column tap
    (8, 16, 10, 7, 7, 3, 1),        # its third: an odd width, one chain over every tap
    (4, 3, 8, 8, 8, 4, 1), (4, 8, 16, 16, 16, 4, 1),      # a DCGAN discriminator's 4x4 layers
    (4, 4, 8, 10, 10, 5, 2), (4, 4, 8, 9, 9, 5, 2),       # three column taps: their chains added in order
    (4, 16, 16, 7, 8, 3, 1), (4, 16, 16, 8, 7, 3, 1),     # the width decides, not the height
    (2, 32, 64, 16, 16, 3, 1),
])
def test_strided_convolution_gradients_equal_pytorchs(batch, channels, outputs, height, width, kernel, padding):
    rng = np.random.default_rng(height * 100 + width)
    x = rng.standard_normal((batch, channels, height, width)).astype(np.float32)
    w = rng.standard_normal((outputs, channels, kernel, kernel)).astype(np.float32)
    b = rng.standard_normal(outputs).astype(np.float32)
    ours = _run(gradiente, "conv2d", x, w, b, stride=2, padding=padding)
    theirs = _run(torch, "conv2d", x, w, b, stride=2, padding=padding)
    for a, c in zip(ours, theirs):
        assert np.array_equal(a, c)


@pytest.mark.parametrize("batch, inputs, outputs, size, kernel, stride, padding, bias", [
    (4, 100, 64, 1, 4, 1, 0, False),    # a DCGAN generator's first layer, from the noise vector
    (4, 32, 16, 4, 4, 2, 1, False), (2, 64, 32, 8, 4, 2, 1, False), (4, 16, 3, 8, 4, 2, 1, False),
    (1, 32, 16, 4, 4, 2, 1, False), (2, 32, 16, 4, 4, 2, 1, True), (4, 8, 8, 5, 3, 2, 1, True),
    (4, 32, 16, 6, 3, 1, 1, True),
])
def test_transposed_convolutions_equal_pytorchs(batch, inputs, outputs, size, kernel, stride, padding, bias):
    rng = np.random.default_rng(size * 10 + kernel)
    x = rng.standard_normal((batch, inputs, size, size)).astype(np.float32)
    w = rng.standard_normal((inputs, outputs, kernel, kernel)).astype(np.float32)
    b = rng.standard_normal(outputs).astype(np.float32) if bias else None
    ours = _run(gradiente, "conv_transpose2d", x, w, b, stride=stride, padding=padding)
    theirs = _run(torch, "conv_transpose2d", x, w, b, stride=stride, padding=padding)
    for a, c in zip(ours, theirs):
        assert np.array_equal(a, c)
