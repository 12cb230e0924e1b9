"""Stateless neural-network functions, as ``torch.nn.functional``: activations, softmax, linear, dropout,
losses, padding, one-hot, distances, convolution, pooling, normalization, embedding bags and attention.

Each function records the same backward nodes as PyTorch: a dedicated node where PyTorch has one
(``GeluBackward0``, ``NllLossBackward0``, ``BinaryCrossEntropyWithLogitsBackward0``, ...), otherwise the
composition PyTorch itself records (``l1_loss`` is ``MeanBackward0`` over ``AbsBackward0`` over
``SubBackward0``). The implementations live in ``ops/nn/``, one module per family:

* ``activations``: relu, leaky_relu, gelu, elu, selu, celu, silu, mish, softplus, logsigmoid, hardtanh, glu,
  prelu, soft/hardshrink, ...
* ``gradiente.ops.softmax``: softmax, log_softmax (also ``Tensor.softmax``); softmin composes them
* ``linear``: linear, bilinear;  ``dropout``: dropout and its channel-wise and alpha variants
* ``losses``: mse, l1, smooth_l1, huber, kl_div, binary_cross_entropy (with logits), poisson and gaussian nll
* ``margin``: soft_margin, multi_margin, margin_ranking, hinge/cosine embedding, triplet, multilabel_soft_margin
* ``classification``: nll_loss, cross_entropy;  ``padding``: pad;  ``sparse``: one_hot
* ``distance``: normalize, cosine_similarity, pairwise_distance, pdist
* ``convolution``: conv1d/2d/3d, conv_transpose1d/2d (all on ``convolution``'s matrix products over
  strided windows), max/avg_pool1d/2d, adaptive_avg_pool1d/2d
* ``max_pooling``: adaptive_max_pool1d/2d (and their ``_with_indices`` forms), max_unpool1d/2d
* ``normalization``: instance_norm, local_response_norm, rms_norm
* ``embedding_bag``: embedding_bag;  ``channel_shuffle``: channel_shuffle
* ``attention``: scaled_dot_product_attention, multi_head_attention_forward
* from their own modules beside nn's layers: ``ops.nn.normalization`` (layer_norm, batch_norm, group_norm),
  ``ops.nn.embedding`` (embedding)
"""
from ..core.tensor import Tensor  # noqa: F401 - torch.nn.functional.Tensor is torch.Tensor
from ..core.warnings_at_caller import warn as _warn
from ..ops import softmax as _softmax_ops
from ..ops.nn.activations import (  # noqa: F401
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from ..ops.nn.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401  # noqa: F401
from ..ops.nn.channel_shuffle import channel_shuffle  # noqa: F401  # noqa: F401
from ..ops.nn.classification import cross_entropy, nll_loss  # noqa: F401  # noqa: F401
from ..ops.nn.convolution import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d  # noqa: F401
from ..ops.nn.distance import cosine_similarity, normalize, pairwise_distance, pdist  # noqa: F401  # noqa: F401
from ..ops.nn.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout  # noqa: F401  # noqa: F401
from ..ops.nn.embedding import embedding  # noqa: F401  # noqa: F401
from ..ops.nn.embedding_bag import embedding_bag  # noqa: F401  # noqa: F401
from ..ops.nn.linear import bilinear, linear  # noqa: F401  # noqa: F401
from ..ops.nn.losses import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from ..ops.nn.margin import (  # noqa: F401
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from ..ops.nn.max_pooling import (  # noqa: F401
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    max_unpool1d,
    max_unpool2d,
)
from ..ops.nn.normalization import batch_norm, group_norm, layer_norm  # noqa: F401  # noqa: F401
from ..ops.nn.normalization_composed import instance_norm, local_response_norm, rms_norm  # noqa: F401  # noqa: F401
from ..ops.nn.padding import pad  # noqa: F401  # noqa: F401
from ..ops.nn.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d  # noqa: F401
from ..ops.nn.resampling import *  # noqa: F403  # noqa: F403
from ..ops.nn.sparse import one_hot  # noqa: F401  # noqa: F401


def _softmax_dim(name, ndim, stacklevel):
    # ops' warn: the sparse-dispatch wrapper around these functions is a frame the stacklevel does not count
    _warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
          "an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """e^x / Σ e^x along ``dim`` (``SoftmaxBackward0``); ``dtype`` casts the input first. Without ``dim``,
    PyTorch's deprecated implicit choice (0 for 0-, 1- and 3-dimensional inputs, else 1), with its warning."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _softmax_ops.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably (``LogSoftmaxBackward0``)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _softmax_ops.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _softmax_ops.softmax(-input, dim, dtype)

# --- issue 16: 3-D convolution and pooling, power-average pooling, pools with indices, triplet loss ---
from ..functional_aliases import native_channel_shuffle  # noqa: F401, E402  (ATen-level, also in nn.functional)
from ..ops.nn.aten_nn import conv_tbc  # noqa: F401, E402  (ATen-level, also in nn.functional)
from ..ops.nn.convolution import conv_transpose3d  # noqa: F401, E402
from ..ops.nn.gumbel import gumbel_softmax  # noqa: F401, E402
from ..ops.nn.lp_pooling import lp_pool1d, lp_pool2d, lp_pool3d  # noqa: F401, E402
from ..ops.nn.multilabel_margin import multilabel_margin_loss  # noqa: F401, E402
from ..ops.nn.pooling import max_pool1d_with_indices, max_pool2d_with_indices  # noqa: F401, E402
from ..ops.nn.pooling3d import (  # noqa: F401, E402
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool3d,
)
from ..ops.nn.triplet_distance import triplet_margin_with_distance_loss  # noqa: F401, E402

# --- end issue 16 ----------------------------------------------------------------------------------------------

#: grid_sample's modes by name, as PyTorch numbers them for its kernels
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

# --- issue 16 (s4-nnloss): CTC loss, fractional max pooling, linear_cross_entropy ---
# --- end s4-nnloss ---
# --- issue 13 (s5-sparseops): a sparse argument never reaches a dense function (gradiente/sparse_dispatch.py)
from .. import sparse_dispatch as _sparse_dispatch  # noqa: E402
from ..ops.nn.ctc_loss import ctc_loss  # noqa: F401, E402
from ..ops.nn.fractional_pooling import (  # noqa: F401, E402
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ..ops.nn.linear_cross_entropy import linear_cross_entropy  # noqa: F401, E402

_sparse_dispatch.guard_namespace(globals())
# --- end s5-sparseops
