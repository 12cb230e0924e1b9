"""``torch.func.vmap``: a table of ops batched against a Python loop and ``torch.func.vmap`` (float32 and float64),
``in_dims``/``out_dims`` structures, nested vmaps, ``chunk_size``, ``randomness``, per-sample gradients of a small
MLP, the vectorized Jacobians, and PyTorch's error messages."""
import numpy as np
import pytest

import gradiente
from gradiente.func import _dispatch

torch = pytest.importorskip("torch")

LIBS = (gradiente, torch)


def _np(t):
    if isinstance(t, dict):
        return [_np(t[k]) for k in sorted(t)]
    if isinstance(t, (tuple, list)):
        return [_np(x) for x in t]
    return t.detach().numpy()


def _inputs(lib, arrays, dtype):
    return [lib.tensor(a.astype(dtype)) if a.dtype.kind == "f" else lib.tensor(a) for a in arrays]


def _ops(lib):
    F = lib.nn.functional
    return {
        # elementwise and broadcasting
        "sin": (lambda x: x.sin(), [(5, 3)], 0),
        "add_broadcast": (lambda x, y: x + y, [(5, 3, 4), (5, 4)], 0),
        "mul_unbatched": (lambda x, y: x * y, [(5, 3), (3,)], (0, None)),
        "where": (lambda x, y: lib.where(x > 0, x, y), [(5, 3), (5, 3)], 0),
        "clamp": (lambda x: x.clamp(-0.5, 0.5), [(5, 4)], 0),
        "pow_rsub": (lambda x: 2 - x ** 2, [(5, 4)], 0),
        # reductions
        "sum_all": (lambda x: x.sum(), [(5, 3, 4)], 0),
        "sum_dim": (lambda x: lib.sum(x, dim=1, keepdim=True), [(5, 3, 4)], 0),
        "mean_dims": (lambda x: x.mean((0, -1)), [(5, 3, 4, 2)], 0),
        "max_dim": (lambda x: x.max(1).values, [(5, 3, 4)], 0),
        "max_all": (lambda x: x.max(), [(5, 3, 4)], 0),
        "argmax": (lambda x: x.argmax(), [(5, 3, 4)], 0),
        "std": (lambda x: x.std(0), [(5, 3, 4)], 0),
        "logsumexp": (lambda x: lib.logsumexp(x, -1), [(5, 3, 4)], 0),
        "cumsum": (lambda x: x.cumsum(0), [(5, 3, 4)], 0),
        # views
        "view": (lambda x: x.view(-1), [(5, 3, 4)], 0),
        "reshape": (lambda x: x.reshape(2, 6), [(5, 3, 4)], 0),
        "transpose": (lambda x: x.transpose(0, 1), [(5, 3, 4)], 0),
        "permute": (lambda x: x.permute(2, 0, 1), [(5, 3, 4, 2)], 0),
        "unsqueeze_squeeze": (lambda x: x.unsqueeze(0).unsqueeze(-1).squeeze(), [(5, 3, 4)], 0),
        "select_slice": (lambda x: x[1, ::2], [(5, 3, 4)], 0),
        "ellipsis_none": (lambda x: x[..., None, 1:], [(5, 3, 4)], 0),
        "expand": (lambda x: x.expand(2, 3, 4), [(5, 3, 1)], 0),
        "flatten": (lambda x: x.flatten(), [(5, 3, 4)], 0),
        "movedim_in_dim": (lambda x: x.t(), [(3, 5, 4)], 1),
        "split": (lambda x: x.split(2, dim=1)[1], [(5, 3, 4)], 0),
        "cat_stack": (lambda x, y: lib.cat([x, y], 0).sum(0) + lib.stack([x, y], -1).sum(-1), [(5, 3, 4), (3, 4)],
                      (0, None)),
        # indexing
        "index_tensor": (lambda x: x[lib.tensor([2, 0, 1])], [(5, 3, 4)], 0),
        "index_batched": (lambda x, i: x[i], [(5, 4), "i5"], 0),
        "gather": (lambda x, i: x.gather(0, i), [(5, 4, 3), "g"], 0),
        "masked_fill": (lambda x: x.masked_fill(x > 0, 0.0), [(5, 3)], 0),
        # products
        "matmul_vec": (lambda x, w: w @ x, [(5, 4), (3, 4)], (0, None)),
        "matmul_both": (lambda x, y: x @ y, [(5, 3, 4), (5, 4, 2)], 0),
        "matmul_broadcast": (lambda x, y: x @ y, [(5, 2, 3, 4), (4, 2)], (0, None)),
        "mm": (lib.mm, [(5, 3, 4), (4, 2)], (0, None)),
        "bmm": (lib.bmm, [(5, 2, 3, 4), (5, 2, 4, 2)], 0),
        "dot": (lib.dot, [(5, 4), (5, 4)], 0),
        "mv_rmatmul": (lambda v: lib.mv(lib.ones(3, 4, dtype=v.dtype), v) @ lib.ones(3, dtype=v.dtype), [(5, 4)], 0),
        "outer": (lib.outer, [(5, 4), (5, 3)], 0),
        # nn.functional
        "linear": (F.linear, [(5, 4), (3, 4), (3,)], (0, None, None)),
        "linear_batched_weight": (F.linear, [(5, 2, 4), (5, 3, 4)], 0),
        "relu_tanh_gelu": (lambda x: F.gelu(F.relu(x).tanh()), [(5, 4)], 0),
        "softmax": (lambda x: F.softmax(x, dim=-1), [(5, 3, 4)], 0),
        "log_softmax": (lambda x: F.log_softmax(x, 0), [(5, 3, 4)], 0),
        "cross_entropy": (F.cross_entropy, [(5, 3, 4), "t"], 0),
        "cross_entropy_one": (lambda x, t: F.cross_entropy(x, t, reduction="sum"), [(5, 4), "t1"], 0),
        "nll_loss_weighted": (lambda x, t, w: F.nll_loss(x, t, weight=w), [(5, 3, 4), "t", (4,)], (0, 0, None)),
        "mse_loss": (F.mse_loss, [(5, 3, 4), (5, 3, 4)], 0),
        "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(5, 2, 3, 6, 6), (4, 3, 3, 3)], (0, None)),
        "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(5, 3, 6, 6)], 0),
        "layer_norm": (lambda x: F.layer_norm(x, (4,)), [(5, 3, 4)], 0),
        "embedding": (F.embedding, ["e", (6, 3)], (0, None)),
        # an op without a batching rule: the per-example fallback
        "fallback_kron": (lib.kron, [(5, 2, 2), (5, 2, 3)], 0),
    }


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    special = {"i5": rng.integers(0, 4, (5, 2)), "g": rng.integers(0, 4, (5, 2, 3)), "t": rng.integers(0, 4, (5, 3)),
               "t1": rng.integers(0, 4, (5,)), "e": rng.integers(0, 6, (5, 2))}
    return [special[s] if isinstance(s, str) else rng.standard_normal(s) for s in shapes]


