"""gelu, layer_norm and batch_norm compute their steps in place, for speed (issue 14): the results must be, to the
last bit, those of the plain expressions they replaced, written out here in NumPy (each op's closeness to PyTorch
is tested with its op specs)."""
import math

import numpy as np
import pytest

import gradiente
from gradiente.core import onednn_gelu, rounded_math
from gradiente.core.erf import erf
from gradiente.core.fused import fma
from gradiente.core.moments import rowwise_moments
from gradiente.ops.nn.normalization import (
    _mean,
    _mean_of_product,
    _sum,
    _sum_leading,
    _sum_of_product,
)

F = gradiente.nn.functional
DTYPES = [np.float32, np.float64]


def _same_bits(ours, expected):
    ours = ours.detach().numpy() if isinstance(ours, gradiente.Tensor) else ours
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    assert np.array_equal(ours.view(np.uint8), np.ascontiguousarray(expected).view(np.uint8))


def _leaves(rng, dtype, *shapes, shift=0.0):
    return [gradiente.tensor((rng.standard_normal(s) * 2 + shift).astype(dtype), requires_grad=True) for s in shapes]


def _run(fn, leaves, rng):
    out = fn(*leaves)
    grad = rng.standard_normal(tuple(out.shape)).astype(out.detach().numpy().dtype)
    out.backward(gradiente.from_numpy(grad))
    return out, grad


@pytest.mark.parametrize("dtype", DTYPES)
def test_gelu_bits(dtype):
    rng = np.random.RandomState(0)
    x, = _leaves(rng, dtype, (40, 33))
    out, grad = _run(F.gelu, [x], rng)
    a = x.detach().numpy()
    if dtype == np.float32:             # oneDNN's kernels, as PyTorch (core/onednn_gelu.py)
        _same_bits(out, onednn_gelu.gelu(a))
        _same_bits(x.grad, grad * onednn_gelu.gelu_derivative(a))
        return
    one_plus_erf = 1 + erf(a * math.sqrt(0.5))
    cdf = one_plus_erf * 0.5
    pdf = rounded_math.exp(a * a * -0.5) * (1 / math.sqrt(2 * math.pi))     # (float32 through float64)
    _same_bits(out, np.asarray(a * 0.5 * one_plus_erf, dtype=dtype))
    _same_bits(x.grad, grad * (cdf + a * pdf))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_bits(dtype, affine):
    """The forward: PyTorch's statistics (``rowwise_moments``), ``(x − mean)·rstd``, the affine step fused; the
    float64 backward, the closed form (float32's is PyTorch's kernel, compared with torch in
    test_layer_norm_kernel.py)."""
    rng = np.random.RandomState(1)
    x, w, b = _leaves(rng, dtype, (6, 5, 48), (48,), (48,), shift=0.5)
    params = (w, b) if affine else (None, None)
    out, grad = _run(lambda x: F.layer_norm(x, (48,), *params), [x], rng)
    a, axes = x.detach().numpy(), (2,)
    mean, var = rowwise_moments(a.reshape(-1, 48))
    mean, var = mean.reshape(6, 5, 1), var.reshape(6, 5, 1)
    rstd = (1.0 / np.sqrt(var + 1e-5)).astype(dtype)
    xhat = (a - mean) * rstd
    expected = fma(xhat, w.detach().numpy(), b.detach().numpy(), dtype) if affine else xhat
    dxhat = grad * w.detach().numpy() if affine else grad
    _same_bits(out, expected)
    if dtype == np.float64:
        _same_bits(x.grad, rstd * (dxhat - _mean(dxhat, axes) - xhat * _mean_of_product(dxhat, xhat, axes)))
        if affine:
            _same_bits(w.grad, _sum_leading(grad * xhat, 2))
            _same_bits(b.grad, _sum_leading(grad, 2))


def _close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy() if hasattr(actual, "detach") else actual),
                               np.asarray(expected), rtol=2e-5, atol=2e-6)


def _batch_norm_rows_as_torch(shape):
    """float32 (N, C) rows take PyTorch's channels-last kernel, whose float32 sums down 10,000 rows stray from the
    float64 formulas by more than rounding: the output and every gradient are compared with torch's, bit for bit."""
    torch = pytest.importorskip("torch")
    rng = np.random.RandomState(2)
    arrays = [(rng.standard_normal(s) + 0.3).astype(np.float32) for s in (shape, shape[1:], shape[1:])]
    grad = rng.standard_normal(shape).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.functional.batch_norm(leaves[0], None, None, leaves[1], leaves[2], training=True)
        out.backward(lib.tensor(grad))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for ours, theirs in zip(results[1], results[0]):
        assert np.array_equal(ours, theirs)


@pytest.mark.usefixtures("torch_on_one_thread")
@pytest.mark.parametrize("dtype", DTYPES)
# (inputs of more than 65536 elements: smaller ones are computed in PyTorch's steps instead, and compared with PyTorch
# bit for bit in test_nn_normalization.py's test_batch_norm_of_a_small_input_gives_torchs_digits)
@pytest.mark.parametrize("shape", [(8, 6, 5, 300), (10000, 7)])
def test_batch_norm_training_bits(dtype, shape):
    if np.dtype(dtype) == np.float32 and len(shape) == 2:
        _batch_norm_rows_as_torch(shape)
        return
    kernel = np.dtype(dtype) == np.float32 and len(shape) > 2
    if kernel:
        # float32 image batches take PyTorch's kernel's own steps (batch_norm_kernel.py; bit for bit against torch
        # in test_kernel_order.py): here they agree with the formulas to float32 rounding
        same = _close
    else:
        same = _same_bits
    rng = np.random.RandomState(2)
    c = shape[1]
    x, w, b = _leaves(rng, dtype, shape, (c,), (c,), shift=0.3)
    out, grad = _run(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b], rng)
    a = x.detach().numpy()
    axes = (0,) + tuple(range(2, a.ndim))
    bshape = (1, c) + (1,) * (a.ndim - 2)
    wide = a.astype(np.float64)
    mean = _mean(wide, axes).reshape(-1)
    var = _mean(np.square(wide - mean.reshape(bshape)), axes).reshape(-1)
    rstd = (1.0 / np.sqrt(var + 1e-5)).astype(dtype).reshape(bshape)
    xhat = (a - mean.astype(dtype).reshape(bshape)) * rstd
    wa = w.detach().numpy().reshape(bshape)
    dxhat = grad * wa
    mean_dxhat = _mean(dxhat, axes)
    mean_product = _mean_of_product(dxhat, xhat, axes)
    same(out, xhat * wa + b.detach().numpy().reshape(bshape))
    same(x.grad, rstd * (dxhat - mean_dxhat - xhat * mean_product))
    # an (N, C) input's parameter gradients are column sums, taken as a matrix product (_sum_leading); those of
    # (N, C, ...) the channel sums of normalization.py's reductions
    if axes == (0,):
        same(w.grad, _sum_leading(grad * xhat, 1).reshape(c))
        same(b.grad, _sum_leading(grad, 1).reshape(c))
    else:
        same(w.grad, _sum_of_product(grad, xhat, axes).reshape(c))
        same(b.grad, _sum(grad, axes).reshape(c))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_of_a_0d_tensor_matches_torch(approximate, dtype):
    """A 0-d input: NumPy's ufuncs give scalars there, which the in-place steps cannot write into (seed 104)."""
    import torch
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor(0.7, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.gelu(x, approximate=approximate)
        y.backward()
        results.append((y.item(), x.grad.item(), tuple(x.grad.shape)))
    assert results[0] == results[1]
