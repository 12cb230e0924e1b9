"""``torch.backends.cuda``: settings of PyTorch's CUDA kernels, which a CPU-only build has none of.

``is_built()`` is False. The settings programs write (``matmul.allow_tf32``, the scaled-dot-product-attention
kernels' switches) hold PyTorch's defaults, check their type as PyTorch does, and change nothing: they choose
among GPU kernels, and gradiente's matmul and attention always compute in full precision with NumPy.
"""
__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled",
           "enable_cudnn_sdp"]


def is_built():
    """Whether the build includes CUDA: no."""
    return False


class _MatmulSettings:
    """``torch.backends.cuda.matmul``: cuBLAS's switches for reduced precision."""

    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        object.__setattr__(self, "allow_tf32", False)
        for name in self._REDUCTIONS:
            object.__setattr__(self, name, True)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
        elif name in self._REDUCTIONS:
            if not isinstance(value, (bool, tuple, list)):
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)}")
        else:
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)


matmul = _MatmulSettings()

# Which fused attention kernels PyTorch may choose on a GPU (all allowed by default); remembered only.
_sdp_enabled = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _enable_sdp(kind, enabled):
    if not isinstance(enabled, bool):
        raise RuntimeError(f"set_sdp_use_{kind} expects a bool, but got {type(enabled).__name__}")
    _sdp_enabled[kind] = enabled


def flash_sdp_enabled():
    return _sdp_enabled["flash"]


def enable_flash_sdp(enabled):
    _enable_sdp("flash", enabled)


def mem_efficient_sdp_enabled():
    return _sdp_enabled["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _enable_sdp("mem_efficient", enabled)


def math_sdp_enabled():
    return _sdp_enabled["math"]


def enable_math_sdp(enabled):
    _enable_sdp("math", enabled)


def cudnn_sdp_enabled():
    return _sdp_enabled["cudnn"]


def enable_cudnn_sdp(enabled):
    _enable_sdp("cudnn", enabled)
