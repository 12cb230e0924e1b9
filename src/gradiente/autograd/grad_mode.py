"""``gradiente.autograd.grad_mode``, PyTorch's ``torch.autograd.grad_mode``: the context managers that switch
recording on and off (defined in ``gradiente/core/grad_mode.py``)."""
from ..core import grad_layout
from ..core.grad_mode import (
    _Mode,
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
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled",
           "enforce_grad_layout_policy"]


class enforce_grad_layout_policy(_Mode):
    """Whether the engine holds a leaf's first gradient to PyTorch's layout contract (the leaf's strides for a
    dense leaf, row-major otherwise; ``core/grad_layout.py``). ``enable=False`` lets the engine keep a gradient it
    owns in whatever layout it arrives in, where it would otherwise copy it; gradients that must be copied still
    get the contract's layout. Takes effect when called and is undone on leaving a ``with`` block; as a decorator
    it applies around each call. Per thread, as in PyTorch."""

    def __init__(self, enable=True):
        self.prev = grad_layout.is_enforced()
        grad_layout.set_enforced(enable)
        self.mode = enable

    def _args(self):
        return (self.mode,)

    def __call__(self, func):
        grad_layout.set_enforced(self.prev)      # as a decorator it must not change the policy now
        return super().__call__(func)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        grad_layout.set_enforced(self.prev)
        return False
