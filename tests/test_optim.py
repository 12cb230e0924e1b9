"""Optimizers and schedulers against PyTorch: the same initial weights and the same gradients give the same
parameters after 50 steps (bit for bit where no square root is involved, PyTorch's float32 sqrt being
MKL's and not correctly rounded; to a few float32 ulps otherwise); state dicts, groups, hooks, schedules."""
import math
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

SHAPES = [(5, 3), (7,), (4, 4, 2)]

CONFIGS = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.05, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.01}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.01, "initial_accumulator_value": 0.1,
                 "maximize": True}),
]


def _gradient(p, target, k):
    """A deterministic gradient of the current values (the same function in both libraries)."""
    return (2 * (p - target) + np.float32(0.3) * np.cos(p * np.float32(k))).astype(np.float32)


def _trajectories(name, kwargs, steps=50):
    rng = np.random.RandomState(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    targets = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    g_params = [gradiente.nn.Parameter(gradiente.from_numpy(a.copy())) for a in init]
    t_params = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in init]

    def groups(ps):
        return [{"params": ps[:2]}, {"params": ps[2:], "lr": kwargs["lr"] / 2}]

    g_opt = getattr(gradiente.optim, name)(groups(g_params), **kwargs)
    t_opt = getattr(torch.optim, name)(groups(t_params), **kwargs)
    for _ in range(steps):
        for k, (g, t, target) in enumerate(zip(g_params, t_params, targets)):
            g.grad = gradiente.from_numpy(_gradient(g.detach().numpy(), target, k + 1))
            t.grad = torch.from_numpy(_gradient(t.detach().numpy(), target, k + 1))
        g_opt.step()
        t_opt.step()
    return g_params, t_params, g_opt, t_opt


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_fifty_steps_match_torch(name, kwargs):
    g_params, t_params, g_opt, t_opt = _trajectories(name, kwargs)
    for g, t in zip(g_params, t_params):
        if name == "SGD":
            assert np.array_equal(g.detach().numpy(), t.detach().numpy())
        else:
            np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=2e-6, atol=5e-7)
    g_state, t_state = g_opt.state_dict(), t_opt.state_dict()
    assert g_state["param_groups"] == t_state["param_groups"]
    assert list(g_state["state"]) == list(t_state["state"])
    for key, t_entry in t_state["state"].items():
        assert list(g_state["state"][key]) == list(t_entry)
        for field, value in t_entry.items():
            np.testing.assert_allclose(g_state["state"][key][field].numpy(), value.numpy(), rtol=2e-5, atol=1e-6)
    assert repr(g_opt) == repr(t_opt)


def test_state_dict_round_trip_resumes_identically():
    g_params, _, g_opt, _ = _trajectories("Adam", {"lr": 0.01, "amsgrad": True}, steps=5)
    saved = g_opt.state_dict()
    copies = [gradiente.nn.Parameter(p.detach().clone()) for p in g_params]
    resumed = gradiente.optim.Adam([{"params": copies[:2]}, {"params": copies[2:]}], lr=0.5)
    resumed.load_state_dict(saved)
    assert resumed.param_groups[1]["lr"] == 0.005 and resumed.param_groups[0]["params"][0] is copies[0]
    for opt, params in ((g_opt, g_params), (resumed, copies)):
        for p in params:
            p.grad = gradiente.ones_like(p)
        opt.step()
    for a, b in zip(g_params, copies):
        assert a.tolist() == b.tolist()
    assert resumed.state[copies[0]]["exp_avg"] is not saved["state"][0]["exp_avg"]


def test_load_state_dict_from_torch_optimizer():
    _, t_params, _, t_opt = _trajectories("SGD", {"lr": 0.05, "momentum": 0.9}, steps=3)
    state = t_opt.state_dict()
    converted = {"param_groups": state["param_groups"],
                 "state": {k: {f: gradiente.from_numpy(v.numpy().copy()) for f, v in s.items()}
                           for k, s in state["state"].items()}}
    params = [gradiente.nn.Parameter(gradiente.from_numpy(p.detach().numpy().copy())) for p in t_params]
    opt = gradiente.optim.SGD([{"params": params[:2]}, {"params": params[2:]}], lr=1.0)
    opt.load_state_dict(converted)
    for g, t in zip(params, t_params):
        g.grad = gradiente.ones_like(g)
        t.grad = torch.ones_like(t)
    opt.step()
    t_opt.step()
    for g, t in zip(params, t_params):
        assert np.array_equal(g.detach().numpy(), t.detach().numpy())


