"""The top-level functions PyTorch exposes beside ``torch.nn.functional`` (``torch.conv2d``, ``torch.dropout``,
``torch.kl_div``, ...), the top-level forms of in-place Tensor methods (``torch.relu_(x)`` is ``x.relu_()``), and
the random samplers ``torch.poisson``, ``torch.binomial``, ``torch._standard_gamma``, ``torch._sample_dirichlet``.

Their arguments are those of PyTorch's top-level functions, which are ATen's and sometimes differ from
``nn.functional``'s: ``batch_norm`` takes weight and bias before the running statistics and has no defaults, losses
take ``reduction`` as an integer (0 'none', 1 'mean', 2 'sum'), dropout's flag is ``train``, ``embedding`` takes the
weight first. Each wraps the ``nn.functional`` function, imported on first call so that ``import gradiente`` loads
neither ``nn`` nor ``distributions``.
"""
import numpy as np

from .core import dtype as dt
from .core.dtype import scalar_name
from .core.errors import _require_tensor
from .core.record import record, wants_grad, wrap
from .ops.arithmetic import _without_derivative, _ZeroGradBackward

__all__ = [
    # convolution and pooling
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
    "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    # normalization, dropout, embeddings
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout", "feature_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "embedding", "embedding_bag",
    # distances and losses
    "bilinear", "pdist", "pairwise_distance", "cosine_similarity", "kl_div", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
    "binary_cross_entropy_with_logits",
    # activations, shuffles, padding
    "prelu", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "channel_shuffle",
    "native_channel_shuffle", "constant_pad_nd",
    # in-place forms of Tensor methods, and detach
    "relu_", "sigmoid_", "exp_", "exp2_", "expm1_", "log_", "log10_", "log1p_", "log2_", "logit_", "sqrt_", "rsqrt_",
    "square_", "reciprocal_", "abs_", "neg_", "negative_", "floor_", "ceil_", "round_", "trunc_", "fix_", "frac_",
    "sin_", "cos_", "tan_", "sinh_", "cosh_", "tanh_", "asin_", "acos_", "atan_", "asinh_", "acosh_", "atanh_",
    "arcsin_", "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_", "sinc_", "erf_", "erfc_", "i0_",
    "deg2rad_", "rad2deg_", "nan_to_num_", "clamp_", "clamp_min_", "clamp_max_", "clip_", "xlogy_", "gcd_", "lcm_",
    "ldexp_", "detach", "detach_",
    # random samplers
    "poisson", "binomial", "_standard_gamma", "_sample_dirichlet",
]


def _functional():
    """``gradiente.nn.functional``, imported on first use."""
    from .nn import functional
    return functional


def _dropout_impl():
    """``nn.functional``'s dropout kernel, ``_apply(input, p, training, inplace, feature=False, alpha=False)``: the
    top-level forms name every variant by its flags, and do not check ``p`` (PyTorch's C++ does not)."""
    from .ops.nn.dropout import _apply
    return _apply


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(fn_name, reduction):
    """The name of PyTorch's integer reduction code (``at::Reduction``); a code other than 1 or 2 reduces
    nothing, as in PyTorch. A string (``nn.functional``'s spelling) raises PyTorch's error for ``reduction=``
    given by keyword, the usual way."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{fn_name}(): argument 'reduction' must be int, not {type(reduction).__name__}")
    return _REDUCTIONS.get(reduction, "none")


# --- convolution and pooling -------------------------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``nn.functional.conv1d``."""
    return _functional().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``nn.functional.conv2d``."""
    return _functional().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``nn.functional.conv3d``."""
    return _functional().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``nn.functional.conv_transpose1d``."""
    return _functional().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``nn.functional.conv_transpose2d``."""
    return _functional().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def _stride(stride):
    """PyTorch's top-level pools spell "the kernel size" as an empty stride, ``nn.functional``'s as None."""
    return None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``nn.functional.max_pool1d`` (an empty ``stride`` means the kernel size)."""
    return _functional().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``nn.functional.max_pool2d`` (an empty ``stride`` means the kernel size)."""
    return _functional().max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``max_pool1d`` and the flat index of each maximum: ``(output, indices)``."""
    return _functional().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                                    return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    """``nn.functional.avg_pool1d`` (an empty ``stride`` means the kernel size)."""
    return _functional().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """``nn.functional.adaptive_avg_pool1d``."""
    return _functional().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """``nn.functional.adaptive_max_pool1d`` with its indices, always: ``(output, indices)``."""
    return _functional().adaptive_max_pool1d(input, output_size, return_indices=True)


# --- normalization ----------------------------------------------------------------------------------------------

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``nn.functional.batch_norm``, with weight and bias first and every argument required (``cudnn_enabled`` is
    ignored: there is no cuDNN here)."""
    return _functional().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """``nn.functional.instance_norm``, with weight and bias first and every argument required."""
    return _functional().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``nn.functional.layer_norm``."""
    return _functional().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``nn.functional.group_norm``."""
    return _functional().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``nn.functional.rms_norm``."""
    return _functional().rms_norm(input, normalized_shape, weight, eps)


# --- dropout: the flag is ``train``, and ``p`` is not checked here (PyTorch's C++ does not check it) -------------

def dropout(input, p, train):
    """Zero each element with probability ``p`` and scale the rest by 1/(1 - p), when ``train``."""
    return _dropout_impl()(input, p, train, inplace=False)


def dropout_(input, p, train):
    """``dropout`` in place."""
    return _dropout_impl()(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """``nn.functional.alpha_dropout``: dropout that keeps SELU activations' mean and variance."""
    return _dropout_impl()(input, p, train, inplace=False, alpha=True)


