"""Utilities, as ``torch.utils``: ``checkpoint`` (recompute in backward to save memory), ``data`` (datasets and
loaders), ``hooks`` and ``swap_tensors``; ``tensorboard`` (``SummaryWriter``) is imported when asked for, as in
PyTorch."""
from . import checkpoint, data, hooks
from .swap import swap_tensors
