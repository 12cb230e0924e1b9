"""The example programs (PyTorch's classic tutorials, our versions) run, and print what PyTorch prints when the
same file runs with ``import torch``: the same lines, the same words, the same numbers to the tolerance
given per example (float32 sums are added in a different order; RMSprop ends jittering around the optimum).

The PyTorch runs happen in one subprocess (importing torch once); the gradiente runs in this process."""
import importlib.util
import re
from pathlib import Path

import pytest
from program_runs import assert_same_output, run_here, run_with_torch

torch = pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# (script, argv, rtol, atol): the tolerances numbers are compared with
RUNS = [
    ("polynomial_tensor.py", [], 1e-4, 1e-6),
    ("polynomial_autograd.py", [], 1e-4, 1e-6),
    ("polynomial_custom_function.py", [], 1e-4, 1e-8),
    ("polynomial_nn.py", [], 1e-4, 1e-6),
    ("polynomial_module.py", [], 1e-4, 1e-6),
    ("polynomial_optim.py", ["SGD"], 1e-4, 1e-6),
    ("polynomial_optim.py", ["Adam"], 1e-3, 1e-4),
    # (RMSprop near its minimum oscillates, and amplifies the last-bit differences of torch.sin's values, which
    # come from Intel's vector math library, into 1-2% on the last losses printed; the first 1500 steps agree
    # within 1e-5)
    ("polynomial_optim.py", ["RMSprop"], 2e-2, 2e-3),
    ("dynamic_net.py", ["6000"], 1e-4, 1e-6),
]
DIGITS = ("train_digits.py", ["--epochs", "8", "--no-progress", "--plot", "digits.png"], 0, 0)


@pytest.fixture(scope="module")
def torch_outputs(tmp_path_factory):
    runs = RUNS + ([DIGITS] if _has_demo_deps() else [])
    outputs = run_with_torch([(EXAMPLES / s, argv) for s, argv, *_ in runs], tmp_path_factory.mktemp("torch_examples"))
    return {(s, tuple(argv)): out for (s, argv, *_), out in zip(runs, outputs)}


def _has_demo_deps():
    return all(importlib.util.find_spec(name) for name in ("matplotlib", "sklearn", "tqdm"))


@pytest.mark.parametrize("script,argv,rtol,atol", RUNS, ids=[f"{s[:-3]}{'-' + a[0] if a else ''}" for s, a, *_ in RUNS])
def test_example_prints_what_torch_prints(script, argv, rtol, atol, torch_outputs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ours = run_here(EXAMPLES / script, argv)
    assert ours.strip().splitlines()[-1].startswith("Result: ")
    assert_same_output(ours, torch_outputs[(script, tuple(argv))], rtol, atol)


def test_digits_demo_trains_to_95_percent(torch_outputs, tmp_path, monkeypatch):
    if not _has_demo_deps():
        pytest.skip("the demo needs scikit-learn, tqdm and matplotlib")
    monkeypatch.chdir(tmp_path)
    script, argv, _, _ = DIGITS
    ours = run_here(EXAMPLES / script, argv)
    accuracy = float(re.search(r"test accuracy ([\d.]+)% after", ours).group(1))
    assert accuracy >= 95.0
    assert (tmp_path / "digits.png").stat().st_size > 1000
    # same seed, same shuffles, same initial weights: PyTorch prints the same epochs (timing aside)
    def drop_timing(text):
        return "\n".join(line for line in text.splitlines() if "trained in" not in line)

    assert_same_output(drop_timing(ours), drop_timing(torch_outputs[(script, tuple(argv))]), 1e-3, 1e-4)
