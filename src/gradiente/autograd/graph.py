"""``gradiente.autograd.graph``, PyTorch's ``torch.autograd.graph``: the graph's nodes as the public API names
them. The graph itself (nodes, saved values, hooks) is ``gradiente/core/node.py``."""
from ..core.node import Node

__all__ = ["Node"]
