"""Random dtype pairings against PyTorch: each of bool, uint8, int8..int64, float16/32/64 met by another
dtype, a 0-d tensor or a Python number, through arithmetic, comparisons, bitwise and shift operators,
clamps and unary math. The result's dtype, its values and (where PyTorch refuses) the error's type and
message must agree: type promotion, integer wraparound, division by zero and the kernels PyTorch lacks for
some dtypes are where libraries built on NumPy usually differ."""
import random
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _tensor_op(lib, y):
    return y if isinstance(y, lib.Tensor) else lib.tensor(y)


OPS = {
    "add": lambda lib, x, y: x + y, "sub": lambda lib, x, y: x - y, "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / y, "floordiv": lambda lib, x, y: x // y, "mod": lambda lib, x, y: x % y,
    "pow": lambda lib, x, y: x ** y, "eq": lambda lib, x, y: x == y, "lt": lambda lib, x, y: x < y,
    "maximum": lambda lib, x, y: lib.maximum(x, _tensor_op(lib, y)),
    "where": lambda lib, x, y: lib.where(x > 0 if x.dtype != lib.bool else x, x, y),
    "and": lambda lib, x, y: x & y, "or": lambda lib, x, y: x | y, "lshift": lambda lib, x, y: x << y,
    "rshift": lambda lib, x, y: x >> y, "atan2": lambda lib, x, y: lib.atan2(x, _tensor_op(lib, y)),
    "fmod": lambda lib, x, y: lib.fmod(x, y), "remainder": lambda lib, x, y: lib.remainder(x, y),
    "clamp": lambda lib, x, y: x.clamp(-1, y if not isinstance(y, lib.Tensor) else 2),
    "lerp": lambda lib, x, y: lib.lerp(x, _tensor_op(lib, y), 0.5),
    "neg": lambda lib, x, y: -x, "abs": lambda lib, x, y: x.abs(), "sum": lambda lib, x, y: x.sum(),
    "mean": lambda lib, x, y: x.mean(), "prod": lambda lib, x, y: x.prod(), "argmax": lambda lib, x, y: x.argmax(),
    "sqrt": lambda lib, x, y: x.sqrt(), "sigmoid": lambda lib, x, y: x.sigmoid(), "round": lambda lib, x, y: x.round(),
    "sign": lambda lib, x, y: x.sign(), "cumsum": lambda lib, x, y: x.cumsum(0),
}


def _make(lib, seed, dtype, shape):
    rng = np.random.RandomState(seed)
    if dtype == "bool":
        a = rng.rand(*shape) > 0.5
    elif dtype.startswith(("int", "uint")):
        a = rng.randint(0 if dtype == "uint8" else -5, 6, size=shape).astype(dtype)
    else:
        a = (rng.standard_normal(shape) * 3).astype(dtype)
    return lib.tensor(a)


def run_case(seed):
    r = random.Random(seed)
    op, d1, d2 = r.choice(sorted(OPS)), r.choice(DTYPES), r.choice(DTYPES)
    shape = tuple(r.randrange(1, 3) for _ in range(r.randrange(0, 3)))
    other_shape = shape[r.randrange(0, len(shape) + 1):]
    kind = r.choice(["tensor", "0-d", "int", "float", "bool"])
    number = {"int": r.randrange(-3, 4), "float": r.choice([0.5, -1.5, 2.0]), "bool": True}.get(kind)
    outcome = {}
    for lib in (gradiente, torch):
        try:
            x = _make(lib, seed, d1, shape)
            y = (_make(lib, seed + 1, d2, other_shape) if kind == "tensor" else
                 _make(lib, seed + 1, d2, ()) if kind == "0-d" else number)
            z = OPS[op](lib, x, y)
            outcome[lib] = ("ok", str(z.dtype).split(".")[-1], z.numpy().copy())
        except Exception as e:      # the error itself is compared
            outcome[lib] = ("error", type(e).__name__, str(e).split("\n")[0])
    ours, theirs = outcome[gradiente], outcome[torch]
    where = f"seed {seed}: {op} of {d1}{shape} and {kind} {d2 if kind in ('tensor', '0-d') else number}"
    if ours[:2] != theirs[:2] or (ours[0] == "error" and ours != theirs):
        return f"{where}: gradiente {ours[:3] if ours[0] == 'error' else ours[:2]}, torch " \
               f"{theirs[:3] if theirs[0] == 'error' else theirs[:2]}"
    if ours[0] == "ok":
        a, b = ours[2], theirs[2]
        tol = {"rtol": 1e-3, "atol": 1e-3} if a.dtype == np.float16 else {"rtol": 1e-6, "atol": 1e-6}
        same = a.shape == b.shape and (np.allclose(a.astype(float), b.astype(float), equal_nan=True, **tol)
                                       if a.dtype.kind == "f" else np.array_equal(a, b))
        if not same:
            return f"{where}: values {a} vs {b}"
    return None


@pytest.mark.parametrize("block", range(6))
def test_random_dtype_pairings_agree_with_torch(block):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures = [f for f in (run_case(seed) for seed in range(block * 200, block * 200 + 200)) if f]
    assert not failures, "\n".join(failures)
