"""Adafactor, SparseAdam and swa_utils (AveragedModel, SWALR, update_bn, the averaging functions) against
PyTorch: the same seed, weights and gradients in both libraries, then parameters, state, learning rates,
state_dict keys and error messages compared.

Adafactor's norms are summed by NumPy, whose float32 order differs from PyTorch's kernel in the last bit
now and then, so its trajectories are compared to a relative 1e-5 rather than bit for bit.
"""
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

LIBS = (gradiente, torch)


def close(a, b, rtol=1e-6, atol=1e-7):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def check_same_error(fn):
    """``fn(lib)`` raises in PyTorch; gradiente raises the same type with the same message."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gradiente)
    assert str(got.value).replace("gradiente.", "torch.") == str(expected.value)


def both(fn):
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib))
    return out


# --- Adafactor --------------------------------------------------------------------------------------------------

ADAFACTOR_CONFIGS = [
    {},
    {"lr": 0.05, "weight_decay": 0.1},
    {"maximize": True},
    {"eps": (1e-30, 1e-3), "d": 2.0, "beta2_decay": -0.5},
    {"lr": 1e-3},
]


@pytest.mark.parametrize("config", ADAFACTOR_CONFIGS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adafactor_steps_match_torch(config, dtype):
    shapes = [(5, 3), (7,), (2, 4, 3)]

    def run(lib):
        params = [lib.randn(*s, dtype=getattr(lib, dtype), requires_grad=True) for s in shapes]
        opt = lib.optim.Adafactor(params, **config)
        history = []
        for _ in range(8):
            opt.zero_grad()
            loss = sum((p.sin() * p).sum() for p in params)
            loss.backward()
            opt.step()
            history.append([p.detach().clone() for p in params])
        sd = opt.state_dict()
        return history, {k: list(v) for k, v in sd["state"].items()}, sd["param_groups"], opt.state[params[0]]
    g, t = both(run)
    for step_g, step_t in zip(g[0], t[0]):
        for a, b in zip(step_g, step_t):
            close(a, b, rtol=1e-5, atol=1e-6)
    assert g[1] == t[1]
    assert g[2] == t[2]
    for key in ("step", "row_var", "col_var"):
        close(g[3][key], t[3][key], rtol=1e-5, atol=1e-7)
        assert str(g[3][key].dtype)[-7:] == str(t[3][key].dtype)[-7:]


def test_adafactor_trains_a_linear_layer_like_torch():
    def run(lib):
        m = lib.nn.Linear(4, 3)
        opt = lib.optim.Adafactor(m.parameters(), weight_decay=0.01)
        for _ in range(10):
            opt.zero_grad()
            m(lib.randn(8, 4)).pow(2).sum().backward()
            opt.step()
        return m.weight, m.bias, repr(opt)
    g, t = both(run)
    close(g[0], t[0], rtol=1e-5)
    close(g[1], t[1], rtol=1e-5)
    assert g[2] == t[2]


@pytest.mark.parametrize("kwargs", [{"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)}, {"eps": (None, -1.0)},
                                    {"d": 0.5}, {"weight_decay": -0.1}])
def test_adafactor_argument_errors(kwargs):
    check_same_error(lambda lib: lib.optim.Adafactor([lib.ones(2, requires_grad=True)], **kwargs))


def test_adafactor_complex_error():
    def run(lib):
        p = lib.ones(2, dtype=lib.complex64, requires_grad=True)
        p.grad = lib.ones(2, dtype=lib.complex64)
        lib.optim.Adafactor([p]).step()
    check_same_error(run)


# --- SparseAdam -------------------------------------------------------------------------------------------------

def test_sparse_adam_dense_gradient_error():
    def run(lib):
        p = lib.ones(3, requires_grad=True)
        p.sum().backward()
        lib.optim.SparseAdam([p]).step()
    check_same_error(run)


@pytest.mark.parametrize("kwargs", [{"lr": 0.0}, {"eps": 0.0}, {"betas": (1.0, 0.9)}, {"betas": (0.9, -0.1)}])
def test_sparse_adam_argument_errors(kwargs):
    check_same_error(lambda lib: lib.optim.SparseAdam([lib.ones(2, requires_grad=True)], **kwargs))


def test_sparse_adam_complex_params_error_and_no_grad_step():
    check_same_error(lambda lib: lib.optim.SparseAdam([lib.ones(2, requires_grad=True),
                                                       lib.ones(2, dtype=lib.complex64, requires_grad=True)]))

    def run(lib):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        return opt.step(lambda: 3.0), p, repr(opt)
    g, t = both(run)
    assert g[0] == t[0] == 3.0
    close(g[1], t[1])
    assert g[2] == t[2]


# --- swa_utils --------------------------------------------------------------------------------------------------

def _train(lib, model, averaged, steps=4, scheduler=None):
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        model(lib.randn(6, 3)).pow(2).sum().backward()
        opt.step()
        for a in averaged:
            a.update_parameters(model)
    return opt


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "swa_multi", "swa_fn", "ema_buffers"])
def test_averaged_model_matches_torch(kind):
    def run(lib):
        S = lib.optim.swa_utils
        model = _net(lib)
        kwargs = {"swa": {}, "ema_multi": {"multi_avg_fn": S.get_ema_multi_avg_fn(0.9)},
                  "ema": {"avg_fn": S.get_ema_avg_fn(0.8)}, "swa_multi": {"multi_avg_fn": S.get_swa_multi_avg_fn()},
                  "swa_fn": {"avg_fn": S.get_swa_avg_fn()},
                  "ema_buffers": {"multi_avg_fn": S.get_ema_multi_avg_fn(0.7), "use_buffers": True}}[kind]
        averaged = S.AveragedModel(model, **kwargs)
        _train(lib, model, [averaged])
        x = lib.randn(5, 3)
        averaged.eval()
        return (list(averaged.state_dict()), [p.detach().clone() for p in averaged.parameters()],
                [b.detach().clone() for b in averaged.buffers()], averaged(x), repr(averaged),
                averaged.n_averaged)
    g, t = both(run)
    assert g[0] == t[0]
    for a, b in zip(g[1] + g[2] + [g[3]], t[1] + t[2] + [t[3]]):
        close(a, b, rtol=1e-5, atol=1e-6)
    assert g[4] == t[4]
    assert g[5].item() == t[5].item() == 4 and str(g[5].dtype)[-5:] == str(t[5].dtype)[-5:]


def test_averaged_model_errors_and_decay_errors():
    check_same_error(lambda lib: lib.optim.swa_utils.AveragedModel(
        lib.nn.Linear(2, 2), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()))
    check_same_error(lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(1.5))
    check_same_error(lambda lib: lib.optim.swa_utils.get_ema_avg_fn(-0.1))


def test_integer_parameters_average_like_torch():
    def run(lib):
        S = lib.optim.swa_utils
        c, d = [lib.tensor([10, 20])], [lib.tensor([14, 25])]
        S.get_ema_multi_avg_fn(0.75)(c, d, 1)
        e, f = [lib.tensor([10.0, 20.0])], [lib.tensor([14.0, 25.0])]
        S.get_ema_multi_avg_fn(0.75)(e, f, 0)
        return c[0], e[0]
    g, t = both(run)
    check_same_error(lambda lib: lib.optim.swa_utils.get_swa_multi_avg_fn()([lib.tensor([10, 20])],
                                                                             [lib.tensor([14, 25])], lib.tensor(1)))
    # An integer mean with a Python count: PyTorch refuses a float alpha on integers; so does gradiente's add_,
    # in its own words (its add_ message is not this file's to change).
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.optim.swa_utils.get_swa_multi_avg_fn()([lib.tensor([10, 20])], [lib.tensor([14, 25])], 1)
    for a, b in zip(g, t):
        close(a, b)
        assert str(a.dtype)[-5:] == str(b.dtype)[-5:]


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 3), ("cos", 0), ("linear", 1)])
def test_swalr_matches_torch(strategy, epochs):
    def run(lib):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.ones(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=epochs, anneal_strategy=strategy)
        lrs = [sched.get_last_lr()]
        for _ in range(6):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        sd = sched.state_dict()
        fresh = lib.optim.swa_utils.SWALR(opt, swa_lr=0.2, anneal_strategy="linear")
        fresh.load_state_dict(sd)
        return lrs, sorted(sd), fresh.anneal_func(0.5), [g["swa_lr"] for g in opt.param_groups]
    g, t = both(run)
    np.testing.assert_allclose(np.array(g[0]), np.array(t[0]), rtol=1e-15)
    assert g[1:] == t[1:]


def test_swalr_errors_and_get_lr_warning():
    def opt(lib):
        return lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
    check_same_error(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), 0.1, anneal_strategy="exp"))
    check_same_error(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), 0.1, anneal_epochs=-1))
    check_same_error(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), 0.1, anneal_epochs=1.5))
    check_same_error(lambda lib: lib.optim.swa_utils.SWALR(opt(lib), [0.1, 0.2]))
    for lib in LIBS:
        with pytest.warns(UserWarning, match="please use `get_last_lr"):
            lib.optim.swa_utils.SWALR(opt(lib), 0.1).get_lr()


def test_update_bn_matches_torch():
    def run(lib):
        model = _net(lib)
        _train(lib, model, [])
        model.eval()
        momentum = model[1].momentum
        loader = [(lib.randn(4, 3), lib.zeros(4)) for _ in range(3)] + [lib.randn(2, 3)]
        lib.optim.swa_utils.update_bn(loader, model)
        return (model[1].running_mean, model[1].running_var, model[1].num_batches_tracked, model.training,
                model[1].momentum == momentum)
    g, t = both(run)
    for a, b in zip(g[:3], t[:3]):
        close(a, b, rtol=1e-5)
    assert g[3:] == t[3:] == (False, True)

    def no_bn(lib):
        m = lib.nn.Linear(2, 2)
        lib.optim.swa_utils.update_bn([lib.ones(1, 2)], m)
        return m.weight
    g, t = both(no_bn)
    close(g, t)


def test_optim_all_names():
    for name in ("Adafactor", "SparseAdam", "swa_utils", "Muon", "swap_in_optimizer_params_and_state"):
        assert name in gradiente.optim.__all__ and name in torch.optim.__all__
    assert sorted(gradiente.optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)


# --- Muon -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", [{}, {"lr": 0.02, "nesterov": False}, {"adjust_lr_fn": "match_rms_adamw"},
                                    {"momentum": 0.8, "weight_decay": 0.0, "ns_steps": 3}])
@pytest.mark.parametrize("shape", [(6, 4), (3, 5)])
def test_muon_steps_match_torch(config, shape):
    def run(lib):
        m = lib.nn.Linear(shape[1], shape[0], bias=False)
        opt = lib.optim.Muon(m.parameters(), **config)
        history = []
        for _ in range(5):
            opt.zero_grad()
            m(lib.randn(8, shape[1])).pow(2).sum().backward()
            opt.step()
            history.append(m.weight.detach().clone())
        return history, opt.state[m.weight]["momentum_buffer"], repr(opt), list(opt.state_dict()["state"][0])
    g, t = both(run)
    for a, b in zip(g[0], t[0]):
        close(a, b, rtol=1e-5, atol=1e-6)
    close(g[1], t[1], rtol=1e-5, atol=1e-6)
    assert g[2:] == t[2:]


def test_newton_schulz_is_torchs_bit_for_bit():
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs

    from gradiente.optim.muon import _zeropower_via_newtonschulz as ours
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    for shape_x in (x, x.T.copy()):
        a = ours(gradiente.tensor(shape_x), (3.4445, -4.775, 2.0315), 5, 1e-7)
        b = theirs(torch.tensor(shape_x), (3.4445, -4.775, 2.0315), 5, 1e-7)
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())
        assert str(a.dtype) == str(b.dtype).replace("torch", "gradiente")


@pytest.mark.parametrize("kwargs", [{"lr": -1.0}, {"momentum": -0.5}, {"weight_decay": -1.0},
                                    {"adjust_lr_fn": "other"}])
def test_muon_argument_errors(kwargs):
    check_same_error(lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], **kwargs))


def test_muon_rejects_non_matrices_and_bad_iterations():
    check_same_error(lambda lib: lib.optim.Muon([lib.ones(3, requires_grad=True)]))

    def too_many_steps(lib):
        p = lib.ones(2, 2, requires_grad=True)
        p.grad = lib.ones(2, 2)
        lib.optim.Muon([p], ns_steps=100).step()
    check_same_error(too_many_steps)


# --- swap_in_optimizer_params_and_state ---------------------------------------------------------------------------

def test_swap_in_optimizer_params_and_state_matches_torch():
    def run(lib):
        model = lib.nn.Linear(3, 2)
        opt = lib.optim.Adam(model.parameters(), lr=0.1)
        model(lib.randn(4, 3)).sum().backward()
        opt.step()
        live_params = [p.detach().clone() for p in model.parameters()]
        params_list = opt.param_groups[0]["params"]
        other = {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}
        for p in other.values():
            p.grad = lib.ones_like(p)
        osd = opt.state_dict()
        osd = {"state": {k: {kk: vv.clone() for kk, vv in v.items()} for k, v in osd["state"].items()},
               "param_groups": [dict(g, lr=0.5) for g in osd["param_groups"]]}
        with lib.optim.swap_in_optimizer_params_and_state(opt, other, osd):
            inside_lr = opt.param_groups[0]["lr"]
            opt.step()
        return (live_params, [p.detach() for p in model.parameters()], list(other.values()),
                osd["state"][0]["exp_avg"], inside_lr, opt.param_groups[0]["lr"],
                opt.param_groups[0]["params"] is params_list, osd["state"][0]["step"])
    g, t = both(run)
    for a, b in zip(g[0] + g[1] + g[2], t[0] + t[1] + t[2]):
        close(a, b, rtol=1e-6)
    for a, b in zip(g[0], g[1]):
        close(a, b, rtol=0, atol=0)
    close(g[3], t[3])
    assert g[4:7] == t[4:7] == (0.5, 0.1, True)
    close(g[7], t[7])


def test_swap_in_optimizer_params_and_state_errors():
    def fresh(lib):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        return p, opt

    def uninitialized(lib):
        p, opt = fresh(lib)
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, opt.state_dict()):
            pass
    check_same_error(uninitialized)

    def stepped(lib):
        p, opt = fresh(lib)
        p.grad = lib.ones(2)
        opt.step()
        return p, opt

    def extra_key(lib):
        p, opt = stepped(lib)
        osd = opt.state_dict()
        osd["state"][7] = {}
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, osd):
            pass
    check_same_error(extra_key)

    def wrong_keys(lib):
        p, opt = stepped(lib)
        osd = opt.state_dict()
        osd["param_groups"][0]["new"] = 1
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, osd):
            pass
    check_same_error(wrong_keys)

    def not_a_dict(lib):
        p, opt = stepped(lib)
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, [1]):
            pass
    check_same_error(not_a_dict)

    def too_few(lib):
        _p, opt = stepped(lib)
        with lib.optim.swap_in_optimizer_params_and_state(opt, {}, opt.state_dict()):
            pass
    check_same_error(too_few)
