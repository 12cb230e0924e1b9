"""The benchmark floors (bench/floors.py) must compute what they claim to: a floor that skipped work
would make a target look out of reach when it is not."""
import os
import sys

import numpy as np
import pytest

import gradiente

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "bench"))
import floors


def test_minimal_engine_gives_gradientes_gradients_on_the_chain():
    results = {}
    for name, lib in (("minimal", None), ("gradiente", gradiente)):
        if lib is None:
            x = floors.MinimalTensor(np.array([0.1, 0.2, 0.3], np.float32), requires_grad=True)
            w = floors.MinimalTensor(np.array([1.001, 0.999, 1.0], np.float32), requires_grad=True)
        else:
            x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
            w = lib.tensor([1.001, 0.999, 1.0], requires_grad=True)
        y = x
        for _ in range(50):
            y = (y * 1.001 + 0.001).tanh() * w
        y.sum().backward()
        grads = [x.grad, w.grad] if lib is None else [x.grad.numpy(), w.grad.numpy()]
        results[name] = grads
    for ours, minimal in zip(results["gradiente"], results["minimal"]):
        np.testing.assert_array_equal(ours, minimal)


@pytest.mark.parametrize("batch", [8, 64])
def test_numpy_mlp_step_matches_a_gradiente_sgd_step(batch):
    arrays, inputs, targets = floors.mlp_arrays(batch)
    params = [gradiente.tensor(a, requires_grad=True) for a in arrays]
    floors.numpy_mlp_step(arrays, inputs, targets)()
    F = gradiente.nn.functional
    h = gradiente.tensor(inputs)
    for i in range(0, 6, 2):
        h = F.linear(h, params[i], params[i + 1])
        h = F.relu(h) if i < 4 else h
    F.cross_entropy(h, gradiente.tensor(targets)).backward()
    with gradiente.no_grad():
        for p in params:
            p -= 0.01 * p.grad
    for ours, by_hand in zip(params, arrays):
        np.testing.assert_allclose(ours.detach().numpy(), by_hand, rtol=1e-5, atol=1e-6)


def _gradiente_run(fn, arrays, grad_flags):
    """Output and input gradients of ``fn(gradiente, *tensors)`` for the nn bench's upstream gradient."""
    import nn_floors
    tensors = [gradiente.tensor(a, requires_grad=g) if g else gradiente.from_numpy(a)
               for a, g in zip(arrays, grad_flags)]
    out = fn(*tensors)
    out.backward(gradiente.from_numpy(nn_floors.upstream(tuple(out.shape))))
    return [out.detach().numpy()] + [t.grad.numpy() for t, g in zip(tensors, grad_flags) if g]


def _nn_cases():
    import nn_floors
    rng = np.random.RandomState(0)
    F = gradiente.nn.functional
    x = rng.standard_normal((8, 16)).astype(np.float32)
    idx = np.array([3, 1, 3, 0, 3, 1], np.int64)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    xl, wl, bl = (rng.standard_normal(s).astype(np.float32) for s in ((6, 8), (8,), (8,)))
    xg, wg, bg = (rng.standard_normal(s).astype(np.float32) for s in ((2, 8, 3, 3), (8,), (8,)))
    xb, params = nn_floors.gpt_block_arrays(batch=2, length=5, width=8)
    return [
        ("gelu", nn_floors.gelu(x), F.gelu, [x], [True], 1e-6),
        ("embedding", nn_floors.embedding(idx, w), F.embedding, [idx, w], [False, True], 0),
        ("layer_norm", nn_floors.layer_norm(xl, wl, bl), lambda *t: F.layer_norm(t[0], (8,), t[1], t[2]),
         [xl, wl, bl], [True] * 3, 1e-5),
        ("group_norm", nn_floors.group_norm(xg, 4, wg, bg), lambda *t: F.group_norm(t[0], 4, t[1], t[2]),
         [xg, wg, bg], [True] * 3, 1e-5),
        ("batch_norm", nn_floors.batch_norm(xg, wg, bg),
         lambda *t: F.batch_norm(t[0], None, None, t[1], t[2], training=True), [xg, wg, bg], [True] * 3, 1e-5),
        ("gpt_block", nn_floors.gpt_block(xb, params), lambda *t: nn_floors.gpt_block_lib(gradiente, t[0], t[1:]),
         [xb, *params], [True] * 13, 1e-4),
    ] + [(kind, getattr(nn_floors, kind)(xr, pr), lambda *t, kind=kind: nn_floors.rnn_lib(gradiente, kind, t[0], t[1:]),
          [xr, *pr], [True] * 5, 1e-4)
         for kind in ("lstm", "gru") for xr, pr in [nn_floors.rnn_arrays(kind, length=5, batch=3, inputs=4, hidden=6)]]


@pytest.mark.parametrize("case", _nn_cases(), ids=lambda case: case[0])
def test_nn_op_floors_compute_gradientes_outputs_and_gradients(case):
    _, floor, fn, arrays, grad_flags, tol = case
    for ours, by_hand in zip(_gradiente_run(fn, arrays, grad_flags), floor(), strict=True):
        np.testing.assert_allclose(ours, by_hand, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["sgd", "adamw"])
def test_optimizer_floors_take_gradientes_steps(name):
    import nn_floors
    n = 1000
    make = {"sgd": lambda ps: gradiente.optim.SGD(ps, lr=0.01, momentum=0.9),
            "adamw": lambda ps: gradiente.optim.AdamW(ps, lr=1e-3)}[name]
    floor = {"sgd": nn_floors.sgd_momentum_step, "adamw": nn_floors.adamw_step}[name](n)
    rng = np.random.RandomState(0)
    p = gradiente.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    p.grad = gradiente.from_numpy(rng.standard_normal(n).astype(np.float32))
    opt = make([p])
    for _ in range(3):
        opt.step()
        by_hand = floor()
    np.testing.assert_allclose(p.detach().numpy(), by_hand, rtol=1e-6, atol=1e-7)
