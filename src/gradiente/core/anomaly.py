"""Anomaly mode's state and its two jobs: remember where each node was made, and tell it when the node fails.

While the mode is on (``torch.autograd.detect_anomaly``), every node made keeps, in its ``metadata`` dict under
PyTorch's keys, the Python traceback of the forward call that made it (``"traceback_"``) and, for a node made
while the engine was running another node's rule (``create_graph=True``, or a backward inside a custom
Function's backward), that node (``"parent_"``). When a node's step fails, the engine calls ``report``, which
warns with the traceback of the node, then one warning per parent, as PyTorch does; with ``check_nan`` it also
refuses a gradient with a NaN in it (``check_nan``). The mode is global, not per thread, as in PyTorch.

When the mode is off, what it costs is one flag test per recorded node (``record`` and ``Node.__init__``) and
one per backward call.
"""
import os
import sys
import warnings
from types import FrameType
from typing import Optional

import numpy as np

from . import diagnostics
from . import dtype as dt

__all__ = ["state", "set_enabled", "remember", "report", "check_nan"]


class _State:
    __slots__ = ("enabled", "check_nan", "running")

    def __init__(self):
        self.enabled = False
        self.check_nan = True
        self.running = None         # the node whose step the engine runs now (kept only while the mode is on)


state = _State()

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def set_enabled(enabled, check_nan=True):
    """``torch.set_anomaly_enabled``: switch the mode (and its NaN check) on or off."""
    state.enabled = bool(enabled)
    state.check_nan = bool(check_nan)
    diagnostics.set_source("anomaly", state.enabled)


def remember(node):
    """Keep, in ``node.metadata``, the forward call's traceback, without the frames inside gradiente that made
    the node (PyTorch's ops are C++, so its tracebacks end at the user's line), and the node the engine is
    running, if any."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    metadata = node.metadata
    import traceback  # here: anomaly mode is rare, and the module costs import time
    metadata["traceback_"] = traceback.format_stack(frame) if frame is not None else []
    if state.running is not None:
        metadata["parent_"] = state.running


def report(node):
    """Warn, as PyTorch does when a node's step fails in anomaly mode: where the node was made, then where each
    node whose rule made it was made."""
    _warn_stack(node, node.name(), parent=False)
    parent = _metadata(node).get("parent_")
    while parent is not None:
        _warn_stack(parent, parent.name(), parent=True)
        parent = _metadata(parent).get("parent_")


def check_nan(node, results, raw):
    """Refuse results with a NaN in them (PyTorch's message; the index is the input's)."""
    for i, g in enumerate(results):
        if g is None:
            continue
        data = g if raw else g._data
        if dt.kind(data.dtype) in "fc" and data.size and bool(np.isnan(data).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _metadata(node):
    return node.__dict__.get("_metadata") or {}


def _warn_stack(node, name, parent):
    stack = _metadata(node).get("traceback_")
    if stack is None:
        message = (f"Error detected in {name}. No forward pass information available. Enable detect anomaly "
                   "during forward pass for more information.")
    elif parent:
        message = (f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that induced the "
                   f"previous calculation:\n{''.join(stack)}")
    else:
        message = f"Error detected in {name}. Traceback of forward call that caused the error:\n{''.join(stack)}"
    try:
        warnings.warn(message, UserWarning, stacklevel=2)
    except Exception:
        # A warning turned into an error must not hide the error being reported: PyTorch prints it instead.
        print(f"UserWarning: {message}", file=sys.stderr)
