"""``torch.autocast``: a context manager (and decorator) that turns autocast on for a device type inside a region.

What autocast does to each op is decided in ``ops/autocast.py`` (PyTorch's CPU op lists and the entry every listed
op has); this class only sets that module's per-thread state on entry and restores it on exit, as PyTorch's
``torch.amp.autocast_mode.autocast`` does. gradiente computes on the CPU only: CUDA autocast is refused with
PyTorch's warning on a machine without CUDA, and other device types keep their settings without effect.
"""
import functools
import warnings

from ..core import dtype as dt
from ..ops import autocast as state
from ..ops.autocast import is_autocast_available

__all__ = ["autocast", "is_autocast_available"]

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
