"""``torch.amp.GradScaler``: loss scaling for mixed-precision training, as PyTorch's CPU scaler behaves.

Small gradients of a low-precision loss can round to zero. The scaler multiplies the loss by a large factor before
``backward`` (``scale``), divides the gradients by it before the optimizer uses them (``unscale_``), and skips the
optimizer's step when a gradient came out inf or nan (``step``); ``update`` then halves the factor after a skipped
step, or doubles it after ``growth_interval`` good ones. The method names, states, errors and ``state_dict`` follow
``torch/amp/grad_scaler.py``. The scaler is made for device ``"cuda"`` by default: on a machine without CUDA (every
machine, for gradiente) PyTorch warns and disables it, and so does this one; ``GradScaler("cpu")`` is the one that
scales.
"""
import warnings
from collections import abc, defaultdict
from enum import Enum

import numpy as np

from ..core import dtype as dt
from ..core.creation import full
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where one optimizer is in the iteration: nothing done yet, gradients unscaled, or stepped."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_NO_SCALE_YET = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


class GradScaler:
    """``scaler = GradScaler("cpu")``; per iteration ``scaler.scale(loss).backward()``, ``scaler.step(optimizer)``,
    ``scaler.update()``. ``enabled=False`` makes every method a no-op (``step`` just steps)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None                  # a float32 0-d tensor, made by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None         # an int32 0-d tensor: consecutive steps without inf or nan
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _NO_SCALE_YET)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + _NO_SCALE_YET)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self):
        self._scale = full((), self._init_scale, dtype=dt.float32)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dt.int32)

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them, nested) times the current scale."""
        if not self._enabled:
            return outputs

        def apply_scale(value):
            if isinstance(value, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker()
                return value * self._scale
            if isinstance(value, abc.Iterable):
                scaled = map(apply_scale, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Multiply every gradient of ``optimizer``'s parameters by ``inv_scale``, in place; returns the device's
        found-inf flag (a float32 0-d tensor, 1 when some gradient holds an inf or a nan)."""
        found_inf = full((), 0.0, dtype=dt.float32)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    # PyTorch's _amp_foreach_non_finite_check_and_unscale_: note, then multiply regardless
                    if not np.isfinite(grad.float()._data).all():
                        found_inf.fill_(1.0)
                    grad.mul_(inv_scale)
        return {"cpu": found_inf}

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale, in place (before clipping them, for example); once per
        optimizer per iteration."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # 1/scale computed in double and rounded to float32, as PyTorch computes it
        inv_scale = self._scale.double().reciprocal().float()
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients (unless ``unscale_`` did), then ``optimizer.step()`` unless one is inf or nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """After every optimizer stepped: back off after an inf or nan, grow after ``growth_interval`` good steps;
        or set ``new_scale`` (a float, or a 1-element float32 tensor that requires no grad)."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor "
                          "with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = sum(v.item() for v in found_infs)
            self._update_scale(scale, growth_tracker, found_inf)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, growth_tracker, found_inf):
        """PyTorch's ``_amp_update_scale_``: the scale in float32, the count of good steps in int32."""
        if found_inf:
            scale.mul_(self._backoff_factor)
            growth_tracker.fill_(0)
            return
        successful = growth_tracker.item() + 1
        if successful == self._growth_interval:
            grown = scale * self._growth_factor
            if np.isfinite(grown.item()):       # a scale that would overflow float32 stays where it is
                scale.copy_(grown)
            growth_tracker.fill_(0)
        else:
            growth_tracker.fill_(successful)

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and ``_growth_tracker`` (an empty
        dict when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
