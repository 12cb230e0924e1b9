"""Attention and Transformer layers: ``MultiheadAttention``, ``TransformerEncoderLayer``,
``TransformerDecoderLayer``, the stacks ``TransformerEncoder`` and ``TransformerDecoder``, and ``Transformer``
(an encoder and a decoder).

Every layer is composed from other layers (``Linear``, ``LayerNorm``, ``Dropout``) and from
``F.multi_head_attention_forward``, so it needs no backward code. Parameter names, shapes, registration order
and initial values for a given seed are PyTorch's, and so are reprs and the random numbers dropout draws.

PyTorch's eval-mode fast paths (fused kernels, nested tensors) are not reproduced: the layers always compute
PyTorch's ordinary path. Where a fast path gives different *values*, we give those values:
``TransformerEncoderLayer`` there reads float masks as boolean (nonzero: masked) and a tanh-approximated
``GELU`` module as the exact gelu (see ``_takes_fused_path``), and ``TransformerEncoder`` with a padding
mask runs each sequence as its first unpadded tokens and leaves zeros at the padded positions (see
``TransformerEncoder._nested_padding``). ``enable_nested_tensor`` is accepted and decides those cases, as in
PyTorch, but no nested tensor is ever made. One difference remains: a query whose every key is masked gets
NaN from PyTorch's fused kernels, and here the ordinary path's value.
"""
import copy
import warnings

import gradiente

