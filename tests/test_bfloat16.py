"""bfloat16 tensors compared with PyTorch's CPU kernels: storage, conversions, promotion, printing, values bit for
bit on a table of ops (computed in float32 and rounded once, as PyTorch computes them), gradients in bfloat16,
modules cast to bfloat16, and checkpoints of bfloat16 tensors in both formats, read and written by real torch."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")


def _inputs(*shapes, seed=0):
    """float32 arrays, scaled so that the ops' results spread over several binades."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * 3).astype(np.float32) for shape in shapes]


def _bf16(lib, array, requires_grad=False):
    return lib.tensor(array).to(lib.bfloat16).requires_grad_(requires_grad)


def _values(t):
    """A result as float32 values (exact: every bfloat16 is a float32) and its dtype's name."""
    return t.detach().float().numpy(), str(t.dtype).split(".")[-1]


# --- storage, conversions, printing ----------------------------------------------------------------------------

def test_storage_and_conversions():
    for lib in (gradiente, torch):
        t = lib.tensor([1.1, -2.5, 3e38], dtype=lib.bfloat16)
        assert t.dtype is lib.bfloat16 and t.element_size() == 2 and t.is_floating_point()
    g = gradiente.arange(6).reshape(2, 3)
    r = torch.arange(6).reshape(2, 3)
    for convert in (lambda t: t.bfloat16(), lambda t, L=None: t.to(type(t.dtype) and t.bfloat16().dtype),
                    lambda t: t.float().bfloat16().double()):
        assert _values(convert(g))[1] == _values(convert(r))[1]
    # each number is rounded once, to nearest even, from its float32 value (as PyTorch's c10::BFloat16)
    numbers = [1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -30, 70001, -0.0, float("inf"), 3.4e38, 1e-40]
    assert gradiente.tensor(numbers, dtype=gradiente.bfloat16).tolist() == \
        torch.tensor(numbers, dtype=torch.bfloat16).tolist()
    assert gradiente.tensor([2 ** 24 + 1, 2 ** 40 + 2 ** 30 + 1]).bfloat16().tolist() == \
        torch.tensor([2 ** 24 + 1, 2 ** 40 + 2 ** 30 + 1]).bfloat16().tolist()


def test_creation_and_random_numbers_are_torchs():
    def made(lib):
        lib.manual_seed(0)
        b = lib.bfloat16
        x = lib.randn(3, 4).bfloat16()
        return [lib.randn(5, dtype=b), lib.rand(5, dtype=b), lib.randint(0, 10, (3,), dtype=b), lib.zeros(2, dtype=b),
                lib.full((2,), 0.1, dtype=b), lib.arange(0, 1, 0.25, dtype=b), lib.linspace(0, 1, 5, dtype=b),
                lib.eye(2, dtype=b), lib.nn.init.normal_(lib.empty(3, dtype=b)), x.type(), x.new_zeros(2),
                lib.zeros_like(x).dtype, lib.nn.functional.dropout(x, 0.5), x.clone().uniform_(),
                x.max(1), x.argmax(), x.sum(0, dtype=lib.float32), x.to(lib.int32), x.bool(),
                lib.where(x > 0, x, 0.5), x.masked_fill(x > 0, 0.3), x.clamp(min=0.1)]
    ours, theirs = made(gradiente), made(torch)
    assert [repr(v).replace("gradiente.", "torch.") for v in ours] == [repr(v) for v in theirs]


def test_numpy_refuses_bfloat16_as_torch_does():
    for lib in (gradiente, torch):
        t = lib.ones(2, dtype=lib.bfloat16)
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            t.numpy()
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            np.asarray(t)
        assert t.tolist() == [1.0, 1.0] and t[0].item() == 1.0


