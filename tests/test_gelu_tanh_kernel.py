"""GELU's tanh approximation (``approximate='tanh'``, GPT-2's) as PyTorch's CPU kernels compute it
(``core/gelu_tanh_kernel.py``), with Sleef's ``tanhf`` on the vectors (``vector_exp.sleef_tanh``) and the C
library's on the rest (``core/c_fdlibm.py``): each compared with torch 2.13, element by element, forward and
backward, in every layout ATen's loop treats differently, and a GPT-2-style model trained to PyTorch's losses."""
import ctypes
import ctypes.util

import numpy as np
import pytest
import torch
from harness import gpt_block_class, random_windows

import gradiente
from gradiente.core import c_fdlibm

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


def _libm():
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C math library to compare with")
    libm = ctypes.CDLL(name)
    for function in ("tanhf", "expm1f"):
        getattr(libm, function).restype = ctypes.c_float
        getattr(libm, function).argtypes = [ctypes.c_float]
    return libm


def test_c_tanhf_is_the_c_librarys():
    rng = np.random.default_rng(0)
    special = [0, -0.0, 22, -22, 21.99, 1, -1, 0.5, np.inf, -np.inf, np.nan, 1e-40, 3e-18]
    x = np.concatenate([rng.standard_normal(40_000) * 3, rng.uniform(-30, 30, 10_000), rng.standard_normal(2000) * 1e-6,
                        special]).astype(np.float32)
    libm = _libm()
    theirs = np.array([libm.tanhf(float(v)) for v in x], np.float32)
    ours = c_fdlibm.c_tanhf(x)
    numbers = ~np.isnan(theirs)
    assert np.array_equal(ours.view(np.uint32)[numbers], theirs.view(np.uint32)[numbers])
    assert np.isnan(ours[~numbers]).all()


@pytest.mark.skipif(not c_fdlibm.FDLIBM, reason="the C library's expm1f is not fdlibm's")
def test_c_expm1f_is_the_c_librarys_where_tanh_calls_it():
    rng = np.random.default_rng(1)
    y = np.concatenate([rng.uniform(-2, 0, 20_000), rng.uniform(0, 44, 20_000), [0.3465736, 1.0397208]]).astype(
        np.float32)
    libm = _libm()
    assert np.array_equal(c_fdlibm.c_expm1f(y), np.array([libm.expm1f(float(v)) for v in y], np.float32))


def _operand(lib, base, layout):
    t = lib.from_numpy(base.copy())
    if layout == "fortran" and t.dim() > 1:
        t = t.transpose(0, -1).contiguous().transpose(0, -1)
    elif layout == "every other":
        t = t[..., ::2]
    elif layout == "leading columns":
        t = t[..., :t.shape[-1] // 2 + 5]
    elif layout == "transposed" and t.dim() > 1:
        t = t.transpose(0, -1)
    return t.detach().requires_grad_(True)


@pytest.mark.parametrize("shape", [(7,), (62,), (66,), (2000,), (8, 64, 512), (3, 5, 14), (100, 74)])
@pytest.mark.parametrize("layout", ["contiguous", "fortran", "every other", "leading columns", "transposed"])
@pytest.mark.parametrize("grad_layout", ["contiguous", "as the input"])
def test_gelu_tanh_and_its_gradient_equal_pytorchs(shape, layout, grad_layout):
    rng = np.random.default_rng(len(shape) + shape[-1])
    base = (rng.standard_normal(shape) * 3).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        x = _operand(lib, base, layout)
        y = lib.nn.functional.gelu(x, approximate="tanh")
        g = np.random.default_rng(7).standard_normal(y.shape).astype(np.float32)
        grad = lib.from_numpy(g) if grad_layout == "contiguous" else lib.empty_like(x).copy_(lib.from_numpy(g))
        y.backward(grad)
        results.append((y.detach().numpy(), x.grad.numpy()))
    (y_t, dx_t), (y_g, dx_g) = results
    assert np.array_equal(y_g, y_t)
    assert np.array_equal(dx_g, dx_t)


def test_gelu_tanh_keeps_its_formula_in_float64_and_under_create_graph():
    x = gradiente.tensor([-2.0, -0.5, 0.0, 0.7, 3.0], dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradcheck(lambda t: gradiente.nn.functional.gelu(t, approximate="tanh"), (x,))
    assert gradiente.autograd.gradgradcheck(lambda t: gradiente.nn.functional.gelu(t, approximate="tanh"), (x,))


def test_a_gpt2_style_model_trains_to_pytorchs_losses():
    """build-nanogpt's GPT-2 in small: pre-norm blocks of causal flash attention and an MLP with
    ``nn.GELU(approximate='tanh')``, layer norms with biases, a tied head, AdamW: every loss of 6 steps, printed in
    full, equals PyTorch's."""
    def run(lib):
        nn, F = lib.nn, lib.nn.functional
        Block = gpt_block_class(lib, nn.LayerNorm, lambda: nn.GELU(approximate="tanh"))
        lib.manual_seed(1337)
        wte, wpe = nn.Embedding(50, 96), nn.Embedding(30, 96)
        blocks, ln_f = nn.ModuleList([Block(96, 4), Block(96, 4)]), nn.LayerNorm(96)
        head = nn.Linear(96, 50, bias=False)
        head.weight = wte.weight
        params = [p for m in (wte, wpe, blocks, ln_f) for p in m.parameters()]
        optimizer = lib.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
        data = lib.randint(0, 50, (1000,))
        losses = []
        for _ in range(6):
            xb, yb = random_windows(lib, data, 30, 5)
            x = wte(xb) + wpe(lib.arange(30))
            for block in blocks:
                x = block(x)
            loss = F.cross_entropy(head(ln_f(x)).view(-1, 50), yb.view(-1))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(repr(loss.item()))
        return losses
    assert run(gradiente) == run(torch)
