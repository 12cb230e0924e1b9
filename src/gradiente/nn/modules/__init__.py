"""The layers of ``torch.nn``: ``Module`` and containers, then one file per layer family."""
from . import resampling as _resampling
from . import rnn as _rnn
from . import transformer as _transformer
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .batchnorm import BatchNorm1d, BatchNorm2d
from .channelshuffle import ChannelShuffle
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .instancenorm import InstanceNorm1d, InstanceNorm2d
from .linear import Bilinear, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
    MaxUnpool1d,
    MaxUnpool2d,
)
from .resampling import *
from .rnn import *
from .sparse import Embedding, EmbeddingBag
from .transformer import *

__all__ = [
    "Module", "register_module_forward_hook", "register_module_forward_pre_hook",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "Flatten", "Unflatten",
    "Threshold", "ReLU", "ReLU6", "Hardtanh", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish",
    "Sigmoid", "Tanh", "LogSigmoid", "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "Tanhshrink", "Softshrink",
    "Hardshrink", "GLU", "Softmax", "Softmin", "LogSoftmax", "Softmax2d",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d",
    "InstanceNorm2d", "LocalResponseNorm", "RMSNorm",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "MaxUnpool1d", "MaxUnpool2d",
    "PairwiseDistance", "CosineSimilarity", "ChannelShuffle",
    "L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "HuberLoss", "SmoothL1Loss",
    "KLDivLoss", "SoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
    "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
]
__all__ += _transformer.__all__ + _resampling.__all__ + _rnn.__all__

# --- issue 16: the 3-D layers, power-average pooling, Container, NLLLoss2d, TripletMarginWithDistanceLoss ---
from . import lazy as _lazy  # noqa: E402
from . import legacy_and_distance_losses as _legacy_and_distance_losses  # noqa: E402
from . import pooling3d as _pooling3d  # noqa: E402
from .batchnorm import BatchNorm3d  # noqa: E402
from .conv import ConvTranspose3d  # noqa: E402
from .instancenorm import InstanceNorm3d  # noqa: E402
from .lazy import *  # noqa: E402
from .legacy_and_distance_losses import *  # noqa: E402
from .pooling3d import *  # noqa: E402

__all__ += ["BatchNorm3d", "ConvTranspose3d", "InstanceNorm3d"]
__all__ += _pooling3d.__all__ + _legacy_and_distance_losses.__all__ + _lazy.__all__
# --- end issue 16 ------------------------------------------------------------------------------------------------

# --- issue 16 (s4-nnloss): CTC, adaptive softmax, fractional max pooling, CrossMapLRN2d, linear cross entropy ---
from . import adaptive as _adaptive  # noqa: E402
from . import ctc as _ctc  # noqa: E402
from . import fractional_pooling as _fractional_pooling  # noqa: E402
from .adaptive import *  # noqa: E402
from .cross_map_lrn import CrossMapLRN2d  # noqa: E402
from .ctc import *  # noqa: E402
from .fractional_pooling import *  # noqa: E402
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: E402

__all__ += _ctc.__all__ + _adaptive.__all__ + _fractional_pooling.__all__ + ["CrossMapLRN2d"]
__all__ += ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
# --- end s4-nnloss -----------------------------------------------------------------------------------------------

# --- PyTorch's module layout: each class also under the submodule PyTorch defines it in --------------------------
# (torch.nn.modules.activation.MultiheadAttention, torch.nn.modules.linear.NonDynamicallyQuantizableLinear ...), which
# programs name when they allowlist a whole pickled model for loading (``serialization.safe_globals``). The classes
# are defined where they fit here; these are second names for them, not copies.
from . import fold, pixelshuffle, upsampling  # noqa: E402  (modules of their own, as PyTorch's)


def _give_pytorch_homes():
    import importlib
    homes = {
        "activation": ("RReLU", "MultiheadAttention"),
        "batchnorm": ("LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"),
        "container": ("Container",),
        "conv": ("LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
                 "LazyConvTranspose3d"),
        "instancenorm": ("LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"),
        "linear": ("NonDynamicallyQuantizableLinear", "LazyLinear"),
        "loss": ("NLLLoss2d", "MultiLabelMarginLoss", "LinearCrossEntropyLoss", "TripletMarginWithDistanceLoss",
                 "CTCLoss"),
        "normalization": ("CrossMapLRN2d",),
        "pooling": ("MaxPool3d", "MaxUnpool3d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d",
                    "LPPool2d", "LPPool3d", "AdaptiveMaxPool3d", "AdaptiveAvgPool3d"),
    }
    from .transformer import NonDynamicallyQuantizableLinear
    defined = {**globals(), "NonDynamicallyQuantizableLinear": NonDynamicallyQuantizableLinear}
    for module_name, names in homes.items():
        module = importlib.import_module(f".{module_name}", __name__)
        for name in names:
            if name in defined and not hasattr(module, name):
                setattr(module, name, defined[name])


_give_pytorch_homes()
# --- end of PyTorch's module layout --------------------------------------------------------------------------------