def _loop(fn, inputs, in_dims, lib):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(inputs)
    size = next(x.shape[d] for x, d in zip(inputs, dims) if d is not None)
    outs = [fn(*[x if d is None else x.select(d, i) for x, d in zip(inputs, dims)]) for i in range(size)]
    return lib.stack(outs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_ops(gradiente)))
def test_vmap_of_op_equals_loop_and_torch(name, dtype):
    results = {}
    for lib in LIBS:
        fn, shapes, in_dims = _ops(lib)[name]
        inputs = _inputs(lib, _arrays(shapes), dtype)
        results[lib.__name__] = _np(lib.func.vmap(fn, in_dims=in_dims)(*inputs))
        if lib is gradiente:
            loop = _np(_loop(fn, inputs, in_dims, lib))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(results["gradiente"], loop, rtol=tol, atol=tol)
    np.testing.assert_allclose(results["gradiente"], results["torch"], rtol=tol, atol=tol)
    assert results["gradiente"].dtype == results["torch"].dtype


def test_batched_ops_run_once_not_per_example():
    """Every op of the table but the one named for it batches without the per-example fallback."""
    for name, (fn, shapes, in_dims) in _ops(gradiente).items():
        _dispatch.FALLBACK_COUNTS.clear()
        gradiente.func.vmap(fn, in_dims=in_dims)(*_inputs(gradiente, _arrays(shapes), "float64"))
        assert (sum(_dispatch.FALLBACK_COUNTS.values()) > 0) == name.startswith("fallback"), \
            (name, dict(_dispatch.FALLBACK_COUNTS))