from ...core import grad_mode
from ...core.creation import empty
from ...ops.nn.attention import _canonical_mask, _none_or_dtype
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .activation import GELU, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj`` (which keeps its quantization
    tools off it); here only the printed name differs."""


# --- multi-head attention -----------------------------------------------------------------------------------
def _sequence_first(query, key, value):
    """(N, L, E) inputs as (L, N, E), keeping inputs that were one tensor one tensor: the in-projection does
    one matmul for self-attention (query is key is value) and one for key and value when key is value."""
    if key is value:
        if query is key:
            query = key = value = query.transpose(1, 0)
        else:
            query, key = query.transpose(1, 0), key.transpose(1, 0)
            value = key
    else:
        query, key, value = (x.transpose(1, 0) for x in (query, key, value))
    return query, key, value


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads, each over ``embed_dim // num_heads`` features (Vaswani et al., 2017).

    Inputs are sequence first, ``(L, N, E)``, or ``(N, L, E)`` with ``batch_first`` (``(L, E)`` unbatched);
    ``kdim``/``vdim`` let key and value have other widths (then ``q_proj_weight``, ``k_proj_weight``,
    ``v_proj_weight`` replace ``in_proj_weight``). ``add_bias_kv`` appends learned ``bias_k``/``bias_v`` to the
    keys and values, ``add_zero_attn`` a zero key and value. Returns ``(attn_output, attn_weights)``; see
    ``F.multi_head_attention_forward``. Always PyTorch's ordinary path, never its eval-mode fused kernel: the
    same values to rounding, except for a query whose every key is masked (the fused kernel gives NaN, the
    ordinary path with ``need_weights=False`` the output bias)."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype=dtype, device=device))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), dtype=dtype, device=device))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), dtype=dtype, device=device))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), dtype=dtype, device=device))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype, device=device))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype, device=device)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), dtype=dtype, device=device))
            self.bias_v = Parameter(empty((1, 1, embed_dim), dtype=dtype, device=device))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        """Xavier-uniform projections, zero biases, Xavier-normal ``bias_k``/``bias_v`` (``out_proj.weight``
        keeps Linear's initialization)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        batched_first = self.batch_first and query.dim() == 3
        if batched_first:
            query, key, value = _sequence_first(query, key, value)
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = {"use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
                        "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        attn_output, attn_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if batched_first:
            attn_output = attn_output.transpose(1, 0)
        return attn_output, attn_weights


# --- helpers of the Transformer layers ----------------------------------------------------------------------
def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The (sz, sz) additive causal mask: 0 on and below the diagonal, -inf above."""
    return gradiente.triu(gradiente.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; when it is None, whether ``mask`` equals the causal mask of its size."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        causal = _generate_square_subsequent_mask(size if size is not None else mask.size(-2), dtype=mask.dtype)
        make_causal = mask.size() == causal.size() and bool((mask == causal).all())
    return make_causal


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _as_boolean(mask, dtype):
    """A float mask read as PyTorch's fused kernels read it: any nonzero entry masks (-inf), zero attends."""
    return None if mask is None else _canonical_mask(mask != 0, "mask", None, "", dtype, check_other=False)


def _needs_grad(tensors):
    return grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _encoder_layer_tensors(layer):
    """The tensors whose ``requires_grad`` keeps PyTorch off its fused encoder-layer kernel."""
    attn = layer.self_attn
    return (attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias, layer.norm1.weight,
            layer.norm1.bias, layer.norm2.weight, layer.norm2.bias, layer.linear1.weight, layer.linear1.bias,
            layer.linear2.weight, layer.linear2.bias)


def _fused_blocker(layer, name="encoder_layer", nested=True):
    """Why the configuration of ``layer`` keeps PyTorch off its fused encoder-layer kernel (and, with ``nested``,
    off its nested-tensor path, which ``norm_first`` also blocks), or "" when it does not: PyTorch's words,
    which its ``enable_nested_tensor`` warning prints."""
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if nested and layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


def _takes_fused_path(layer, src):
    """Whether PyTorch runs this call of an encoder layer through its fused kernel: a suitable configuration,
    eval mode, a batched input, no hooks, no gradient wanted."""
    return (not _fused_blocker(layer, nested=False) and src.dim() == 3 and not layer.training
            and not any(m._forward_hooks or m._forward_pre_hooks for m in layer.modules())
            and not _needs_grad((src, *_encoder_layer_tensors(layer))))


def _add_sublayers(layer, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, dtype, device,
                   blocks):
    """Register, in PyTorch's order (which fixes the random draws and the state_dict), the feed-forward network
    (``linear1``, ``dropout``, ``linear2``), then a LayerNorm (``norm1``, ...) and a Dropout (``dropout1``, ...)
    for each of the ``blocks`` residual blocks."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype, device=device)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype, device=device)
    layer.norm_first = norm_first
    for i in range(1, blocks + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype, device=device))
    for i in range(1, blocks + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))


# --- the layers -----------------------------------------------------------------------------------------------
class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network (linear, activation, linear), each with dropout, a residual
    connection and a LayerNorm: after the residual sum (default) or, with ``norm_first``, before the block.
    Input ``(S, N, E)``, ``(N, S, E)`` with ``batch_first``, or ``(S, E)``."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype, device=device)
        _add_sublayers(self, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, dtype, device,
                       blocks=2)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # PyTorch's fused kernel knows only these two; the flag decides whether it may be used
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """``src_mask`` ``(S, S)`` or ``(N·nhead, S, S)``, ``src_key_padding_mask`` ``(N, S)``: boolean (True:
        masked) or additive. ``is_causal`` is a hint that ``src_mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        activation = self.activation
        if _takes_fused_path(self, src):
            # PyTorch's fused kernel reads float masks as boolean, and knows only exact relu and gelu
            src_mask = _as_boolean(src_mask, src.dtype)
            src_key_padding_mask = _as_boolean(src_key_padding_mask, src.dtype)
            activation = F.gelu if self.activation_relu_or_gelu == 2 else F.relu
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x), activation)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x, activation))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x, activation=None):
        x = self.linear2(self.dropout((activation or self.activation)(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to ``memory`` (the encoder's output), then a
    feed-forward network; each with dropout, a residual connection and a LayerNorm (after, or with
    ``norm_first`` before)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            dtype=dtype, device=device)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, dtype=dtype, device=device)
        _add_sublayers(self, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, dtype, device,
                       blocks=3)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def __setstate__(self, state):
        # PyTorch's, for old checkpoints: a state without an "activation" entry gets relu. A module activation
        # lives in _modules, not in the state, so a copy (the stacks deep-copy their layer) computes with relu
        # while still printing the module; we keep that, so the values stay PyTorch's.
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies: independent parameters, the same initial values)
    applied in turn, then ``norm`` if given.

    ``enable_nested_tensor`` and ``mask_check`` are accepted and, as in PyTorch, decide when the padded
    positions of the output hold zeros (see ``_nested_padding``); no nested tensor is made."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _fused_blocker(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def _nested_padding(self, src, mask, src_key_padding_mask):
        """Where PyTorch would run the stack on a nested tensor (its fast path: eval mode, a padding mask, no
        attention mask, no gradient wanted), the (N, S) boolean mask of the positions that path drops, else
        None. That path keeps each sequence's first k tokens, k its number of unpadded (zero) mask entries,
        and returns zeros at the others."""
        first = self.layers[0]
        if (not self.use_nested_tensor or first.training or src.dim() != 3 or src_key_padding_mask is None
                or mask is not None):
            return None
        keep = src_key_padding_mask.logical_not()
        if self.mask_check and bool((keep[:, 1:] & ~keep[:, :-1]).any()):
            return None         # not left-aligned: a kept token after a padded one
        if _needs_grad((src, *_encoder_layer_tensors(first))):
            return None
        lengths = keep.sum(1, keepdim=True)
        return gradiente.arange(src.shape[1]).unsqueeze(0) >= lengths

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """``mask`` ``(S, S)`` or ``(N·nhead, S, S)``, ``src_key_padding_mask`` ``(N, S)``: boolean (True:
        masked) or additive. ``is_causal=None`` detects whether ``mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        dropped = self._nested_padding(src, mask, src_key_padding_mask)
        if dropped is not None:
            # PyTorch's nested-tensor layers ignore is_causal (there is no mask for it to describe)
            src_key_padding_mask, is_causal = dropped, False
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if dropped is not None:
            output = output.masked_fill(dropped.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn to the target (each attending to
    ``memory``), then ``norm`` if given."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """``tgt_is_causal=None`` detects whether ``tgt_mask`` is the causal mask."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder over ``src`` and a decoder over ``tgt`` attending to the encoder's output (Vaswani et al.,
    2017), each a stack of layers ending in a LayerNorm. Every parameter with two or more dimensions is
    re-initialized Xavier-uniform, as in PyTorch."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, dtype=dtype,
                                                    device=device)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype, device=device)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, dtype=dtype,
                                                    device=device)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype, device=device)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """``src (S, N, E)``, ``tgt (T, N, E)`` (batch first with ``batch_first``) give ``(T, N, E)``. Masks as in
        the layers; ``tgt_mask`` is usually ``generate_square_subsequent_mask(T)``."""
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The (sz, sz) causal mask: 0 where position i may attend (j <= i), -inf above the diagonal."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
