"""``torch.backends.cudnn``: NVIDIA's cuDNN library, absent from a CPU-only build.

``is_available()`` is False and ``version()`` None. The flags programs set (``benchmark``, ``deterministic``,
``enabled``, ``allow_tf32``) hold PyTorch's defaults, accept what PyTorch accepts, and change nothing, as in a
CPU-only PyTorch: they steer cuDNN's GPU kernels, which never run.
"""
from ._flags import settings_for_block, typed_settings

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark", "deterministic",
           "allow_tf32", "benchmark_limit"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = None

# PyTorch's setter of each flag (its name is in the message for a value that is not a bool)
_SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
            "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}


def is_available():
    return False


def version():
    """cuDNN's version number, or None without cuDNN."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN could take ``tensor``: never without cuDNN."""
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Set the flags for a block, and restore them after it (PyTorch's defaults here, too, are its own)."""
    return settings_for_block(__name__, enabled=enabled, benchmark=benchmark, deterministic=deterministic,
                              allow_tf32=allow_tf32)



typed_settings(__name__)
