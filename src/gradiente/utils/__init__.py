"""Utilities, as ``torch.utils``: ``data`` (datasets and loaders) and ``hooks``."""
from . import data, hooks
