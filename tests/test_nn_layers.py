"""Every layer against PyTorch: the same weights (PyTorch's, loaded with ``load_state_dict``) and inputs give
the same outputs, input gradients and parameter gradients, with a non-trivial upstream gradient; in
float64 (tight) and in float32 (as models are trained)."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")


def randn(rng, *shape):
    return rng.standard_normal(shape)


def ints(high):
    def make(rng, *shape):
        return rng.randint(0, high, size=shape).astype(np.int64)
    return make


def probs(rng, *shape):
    return rng.uniform(0.05, 0.95, shape)


def unit(rng, *shape):
    return rng.uniform(0, 1, shape)


def log_probs(rng, *shape):
    x = rng.standard_normal(shape)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


# (id, constructor taking the nn module, inputs as (maker, shape)); a loss module gets (input, target)
LAYERS = [
    ("linear", lambda nn: nn.Linear(4, 3), [(randn, (2, 5, 4))]),
    ("linear_nobias", lambda nn: nn.Linear(4, 3, bias=False), [(randn, (6, 4))]),
    ("bilinear", lambda nn: nn.Bilinear(3, 4, 2), [(randn, (5, 3)), (randn, (5, 4))]),
    ("identity", lambda nn: nn.Identity(7, foo=1), [(randn, (3, 4))]),
    ("flatten", lambda nn: nn.Flatten(), [(randn, (2, 3, 4, 5))]),
    ("flatten_all", lambda nn: nn.Flatten(0, -1), [(randn, (2, 3, 4))]),
    ("unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [(randn, (4, 6))]),
    ("relu", lambda nn: nn.ReLU(), [(randn, (3, 5))]),
    ("leaky_relu", lambda nn: nn.LeakyReLU(0.2), [(randn, (3, 5))]),
    ("sigmoid", lambda nn: nn.Sigmoid(), [(randn, (3, 5))]),
    ("tanh", lambda nn: nn.Tanh(), [(randn, (3, 5))]),
    ("gelu", lambda nn: nn.GELU(), [(randn, (3, 5))]),
    ("gelu_tanh", lambda nn: nn.GELU("tanh"), [(randn, (3, 5))]),
    ("silu", lambda nn: nn.SiLU(), [(randn, (3, 5))]),
    ("elu", lambda nn: nn.ELU(0.5), [(randn, (3, 5))]),
    ("celu", lambda nn: nn.CELU(0.7), [(randn, (3, 5))]),
    ("selu", lambda nn: nn.SELU(), [(randn, (3, 5))]),
    ("softplus", lambda nn: nn.Softplus(2.0, 1.0), [(randn, (3, 5))]),
    ("relu6", lambda nn: nn.ReLU6(), [(lambda rng, *s: 8 * rng.standard_normal(s), (3, 5))]),
    ("hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.5), [(randn, (3, 5))]),
    ("mish", lambda nn: nn.Mish(), [(randn, (3, 5))]),
    ("hardsigmoid", lambda nn: nn.Hardsigmoid(), [(lambda rng, *s: 4 * rng.standard_normal(s), (3, 5))]),
    ("hardswish", lambda nn: nn.Hardswish(), [(lambda rng, *s: 4 * rng.standard_normal(s), (3, 5))]),
    ("logsigmoid", lambda nn: nn.LogSigmoid(), [(randn, (3, 5))]),
    ("softsign", lambda nn: nn.Softsign(), [(randn, (3, 5))]),
    ("tanhshrink", lambda nn: nn.Tanhshrink(), [(randn, (3, 5))]),
    ("threshold", lambda nn: nn.Threshold(0.1, 20.0), [(randn, (3, 5))]),
    ("softmax", lambda nn: nn.Softmax(dim=1), [(randn, (3, 5))]),
    ("softmin", lambda nn: nn.Softmin(dim=0), [(randn, (3, 5))]),
    ("log_softmax", lambda nn: nn.LogSoftmax(dim=-1), [(randn, (2, 3, 5))]),
    ("dropout_eval", lambda nn: nn.Dropout(0.3).eval(), [(randn, (3, 5))]),
    ("embedding", lambda nn: nn.Embedding(10, 4), [(ints(10), (3, 5))]),
    ("embedding_padding", lambda nn: nn.Embedding(10, 4, padding_idx=1), [(ints(4), (3, 5))]),
    ("embedding_freq", lambda nn: nn.Embedding(6, 3, scale_grad_by_freq=True), [(ints(3), (4, 5))]),
    ("embedding_max_norm", lambda nn: nn.Embedding(6, 3, max_norm=0.5), [(ints(6), (7,))]),
    ("layer_norm", lambda nn: nn.LayerNorm(4), [(randn, (2, 3, 4))]),
    ("layer_norm_2d_no_affine", lambda nn: nn.LayerNorm((3, 4), elementwise_affine=False), [(randn, (2, 3, 4))]),
    ("layer_norm_no_bias", lambda nn: nn.LayerNorm(4, bias=False), [(randn, (5, 4))]),
    ("group_norm", lambda nn: nn.GroupNorm(2, 4), [(randn, (3, 4, 5))]),
    ("batch_norm1d", lambda nn: nn.BatchNorm1d(4), [(randn, (8, 4))]),
    ("batch_norm1d_3d", lambda nn: nn.BatchNorm1d(4, momentum=None), [(randn, (6, 4, 5))]),
    ("batch_norm1d_eval", lambda nn: nn.BatchNorm1d(4).eval(), [(randn, (8, 4))]),
    ("batch_norm1d_no_affine", lambda nn: nn.BatchNorm1d(4, affine=False), [(randn, (8, 4))]),
    ("batch_norm2d", lambda nn: nn.BatchNorm2d(3), [(randn, (4, 3, 5, 5))]),
    ("conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), [(randn, (2, 3, 11))]),
    ("conv1d_unbatched", lambda nn: nn.Conv1d(3, 4, 2, dilation=2), [(randn, (3, 9))]),
    ("conv2d", lambda nn: nn.Conv2d(3, 4, 3, padding=1), [(randn, (2, 3, 7, 6))]),
    ("conv2d_groups", lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), dilation=2, groups=2, bias=False),
     [(randn, (2, 4, 9, 8))]),
    ("conv2d_same", lambda nn: nn.Conv2d(2, 3, 4, padding="same"), [(randn, (2, 2, 6, 5))]),
    ("conv2d_reflect", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), [(randn, (2, 2, 6, 5))]),
    ("conv2d_circular", lambda nn: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="circular"),
     [(randn, (2, 2, 6, 5))]),
    ("conv1d_circular", lambda nn: nn.Conv1d(2, 3, 3, padding=1, padding_mode="circular"), [(randn, (2, 2, 7))]),
    ("zero_pad2d", lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), [(randn, (2, 3, 4, 5))]),
    ("constant_pad1d", lambda nn: nn.ConstantPad1d(2, -1.5), [(randn, (3, 4))]),
    ("constant_pad3d", lambda nn: nn.ConstantPad3d((1, 0, 0, 1, 1, 1), 2.0), [(randn, (1, 2, 2, 3, 2))]),
    ("reflection_pad2d", lambda nn: nn.ReflectionPad2d((2, 1, 1, 0)), [(randn, (2, 3, 4, 5))]),
    ("replication_pad1d", lambda nn: nn.ReplicationPad1d(3), [(randn, (2, 3, 4))]),
    ("replication_pad3d", lambda nn: nn.ReplicationPad3d(1), [(randn, (2, 2, 3, 2))]),
    ("circular_pad1d", lambda nn: nn.CircularPad1d((2, 1)), [(randn, (2, 3, 4))]),
    ("circular_pad2d", lambda nn: nn.CircularPad2d(1), [(randn, (3, 4, 5))]),
    ("circular_pad3d", lambda nn: nn.CircularPad3d((1, 0, 2, 1, 0, 1)), [(randn, (1, 2, 3, 3, 2))]),
    ("max_pool2d", lambda nn: nn.MaxPool2d(2), [(randn, (2, 3, 8, 8))]),
    ("max_pool2d_ceil", lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), [(randn, (2, 3, 9, 8))]),
    ("max_pool2d_dilated", lambda nn: nn.MaxPool2d((3, 2), stride=1, dilation=2), [(randn, (3, 9, 8))]),
    ("max_pool1d", lambda nn: nn.MaxPool1d(3, 2), [(randn, (2, 3, 10))]),
    ("avg_pool2d", lambda nn: nn.AvgPool2d(2), [(randn, (2, 3, 8, 8))]),
    ("avg_pool2d_pad", lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
     [(randn, (2, 3, 9, 8))]),
    ("avg_pool2d_divisor", lambda nn: nn.AvgPool2d(3, 2, 1, divisor_override=4), [(randn, (2, 3, 9, 8))]),
    ("avg_pool1d", lambda nn: nn.AvgPool1d(3, 2, 1), [(randn, (2, 3, 10))]),
    ("adaptive_avg_pool2d", lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [(randn, (2, 3, 7, 8))]),
    ("adaptive_avg_pool2d_none", lambda nn: nn.AdaptiveAvgPool2d((None, 5)), [(randn, (2, 3, 7, 8))]),
    ("adaptive_avg_pool1d", lambda nn: nn.AdaptiveAvgPool1d(3), [(randn, (2, 3, 8))]),
    ("adaptive_avg_pool2d_to_1", lambda nn: nn.AdaptiveAvgPool2d((1, 1)), [(randn, (2, 3, 7, 8))]),
    ("adaptive_avg_pool1d_to_1", lambda nn: nn.AdaptiveAvgPool1d(1), [(randn, (2, 3, 8))]),
    ("conv2d_unbatched", lambda nn: nn.Conv2d(3, 2, 3, padding=1), [(randn, (3, 6, 5))]),
    ("sequential", lambda nn: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), [(randn, (5, 4))]),
    ("cnn", lambda nn: nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                     nn.Linear(4 * 3 * 3, 3)), [(randn, (2, 1, 8, 8))]),
]

LOSSES = [
    ("mse", lambda nn, r: nn.MSELoss(reduction=r), [(randn, (3, 4)), (randn, (3, 4))]),
    ("l1", lambda nn, r: nn.L1Loss(reduction=r), [(randn, (3, 4)), (randn, (3, 4))]),
    ("huber", lambda nn, r: nn.HuberLoss(reduction=r, delta=0.5), [(randn, (3, 4)), (randn, (3, 4))]),
    ("smooth_l1", lambda nn, r: nn.SmoothL1Loss(reduction=r, beta=0.5), [(randn, (3, 4)), (randn, (3, 4))]),
    ("bce", lambda nn, r: nn.BCELoss(reduction=r), [(probs, (3, 4)), (unit, (3, 4))]),
    ("bce_weight", lambda nn, r: nn.BCELoss(weight=nn._w(4), reduction=r), [(probs, (3, 4)), (unit, (3, 4))]),
    ("bce_logits", lambda nn, r: nn.BCEWithLogitsLoss(reduction=r, pos_weight=nn._w(4)),
     [(randn, (3, 4)), (unit, (3, 4))]),
    ("nll", lambda nn, r: nn.NLLLoss(reduction=r), [(log_probs, (5, 4)), (ints(4), (5,))]),
    ("nll_weight_ignore", lambda nn, r: nn.NLLLoss(weight=nn._w(4), ignore_index=2, reduction=r),
     [(log_probs, (6, 4)), (ints(4), (6,))]),
    ("cross_entropy", lambda nn, r: nn.CrossEntropyLoss(reduction=r), [(randn, (5, 4)), (ints(4), (5,))]),
    ("cross_entropy_smooth", lambda nn, r: nn.CrossEntropyLoss(weight=nn._w(4), label_smoothing=0.1, reduction=r),
     [(randn, (5, 4)), (ints(4), (5,))]),
    ("kl_div", lambda nn, r: nn.KLDivLoss(reduction=r if r != "mean" else "batchmean"),
     [(log_probs, (3, 4)), (unit, (3, 4))]),
]


def _weights(lib):
    """A fixed weight vector for weighted losses, in the module namespace of ``lib``."""
    return lambda n: lib.tensor(np.linspace(0.5, 1.5, n))


def _to_gradiente(t):
    return gradiente.from_numpy(t.detach().numpy().copy())


def _pair(ctor):
    torch.manual_seed(0)
    t_mod = ctor(torch.nn)
    g_mod = ctor(gradiente.nn)
    g_mod.load_state_dict({k: _to_gradiente(v) for k, v in t_mod.state_dict().items()})
    return g_mod, t_mod


def _run(g_mod, t_mod, inputs, dtype, rng):
    arrays = [make(rng, *shape) for make, shape in inputs]
    if dtype == "float64":
        g_mod.double()
        t_mod.double()
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]
    g_in = [gradiente.from_numpy(a.copy()).requires_grad_(a.dtype.kind == "f") for a in arrays]
    t_in = [torch.from_numpy(a.copy()).requires_grad_(a.dtype.kind == "f") for a in arrays]
    g_out, t_out = g_mod(*g_in), t_mod(*t_in)
    upstream = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
    (g_out * gradiente.from_numpy(upstream)).sum().backward()
    (t_out * torch.from_numpy(upstream)).sum().backward()
    return g_in, t_in, g_out, t_out


def _check(g_mod, t_mod, g_in, t_in, g_out, t_out, rtol, atol):
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol)
    for g, t in zip(g_in, t_in):
        if t.requires_grad:
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    t_params = dict(t_mod.named_parameters())
    g_params = dict(g_mod.named_parameters())
    assert list(g_params) == list(t_params)
    for name, tp in t_params.items():
        if tp.grad is None:
            assert g_params[name].grad is None, name
        else:
            np.testing.assert_allclose(g_params[name].grad.numpy(), tp.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=name)
    for (name, gb), (_, tb) in zip(g_mod.named_buffers(), t_mod.named_buffers()):
        np.testing.assert_allclose(gb.numpy(), tb.numpy(), rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,ctor,inputs", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_matches_torch(name, ctor, inputs, dtype):
    rng = np.random.RandomState(sum(map(ord, name)))
    g_mod, t_mod = _pair(ctor)
    results = _run(g_mod, t_mod, inputs, dtype, rng)
    tol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 2e-6)
    _check(g_mod, t_mod, *results, *tol)
    assert type(results[2].grad_fn).__name__ == type(results[3].grad_fn).__name__


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,ctor,inputs", LOSSES, ids=[row[0] for row in LOSSES])
def test_loss_matches_torch(name, ctor, inputs, reduction):
    rng = np.random.RandomState(sum(map(ord, name)))
    torch.nn._w = _weights(torch)
    gradiente.nn._w = _weights(gradiente)
    try:
        g_mod, t_mod = ctor(gradiente.nn, reduction), ctor(torch.nn, reduction)
    finally:
        del torch.nn._w, gradiente.nn._w
    arrays = [make(rng, *shape) for make, shape in inputs]
    g_in = [gradiente.from_numpy(a.copy()).requires_grad_(i == 0) for i, a in enumerate(arrays)]
    t_in = [torch.from_numpy(a.copy()).requires_grad_(i == 0) for i, a in enumerate(arrays)]
    g_out, t_out = g_mod(*g_in), t_mod(*t_in)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    upstream = rng.standard_normal(tuple(t_out.shape))
    (g_out * gradiente.from_numpy(upstream)).sum().backward()
    (t_out * torch.from_numpy(upstream)).sum().backward()
    np.testing.assert_allclose(g_in[0].grad.numpy(), t_in[0].grad.numpy(), rtol=1e-10, atol=1e-12)
    assert repr(g_mod) == repr(t_mod)


def test_batch_norm_running_statistics_over_steps():
    """Running mean/var and num_batches_tracked follow PyTorch over several training steps, then eval uses them."""
    g_mod, t_mod = _pair(lambda nn: nn.BatchNorm1d(3))
    rng = np.random.RandomState(0)
    for _ in range(4):
        x = rng.standard_normal((5, 3)).astype(np.float32) * 3 + 1
        g_mod(gradiente.from_numpy(x))
        t_mod(torch.from_numpy(x))
    for (name, gb), (_, tb) in zip(g_mod.named_buffers(), t_mod.named_buffers()):
        np.testing.assert_allclose(gb.numpy(), tb.numpy(), rtol=1e-6, err_msg=name)
    g_mod.eval()
    t_mod.eval()
    x = rng.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(g_mod(gradiente.from_numpy(x)).detach().numpy(),
                               t_mod(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_max_pool_indices_match_torch():
    x = np.random.RandomState(3).standard_normal((2, 3, 9, 8))
    _, g_idx = gradiente.nn.MaxPool2d(3, 2, 1, return_indices=True)(gradiente.from_numpy(x))
    _, t_idx = torch.nn.MaxPool2d(3, 2, 1, return_indices=True)(torch.from_numpy(x))
    assert np.array_equal(g_idx.numpy(), t_idx.numpy())
    assert g_idx.dtype is gradiente.int64


@pytest.mark.parametrize("nans", [0, 20])
@pytest.mark.parametrize("args", [(2,), (3, 1, 1), (3, 2, 1)])
def test_max_pool_ties_and_nans_pick_pytorchs_element(args, nans):
    # After a ReLU many windows hold equal maxima (zeros); PyTorch takes the first. A NaN wins its window,
    # and of several NaNs the last one does. Values, indices and the gradient's destination must agree.
    rng = np.random.RandomState(7)
    x = np.maximum(rng.standard_normal((2, 3, 8, 8)), 0).round(1)
    x.flat[rng.choice(x.size, nans, replace=False)] = np.nan
    upstream = None
    results = []
    for lib in (gradiente, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out, idx = lib.nn.functional.max_pool2d(t, *args, return_indices=True)
        if upstream is None:
            upstream = rng.standard_normal(tuple(out.shape))
        out.backward(lib.from_numpy(upstream))
        results.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    (g_out, g_idx, g_grad), (t_out, t_idx, t_grad) = results
    np.testing.assert_array_equal(g_out, t_out)
    np.testing.assert_array_equal(g_idx, t_idx)
    np.testing.assert_array_equal(g_grad, t_grad)


@pytest.mark.parametrize("call,message", [
    (lambda nn, lib: nn.Conv2d(3, 4, 3)(lib.zeros(1, 2, 5, 5)),
     ("Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, 5, 5] to have 3 channels, but got 2 "
      "channels instead")),
    (lambda nn, lib: nn.Conv2d(1, 1, 5)(lib.zeros(1, 1, 3, 3)),
     ("Calculated padded input size per channel: (3 x 3). Kernel size: (5 x 5). Kernel size can't be greater "
      "than actual input size")),
    (lambda nn, lib: nn.MaxPool2d(3, padding=2)(lib.zeros(1, 1, 5, 5)),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"),
    (lambda nn, lib: nn.Embedding(3, 2)(lib.tensor([3])), "index out of range in self"),
    (lambda nn, lib: nn.BatchNorm1d(2)(lib.zeros(1, 2)),
     "Expected more than 1 value per channel when training, got input size "),
    (lambda nn, lib: nn.CircularPad2d(1)(lib.zeros(5)), "expected 3D or 4D input (got 1D input)"),
    (lambda nn, lib: nn.ReflectionPad2d(1)(lib.zeros(5)),
     "Padding length should be less than or equal to two times the input dimension but got padding length 4 "
     "and input of dimension 1"),
])
def test_errors_worded_as_torch(call, message):
    for nn, lib in ((torch.nn, torch), (gradiente.nn, gradiente)):
        with pytest.raises((RuntimeError, ValueError, IndexError)) as info:
            call(nn, lib)
        assert message in str(info.value)


def test_conv_layer_differentiates_twice_as_torch():
    """The gradient of a Conv2d layer's input-gradient norm by its weight (tests/test_nn_conv_double_backward.py
    has the rest)."""
    results = []
    for nn, lib in ((torch.nn, torch), (gradiente.nn, gradiente)):
        conv = nn.Conv2d(2, 3, 3, padding=1).double()
        with lib.no_grad():
            for p, values in zip(conv.parameters(), (np.linspace(-1, 1, 54).reshape(3, 2, 3, 3), np.ones(3))):
                p.copy_(lib.from_numpy(values))
        x = lib.from_numpy(np.linspace(-2, 2, 32).reshape(1, 2, 4, 4)).requires_grad_()
        (dx,) = lib.autograd.grad((conv(x) ** 2).sum(), x, create_graph=True)
        results.append(lib.autograd.grad((dx ** 2).sum(), conv.weight)[0].numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


_LOOKUPS = {
    "uniform": lambda rng: rng.randint(0, 5000, 2048),
    "zipf": lambda rng: np.minimum(rng.zipf(1.3, 2048), 4999),          # a few very frequent tokens
    "few rows": lambda rng: rng.randint(0, 7, 3000),
    "small": lambda rng: rng.randint(0, 50, 37),
}


@pytest.mark.parametrize("lookups", sorted(_LOOKUPS))
def test_scatter_add_of_rows_has_np_add_at_bits(lookups):
    """core/scatter.py's add_rows_at (rounds of distinct indices, then add.at) sums as np.add.at does."""
    from gradiente.core.scatter import add_rows_at
    rng = np.random.RandomState(0)
    idx = _LOOKUPS[lookups](rng).astype(np.int64)
    vocab = int(idx.max()) + 3
    rows = (rng.standard_normal((idx.size, 24)) * 10.0 ** rng.randint(-6, 6, (idx.size, 1))).astype(np.float32)
    want = np.zeros((vocab, 24), np.float32)
    np.add.at(want, idx, rows)
    np.testing.assert_array_equal(add_rows_at(np.zeros((vocab, 24), np.float32), idx, rows), want)