def test_outside_vmap_the_namespaces_hold_the_plain_functions():
    before = gradiente.sum, gradiente.nn.functional.linear
    gradiente.func.vmap(gradiente.sum)(gradiente.ones(2, 3))
    assert (gradiente.sum, gradiente.nn.functional.linear) == before
    assert not hasattr(gradiente.sum, "__wrapped_op__")


def test_a_plain_tensors_method_with_a_batched_argument_batches():
    """``w.matmul(x)`` with ``w`` unbatched and ``x`` batched: the method dispatches as ``torch.matmul`` would, and
    after the vmap the plain methods are back."""
    plain = {name: vars(gradiente.Tensor)[name] for name in _dispatch.PLAIN_SELF_METHODS}

    def make(lib):
        w = lib.tensor(np.arange(12.0).reshape(3, 4) / 7)
        x = lib.tensor(np.linspace(-1, 1, 20).reshape(5, 4))
        return lib.func.vmap(lambda v: (w.matmul(v), w[0].mul(v), w[1].dot(v), v.eq(w[2]), w[2].expand_as(v),
                                        w.mv(v).pow(2).where(w[0, :3].gt(0.5), w[0, :3])))(x)

    _same(make)
    assert {name: vars(gradiente.Tensor)[name] for name in _dispatch.PLAIN_SELF_METHODS} == plain


# --- in_dims, out_dims, nesting, chunks ---------------------------------------------------------------------

def _both(make):
    """``make(lib)`` for both libraries, as arrays (a tuple of results stays a list)."""
    return [_np(make(lib)) for lib in LIBS]


def _same(make, tol=1e-12):
    """``make(lib)`` gives the same arrays in both libraries (a float32 program to float32 precision)."""
    ours, theirs = _both(make)
    if np.asarray(ours[0] if isinstance(ours, list) else ours).dtype == np.float32:
        tol = 1e-5
    if isinstance(ours, list):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    else:
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


X = np.random.default_rng(1).standard_normal((3, 4))
Y = np.random.default_rng(2).standard_normal((4, 3))


@pytest.mark.parametrize("case", [
    lambda lib, x, y: lib.func.vmap(lib.add, in_dims=(0, 1))(x, y),
    lambda lib, x, y: lib.func.vmap(lib.mul, in_dims=(-1, None))(y, y[:, 0]),
    lambda lib, x, y: lib.func.vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": None},))({"a": x, "b": y[:, 0]}),
    lambda lib, x, y: lib.func.vmap(lambda p: p[0] + p[1][0], in_dims=((0, (1,)),))((x, (y,))),
    lambda lib, x, y: lib.func.vmap(lambda a: (a, a.sum()), out_dims=(1, 0))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a * 2, out_dims=-1)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: {"s": a.sum(), "c": a[:2]}, out_dims={"s": 0, "c": 1})(x),
    lambda lib, x, y: lib.func.vmap(lambda a, n: a * n, in_dims=(0, None))(x, 3.0),
    lambda lib, x, y: lib.func.vmap(lambda a: (a, 1.5), out_dims=(0, None))(x)[0],
    lambda lib, x, y: lib.func.vmap(lib.func.vmap(lib.mul, in_dims=(0, None)), in_dims=(None, 0))(x[0], y[0]),
    lambda lib, x, y: lib.func.vmap(lib.func.vmap(lambda a, b: a @ b))(x.reshape(3, 2, 2), y.reshape(3, 2, 2)),
    lambda lib, x, y: lib.func.vmap(lambda a: lib.func.vmap(lambda b: a * b)(y[0]))(x[:, 0]),
    lambda lib, x, y: lib.func.vmap(lib.func.vmap(lambda a: a.sum(0), in_dims=1), in_dims=1)(x.reshape(3, 2, 2)),
    lambda lib, x, y: lib.func.vmap(lambda a: a.sin(), chunk_size=2)(x),
    lambda lib, x, y: lib.func.vmap(lambda a, b: (a + b, b), in_dims=(0, None), chunk_size=1)(x, y[:, 0]),
    lambda lib, x, y: lib.vmap(lib.Tensor.sum)(x),
    lambda lib, x, y: lib.func.vmap(lib.func.grad(lambda a: (a ** 3).sum()))(x),
    lambda lib, x, y: lib.func.grad(lambda a: lib.func.vmap(lambda r: (r * r).sum())(a).sum())(x),
    lambda lib, x, y: lib.func.vmap(lib.func.jacrev(lambda a: a.sin() * a.sum()))(x),
    lambda lib, x, y: lib.func.vmap(lib.func.jacfwd(lambda a: a.sin() * a.sum()))(x),
    lambda lib, x, y: lib.func.vmap(lib.func.hessian(lambda a: (a.sin() * a.sum()).sum()))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: lib.func.jvp(lambda b: b.exp(), (a,), (lib.ones_like(a),))[1])(x),
    lambda lib, x, y: lib.func.vmap(lambda a: lib.func.vjp(lambda b: b.exp(), a)[1](a)[0])(x),
])
def test_vmap_structures_and_nesting_match_torch(case):
    _same(lambda lib: case(lib, lib.tensor(X), lib.tensor(Y)))


