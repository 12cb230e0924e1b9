"""The rest of the convolution family against PyTorch: transposed and 3-D convolution, adaptive max pooling, max
unpooling, instance / local-response / RMS normalization, pdist, embedding_bag, channel_shuffle and
scaled_dot_product_attention, and their layers.

The op table drives float64 gradcheck, the differential comparison with PyTorch (float32 and float64, grad_fn
names, contiguous and strided inputs) and second derivatives where the rules are written on recorded tensors.
Then what a table cannot show: the layers (PyTorch's weights loaded, outputs and every gradient compared),
their initialization and reprs, running statistics, indices, errors word for word, and which attention path
records which node."""
import math

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests
from test_nn_layers import _check, _pair, _run, ints, randn

import gradiente

torch = pytest.importorskip("torch")


def F(lib):
    return lib.nn.functional


# --- input makers -----------------------------------------------------------------------------------------------

def unpool_inputs(out_hw):
    """Pooled values ``(N, C, h, w)``, then for each plane distinct flat positions in an ``out_hw`` plane."""
    def make(rng, shapes):
        x = rng.uniform(-2, 2, shapes[0])
        planes = int(np.prod(shapes[0][:-2]))
        per_plane = int(np.prod(shapes[0][-2:]))
        idx = np.stack([rng.permutation(out_hw[0] * out_hw[1])[:per_plane] for _ in range(planes)])
        return [x, idx.reshape(shapes[0]).astype(np.int64)]
    return make


def unpool1d_inputs(length):
    def make(rng, shapes):
        x = rng.uniform(-2, 2, shapes[0])
        idx = np.stack([rng.permutation(length)[:shapes[0][-1]] for _ in range(int(np.prod(shapes[0][:-1])))])
        return [x, idx.reshape(shapes[0]).astype(np.int64)]
    return make


def spread_rows(rng, shapes):
    """Rows far enough apart that no coordinate difference is near 0 (pdist's kinks)."""
    n, m = shapes[0]
    return [rng.permutation(n * m).reshape(n, m) * 0.37 + rng.uniform(-0.1, 0.1, (n, m))]


def attention_mask(rng, shapes):
    return [rng.uniform(-1, 1, s) for s in shapes[:-1]] + [rng.uniform(-2, 2, shapes[-1])]


BAG_INDEX = [1, 2, 4, 5, 4, 3, 2, 9, 0, 1]
BAG_OFFSETS = [0, 2, 2, 5, 9]


def bag(mode, **kwargs):
    """embedding_bag of a fixed index list (empty bag included) over the weight, then any per-sample weights."""
    def fn(lib, weight, *rest):
        offsets = BAG_OFFSETS + [len(BAG_INDEX)] if kwargs.get("include_last_offset") else BAG_OFFSETS
        return F(lib).embedding_bag(lib.tensor(BAG_INDEX), weight, lib.tensor(offsets), mode=mode,
                                    per_sample_weights=rest[0] if rest else None, **kwargs)
    return fn


def dropped_attention(lib, q, k, v):
    lib.manual_seed(3)
    return F(lib).scaled_dot_product_attention(q, k, v, dropout_p=0.3)


# --- the op table -----------------------------------------------------------------------------------------------

def sdpa(**kwargs):
    return lambda lib, q, k, v, *mask: F(lib).scaled_dot_product_attention(
        q, k, v, attn_mask=mask[0] if mask else None, **kwargs)


QKV4 = [((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5))]
QKV3 = [((3, 4, 5), (3, 6, 5), (3, 6, 7))]

