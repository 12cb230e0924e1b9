"""Property tests (hypothesis): binary and ternary elementwise ops over mutually broadcastable shapes, and
reductions over random shapes, dims and keepdim, each compared with PyTorch (forward, backward with a
non-trivial upstream gradient, grad_fn name) through the op-spec harness, and checked by gradcheck."""
import math

import numpy as np
import pytest
from harness import OpSpec, check_against_torch, check_gradcheck
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

pytest.importorskip("torch")

ANY, POSITIVE = (-2.0, 2.0), (0.5, 2.0)

#: name -> (fn(lib, *inputs), the domain of each input)
BINARY = {
    "add": (lambda lib, x, y: x + y, (ANY, ANY)),
    "sub": (lambda lib, x, y: x - y, (ANY, ANY)),
    "mul": (lambda lib, x, y: x * y, (ANY, ANY)),
    "div": (lambda lib, x, y: x / y, (ANY, POSITIVE)),
    "pow": (lambda lib, x, y: x ** y, (POSITIVE, ANY)),
    "maximum": (lambda lib, x, y: lib.maximum(x, y), (ANY, ANY)),
    "minimum": (lambda lib, x, y: lib.minimum(x, y), (ANY, ANY)),
    "fmax": (lambda lib, x, y: lib.fmax(x, y), (ANY, ANY)),
    "atan2": (lambda lib, x, y: lib.atan2(x, y), (ANY, ANY)),
    "hypot": (lambda lib, x, y: lib.hypot(x, y), (ANY, ANY)),
    "xlogy": (lambda lib, x, y: lib.xlogy(x, y), (ANY, POSITIVE)),
    "clamp_min": (lambda lib, x, y: lib.clamp_min(x, y), (ANY, ANY)),
    "lerp": (lambda lib, x, y: lib.lerp(x, y, 0.3), (ANY, ANY)),
}
TERNARY = {
    "where": (lambda lib, c, x, y: lib.where(c > 0, x, y), (ANY, ANY, ANY)),
    "clamp": (lambda lib, x, lo, hi: lib.clamp(x, lo, hi), (ANY, (-1.0, 0.0), (0.0, 1.0))),
    "lerp_tensor": (lambda lib, x, y, w: lib.lerp(x, y, w), (ANY, ANY, (-1.0, 2.0))),
}


def _spec(name, fn, arrays, grad_inputs=None):
    """A one-off op spec whose inputs are exactly ``arrays``."""
    return OpSpec(name, fn, [tuple(a.shape for a in arrays)],
                  make_inputs=lambda rng, shapes: [a.copy() for a in arrays], grad_inputs=grad_inputs)


def _uniform(rng, shape, domain):
    return rng.uniform(*domain, size=shape)


def _check(spec, gradcheck):
    shapes = spec.shapes[0]
    check_against_torch(spec, shapes, "float64")
    check_against_torch(spec, shapes, "float32")
    if gradcheck:
        check_gradcheck(spec, shapes)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(BINARY)), shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       seed=st.integers(0, 2 ** 16), gradcheck=st.booleans())
def test_binary_ops_over_broadcast_shapes(name, shapes, seed, gradcheck):
    fn, domains = BINARY[name]
    rng = np.random.RandomState(seed)
    arrays = [_uniform(rng, s, d) for s, d in zip(shapes.input_shapes, domains)]
    _check(_spec(name, fn, arrays), gradcheck)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(TERNARY)),
       shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3), seed=st.integers(0, 2 ** 16))
def test_ternary_ops_over_broadcast_shapes(name, shapes, seed):
    fn, domains = TERNARY[name]
    # PyTorch's clamp backward fails when x is smaller than the broadcast result (its bug, not a property).
    assume(name != "clamp" or tuple(shapes.input_shapes[0]) == tuple(shapes.result_shape))
    rng = np.random.RandomState(seed)
    arrays = [_uniform(rng, s, d) for s, d in zip(shapes.input_shapes, domains)]
    grad_inputs = (1, 2) if name == "where" else None
    _check(_spec(name, fn, arrays, grad_inputs), gradcheck=True)


#: name -> fn(lib, x, dims, keepdim); reductions over several dims take a tuple, the others one int
MULTI_DIM = {
    "sum": lambda lib, x, d, k: x.sum(d, keepdim=k),
    "mean": lambda lib, x, d, k: x.mean(d, keepdim=k),
    "amax": lambda lib, x, d, k: x.amax(d, keepdim=k),
    "amin": lambda lib, x, d, k: lib.amin(x, d, keepdim=k),
    "var": lambda lib, x, d, k: x.var(d, keepdim=k),
    "std": lambda lib, x, d, k: lib.std(x, d, correction=0, keepdim=k),
    "logsumexp": lambda lib, x, d, k: x.logsumexp(d, keepdim=k),
    "norm": lambda lib, x, d, k: x.norm(2, dim=d, keepdim=k),
    "norm_3": lambda lib, x, d, k: x.norm(3, dim=d, keepdim=k),
    "norm_inf": lambda lib, x, d, k: x.norm(math.inf, dim=d, keepdim=k),
}
ONE_DIM = {
    "prod": lambda lib, x, d, k: x.prod(d, keepdim=k),
    "max": lambda lib, x, d, k: x.max(d, keepdim=k).values,
    "min": lambda lib, x, d, k: lib.min(x, d, k)[0],
    "median": lambda lib, x, d, k: x.median(d, keepdim=k).values,
    "cumsum": lambda lib, x, d, k: x.cumsum(d),
    "cumprod": lambda lib, x, d, k: lib.cumprod(x, d),
}


@settings(max_examples=50, deadline=None)
@given(name=st.sampled_from(sorted(MULTI_DIM) + sorted(ONE_DIM)),
       shape=array_shapes(min_dims=1, max_dims=3, max_side=4), data=st.data(), seed=st.integers(0, 2 ** 16))
def test_reductions_over_dims(name, shape, data, seed):
    ndim = len(shape)
    keepdim = data.draw(st.booleans(), label="keepdim")
    if name in ONE_DIM:
        dims = data.draw(st.integers(-ndim, ndim - 1), label="dim")
        reduced = shape[dims]
    else:
        axes = data.draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True), label="axes")
        dims = tuple(a - ndim if data.draw(st.booleans(), label="negative") else a for a in axes)
        reduced = int(np.prod([shape[a] for a in axes]))
    if name in ("var",):
        assume(reduced > 1)
    fn = {**MULTI_DIM, **ONE_DIM}[name]
    rng = np.random.RandomState(seed)
    # Distinct values well apart: no ties for max/min/median/norm-inf, no zero for norm's kink.
    x = (rng.permutation(int(np.prod(shape))) * 0.29 + 0.1) * rng.choice([-1, 1], size=int(np.prod(shape)))
    x = (x / max(1.0, np.abs(x).max() / 2)).reshape(shape)
    _check(_spec(name, lambda lib, t: fn(lib, t, dims, keepdim), [x]), gradcheck=data.draw(st.booleans()))
