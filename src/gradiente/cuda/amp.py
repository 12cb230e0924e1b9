"""``torch.cuda.amp``: PyTorch's deprecated CUDA spellings, as a CPU-only PyTorch has them: each warns that it is
deprecated (FutureWarning), then that CUDA is not available, and is disabled (``autocast`` changes nothing,
``GradScaler`` scales by 1 and ``step`` just steps)."""
import warnings

from .. import amp
from ..core import dtype as dt

__all__ = ["autocast", "GradScaler"]


class autocast(amp.autocast):
    def __init__(self, enabled=True, dtype=dt.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