def test_zero_grad_groups_and_errors():
    a = gradiente.nn.Parameter(gradiente.ones(2))
    b = gradiente.nn.Parameter(gradiente.ones(2))
    opt = gradiente.optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.2, "momentum": 0.5})
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["dampening"] == 0
    (a * b).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        gradiente.optim.Adam([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        gradiente.optim.SGD([a * 2])
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        gradiente.optim.SGD([a], nesterov=True)
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an iterable"):
        gradiente.optim.SGD(a)


def test_step_with_closure_and_hooks():
    w = gradiente.nn.Parameter(gradiente.tensor([1.0, -2.0]))
    opt = gradiente.optim.SGD([w], lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    handle = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert loss.item() == 5.0 and w.tolist() == pytest.approx([0.8, -1.6]) and calls == ["pre", "post"]
    handle.remove()
    opt.step(closure)
    assert calls == ["pre", "post", "pre"]


SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 6, "eta_min": 0.001}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 1 / (epoch + 1)}),
    ("MultiplicativeLR", {"lr_lambda": lambda epoch: 0.95}),
    ("LinearLR", {"start_factor": 0.25, "total_iters": 4}),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_schedulers_match_torch(name, kwargs):
    def run(lib):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.3}], lr=0.1)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        lrs = []
        for _ in range(14):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs
    assert run(gradiente) == run(torch)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85]

    def run(lib):
        opt = lib.optim.Adam([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1, min_lr=0.01)
        out = []
        for m in metrics:
            sched.step(m)
            out.append(sched.get_last_lr())
        return out
    assert run(gradiente) == run(torch)


def test_scheduler_warns_when_stepped_before_optimizer():
    opt = gradiente.optim.SGD([gradiente.nn.Parameter(gradiente.zeros(1))], lr=0.1)
    sched = gradiente.optim.lr_scheduler.StepLR(opt, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step()
    assert any("Detected call of `lr_scheduler.step()` before `optimizer.step()`" in str(w.message) for w in caught)
    assert math.isclose(opt.param_groups[0]["lr"], 0.01)


def test_training_a_model_follows_torch():
    """End to end: the same MLP, data and SGD with momentum give the same weights after 50 steps."""
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 16), lib.nn.Tanh(), lib.nn.Linear(16, 3))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = lib.randn(32, 4)
        y = lib.randint(0, 3, (32,))
        for _ in range(50):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        return [p.detach().numpy().copy() for p in model.parameters()], loss.item()
    (g_params, g_loss), (t_params, t_loss) = run(gradiente), run(torch)
    for g, t in zip(g_params, t_params):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)
    assert g_loss == pytest.approx(t_loss, rel=1e-4)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type):
    rng = np.random.RandomState(1)
    grads = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]

    def run(lib):
        params = [lib.nn.Parameter(lib.zeros(*g.shape)) for g in grads]
        for p, g in zip(params, grads):
            p.grad = lib.from_numpy(g.copy())
        total = lib.nn.utils.clip_grad_norm_(params, max_norm=1.5, norm_type=norm_type)
        lib.nn.utils.clip_grad_value_(params[:1], 0.1)
        return total.item(), [p.grad.numpy().copy() for p in params]
    (g_total, g_grads), (t_total, t_grads) = run(gradiente), run(torch)
    assert g_total == pytest.approx(t_total, rel=1e-6)
    for g, t in zip(g_grads, t_grads):
        np.testing.assert_allclose(g, t, rtol=1e-6, atol=1e-7)


BIG = 200_003       # more than three of the float32 fma's blocks, and not a multiple of one


