"""``torch._C._functions``: the graph's built-in node classes that PyTorch registers by hand."""
from ..autograd.function import Error as DelayedError
from ..core.inplace import Error
from ..core.node import AccumulateGrad

__all__ = ["AccumulateGrad", "DelayedError", "Error"]
