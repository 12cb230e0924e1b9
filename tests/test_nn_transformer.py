"""Attention and Transformer layers against PyTorch: the same seed gives the same parameters (names, shapes,
order, values); the same parameters and inputs give the same outputs, attention weights, gradients (of the
inputs, of float masks and of every parameter, with a non-trivial upstream gradient) and output ``grad_fn``
names, over a grid of options, masks and modes (eval, train without dropout, train with dropout and the same
seed), in float64 and float32; reprs, warnings, errors and a few training steps match too."""
import copy
import inspect
import itertools
import math
import re
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
              pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]

TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-5)}
LIBS = (gradiente, torch)
E, HEADS, L, S, N = 8, 2, 3, 4, 2       # embedding, heads, target and source lengths, batch
KDIM, VDIM, FF = 5, 6, 16


# --- helpers --------------------------------------------------------------------------------------------------
def _g(t):
    return gradiente.from_numpy(t.detach().numpy().copy())


def _np(t):
    return t.detach().numpy()


def _close(g, t, dtype, what=""):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(_np(g), _np(t), rtol=rtol, atol=atol, err_msg=what)


def _pair(make, dtype="float64"):
    """The same module in both libraries (``make(lib)``), gradiente's loaded with PyTorch's parameters."""
    torch.manual_seed(0)
    t_mod = make(torch)
    g_mod = make(gradiente)
    g_mod.load_state_dict({k: _g(v) for k, v in t_mod.state_dict().items()})
    if dtype == "float64":
        t_mod.double()
        g_mod.double()
    return g_mod, t_mod


def _both(array, requires_grad=False):
    """One NumPy array as a (gradiente, torch) pair of tensors."""
    pair = (gradiente.from_numpy(array.copy()), torch.from_numpy(array.copy()))
    return tuple(t.requires_grad_() for t in pair) if requires_grad else pair


def _backward(g_outs, t_outs, rng):
    """Backpropagate Σ out · upstream over the outputs (None skipped), the same upstream in both libraries."""
    g_loss, t_loss = 0, 0
    for g_out, t_out in zip(g_outs, t_outs):
        if t_out is None:
            assert g_out is None
            continue
        upstream = _both(rng.standard_normal(tuple(t_out.shape)).astype(_np(t_out).dtype))
        g_loss = g_loss + (g_out * upstream[0]).sum()
        t_loss = t_loss + (t_out * upstream[1]).sum()
    g_loss.backward()
    t_loss.backward()


def _check_outputs(g_outs, t_outs, dtype):
    for i, (g, t) in enumerate(zip(g_outs, t_outs)):
        if t is None:
            assert g is None, f"output {i}"
            continue
        assert tuple(g.shape) == tuple(t.shape), f"output {i}"
        assert g.dtype is getattr(gradiente, dtype)
        _close(g, t, dtype, f"output {i}")
        assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__, f"grad_fn of output {i}"


def _close_grad(g, t, dtype, what):
    """The gradients of one leaf: equal, or None in both libraries (the leaf is not used)."""
    if t.grad is None:
        assert g.grad is None, what
    else:
        _close(g.grad, t.grad, dtype, what)


def _check_grads(g_mod, t_mod, leaves, dtype):
    """Gradients of the leaves (gradiente, torch pairs) and of every parameter, by name."""
    for i, (g, t) in enumerate(leaves):
        _close_grad(g, t, dtype, f"leaf {i}")
    g_params = dict(g_mod.named_parameters())
    assert list(g_params) == [name for name, _ in t_mod.named_parameters()]
    for name, t_param in t_mod.named_parameters():
        _close_grad(g_params[name], t_param, dtype, name)


def _seed(seed):
    torch.manual_seed(seed)
    gradiente.manual_seed(seed)


def _bool_mask(rng, shape):
    """A random boolean mask (True: masked) that leaves the first key of every row attended."""
    mask = rng.random(shape) < 0.4
    mask[..., 0] = False
    return mask


def _float_mask(rng, shape):
    """A random additive mask: 0, -inf and finite negative values, the first key of every row finite."""
    mask = np.where(rng.random(shape) < 0.3, -np.inf, -2 * rng.random(shape) * (rng.random(shape) < 0.5))
    mask[..., 0] = -rng.random(shape[:-1])
    return mask


def _mask_pair(rng, kind, shape, dtype):
    """(gradiente, torch) masks of ``kind`` "bool" or "float", or (None, None)."""
    if kind is None:
        return None, None
    return _both(_bool_mask(rng, shape) if kind == "bool" else _float_mask(rng, shape).astype(dtype))


# --- initialization and reprs ---------------------------------------------------------------------------------
def _silu(lib):
    return lib.nn.functional.silu