# rules written on recorded tensors: second derivatives too
SPECS = [
    OpSpec("max_unpool2d", lambda lib, x, i: F(lib).max_unpool2d(x, i, 2), [((2, 3, 3, 4), ())],
           make_inputs=unpool_inputs((6, 8))),
    OpSpec("max_unpool2d_output_size", lambda lib, x, i: F(lib).max_unpool2d(x, i, 3, 2, 1, output_size=(6, 7)),
           [((3, 3, 4), ())], make_inputs=unpool_inputs((6, 7))),
    OpSpec("max_unpool1d", lambda lib, x, i: F(lib).max_unpool1d(x, i, 3, 2), [((2, 3, 4), ())],
           make_inputs=unpool1d_inputs(9)),
    OpSpec("rms_norm", lambda lib, x: F(lib).rms_norm(x, (4,)), [((3, 4),), ((2, 3, 4),)]),
    OpSpec("rms_norm_weight_eps", lambda lib, x, w: F(lib).rms_norm(x, (3, 4), w, eps=1e-3),
           [((2, 3, 4), (3, 4))]),
    OpSpec("local_response_norm_4d", lambda lib, x: F(lib).local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0),
           [((2, 5, 4, 3),)]),
    OpSpec("local_response_norm_5d", lambda lib, x: F(lib).local_response_norm(x, 3, alpha=0.2),
           [((2, 5, 3, 2, 2),)]),
    OpSpec("channel_shuffle", lambda lib, x: F(lib).channel_shuffle(x, 2), [((2, 6, 3),), ((2, 6, 3, 2),)]),
    OpSpec("sdpa_math_3d", sdpa(), QKV3),
    OpSpec("sdpa_math_3d_causal_scale", sdpa(is_causal=True, scale=0.7), QKV3),
    OpSpec("sdpa_math_2d", sdpa(), [((4, 5), (6, 5), (6, 5))]),
    OpSpec("sdpa_math_mask_grad", sdpa(), [QKV4[0] + ((4, 6),)], make_inputs=attention_mask),
    OpSpec("sdpa_math_gqa_3d", sdpa(enable_gqa=True), [((4, 4, 5), (2, 6, 5), (2, 6, 5))]),
    OpSpec("sdpa_math_dropout", dropped_attention, QKV4),
]

# transposed and 3-D convolutions, adaptive max pooling: second derivatives too (ConvolutionBackwardBackward0,
# AdaptiveMaxPool2DBackwardBackward0)
SPECS += [
    OpSpec("conv_transpose2d", lambda lib, x, w: F(lib).conv_transpose2d(x, w), [((2, 4, 5, 6), (4, 3, 3, 2))]),
    OpSpec("conv_transpose2d_all_args",
           lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2,
                                                        dilation=(2, 1)),
           [((2, 4, 5, 6), (4, 3, 3, 2), (6,))]),
    OpSpec("conv_transpose2d_unbatched",
           lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=(2, 3), padding=(0, 2), output_padding=(1, 2)),
           [((3, 5, 6), (3, 2, 3, 4), (2,))]),
    OpSpec("conv_transpose1d",
           lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
           [((2, 3, 7), (3, 2, 4), (2,))]),
    OpSpec("conv_transpose1d_groups_unbatched", lambda lib, x, w: F(lib).conv_transpose1d(x, w, groups=3, dilation=2),
           [((6, 7), (6, 1, 3))]),
    OpSpec("conv_transpose2d_weight_only", lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=2),
           [((1, 2, 3, 3), (2, 2, 2, 2))], grad_inputs=[1]),
    OpSpec("conv3d", lambda lib, x, w, b: F(lib).conv3d(x, w, b), [((2, 4, 4, 5, 4), (3, 4, 2, 3, 2), (3,))]),
    OpSpec("conv3d_all_args",
           lambda lib, x, w, b: F(lib).conv3d(x, w, b, stride=(2, 1, 2), padding=(1, 0, 2), dilation=(1, 2, 1),
                                              groups=2),
           [((2, 4, 5, 6, 5), (4, 2, 2, 3, 2), (4,))]),
    OpSpec("conv3d_same_unbatched", lambda lib, x, w: F(lib).conv3d(x, w, padding="same"),
           [((2, 4, 5, 4), (3, 2, 3, 3, 3))]),
    OpSpec("adaptive_max_pool2d", lambda lib, x: F(lib).adaptive_max_pool2d(x, (3, 4), return_indices=True),
           [((2, 3, 7, 9),), ((3, 7, 9),)]),
    OpSpec("adaptive_max_pool2d_none_and_up", lambda lib, x: F(lib).adaptive_max_pool2d(x, (None, 11)),
           [((2, 3, 5, 7),)]),
    OpSpec("adaptive_max_pool1d", lambda lib, x: F(lib).adaptive_max_pool1d(x, 4), [((2, 3, 9),), ((3, 10),)]),
]

