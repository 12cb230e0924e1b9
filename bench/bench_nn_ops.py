"""The ``nn`` ops of issue 14, one at a time: gradiente, PyTorch and the same computation written by hand in
NumPy (the floor), forward + backward, in one run, one thread, as ratios of median times.

    python bench/bench_nn_ops.py              # all, 9 rounds
    python bench/bench_nn_ops.py --quick      # 5 rounds
    python bench/bench_nn_ops.py gelu adamw   # only the ops whose names contain these words

Each row times ``forward; backward(grad)`` on fixed random float32 data (the optimizer rows time one
``step()`` on a million parameters with a gradient already in place). The floor (``nn_floors.py``) is the
op's arithmetic in plain NumPy with nothing else around it: no autograd, no checks, no dtype rules. It is what
gradiente could reach if recording and dispatch cost nothing; ``ours/floor`` says how far above it the op is,
``ours/torch`` how it compares with PyTorch. Targets (issue 14): each op within 1.2 of its floor; GELU and the
optimizer steps within 1.5 of torch; the GPT block, LSTM and GRU layers within 1.6.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_times  # first: it sets one BLAS thread before NumPy loads

# isort: split
import nn_floors
import numpy as np
import torch

import gradiente

torch.set_num_threads(1)


def _tensors(lib, arrays, grad_flags):
    return [lib.tensor(a, requires_grad=g) if g else lib.from_numpy(a) for a, g in zip(arrays, grad_flags)]


def _forward_backward(lib, fn, arrays, grad_flags):
    """``run()``: the forward of ``fn`` on fresh leaves of ``arrays`` and a backward with a fixed upstream
    gradient."""
    inputs = _tensors(lib, arrays, grad_flags)
    out = fn(lib, *inputs)
    upstream = lib.from_numpy(np.random.RandomState(1).standard_normal(tuple(out.shape)).astype(np.float32))

    def run():
        for t in inputs:
            t.grad = None
        fn(lib, *inputs).backward(upstream)
    return run


def _gelu(lib, x):
    return lib.nn.functional.gelu(x)


def _embedding(lib, idx, w):
    return lib.nn.functional.embedding(idx, w)


def _layer_norm(lib, x, w, b):
    return lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def _group_norm(lib, x, w, b):
    return lib.nn.functional.group_norm(x, 8, w, b)


def _batch_norm(lib, x, w, b):
    return lib.nn.functional.batch_norm(x, None, None, w, b, training=True)


def _gpt_block(lib, x, *params):
    return nn_floors.gpt_block_lib(lib, x, params)


def _rnn(kind):
    return lambda lib, x, *params: nn_floors.rnn_lib(lib, kind, x, params)


def _optimizer_step(lib, make, n=1_000_000):
    rng = np.random.RandomState(0)
    p = lib.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    p.grad = lib.from_numpy(rng.standard_normal(n).astype(np.float32))
    opt = make(lib.optim, [p])
    opt.step()                                      # the state (momentum buffer, moments) exists from here on
    return opt.step


def cases():
    """``(name, {contender: run})`` for every row."""
    rng = np.random.RandomState(0)
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    rows = []

    def op_row(name, fn, arrays, grad_flags, floor):
        rows.append((name, {"gradiente": _forward_backward(gradiente, fn, arrays, grad_flags),
                            "torch": _forward_backward(torch, fn, arrays, grad_flags),
                            "floor": floor}))

    x = normal(64, 256)
    op_row("gelu (64x256)", _gelu, [x], [True], nn_floors.gelu(x))
    idx = rng.randint(0, 5000, 2048).astype(np.int64)
    w = normal(5000, 64)
    op_row("embedding (vocab 5000, 2048 tokens, dim 64)", _embedding, [idx, w], [False, True],
           nn_floors.embedding(idx, w))
    x, w, b = normal(512, 128), normal(128), normal(128)
    op_row("layer_norm (512x128, affine)", _layer_norm, [x, w, b], [True] * 3, nn_floors.layer_norm(x, w, b))
    x, w, b = normal(16, 64, 16, 16), normal(64), normal(64)
    op_row("group_norm (16x64x16x16, 8 groups)", _group_norm, [x, w, b], [True] * 3,
           nn_floors.group_norm(x, 8, w, b))
    x, w, b = normal(16, 64, 16, 16), normal(64), normal(64)
    op_row("batch_norm train (16x64x16x16)", _batch_norm, [x, w, b], [True] * 3, nn_floors.batch_norm(x, w, b))
    x, params = nn_floors.gpt_block_arrays()
    op_row("GPT block (B8 T64 C128, 4 heads)", _gpt_block, [x, *params], [True] * (1 + len(params)),
           nn_floors.gpt_block(x, params))
    for kind, name in (("lstm", "LSTM"), ("gru", "GRU")):
        x, params = nn_floors.rnn_arrays(kind)
        op_row(f"{name} layer (seq 32, batch 16, 64->128)", _rnn(kind), [x, *params], [True] * 5,
               getattr(nn_floors, kind)(x, params))
    sgd = lambda optim, ps: optim.SGD(ps, lr=0.01, momentum=0.9)          # noqa: E731
    adamw = lambda optim, ps: optim.AdamW(ps, lr=1e-3)                     # noqa: E731
    rows.append(("SGD momentum step (1M params)", {"gradiente": _optimizer_step(gradiente, sgd),
                                                   "torch": _optimizer_step(torch, sgd),
                                                   "floor": nn_floors.sgd_momentum_step(1_000_000)}))
    rows.append(("AdamW step (1M params)", {"gradiente": _optimizer_step(gradiente, adamw),
                                            "torch": _optimizer_step(torch, adamw),
                                            "floor": nn_floors.adamw_step(1_000_000)}))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("only", nargs="*")
    args = parser.parse_args()
    rounds = 5 if args.quick else 9
    print(f"nn ops, forward + backward, float32, one thread, median of {rounds} rounds")
    print(f"{'op':<46}{'gradiente':>11}{'torch':>11}{'floor':>11}{'ours/torch':>12}{'floor/torch':>12}"
          f"{'ours/floor':>11}")
    for name, fns in cases():
        if args.only and not any(word in name.lower() for word in args.only):
            continue
        t = median_times(fns, rounds=rounds, warmup=2)
        ours, theirs, floor = t["gradiente"], t["torch"], t["floor"]
        print(f"{name:<46}{ours * 1e3:>8.3f} ms{theirs * 1e3:>8.3f} ms{floor * 1e3:>8.3f} ms"
              f"{ours / theirs:>12.2f}{floor / theirs:>12.2f}{ours / floor:>11.2f}", flush=True)


if __name__ == "__main__":
    main()
