"""Timing PyTorch statements, as ``torch.utils.benchmark``: ``Timer`` runs a statement in a loop and returns a
``Measurement``, which prints itself as PyTorch's does (the jacobians/hessians, per-sample gradients and
attention tutorials print them). The fuzzers, ``Compare`` tables and Callgrind counts are not here."""
from .utils.common import *
from .utils.timer import *