# rules on arrays only: first derivatives
FIRST_ORDER = [
    OpSpec("instance_norm", lambda lib, x: F(lib).instance_norm(x), [((2, 3, 5),), ((2, 3, 4, 5),)]),
    OpSpec("instance_norm_affine", lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
           [((2, 3, 4, 5), (3,), (3,))]),
    OpSpec("local_response_norm_3d", lambda lib, x: F(lib).local_response_norm(x, 3), [((2, 5, 4),)]),
    OpSpec("sdpa_flash", sdpa(), QKV4),
    OpSpec("sdpa_flash_causal_scale", sdpa(is_causal=True, scale=0.3), QKV4),
    OpSpec("sdpa_flash_negative_scale", sdpa(scale=-0.3), QKV4),
    OpSpec("sdpa_flash_float_mask", lambda lib, q, k, v, m: sdpa()(lib, q, k, v, m.detach()),
           [QKV4[0] + ((4, 6),)], grad_inputs=[0, 1, 2], make_inputs=attention_mask),
    OpSpec("sdpa_flash_bool_mask", lambda lib, q, k, v, m: sdpa()(lib, q, k, v, m > 0.5),
           [QKV4[0] + ((2, 1, 4, 6),)], grad_inputs=[0, 1, 2], make_inputs=attention_mask),
    OpSpec("sdpa_flash_gqa", sdpa(enable_gqa=True), [((2, 4, 4, 5), (2, 2, 6, 5), (2, 2, 6, 5))]),
]
FIRST_ORDER += [OpSpec(f"pdist_p{p}", lambda lib, x, p=p: F(lib).pdist(x, p), [((5, 3),), ((1, 3),)],
                       make_inputs=spread_rows) for p in (2, 1, 0.5, 1.5, 3, 0, math.inf)]
FIRST_ORDER += [OpSpec(f"embedding_bag_{mode}", bag(mode), [((10, 3),)]) for mode in ("sum", "mean", "max")]
FIRST_ORDER += [OpSpec(f"embedding_bag_{mode}_padding", bag(mode, padding_idx=2), [((10, 3),)])
                for mode in ("sum", "mean", "max")]
