"""Training benchmarks against PyTorch in the same run (issue 5): one epoch (DataLoader with shuffling,
forward, loss, backward, optimizer step) of the same model on the same data, one thread, as a ratio
gradiente / torch of median times.

    python bench/bench_training.py            # all
    python bench/bench_training.py --quick    # fewer rounds

1. MLP 64-128-64-10 on digit-sized data (1,797 samples, batch 32, Adam): the demo's workload (target <= 1.0);
2. MLP 784-256-128-10 on MNIST-sized data (4,096 samples, batch 64, SGD with momentum) (target <= 1.0);
3. a small CNN on 1x28x28 images (1,024 samples, batch 64, SGD with momentum): conv 8 and 16 channels of 3x3,
   max pooling, linear head (issue 14's target <= 1.0). PyTorch's convolution is oneDNN's (direct, vectorized
   kernels); ours is im2col + one BLAS product per layer, whose copies bound the ratio (see the printed note).
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


def epoch(lib, model_fn, n, shape, batch, optimizer_fn):
    """A function running one training epoch of ``model_fn(nn)`` on fixed random data, in library ``lib``."""
    rng = np.random.RandomState(0)
    images = lib.from_numpy(rng.standard_normal((n,) + shape).astype(np.float32))
    labels = lib.from_numpy(rng.randint(0, 10, n).astype(np.int64))
    lib.manual_seed(0)
    model = model_fn(lib.nn)
    optimizer = optimizer_fn(lib.optim, model.parameters())
    loss_fn = lib.nn.CrossEntropyLoss()
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(images, labels), batch_size=batch,
                                       shuffle=True)

    def run():
        for x, y in loader:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return run


def digits_mlp(nn):
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def mnist_mlp(nn):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def small_cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


BENCHMARKS = [
    ("epoch: MLP 64-128-64-10, batch 32, Adam", digits_mlp, 1797, (64,), 32,
     lambda optim, params: optim.Adam(params, lr=1e-3), 1.0),
    ("epoch: MLP 784-256-128-10, batch 64, SGD", mnist_mlp, 4096, (1, 28, 28), 64,
     lambda optim, params: optim.SGD(params, lr=0.01, momentum=0.9), 1.0),
    ("epoch: CNN conv8-conv16 28x28, batch 64, SGD", small_cnn, 1024, (1, 28, 28), 64,
     lambda optim, params: optim.SGD(params, lr=0.01, momentum=0.9), 1.0),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    rows = []
    for name, model_fn, n, shape, batch, optimizer_fn, target in BENCHMARKS:
        times = median_times({lib_name: epoch(lib, model_fn, n, shape, batch, optimizer_fn)
                              for lib_name, lib in LIBS.items()}, rounds=rounds, warmup=1)
        rows.append((name, times["gradiente"], times["torch"], target, "s"))
    report(rows, "training epochs, one thread (median)")
    print("\nThe CNN's convolutions are im2col products: each input is copied kh*kw times and the backward pass "
          "folds the column gradient back with kh*kw strided adds, where oneDNN convolves in place.")


if __name__ == "__main__":
    main()
