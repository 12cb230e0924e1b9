"""``torch.ops.profiler``: the two ops PyTorch's ``record_function`` is made of, for programs that call them
directly (an fx tracer that turns profiler ranges into graph nodes, so that the traced module still reports them).

``_record_function_enter(name)`` opens a named range of the profiler session that records now (none: nothing is
recorded) and returns its handle; ``_record_function_exit(handle)`` closes it. Intended difference from PyTorch: the
handle is the range itself, not a tensor.
"""
from ..core import profiling

__all__ = ["_record_function_enter", "_record_function_exit"]


def _record_function_enter(name, args=None):
    """Open the profiler range ``name``; returns the handle ``_record_function_exit`` closes."""
    handle = profiling.Range(name)
    handle.__enter__()
    return handle


def _record_function_exit(handle):
    """Close the range ``_record_function_enter`` opened."""
    handle.__exit__(None, None, None)