FIRST_ORDER += [
    OpSpec("embedding_bag_last_offset", bag("mean", include_last_offset=True), [((10, 3),)]),
    OpSpec("embedding_bag_per_sample_weights", bag("sum", padding_idx=4), [((10, 3), (10,))]),
    OpSpec("embedding_bag_2d_max", lambda lib, w: F(lib).embedding_bag(lib.tensor([[1, 2, 3], [4, 4, 0]]), w,
                                                                        mode="max"), [((10, 3),)]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)
test_gradcheck_first_order, test_against_torch_first_order, _ = spec_tests(FIRST_ORDER)


def test_first_order_rules_refuse_a_double_backward():
    x = gradiente.randn(5, 3, requires_grad=True)
    y = F(gradiente).pdist(x).sum()
    with pytest.raises(RuntimeError, match="create_graph"):
        gradiente.autograd.grad(y, x, create_graph=True)


def test_transposed_convolution_is_the_adjoint_of_convolution():
    """<conv(x), y> = <x, conv_transpose(y)> for the same weight and arguments."""
    rng = np.random.RandomState(0)
    x, w, y = (gradiente.from_numpy(rng.standard_normal(s)) for s in ((2, 4, 9, 8), (6, 2, 3, 2), (2, 6, 5, 4)))
    args = {"stride": 2, "padding": 1, "dilation": (1, 2), "groups": 2}
    left = (F(gradiente).conv2d(x, w, **args) * y).sum().item()
    right = (x * F(gradiente).conv_transpose2d(y, w, output_padding=(0, 1), **args)).sum().item()
    assert math.isclose(left, right, rel_tol=1e-12)


# --- layers -----------------------------------------------------------------------------------------------------

def bag_offsets(rng, n):
    """Where each of ``n`` bags of 12 entries starts: sorted, from 0, some bags empty."""
    return np.concatenate([[0], np.sort(rng.randint(0, 12, size=n - 1))]).astype(np.int64)


def pooled_indices(rng, *shape):
    """Valid, distinct max-unpool indices for a 2x2 pool of an image twice the shape."""
    return unpool_inputs((2 * shape[-2], 2 * shape[-1]))(rng, [shape])[1]


LAYERS = [
    ("conv_transpose2d", lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                                       dilation=2), [(randn, (2, 4, 5, 6))]),
    ("conv_transpose2d_nobias", lambda nn: nn.ConvTranspose2d(3, 2, (2, 3), bias=False), [(randn, (3, 4, 5))]),
    ("conv_transpose1d", lambda nn: nn.ConvTranspose1d(3, 4, 3, stride=2), [(randn, (2, 3, 7))]),
    ("conv3d", lambda nn: nn.Conv3d(2, 4, 3, padding=1, stride=(1, 2, 1)), [(randn, (2, 2, 4, 5, 4))]),
    ("conv3d_circular", lambda nn: nn.Conv3d(4, 4, 2, groups=2, bias=False, padding=1, padding_mode="circular"),
     [(randn, (1, 4, 3, 4, 3))]),
    ("adaptive_max_pool2d", lambda nn: nn.AdaptiveMaxPool2d((3, None)), [(randn, (2, 3, 7, 8))]),
    ("adaptive_max_pool1d", lambda nn: nn.AdaptiveMaxPool1d(4), [(randn, (2, 3, 9))]),
    ("max_unpool2d", lambda nn: nn.MaxUnpool2d(2), [(randn, (2, 3, 3, 4)), (pooled_indices, (2, 3, 3, 4))]),
    ("instance_norm1d", lambda nn: nn.InstanceNorm1d(3), [(randn, (2, 3, 6))]),
    ("instance_norm2d_affine_tracked", lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
     [(randn, (2, 3, 4, 5))]),
    ("instance_norm2d_eval", lambda nn: nn.InstanceNorm2d(3, track_running_stats=True).eval(),
     [(randn, (2, 3, 4, 5))]),
    ("instance_norm1d_unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True, bias=False), [(randn, (3, 6))]),
    ("local_response_norm", lambda nn: nn.LocalResponseNorm(3, alpha=0.1), [(randn, (2, 5, 4, 3))]),
    ("rms_norm", lambda nn: nn.RMSNorm((3, 4)), [(randn, (2, 3, 4))]),
    ("rms_norm_no_affine", lambda nn: nn.RMSNorm(4, eps=1e-3, elementwise_affine=False), [(randn, (5, 4))]),
    ("pairwise_distance", lambda nn: nn.PairwiseDistance(1.5, keepdim=True), [(randn, (4, 5)), (randn, (4, 5))]),
    ("cosine_similarity", lambda nn: nn.CosineSimilarity(dim=0), [(randn, (4, 5)), (randn, (4, 5))]),
    ("embedding_bag", lambda nn: nn.EmbeddingBag(10, 3), [(ints(10), (12,)), (bag_offsets, (4,))]),
    ("embedding_bag_max_padding", lambda nn: nn.EmbeddingBag(10, 3, mode="max", padding_idx=2),
     [(ints(10), (3, 4))]),
    ("channel_shuffle", lambda nn: nn.ChannelShuffle(3), [(randn, (2, 6, 2, 2))]),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,ctor,inputs", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_matches_torch(name, ctor, inputs, dtype):
    rng = np.random.RandomState(sum(map(ord, name)))
    g_mod, t_mod = _pair(ctor)
    results = _run(g_mod, t_mod, inputs, dtype, rng)
    tol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 2e-6)
    _check(g_mod, t_mod, *results, *tol)
    assert type(results[2].grad_fn).__name__ == type(results[3].grad_fn).__name__


REPRS = [row[1] for row in LAYERS] + [
    lambda nn: nn.ConvTranspose1d(4, 6, 3, padding=2, output_padding=1, dilation=3, groups=2),
    lambda nn: nn.Conv3d(2, 4, (1, 2, 3), padding="same", dilation=2),
    lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, momentum=None),
    lambda nn: nn.LocalResponseNorm(2, 1e-3, 0.5, 2.0),
    lambda nn: nn.AdaptiveMaxPool1d(3, return_indices=True),
    lambda nn: nn.MaxUnpool1d(3, 2, 1),
    lambda nn: nn.MaxUnpool2d((2, 3), stride=(1, 2)),
    lambda nn: nn.PairwiseDistance(),
    lambda nn: nn.CosineSimilarity(),
    lambda nn: nn.EmbeddingBag(10, 3, mode="sum", max_norm=1.0, scale_grad_by_freq=True, norm_type=1.0),
    lambda nn: nn.EmbeddingBag(10, 3, include_last_offset=True, sparse=True, padding_idx=-1),
    lambda nn: nn.Sequential(nn.ConvTranspose2d(2, 3, 2), nn.InstanceNorm2d(3), nn.RMSNorm(4)),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("seed", [0, 1234])
@pytest.mark.parametrize("ctor", REPRS)
def test_initialization_and_repr_match_torch(ctor, seed):
    torch.manual_seed(seed)
    t_mod = ctor(torch.nn)
    gradiente.manual_seed(seed)
    g_mod = ctor(gradiente.nn)
    assert repr(g_mod) == repr(t_mod)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    for (name, g), (_, t) in zip(g_mod.state_dict().items(), t_mod.state_dict().items()):
        assert np.array_equal(g.numpy(), t.numpy()), name
    assert gradiente.rand(3).tolist() == torch.rand(3).tolist()     # the generators stay in step


def test_instance_norm_running_statistics_over_steps():
    """Running mean/var follow PyTorch over training steps (num_batches_tracked stays 0, as in PyTorch), then
    eval normalizes with them."""
    g_mod, t_mod = _pair(lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, momentum=0.3))
    rng = np.random.RandomState(0)
    for _ in range(3):
        x = (rng.standard_normal((4, 3, 5)) * 3 + 1).astype(np.float32)
        g_mod(gradiente.from_numpy(x))
        t_mod(torch.from_numpy(x))
    for (name, gb), (_, tb) in zip(g_mod.named_buffers(), t_mod.named_buffers()):
        np.testing.assert_allclose(gb.numpy(), tb.numpy(), rtol=1e-6, err_msg=name)
    g_mod.eval()
    t_mod.eval()
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    np.testing.assert_allclose(g_mod(gradiente.from_numpy(x)).detach().numpy(),
                               t_mod(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("output_size", [None, (10, 12), [2, 6, 9, 11], (9, 12)])
def test_conv_transpose_output_size_picks_the_output_padding(output_size):
    g_mod, t_mod = _pair(lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1))
    x = np.random.RandomState(1).standard_normal((2, 4, 5, 6)).astype(np.float32)
    g_out = g_mod(gradiente.from_numpy(x), output_size=output_size)
    t_out = t_mod(torch.from_numpy(x), output_size=output_size)
    assert tuple(g_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("output_size", [(12, 12), (11, 11), (1, 2, 3)])
def test_conv_transpose_output_size_errors(output_size):
    def call(lib):
        lib.manual_seed(0)
        return lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1)(lib.zeros(2, 4, 5, 6), output_size=output_size)
    with pytest.raises(ValueError) as expected:
        call(torch)
    with pytest.raises(ValueError) as got:
        call(gradiente)
    assert str(got.value).replace("gradiente.", "torch.") == str(expected.value)


# --- indices ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("nans", [0, 10])
@pytest.mark.parametrize("fn", [lambda lib, x: F(lib).adaptive_max_pool2d(x, (3, 5), return_indices=True),
                                lambda lib, x: F(lib).adaptive_max_pool2d(x, 6, return_indices=True),
                                lambda lib, x: F(lib).adaptive_max_pool1d(x[:, :, 0], 3, return_indices=True)])
def test_adaptive_max_pool_ties_and_nans_pick_pytorchs_element(fn, nans):
    rng = np.random.RandomState(7)
    x = np.maximum(rng.standard_normal((2, 3, 7, 8)), 0).round(1)
    x.flat[rng.choice(x.size, nans, replace=False)] = np.nan
    results = []
    for lib in (torch, gradiente):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out, idx = fn(lib, t)
        out.backward(lib.from_numpy(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))))
        results.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    for g, t in zip(results[1], results[0]):
        np.testing.assert_array_equal(g, t)
    assert results[1][1].dtype == np.int64


