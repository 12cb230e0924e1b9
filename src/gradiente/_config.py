"""Process settings and type facts that PyTorch scripts ask for: threads, determinism, matmul precision,
the default device, warnings, denormals; ``finfo``/``iinfo``; and small questions about dtypes and
tensors (``can_cast``, ``is_complex``, ``is_signed``, ``is_nonzero``, ``is_same_size``, ``typename``,
``broadcast_shapes``).

gradiente computes with NumPy on one thread of its own: most settings are only remembered, and code that sets
and reads them behaves as under PyTorch. Each docstring says what a setting really changes.
"""
import math
import os
import warnings

import numpy as np

from .core import device as _devices
from .core import dtype as dt
from .core.creation import tensor
from .core.size import Size
from .core.tensor import Tensor

__all__ = [
    "set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_default_device", "get_default_device",
    "set_warn_always", "is_warn_always_enabled", "set_flush_denormal",
    "finfo", "iinfo", "can_cast", "is_complex", "is_signed", "is_nonzero", "is_same_size", "typename",
    "broadcast_shapes", "has_lapack", "has_mkl", "has_openmp", "has_spectral", "init_num_threads", "get_device",
    "is_storage",
]

# What this build computes with, as PyTorch's flags say of its own: LAPACK through NumPy's linear algebra, FFTs
# through numpy.fft; no MKL and no OpenMP of gradiente's own (NumPy's BLAS may use threads of its own).
has_lapack = True
has_mkl = False
has_openmp = False
has_spectral = True

_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _threads_from_environment():
    """PyTorch's default number of threads: ``MKL_NUM_THREADS``, else ``OMP_NUM_THREADS`` (a positive whole
    number; anything else is ignored), at most the CPUs this process may use, else all of them."""
    count = 0
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):        # (the later one wins, as in PyTorch)
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            count = int(value)
    return min(count, _CPUS) if count else _CPUS

# One dict for every remembered setting, so that a test (or a learner) can see them all at once.
_settings = {"num_threads": _threads_from_environment(), "num_interop_threads": _CPUS, "interop_set": False,
             "deterministic": False, "warn_only": False, "matmul_precision": "highest", "warn_always": False}


# --- threads ---------------------------------------------------------------------------------------------

def _check_thread_count(name, n):
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(int):                       # the parameter's name is PyTorch's
    """The number of threads for intra-op work. gradiente has none of its own; when ``threadpoolctl`` is
    installed, NumPy's BLAS (used by matmul) is limited to this many threads, otherwise it is only remembered."""
    _check_thread_count("set_num_threads", int)
    _settings["num_threads"] = int
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=int, user_api="blas")


def get_num_threads():
    """The value of ``set_num_threads`` (at start: the CPUs this process may use)."""
    return _settings["num_threads"]


