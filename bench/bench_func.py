"""torch.func benchmarks against PyTorch in the same run (issue 11): ratios gradiente / torch, medians.

    python bench/bench_func.py            # all
    python bench/bench_func.py --quick    # fewer rounds

1. ``jacfwd`` of a function R^100 -> R^100 (target <= 1.5);
2. ``jacrev`` of the same function (target <= 1.5);
3. a forward-over-reverse Hessian-vector product, ``jvp(grad(f))`` (target <= 1.0);
4. per-sample gradients of a small MLP (32-64-10, ReLU, cross-entropy, batch 64), ``vmap(grad(loss), in_dims=(None,
   0, 0))`` (target <= 1.5);
5. ``autograd.grad(..., is_grads_batched=True)``, 64 cotangents through an MLP's graph (target <= 1.5).

Both libraries vmap the Jacobians' basis vectors into one batched pass. gradiente's vmap batches the *physical*
graph (``func/_batched_tensor.py``): its jacrev runs the function once more, batched over the basis, where torch.func
batches only the backward pass; and per-sample gradients differentiate parameters expanded to the batch, so their
backward pass multiplies stacks of small matrices, where torch.func's batching rules run one outer product.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_times, report  # first: it sets one BLAS thread before NumPy loads

# isort: split
import numpy as np
import torch

import gradiente

torch.set_num_threads(1)
LIBS = {"gradiente": gradiente, "torch": torch}
N = 100


def inputs(lib):
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((N, N)) / N ** 0.5)
    x = lib.tensor(rng.standard_normal(N))
    v = lib.tensor(rng.standard_normal(N))
    return w, x, v


def vector_function(w):
    return lambda x: (w @ x).tanh() * x.sin() + x


def jacfwd(lib):
    w, x, _ = inputs(lib)
    f = lib.func.jacfwd(vector_function(w))
    return lambda: f(x)


def jacrev(lib):
    w, x, _ = inputs(lib)
    f = lib.func.jacrev(vector_function(w))
    return lambda: f(x)


def hvp(lib):
    w, x, v = inputs(lib)

    def loss(x):
        return ((w @ x).tanh() ** 2).sum() + x.sin().sum()

    grad = lib.func.grad(loss)
    return lambda: lib.func.jvp(grad, (x,), (v,))[1]


def per_sample_grads(lib):
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(shape) * 0.1) for shape in ((64, 32), (64,), (10, 64), (10,))]
    x, y = lib.tensor(rng.standard_normal((64, 32))), lib.tensor(rng.integers(0, 10, 64))
    F = lib.nn.functional

    def loss(p, xi, yi):
        out = F.linear(F.relu(F.linear(xi, p[0], p[1])), p[2], p[3])
        return F.cross_entropy(out.unsqueeze(0), yi.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, x, y)[0]


def grads_batched(lib):
    """``autograd.grad(..., is_grads_batched=True)``: 64 vector-Jacobian products of an MLP's output (32-64-64-10,
    tanh, batch 32) in its inputs and weights, one vmapped backward pass."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((32, 32)), requires_grad=True)
    weights = [lib.tensor(rng.standard_normal(shape) / shape[0] ** 0.5, requires_grad=True)
               for shape in ((32, 64), (64, 64), (64, 10))]
    out = lib.tanh(lib.tanh(x @ weights[0]) @ weights[1]) @ weights[2]
    cotangents = lib.tensor(rng.standard_normal((64, 32, 10)))
    return lambda: lib.autograd.grad(out, [x] + weights, cotangents, is_grads_batched=True, retain_graph=True)[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    rounds = 3 if parser.parse_args().quick else 7
    rows = []
    for name, make, target in ((f"jacfwd, R^{N} -> R^{N}", jacfwd, 1.5), (f"jacrev, R^{N} -> R^{N}", jacrev, 1.5),
                               ("hvp, jvp(grad(f)) (forward-over-reverse)", hvp, 1.0),
                               ("per-sample grads, vmap(grad(mlp loss)), batch 64", per_sample_grads, 1.5),
                               ("autograd.grad(is_grads_batched=True), 64 VJPs of an MLP", grads_batched, 1.5)):
        fns = {lib_name: make(lib) for lib_name, lib in LIBS.items()}
        ours, theirs = (fns[k]() for k in ("gradiente", "torch"))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)
        times = median_times(fns, rounds=rounds)
        rows.append((name, times["gradiente"], times["torch"], target, "s"))
    report(rows, "torch.func (float64, one thread)")


if __name__ == "__main__":
    main()
