"""``torch.xpu`` (Intel GPUs) as a CPU-only build has it: no device. Questions a program asks to choose its device
answer False, 0 or nothing, the very answers ``torch.cuda`` gives without a GPU (and shares with it here); calls
that need a device raise PyTorch's ``AssertionError: Torch not compiled with XPU enabled``."""
from .cuda import (
    empty_cache,
    manual_seed,
    manual_seed_all,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    seed,
    seed_all,
)

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "synchronize",
           "current_device", "get_device_name", "get_device_properties", "set_device", "init", "is_initialized"]

_NOT_COMPILED = "Torch not compiled with XPU enabled"


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def _no_xpu(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


synchronize = current_device = get_device_name = get_device_properties = set_device = init = _no_xpu
