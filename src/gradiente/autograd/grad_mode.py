"""``gradiente.autograd.grad_mode``, PyTorch's ``torch.autograd.grad_mode``: the context managers that switch
recording on and off (defined in ``gradiente/core/grad_mode.py``)."""
from ..core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]