def alpha_dropout_(input, p, train):
    """``alpha_dropout`` in place."""
    return _dropout_impl()(input, p, train, inplace=True, alpha=True)


def feature_dropout(input, p, train):
    """Dropout of whole channels: one draw per (N, C) entry of an (N, C, ...) input."""
    return _dropout_impl()(input, p, train, inplace=False, feature=True)


def feature_dropout_(input, p, train):
    """``feature_dropout`` in place."""
    return _dropout_impl()(input, p, train, inplace=True, feature=True)


def feature_alpha_dropout(input, p, train):
    """``alpha_dropout`` of whole channels."""
    return _dropout_impl()(input, p, train, inplace=False, feature=True, alpha=True)


def feature_alpha_dropout_(input, p, train):
    """``feature_alpha_dropout`` in place."""
    return _dropout_impl()(input, p, train, inplace=True, feature=True, alpha=True)


# --- embeddings ---------------------------------------------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``nn.functional.embedding(indices, weight, ...)``: the weight comes first here, and a negative
    ``padding_idx`` means none."""
    return _functional().embedding(indices, weight, padding_idx if padding_idx >= 0 else None, None, 2.0,
                                   scale_grad_by_freq, sparse)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """``nn.functional.embedding_bag`` with ``mode`` a code (0 sum, 1 mean, 2 max), returning PyTorch's four
    results: ``(output, offset2bag, bag_size, max_indices)`` (see ``_bag_bookkeeping``)."""
    output = _functional().embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, _BAG_MODES[mode],
                                         sparse, per_sample_weights, include_last_offset, padding_idx)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return (output, *_bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, padding_idx,
                                       wants_grad(weight, per_sample_weights)))


def _bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, padding_idx, recorded):
    """The side results of PyTorch's CPU ``embedding_bag``, whose shapes follow its kernels' paths: the bag of each
    index (entries past the last offset count in the last bag; empty for sum over float32 without padding_idx,
    PyTorch's fast path), the number of non-padding entries of each bag (mean and max), and for max the weight row
    that gave each maximum. For sum the last two are zeros, one per bag when the result is ``recorded``, else one
    per offset; for mean the last repeats the bag sizes."""
    idx, starts = indices._data.reshape(-1), offsets._data.astype(np.int64)
    bags = len(starts) - 1 if include_last_offset else len(starts)
    int64 = np.int64
    if mode == 0 and padding_idx is None and weight._data.dtype.itemsize <= 4:
        offset2bag = np.zeros(0, int64)
    else:
        offset2bag = np.minimum(np.searchsorted(starts, np.arange(idx.size), side="right") - 1, bags - 1).astype(int64)
    if mode == 0:
        zeros = np.zeros(bags if recorded else len(starts), int64)
        return wrap(offset2bag), wrap(zeros), wrap(zeros.copy())
    counted = idx != padding_idx
    bag_size = np.bincount(offset2bag[counted], minlength=bags).astype(int64)
    if mode == 1:
        return wrap(offset2bag), wrap(bag_size), wrap(bag_size.copy())
    rows = weight._data[idx]
    max_indices = np.zeros((bags, rows.shape[-1]), int64)
    for bag in range(bags):
        members = np.flatnonzero((offset2bag == bag) & counted)
        if members.size:
            max_indices[bag] = idx[members][np.argmax(rows[members], axis=0)]
    return wrap(offset2bag), wrap(bag_size), wrap(max_indices)


# --- distances, bilinear ------------------------------------------------------------------------------------------

def bilinear(input1, input2, weight, bias=None):
    """``nn.functional.bilinear``."""
    return _functional().bilinear(input1, input2, weight, bias)


def pdist(input, p=2):
    """``nn.functional.pdist``."""
    return _functional().pdist(input, p)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """``nn.functional.pairwise_distance``."""
    return _functional().pairwise_distance(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``nn.functional.cosine_similarity``."""
    return _functional().cosine_similarity(x1, x2, dim, eps)


# --- losses: ``reduction`` is an integer code ----------------------------------------------------------------------

def kl_div(input, target, reduction=1, *, log_target=False):
    """``nn.functional.kl_div``, without its warning for 'mean' (the code 1), which PyTorch gives only there."""
    name = _reduction("kl_div", reduction)
    loss = _functional().kl_div(input, target, reduction="none", log_target=log_target)
    return loss.mean() if name == "mean" else loss.sum() if name == "sum" else loss


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``nn.functional.margin_ranking_loss``."""
    name = _reduction("margin_ranking_loss", reduction)
    return _functional().margin_ranking_loss(input1, input2, target, margin, reduction=name)


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """``nn.functional.hinge_embedding_loss``."""
    name = _reduction("hinge_embedding_loss", reduction)
    return _functional().hinge_embedding_loss(input, target, margin, reduction=name)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``nn.functional.cosine_embedding_loss``."""
    name = _reduction("cosine_embedding_loss", reduction)
    return _functional().cosine_embedding_loss(input1, input2, target, margin, reduction=name)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=1):
    """``nn.functional.triplet_margin_loss``."""
    name = _reduction("triplet_margin_loss", reduction)
    return _functional().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=name)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``nn.functional.poisson_nll_loss``, every argument required."""
    name = _reduction("poisson_nll_loss", reduction)
    return _functional().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=name)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """``nn.functional.binary_cross_entropy_with_logits``."""
    name = _reduction("binary_cross_entropy_with_logits", reduction)
    return _functional().binary_cross_entropy_with_logits(input, target, weight, reduction=name, pos_weight=pos_weight)


# --- activations, shuffles, padding -------------------------------------------------------------------------------

def prelu(input, weight):
    """``nn.functional.prelu``."""
    return _functional().prelu(input, weight)


def selu(input):
    """``nn.functional.selu``."""
    return _functional().selu(input)


def selu_(input):
    """``selu`` in place."""
    return _functional().selu_(input)


def celu(input, alpha=1.0):
    """``nn.functional.celu``."""
    return _functional().celu(input, alpha)


def celu_(input, alpha=1.0):
    """``celu`` in place."""
    return _functional().celu_(input, alpha)


def threshold(input, threshold, value):
    """``nn.functional.threshold``: ``value`` where input ≤ threshold, input elsewhere."""
    return _functional().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """``threshold`` in place."""
    return _functional().threshold_(input, threshold, value)


def hardshrink(input, lambd=0.5):
    """``nn.functional.hardshrink``."""
    return _functional().hardshrink(input, lambd)


def channel_shuffle(input, groups):
    """``nn.functional.channel_shuffle``."""
    return _functional().channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """``channel_shuffle``'s values, without a derivative (PyTorch defines none for this form)."""
    from .core.grad_mode import no_grad
    with no_grad():
        result = channel_shuffle(input, groups)
    return _without_derivative("native_channel_shuffle", (input,), result)


