"""torch.autocast on the CPU and torch.amp.GradScaler, compared with PyTorch: which ops run in lower precision and
which in float32 (PyTorch's AutocastCPU lists), the graph the casts leave, nesting, the decorator form, the
deprecated spellings and their warnings, the state functions, and loss scaling with its skipped steps."""
import pickle
import threading
import warnings

import numpy as np
import pytest

import gradiente
from gradiente.ops.autocast import POLICIES

torch = pytest.importorskip("torch")

LIBS = (gradiente, torch)


def _name(dtype):
    return str(dtype).split(".")[-1]


def _same(lib_fn):
    """``lib_fn(lib)`` for both libraries, compared as text (gradiente's dtypes printed as torch's)."""
    ours, theirs = (lib_fn(lib) for lib in LIBS)
    assert str(ours).replace("gradiente.", "torch.") == str(theirs)
    return ours


def _data(lib, seed=0):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    w = lib.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    return x, w


# --- which dtype each op computes in --------------------------------------------------------------------------------

def _f(lib):
    return lib.nn.functional


OPS = {
    # lower precision
    "matmul": lambda L, x, w: x @ w.t(), "mm": lambda L, x, w: L.mm(x, w.t()),
    "bmm": lambda L, x, w: L.bmm(x[None], w.t()[None]), "addmm": lambda L, x, w: L.addmm(w[:4, :5], x, w.t()),
    "baddbmm": lambda L, x, w: L.baddbmm(w[None, :4, :5], x[None], w.t()[None]),
    "addbmm": lambda L, x, w: L.addbmm(w[:4, :5], x[None], w.t()[None]),
    "linear": lambda L, x, w: _f(L).linear(x, w, w[:, 0]), "einsum": lambda L, x, w: L.einsum("ij,kj->ik", x, w),
    "conv1d": lambda L, x, w: _f(L).conv1d(x[None], w[:, :4, None]),
    "conv2d": lambda L, x, w: _f(L).conv2d(x[None, None], w[None, None, :2, :2]),
    "conv_transpose1d": lambda L, x, w: _f(L).conv_transpose1d(x[None], w[:4, :, None]),
    "prelu": lambda L, x, w: _f(L).prelu(x, w[0, :1]),
    "sdpa": lambda L, x, w: _f(L).scaled_dot_product_attention(x[None], x[None], x[None]),
    "tensordot": lambda L, x, w: L.tensordot(x, w, ([1], [1])),
    # float32
    "cross_entropy": lambda L, x, w: _f(L).cross_entropy(x.bfloat16(), L.tensor([0, 1, 2, 3])),
    "mse_loss": lambda L, x, w: _f(L).mse_loss(x.bfloat16(), x.bfloat16()),
    "l1_loss": lambda L, x, w: _f(L).l1_loss(x.bfloat16(), x), "nll_loss": lambda L, x, w: _f(L).nll_loss(
        x.bfloat16(), L.tensor([0, 1, 2, 3])),
    "bce_logits": lambda L, x, w: _f(L).binary_cross_entropy_with_logits(x.bfloat16(), x.sigmoid().bfloat16()),
    "kl_div": lambda L, x, w: _f(L).kl_div(x.bfloat16(), x.bfloat16(), reduction="batchmean"),
    "prod": lambda L, x, w: x.bfloat16().prod(), "cdist": lambda L, x, w: L.cdist(x.bfloat16(), w.bfloat16()),
    "trace": lambda L, x, w: L.trace(x.bfloat16()),
    # promote
    "cat": lambda L, x, w: L.cat([x.bfloat16(), x]), "cat_bf16": lambda L, x, w: L.cat([x.bfloat16(), x.bfloat16()]),
    "stack": lambda L, x, w: L.stack([x.bfloat16(), x.double()]),
    # not listed: run on the dtypes they are given
    "add": lambda L, x, w: x.bfloat16() + x, "relu": lambda L, x, w: x.bfloat16().relu(),
    "softmax": lambda L, x, w: x.bfloat16().softmax(1), "sum": lambda L, x, w: x.bfloat16().sum(),
    "dot": lambda L, x, w: L.dot(x[0], w[0]), "mv": lambda L, x, w: L.mv(x, w[0]),
    # never cast: float64 and integers
    "matmul_double": lambda L, x, w: x.double() @ w.double().t(),
    "matmul_long": lambda L, x, w: x.long() @ w.long().t(),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", OPS)
def test_result_dtypes_and_values_follow_torchs_lists(name, dtype):
    results = {}
    for lib in LIBS:
        x, w = _data(lib)
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            try:
                results[lib.__name__] = OPS[name](lib, x, w)
            except RuntimeError as e:       # float16 autocast meeting a bfloat16 tensor in cat: PyTorch's error
                results[lib.__name__] = str(e)
    ours, theirs = results["gradiente"], results["torch"]
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert _name(ours.dtype) == _name(theirs.dtype)
    np.testing.assert_allclose(ours.detach().double().numpy(), theirs.detach().double().numpy(), rtol=2 ** -6,
                               atol=2 ** -6 * float(theirs.detach().double().abs().max()))


def test_every_policy_names_an_op_that_has_the_entry():
    import importlib
    import pkgutil

    import gradiente.ops as ops_package
    from gradiente.ops import nn as nn_ops
    seen = set()
    for package in (ops_package, nn_ops):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name in POLICIES:
                fn = module.__dict__.get(name)
                if callable(fn) and getattr(fn, "__wrapped__", None) is not None:
                    seen.add(name)
    assert seen == set(POLICIES)


def test_linear_under_autocast_prints_and_differentiates_as_torch():
    out = {}
    for lib in LIBS:
        lib.manual_seed(0)
        x, w = _data(lib)
        x.requires_grad_()
        w.requires_grad_()
        with lib.autocast("cpu"):
            y = _f(lib).linear(x, w)
            again = _f(lib).linear(x, w)
            loss = _f(lib).cross_entropy(y, lib.tensor([0, 1, 2, 3]))
        loss.backward()
        edges = [type(n[0]).__name__ for n in y.grad_fn.next_functions]
        # the weight's cast is cached: both uses share one ToCopyBackward0
        cached = again.grad_fn.next_functions[0][0] is y.grad_fn.next_functions[0][0]
        out[lib.__name__] = (repr(y), edges, cached, repr(loss), _name(x.grad.dtype), _name(w.grad.dtype))
        out[lib.__name__ + "grads"] = (x.grad.numpy(), w.grad.numpy())
    assert out["gradiente"][0].replace("gradiente.", "torch.") == out["torch"][0]
    assert out["gradiente"][1:] == out["torch"][1:]
    for ours, theirs in zip(out["gradientegrads"], out["torchgrads"]):
        np.testing.assert_array_equal(ours, theirs)


def test_a_model_trains_under_autocast_as_in_torch():
    losses = {}
    for lib in LIBS:
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.GELU(), lib.nn.Linear(8, 3))
        if lib is torch:     # the same float32 weights
            for p, q in zip(net.parameters(), losses["weights"]):
                p.data = torch.tensor(q)
        else:
            losses["weights"] = [p.detach().numpy().copy() for p in net.parameters()]
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        x, _ = _data(lib, seed=3)
        target = lib.tensor([0, 2, 1, 0])
        history = []
        for _ in range(4):
            opt.zero_grad()
            with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
                logits = net(x)
                loss = _f(lib).cross_entropy(logits, target)
            assert _name(logits.dtype) == "bfloat16" and _name(loss.dtype) == "float32"
            loss.backward()
            opt.step()
            history.append(loss.item())
        losses[lib.__name__] = history
        assert all(_name(p.dtype) == "float32" for p in net.parameters())
    np.testing.assert_allclose(losses["gradiente"], losses["torch"], rtol=1e-2)


