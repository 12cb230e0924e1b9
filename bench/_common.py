"""Shared helpers for the benchmarks: single-threaded math, median timings, side-by-side ratios."""
import os
import statistics
import time

# One thread for both libraries, set before NumPy or PyTorch load their BLAS.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def median_times(fns, rounds=7, warmup=2):
    """``{name: median wall time}`` for ``fns`` (``{name: fn}``), run in turn within each round.

    Interleaving matters on a shared or throttled machine: if the machine slows down halfway, every
    contender is slowed in the same rounds, so the ratios stay honest even when the times do not."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def report(rows, title):
    """Print a table: benchmark, gradiente time, torch time, ratio, target."""
    print(f"\n{title}")
    print(f"{'benchmark':<44}{'gradiente':>12}{'torch':>12}{'ratio':>8}{'target':>9}")
    for name, ours, theirs, target, unit in rows:
        ratio = ours / theirs if theirs else float("nan")
        flag = "" if target is None or ratio <= target else "  (over target)"
        tgt = f"<= {target}" if target is not None else ""
        print(f"{name:<44}{_fmt(ours, unit):>12}{_fmt(theirs, unit):>12}{ratio:>8.2f}{tgt:>9}{flag}")


def _fmt(value, unit):
    if unit == "s":
        return f"{value * 1e3:.2f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:.1f} {unit}"
