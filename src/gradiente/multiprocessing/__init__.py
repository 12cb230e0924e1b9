"""``gradiente.multiprocessing``, as ``torch.multiprocessing``: the standard library's ``multiprocessing`` (every
name of it: ``Process``, ``Queue``, ``Pool``, ``get_context``, ``set_start_method``...), with tensors that cross
processes through shared memory, and ``spawn``/``start_processes`` for running a function in N processes.

* ``Tensor.share_memory_()`` / ``Module.share_memory()`` move values into shared memory
  (``core/shared_memory.py``); a child made by ``fork`` then trains the parent's parameters in place (hogwild).
* Importing this module registers the reducers of ``reductions.py``: a tensor put on a ``Queue`` or passed to a
  process started by ``spawn``/``forkserver`` arrives as a tensor over the same memory, not a copy.
* ``spawn.py``: ``spawn``, ``start_processes``, ``ProcessContext`` and the exceptions a failed child raises.

The sharing strategy is PyTorch's setting: both names are accepted, and gradiente always passes the memory as a
file descriptor (what PyTorch calls ``file_descriptor``), so ``file_system`` changes nothing here.
"""
import multiprocessing
import sys
from multiprocessing import *  # the standard library's API, as PyTorch re-exports it

from .reductions import init_reductions
from .spawn import (
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
    _setting = {"strategy": "file_system"}
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
    _setting = {"strategy": "file_descriptor"}


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors, one of ``get_all_sharing_strategies()``."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _setting["strategy"] = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _setting["strategy"]


def get_all_sharing_strategies():
    """The set of sharing strategies this system supports."""
    return _all_sharing_strategies


init_reductions()