# --- the state, nesting, decorator, threads ------------------------------------------------------------------------

def test_state_functions_and_nesting():
    def probe(lib):
        seen = [lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"), lib.is_autocast_enabled(),
                lib.get_autocast_dtype("cuda"), lib.is_autocast_cache_enabled(), lib.amp.is_autocast_available("cpu")]
        x = lib.ones(2, 2)
        with lib.autocast("cpu"):
            seen += [lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(), (x @ x).dtype]
            with lib.autocast("cpu", enabled=False):
                seen += [lib.is_autocast_enabled("cpu"), (x @ x).dtype]
            with lib.autocast("cpu", dtype=lib.float16):
                seen += [lib.get_autocast_dtype("cpu"), (x @ x).dtype]
            with lib.no_grad():
                seen.append((x @ x).dtype)
            seen += [lib.get_autocast_dtype("cpu"), (x @ x).dtype]
        seen += [lib.is_autocast_enabled("cpu"), (x @ x).dtype]
        return seen
    _same(probe)


def test_decorator_and_exceptions_restore_the_state():
    def probe(lib):
        @lib.autocast("cpu")
        def product(a):
            return a @ a

        x = lib.ones(2, 2)
        seen = [product(x).dtype, product.__name__, lib.is_autocast_enabled("cpu")]
        try:
            with lib.autocast("cpu"):
                raise KeyError("inside")
        except KeyError:
            seen.append(lib.is_autocast_enabled("cpu"))
        return seen
    _same(probe)