@pytest.mark.parametrize("values", [
    [1.1, 2.2, -3.3], [1e-3, 300.7, 12.0], [1.0, 2.0, 3.0], [1e20, -1e-20, 0.0], [float("nan"), float("inf"), 1.0],
    [[0.1, 0.25], [1024.5, -7.0]], list(np.linspace(-5, 5, 2000)),
])
def test_printing_is_torchs(values):
    g, r = gradiente.tensor(values, dtype=gradiente.bfloat16), torch.tensor(values, dtype=torch.bfloat16)
    assert repr(g).replace("gradiente.", "torch.") == repr(r)
    gw = g.float().requires_grad_().bfloat16()
    rw = r.float().requires_grad_().bfloat16()
    assert repr(gw).replace("gradiente.", "torch.") == repr(rw)


def test_finfo():
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(gradiente.finfo(gradiente.bfloat16), name) == getattr(torch.finfo(torch.bfloat16), name)


# --- promotion ------------------------------------------------------------------------------------------------

_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
           "complex64", "complex128"]


@pytest.mark.parametrize("other", _DTYPES)
def test_promotion_is_torchs(other):
    g, r = getattr(gradiente, other), getattr(torch, other)
    assert str(gradiente.promote_types(gradiente.bfloat16, g)).split(".")[1] == \
        str(torch.promote_types(torch.bfloat16, r)).split(".")[1]
    for shape in ((2,), ()):        # a dimensioned operand, then a 0-d one (which does not widen its category)
        gs = gradiente.ones(2, dtype=gradiente.bfloat16) + gradiente.ones(shape, dtype=g)
        rs = torch.ones(2, dtype=torch.bfloat16) + torch.ones(shape, dtype=r)
        assert str(gs.dtype).split(".")[1] == str(rs.dtype).split(".")[1]
    for number in (2, 2.5, True):
        assert (gradiente.ones(2, dtype=gradiente.bfloat16) * number).dtype is gradiente.bfloat16
    assert (gradiente.ones(2, dtype=gradiente.bfloat16) * 1j).dtype is gradiente.complex64


# --- values, bit for bit ------------------------------------------------------------------------------------------

F = "nn.functional"


def _f(lib, name):
    module = lib
    for part in name.split("."):
        module = getattr(module, part)
    return module


