"""Engine benchmarks against PyTorch in the same run (issue 3): ratios gradiente / torch, medians.

    python bench/bench_engine.py            # all
    python bench/bench_engine.py --quick    # fewer rounds

1. a chain of 1000 elementwise ops on a 3-element tensor, forward + backward (target <= 0.5);
2. one SGD step of a 784-256-256-10 MLP with cross-entropy, batch 64 and 512, one thread (<= 0.9);
3. a 100,000-op chain, forward + backward: time and peak memory, each library in its own process (<= 1.0);
4. a Hessian-vector product (<= 1.0).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time, report  # first: it sets one BLAS thread before NumPy loads

# isort: split
import numpy as np
import torch

import gradiente

torch.set_num_threads(1)
LIBS = {"gradiente": gradiente, "torch": torch}


def chain_1000(lib):
    x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = lib.tensor([1.001, 0.999, 1.0], requires_grad=True)

    def run():
        y = x
        for _ in range(250):
            y = y * 1.001
            y = y + 0.001
            y = y.tanh()
            y = y * w
        y.sum().backward()
    return run


def mlp_step(lib, batch):
    rng = np.random.RandomState(0)
    sizes = [784, 256, 256, 10]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(lib.tensor(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32), requires_grad=True))
        params.append(lib.tensor(rng.uniform(-bound, bound, fan_out).astype(np.float32), requires_grad=True))
    x = lib.tensor(rng.standard_normal((batch, 784)).astype(np.float32))
    y = lib.tensor(rng.randint(0, 10, batch))
    F = lib.nn.functional

    def run():
        h = x
        for i in range(0, len(params), 2):
            h = F.linear(h, params[i], params[i + 1])
            if i < len(params) - 2:
                h = F.relu(h)
        loss = F.cross_entropy(h, y)
        for p in params:
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.01 * p.grad
    return run


def hvp(lib):
    rng = np.random.RandomState(1)
    a = lib.tensor(rng.standard_normal((200, 200)))
    x = lib.tensor(rng.standard_normal(200))
    v = lib.tensor(rng.standard_normal(200))

    def f(x):
        return (lib.tanh(a @ x) ** 2).sum() + (x * x * x).sum()

    def run():
        lib.autograd.functional.hvp(f, x, v)
    return run


CHILD = r"""
import os, sys, time, json
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import importlib
lib = importlib.import_module(sys.argv[1])
if sys.argv[1] == "torch":
    lib.set_num_threads(1)
def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
(x * 1.0).sum().backward()
# Reset this process's peak-RSS mark (ru_maxrss would carry the parent's peak across exec).
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS")
start = time.perf_counter()
y = x
for _ in range(100_000):
    y = y * 1.0
y.sum().backward()
elapsed = time.perf_counter() - start
peak = status("VmHWM")
print(json.dumps({"time": elapsed, "peak_mb": (peak - base) / 2**20}))
"""


def chain_100k(name):
    runs = [json.loads(subprocess.check_output([sys.executable, "-c", CHILD, name], text=True)) for _ in range(3)]
    runs.sort(key=lambda r: r["time"])
    return runs[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds = 3 if args.quick else 9
    rows = []
    t = {name: median_time(chain_1000(lib), rounds) for name, lib in LIBS.items()}
    rows.append(("chain of 1000 elementwise ops (3 elements)", t["gradiente"], t["torch"], 0.5, "s"))
    for batch in (64, 512):
        t = {name: median_time(mlp_step(lib, batch), rounds) for name, lib in LIBS.items()}
        rows.append((f"MLP 784-256-256-10 SGD step, batch {batch}", t["gradiente"], t["torch"], 0.9, "s"))
    c = {name: chain_100k(name) for name in LIBS}
    rows.append(("100,000-op chain: time", c["gradiente"]["time"], c["torch"]["time"], 1.0, "s"))
    rows.append(("100,000-op chain: peak memory", c["gradiente"]["peak_mb"], c["torch"]["peak_mb"], 1.0, "MB"))
    t = {name: median_time(hvp(lib), rounds) for name, lib in LIBS.items()}
    rows.append(("Hessian-vector product (200-d)", t["gradiente"], t["torch"], 1.0, "s"))
    report(rows, f"gradiente {gradiente.__version__} vs torch {torch.__version__}, one thread, medians")


if __name__ == "__main__":
    main()
