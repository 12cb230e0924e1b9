"""Engine benchmarks against PyTorch in the same run (issues 3 and 14): ratios gradiente / torch, medians.

    python bench/bench_engine.py            # all
    python bench/bench_engine.py --quick    # fewer rounds

Issue 14's table: a chain of 1000 elementwise ops on a 3-element tensor, forward + backward (target <= 0.7) and
forward only (<= 1.2); a 20,000-op chain, forward only (<= 1.3); a 100,000-op chain, forward + backward, time and
peak memory, each library in its own process (<= 0.8 and <= 0.7); the 1000-op chain on 0-d tensors (<= 0.9); a
Hessian-vector product by double backward (<= 1.0); one SGD step of a 784-256-256-10 MLP, batch 64 and 512
(<= 0.95 each); and ``import gradiente`` less ``import numpy``, in fresh processes with bytecode cached
(<= 30 ms; torch's own import is printed beside it for scale).

Rows marked "floor" time the same job done with the least work Python over NumPy allows (``floors.py``:
a minimal engine without any of gradiente's checks, and the MLP step written by hand in NumPy), against
the same PyTorch run: a target below a floor's ratio is out of reach for any library built this way.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_times, report  # first: it sets one BLAS thread before NumPy loads

# isort: split
import floors

# isort: split
import numpy as np
import torch

import gradiente

torch.set_num_threads(1)
LIBS = {"gradiente": gradiente, "torch": torch}


def chain_1000(lib):
    x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = lib.tensor([1.001, 0.999, 1.0], requires_grad=True)
    return lambda: floors.chain(x, w)


def chain_forward(lib, ops):
    """The chain's forward only (``ops`` elementwise ops, recorded: the leaves require grad)."""
    x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = lib.tensor([1.001, 0.999, 1.0], requires_grad=True)
    return lambda: floors.chain(x, w, ops=ops, backward=False)


def chain_0d(lib):
    x, w = lib.tensor(0.1, requires_grad=True), lib.tensor(1.001, requires_grad=True)
    return lambda: floors.chain(x, w)


# NumPy is imported first and outside the timing: what a library adds to it is then timed directly, in one
# process, instead of as the difference of two noisy medians (NumPy's own import varies by tens of ms here)
IMPORT = "import time, numpy; t = time.perf_counter(); import {0}; print(time.perf_counter() - t)"


def import_seconds(modules, rounds):
    """Median time of ``import module``, after NumPy's, in a fresh interpreter (bytecode cached by a first,
    untimed run), for each of ``modules``: their runs alternate, so that a slow spell of the machine falls on
    all of them alike."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = {module: [sys.executable, "-c", IMPORT.format(module)] for module in modules}
    times: dict = {module: [] for module in modules}
    for run in runs.values():
        subprocess.check_output(run, env=env)
    for _ in range(rounds):
        for module, run in runs.items():
            times[module].append(float(subprocess.check_output(run, env=env)))
    return {module: sorted(t)[rounds // 2] for module, t in times.items()}


def mlp_step(lib, batch):
    arrays, inputs, targets = floors.mlp_arrays(batch)
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    x, y = lib.tensor(inputs), lib.tensor(targets)
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


ALONE = r"""
import os, sys, time, json, statistics
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, sys.argv[3])
import importlib
import floors
lib = importlib.import_module(sys.argv[1])
if sys.argv[1] == "torch":
    lib.set_num_threads(1)
ops, rounds = int(sys.argv[2]), int(sys.argv[4])
x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
w = lib.tensor([1.001, 0.999, 1.0], requires_grad=True)
times = []
for _ in range(rounds + 1):
    start = time.perf_counter()
    y = floors.chain(x, w, ops=ops, backward=False)
    times.append(time.perf_counter() - start)
    del y
print(json.dumps(statistics.median(times[1:])))
"""


def chain_forward_alone(ops, rounds):
    """``{library: median time}`` of the forward-only chain of ``ops`` ops, each library alone in a fresh
    process, as a user has it: a long graph is mostly collector time, and the collector's full passes scan every
    object of the process, so the other library's objects would slow each one down (torch's far more)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return {name: json.loads(subprocess.check_output([sys.executable, "-c", ALONE, name, str(ops), here,
                                                      str(rounds)], text=True)) for name in LIBS}


def chain_100k_runs(rounds=3):
    """``{library: median run}`` of the 100k chain, each run in a fresh process, the libraries taking
    turns (see ``median_times``)."""
    runs = {name: [] for name in LIBS}
    for _ in range(rounds):
        for name in LIBS:
            runs[name].append(json.loads(subprocess.check_output([sys.executable, "-c", CHILD, name], text=True)))
    return {name: sorted(rs, key=lambda r: r["time"])[len(rs) // 2] for name, rs in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds = 5 if args.quick else 15
    rows = []
    t = median_times({**{name: chain_1000(lib) for name, lib in LIBS.items()},
                      "floor": floors.minimal_chain_1000()}, rounds)
    rows.append(("1,000-op chain, forward + backward", t["gradiente"], t["torch"], 0.7, "s"))
    rows.append(("  floor: minimal engine, no checks", t["floor"], t["torch"], None, "s"))
    t = median_times({name: chain_forward(lib, 1000) for name, lib in LIBS.items()}, rounds)
    rows.append(("1,000-op chain, forward only", t["gradiente"], t["torch"], 1.2, "s"))
    t = chain_forward_alone(20_000, rounds)
    rows.append(("20,000-op chain, forward only (alone)", t["gradiente"], t["torch"], 1.3, "s"))
    c = chain_100k_runs()
    rows.append(("100,000-op chain: time", c["gradiente"]["time"], c["torch"]["time"], 0.8, "s"))
    rows.append(("100,000-op chain: peak memory", c["gradiente"]["peak_mb"], c["torch"]["peak_mb"], 0.7, "MB"))
    t = median_times({name: chain_0d(lib) for name, lib in LIBS.items()}, rounds)
    rows.append(("1,000-op chain on 0-d tensors", t["gradiente"], t["torch"], 0.9, "s"))
    t = median_times({name: hvp(lib) for name, lib in LIBS.items()}, rounds)
    rows.append(("Hessian-vector product (200-d, double backward)", t["gradiente"], t["torch"], 1.0, "s"))
    for batch in (64, 512):
        t = median_times({**{name: mlp_step(lib, batch) for name, lib in LIBS.items()},
                          "floor": floors.numpy_mlp_step(*floors.mlp_arrays(batch))}, rounds)
        rows.append((f"MLP 784-256-256-10 SGD step, batch {batch}", t["gradiente"], t["torch"], 0.95, "s"))
        rows.append(("  floor: the step by hand in NumPy", t["floor"], t["torch"], None, "s"))
    report(rows, f"gradiente {gradiente.__version__} vs torch {torch.__version__}, one thread, medians")
    seconds = import_seconds(("gradiente", "torch"), max(rounds, 7))
    ours, theirs = seconds["gradiente"], seconds["torch"]
    flag = "" if ours <= 0.030 else "  (over target)"
    print(f"\nimport after numpy's, medians: gradiente {ours * 1e3:.1f} ms (target <= 30 ms){flag}, "
          f"torch {theirs * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