def test_batch_dim_of_an_output_independent_of_the_inputs_is_expanded():
    for lib in LIBS:
        out = lib.func.vmap(lambda a, lib=lib: lib.ones(2), in_dims=0)(lib.tensor(X))
        assert tuple(out.shape) == (3, 2)


def test_in_place_on_a_batched_tensor_writes_the_batch():
    def f(lib):
        def g(a, b):
            c = a.clone()
            c.mul_(b)
            c[0] = 7.0
            c.unsqueeze_(0)
            return c
        return lib.func.vmap(g)(lib.tensor(X), lib.tensor(Y.T))
    _same(f)


# --- randomness ---------------------------------------------------------------------------------------------

def test_randomness_same_gives_each_example_the_same_draws():
    gradiente.manual_seed(0)
    x = gradiente.zeros(4, 3)
    out = gradiente.func.vmap(lambda a: a + gradiente.randn(3), randomness="same")(x)
    np.testing.assert_array_equal(out[0].numpy(), out[3].numpy())
    drop = gradiente.func.vmap(lambda a: gradiente.nn.functional.dropout(a + 1), randomness="same")(x)
    np.testing.assert_array_equal(drop[0].numpy(), drop[2].numpy())
    like = gradiente.func.vmap(gradiente.rand_like, randomness="same")(x)
    np.testing.assert_array_equal(like[0].numpy(), like[1].numpy())


def test_randomness_different_gives_each_example_its_own_draws():
    gradiente.manual_seed(0)
    x = gradiente.zeros(4, 30)
    for fn in (lambda a: a + gradiente.randn(30), lambda a: gradiente.nn.functional.dropout(a + 1),
               gradiente.rand_like, lambda a: a.clone().normal_()):
        out = gradiente.func.vmap(fn, randomness="different")(x)
        assert tuple(out.shape) == (4, 30)
        assert not np.array_equal(out[0].numpy(), out[1].numpy())


# --- per-sample gradients -----------------------------------------------------------------------------------