CONSTRUCTORS = {
    "mha": lambda lib: lib.nn.MultiheadAttention(E, HEADS),
    "mha_no_bias": lambda lib: lib.nn.MultiheadAttention(E, 4, bias=False),
    "mha_bias_kv": lambda lib: lib.nn.MultiheadAttention(E, HEADS, add_bias_kv=True, add_zero_attn=True),
    "mha_kdim_vdim": lambda lib: lib.nn.MultiheadAttention(E, HEADS, 0.1, kdim=KDIM, vdim=VDIM, add_bias_kv=True),
    "mha_kdim_only": lambda lib: lib.nn.MultiheadAttention(E, 1, kdim=KDIM, batch_first=True),
    "encoder_layer": lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, FF),
    "encoder_layer_gelu_module": lambda lib: lib.nn.TransformerEncoderLayer(
        E, HEADS, FF, 0.2, lib.nn.GELU(approximate="tanh"), 1e-6, True, True, False),
    "decoder_layer": lambda lib: lib.nn.TransformerDecoderLayer(E, HEADS, FF, activation="gelu"),
    "decoder_layer_relu_module": lambda lib: lib.nn.TransformerDecoderLayer(
        E, HEADS, FF, activation=lib.nn.ReLU(), bias=False, norm_first=True),
    "encoder": lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, HEADS, FF), 2,
                                                     lib.nn.LayerNorm(E)),
    "encoder_no_norm": lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(E, HEADS, FF, batch_first=True), 3, enable_nested_tensor=False),
    "decoder": lambda lib: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, HEADS, FF), 2,
                                                     lib.nn.LayerNorm(E, eps=1e-3)),
    "transformer": lambda lib: lib.nn.Transformer(E, HEADS, 2, 1, FF),
    "transformer_options": lambda lib: lib.nn.Transformer(E, 4, 1, 2, FF, 0.0, "gelu", layer_norm_eps=1e-4,
                                                          batch_first=True, norm_first=True, bias=False),
}


@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_initial_parameters_match_torch(name):
    """The same seed gives the same parameter names, order, shapes and values, and leaves the generator in the
    same state (the same numbers were drawn)."""
    _seed(11)
    t_mod = CONSTRUCTORS[name](torch)
    g_mod = CONSTRUCTORS[name](gradiente)
    t_params, g_params = list(t_mod.named_parameters()), list(g_mod.named_parameters())
    assert [n for n, _ in g_params] == [n for n, _ in t_params]
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    for (n, g), (_, t) in zip(g_params, t_params):
        assert tuple(g.shape) == tuple(t.shape), n
        assert g.dtype is gradiente.float32
        np.testing.assert_array_equal(_np(g), _np(t), err_msg=n)
    np.testing.assert_array_equal(_np(gradiente.rand(4)), _np(torch.rand(4)))


@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_repr_matches_torch(name):
    assert repr(CONSTRUCTORS[name](gradiente)) == repr(CONSTRUCTORS[name](torch))


def test_parameters_follow_dtype_and_clones_are_independent():
    for lib in LIBS:
        mha = lib.nn.MultiheadAttention(E, HEADS, kdim=KDIM, add_bias_kv=True, dtype=lib.float64)
        assert {p.dtype for p in mha.parameters()} == {lib.float64}
    layer = gradiente.nn.TransformerEncoderLayer(E, HEADS, FF)
    encoder = gradiente.nn.TransformerEncoder(layer, 2)
    first, second = encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight
    assert first is not second and first is not layer.linear1.weight
    np.testing.assert_array_equal(_np(first), _np(second))
    with gradiente.no_grad():
        first.add_(1)
    assert not np.array_equal(_np(first), _np(second))


def test_attributes_match_torch():
    for make, names in [
        (CONSTRUCTORS["mha_kdim_vdim"], ["embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads", "dropout",
                                         "batch_first", "head_dim", "add_zero_attn", "bias_k"]),
        (CONSTRUCTORS["encoder_layer_gelu_module"], ["norm_first", "activation_relu_or_gelu"]),
        (CONSTRUCTORS["encoder_no_norm"], ["num_layers", "norm", "enable_nested_tensor", "use_nested_tensor",
                                           "mask_check"]),
        (CONSTRUCTORS["transformer_options"], ["d_model", "nhead", "batch_first"]),
    ]:
        g_mod, t_mod = make(gradiente), make(torch)
        for name in names:
            g_value, t_value = getattr(g_mod, name), getattr(t_mod, name)
            if isinstance(t_value, torch.Tensor):
                assert tuple(g_value.shape) == tuple(t_value.shape), name
            else:
                assert g_value == t_value, name


def test_generate_square_subsequent_mask():
    for args in [(4,), (1,), (3, None, torch.float64)]:
        t_mask = torch.nn.Transformer.generate_square_subsequent_mask(*args)
        g_args = args[:2] + ((gradiente.float64,) if len(args) == 3 else ())
        g_mask = gradiente.nn.Transformer.generate_square_subsequent_mask(*g_args)
        assert str(g_mask.dtype).split(".")[1] == str(t_mask.dtype).split(".")[1]
        np.testing.assert_array_equal(_np(g_mask), _np(t_mask))
    assert repr(gradiente.nn.Transformer.generate_square_subsequent_mask(3)) == \
        repr(torch.nn.Transformer.generate_square_subsequent_mask(3))