# Ops whose result equals PyTorch's bit for bit: the op computed in float32 from the bfloat16 inputs and rounded
# once, with PyTorch's rounding of Python numbers (rounded to bfloat16 first for + - and **, used unrounded by * and
# /) and its accumulation (sums and means in float32, var/std in double, products in bfloat16 step by step).
EXACT = {
    "add": lambda L, x, y: x + y, "sub": lambda L, x, y: x - y, "mul": lambda L, x, y: x * y,
    "div": lambda L, x, y: x / y, "add_number": lambda L, x, y: x + 0.3, "rsub_number": lambda L, x, y: 1.7 - x,
    "mul_number": lambda L, x, y: x * 0.1, "div_number": lambda L, x, y: x / 3.3, "pow2": lambda L, x, y: x ** 2,
    "pow_tensor": lambda L, x, y: x.abs() ** y, "neg": lambda L, x, y: -x, "exp": lambda L, x, y: x.exp(),
    "log": lambda L, x, y: x.abs().log(), "sin": lambda L, x, y: x.sin(), "tanh": lambda L, x, y: x.tanh(),
    "sigmoid": lambda L, x, y: x.sigmoid(), "relu": lambda L, x, y: x.relu(), "sqrt": lambda L, x, y: x.abs().sqrt(),
    "silu": lambda L, x, y: _f(L, F).silu(x), "erf": lambda L, x, y: x.erf(), "abs": lambda L, x, y: x.abs(),
    "clamp": lambda L, x, y: x.clamp(-1, 1), "where": lambda L, x, y: L.where(x > 0, x, y),
    "maximum": lambda L, x, y: L.maximum(x, y), "sum": lambda L, x, y: x.sum(), "sum_dim": lambda L, x, y: x.sum(1),
    "mean": lambda L, x, y: x.mean(), "mean_dim": lambda L, x, y: x.mean(0), "max": lambda L, x, y: x.max(),
    "amax": lambda L, x, y: x.amax(1), "prod": lambda L, x, y: (x / 2).prod(1), "var": lambda L, x, y: x.var(1),
    "std": lambda L, x, y: x.std(), "norm": lambda L, x, y: x.norm(), "cumsum": lambda L, x, y: x.cumsum(1),
    "logsumexp": lambda L, x, y: x.logsumexp(1), "softmax": lambda L, x, y: x.softmax(1),
    "log_softmax": lambda L, x, y: x.log_softmax(1), "log_softmax_dim0": lambda L, x, y: x.log_softmax(0),
    "layer_norm": lambda L, x, y: _f(L, F).layer_norm(x, (50,)), "mse_loss": lambda L, x, y: _f(L, F).mse_loss(x, y),
    "cross_entropy": lambda L, x, y: _f(L, F).cross_entropy(x, L.tensor([1, 2, 3, 4])),
    "cat": lambda L, x, y: L.cat([x, y]), "transpose": lambda L, x, y: x.t().contiguous(),
    "slice": lambda L, x, y: x[1:3, ::2], "sort": lambda L, x, y: x.sort(1).values,
    "topk": lambda L, x, y: x.topk(3).values, "lerp": lambda L, x, y: L.lerp(x, y, 0.3),
    "addcmul": lambda L, x, y: L.addcmul(x, x, y, value=0.5), "floor": lambda L, x, y: x.floor(),
    "round": lambda L, x, y: x.round(), "reciprocal": lambda L, x, y: x.reciprocal(),
    "atan2": lambda L, x, y: L.atan2(x, y), "log1p": lambda L, x, y: x.abs().log1p(),
    "expm1": lambda L, x, y: x.expm1(),
}
MATRIX = {
    "mm": lambda L, x, y: x @ y, "linear": lambda L, x, y: _f(L, F).linear(x, y.t()),
    "linear_bias": lambda L, x, y: _f(L, F).linear(x, y.t(), y[0]),
    "bmm": lambda L, x, y: L.bmm(x.reshape(2, 4, 64), y.reshape(1, 64, 16).expand(2, 64, 16)),
    "addmm": lambda L, x, y: L.addmm(x[:, :16], x, y), "mv": lambda L, x, y: x @ y[:, 0],
    "dot": lambda L, x, y: x[0] @ y[:, 0], "einsum": lambda L, x, y: L.einsum("ij,jk->ik", x, y),
    "baddbmm": lambda L, x, y: L.baddbmm(x[:, :16].reshape(2, 4, 16), x.reshape(2, 4, 64),
                                         y.reshape(1, 64, 16).expand(2, 64, 16)),
}
# Ops whose float32 kernels differ from ours in the last float32 bits (PyTorch's vectorized rsqrt and erf), which
# rounding to bfloat16 hides except near a tie, or, for gelu's tail (1 + erf(x/√2) cancels for x < -3), within two
# bfloat16 steps: PyTorch's bfloat16 results are its float32 results rounded, and ours are ours.
FEW_STEPS = {
    "rsqrt": lambda L, x, y: x.abs().rsqrt(), "gelu": lambda L, x, y: _f(L, F).gelu(x),
    "gelu_tanh": lambda L, x, y: _f(L, F).gelu(x, approximate="tanh"),
}


def _compare(op, arrays, exact):
    r = op(torch, *[_bf16(torch, a) for a in arrays])
    g = op(gradiente, *[_bf16(gradiente, a) for a in arrays])
    (rv, rd), (gv, gd) = _values(r), _values(g)
    assert gd == rd and gv.shape == rv.shape
    if exact:
        np.testing.assert_array_equal(gv, rv)
    else:
        np.testing.assert_allclose(gv, rv, rtol=2 ** -6, atol=0)


