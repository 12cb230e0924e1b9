"""``torch.mps`` (Apple's Metal GPUs) as a CPU-only build has it: no device, and PyTorch's message for each call
that needs one (``Cannot execute ...() without MPS backend.``)."""

__all__ = ["is_available", "device_count", "manual_seed", "seed", "get_rng_state", "set_rng_state", "synchronize",
           "empty_cache", "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
           "set_per_process_memory_fraction"]


def _without_mps(call):
    raise RuntimeError(f"Cannot execute {call}() without MPS backend.")


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Does nothing without the backend, as in PyTorch (which only seeds when MPS is there)."""


def seed():
    _without_mps("getDefaultGenerator")


def get_rng_state(device="mps"):
    _without_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    _without_mps("getDefaultGenerator")


def synchronize():
    _without_mps("deviceSynchronize")


def empty_cache():
    _without_mps("emptyCache")


def current_allocated_memory():
    _without_mps("getCurrentAllocatedMemory")


def driver_allocated_memory():
    _without_mps("getDriverAllocatedMemory")


def recommended_max_memory():
    _without_mps("getRecommendedMaxMemory")


def set_per_process_memory_fraction(fraction):
    _without_mps("setMemoryFraction")
