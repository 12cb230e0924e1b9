"""``torch._VF``: ATen functions PyTorch keeps out of the ``torch`` namespace, for the few that tests reach."""
from .ops.sorting import aten_unique_dim as unique_dim

__all__ = ["unique_dim"]
