"""``torch.accelerator``: PyTorch's device-neutral questions about "the" accelerator (CUDA, MPS, XPU, ...).

A CPU-only build has none, so ``is_available()`` is False, ``current_accelerator()`` is None and
``device_count()`` 0; everything that would act on an accelerator raises PyTorch's
``RuntimeError: Cannot access accelerator device when none is available.``, the message ``torch.device(0)``
gives too (``core/device.py``).
"""
from .core.device import _NO_ACCELERATOR

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "device_index", "current_stream", "synchronize", "empty_cache",
           "empty_host_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_stats", "get_memory_info", "reset_peak_memory_stats", "reset_accumulated_memory_stats",
           "get_device_capability"]


def is_available():
    return False


def current_accelerator(check_available=False):
    """The accelerator's device type (``device('cuda')``, ...), or None when there is none."""
    return None


def device_count():
    return 0


def _no_accelerator(*args, **kwargs):
    raise RuntimeError(_NO_ACCELERATOR)


def current_device_index():
    _no_accelerator()


current_device_idx = current_device_index


def set_device_index(device, /):
    """Choose the current accelerator device; -1 (none) is accepted, as in PyTorch."""
    if device != -1:
        _no_accelerator()


set_device_idx = set_device_index


def current_stream(device=None, /):
    _no_accelerator()


def synchronize(device=None, /):
    _no_accelerator()


def empty_cache():
    _no_accelerator()


def empty_host_cache():
    _no_accelerator()


def memory_allocated(device_index=None, /):
    _no_accelerator()


def max_memory_allocated(device_index=None, /):
    _no_accelerator()


def memory_reserved(device_index=None, /):
    _no_accelerator()


def max_memory_reserved(device_index=None, /):
    _no_accelerator()


def memory_stats(device_index=None, /):
    _no_accelerator()


def get_memory_info(device_index=None, /):
    _no_accelerator()


def reset_peak_memory_stats(device_index=None, /):
    _no_accelerator()


def reset_accumulated_memory_stats(device_index=None, /):
    _no_accelerator()


def get_device_capability(device=None, /):
    _no_accelerator()


class device_index:
    """``with torch.accelerator.device_index(i):`` makes device i current for the block; ``None`` changes
    nothing, any index raises (there is no accelerator)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _no_accelerator()

    def __exit__(self, *exc_info):
        return False