@pytest.mark.parametrize("lookups", sorted(_LOOKUPS))
def test_embedding_and_row_indexing_gradients_match_torch(lookups):
    """gradiente sums each row's lookups in lookup order (np.add.at's bits, as before core/scatter.py), in the
    embedding backward and in that of ``weight[idx]``. So does PyTorch when rows repeat a few times, bit for bit;
    rows looked up hundreds of times it sums in another order, so there the agreement is to float32 rounding."""
    rng = np.random.RandomState(0)
    idx = _LOOKUPS[lookups](rng).astype(np.int64).reshape(-1, 1)
    weight = rng.standard_normal((5000, 16)).astype(np.float32)
    upstream = (rng.standard_normal((idx.size, 1, 16)) * 10.0 ** rng.randint(-4, 4, (idx.size, 1, 1))).astype(
        np.float32)
    grads = []
    for lib in (gradiente, torch):
        w = lib.tensor(weight, requires_grad=True)
        lib.nn.functional.embedding(lib.from_numpy(idx), w).backward(lib.from_numpy(upstream))
        v = lib.tensor(weight, requires_grad=True)
        v[lib.from_numpy(idx[:, 0] - 5000 * (idx[:, 0] % 2))].backward(lib.from_numpy(upstream[:, 0]))
        grads.append((w.grad.numpy(), v.grad.numpy()))
    (ours, ours_indexed), (theirs, theirs_indexed) = grads
    if lookups in ("uniform", "small"):
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-3)
    # weight[idx]'s backward: np.add.at's bits (as before); PyTorch's index_put_ sorts the lookups, wrapped
    # negative indices included, so it sums repeats in another order
    want = np.zeros_like(weight)
    np.add.at(want, idx[:, 0], upstream[:, 0])
    np.testing.assert_array_equal(ours_indexed, want)
    np.testing.assert_allclose(ours_indexed, theirs_indexed, rtol=1e-4, atol=1e-3)


def test_avg_pool1d_of_a_permuted_input_is_contiguous():
    """Issue 13, found by tests/test_adversarial.py: avg_pool1d's result kept the transposed layout of the 2-D
    pool it runs on; PyTorch's is contiguous."""
    outs = [lib.nn.functional.avg_pool1d(lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1), 2)
            for lib in (gradiente, torch)]
    assert outs[0].stride() == outs[1].stride() and outs[0].tolist() == outs[1].tolist()