# --- MultiheadAttention ---------------------------------------------------------------------------------------
MHA_OPTIONS = {
    "plain": {},
    "no_bias": {"bias": False},
    "bias_kv": {"add_bias_kv": True},
    "zero_attn": {"add_zero_attn": True},
    "bias_kv_zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
    "kdim_vdim": {"kdim": KDIM, "vdim": VDIM},
}
# (key padding mask kind, attention mask kind, attention mask dims)
MASKS = {
    "none": (None, None, 2),
    "kpm_bool": ("bool", None, 2),
    "kpm_float": ("float", None, 2),
    "attn2_bool": (None, "bool", 2),
    "attn2_float": (None, "float", 2),
    "attn3_bool": (None, "bool", 3),
    "attn3_float": (None, "float", 3),
    "both_bool": ("bool", "bool", 2),
    "both_float_3d": ("float", "float", 3),
}
WEIGHTS = {"average": (True, True), "per_head": (True, False), "none": (False, True)}
# which inputs are one tensor, and batch_first
INPUTS = {"self": ("self", False), "self_batch_first": ("self", True), "kv_batch_first": ("kv", True),
          "separate": ("separate", False)}


def _mha_inputs(rng, sharing, batch_first, options, dtype, batched=True):
    """Leaves (gradiente, torch pairs) and the (query, key, value) of each library."""
    def shape(length, width):
        if not batched:
            return (length, width)
        return (N, length, width) if batch_first else (length, N, width)

    kdim, vdim = options.get("kdim", E), options.get("vdim", E)
    if sharing == "separate" or kdim != E or vdim != E:
        shapes = [shape(L, E), shape(S, kdim), shape(S, vdim)]
    elif sharing == "kv":
        shapes = [shape(L, E), shape(S, E)]
    else:
        shapes = [shape(S, E)]
    leaves = [_both(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]
    picks = {1: (0, 0, 0), 2: (0, 1, 1), 3: (0, 1, 2)}[len(leaves)]
    return leaves, [tuple(leaves[i][lib] for i in picks) for lib in (0, 1)]


def _run_mha(options, mask_id, weights_id, inputs_id, dtype, training=False, seed=0, batched=True):
    rng = np.random.default_rng(seed)
    sharing, batch_first = INPUTS[inputs_id]
    g_mod, t_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, HEADS, batch_first=batch_first, **options), dtype)
    g_mod.train(training)
    t_mod.train(training)
    leaves, (g_qkv, t_qkv) = _mha_inputs(rng, sharing, batch_first, options, dtype, batched)
    tgt = t_qkv[0].shape[1 if batch_first and batched else 0]
    src = t_qkv[1].shape[1 if batch_first and batched else 0]
    kpm_kind, attn_kind, attn_dims = MASKS[mask_id]
    kpm = _mask_pair(rng, kpm_kind, (N, src) if batched else (src,), dtype)
    attn_shape = (tgt, src) if attn_dims == 2 else ((N if batched else 1) * HEADS, tgt, src)
    attn = _mask_pair(rng, attn_kind, attn_shape, dtype)
    need_weights, average = WEIGHTS[weights_id]
    outs = []
    for lib, mod, qkv in ((0, g_mod, g_qkv), (1, t_mod, t_qkv)):
        _seed(seed + 100)
        outs.append(mod(*qkv, key_padding_mask=kpm[lib], attn_mask=attn[lib], need_weights=need_weights,
                        average_attn_weights=average))
    _check_outputs(*outs, dtype)
    _backward(*outs, rng)
    _check_grads(g_mod, t_mod, leaves, dtype)


@pytest.mark.parametrize("inputs_id", list(INPUTS))
@pytest.mark.parametrize("weights_id", list(WEIGHTS))
@pytest.mark.parametrize("mask_id", list(MASKS))
@pytest.mark.parametrize("options_id", list(MHA_OPTIONS))
def test_mha_matches_torch(options_id, mask_id, weights_id, inputs_id):
    """Outputs, attention weights, their grad_fn names, and the gradients of the inputs and every parameter,
    in float64 over the whole grid (eval mode: PyTorch's ordinary path, as the inputs require grad)."""
    _run_mha(MHA_OPTIONS[options_id], mask_id, weights_id, inputs_id, "float64")


@pytest.mark.parametrize("case", [("plain", "both_bool", "average", "self_batch_first"),
                                  ("kdim_vdim", "attn3_float", "per_head", "separate"),
                                  ("bias_kv_zero_attn", "kpm_float", "none", "kv_batch_first"),
                                  ("no_bias", "none", "none", "self")])
def test_mha_matches_torch_float32(case):
    options_id, mask_id, weights_id, inputs_id = case
    _run_mha(MHA_OPTIONS[options_id], mask_id, weights_id, inputs_id, "float32")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("weights_id", list(WEIGHTS))
@pytest.mark.parametrize("options_id,mask_id", [("plain", "none"), ("bias_kv_zero_attn", "both_bool"),
                                                ("kdim_vdim", "attn3_float"), ("plain", "kpm_bool")])
def test_mha_dropout_matches_torch(options_id, mask_id, weights_id, dtype):
    """In training with dropout, the same seed drops the same attention weights."""
    options = {**MHA_OPTIONS[options_id], "dropout": 0.4}
    _run_mha(options, mask_id, weights_id, "self_batch_first", dtype, training=True, seed=3)


@pytest.mark.parametrize("weights_id", list(WEIGHTS))
@pytest.mark.parametrize("mask_id", ["none", "kpm_bool", "attn2_float", "attn3_bool", "both_float_3d"])
@pytest.mark.parametrize("options_id", ["plain", "bias_kv_zero_attn", "kdim_vdim"])
def test_mha_unbatched_matches_torch(options_id, mask_id, weights_id):
    _run_mha(MHA_OPTIONS[options_id], mask_id, weights_id, "self_batch_first", "float64", batched=False)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_kpm", [True, False])