def test_max_pool_then_unpool_round_trip_matches_torch():
    x = np.random.RandomState(2).standard_normal((2, 3, 7, 9))
    results = []
    for lib in (torch, gradiente):
        t = lib.from_numpy(x.copy()).requires_grad_()
        pooled, idx = F(lib).max_pool2d(t, 3, 2, 1, return_indices=True)
        out = lib.nn.MaxUnpool2d(3, 2, 1)(pooled, idx, output_size=t.shape)
        out.backward(lib.from_numpy(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape))))
        results.append((out.detach().numpy(), t.grad.numpy()))
    for g, t in zip(results[1], results[0]):
        np.testing.assert_array_equal(g, t)


# --- embedding_bag: where PyTorch 2.13's CPU kernel is right ----------------------------------------------------

def test_embedding_bag_scale_grad_by_freq_matches_torch_on_equal_counts():
    """Each index used twice: PyTorch's CPU kernel divides by the right count in that case."""
    idx, offsets = [3, 1, 1, 7, 3, 7, 0, 0], [0, 3, 3, 6]
    grads = []
    for lib in (torch, gradiente):
        w = lib.from_numpy(np.random.RandomState(0).standard_normal((8, 3))).requires_grad_()
        out = F(lib).embedding_bag(lib.tensor(idx), w, lib.tensor(offsets), mode="mean", scale_grad_by_freq=True)
        out.backward(lib.from_numpy(np.arange(12.0).reshape(4, 3)))
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_embedding_bag_scale_grad_by_freq_divides_each_row_by_its_own_count():
    """PyTorch 2.13's CPU kernel divides index 3 of [1, 1, 3] by the count of 1 (pytorch/pytorch#190063); the
    documented rule, which gradiente follows, divides each row's gradient by its own index's count."""
    w = gradiente.ones(4, 3, requires_grad=True)
    F(gradiente).embedding_bag(gradiente.tensor([1, 1, 3]), w, gradiente.tensor([0]), mode="sum",
                               scale_grad_by_freq=True).sum().backward()
    assert w.grad[:, 0].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_embedding_bag_max_norm_renormalizes_the_used_rows_as_torch():
    weights = []
    for lib in (torch, gradiente):
        w = lib.from_numpy(np.random.RandomState(1).standard_normal((6, 3)) * 2)
        F(lib).embedding_bag(lib.tensor([0, 2, 2, 5]), w, lib.tensor([0, 1]), max_norm=1.0)
        weights.append(w.numpy())
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-7)