def _mlp_per_sample_grads(lib, dtype):
    rng = np.random.default_rng(3)
    params = {name: lib.tensor(rng.standard_normal(shape).astype(dtype) * 0.3)
              for name, shape in (("w1", (8, 5)), ("b1", (8,)), ("w2", (3, 8)), ("b2", (3,)))}
    x = lib.tensor(rng.standard_normal((6, 5)).astype(dtype))
    y = lib.tensor(rng.integers(0, 3, 6))
    F = lib.nn.functional

    def loss(p, xi, yi):
        h = F.relu(F.linear(xi, p["w1"], p["b1"]))
        out = F.linear(h, p["w2"], p["b2"])
        return F.cross_entropy(out.unsqueeze(0), yi.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_per_sample_gradients_of_an_mlp_match_torch_func(dtype):
    ours, theirs = (_mlp_per_sample_grads(lib, dtype) for lib in LIBS)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for name in ours:
        assert tuple(ours[name].shape) == (6,) + tuple(theirs[name].shape[1:])
        np.testing.assert_allclose(ours[name].numpy(), theirs[name].numpy(), rtol=tol, atol=tol)


def test_per_sample_gradients_through_modules_match_torch_func():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
        for p, a in zip(model.parameters(), np.random.default_rng(4).standard_normal(4)):
            with lib.no_grad():
                p.mul_(0).add_(float(a))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = lib.tensor(X.reshape(3, 4).astype("float32"))

        def loss(p, xi):
            return lib.func.functional_call(model, p, (xi,)).pow(2).sum()
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, x)["0.weight"]
    _same(run)


# --- errors, as PyTorch's -----------------------------------------------------------------------------------

def _message(lib, make):
    with pytest.raises(Exception) as info:
        make(lib)
    return type(info.value).__name__, str(info.value)