@pytest.mark.parametrize("add_zero_attn", [True, False])
def test_mha_is_causal_matches_torch(need_weights, with_kpm, add_zero_attn):
    """``is_causal`` with the causal mask: scaled_dot_product_attention's own causal mask when nothing else is
    needed, the given mask otherwise."""
    rng = np.random.default_rng(5)
    g_mod, t_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, HEADS, add_zero_attn=add_zero_attn))
    g_x, t_x = _both(rng.standard_normal((S, N, E)), requires_grad=True)
    kpm = _mask_pair(rng, "bool" if with_kpm else None, (N, S), "float64")
    masks = (gradiente.nn.Transformer.generate_square_subsequent_mask(S, dtype=gradiente.float64),
             torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64))
    outs = [mod(x, x, x, key_padding_mask=kpm[i], attn_mask=masks[i], need_weights=need_weights, is_causal=True)
            for i, (mod, x) in enumerate(((g_mod, g_x), (t_mod, t_x)))]
    _check_outputs(*outs, "float64")
    _backward(*outs, rng)
    _check_grads(g_mod, t_mod, [(g_x, t_x)], "float64")


@pytest.mark.parametrize("need_weights", [True, False])
def test_gradient_of_float_masks_matches_torch(need_weights):
    rng = np.random.default_rng(8)
    g_mod, t_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, HEADS))
    g_x, t_x = _both(rng.standard_normal((S, N, E)), requires_grad=True)
    attn = _both(-rng.random((N * HEADS, S, S)), requires_grad=True)
    kpm = _both(-rng.random((N, S)), requires_grad=True)
    outs = [mod(x, x, x, key_padding_mask=kpm[i], attn_mask=attn[i], need_weights=need_weights)
            for i, (mod, x) in enumerate(((g_mod, g_x), (t_mod, t_x)))]
    _check_outputs(*outs, "float64")
    _backward(*outs, rng)
    _check_grads(g_mod, t_mod, [(g_x, t_x), attn, kpm], "float64")


