"""scaled_dot_product_attention's float32 backward as PyTorch's CPU flash-attention kernel computes it
(``ops/nn/attention.py``'s ``_kernel_order_backward``), the C library's ``logf`` it takes its log-sum-exp with
(``core/c_logf.py``), and nanoGPT's model trained with them: each compared with torch 2.13, element by element."""
import ctypes
import ctypes.util

import numpy as np
import pytest
import torch
from harness import gpt_block_class, random_windows

import gradiente
from gradiente.core.c_logf import c_logf

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


@pytest.mark.parametrize("batch, heads, length, head_size, causal", [
    (2, 2, 64, 32, True), (3, 4, 64, 32, True), (1, 3, 100, 48, False), (2, 1, 256, 64, True),
    (1, 2, 32, 32, True), (1, 2, 200, 24, True), (2, 2, 16, 64, False), (1, 1, 300, 64, True),
])
def test_attention_gradients_equal_pytorchs(batch, heads, length, head_size, causal):
    rng = np.random.default_rng(length + head_size)
    q, k, v, g = (rng.standard_normal((batch, heads, length, head_size)).astype(np.float32) for _ in range(4))
    results = []
    for lib in (gradiente, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = lib.nn.functional.scaled_dot_product_attention(*leaves, is_causal=causal)
        out.backward(lib.tensor(g))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for ours, theirs in zip(*results):
        assert np.array_equal(ours, theirs)


def test_attention_of_a_projections_views_as_nanogpt_makes_them():
    """q, k and v as views of one projection, split and transposed (strided, not contiguous)."""
    rng = np.random.default_rng(0)
    batch, length, channels, heads = 3, 64, 128, 4
    x = rng.standard_normal((batch, length, 3 * channels)).astype(np.float32)
    g = rng.standard_normal((batch, heads, length, channels // heads)).astype(np.float32)
    results = []
    for lib in (gradiente, torch):
        xt = lib.tensor(x, requires_grad=True)
        q, k, v = (t.view(batch, length, heads, channels // heads).transpose(1, 2) for t in xt.split(channels, dim=2))
        lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).backward(lib.tensor(g))
        results.append(xt.grad.numpy())
    assert np.array_equal(*results)


def test_c_logf_is_the_c_librarys():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.random(20000) * 60 + 1, np.exp(rng.uniform(-80, 80, 20000)),
                        [1, 0.5, 2, 1e-40, 0, -1, np.inf, np.nan, 3.4e38]]).astype(np.float32)
    ours = c_logf(x)
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C math library to compare with")
    libm = ctypes.CDLL(name)
    libm.logf.restype, libm.logf.argtypes = ctypes.c_float, [ctypes.c_float]
    theirs = np.array([libm.logf(float(v)) for v in x], np.float32)
    assert np.array_equal(ours.view(np.uint32)[~np.isnan(theirs)], theirs.view(np.uint32)[~np.isnan(theirs)])
    assert np.isnan(ours[np.isnan(theirs)]).all()
    with np.errstate(divide="ignore", invalid="ignore"):
        assert (ours != np.log(x.astype(np.float64)).astype(np.float32)).sum() > 0   # glibc's is not exact


def test_nanogpts_model_trains_to_pytorchs_losses():
    """nanoGPT's GPT in small (token and position embeddings, pre-norm blocks of causal flash attention and a GELU
    MLP, layer norms without bias, a tied head), AdamW with weight decay and gradient clipping as its train.py
    does: every loss of 8 steps, printed in full, equals PyTorch's."""
    def run(lib):
        nn, F = lib.nn, lib.nn.functional
        Block = gpt_block_class(lib, lambda channels: nn.LayerNorm(channels, bias=False), nn.GELU)
        lib.manual_seed(1337)
        wte, wpe = nn.Embedding(65, 128), nn.Embedding(32, 128)
        blocks, ln_f = nn.ModuleList([Block(128, 4), Block(128, 4)]), nn.LayerNorm(128, bias=False)
        head = nn.Linear(128, 65, bias=False)
        head.weight = wte.weight
        params = [p for m in (wte, wpe, blocks, ln_f) for p in m.parameters()]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        optimizer = lib.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                    lr=1e-3, betas=(0.9, 0.99))
        data = lib.randint(0, 65, (2000,))
        losses = []
        for _ in range(8):
            xb, yb = random_windows(lib, data, 32, 8)
            x = wte(xb) + wpe(lib.arange(32))
            for block in blocks:
                x = block(x)
            logits = head(ln_f(x))
            loss = F.cross_entropy(logits.view(-1, 65), yb.view(-1))
            loss.backward()
            lib.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(repr(loss.item()))
        return losses
    assert run(gradiente) == run(torch)
