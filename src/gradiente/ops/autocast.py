"""Autocast: the state behind ``torch.autocast`` and the one mechanism that applies PyTorch's CPU op lists.

Under ``with torch.autocast("cpu"):`` PyTorch runs some ops in lower precision (bfloat16 by default, or float16)
and some in float32, by casting their floating inputs on the way in; every other op runs on whatever dtypes it is
given. The lists are ATen's (``aten/src/ATen/autocast_mode.cpp``, the ``AutocastCPU`` registrations), kept here in
one table, ``POLICIES``. Each listed op is defined with ``@autocast_entry``, which looks the op's policy up once, at
import, and at every call asks one question, whether CPU autocast is on: when it is off (the usual case) the op
runs as it is.

When it is on, the entry casts the op's floating tensor arguments (float64 ones excepted, as PyTorch's
``is_eligible``), through ``cast``, so that autograd records the casts (``ToCopyBackward0``) and gradients reach
float32 leaves in float32. The op then runs with autocast off for the ops it calls (PyTorch excludes the autocast
dispatch key inside an autocast kernel: ``linear`` casting once, not again in the ``addmm`` it calls).

The state is per thread, as PyTorch's (a new thread starts with autocast off). Casts of float32 leaves that require
grad to the lower-precision dtype are cached until the outermost autocast region exits, so a weight used twice is
cast once and both uses share one ``ToCopyBackward0`` (PyTorch's ``cached_cast``).
"""
import functools

from ..core import dtype as dt
from ..core import threads
from ..core.device import DEVICE_TYPES
from ..core.tensor import Tensor
from ..core.warnings_at_caller import SKIPPED_CODE, warn
from .arithmetic import cast

__all__ = ["is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_available",
           "get_autocast_cpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "set_autocast_cpu_dtype",
           "get_autocast_gpu_dtype"]

LOWER_PRECISION_FP, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# PyTorch 2.13's AutocastCPU lists, by the name of our function that implements each op. Ops PyTorch computes
# through a listed one are listed under their own name (einsum and tensordot run bmm/mm, so their results are in
# lower precision too; linalg_vecdot is vecdot). Ops of PyTorch's lists that gradiente lacks (stft,
# the fft and most linalg functions, 3-d pooling) are left out.
POLICIES = {
    **dict.fromkeys(["conv1d", "conv2d", "conv3d", "bmm", "mm", "vecdot", "baddbmm", "addmm", "addbmm", "linear",
                     "matmul", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
                     "scaled_dot_product_attention", "einsum", "tensordot"], LOWER_PRECISION_FP),
    **dict.fromkeys(["binary_cross_entropy", "grid_sample", "polar", "prod", "quantile", "nanquantile", "cdist",
                     "trace", "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse",
                     "lu_solve", "pinverse", "max_unpool2d", "max_unpool3d", "mse_loss", "cosine_embedding_loss",
                     "nll_loss",
                     "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy", "l1_loss",
                     "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss",
                     "multi_margin_loss", "kl_div", "binary_cross_entropy_with_logits"], FP32),
    **dict.fromkeys(["cat", "stack", "index_copy"], PROMOTE),
}

# The dtype each device type's autocast uses when none is given (PyTorch's defaults).
_DEFAULT_DTYPES = {"cpu": "bfloat16", "hpu": "bfloat16", "xla": "bfloat16", "maia": "bfloat16"}
_AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia", "privateuseone")


class _State(threads.local):
    """One thread's autocast settings. ``cpu_on`` is the flag every listed op reads: CPU autocast enabled and not
    inside an autocast op."""

    def __init__(self):
        self.enabled = dict.fromkeys(_AUTOCAST_DEVICES, False)
        self.dtypes = {d: getattr(dt, _DEFAULT_DTYPES.get(d, "float16")) for d in _AUTOCAST_DEVICES}
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}             # id(leaf) -> (leaf, its cast): the leaf is kept so that its id stays unique
        self.cpu_on = False


_state = _State()


def _device_type(device_type):
    """The device type autocast keeps settings for: PyTorch's errors for names that are not device types, and for
    device types without autocast (``meta``)."""
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    if device_type not in _AUTOCAST_DEVICES:
        raise RuntimeError("unsupported scalarType")
    return device_type