def constant_pad_nd(input, pad, value=0):
    """``nn.functional.pad(input, pad, 'constant', value)``."""
    return _functional().pad(input, pad, "constant", value)


# --- the top-level forms of Tensor methods -------------------------------------------------------------------------

def _method_form(name, method=None):
    """``torch.<name>(input, *args)``, which is ``input.<method>(*args)`` (``method`` defaults to ``name``)."""
    method = method or name

    def form(input, *args, **kwargs):
        _require_tensor(name, input, position=1, arg="input")
        return getattr(input, method)(*args, **kwargs)

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"``input.{method}(...)``" + (": computed in place, returns ``input``." if name.endswith("_")
                                                  else ".")
    return form


relu_ = _method_form("relu_")
sigmoid_ = _method_form("sigmoid_")
exp_ = _method_form("exp_")
exp2_ = _method_form("exp2_")
expm1_ = _method_form("expm1_")
log_ = _method_form("log_")
log10_ = _method_form("log10_")
log1p_ = _method_form("log1p_")
log2_ = _method_form("log2_")
logit_ = _method_form("logit_")
sqrt_ = _method_form("sqrt_")
rsqrt_ = _method_form("rsqrt_")
square_ = _method_form("square_")
reciprocal_ = _method_form("reciprocal_")
abs_ = _method_form("abs_")
neg_ = _method_form("neg_")
negative_ = _method_form("negative_")
floor_ = _method_form("floor_")
ceil_ = _method_form("ceil_")
trunc_ = _method_form("trunc_")
fix_ = _method_form("fix_")
frac_ = _method_form("frac_")
sin_ = _method_form("sin_")
cos_ = _method_form("cos_")
tan_ = _method_form("tan_")
sinh_ = _method_form("sinh_")
cosh_ = _method_form("cosh_")
tanh_ = _method_form("tanh_")
asin_ = _method_form("asin_")
acos_ = _method_form("acos_")
atan_ = _method_form("atan_")
asinh_ = _method_form("asinh_")
acosh_ = _method_form("acosh_")
atanh_ = _method_form("atanh_")
# NumPy's names for the inverse functions: aliases, recorded as the functions they name (AsinBackward0)
arcsin_ = _method_form("arcsin_", "asin_")
arccos_ = _method_form("arccos_", "acos_")
arctan_ = _method_form("arctan_", "atan_")
arcsinh_ = _method_form("arcsinh_", "asinh_")
arccosh_ = _method_form("arccosh_", "acosh_")
arctanh_ = _method_form("arctanh_", "atanh_")
sinc_ = _method_form("sinc_")
erf_ = _method_form("erf_")
erfc_ = _method_form("erfc_")
i0_ = _method_form("i0_")
deg2rad_ = _method_form("deg2rad_")
rad2deg_ = _method_form("rad2deg_")
nan_to_num_ = _method_form("nan_to_num_")
clamp_ = _method_form("clamp_")
clamp_min_ = _method_form("clamp_min_")
clamp_max_ = _method_form("clamp_max_")
clip_ = _method_form("clip_")
xlogy_ = _method_form("xlogy_")
gcd_ = _method_form("gcd_")
lcm_ = _method_form("lcm_")
ldexp_ = _method_form("ldexp_")
detach = _method_form("detach")
detach_ = _method_form("detach_")


