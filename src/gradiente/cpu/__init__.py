"""``torch.cpu``: the CPU as a device module (every tensor of gradiente lives there) and its ``amp`` namespace."""
from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for: CPU work is done when the call returns."""
