"""Programs of our own in the style of well-known PyTorch code (issue 16): nanoGPT's model and training loop, the
makemore lectures (an MLP, and backpropagation by hand checked against autograd), pytorch/examples' mnist, word
language model, time-sequence prediction, REINFORCE, VAE and DCGAN, the nn.Transformer tutorial, a graph
convolutional network on a sparse adjacency matrix, and a graph attention network (pytorch/examples' GAT). Each
is written for PyTorch and runs unchanged with ``import gradiente as torch``; the test runs it both ways and compares
what the two print, line by line.

Every random draw is PyTorch's for the same seed (weights, dropout masks, shuffles, samples), so the outputs are
the same, not merely alike: the tolerance is for float32 sums added in a different order."""
from pathlib import Path

import pytest
from program_runs import assert_same_output, run_here, run_with_torch

pytest.importorskip("torch")

PROGRAMS = Path(__file__).resolve().parent.parent / "examples" / "programs"
# (program, argv)
RUNS = [
    ("backprop_ninja.py", []),
    ("gpt_char.py", []),
    ("makemore_mlp.py", []),
    ("mnist_cnn.py", ["--epochs", "2"]),
    ("word_language_model.py", []),
    ("time_sequence.py", []),
    ("reinforce.py", []),
    ("gcn.py", []),
    ("gat.py", []),
    ("vae.py", []),
    ("dcgan.py", []),
    ("transformer_lm.py", []),
]


def test_every_program_is_run():
    assert sorted(path.name for path in PROGRAMS.glob("*.py")) == sorted(name for name, _ in RUNS)


@pytest.fixture(scope="module")
def torch_outputs(tmp_path_factory):
    outputs = run_with_torch([(PROGRAMS / name, argv) for name, argv in RUNS], tmp_path_factory.mktemp("programs"))
    return dict(zip((name for name, _ in RUNS), outputs))


@pytest.mark.parametrize("name,argv", RUNS, ids=[name[:-3] for name, _ in RUNS])
def test_program_prints_what_torch_prints(name, argv, torch_outputs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ours = run_here(PROGRAMS / name, argv)
    assert len(ours.splitlines()) >= 5
    # backprop_ninja prints the largest difference between gradients derived by hand and autograd's, a few units
    # of float32 rounding (1e-9) that depend on the last bit of every exp and tanh; whether each gradient is exact
    # is printed as a word, compared exactly
    assert_same_output(ours, torch_outputs[name], rtol=1e-3, atol=5e-7 if name == "backprop_ninja.py" else 1e-4)