def round_(input, *, decimals=None):
    """``input.round_()``, or ``input.round_(decimals=decimals)``: computed in place, returns ``input``."""
    _require_tensor("round_", input, position=1, arg="input")
    return input.round_() if decimals is None else input.round_(decimals=decimals)


# --- random samplers (PyTorch's kernels, the same numbers for the same seed) ----------------------------------------

def _samplers():
    """The distributions' element-by-element samplers (PyTorch's kernels), imported on first use."""
    from .ops import samplers as _samplers
    return _samplers


def _check_sampler_dtype(kernel, tensor, half=False):
    """PyTorch's error for a sampler given a dtype its kernel does not cover (float32 and float64; ``half``:
    float16 too)."""
    data = tensor._data
    if dt.kind(data.dtype) != "f" or (data.dtype == np.float16 and not half):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(data.dtype)}'")


def poisson(input, generator=None):
    """Poisson(rate) counts for each rate of ``input``, as floats of its dtype. Differentiable with gradient zero
    (``PoissonBackward0``), as in PyTorch."""
    _require_tensor("poisson", input, position=1, arg="input")
    _check_sampler_dtype("poisson_cpu", input, half=True)
    result = wrap(_samplers().poisson(input._data, generator))
    if wants_grad(input):
        record(_ZeroGradBackward.named("PoissonBackward0"), (input,), result)
    return result


def binomial(count, prob, generator=None):
    """Binomial(count, prob) counts, count and prob of one float dtype. Not differentiable: backward raises, as in
    PyTorch."""
    for tensor, name in ((count, "count"), (prob, "prob")):
        if dt.kind(tensor._data.dtype) != "f":
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{scalar_name(tensor._data.dtype)}")
    if count._data.dtype != prob._data.dtype:
        raise RuntimeError(f"Found dtype {scalar_name(prob._data.dtype)} but expected "
                           f"{scalar_name(count._data.dtype)}")
    _check_sampler_dtype("binomial_cpu", prob)
    result = wrap(_samplers().binomial(count._data, prob._data, generator))
    return _without_derivative("binomial", (count, prob), result)


def _standard_gamma(input, generator=None):
    """Gamma(α, 1) samples for each α of ``input``, differentiable in α (implicit reparameterization)."""
    _check_sampler_dtype("gamma_cpu", input)
    from .ops.sampling import standard_gamma
    return standard_gamma(input, generator)


def _sample_dirichlet(input, generator=None):
    """Dirichlet samples over the last dim of ``input`` (the concentrations). Not differentiable here, as in
    PyTorch (``distributions.Dirichlet.rsample`` is)."""
    _check_sampler_dtype("dirichlet", input)
    result = wrap(_samplers().sample_dirichlet(input._data, generator))
    return _without_derivative("_sample_dirichlet", (input,), result)


# --- issue 16 (s4-nnloss): torch.ctc_loss ---------------------------------------------------------------------------

def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False):
    """``nn.functional.ctc_loss`` with ``reduction`` as ATen's integer code (0 'none', 1 'mean', 2 'sum')."""
    from .ops.nn.ctc_loss import ctc_loss_reduced
    return ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank,
                            _reduction("ctc_loss", reduction), zero_infinity)


__all__ += ["ctc_loss"]