@pytest.mark.parametrize("name", EXACT)
def test_values_bit_for_bit(name):
    _compare(EXACT[name], _inputs((4, 50), (4, 50)), exact=True)


@pytest.mark.parametrize("name", MATRIX)
def test_matrix_products_bit_for_bit(name):
    _compare(MATRIX[name], _inputs((8, 64), (64, 16), seed=1), exact=True)


@pytest.mark.parametrize("name", FEW_STEPS)
def test_values_within_two_steps(name):
    _compare(FEW_STEPS[name], _inputs((4, 50), (4, 50)), exact=False)


# --- autograd ------------------------------------------------------------------------------------------------

# Backward rules whose PyTorch kernels compute in bfloat16 operation by operation, as our rules do: exact.
EXACT_GRADIENTS = ["add", "sub", "mul", "div", "add_number", "mul_number", "pow2", "exp", "relu", "sum", "sum_dim",
                   "mean", "cat", "slice", "where", "clamp", "abs", "maximum", "transpose"]


def _gradients(op, arrays):
    """The inputs' gradients in torch and in gradiente, from the same upstream gradient (random values, so that
    no rule sees a gradient that makes its result vanish)."""
    out = {}
    for lib in (torch, gradiente):
        leaves = [_bf16(lib, a, requires_grad=True) for a in arrays]
        result = op(lib, *leaves)
        upstream = _inputs(tuple(result.shape), seed=7)[0]
        result.backward(_bf16(lib, upstream))
        out[lib.__name__] = [_values(x.grad) if x.grad is not None else None for x in leaves]
    return out["torch"], out["gradiente"]


@pytest.mark.parametrize("name", EXACT_GRADIENTS)
def test_gradients_bit_for_bit(name):
    for r, g in zip(*_gradients(EXACT[name], _inputs((4, 50), (4, 50)))):
        assert (r is None) == (g is None)
        if r is not None:
            assert g[1] == r[1] == "bfloat16"
            np.testing.assert_array_equal(g[0], r[0])


@pytest.mark.parametrize("name", MATRIX)
def test_matrix_gradients_bit_for_bit(name):
    """(``linear_bias``: the bias's gradient is a row sum, taken in float32 and rounded once, as PyTorch's.)"""
    for r, g in zip(*_gradients(MATRIX[name], _inputs((8, 64), (64, 16), seed=1))):
        assert g[1] == r[1] == "bfloat16"
        np.testing.assert_array_equal(g[0], r[0])


# PyTorch's fused backward kernels (tanh_backward, softmax_backward_data, the layer norm and loss backwards) compute
# in float32 and round once, where our rules take the formula's steps in bfloat16: a few bfloat16 steps apart.
@pytest.mark.parametrize("name", ["tanh", "sigmoid", "silu", "softmax", "log_softmax", "layer_norm",
                                  "mse_loss", "cross_entropy", "var", "std", "gelu"])
def test_gradients_within_bfloat16_tolerance(name):
    op = EXACT.get(name) or FEW_STEPS[name]
    for r, g in zip(*_gradients(op, _inputs((4, 50), (4, 50)))):
        if r is not None:
            assert g[1] == r[1] == "bfloat16"
            scale = np.abs(r[0]).max()
            np.testing.assert_allclose(g[0], r[0], rtol=4 * 2 ** -8, atol=4 * 2 ** -8 * scale)