@pytest.mark.parametrize("kwargs", [{"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01},
                                    {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}])
def test_sgd_on_a_large_tensor_matches_torch_bit_for_bit(kwargs):
    """The float32 fused multiply-adds on a tensor of many blocks round as PyTorch's, element by element."""
    rng = np.random.RandomState(0)
    init = rng.standard_normal(BIG).astype(np.float32)
    grads = [rng.standard_normal(BIG).astype(np.float32) for _ in range(4)]
    params = []
    for lib in (gradiente, torch):
        p = lib.nn.Parameter(lib.from_numpy(init.copy()))
        opt = lib.optim.SGD([p], lr=0.0123, **kwargs)
        for g in grads:
            p.grad = lib.from_numpy(g.copy())
            opt.step()
        params.append((p.detach().numpy(), opt.state[p]["momentum_buffer"].numpy()))
    for ours, theirs in zip(*params):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name,kwargs", [("Adam", {}), ("AdamW", {}), ("Adam", {"weight_decay": 0.1, "amsgrad": True})])
def test_adam_moments_on_a_large_tensor_match_torch_bit_for_bit(name, kwargs):
    """Adam's moments are lerp and addcmul (fused multiply-adds): bit for bit PyTorch's; the parameters go through
    float32 sqrt, which PyTorch does not round correctly, so they agree to an ulp or so."""
    rng = np.random.RandomState(0)
    init = rng.standard_normal(BIG).astype(np.float32)
    grads = [rng.standard_normal(BIG).astype(np.float32) for _ in range(4)]
    results = []
    for lib in (gradiente, torch):
        p = lib.nn.Parameter(lib.from_numpy(init.copy()))
        opt = getattr(lib.optim, name)([p], lr=0.01, **kwargs)
        for g in grads:
            p.grad = lib.from_numpy(g.copy())
            opt.step()
        state = opt.state[p]
        results.append((p.detach().numpy(), state["exp_avg"].numpy(), state["exp_avg_sq"].numpy()))
    (p, m, v), (tp, tm, tv) = results
    if kwargs.get("weight_decay", 0) == 0 or name == "AdamW":
        np.testing.assert_array_equal(m, tm)        # (coupled weight decay feeds the parameters, and sqrt, back)
        np.testing.assert_array_equal(v, tv)
    np.testing.assert_allclose(p, tp, rtol=1e-6, atol=1e-7)


def test_blocked_float32_fma_rounds_as_the_whole_array_computation():
    """optim._kernels' fma in blocks gives the bits of x·y + z computed in float64 at once and rounded to float32:
    with a number on either side of the product, two arrays, its output aliasing an operand, a ragged last block."""
    from gradiente.optim import _kernels as K
    rng = np.random.RandomState(0)
    x, y, z = (rng.standard_normal(BIG).astype(np.float32) * 10.0 ** rng.randint(-8, 8, BIG) for _ in range(3))
    x, y, z = (v.astype(np.float32) for v in (x, y, z))
    s = np.float32(-0.0123)

    def reference(a, b, c):
        return (np.multiply(a, b, dtype=np.float64) + c).astype(np.float32)

    np.testing.assert_array_equal(K.fma(x, s, z, np.empty_like(x)), reference(x, s, z))
    np.testing.assert_array_equal(K.fma(s, x, z, np.empty_like(x)), reference(s, x, z))
    np.testing.assert_array_equal(K.fma(x, y, s, np.empty_like(x)), reference(x, y, s))
    aliased = z.copy()
    np.testing.assert_array_equal(K.fma(x, y, aliased, aliased), reference(x, y, z))
    np.testing.assert_array_equal(aliased, reference(x, y, z))
    grid = x.reshape(-1)[:BIG - 3].reshape(100, -1)
    np.testing.assert_array_equal(K.fma(grid, s, grid.T.T, np.empty_like(grid)), reference(grid, s, grid))


def test_the_matrix_vector_fma_is_trusted_only_where_it_rounds_once():
    """``array · number + array`` goes through BLAS's gemv when this machine's BLAS fuses (checked once, on numbers
    where fusing changes the result); either way the bits are those of one rounding, aliasing included."""
    from gradiente.optim import _kernels as K
    rng = np.random.RandomState(1)
    x, z = (rng.standard_normal(BIG).astype(np.float32) for _ in range(2))
    s = np.float32(0.1)
    exact = (np.multiply(x, s, dtype=np.float64) + z).astype(np.float32)
    a = np.float32(1 + 2.0 ** -12)
    once = np.full(K._BLAS_MIN, np.float64(a) * np.float64(a) - 1, np.float32)     # exact in float64
    if K._blas_fuses():
        out = np.empty(K._BLAS_MIN, np.float32)
        K._fma_by_gemv(np.full(K._BLAS_MIN, a, np.float32), a, np.full(K._BLAS_MIN, -1, np.float32), out)
        np.testing.assert_array_equal(out, once)
    for target in ("x", "z"):
        xs, zs = x.copy(), z.copy()
        out = xs if target == "x" else zs
        np.testing.assert_array_equal(K.fma(xs, s, zs, out), exact)
        np.testing.assert_array_equal(out, exact)
