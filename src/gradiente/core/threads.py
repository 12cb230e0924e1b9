"""Thread-local state and locks, for the modules that ``import gradiente`` loads.

They come from ``_thread``, the C module that ``threading`` is built on, instead of from ``threading`` itself: they
are the same objects (``threading.local`` is ``_thread._local``, ``threading.RLock`` builds ``_thread.RLock``), and
importing ``threading`` would add about 0.7 ms to ``import gradiente`` (issue 14's import budget is 30 ms). Code
that starts threads imports ``threading`` where it does.
"""
from _thread import RLock, get_ident
from _thread import _local as local
from _thread import allocate_lock as Lock

__all__ = ["local", "Lock", "RLock", "get_ident"]
