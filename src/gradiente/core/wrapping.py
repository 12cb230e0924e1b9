"""``wraps``: ``functools.wraps`` for the wrappers made by the thousand at import.

``import gradiente`` puts about a thousand functions behind wrappers (the sparse check, NumPy's argument names, the
in-place forms). ``functools.wraps`` copies six attributes through ``getattr``/``setattr`` with defaults and a
``try`` each, about 1.1 µs a wrapper; this copies the same ones directly, in a third of the time, which is close to
a millisecond of the import (issue 14's budget is 30 ms). The result is what ``functools.wraps`` gives: the name,
qualified name, docstring, module, annotations and attributes of the wrapped function, and ``__wrapped__`` (which
``inspect.signature`` follows).
"""
import functools
from types import FunctionType

__all__ = ["wraps"]


def wraps(fn):
    """``@wraps(fn)``, as ``@functools.wraps(fn)``."""
    return lambda wrapper: _dressed_as(wrapper, fn)


def _dressed_as(wrapper, fn):
    """``wrapper``, carrying ``fn``'s name, docstring, module, annotations and attributes, and ``__wrapped__``."""
    if fn.__class__ is not FunctionType:        # a builtin, a partial, a callable object: what functools does
        return functools.update_wrapper(wrapper, fn)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__module__ = fn.__module__
    annotations = getattr(fn, "__annotations__", None)
    if annotations:
        wrapper.__annotations__ = annotations
    attributes = getattr(fn, "__dict__", None)
    if attributes:
        wrapper.__dict__.update(attributes)
    wrapper.__wrapped__ = fn
    return wrapper
