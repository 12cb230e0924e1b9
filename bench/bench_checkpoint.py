"""Activation checkpointing against PyTorch in the same run (issue 12): peak memory and time of one forward
+ backward of an MLP, plain and checkpointed (``checkpoint_sequential``, non-reentrant), medians.

    python bench/bench_checkpoint.py            # 3 runs of each
    python bench/bench_checkpoint.py --quick    # 1 run of each

Each run is a fresh process, so that one run's peak cannot hide another's. Peak memory is measured twice:
the resident-set high-water mark above the process's baseline (both libraries), and ``tracemalloc``'s peak
(NumPy reports its arrays to it, so it sees gradiente's tensors; PyTorch's CPU allocator does not report to
it, so its column is empty there). The rows to read are the ratios checkpointed / plain of each library:
what checkpointing saves, and what it costs in time.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # first: it sets one BLAS thread before NumPy loads

# isort: split
import torch

import gradiente

WIDTH, DEPTH, BATCH, SEGMENTS = 1024, 8, 512, 4

CHILD = """
import os, sys, time, json, tracemalloc
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import importlib
import numpy as np
lib = importlib.import_module(sys.argv[1])
checkpointed = sys.argv[2] == "checkpoint"
width, depth, batch, segments = (int(a) for a in sys.argv[3:7])
if sys.argv[1] == "torch":
    lib.set_num_threads(1)
def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
rng = np.random.default_rng(0)
layers = []
for _ in range(depth):
    linear = lib.nn.Linear(width, width)
    with lib.no_grad():
        linear.weight.copy_(lib.tensor(rng.standard_normal((width, width), dtype=np.float32) / width ** 0.5))
    layers += [linear, lib.nn.Tanh()]
model = lib.nn.Sequential(*layers)
x = lib.tensor(rng.standard_normal((batch, width), dtype=np.float32), requires_grad=True)
def step():
    if checkpointed:
        out = lib.utils.checkpoint.checkpoint_sequential(model, segments, x, use_reentrant=False)
    else:
        out = model(x)
    out.square().mean().backward()
step()                                   # warm up: first-use costs and the .grad buffers
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")                         # reset the peak-RSS mark
base = status("VmRSS")
tracemalloc.start()
start = time.perf_counter()
step()
elapsed = time.perf_counter() - start
traced = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
peak = status("VmHWM")
print(json.dumps({"time": elapsed, "rss_mb": (peak - base) / 2**20, "traced_mb": traced / 2**20}))
"""


def runs(rounds):
    """``{(library, mode): median run}``, each run a fresh process, libraries and modes taking turns."""
    results = {}
    for _ in range(rounds):
        for name in ("gradiente", "torch"):
            for mode in ("plain", "checkpoint"):
                out = subprocess.check_output([sys.executable, "-c", CHILD, name, mode, str(WIDTH), str(DEPTH),
                                               str(BATCH), str(SEGMENTS)], text=True)
                results.setdefault((name, mode), []).append(json.loads(out))
    return {key: sorted(rs, key=lambda r: r["time"])[len(rs) // 2] for key, rs in results.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    r = runs(1 if args.quick else 3)
    g = {m: r[("gradiente", m)] for m in ("plain", "checkpoint")}
    t = {m: r[("torch", m)] for m in ("plain", "checkpoint")}
    rows = []
    for mode in ("plain", "checkpoint"):
        rows.append((f"MLP {mode}: time", g[mode]["time"], t[mode]["time"], None, "s"))
        rows.append((f"MLP {mode}: peak RSS", g[mode]["rss_mb"], t[mode]["rss_mb"], None, "MB"))
    report(rows, f"{DEPTH} x Linear({WIDTH}) + Tanh, batch {BATCH}, {SEGMENTS} segments; gradiente "
                 f"{gradiente.__version__} vs torch {torch.__version__}, one thread")
    print(f"\n{'checkpointed / plain':<44}{'gradiente':>12}{'torch':>12}")
    for label, key in (("time", "time"), ("peak RSS", "rss_mb")):
        print(f"{label:<44}{g['checkpoint'][key] / g['plain'][key]:>12.2f}"
              f"{t['checkpoint'][key] / t['plain'][key]:>12.2f}")
    print(f"{'peak tracemalloc (gradiente only)':<44}{g['checkpoint']['traced_mb'] / g['plain']['traced_mb']:>12.2f}"
          f"{'n/a':>12}   ({g['plain']['traced_mb']:.1f} MB -> {g['checkpoint']['traced_mb']:.1f} MB)")


if __name__ == "__main__":
    main()
