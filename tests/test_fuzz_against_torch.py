"""Random chains of ops on random inputs, run in gradiente and in PyTorch: values, dtypes, grad_fn names,
gradients with a random upstream gradient, and (when PyTorch raises) the error's type and message must agree.

A seed makes each chain reproducible: a failure names it, and ``run_chain(seed)`` replays it. The op tables
cover elementwise math, binary ops with broadcasting, reductions and shape ops, chained up to four deep, on
0-d to 3-d inputs in float32 and float64, so that ops meet each other's edge cases (nan, inf, -0.0, empty
selections) as they do in real programs."""
import random
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

UNARY = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "sqrt", "rsqrt", "reciprocal", "square",
         "exp2", "expm1", "log1p", "log2", "log10", "sinh", "cosh", "atan", "asinh", "floor", "ceil", "round", "trunc",
         "sign", "frac", "erf"]
BINARY = {
    "add": lambda lib, x, y: x + y, "sub": lambda lib, x, y: x - y, "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / y, "pow": lambda lib, x, y: x.abs() ** y,
    "maximum": lambda lib, x, y: lib.maximum(x, y), "minimum": lambda lib, x, y: lib.minimum(x, y),
    "atan2": lambda lib, x, y: lib.atan2(x, y),
    "remainder": lambda lib, x, y: lib.remainder(x, y), "fmod": lambda lib, x, y: lib.fmod(x, y),
    "lerp": lambda lib, x, y: lib.lerp(x, y, 0.3), "where": lambda lib, x, y: lib.where(x > 0, x, y),
    "clamp": lambda lib, x, y: x.clamp(-0.5, 0.7),
}
REDUCE = {
    "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d, keepdim=True), "prod": lambda x, d: x.prod(d),
    "amax": lambda x, d: x.amax(d), "amin": lambda x, d: x.amin(d), "logsumexp": lambda x, d: x.logsumexp(d),
    "std": lambda x, d: x.std(d), "var": lambda x, d: x.var(d, correction=0), "norm": lambda x, d: x.norm(),
    "cumsum": lambda x, d: x.cumsum(d), "cumprod": lambda x, d: x.cumprod(d),
    "max_dim": lambda x, d: x.max(d).values, "min_dim": lambda x, d: x.min(d)[0],
    "softmax": lambda x, d: x.softmax(d), "log_softmax": lambda x, d: x.log_softmax(d),
}
SHAPE = {
    "t": lambda lib, x, d: x.t() if x.dim() <= 2 else x.mT, "flip": lambda lib, x, d: x.flip(d),
    "roll": lambda lib, x, d: x.roll(1, d), "unsqueeze": lambda lib, x, d: x.unsqueeze(d),
    "squeeze": lambda lib, x, d: x.squeeze(), "transpose": lambda lib, x, d: x.transpose(0, -1),
    "reshape": lambda lib, x, d: x.reshape(-1), "expand": lambda lib, x, d: x.unsqueeze(0).expand(2, *x.shape),
    "index": lambda lib, x, d: x[..., ::2], "bool_index": lambda lib, x, d: x[x > 0],
    "cat": lambda lib, x, d: lib.cat([x, x * 2], d), "stack": lambda lib, x, d: lib.stack([x, -x], d),
    "tril": lambda lib, x, d: x.tril() if x.dim() >= 2 else x, "permute": lambda lib, x, d: x.permute(
        *reversed(range(x.dim()))), "flatten": lambda lib, x, d: x.flatten(),
}
OPS = UNARY + list(BINARY) + list(REDUCE) + list(SHAPE)


def _apply(lib, op, x, y, r):
    d = r.randrange(x.dim()) if x.dim() else 0
    if op in UNARY:
        return getattr(lib, op)(x)
    if op in BINARY:
        return BINARY[op](lib, x, y)
    if op in REDUCE:
        return REDUCE[op](x, d) if x.dim() or op in ("norm",) else REDUCE[op](x, 0)
    return SHAPE[op](lib, x, d)


def run_chain(seed):
    """The chain for ``seed`` in both libraries; returns a description of the first disagreement, or None."""
    r = random.Random(seed)
    shape = tuple(r.randrange(1, 4) for _ in range(r.randrange(0, 4)))
    dtype = r.choice(["float32", "float64"])
    a = np.random.RandomState(seed).standard_normal(shape).astype(dtype)
    b_shape = shape[r.randrange(0, len(shape) + 1):]
    b = np.random.RandomState(seed + 1).standard_normal(b_shape).astype(dtype)
    ops = [r.choice(OPS) for _ in range(r.randrange(1, 5))]
    op_seeds = [r.randrange(10**6) for _ in ops]
    outcome = {}
    for lib in (gradiente, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        try:
            z, names = x, []
            for op, op_seed in zip(ops, op_seeds):
                z = _apply(lib, op, z, y, random.Random(op_seed))
                names.append(type(z.grad_fn).__name__ if z.grad_fn is not None else None)
            upstream = np.random.RandomState(seed + 2).standard_normal(tuple(z.shape)).astype(dtype)
            if z.requires_grad:
                z.backward(lib.tensor(upstream))
            outcome[lib] = ("ok", names, str(z.dtype).split(".")[-1], z.detach().numpy().copy(),
                            None if x.grad is None else x.grad.numpy().copy(),
                            None if y.grad is None else y.grad.numpy().copy())
        except Exception as e:      # the error itself is compared
            outcome[lib] = ("error", type(e).__name__, str(e).split("\n")[0])
    ours, theirs = outcome[gradiente], outcome[torch]
    where = f"seed {seed}: {ops} on {shape} ({dtype}), other {b_shape}"
    if ours[0] != theirs[0] or (ours[0] == "error" and ours[1:] != theirs[1:]):
        def brief(result):
            return result[:3] if result[0] == "error" else "ok"
        return f"{where}: gradiente {brief(ours)}, torch {brief(theirs)}"
    if ours[0] == "error":
        return None
    if ours[1:3] != theirs[1:3]:
        return f"{where}: grad_fn/dtype {ours[1:3]} vs {theirs[1:3]}"
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-11}
    for what, g, t in zip(("value", "x.grad", "other.grad"), ours[3:], theirs[3:]):
        if (g is None) != (t is None) or (g is not None and (g.shape != t.shape or not np.allclose(
                g, t, equal_nan=True, **tol))):
            return f"{where}: {what} differs"
    return None


@pytest.mark.parametrize("block", range(10))
def test_random_op_chains_agree_with_torch(block):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures = [f for f in (run_chain(seed) for seed in range(block * 100, block * 100 + 100)) if f]
    assert not failures, "\n".join(failures)