def test_module_to_bfloat16_trains_like_torch():
    gradiente.manual_seed(0)
    torch.manual_seed(0)
    nets = {}
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        nets[lib.__name__] = net = lib.nn.Sequential(lib.nn.Linear(6, 5), lib.nn.ReLU(), lib.nn.Linear(5, 3))
    # the same float32 weights in both, then cast
    for (_, gp), (_, tp) in zip(nets["gradiente"].named_parameters(), nets["torch"].named_parameters()):
        tp.data = torch.tensor(gp.detach().numpy())
    x = _inputs((4, 6))[0]
    losses = {}
    for lib in (gradiente, torch):
        net = nets[lib.__name__]
        assert net.bfloat16() is net and net.to(lib.bfloat16) is net
        assert all(p.dtype is lib.bfloat16 for p in net.parameters())
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = net(_bf16(lib, x)).square().mean()
            loss.backward()
            opt.step()
        losses[lib.__name__] = repr(loss).replace("gradiente.", "torch.")
        assert all(p.grad.dtype is lib.bfloat16 for p in net.parameters())
    assert losses["gradiente"] == losses["torch"]
    for (_, gp), (_, tp) in zip(nets["gradiente"].named_parameters(), nets["torch"].named_parameters()):
        np.testing.assert_array_equal(gp.detach().float().numpy(), tp.detach().float().numpy())


# --- checkpoints ----------------------------------------------------------------------------------------------------

_CHECKPOINT_VALUES = [1.5, -2.25, 3.1e-3, 1e30, float("inf"), -0.0, 1e-40]


@pytest.mark.parametrize("name", ["w.pt", "w.safetensors"])
def test_bfloat16_checkpoints_round_trip_with_torch(tmp_path, name):
    path = tmp_path / name
    g = gradiente.tensor(_CHECKPOINT_VALUES, dtype=gradiente.bfloat16)
    r = torch.tensor(_CHECKPOINT_VALUES, dtype=torch.bfloat16)
    # ours, read by torch
    gradiente.save({"w": g, "grid": g.reshape(7, 1).expand(7, 3)}, path)
    if name.endswith(".pt"):
        back = torch.load(path)
    else:
        from safetensors.torch import load_file
        back = load_file(path)
    assert back["w"].dtype is torch.bfloat16 and torch.equal(back["w"], r)
    assert torch.equal(back["grid"], r.reshape(7, 1).expand(7, 3))
    # torch's, read by us: bfloat16 stays bfloat16 (it was once widened to float32)
    if name.endswith(".pt"):
        torch.save({"w": r, "view": r[1::2]}, path)
    else:
        from safetensors.torch import save_file
        save_file({"w": r, "view": r[1::2].contiguous()}, path)
    loaded = gradiente.load(path)
    assert loaded["w"].dtype is gradiente.bfloat16
    assert loaded["w"].tolist() == r.tolist() and loaded["view"].tolist() == r[1::2].tolist()
    assert repr(loaded["w"]).replace("gradiente.", "torch.") == repr(r)


def test_ml_dtypes_is_imported_on_first_use_only():
    """``import gradiente`` leaves ml_dtypes unloaded (issue 14's import time); the first bfloat16 tensor, or a
    bfloat16 array handed in from outside, loads it."""
    import subprocess
    import sys
    program = (
        "import sys, numpy as np\n"
        "import gradiente as g\n"
        "assert 'ml_dtypes' not in sys.modules\n"
        "x = g.ones(3) * 2\n"
        "assert 'ml_dtypes' not in sys.modules and x.dtype == g.float32\n"
        "b = x.to(g.bfloat16)\n"
        "assert 'ml_dtypes' in sys.modules and b.dtype == g.bfloat16 and b.tolist() == [2.0, 2.0, 2.0]\n"
        "assert (b + b).dtype == g.bfloat16 and g.finfo(g.bfloat16).eps == 2.0 ** -7\n"
    )
    handed_in = (
        "import numpy as np, ml_dtypes\n"
        "import gradiente as g\n"
        "t = g.from_numpy(np.ones(2, ml_dtypes.bfloat16))\n"
        "assert t.dtype == g.bfloat16 and (t * 3).tolist() == [3.0, 3.0]\n"
    )
    for source in (program, handed_in):
        done = subprocess.run([sys.executable, "-c", source], check=False, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
