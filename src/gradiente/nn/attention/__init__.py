"""``torch.nn.attention``: which kernel ``scaled_dot_product_attention`` may use (``sdpa_kernel``).

PyTorch chooses among fused kernels (FlashAttention, memory-efficient, cuDNN) and the plain "math" one. gradiente
always computes the math one with NumPy, so the choice changes no number; ``sdpa_kernel`` still sets and restores
the switches of ``torch.backends.cuda`` (``flash_sdp_enabled()`` ...) as PyTorch does, since programs read them.
"""
import contextlib
import enum

from ...backends import cuda as _cuda_settings

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The attention kernels, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# each backend's switch in torch.backends.cuda (OVERRIDEABLE has none gradiente keeps)
_SWITCHES = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
             SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Allow only ``backends`` (one SDPBackend or a list) inside the block, then restore the switches."""
    chosen = backends if isinstance(backends, list) else [backends]
    for backend in chosen:
        if not isinstance(backend, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                                 f"{type(backends).__name__}")
    saved = dict(_cuda_settings._sdp_enabled)
    for backend, switch in _SWITCHES.items():
        _cuda_settings._sdp_enabled[switch] = backend in chosen
    try:
        yield {}
    finally:
        _cuda_settings._sdp_enabled.update(saved)