def test_autocast_is_per_thread():
    def probe(lib):
        seen = []
        with lib.autocast("cpu"):
            thread = threading.Thread(target=lambda: seen.append(lib.is_autocast_enabled("cpu")))
            thread.start()
            thread.join()
            seen.append(lib.is_autocast_enabled("cpu"))
        return seen
    assert _same(probe) == [False, True]


@pytest.mark.parametrize("case", ["device_int", "device_tpu", "device_meta", "not_callable"])
def test_errors_are_torchs(case):
    def make(lib):
        return {"device_int": lambda: lib.autocast(1), "device_tpu": lambda: lib.autocast("tpu"),
                "device_meta": lambda: lib.autocast("meta"), "not_callable": lambda: lib.autocast("cpu")(3)}[case]
    errors = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            make(lib)()
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("case", ["cpu_amp", "cuda_amp", "cuda", "float32"])
def test_deprecated_and_disabled_forms_warn_as_torch(case):
    def probe(lib):
        region = {"cpu_amp": lib.cpu.amp.autocast, "cuda_amp": lib.cuda.amp.autocast,
                  "cuda": lambda: lib.autocast("cuda"), "float32": lambda: lib.autocast("cpu", dtype=lib.float32)}
        manager, caught = _warnings_of(region[case])
        x = lib.ones(2, 2)
        with manager:
            dtype = (x @ x).dtype
        return dtype, caught
    _same(probe)


# --- GradScaler ----------------------------------------------------------------------------------------------------

def _train_with_scaler(lib):
    """Six scaled steps (the third with an inf loss, skipped; the fourth unscaling first to clip), as a record of
    what each step printed."""
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[0.5, -0.25, 1.0], [0.125, 2.0, -1.5]]))
        lin.bias.fill_(0.1)
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    record = [scaler.is_enabled(), scaler.get_scale(), scaler.state_dict()]
    for step in range(6):
        opt.zero_grad()
        with lib.autocast("cpu"):
            loss = lin(x).float().square().mean()
        if step == 2:
            loss = loss * float("inf")
        scaled = scaler.scale(loss)
        scaled.backward()
        if step == 3:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
            record.append(repr(lin.weight.grad))
            with pytest.raises(RuntimeError) as info:
                scaler.unscale_(opt)
            record.append(str(info.value))
        scaler.step(opt)
        with pytest.raises(RuntimeError) as info:
            scaler.step(opt)
        record.append(str(info.value))
        scaler.update()
        record += [repr(scaled), scaler.get_scale(), scaler.state_dict()["_growth_tracker"], repr(lin.weight)]
    return record


def test_grad_scaler_scales_skips_and_updates_as_torch():
    _same(_train_with_scaler)