# --- attention: which path, which node --------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda lib, q: (q, q, q, None, {}),
    lambda lib, q: (q, q, q, lib.zeros(4, 4), {}),
    lambda lib, q: (q, q, q, lib.zeros(4, 4, requires_grad=True), {}),
    lambda lib, q: (q, q, q, lib.zeros(3, 4, 4), {}),
    lambda lib, q: (q, q, q, None, {"dropout_p": 0.5}),
    lambda lib, q: (q, q[:1].expand(2, 3, 4, 5), q, None, {}),
    lambda lib, q: (q.transpose(-1, -2).contiguous().transpose(-1, -2), q, q, None, {}),
    lambda lib, q: (q[0], q[0], q[0], None, {}),
    lambda lib, q: (q, q, q[..., :3], None, {}),
])
def test_attention_takes_pytorchs_path(case):
    names = []
    for lib in (torch, gradiente):
        lib.manual_seed(0)
        q = lib.from_numpy(np.random.RandomState(0).standard_normal((2, 3, 4, 5))).requires_grad_()
        query, key, value, mask, kwargs = case(lib, q)
        out = F(lib).scaled_dot_product_attention(query, key, value, attn_mask=mask, **kwargs)
        names.append(type(out.grad_fn).__name__)
    assert names[1] == names[0]


