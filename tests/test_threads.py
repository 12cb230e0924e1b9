"""Backward from several threads at once (issue 13, "Concurrency"): gradients that meet in one shared leaf are
all kept, as PyTorch's engine keeps them (it locks each leaf's accumulation), and grad mode stays per thread."""
import threading

import numpy as np

import gradiente


def _in_threads(count, work):
    """Run ``work(i)`` on ``count`` threads released together; re-raise the first failure."""
    start, errors = threading.Barrier(count), []

    def run(i):
        try:
            start.wait()
            work(i)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_backward_from_eight_threads_into_one_leaf_loses_nothing():
    threads, passes, n = 8, 50, 10 ** 5
    leaf = gradiente.zeros(n, dtype=gradiente.float64, requires_grad=True)

    def work(i):
        scale = gradiente.full((n,), float(i + 1), dtype=gradiente.float64)
        for _ in range(passes):
            (leaf * scale).sum().backward()

    _in_threads(threads, work)
    expected = passes * sum(range(1, threads + 1))           # exact: small integers in float64
    assert np.array_equal(leaf.grad.numpy(), np.full(n, float(expected)))


def test_threads_sharing_leaves_through_a_graph_each():
    """Each thread builds its own graph over two shared leaves (a matmul, a broadcast add); the sums are exact."""
    w = gradiente.zeros(64, 32, dtype=gradiente.float64, requires_grad=True)
    b = gradiente.zeros(32, dtype=gradiente.float64, requires_grad=True)
    x = gradiente.ones(16, 64, dtype=gradiente.float64)

    def work(i):
        for _ in range(20):
            (x @ w + b).sum().backward()

    _in_threads(6, work)
    assert np.array_equal(w.grad.numpy(), np.full((64, 32), 6 * 20 * 16.0))
    assert np.array_equal(b.grad.numpy(), np.full(32, 6 * 20 * 16.0))


def test_create_graph_accumulation_from_threads():
    leaf = gradiente.ones(1000, dtype=gradiente.float64, requires_grad=True)

    def work(i):
        for _ in range(10):
            (leaf * leaf).sum().backward(create_graph=True)

    _in_threads(4, work)
    assert np.array_equal(leaf.grad.detach().numpy(), np.full(1000, 4 * 10 * 2.0))


def test_grad_mode_is_per_thread():
    seen = {}

    def work(i):
        if i == 0:
            with gradiente.no_grad():
                seen[i] = gradiente.is_grad_enabled()
                barrier.wait()
                barrier.wait()
        else:
            barrier.wait()
            seen[i] = gradiente.is_grad_enabled()
            barrier.wait()

    barrier = threading.Barrier(2)
    _in_threads(2, work)
    assert seen == {0: False, 1: True} and gradiente.is_grad_enabled()