@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("static", [False, True])
def test_functional_mha_matches_torch(separate, static):
    """``F.multi_head_attention_forward`` called directly: separate projection weights, static keys and
    values, dropout in training."""
    rng = np.random.default_rng(9)

    def arr(*shape):
        return _both(rng.standard_normal(shape), requires_grad=True)

    query, key, value = arr(L, N, E), arr(S, N, KDIM if separate else E), arr(S, N, VDIM if separate else E)
    in_w, in_b, out_w, out_b = arr(3 * E, E), arr(3 * E), arr(E, E), arr(E)
    q_w, k_w, v_w = arr(E, E), arr(E, KDIM), arr(E, VDIM)
    static_k, static_v = arr(N * HEADS, S + 1, E // HEADS), arr(N * HEADS, S + 1, E // HEADS)
    leaves = [query, key, value, in_b, out_w, out_b] + ([q_w, k_w, v_w] if separate else [in_w])
    leaves += [static_k, static_v] if static else []
    outs = []
    for i, lib in enumerate(LIBS):
        _seed(4)
        outs.append(lib.nn.functional.multi_head_attention_forward(
            query[i], key[i], value[i], E, HEADS, None if separate else in_w[i], in_b[i], None, None, True, 0.3,
            out_w[i], out_b[i], training=True, use_separate_proj_weight=separate, q_proj_weight=q_w[i],
            k_proj_weight=k_w[i], v_proj_weight=v_w[i], static_k=static_k[i] if static else None,
            static_v=static_v[i] if static else None, average_attn_weights=False))
    _check_outputs(*outs, "float64")
    _backward(*outs, rng)
    for j, (g, t) in enumerate(leaves):
        _close_grad(g, t, "float64", f"leaf {j}")


def test_gradcheck_of_functional_mha():
    """Finite differences agree with backward through every option at once: packed projection, bias_k/bias_v,
    a zero key, both masks, per-head weights."""
    rng = np.random.default_rng(10)

    def leaf(*shape):
        return gradiente.from_numpy(rng.standard_normal(shape)).requires_grad_()

    query, key = leaf(L, N, E), leaf(S, N, E)
    weights = [leaf(3 * E, E), leaf(3 * E), leaf(1, 1, E), leaf(1, 1, E), leaf(E, E), leaf(E)]
    kpm = gradiente.from_numpy(_bool_mask(rng, (N, S)))
    attn = gradiente.from_numpy(_float_mask(rng, (L, S)))

    def run(query, key, in_w, in_b, bias_k, bias_v, out_w, out_b):
        return gradiente.nn.functional.multi_head_attention_forward(
            query, key, key, E, HEADS, in_w, in_b, bias_k, bias_v, True, 0.0, out_w, out_b, key_padding_mask=kpm,
            attn_mask=attn, average_attn_weights=False)

    assert gradiente.autograd.gradcheck(run, (query, key, *weights))


SIGNATURES = [
    lambda lib: lib.nn.functional.multi_head_attention_forward,
    lambda lib: lib.nn.MultiheadAttention.__init__, lambda lib: lib.nn.MultiheadAttention.forward,
    lambda lib: lib.nn.TransformerEncoderLayer.__init__, lambda lib: lib.nn.TransformerEncoderLayer.forward,
    lambda lib: lib.nn.TransformerDecoderLayer.__init__, lambda lib: lib.nn.TransformerDecoderLayer.forward,
    lambda lib: lib.nn.TransformerEncoder.__init__, lambda lib: lib.nn.TransformerEncoder.forward,
    lambda lib: lib.nn.TransformerDecoder.__init__, lambda lib: lib.nn.TransformerDecoder.forward,
    lambda lib: lib.nn.Transformer.__init__, lambda lib: lib.nn.Transformer.forward,
    lambda lib: lib.nn.Transformer.generate_square_subsequent_mask,
]


@pytest.mark.parametrize("get", SIGNATURES)
def test_signatures_match_torch(get):
    """Parameter names, kinds and defaults (a default function compared by name: ``F.relu``)."""
    def described(fn):
        return [(p.name, p.kind, getattr(p.default, "__name__", p.default))
                for p in inspect.signature(fn).parameters.values()]

    assert described(get(gradiente)) == described(get(torch))


# --- Transformer layers ---------------------------------------------------------------------------------------
def _activation(lib, name):
    return {"relu": "relu", "gelu": "gelu", "gelu_fn": lib.nn.functional.gelu, "silu_fn": _silu(lib),
            "gelu_tanh_module": lib.nn.GELU(approximate="tanh")}[name]


LAYER_KINDS = {
    "encoder_layer": lambda lib, o: lib.nn.TransformerEncoderLayer(E, HEADS, FF, **o),
    "decoder_layer": lambda lib, o: lib.nn.TransformerDecoderLayer(E, HEADS, FF, **o),
    "encoder_1": lambda lib, o: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, HEADS, FF, **o), 1),
    "encoder_2_norm": lambda lib, o: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, HEADS, FF, **o), 2,
                                                               lib.nn.LayerNorm(E)),
    "decoder_1": lambda lib, o: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, HEADS, FF, **o), 1),
    "decoder_2_norm": lambda lib, o: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, HEADS, FF, **o), 2,
                                                               lib.nn.LayerNorm(E)),
    "transformer": lambda lib, o: lib.nn.Transformer(E, HEADS, 2, 2, FF, **o),
}
LAYER_OPTIONS = {
    "default": {},
    "norm_first": {"norm_first": True},
    "gelu_batch_first": {"activation": "gelu", "batch_first": True},
    "gelu_fn_no_bias": {"activation": "gelu_fn", "bias": False},
    "silu_fn_norm_first_batch_first": {"activation": "silu_fn", "norm_first": True, "batch_first": True},
    "gelu_module_eps": {"activation": "gelu_tanh_module", "layer_norm_eps": 1e-3},
}
# masks of the source / target side: (padding mask kind, attention mask kind, causal)
LAYER_MASKS = {
    "none": (None, None, None),
    "padding_bool": ("bool", None, None),
    "padding_float": ("float", None, None),
    "mask_bool": (None, "bool", None),
    "mask_float_and_padding": ("float", "float", None),
    "causal_detected": (None, "causal", None),
    "causal_hint": (None, "causal", True),
    "causal_and_padding": ("bool", "causal", None),
}
MODES = {"eval": (False, 0.1), "train_no_dropout": (True, 0.0), "train_dropout": (True, 0.3)}


def _side_masks(rng, mask_id, length, dtype):
    """(padding, mask, is_causal) of one side, each a (gradiente, torch) pair or a plain value."""
    kpm_kind, mask_kind, causal = LAYER_MASKS[mask_id]
    kpm = _mask_pair(rng, kpm_kind, (N, length), dtype)
    if mask_kind == "causal":
        mask = (gradiente.nn.Transformer.generate_square_subsequent_mask(length, dtype=getattr(gradiente, dtype)),
                torch.nn.Transformer.generate_square_subsequent_mask(length, dtype=getattr(torch, dtype)))
    else:
        mask = _mask_pair(rng, mask_kind, (length, length), dtype)
    return kpm, mask, causal


def _layer_call(kind, i, mod, src, tgt, src_masks, tgt_masks, memory_masks):
    """Call layer ``kind`` of library ``i`` with the masks it takes."""
    (s_kpm, s_mask, s_causal), (t_kpm, t_mask, t_causal) = src_masks, tgt_masks
    m_kpm, m_mask = memory_masks
    if kind == "encoder_layer":
        return mod(src, src_mask=s_mask[i], src_key_padding_mask=s_kpm[i], is_causal=bool(s_causal))
    if kind.startswith("encoder"):
        return mod(src, mask=s_mask[i], src_key_padding_mask=s_kpm[i], is_causal=s_causal)
    decoder_kwargs = {"tgt_mask": t_mask[i], "memory_mask": m_mask[i], "tgt_key_padding_mask": t_kpm[i],
                      "memory_key_padding_mask": m_kpm[i]}
    if kind == "decoder_layer":
        return mod(tgt, src, tgt_is_causal=bool(t_causal), **decoder_kwargs)
    if kind.startswith("decoder"):
        return mod(tgt, src, tgt_is_causal=t_causal, **decoder_kwargs)
    return mod(src, tgt, src_mask=s_mask[i], src_key_padding_mask=s_kpm[i], src_is_causal=s_causal,
               tgt_is_causal=t_causal, **decoder_kwargs)


