"""``torch.autograd.anomaly_mode``: switch anomaly detection on for a region (``detect_anomaly``) or at once
(``set_detect_anomaly``). While it is on, each node remembers the forward call that made it, and when a node's
backward step fails the engine warns with that traceback (and, for a node made by another node's backward, that
node's); with ``check_nan`` a gradient with a NaN in it is refused. ``core/anomaly.py`` does the work.

As in PyTorch 2.13, neither class is a decorator (calling an instance raises TypeError), and ``detect_anomaly``
warns when it is made that the mode slows the program down.
"""
import warnings

from ..core import anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return anomaly.state.enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection refuses gradients with NaN in them (when it is on)."""
    return anomaly.state.check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """``torch.set_anomaly_enabled``: anomaly detection on or off, from now on."""
    anomaly.set_enabled(enabled, check_nan)


class detect_anomaly:
    """Context manager: anomaly detection on inside the ``with`` block (``check_nan``: NaN gradients raise),
    restored to what it was on leaving."""

    def __init__(self, check_nan=True):
        self.prev = anomaly.state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = anomaly.state.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        anomaly.set_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        anomaly.set_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Anomaly detection on or off at once, as a function; as a context manager, restored on leaving."""

    def __init__(self, mode, check_nan=True):
        self.prev = anomaly.state.enabled
        self.prev_check_nan = anomaly.state.check_nan
        anomaly.set_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        anomaly.set_enabled(self.prev, self.prev_check_nan)