def test_grad_scaler_state_and_misuse():
    def probe(lib):
        scaler = lib.amp.GradScaler("cpu")
        record = [scaler.state_dict(), repr(scaler.scale([lib.ones(1), (lib.ones(2), lib.ones(1))]))]
        scaler.update(4.0)
        record.append(scaler.get_scale())
        fresh = lib.amp.GradScaler("cpu")
        fresh.load_state_dict(scaler.state_dict())
        record.append(fresh.state_dict())
        record.append(pickle.loads(pickle.dumps(scaler)).state_dict())
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        for bad in (lambda: lib.amp.GradScaler("cpu").step(opt), lambda: lib.amp.GradScaler("cpu").update(),
                    lambda: lib.amp.GradScaler("cpu").unscale_(opt), lambda: lib.amp.GradScaler("cpu", growth_factor=1),
                    lambda: lib.amp.GradScaler("cpu", backoff_factor=1.5),
                    lambda: lib.amp.GradScaler("cpu").load_state_dict({}), lambda: scaler.scale(3),
                    lambda: scaler.step(opt, closure=lambda: 0)):
            try:
                bad()
                record.append("no error")
            except Exception as e:
                record.append((type(e).__name__, str(e)))
        return record
    _same(probe)


def test_half_gradients_are_refused_by_unscale():
    def probe(lib):
        lin = lib.nn.Linear(3, 2).half()
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(lin(lib.ones(1, 3).half()).float().sum()).backward()
        with pytest.raises(ValueError) as info:
            scaler.unscale_(opt)
        return str(info.value)
    _same(probe)


@pytest.mark.parametrize("make", ["cuda_amp", "default_device", "cpu_amp", "disabled"])
def test_scalers_without_cuda_warn_and_disable_as_torch(make):
    def probe(lib):
        factory = {"cuda_amp": lib.cuda.amp.GradScaler, "default_device": lib.amp.GradScaler,
                   "cpu_amp": lib.cpu.amp.GradScaler, "disabled": lambda: lib.amp.GradScaler("cpu",
                                                                                                      enabled=False)}
        scaler, caught = _warnings_of(factory[make])
        caught = [(category, message) for category, message in caught]
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=1.0)
        loss = scaler.scale((w * 3).sum())
        loss.backward()
        scaler.step(opt)
        scaler.update()
        return [caught, scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(), repr(loss), repr(w)]
    _same(probe)


@pytest.mark.parametrize("enabled", [False, True])
def test_warnings_of_listed_ops_name_the_callers_line(enabled):
    """The entry that applies autocast is one more frame between a listed op and its caller: the op's warnings
    still name the caller's line, as PyTorch's do, with autocast on or off."""
    for lib in LIBS:
        with lib.autocast("cpu", enabled=enabled), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _f(lib).mse_loss(lib.ones(3), lib.ones(1, 3))
            _f(lib).kl_div(lib.ones(2, 3), lib.ones(2, 3))
        assert [w.filename for w in caught] == [__file__, __file__], lib.__name__


def test_custom_function_with_custom_fwd_and_bwd():
    def probe(lib):
        class Product(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a @ b

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad @ b.t(), a.t() @ grad

        x = lib.tensor([[1.5, -2.0], [0.25, 3.0]], requires_grad=True)
        with lib.autocast("cpu"):
            y = Product.apply(x, x.bfloat16())       # cast_inputs: computed in float32, autocast off inside
            z = x @ x
        y.sum().backward()
        return [y, z.dtype, x.grad]
    _same(probe)


def test_deprecated_state_functions_warn_as_torch():
    def probe(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = [lib.is_autocast_cpu_enabled(), lib.get_autocast_cpu_dtype(), lib.get_autocast_gpu_dtype()]
        # PyTorch's C++ warnings end with where in its sources they were raised
        return values, [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]
    _same(probe)


def test_bfloat16_as_the_default_dtype():
    def probe(lib):
        lib.set_default_dtype(lib.bfloat16)
        try:
            return [lib.tensor([1.1, 2.5]), lib.get_default_dtype(), lib.ones(2) * 0.3, lib.arange(3) * 1.5,
                    lib.tensor([1.5], dtype=lib.float32), lib.nn.Linear(2, 2).weight.dtype]
        finally:
            lib.set_default_dtype(lib.float32)
    _same(probe)