def _run_layer(kind, options_id, mask_id, mode, dtype, batched=True, seed=0):
    rng = np.random.default_rng(seed)
    training, dropout = MODES[mode]
    options = dict(LAYER_OPTIONS[options_id])
    batch_first = options.get("batch_first", False)

    def make(lib):
        opts = {**options, "dropout": dropout}
        if "activation" in opts:
            opts["activation"] = _activation(lib, opts["activation"])
        return LAYER_KINDS[kind](lib, opts)

    g_mod, t_mod = _pair(make, dtype)
    g_mod.train(training)
    t_mod.train(training)

    def shape(length):
        if not batched:
            return (length, E)
        return (N, length, E) if batch_first else (length, N, E)

    src, tgt = (_both(rng.standard_normal(shape(n)).astype(dtype), requires_grad=True) for n in (S, L))
    src_masks = _side_masks(rng, mask_id, S, dtype)
    tgt_masks = _side_masks(rng, mask_id, L, dtype)
    memory_masks = (src_masks[0], _mask_pair(rng, LAYER_MASKS[mask_id][1] and "float", (L, S), dtype))
    if not batched:
        src_masks = tgt_masks = (None, None), (None, None), None
        memory_masks = (None, None), (None, None)
    outs = []
    for i, mod in enumerate((g_mod, t_mod)):
        _seed(seed + 50)
        outs.append(_layer_call(kind, i, mod, src[i], tgt[i], src_masks, tgt_masks, memory_masks))
    _check_outputs([outs[0]], [outs[1]], dtype)
    _backward([outs[0]], [outs[1]], rng)
    leaves = [src] if kind.startswith("encoder") else [src, tgt]
    _check_grads(g_mod, t_mod, leaves, dtype)


STACK_MASKS = ["none", "mask_float_and_padding", "causal_detected", "causal_and_padding"]
STACK_OPTIONS = ["default", "norm_first", "gelu_batch_first", "gelu_module_eps"]


def _layer_params(kinds, options_ids, mask_ids, modes):
    """The grid's cases as pytest params."""
    return [pytest.param(*case, id="-".join(case)) for case in itertools.product(kinds, options_ids, mask_ids, modes)]


@pytest.mark.parametrize("kind,options_id,mask_id,mode", [
    *_layer_params(["encoder_layer", "decoder_layer"], LAYER_OPTIONS, LAYER_MASKS, MODES),
    *_layer_params(["encoder_1", "encoder_2_norm", "decoder_1", "decoder_2_norm", "transformer"], STACK_OPTIONS,
                   STACK_MASKS, MODES),
])
def test_layers_match_torch(kind, options_id, mask_id, mode):
    """Outputs (and grad_fn names) and gradients of the inputs and every parameter, in float64, for each
    layer and stack in eval mode, in training without dropout, and in training with dropout (same seed)."""
    _run_layer(kind, options_id, mask_id, mode, "float64")


@pytest.mark.parametrize("kind,options_id,mask_id,mode", [
    *_layer_params(["encoder_layer"], ["gelu_batch_first"], ["mask_float_and_padding"], MODES),
    *_layer_params(["decoder_2_norm"], ["norm_first"], ["causal_and_padding"], MODES),
    *_layer_params(["transformer"], ["default"], ["causal_detected"], MODES),
    *_layer_params(["transformer"], ["silu_fn_norm_first_batch_first"], ["padding_bool"], MODES),
])
def test_layers_match_torch_float32(kind, options_id, mask_id, mode):
    _run_layer(kind, options_id, mask_id, mode, "float32")


@pytest.mark.parametrize("kind", list(LAYER_KINDS))
@pytest.mark.parametrize("options_id", ["default", "silu_fn_norm_first_batch_first"])
def test_layers_unbatched_match_torch(kind, options_id):
    _run_layer(kind, options_id, "none", "train_dropout", "float64", batched=False)


def _some_masked(rng):
    """A float mask with nonzero (masked, on the fused path) entries, none in the first column: no query is left
    without a key (PyTorch's fused kernel gives NaN there, its ordinary path and ours zeros)."""
    mask = -rng.random((S, S)) * (rng.random((S, S)) < 0.5)
    mask[:, 0] = 0
    return mask


FAST_PATH_CASES = {
    "left_aligned_padding": (lambda rng: None, lambda rng: np.array([[0, 0, 1, 1], [0, 0, 0, 1]], bool)),
    "padding_not_left_aligned": (lambda rng: None, lambda rng: np.array([[0, 1, 0, 1], [0, 0, 0, 0]], bool)),
    "float_padding": (lambda rng: None, lambda rng: np.array([[0, -1.5, 0, 0], [0, 0, -0.5, 0]])),
    "float_mask": (_some_masked, lambda rng: None),
    "float_mask_and_padding": (_some_masked, lambda rng: np.array([[0, 0, -2.0, -np.inf], [0, 0, 0, 0]])),
}


@pytest.mark.parametrize("mask_check", [True, False])
@pytest.mark.parametrize("case", list(FAST_PATH_CASES))
@pytest.mark.parametrize("kind", ["encoder_layer", "encoder_layer_gelu_tanh", "encoder_2_norm", "encoder_2_norm_first",
                                  "encoder_odd_heads"])
