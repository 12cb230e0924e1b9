"""``torch.amp``: automatic mixed precision. ``autocast`` runs PyTorch's listed ops in lower precision (CPU:
bfloat16 or float16), ``GradScaler`` scales losses so that small gradients survive it."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]
