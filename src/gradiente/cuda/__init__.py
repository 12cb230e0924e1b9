"""``torch.cuda`` as a CPU-only build of PyTorch has it: there is no GPU, and every function answers as there.

Programs ask ``torch.cuda.is_available()`` to choose their device, seed the GPUs "just in case"
(``manual_seed_all``), free a cache that is not there (``empty_cache``) and read memory counters; in a CPU-only
PyTorch those calls quietly answer False, 0 or nothing, and so they do here. Functions that need a GPU to mean
anything (``synchronize``, ``current_device``, ``get_device_name``, ...) raise PyTorch's own
``AssertionError: Torch not compiled with CUDA enabled`` (PyTorch's lazy CUDA initialisation asserts it), which
is also what ``torch.zeros(2, device="cuda")`` raises (``core/device.py``).

One difference: ``set_device(n)`` for an index n >= 0 fails in a CPU-only PyTorch by an ``AttributeError`` about
one of its private C functions; gradiente raises the ``AssertionError`` above, which says what is wrong.
"""
from collections import OrderedDict

from ..core.device import as_device
from ..core.device import device as _torch_device

__all__ = [
    "OutOfMemoryError", "is_available", "device_count", "is_initialized", "is_bf16_supported", "is_tf32_supported",
    "get_arch_list", "get_gencode_flags", "manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
    "max_memory_cached", "memory_stats", "memory_stats_as_nested_dict", "get_rng_state_all", "set_rng_state",
    "set_rng_state_all", "init", "current_device", "synchronize", "get_device_name", "get_device_capability",
    "get_device_properties", "current_stream", "default_stream", "get_rng_state", "initial_seed", "ipc_collect",
    "mem_get_info", "get_per_process_memory_fraction", "get_sync_debug_mode", "set_device", "device", "device_of",
    "Stream", "Event", "stream", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "reset_peak_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "reset_accumulated_memory_stats",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


class OutOfMemoryError(RuntimeError):
    """Raised by PyTorch when a GPU allocation fails. gradiente never raises it (it has no GPU), but programs
    name it in ``except`` clauses, which must find it."""
    __module__ = "gradiente"


# --- questions a CPU-only build answers ---------------------------------------------------------------------------

def is_available():
    """False: gradiente computes on the CPU (with NumPy)."""
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    """The GPU architectures the build was compiled for: none."""
    return []


def get_gencode_flags():
    return ""


# --- calls that do nothing without a GPU, as in a CPU-only PyTorch -------------------------------------------

def manual_seed(seed):
    """Seeds the current GPU's generator, which does not exist: nothing happens (PyTorch queues the call for a
    CUDA initialisation that never comes). ``seed`` must still read as an integer."""
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def empty_cache():
    """Frees the GPU memory cache, which is empty: nothing to do."""


def set_rng_state(new_state, device="cuda"):
    pass


def set_rng_state_all(new_states):
    pass


def get_rng_state_all():
    """The state of each GPU's generator: one per GPU, so none."""
    return []


def memory_allocated(device=None):
    """Bytes of GPU memory held by tensors: 0. So are the other counters below."""
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_cached(device=None):
    return 0


def max_memory_cached(device=None):
    return 0


def memory_stats(device=None):
    return OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


# A CPU-only PyTorch resets its peak counters through a private C function it was built without, and so fails
# with an AttributeError naming it (benchmarks call these between runs).
def _missing_c_function(name):
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def reset_peak_memory_stats(device=None):
    raise _missing_c_function("_cuda_resetPeakMemoryStats")


def reset_max_memory_allocated(device=None):
    raise _missing_c_function("_cuda_resetPeakMemoryStats")


def reset_max_memory_cached(device=None):
    raise _missing_c_function("_cuda_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device=None):
    raise _missing_c_function("_cuda_resetAccumulatedMemoryStats")


# --- calls that need a GPU: PyTorch's assertion -------------------------------------------------------------------

def init():
    raise AssertionError(_NOT_COMPILED)


def current_device():
    raise AssertionError(_NOT_COMPILED)


def synchronize(device=None):
    raise AssertionError(_NOT_COMPILED)


def get_device_name(device=None):
    raise AssertionError(_NOT_COMPILED)


def get_device_capability(device=None):
    raise AssertionError(_NOT_COMPILED)


def get_device_properties(device=None):
    raise AssertionError(_NOT_COMPILED)


def current_stream(device=None):
    raise AssertionError(_NOT_COMPILED)


def default_stream(device=None):
    raise AssertionError(_NOT_COMPILED)


def get_rng_state(device="cuda"):
    raise AssertionError(_NOT_COMPILED)


def initial_seed():
    raise AssertionError(_NOT_COMPILED)


def ipc_collect():
    raise AssertionError(_NOT_COMPILED)


def mem_get_info(device=None):
    raise AssertionError(_NOT_COMPILED)


def get_per_process_memory_fraction(device=None):
    raise AssertionError(_NOT_COMPILED)


def get_sync_debug_mode():
    raise AssertionError(_NOT_COMPILED)


# --- choosing a GPU ------------------------------------------------------------------------------------------------

def _device_index(value):
    """PyTorch's ``_get_device_index(value, optional=True)``: a CUDA device's index, -1 for none."""
    if value is None:
        return -1
    if isinstance(value, (str, _torch_device)):
        place = as_device(value, "device")
        if place.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {place}")
        if place.index is None:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{place}")
        return place.index
    return int(value)


def set_device(device):
    """Choose the current GPU; -1 (none) is accepted and does nothing."""
    if _device_index(device) >= 0:
        raise AssertionError(_NOT_COMPILED)


class device:
    # (PyTorch's name: torch.cuda.device is this context manager, not torch.device)
    """``with torch.cuda.device(i):`` runs the block with GPU i current. Without CUDA, only "no GPU" (-1 or
    None) can be entered; PyTorch raises on entering any other."""

    def __init__(self, device):
        if device is None:
            # PyTorch compares the index with 0 on entering, and None cannot be compared
            self.idx = None
        else:
            self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None:
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        if self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc_info):
        return False


class device_of(device):
    """``with torch.cuda.device_of(tensor):``: the tensor's GPU, or none for a CPU tensor (always, here)."""

    def __init__(self, obj):
        super().__init__(-1)


class Stream:
    """A CUDA stream: cannot exist without CUDA (PyTorch's message)."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    """A CUDA event: cannot exist without CUDA (PyTorch's message)."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class stream:
    """``with torch.cuda.stream(s):``: ``None`` (the only stream there can be here) makes the block run as is."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")

    def __exit__(self, *exc_info):
        return False


def _gpu_tensor_type(name):
    """``torch.cuda.FloatTensor`` and its kin: the names exist (programs pick one when a GPU is present), making
    one is PyTorch's TypeError."""
    def refuse(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{name} not available. Torch not compiled with CUDA enabled.")
    return type(name, (), {"__new__": refuse, "__module__": "gradiente.cuda",
                           "__doc__": f"The legacy type of CUDA tensors, ``torch.cuda.{name}``: not available."})


FloatTensor = _gpu_tensor_type("FloatTensor")
DoubleTensor = _gpu_tensor_type("DoubleTensor")
HalfTensor = _gpu_tensor_type("HalfTensor")
BFloat16Tensor = _gpu_tensor_type("BFloat16Tensor")
LongTensor = _gpu_tensor_type("LongTensor")
IntTensor = _gpu_tensor_type("IntTensor")
ShortTensor = _gpu_tensor_type("ShortTensor")
CharTensor = _gpu_tensor_type("CharTensor")
ByteTensor = _gpu_tensor_type("ByteTensor")
BoolTensor = _gpu_tensor_type("BoolTensor")


from . import amp  # noqa: E402  (torch.cuda.amp: its deprecated autocast and GradScaler)