def test_eval_without_grad_matches_torch_fast_path(kind, case, mask_check):
    """In eval mode with no gradient wanted, PyTorch runs fused kernels that read float masks as boolean and a
    tanh-approximated GELU as the exact one, and (an encoder stack given a padding mask) nested tensors that
    leave zeros at the padded positions: the values match PyTorch's there too."""
    rng = np.random.default_rng(2)

    def make(lib):
        heads = 1 if kind == "encoder_odd_heads" else HEADS
        activation = lib.nn.GELU(approximate="tanh") if kind.endswith("tanh") else "relu"
        layer = lib.nn.TransformerEncoderLayer(E, heads, FF, activation=activation, batch_first=True,
                                               norm_first=kind.endswith("first"))
        if kind.startswith("encoder_layer"):
            return layer
        return lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(E), mask_check=mask_check)

    g_mod, t_mod = _pair(make, "float32")
    g_mod.eval()
    t_mod.eval()
    make_mask, make_kpm = FAST_PATH_CASES[case]
    x = _both(3 * rng.standard_normal((N, S, E)).astype(np.float32))
    mask, kpm = make_mask(rng), make_kpm(rng)
    mask = (None, None) if mask is None else _both(mask.astype(np.float32))
    kpm = (None, None) if kpm is None else _both(kpm if kpm.dtype == bool else kpm.astype(np.float32))
    outs = []
    for i, mod in enumerate((g_mod, t_mod)):
        with gradiente.no_grad(), torch.no_grad():
            if kind.startswith("encoder_layer"):
                outs.append(mod(x[i], src_mask=mask[i], src_key_padding_mask=kpm[i]))
            else:
                outs.append(mod(x[i], mask=mask[i], src_key_padding_mask=kpm[i]))
    _close(*outs, "float32")


def test_decoder_stacks_clone_the_layer_and_detect_causal_masks():
    """A boolean causal mask is detected as causal too (PyTorch compares it with the -inf mask cast to bool)."""
    rng = np.random.default_rng(4)
    g_mod, t_mod = _pair(lambda lib: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, HEADS, FF), 2))
    tgt = _both(rng.standard_normal((L, N, E)), requires_grad=True)
    memory = _both(rng.standard_normal((S, N, E)), requires_grad=True)
    mask = _both(np.triu(np.ones((L, L), bool), 1))
    outs = []
    for i, mod in enumerate((g_mod, t_mod)):
        _seed(1)
        outs.append(mod(tgt[i], memory[i], tgt_mask=mask[i]))
    _check_outputs([outs[0]], [outs[1]], "float64")
    _backward([outs[0]], [outs[1]], rng)
    _check_grads(g_mod, t_mod, [tgt, memory], "float64")


# --- warnings and errors --------------------------------------------------------------------------------------
def _warnings_of(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    return [str(w.message) for w in caught if "nested" in str(w.message) or "mismatched" in str(w.message)]


@pytest.mark.filterwarnings("default")
@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, HEADS, FF), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 1, FF, batch_first=True), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 2, FF, batch_first=True, bias=False), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 2, FF, batch_first=True,
                                                                         activation=_silu(lib)), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 2, FF, norm_first=True), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.Linear(E, E), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 2, FF, batch_first=True), 1),
    lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, FF),
    lambda lib: lib.nn.MultiheadAttention(E, HEADS)(
        *[lib.ones(S, N, E)] * 3, key_padding_mask=lib.zeros(N, S, dtype=lib.bool), attn_mask=lib.zeros(S, S)),
    lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, FF)(
        lib.ones(S, N, E), src_key_padding_mask=lib.zeros(N, S), src_mask=lib.zeros(S, S, dtype=lib.bool)),
], ids=["default", "odd_heads", "no_bias", "activation", "norm_first", "not_a_layer", "no_warning", "transformer",
        "mha_mismatched_masks", "layer_mismatched_masks"])
def test_warnings_match_torch(fn):
    assert _warnings_of(fn, gradiente) == _warnings_of(fn, torch)


def _message(lib, fn):
    with pytest.raises(Exception) as info:
        fn(lib)
    text = str(info.value).replace("torch.Size", "Size").replace("gradiente.Size", "Size")
    return type(info.value).__name__, re.sub(r"torch\.|gradiente\.", "", text)


def _mha(lib, **options):
    return lib.nn.MultiheadAttention(E, HEADS, **options)


