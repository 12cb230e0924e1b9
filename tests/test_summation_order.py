"""Sums added in PyTorch's order (core/summation.py): bit for bit the numbers torch 2.13 prints on one thread, for
every length up to ``LONGEST``, over any dims of a contiguous tensor, in float32 and float64. (Longer sums are
NumPy's, and agree within rounding.)"""
import itertools

import numpy as np
import pytest
import torch

import gradiente
from gradiente.core.summation import (
    LONGEST,
    nll_cascade_sum,
    torch_order_column_sums,
    torch_order_row_sums,
    torch_order_sums,
)

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")

LENGTHS = list(range(1, 70)) + [127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 2047, 4096, 4097, 8191, 8192,
                                8193, 10000, 32768, 32769, 50176, 100003]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_are_pytorchs_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        for rows in (1, 3):
            a = (rng.standard_normal((rows, n)) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
            np.testing.assert_array_equal(torch_order_row_sums(a), torch.from_numpy(a).sum(-1).numpy(), err_msg=str(n))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_are_pytorchs_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 5, 8, 15, 16, 17, 33, 64, 257, 1000, 4097, 10000):
        for c in (1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 32, 33, 100, 256):
            a = rng.standard_normal((n, c)).astype(dtype)
            np.testing.assert_array_equal(torch_order_column_sums(a), torch.from_numpy(a).sum(0).numpy(),
                                          err_msg=str((n, c)))


def test_a_bias_gradient_is_pytorchs():
    """Linear's bias gradient is the upstream gradient summed over the batch (the engine's sum_to): bit for bit."""
    rng = np.random.default_rng(8)
    for batch, features in ((64, 10), (32, 256), (5, 3), (200, 40)):
        x, g = rng.standard_normal((batch, 7)).astype(np.float32), rng.standard_normal((batch, features))
        grads = []
        for lib in (gradiente, torch):
            lib.manual_seed(0)
            layer = lib.nn.Linear(7, features)
            layer(lib.tensor(x)).backward(lib.tensor(g, dtype=lib.float32))
            grads.append(layer.bias.grad.numpy())
        np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7,), (40,), (300,), (5, 9), (3, 4, 33), (64, 10), (2, 1000)])