def is_autocast_available(device_type):
    """Whether autocast knows ``device_type`` (``torch.amp.is_autocast_available``)."""
    return device_type in _AUTOCAST_DEVICES


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type``; with no argument, PyTorch's legacy meaning: for CUDA."""
    return _state.enabled[_device_type("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` (``set_autocast_enabled(True)`` alone is the legacy CUDA form)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.enabled[_device_type(device_type)] = bool(enabled)
    _state.cpu_on = _state.enabled["cpu"]


def get_autocast_dtype(device_type):
    """The lower-precision dtype autocast casts to on ``device_type`` (bfloat16 on the CPU by default)."""
    return _state.dtypes[_device_type(device_type)]


def set_autocast_dtype(device_type, dtype):
    """Set the dtype autocast casts to on ``device_type``."""
    _state.dtypes[_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    """Whether autocast keeps each weight's cast for the rest of its region (on by default, as in PyTorch)."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    """Turn the cache of casts of weights on or off."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Forget the casts of weights kept so far (leaving the outermost autocast region does it)."""
    _state.cache.clear()


def autocast_increment_nesting():
    """One more autocast region entered; returns how many are open."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    """One autocast region left; returns how many remain open."""
    _state.nesting -= 1
    return _state.nesting


# PyTorch's deprecated device-specific forms, with its DeprecationWarnings.
def _deprecated(old, new):
    warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    """Deprecated form of ``is_autocast_enabled('cpu')``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Deprecated form of ``set_autocast_enabled('cpu', enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated form of ``get_autocast_dtype('cpu')``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Deprecated form of ``set_autocast_dtype('cpu', dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Deprecated form of ``get_autocast_dtype('cuda')``."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


# --- the entry of every listed op ------------------------------------------------------------------------------

def autocast_entry(op):
    """``op`` with its CPU autocast policy applied when CPU autocast is on (``POLICIES[op.__name__]``)."""
    policy = POLICIES[op.__name__]

    @functools.wraps(op)
    def entry(*args, **kwargs):
        if not _state.cpu_on:           # the whole cost of autocast when it is off
            return op(*args, **kwargs)
        return _autocast_call(op, policy, args, kwargs)
    SKIPPED_CODE.add(entry.__code__)    # the ops' warnings still name their caller's line (warnings_at_caller)
    return entry


def _autocast_call(op, policy, args, kwargs):
    state = _state
    lower = state.dtypes["cpu"]
    if policy == LOWER_PRECISION_FP:
        target = lower
    elif policy == FP32:
        target = dt.float32
    else:
        target = _prioritize(lower, args, kwargs)
    args = tuple(_cast_argument(a, target, lower) for a in args)
    kwargs = {k: _cast_argument(v, target, lower) for k, v in kwargs.items()}
    state.cpu_on = False                # the ops this one calls are not autocast again
    try:
        return op(*args, **kwargs)
    finally:
        state.cpu_on = state.enabled["cpu"]


SKIPPED_CODE.add(_autocast_call.__code__)


def _prioritize(lower, args, kwargs):
    """The promote policy's dtype (PyTorch's ``prioritize``): float32 if an eligible argument is float32, else the
    lower-precision dtype; another 16-bit float among the arguments is PyTorch's error."""
    target = lower
    for t in _tensors(args, kwargs):
        if _eligible(t) and target is lower and t.dtype is not lower:
            if t.dtype is not dt.float32:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
            target = dt.float32
    return target


def _eligible(t):
    """Whether autocast casts ``t``: a floating tensor, not float64 (PyTorch's ``is_eligible``)."""
    return t.is_floating_point() and t.dtype is not dt.float64


def _tensors(args, kwargs):
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, Tensor))


def _cast_argument(value, target, lower):
    """A tensor argument cast to ``target`` where PyTorch casts it (floating, not float64); lists of tensors
    (``cat``'s) element by element; anything else as it is."""
    if isinstance(value, Tensor):
        return _cached_cast(value, target, lower)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_cached_cast(v, target, lower) if isinstance(v, Tensor) else v for v in value)
    return value


def _cached_cast(t, target, lower):
    if not _eligible(t) or t.dtype is target:
        return t
    state = _state
    # PyTorch caches only the lower-precision casts of float32 leaves that require grad (weights): keyed by the
    # tensor alone, so a cached cast is reused for the whole outermost region
    cacheable = (state.cache_enabled and target is lower and t.dtype is dt.float32 and t.requires_grad
                 and t.grad_fn is None and not t._is_view())
    if cacheable:
        hit = state.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
    result = cast(t, target)
    if cacheable:
        state.cache[id(t)] = (t, result)
    return result