ERRORS = {
    "inconsistent_sizes": lambda lib: lib.func.vmap(lib.add)(lib.ones(3, 2), lib.ones(4, 2)),
    "in_dims_structure": lambda lib: lib.func.vmap(lib.add, in_dims=(0,))(lib.ones(3), lib.ones(3)),
    "in_dims_nested_structure": lambda lib: lib.func.vmap(lambda p: p[0], in_dims=((0, 0),))((lib.ones(3),)),
    "in_dims_list": lambda lib: lib.func.vmap(lib.add, in_dims=[0, 0])(lib.ones(3), lib.ones(3)),
    "in_dims_none": lambda lib: lib.func.vmap(lib.sin, in_dims=None)(lib.ones(3)),
    "in_dim_not_int": lambda lib: lib.func.vmap(lib.add, in_dims=(0, "a"))(lib.ones(3), lib.ones(3)),
    "in_dim_out_of_range": lambda lib: lib.func.vmap(lib.add, in_dims=(0, 5))(lib.ones(3), lib.ones(3)),
    "in_dim_for_non_tensor": lambda lib: lib.func.vmap(lambda a, b: a, in_dims=(0, 0))(lib.ones(3), 2.0),
    "no_inputs": lambda lib: lib.func.vmap(lib.sin)(),
    "nothing_mapped": lambda lib: lib.func.vmap(lib.sin, in_dims=(None,))(lib.ones(3)),
    "returns_number": lambda lib: lib.func.vmap(lambda a: 1.0)(lib.ones(3)),
    "batched_with_out_dim_none": lambda lib: lib.func.vmap(lambda a: a, out_dims=None)(lib.ones(3)),
    "out_dims_structure": lambda lib: lib.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(lib.ones(3)),
    "out_dims_not_int": lambda lib: lib.func.vmap(lambda a: a, out_dims="a")(lib.ones(3)),
    "item": lambda lib: lib.func.vmap(lambda a: a.item())(lib.ones(3)),
    "backward_method": lambda lib: lib.func.vmap(lambda a: a.sum().backward())(lib.ones(3, 2, requires_grad=True)),
    "autograd_backward": lambda lib: lib.func.vmap(lambda a: lib.autograd.backward(a.sum()))(
        lib.ones(3, 2, requires_grad=True)),
    "is_nonzero": lambda lib: lib.func.vmap(lib.is_nonzero)(lib.ones(3)),
    "control_flow": lambda lib: lib.func.vmap(lambda a: a * 2 if a.sum() > 0 else a)(lib.ones(3, 2)),
    "random_in_error_mode": lambda lib: lib.func.vmap(lambda a: a + lib.randn(2))(lib.ones(3, 2)),
    "random_dropout_in_error_mode": lambda lib: lib.func.vmap(lib.nn.functional.dropout)(lib.ones(3)),
    "bad_randomness": lambda lib: lib.func.vmap(lambda a: a, randomness="bad")(lib.ones(3)),
    "chunk_size_zero": lambda lib: lib.func.vmap(lambda a: a, chunk_size=0)(lib.ones(3)),
    "inplace_into_unbatched_copy": lambda lib: lib.func.vmap(lambda a: lib.zeros(2).copy_(a))(lib.ones(3, 2)),
    "inplace_into_unbatched_mul": lambda lib: lib.func.vmap(lambda a: lib.zeros(2).mul_(a))(lib.ones(3, 2)),
    "inplace_into_unbatched_setitem": lambda lib: lib.func.vmap(lambda a: lib.zeros(2).__setitem__(0, a[0]))(
        lib.ones(3, 2)),
    "data_ptr": lambda lib: lib.func.vmap(lambda a: a.data_ptr())(lib.ones(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    ours, theirs = (_message(lib, ERRORS[name]) for lib in LIBS)
    assert ours == theirs


def test_jacobians_are_vectorized():
    """jacrev and jacfwd run their function once under vmap (plus a plain call for jacrev), not per basis vector."""
    calls = []

    def f(x):
        calls.append(1)
        return x.sin() * x.sum()
    x = gradiente.randn(7)
    for transform, most in ((gradiente.func.jacrev, 2), (gradiente.func.jacfwd, 1)):
        calls.clear()
        transform(f)(x)
        assert len(calls) <= most


# --- autograd.Function under vmap ---------------------------------------------------------------------------

def _functions(lib):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    class Sin(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def vmap(info, in_dims, x):
            return Sin.apply(x), in_dims[0]

    class NoRule(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class OldStyle(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return {"Cube": Cube, "Sin": Sin, "NoRule": NoRule, "OldStyle": OldStyle}


@pytest.mark.parametrize("name", ["Cube", "Sin"])
def test_autograd_function_with_a_vmap_rule_matches_torch(name):
    def run(lib):
        fn = _functions(lib)[name]
        x = lib.tensor(X)
        return (lib.func.vmap(fn.apply)(x), lib.func.vmap(lib.func.grad(lambda a: fn.apply(a).sum()))(x),
                lib.func.vmap(lib.func.vmap(fn.apply))(x.reshape(3, 2, 2)))
    _same(run)


@pytest.mark.parametrize("name", ["NoRule", "OldStyle"])
def test_autograd_function_without_a_vmap_rule_is_refused_as_in_torch(name):
    ours, theirs = (_message(lib, lambda lib: lib.func.vmap(_functions(lib)[name].apply)(lib.tensor(X)))
                    for lib in LIBS)
    assert ours == theirs


def test_vmap_internals_vmap_is_vmap_and_passes_none_through():
    def run(lib):
        x = lib.tensor(X)
        batched = lib._vmap_internals._vmap(lambda a, b: (a * b, None), (0, None), 0,
                                            allow_none_pass_through=True)(x, x[0])
        assert batched[1] is None
        return batched[0], lib._vmap_internals._vmap(lib.sum, 1)(x)
    _same(run)


def test_architecture_doc_lists_the_ops_that_run_per_example():
    import pathlib
    import re
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "architecture.md").read_text()
    listed = re.search(r"<!-- fallback-list -->(.*)<!-- /fallback-list -->", doc, re.S).group(1)
    assert sorted(re.findall(r"`([^`]+)`", listed)) == _dispatch.ops_without_rules()


def test_model_ensembling_and_per_example_jacobians_through_modules_match_torch():
    """The tutorials' patterns: vmap over stacked parameters (stack_module_state), and jacrev of a module's
    output in its parameters for each example (the neural tangent kernel's Jacobians)."""
    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2)) for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]
        x = lib.tensor(X.reshape(3, 4).astype("float32"))

        def ensemble(p, b, xs):
            return lib.func.functional_call(base, (p, b), (xs,))

        def output(p, xi):
            return lib.func.functional_call(base, p, (xi,))
        one = {k: v[0] for k, v in params.items()}
        return (lib.func.vmap(ensemble, in_dims=(0, 0, None))(params, buffers, x),
                lib.func.vmap(lib.func.jacrev(output), in_dims=(None, 0))(one, x)["0.weight"])
    _same(run)


def test_autograd_grad_inside_vmap_equals_the_loop():
    """autograd.grad of batched outputs in batched inputs (PyTorch refuses these: its batched inputs are not in the
    graph); the result equals autograd.grad example by example, second derivatives included."""
    x = gradiente.tensor(X, requires_grad=True)

    def first_and_second(a):
        (g,) = gradiente.autograd.grad((a.sin() * a).sum(), a, create_graph=True)
        return g, gradiente.autograd.grad(g.sum(), a)[0]
    batched = gradiente.func.vmap(first_and_second)(x)
    examples = [first_and_second(x[i]) for i in range(3)]
    for j in range(2):
        np.testing.assert_allclose(_np(batched[j]), np.stack([_np(e[j]) for e in examples]), rtol=1e-12)


# --- layers under vmap: per-sample gradients of a module (the per-sample-grads and ensembling tutorials) ------

def _layer_cases(lib):
    nn = lib.nn
    return {
        "conv1d": (nn.Conv1d(2, 3, 3), (2, 8)), "conv2d": (nn.Conv2d(2, 3, 3), (2, 6, 6)),
        "conv3d": (nn.Conv3d(1, 2, 2), (1, 3, 3, 3)), "conv_transpose2d": (nn.ConvTranspose2d(2, 3, 3), (2, 4, 4)),
        "layer_norm": (nn.LayerNorm(4), (3, 4)), "rms_norm": (nn.RMSNorm(4), (3, 4)),
        "batch_norm_eval": (nn.BatchNorm1d(4).eval(), (4, 3)), "instance_norm": (nn.InstanceNorm1d(2), (2, 5)),
        "group_norm": (nn.GroupNorm(2, 4), (4, 3)), "embedding": (nn.Embedding(10, 3), None),
        "max_pool2d": (nn.MaxPool2d(2), (2, 4, 4)), "avg_pool2d": (nn.AvgPool2d(2), (2, 4, 4)),
        "adaptive_avg_pool2d": (nn.AdaptiveAvgPool2d(1), (2, 4, 4)), "max_pool3d": (nn.MaxPool3d(2), (1, 2, 4, 4)),
        "lp_pool1d": (nn.LPPool1d(2, 2), (2, 4)),
    }


@pytest.mark.parametrize("name", list(_layer_cases(gradiente)))
def test_per_sample_gradients_of_a_layer(name):
    """vmap(grad(...)) over a layer called through functional_call: the layers call nn.functional at each call, as
    PyTorch's do, so that vmap's batching versions are the ones they meet."""
    def per_sample(lib):
        lib.manual_seed(0)
        layer, shape = _layer_cases(lib)[name]
        x = lib.randint(0, 10, (3, 2)) if shape is None else lib.randn(3, *shape)
        params = {k: v.detach() for k, v in layer.named_parameters()}

        def loss(p, xi):
            batched = name in ("batch_norm_eval", "group_norm")       # layers that take only (N, C, ...) input
            return (lib.func.functional_call(layer, p, (xi[None] if batched else xi,)) ** 2).sum()
        if not params:
            return [lib.func.vmap(lambda xi: loss(params, xi))(x)]
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, x)
        return [grads[k] for k in sorted(grads)]

    for ours, theirs in zip(*(per_sample(lib) for lib in (gradiente, torch)), strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5)


def test_functions_bound_before_vmap_started_still_batch():
    """``act = F.gelu`` taken before vmap, or a TransformerEncoderLayer's ``activation=F.relu`` default: the
    function handed a batched tensor passes the call to its batching version (PyTorch's dispatcher does that)."""
    def run(lib):
        lib.manual_seed(0)
        act, squash = lib.nn.functional.gelu, lib.tanh
        x = lib.randn(5, 3, 4)
        layer = lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
        params = {k: v.detach() for k, v in layer.named_parameters()}
        per_sample = lib.func.vmap(lib.func.grad(lambda p, xi: lib.func.functional_call(layer, p, (xi,)).sum()),
                                   in_dims=(None, 0))(params, x)
        return [lib.func.vmap(lambda v: act(v) + squash(v))(x)] + [per_sample[k] for k in sorted(per_sample)]

    for ours, theirs in zip(run(gradiente), run(torch), strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5)
