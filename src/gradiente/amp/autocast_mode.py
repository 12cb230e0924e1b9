"""``torch.autocast``: a context manager (and decorator) that turns autocast on for a device type inside a region.

What autocast does to each op is decided in ``ops/autocast.py`` (PyTorch's CPU op lists and the entry every listed
op has); this class only sets that module's per-thread state on entry and restores it on exit, as PyTorch's
``torch.amp.autocast_mode.autocast`` does. gradiente computes on the CPU only: CUDA autocast is refused with
PyTorch's warning on a machine without CUDA, and other device types keep their settings without effect.
"""
import collections.abc
import functools
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.tensor import Tensor
from ..ops import autocast as state
from ..ops.autocast import is_autocast_available

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# CPU autocast computes in one of these (PyTorch: "CPU Autocast only supports dtypes of ...").
_SUPPORTED = (dt.bfloat16, dt.float16)


class autocast:
    """``with torch.autocast("cpu", dtype=torch.bfloat16):`` runs PyTorch's lower-precision ops (``mm``, ``linear``,
    convolutions, ...) in ``dtype`` and its float32 ops (losses, ``prod``, ...) in float32. ``enabled=False`` turns
    autocast off inside the region; regions nest, each restoring what it found."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = state.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = state.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in _SUPPORTED:
                name = device_type.upper()
                supported = ", ".join(repr(d).replace("gradiente.", "torch.") for d in _SUPPORTED)
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of {supported} currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = state.is_autocast_cache_enabled()
        self.prev = state.is_autocast_enabled(self.device)
        self.prev_fastdtype = state.get_autocast_dtype(self.device)
        state.set_autocast_enabled(self.device, self._enabled)
        state.set_autocast_dtype(self.device, self.fast_dtype)
        state.autocast_increment_nesting()
        state.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # the cached casts of weights live until the outermost region ends
        if state.autocast_decrement_nesting() == 0:
            state.clear_autocast_cache()
        state.set_autocast_enabled(self.device, self.prev)
        state.set_autocast_dtype(self.device, self.prev_fastdtype)
        state.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean to use autocast "
                "as a context manager? For example:\n    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


# --- custom autograd Functions under autocast ---------------------------------------------------------------------

def _cast(value, dtype):
    """``value`` with its floating tensors (not float64) converted to ``dtype``, through containers; strings,
    bytes and NumPy arrays pass as they are (they are iterable, but not containers of tensors)."""
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() and value.dtype is not dt.float64 else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, dtype): _cast(v, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        cast_items = (_cast(v, dtype) for v in value)
        return type(value)(cast_items) if isinstance(value, (list, tuple)) else cast_items
    return value


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates a custom ``Function.forward``: it remembers the autocast state for ``custom_bwd``; with
    ``cast_inputs``, inside an autocast region, its floating tensor arguments are cast to that dtype and it runs
    with autocast off."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = state.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = state.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not state.is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates a custom ``Function.backward``: it runs with the autocast state its ``forward`` ran with."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
