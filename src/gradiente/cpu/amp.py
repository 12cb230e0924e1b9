"""``torch.cpu.amp``: PyTorch's deprecated spellings of ``torch.amp.autocast("cpu")`` and
``torch.amp.GradScaler("cpu")``; they work, with PyTorch's FutureWarning."""
import warnings

from .. import amp
from ..core import dtype as dt

__all__ = ["autocast", "GradScaler"]


class autocast(amp.autocast):
    """``torch.amp.autocast("cpu", ...)`` under its old name (bfloat16 by default)."""

    def __init__(self, enabled=True, dtype=dt.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """``torch.amp.GradScaler("cpu", ...)`` under its old name."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
