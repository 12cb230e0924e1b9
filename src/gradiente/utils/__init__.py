"""Utilities, as ``torch.utils``: ``checkpoint`` (recompute in backward to save memory), ``data`` (datasets and
loaders) and ``hooks``."""
from . import checkpoint, data, hooks
