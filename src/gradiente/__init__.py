"""gradiente: automatic differentiation over NumPy with PyTorch's API, name for name.

    import gradiente as torch
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    (x ** 2).sum().backward()
    x.grad                       # tensor([2., 4., 6.])

Heavier parts (``nn``, ``optim``, ``utils``, ``viz``, ``autograd.functional``) load on first use, so
``import gradiente`` costs little beyond importing NumPy.
"""
import importlib as _importlib
import warnings as _warnings
from math import e, inf, nan, pi
from sys import modules as _sys_modules

from . import autograd
from . import ops as _ops
from . import sparse_dispatch as _sparse_dispatch  # issue 13: sparse arguments to dense functions
from . import tensor_methods as _tensor_methods  # binds every op to its Tensor method names
from ._config import *
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .core import return_types
from .core.creation import *
from .core.creation import __all__ as _creation_all
from .core.dtype import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
    uint16,  # the wide unsigned dtypes (issue 16)
    uint32,
    uint64,
)
from .core.dtype import result_type as _result_type
from .core.grad_mode import *
from .core.layouts import *
from .core.layouts import __all__ as _layouts_all
from .core.printing import set_printoptions
from .core.random import (
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from .core.size import Size
from .core.storage import TypedStorage, UntypedStorage, from_file, resize_as_  # from_file, resize_as_: issue 16
from .core.tensor import Tensor, device, is_inference, is_tensor
from .core.windows import *
from .functional_aliases import *
from .learner import LearnerWarning, is_learner_mode_enabled, learner_mode  # gradiente's own: not in PyTorch
from .ops.arithmetic import *
from .ops.autocast import *
from .ops.binary_math import *
from .ops.comparison import *
from .ops.complex_numbers import *
from .ops.conversions import as_tensor, asarray
from .ops.einsum import einsum
from .ops.fill import *
from .ops.indexing import *
from .ops.joining import *
from .ops.linalg_householder import geqrf, orgqr, ormqr  # issue 16 (Tensor.geqrf... load the module anyway)
from .ops.matmul import *
from .ops.products import *
from .ops.rearranging import *
from .ops.reductions import *
from .ops.scattering import *
from .ops.selection import *
from .ops.softmax import log_softmax, softmax
from .ops.sorting import *
from .ops.sorting import aten_unique as _unique
from .ops.sorting import aten_unique2 as _unique2
from .ops.special import igamma, igammac, mvlgamma
from .ops.unary import *
from .ops.view_copies import *
from .ops.views import *
from .ops.views import as_strided_  # issue 16
from .tensor_extras import is_distributed
from .version import __version__


def _silence_numpy_float_warnings():
    """NumPy reports floating-point events (log(0), 0/0, overflow) as RuntimeWarnings where PyTorch computes
    the same inf or nan silently. Those raised inside gradiente are silenced, so that a program prints what it
    prints under PyTorch; the user's own NumPy code keeps its warnings (the filter matches gradiente's modules)."""
    _warnings.filterwarnings("ignore", message=r"(divide by zero|invalid value|overflow|underflow) encountered",
                             category=RuntimeWarning, module=r"gradiente\.")


_silence_numpy_float_warnings()

newaxis = None      # as NumPy's: x[:, newaxis] adds a dim
# NumPy's names of the inverse trigonometric functions, which PyTorch also takes
absolute, arccos, arccosh, arcsin, arcsinh, arctan, arctanh = (abs, acos, acosh, asin, asinh, atan,  # noqa: F405
                                                             atanh)  # noqa: F405

_LAZY_SUBMODULES = ("_C", "_VF", "nn", "optim", "utils", "viz", "explain", "linalg", "testing", "special",
                    "distributions", "func", "cuda", "accelerator", "mps", "backends", "distributed", "onnx",
                    "compiler", "profiler", "fft", "_vmap_internals", "amp", "cpu", "random", "sparse",
                    "multiprocessing", "jit", "serialization", "fx")
_LAZY_SUBMODULES += ("functional",)     # torch.functional, the module of einsum, split, norm ... (issue 16)
_LAZY_SUBMODULES += ("_dynamo",)       # the compiler front end scripts configure around torch.compile
_LAZY_SUBMODULES += ("xpu",)           # Intel GPUs: a program asks whether there is one
_LAZY_SUBMODULES += ("__future__",)    # the module-conversion switches (recipes/swap_tensors)
_LAZY_SUBMODULES += ("hub",)           # the weights' cache and download, and the progress bar scripts import


def result_type(tensor1, tensor2):
    """The dtype that an operation on ``tensor1`` and ``tensor2`` (tensors or numbers) would produce, by
    PyTorch's type promotion."""
    return _result_type(tensor1, tensor2)


def is_floating_point(input):
    """True if ``input``'s dtype is a floating-point dtype (float16, bfloat16, float32 or float64)."""
    return input.is_floating_point()


def numel(input):
    """The number of elements of ``input`` (the product of its sizes)."""
    return input.numel()


# Functions loaded on first use, by module: what few programs call need not cost every program its import time
# (issue 14). ``tests/test_architecture.py`` holds each list equal to its module's ``__all__``.
_LOADED_ON_FIRST_USE = {
    "ops.nn.aten_nn": ("convolution", "conv_transpose3d", "conv_tbc", "max_pool3d", "affine_grid_generator",
                       "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "embedding_renorm_", "native_dropout",
                       "native_batch_norm", "native_layer_norm", "native_group_norm"),
    "ops.nn.aten_rnn": ("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
                        "rnn_relu_cell"),
    "ops.linalg_lobpcg": ("lobpcg",),
    "ops.legacy_linalg": ("cholesky", "cholesky_inverse", "cholesky_solve", "eig", "lstsq", "lu", "lu_solve",
                          "lu_unpack", "matrix_exp", "matrix_rank", "qr", "solve", "svd", "symeig",
                          "triangular_solve"),
    "ops.spectral": ("stft", "istft"),
    "ops.statistics": ("bincount", "corrcoef", "cov", "histogram", "histc"),
    "ops.histogramdd": ("histogramdd",),
    "ops.linalg_old_norms": ("frobenius_norm", "native_norm", "nuclear_norm"),
    "ops.numerical_gradient": ("gradient",),
    "device_module": ("get_device_module",),
    "random": ("thread_safe_generator",),
    "ops.hashing": ("hash_tensor",),
    "ops.slice_inverse": ("slice_inverse",),
    "ops.sparse_products": ("dsmm", "smm", "hsmm", "hspmm", "saddmm", "sspaddmm"),
    "ops.nn.weight_norm": ("_weight_norm", "norm_except_dim"),
    "ops.sparse_compressed": ("sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
                              "sparse_bsc_tensor", "crow_indices_copy", "col_indices_copy", "ccol_indices_copy",
                              "row_indices_copy"),
}

_LAZY_ATTRIBUTES = {"save": "serialization", "load": "serialization", "pixel_shuffle": "nn.functional",
                    "pixel_unshuffle": "nn.functional", "rrelu": "nn.functional", "rrelu_": "nn.functional",
                    "OutOfMemoryError": "cuda", "compile": "compiler",
                    "vmap": "func", "autocast": "amp", "GradScaler": "amp", "range": "legacy",
                    "set_default_tensor_type": "legacy",
                    # the sparse COO constructors and product (the module's __all__ is empty: gradiente.sparse's)
                    "sparse_coo_tensor": "ops.sparse_coo", "resize_as_sparse_": "ops.sparse_coo",
                    "spmm": "ops.sparse_coo",
                    **{name: module for module, names in _LOADED_ON_FIRST_USE.items() for name in names}}


def _as_torch_level(name, value):
    """A function as ``torch.<name>`` gives it: taking ``axis``/``keepdims`` where PyTorch's does
    (``numpy_names.py``), and behind the sparse check, so that a sparse argument never reaches a dense function
    (issue 13, ``sparse_dispatch.py``: PyTorch's sparse result or its error)."""
    if value.__module__.startswith("gradiente.ops"):
        from .numpy_names import accept_numpy_names
        value = accept_numpy_names(value, name)
    loaded = {name: value}
    _sparse_dispatch.guard_namespace(loaded)
    return loaded[name]


def _is_wrapped_function(name, value):
    return not name.startswith("_") and callable(value) and not isinstance(value, type) and \
        (getattr(value, "__module__", None) or "").startswith("gradiente")


#: the torch-level functions, by name, until a program first looks each up: ``__getattr__`` then gives it as
#: ``_as_torch_level`` makes it and keeps it in the namespace. Making all of them at import cost an eighth of
#: ``import gradiente`` (issue 14); a program looks up a few dozen.
_MADE_ON_FIRST_USE = {name: value for name, value in globals().items() if _is_wrapped_function(name, value)}
for _name in _MADE_ON_FIRST_USE:
    del globals()[_name]
del _name
#: what ``from gradiente import *`` takes: the public names, those made on first use included
__all__ = [name for name in sorted({*globals(), *_MADE_ON_FIRST_USE}) if not name.startswith("_")]


def _make_every_function():
    """Make every torch-level function now (the profiler and vmap swap what the namespace holds)."""
    for name in _MADE_ON_FIRST_USE:
        getattr(_sys_modules[__name__], name)


def __getattr__(name):
    if name in _MADE_ON_FIRST_USE:
        value = globals()[name] = _as_torch_level(name, _MADE_ON_FIRST_USE[name])
        return value
    if name in _LAZY_ATTRIBUTES:
        value = getattr(_importlib.import_module(f".{_LAZY_ATTRIBUTES[name]}", __name__), name)
        if _is_wrapped_function(name, value) and value.__module__.startswith("gradiente.ops"):
            value = _as_torch_level(name, value)
        globals()[name] = value
        return value
    if name in _LAZY_SUBMODULES:
        module = _importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'gradiente' has no attribute '{name}'")


def __dir__():
    # (what loads on first use is listed too, as PyTorch lists its submodules and functions)
    return sorted(set(globals()) | set(_MADE_ON_FIRST_USE) | set(_LAZY_SUBMODULES) | set(_LAZY_ATTRIBUTES))