def set_num_interop_threads(int):
    """The number of inter-op threads: only remembered (gradiente runs ops one after another). As in PyTorch,
    it may be set once."""
    _check_thread_count("set_num_interop_threads", int)
    if _settings["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _settings["num_interop_threads"], _settings["interop_set"] = int, True


def get_num_interop_threads():
    """The number of threads PyTorch would use between operations; gradiente runs operations one after another,
    so this only reports the setting."""
    return _settings["num_interop_threads"]


# --- determinism -----------------------------------------------------------------------------------------

def use_deterministic_algorithms(mode, *, warn_only=False):
    """Remembered only: every gradiente op is deterministic already (NumPy on one thread, no atomics)."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _settings["deterministic"], _settings["warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    """True after ``use_deterministic_algorithms(True)``. gradiente's CPU operations are deterministic either
    way; the flag is kept for programs that read it."""
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """True if ``use_deterministic_algorithms(True, warn_only=True)`` was called."""
    return _settings["warn_only"]


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off;  1 / "warn": deterministic, warn only;  2 / "error": deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The deterministic debug mode as a number: 0 (default), 1 (warn) or 2 (error), as
    ``set_deterministic_debug_mode`` set it."""
    if not _settings["deterministic"]:
        return 0
    return 1 if _settings["warn_only"] else 2


# --- matmul precision, default device, warnings, denormals -----------------------------------------------

def set_float32_matmul_precision(precision):
    """Remembered only: NumPy multiplies float32 matrices in full float32 precision ("highest") whatever is
    set (PyTorch may use TF32 or bfloat16 for "high" and "medium" on some hardware)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision():
    """The float32 matrix-product precision setting ('highest', 'high' or 'medium'); gradiente always computes at
    'highest'."""
    return _settings["matmul_precision"]


def set_default_device(device_):
    """The device factory functions use when given none. Any device PyTorch knows is accepted here; a factory
    that then makes a tensor on a device that is not the CPU raises what a CPU-only PyTorch raises there.
    ``None`` restores the CPU."""
    _devices.set_default_device(device_)


def get_default_device():
    """The default device, with its index. PyTorch finds the index by making an empty tensor there, so for a
    device other than the CPU this raises as that tensor's creation would."""
    current = _devices.default_device()
    if current.index is not None:
        return current
    return tensor([], device=current).device


def set_warn_always(b):
    """Remembered only: gradiente's warnings follow Python's ``warnings`` filters."""
    _settings["warn_always"] = bool(b)


def is_warn_always_enabled():
    """True after ``set_warn_always(True)``: warnings PyTorch gives once per process are then given every time."""
    return _settings["warn_always"]


def set_flush_denormal(mode):
    """Returns False, for "not supported": NumPy cannot make the CPU flush denormal numbers to zero. (PyTorch
    returns True on x86 CPUs, where it can.)"""
    return False


# --- finfo, iinfo ----------------------------------------------------------------------------------------

def _resolve_type(type, default):
    """A dtype argument of finfo/iinfo: None means ``default``, Python's float and int mean float64 and int64."""
    if type is None:
        return default
    if type is float:
        return dt.float64
    if type is int:
        return dt.int64
    if not isinstance(type, dt.dtype):
        kind = "finfo" if default is not None else "iinfo"
        raise TypeError(f"{kind}(): argument 'type' (position 1) must be torch.dtype, not {type.__class__.__name__}")
    return type


# bfloat16 has no NumPy type: its facts, from its format (8 exponent bits, 7 fraction bits).
_BFLOAT16 = {"bits": 16, "eps": 2.0 ** -7, "max": (2 - 2.0 ** -7) * 2.0 ** 127, "tiny": 2.0 ** -126}


class finfo:
    """Facts about a floating dtype (default: the default dtype): ``bits``, ``eps``, ``max``, ``min``, ``tiny``
    (= ``smallest_normal``), ``resolution`` (10 to the minus the decimal digits it keeps) and ``dtype`` (its
    name). A complex dtype gives the facts of its real and imaginary parts."""

    def __init__(self, type=None):
        d = _resolve_type(type, dt.get_default_dtype()).to_real()
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if d is dt.bfloat16:
            facts = _BFLOAT16
        else:
            info = np.finfo(d._np)
            facts = {"bits": int(info.bits), "eps": float(info.eps), "max": float(info.max),
                     "tiny": float(info.tiny)}
        self.bits, self.eps, self.max, self.tiny = facts["bits"], facts["eps"], facts["max"], facts["tiny"]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -int(-math.log10(self.eps))
        self.dtype = d._name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = None                             # unhashable, as in PyTorch

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Facts about an integer dtype: ``bits``, ``max``, ``min`` and ``dtype`` (its name)."""

    def __init__(self, type):
        d = _resolve_type(type, None)
        if d is dt.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d._category != dt._INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d._np)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), d._name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = None                             # unhashable, as in PyTorch

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# --- questions about dtypes and tensors ------------------------------------------------------------------

def _require(name, value, arg, position, kind=Tensor, kind_name="Tensor"):
    if not isinstance(value, kind):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be {kind_name}, not "
                        f"{type(value).__name__}")


def can_cast(from_, to):
    """Whether PyTorch's casting rules let a ``from_`` value be written into a ``to`` tensor: never to a lower
    category (complex > floating > integer > bool)."""
    _require("can_cast", from_, "from_", 1, dt.dtype, "torch.dtype")
    _require("can_cast", to, "to", 2, dt.dtype, "torch.dtype")
    return dt.can_cast(from_, to)


def is_complex(input):
    """True if ``input``'s dtype is complex (complex64 or complex128)."""
    _require("is_complex", input, "input", 1)
    return input.is_complex()


def is_signed(input):
    """Whether the dtype holds negative numbers (False for bool and uint8)."""
    _require("is_signed", input, "input", 1)
    return input.dtype.is_signed


def is_nonzero(input):
    """The truth of a one-element tensor; PyTorch's error for any other."""
    _require("is_nonzero", input, "input", 1)
    return bool(input)


def is_same_size(input, other):
    """True if ``input`` and ``other`` have the same shape."""
    _require("is_same_size", input, "input", 1)
    _require("is_same_size", other, "other", 2)
    return tuple(input.shape) == tuple(other.shape)      # (a sparse tensor's _data holds only its values)


def typename(obj):
    """A tensor's type name (``torch.FloatTensor``), or any object's module and qualified name, without the
    module for builtins (``int``, ``numpy.ndarray``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(named, "__module__", None) or ""
    name = named.__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (ints mean 1-D shapes), without making any tensor."""
    as_tuples = []
    for shape in shapes:
        if isinstance(shape, Tensor):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i, size in enumerate(shape):
            if not isinstance(size, int):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(size).__name__}')")
        as_tuples.append(shape)
    result = [1] * max((len(s) for s in as_tuples), default=0)
    for index, shape in enumerate(as_tuples):
        for back in range(1, len(shape) + 1):
            size = shape[-back]
            if size < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if size == 1 or size == result[-back]:
                continue
            if result[-back] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {size} at {-back}! Mismatching "
                                   f"argument at index {index} had {shape}; but expected shape should be "
                                   f"broadcastable to {result}")
            result[-back] = size
    return Size(result)


def init_num_threads():
    """PyTorch starts its intra-op thread pool here; gradiente has none (NumPy's BLAS keeps its own), so there
    is nothing to start."""


def get_device(input):
    """The device index of ``input``: -1 for a CPU tensor, the only kind gradiente makes."""
    return input.get_device()


def is_storage(obj):
    """True if ``obj`` is a storage (``x.untyped_storage()``, ``TypedStorage``)."""
    from .core.storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))