def test_sum_and_mean_print_what_pytorch_prints(dtype, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    for reduce in (lambda t: t.sum(), lambda t: t.mean(), lambda t: t.sum(-1), lambda t: t.mean(-1, keepdim=True),
                   lambda t: t.sum(tuple(range(t.dim()))), lambda t: t.mean(dtype=t.dtype), lambda t: t.sum(0),
                   lambda t: t.mean(0, keepdim=True)):
        ours, theirs = reduce(gradiente.tensor(x)), reduce(torch.tensor(x))
        assert str(ours).replace("gradiente.", "torch.") == str(theirs)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_list_of_losses_averages_as_in_pytorch():
    """``torch.tensor(losses).mean()``, as training loops report an epoch: 1,000 lists, every mean equal."""
    rng = np.random.default_rng(2)
    for _ in range(1000):
        losses = (rng.random(rng.integers(2, 40)) * 3).tolist()
        assert gradiente.tensor(losses).mean().item() == torch.tensor(losses).mean().item()


def test_a_broadcast_gradient_is_reduced_as_the_same_sum_by_hand():
    """The engine reduces a gradient broadcast along the last dim with the sum kernel's order, as PyTorch does, so
    that ``dlogit_maxes = (-dnorm).sum(1, keepdim=True)`` written by hand equals autograd's (backprop ninja)."""
    rng = np.random.default_rng(3)
    logits, w = rng.standard_normal((32, 27)).astype(np.float32), rng.standard_normal((32, 27)).astype(np.float32)
    grads = []
    for lib in (gradiente, torch):
        maxes = lib.tensor(logits).max(1, keepdim=True).values.requires_grad_()
        ((lib.tensor(logits) - maxes) * lib.tensor(w)).sum().backward()
        grads.append(maxes.grad.numpy())
        assert lib.equal(maxes.grad, (-lib.tensor(w)).sum(1, keepdim=True))
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ignored", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_reduces_as_pytorchs_loop(dtype, ignored, weighted):
    rng = np.random.default_rng(4)
    for n in (1, 2, 3, 5, 16, 17, 31, 64, 100, 257, 1000):
        x = rng.standard_normal((n, 7)).astype(dtype)
        target = rng.integers(0, 7, n)
        if ignored:
            target[rng.random(n) < 0.3] = -100
        weight = rng.random(7).astype(dtype) if weighted else None
        for reduction in ("mean", "sum"):
            values = []
            for lib in (gradiente, torch):
                args = (lib.tensor(x), lib.tensor(target))
                kwargs = {"weight": None if weight is None else lib.tensor(weight), "reduction": reduction}
                values.append(lib.nn.functional.nll_loss(*args, **kwargs).item())
            assert values[0] == values[1] or (np.isnan(values[0]) and np.isnan(values[1])), (n, reduction)


def test_the_cascade_with_ignored_targets_is_the_loop_itself():
    """With gaps in the indices the blocks are not of 16: the loop's own result, which equals the plain cascade
    when nothing is missing."""
    values = np.random.default_rng(5).standard_normal(300).astype(np.float32)
    assert nll_cascade_sum(values) == nll_cascade_sum(values, np.arange(300)) == \
        gradiente.core.summation._nll_cascade_with_gaps(values, np.arange(300))


def test_longer_sums_keep_numpys_order_and_still_agree_within_rounding():
    x = np.random.default_rng(6).standard_normal(LONGEST + 1).astype(np.float32)
    np.testing.assert_allclose(gradiente.tensor(x).sum().item(), torch.tensor(x).sum().item(), rtol=1e-5)


def test_a_long_loss_is_pytorchs_on_one_thread():
    """mse_loss over a batch of 64 flattened 28x28 images: 50,176 numbers, more than PyTorch's grain for threads."""
    rng = np.random.default_rng(12)
    a, b = (rng.random((64, 784)).astype(np.float32) for _ in range(2))
    ours = gradiente.nn.functional.mse_loss(gradiente.tensor(a), gradiente.tensor(b)).item()
    assert ours == torch.nn.functional.mse_loss(torch.tensor(a), torch.tensor(b)).item()


SHAPES = [(4, 32, 8, 8), (1, 32, 8, 8), (16, 32, 8, 8), (4, 16, 3, 3), (2, 8, 5, 7), (3, 5, 7), (4, 40, 6),
          (4, 40, 33), (2, 30, 4, 16), (3, 17, 2), (2, 9, 33), (7, 3, 3, 10), (2, 2, 2, 2, 2), (2, 5, 1, 7, 1, 8),
          (64, 3, 32, 32)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sums_over_any_dims_are_pytorchs(shape, dtype):
    """Every set of dims of a contiguous tensor (a channel's sum over (0, 2, 3), the middle dim of (B, T, C), ...):
    the reduction iterator's order, bit for bit."""
    a = (np.random.default_rng(13).standard_normal(shape) * 10).astype(dtype)
    for count in range(1, len(shape)):
        for axes in itertools.combinations(range(len(shape)), count):
            want = torch.tensor(a).sum(axes).numpy()
            np.testing.assert_array_equal(torch_order_sums(a, axes).reshape(want.shape), want, err_msg=str(axes))


def test_channel_statistics_print_what_pytorch_prints():
    """A dataset's per-channel mean and a hand-written batch norm's gradients, as a course computes them."""
    rng = np.random.default_rng(14)
    x = rng.random((16, 3, 12, 12)).astype(np.float32)
    printed = []
    for lib in (gradiente, torch):
        images = lib.tensor(x)
        gamma = lib.ones(1, 3, 1, 1, requires_grad=True)
        beta = lib.zeros(1, 3, 1, 1, requires_grad=True)
        mean = images.mean(dim=(0, 2, 3), keepdim=True)
        var = images.var(dim=(0, 2, 3), keepdim=True, unbiased=False)
        out = gamma * (images - mean) / (var + 1e-5).sqrt() + beta
        (out * lib.tensor(x[::-1].copy())).sum().backward()
        printed.append(f"{images.mean(dim=(0, 2, 3))} {images.std(dim=(0, 2, 3))} {gamma.grad} {beta.grad}")
    assert printed[0] == printed[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_norms_are_pytorchs_bit_for_bit(dtype):
    """``linalg.vector_norm``, ``Tensor.norm()`` and a row's norm (``F.normalize`` of a batch), of every length up to
    70 and longer ones, whole and over the trailing dims, keepdim or not."""
    rng = np.random.default_rng(11)
    for n in LENGTHS + [65536, 100003]:
        a = (rng.standard_normal((3, n)) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
        theirs, ours = torch.from_numpy(a), gradiente.from_numpy(a)
        assert torch.linalg.vector_norm(theirs).item() == gradiente.linalg.vector_norm(ours).item(), n
        assert theirs[0].norm().item() == ours[0].norm().item(), n
        np.testing.assert_array_equal(theirs.norm(dim=-1, keepdim=True).numpy(),
                                      ours.norm(dim=-1, keepdim=True).numpy(), err_msg=str(n))
        cube_t, cube_g = theirs[:, :n // 4 * 4].reshape(3, -1, 4), ours[:, :n // 4 * 4].reshape(3, -1, 4)
        np.testing.assert_array_equal(torch.linalg.vector_norm(cube_t, dim=(1, 2)).numpy(),
                                      gradiente.linalg.vector_norm(cube_g, dim=(1, 2)).numpy(), err_msg=str(n))


def test_clip_grad_norm_takes_pytorchs_norms():
    """``clip_grad_norm_`` and ``get_total_norm``: each gradient's 2-norm, then the norm of those, as PyTorch's
    ``_foreach_norm`` and ``vector_norm`` give them, and the gradients scaled by the same factor."""
    rng = np.random.default_rng(5)
    shapes = [(256, 256), (256,), (10, 256), (10,)]
    grads = [(rng.standard_normal(s) * 0.01).astype(np.float32) for s in shapes]
    results = []
    for lib in (torch, gradiente):
        params = [lib.nn.Parameter(lib.zeros(s)) for s in shapes]
        for p, g in zip(params, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.get_total_norm([p.grad for p in params]).item()
        clipped = lib.nn.utils.clip_grad_norm_(params, 0.1).item()
        results.append((total, clipped, [p.grad.numpy().tolist() for p in params]))
    assert results[0] == results[1]