def test_attention_fully_masked_row_gives_zeros_on_both_paths():
    q = gradiente.randn(2, 3, 4, 5)
    mask = gradiente.ones(4, 4, dtype=gradiente.bool)
    mask[1] = False
    for query in (q, q[0]):
        out = F(gradiente).scaled_dot_product_attention(query, query, query, attn_mask=mask)
        assert not out[..., 1, :].any().item() and not out.isnan().any().item()


# --- errors, word for word --------------------------------------------------------------------------------------

def _pooled(lib):
    return F(lib).max_pool2d(lib.ones(2, 4, 4, 4), 2, return_indices=True)


ERRORS = [
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 5, 5, 5), lib.zeros(4, 3, 3, 3)),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 3, 3, 3), stride=2, output_padding=2),
    lambda lib: F(lib).conv_transpose1d(lib.zeros(2, 4, 5), lib.zeros(4, 3, 3), stride=2, output_padding=2),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(5, 5), lib.zeros(4, 3, 3, 3)),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 3, 3, 3), groups=3),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 3, 3, 3, dtype=lib.float64)),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 3, 3, 3), lib.zeros(4)),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 3, 3, 3), stride=(1, 2, 3)),
    lambda lib: F(lib).conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 3, 3, 3), padding="same"),
    lambda lib: lib.nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect"),
    lambda lib: lib.nn.ConvTranspose2d(3, 4, 3, groups=2),
    lambda lib: F(lib).conv3d(lib.zeros(1, 2, 3, 3, 3), lib.zeros(4, 3, 2, 2, 2)),
    lambda lib: F(lib).conv3d(lib.zeros(1, 2, 3, 3, 3), lib.zeros(4, 2, 4, 2, 2)),
    lambda lib: F(lib).conv3d(lib.zeros(3, 3, 3), lib.zeros(4, 2, 2, 2, 2)),
    lambda lib: F(lib).conv3d(lib.zeros(1, 2, 3, 3, 3), lib.zeros(4, 2, 2, 2, 2), stride=2, padding="same"),
    lambda lib: F(lib).adaptive_max_pool2d(lib.zeros(5, 5), 2),
    lambda lib: F(lib).adaptive_max_pool1d(lib.zeros(5), 2),
    lambda lib: F(lib).adaptive_max_pool2d(lib.zeros(2, 3, 4, 4), (1, 2, 3)),
    lambda lib: F(lib).adaptive_max_pool1d(lib.zeros(2, 3, 4), (2, 3)),
    lambda lib: F(lib).adaptive_max_pool2d(lib.zeros(2, 3, 0, 4), 2),
    lambda lib: F(lib).adaptive_max_pool2d(lib.ones(2, 3, 4, 4, dtype=lib.long), 2),
    lambda lib: F(lib).max_unpool2d(_pooled(lib)[0], _pooled(lib)[1] * 10, 2),
    lambda lib: F(lib).max_unpool2d(*_pooled(lib), 2, output_size=(9, 9)),
    lambda lib: F(lib).max_unpool2d(*_pooled(lib), 2, output_size=(9,)),
    lambda lib: F(lib).max_unpool2d(_pooled(lib)[0], _pooled(lib)[1][:, :, :1], 2),
    lambda lib: F(lib).max_unpool2d(_pooled(lib)[0], _pooled(lib)[1].int(), 2),
    lambda lib: F(lib).max_unpool2d(_pooled(lib)[0][0, 0], _pooled(lib)[1][0, 0], 2),
    lambda lib: F(lib).max_unpool1d(_pooled(lib)[0][0], _pooled(lib)[1][0], 2, output_size=[9]),
    lambda lib: F(lib).instance_norm(lib.zeros(2, 4, 5), lib.zeros(3), lib.ones(3)),
    lambda lib: lib.nn.InstanceNorm2d(3, affine=True)(lib.zeros(2, 4, 5, 5)),
    lambda lib: lib.nn.InstanceNorm2d(3)(lib.zeros(5, 5)),
    lambda lib: lib.nn.InstanceNorm1d(3)(lib.zeros(2, 3, 4, 5)),
    lambda lib: F(lib).local_response_norm(lib.zeros(5, 5), 2),
    lambda lib: F(lib).rms_norm(lib.zeros(2, 4, 5), (4,)),
    lambda lib: F(lib).rms_norm(lib.zeros(2, 3, 4), (3, 5)),
    lambda lib: F(lib).rms_norm(lib.zeros(2, 4, 5), (5,), lib.ones(4)),
    lambda lib: F(lib).rms_norm(lib.ones(2, 3, dtype=lib.long), (3,)),
    lambda lib: F(lib).pdist(lib.zeros(2, 3, 4)),
    lambda lib: F(lib).pdist(lib.zeros(3, 3), -1),
    lambda lib: F(lib).pdist(lib.ones(3, 3, dtype=lib.long)),
    lambda lib: F(lib).channel_shuffle(lib.zeros(2, 5, 3), 2),
    lambda lib: F(lib).channel_shuffle(lib.zeros(2, 4), 2),
    lambda lib: F(lib).channel_shuffle(lib.zeros(2, 4, 3), 0),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 2]), lib.zeros(5, 2), lib.tensor([0]), mode="foo"),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 2]), lib.zeros(5, 2), lib.tensor([0]), mode="mean",
                                     per_sample_weights=lib.ones(2)),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 2]), lib.zeros(5, 2)),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 2]), lib.zeros(5, 2), lib.tensor([[0]])),
    lambda lib: F(lib).embedding_bag(lib.tensor([[[1, 2]]]), lib.zeros(5, 2)),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 2]), lib.zeros(5), lib.tensor([0])),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 7, -1]), lib.zeros(5, 2, dtype=lib.float64), lib.tensor([0, 2]),
                                     mode="max"),
    lambda lib: F(lib).embedding_bag(lib.tensor([1, 2]), lib.zeros(5, 2), lib.tensor([0, 3])),
    lambda lib: F(lib).scaled_dot_product_attention(*(lib.zeros(2, 3, 4, 5),) * 3,
                                                    attn_mask=lib.zeros(4, 4, dtype=lib.long)),
    lambda lib: F(lib).scaled_dot_product_attention(lib.zeros(2, 4, 5), lib.zeros(2, 4, 5, dtype=lib.float64),
                                                    lib.zeros(2, 4, 5)),
    lambda lib: F(lib).scaled_dot_product_attention(*(lib.zeros(5),) * 3),
    lambda lib: F(lib).scaled_dot_product_attention(*(lib.zeros(3, 4, 5),) * 3, attn_mask=lib.zeros(4, 4),
                                                    is_causal=True),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_worded_as_torch(call):
    check_same_error(call)


def test_size_in_messages_is_gradientes_own():
    """Messages that print a Size print gradiente's (``gradiente.Size([...])`` where PyTorch prints
    ``torch.Size([...])``), with the same words around it."""
    messages = []
    for lib in (torch, gradiente):
        with pytest.raises(ValueError) as info:
            F(lib).instance_norm(lib.zeros(2, 3, 1))
        messages.append(str(info.value))
    assert messages[1].replace("gradiente.", "torch.") == messages[0]
