"""Layer and group norm as PyTorch's CPU kernels compute them: Welford's statistics in vector lanes
(``core/moments.py``), the fused affine step, and layer norm's float32 backward step for step
(``ops/nn/layer_norm_kernel.py``). Each compared with torch 2.13, one thread, element by element."""
import numpy as np
import pytest
import torch
from harness import random_windows

import gradiente
from gradiente.core.moments import rowwise_moments

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


ROW_LENGTHS = [1, 3, 7, 8, 9, 13, 16, 17, 31, 64, 100, 128, 129, 256, 257, 300, 384, 768, 1000, 2049, 4100]


def _rows(n, dtype, seed=0, rows=30):
    rng = np.random.default_rng(seed + n)
    values = rng.standard_normal((rows, n)) * rng.uniform(0.1, 5) + rng.uniform(-3, 3)
    values[0] = 1.25            # a row of equal values: its mean exact, its variance zero, as Welford's
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_statistics_are_pytorchs_rowwise_moments(n, dtype):
    x = _rows(n, dtype)
    _, mean, rstd = torch.native_layer_norm(torch.from_numpy(x), (n,), None, None, 1e-5)
    ours_mean, ours_var = rowwise_moments(x)
    assert np.array_equal(ours_mean, mean.numpy().ravel())
    assert np.array_equal((dtype(1) / np.sqrt(ours_var + dtype(1e-5))).astype(dtype), rstd.numpy().ravel())
    assert ours_mean[0] == 1.25 and ours_var[0] == 0


def _layer_norm_run(lib, x, shape, affine, dtype):
    lib.manual_seed(0)
    x = lib.tensor(x, requires_grad=True)
    layer = lib.nn.LayerNorm(shape, elementwise_affine=affine, dtype=getattr(lib, dtype))
    if affine:
        with lib.no_grad():
            layer.weight.copy_(lib.randn(shape, dtype=getattr(lib, dtype)))
            layer.bias.copy_(lib.randn(shape, dtype=getattr(lib, dtype)))
    y = layer(x)
    y.backward(lib.randn(y.shape, dtype=getattr(lib, dtype)))
    out = [y.detach().numpy(), x.grad.numpy()]
    if affine:
        out += [layer.weight.grad.numpy(), layer.bias.grad.numpy()]
    _, mean, rstd = lib.native_layer_norm(x.detach(), shape, None, None, 1e-5)
    return out + [mean.numpy(), rstd.numpy()]


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("n", [3, 8, 13, 64, 100, 384])
def test_float32_layer_norm_forward_and_backward_equal_pytorchs(n, affine):
    x = _rows(n, np.float32, seed=1).reshape(5, 6, n)
    ours = _layer_norm_run(gradiente, x, (n,), affine, "float32")
    theirs = _layer_norm_run(torch, x, (n,), affine, "float32")
    for a, b in zip(ours, theirs):
        assert np.array_equal(a, b)


def test_layer_norm_over_two_dims_and_float64_forward():
    x = _rows(20, np.float64, seed=2).reshape(6, 5, 4, 5)
    ours = _layer_norm_run(gradiente, x, (4, 5), True, "float64")
    theirs = _layer_norm_run(torch, x, (4, 5), True, "float64")
    assert np.array_equal(ours[0], theirs[0])           # the output, and the statistics, bit for bit
    assert np.array_equal(ours[-2], theirs[-2]) and np.array_equal(ours[-1], theirs[-1])
    for a, b in zip(ours[1:4], theirs[1:4]):            # float64's backward keeps the closed form: close
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, groups, affine", [((4, 6, 5, 5), 3, True), ((2, 32, 8, 8), 8, True),
                                                   ((3, 16, 7, 7), 4, False), ((2, 8, 7), 2, True)])
def test_group_norm_forward_equals_pytorchs(shape, groups, affine, dtype):
    x = _rows(int(np.prod(shape[1:])), getattr(np, dtype), seed=3, rows=shape[0]).reshape(shape)
    outputs = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        norm = lib.nn.GroupNorm(groups, shape[1], affine=affine, dtype=getattr(lib, dtype))
        if affine:
            with lib.no_grad():
                norm.weight.copy_(lib.randn(shape[1], dtype=getattr(lib, dtype)))
                norm.bias.copy_(lib.randn(shape[1], dtype=getattr(lib, dtype)))
        t = lib.tensor(x)
        _, mean, rstd = lib.native_group_norm(t, None, None, shape[0], shape[1], int(np.prod(shape[2:])), groups, 1e-5)
        outputs.append([norm(t).detach().numpy(), mean.numpy(), rstd.numpy()])
    for a, b in zip(*outputs):
        assert np.array_equal(a, b)


def test_a_small_transformer_trains_as_pytorch_does():
    """Karpathy's lecture GPT in small (embeddings, pre-norm blocks of masked attention written out and a ReLU MLP,
    AdamW): every printed loss of 12 steps equals PyTorch's, which took layer norm's statistics, affine step and
    backward, and Adam's square roots, as PyTorch rounds them."""
    def run(lib):
        nn, F = lib.nn, lib.nn.functional

        class Head(nn.Module):
            def __init__(self, d, size):
                super().__init__()
                self.key, self.query, self.value = (nn.Linear(d, size, bias=False) for _ in range(3))
                self.register_buffer("tril", lib.tril(lib.ones(8, 8)))

            def forward(self, x):
                t = x.shape[1]
                k, q = self.key(x), self.query(x)
                w = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
                w = F.softmax(w.masked_fill(self.tril[:t, :t] == 0, float("-inf")), dim=-1)
                return w @ self.value(x)

        class Block(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.heads = nn.ModuleList([Head(d, d // heads) for _ in range(heads)])
                self.proj = nn.Linear(d, d)
                self.ffwd = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)

            def forward(self, x):
                y = self.ln1(x)
                x = x + self.proj(lib.cat([h(y) for h in self.heads], dim=-1))
                return x + self.ffwd(self.ln2(x))

        lib.manual_seed(1337)
        tok, pos = nn.Embedding(20, 16), nn.Embedding(8, 16)
        blocks, ln_f, head = nn.Sequential(Block(16, 2), Block(16, 2)), nn.LayerNorm(16), nn.Linear(16, 20)
        params = [p for m in (tok, pos, blocks, ln_f, head) for p in m.parameters()]
        optimizer = lib.optim.AdamW(params, lr=1e-2)
        data = lib.randint(0, 20, (300,))
        losses = []
        for _ in range(12):
            xb, yb = random_windows(lib, data, 8, 4)
            logits = head(ln_f(blocks(tok(xb) + pos(lib.arange(8)))))
            loss = F.cross_entropy(logits.view(-1, 20), yb.view(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses
    assert run(gradiente) == run(torch)