ERRORS = {
    "embed_dim_zero": lambda lib: lib.nn.MultiheadAttention(0, 2),
    "heads_do_not_divide": lambda lib: lib.nn.MultiheadAttention(E, 3),
    "activation_name": lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, FF, activation="tanh"),
    "decoder_activation_name": lambda lib: lib.nn.TransformerDecoderLayer(E, HEADS, FF, activation="swish"),
    "query_4d": lambda lib: _mha(lib)(*[lib.ones(1, S, N, E)] * 3),
    "key_2d": lambda lib: _mha(lib)(lib.ones(L, N, E), lib.ones(S, E), lib.ones(S, E)),
    "kpm_3d": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, key_padding_mask=lib.zeros(1, N, S)),
    "unbatched_kpm_2d": lambda lib: _mha(lib)(*[lib.ones(S, E)] * 3, key_padding_mask=lib.zeros(1, S)),
    "attn_mask_4d": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, attn_mask=lib.zeros(1, 1, S, S)),
    "attn_mask_2d_shape": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, attn_mask=lib.zeros(S, S + 1)),
    "attn_mask_3d_shape": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, attn_mask=lib.zeros(N, S, S)),
    "unbatched_attn_mask_3d": lambda lib: _mha(lib)(*[lib.ones(S, E)] * 3, attn_mask=lib.zeros(1, S, S)),
    "kpm_shape": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, key_padding_mask=lib.zeros(N, S + 1)),
    "kpm_batch": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, key_padding_mask=lib.zeros(N + 1, S)),
    "kpm_int": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, key_padding_mask=lib.zeros(N, S, dtype=lib.int64)),
    "attn_mask_int": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, attn_mask=lib.zeros(S, S, dtype=lib.int64)),
    "embed_dim": lambda lib: _mha(lib)(*[lib.ones(S, N, E + 1)] * 3),
    "key_value_shapes": lambda lib: _mha(lib)(lib.ones(L, N, E), lib.ones(S, N, E), lib.ones(S + 1, N, E)),
    "separate_key_value": lambda lib: _mha(lib, kdim=KDIM, vdim=VDIM)(
        lib.ones(L, N, E), lib.ones(S, N, KDIM), lib.ones(S + 1, N, VDIM)),
    "separate_weight_shape": lambda lib: _mha(lib, kdim=KDIM)(lib.ones(L, N, E), lib.ones(S, N, E),
                                                              lib.ones(S, N, E)),
    "is_causal_without_mask": lambda lib: _mha(lib)(*[lib.ones(S, N, E)] * 3, is_causal=True),
    "encoder_is_causal_without_mask": lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(E, HEADS, FF), 1)(lib.ones(S, N, E), is_causal=True),
    "transformer_batch": lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, FF)(lib.ones(S, N, E), lib.ones(L, 3, E)),
    "transformer_features": lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, FF)(lib.ones(S, N, E),
                                                                               lib.ones(L, N, E + 1)),
    "functional_bias_k_only": lambda lib: lib.nn.functional.multi_head_attention_forward(
        *[lib.ones(S, N, E)] * 3, E, HEADS, lib.ones(3 * E, E), None, lib.ones(1, 1, E), None, False, 0.0,
        lib.ones(E, E), None),
    "functional_no_in_proj": lambda lib: lib.nn.functional.multi_head_attention_forward(
        *[lib.ones(S, N, E)] * 3, E, HEADS, None, None, None, None, False, 0.0, lib.ones(E, E), None),
    "functional_static_k": lambda lib: lib.nn.functional.multi_head_attention_forward(
        *[lib.ones(S, N, E)] * 3, E, HEADS, lib.ones(3 * E, E), None, None, None, False, 0.0, lib.ones(E, E), None,
        static_k=lib.ones(N * HEADS, S, E)),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    assert _message(gradiente, ERRORS[name]) == _message(torch, ERRORS[name])


# --- training -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
def test_training_steps_match_torch(batch_first):
    """A tiny sequence-to-sequence Transformer (embeddings, masks, dropout, Adam) trained for a few steps from
    the same seed gives the same losses in both libraries."""
    vocab, steps = 7, 5

    def build(lib):
        lib.manual_seed(0)
        embed = lib.nn.Embedding(vocab, E)
        model = lib.nn.Transformer(E, HEADS, 1, 2, FF, dropout=0.2, batch_first=batch_first)
        head = lib.nn.Linear(E, vocab)
        params = [*embed.parameters(), *model.parameters(), *head.parameters()]
        return embed, model, head, lib.optim.Adam(params, lr=1e-2)

    def losses(lib):
        embed, model, head, optimizer = build(lib)
        data = np.random.default_rng(1).integers(0, vocab, (steps, N, S + 1))
        tgt_mask = lib.nn.Transformer.generate_square_subsequent_mask(S)
        padding = lib.from_numpy(np.array([[False] * S, [False] * (S - 1) + [True]]))
        result = []
        for batch in data:
            tokens = lib.from_numpy(batch if batch_first else batch.T.copy())
            src = tokens[:, :-1] if batch_first else tokens[:-1]
            tgt_in, tgt_out = (src, tokens[:, 1:]) if batch_first else (src, tokens[1:])
            out = model(embed(src) * math.sqrt(E), embed(tgt_in), tgt_mask=tgt_mask, src_key_padding_mask=padding,
                        memory_key_padding_mask=padding)
            loss = lib.nn.functional.cross_entropy(head(out).reshape(-1, vocab), tgt_out.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            result.append(loss.item())
        return result

    np.testing.assert_allclose(losses(gradiente), losses(torch), rtol=1e-5)


def test_copied_layers_keep_torch_activation_quirk():
    """PyTorch's TransformerDecoderLayer.__setstate__ gives a copy (as the stacks make) whose activation is a
    module relu to compute with, while it still prints the module; an encoder layer keeps its module."""
    for cls in ("TransformerDecoderLayer", "TransformerEncoderLayer"):
        layers = {lib: copy.deepcopy(getattr(lib.nn, cls)(E, HEADS, FF, activation=lib.nn.GELU()))
                  for lib in LIBS}
        assert repr(layers[gradiente]) == repr(layers[torch])
        assert getattr(layers[gradiente].activation, "__name__", None) == \
            getattr(layers[torch].activation, "__name__", None)
