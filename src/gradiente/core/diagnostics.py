"""Diagnostic mode: remember where things happened, so that an error or ``why_no_grad`` can name the learner's line.

Recording a call site means walking the Python stack, which no op should pay for in an ordinary run. So nothing
here runs unless ``state.sites`` is true, which it is while anomaly detection (``core/anomaly.py``) or learner mode
(``gradiente.learner``) is on. Each place that records tests that one flag and does nothing more when it is off.

What is remembered, and where it is read:

* the site of each recorded node (``node.metadata["site_"]``): where a value was saved for backward;
* the site of each in-place write, per version counter (``writes``): where a saved value was changed, read by
  the "modified by an inplace operation" error (``modified_addendum``);
* the places where a tensor that requires grad left the graph (``cuts``): ``detach()``, ``.data``, ``.numpy()``,
  ``.item()``, ``.tolist()``, and ops run under ``no_grad`` or ``inference_mode`` in a block the learner opened;
  read by ``gradiente.explain.why_no_grad``.

Learner mode adds checks on top (``state.learner``, an object the API floor installs): the core calls it at the
few points where a classic mistake shows, and only when it is installed.
"""
import linecache
import os
import re
import sys
import weakref
from collections import OrderedDict, deque
from types import FrameType
from typing import Any, NamedTuple, Optional

__all__ = ["Site", "Cut", "state", "call_site", "set_source", "remember_site", "site_of", "note_cut",
           "note_unrecorded", "note_write", "writes_between", "recent_cuts", "modified_addendum", "enter_block",
           "learner_explanation"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_MAX_CUTS = 500             # the cuts remembered: the newest are the ones a learner asks about
_MAX_COUNTERS = 10_000      # version counters whose writes are remembered


class Site(NamedTuple):
    """A line of the learner's program: ``file:line`` and the code written there."""
    filename: str
    lineno: int
    code: str

    def __str__(self):
        return f"{self.filename}:{self.lineno}"


class Cut(NamedTuple):
    """A place where a tensor that requires grad was used without being recorded. ``cause``: ``"detach"``,
    ``"data"``, ``"numpy"``, ``"item"``, ``"tolist"``, ``"no_grad"`` or ``"inference_mode"``. What the tensor was,
    kept without keeping it (or its graph) alive: ``counter``, its version counter (shared with the tensor it
    views), and ``history``, the ids of the nodes its gradient would have flowed through. ``result``: the new
    tensor, weakly, when there is one; ``time``: read from the clock that numbers the graph's nodes, so a cut made
    after a loss was computed can be told from one made before."""
    cause: str
    site: Optional[Site]
    counter: Any
    history: frozenset
    result: Any
    time: int


#: the graph's clock (``core/node.py`` numbers each node from it, and sets it here)
clock: Any = None


class _State:
    __slots__ = ("sites", "learner", "sources", "cuts", "writes", "user_block")

    def __init__(self):
        self.sites = False          # record call sites (while anomaly mode or learner mode asks)
        self.learner = None         # learner mode's checks (gradiente.learner), while it is on
        self.sources: set = set()   # who asked for sites: "anomaly", "learner"
        self.cuts: deque = deque(maxlen=_MAX_CUTS)
        self.writes: OrderedDict = OrderedDict()    # id(version counter) -> (counter, [(version, Site, op)])
        self.user_block = None      # the Site of the no_grad/inference_mode block the learner is in, if any


state = _State()


def set_source(name, on):
    """Ask for call sites (``on``) on behalf of ``name``, or stop asking; sites are recorded while anyone asks."""
    (state.sources.add if on else state.sources.discard)(name)
    state.sites = bool(state.sources)
    if not state.sites:
        state.cuts.clear()
        state.writes.clear()
        state.user_block = None


def _outside(frame):
    """The first frame, from ``frame`` outward, that is not gradiente's own code: the learner's line."""
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return frame


def call_site(depth=1) -> Optional[Site]:
    """Where the learner's program called into gradiente, seen from ``depth`` frames above this call."""
    frame = _outside(sys._getframe(depth))
    if frame is None:
        return None
    return _site(frame)


def _site(frame):
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    return Site(filename, lineno, _without_comment(linecache.getline(filename, lineno)))


def _without_comment(line):
    """A line of code without its trailing comment (a ``#`` outside quotes starts one), stripped."""
    quote = None
    for i, char in enumerate(line):
        if quote is None and char == "#":
            return line[:i].strip()
        if char in "'\"":
            quote = None if quote == char else char if quote is None else quote
    return line.strip()


def called_by_learner(depth=1):
    """Whether the function ``depth`` frames up was called from outside gradiente (not by gradiente itself)."""
    caller = sys._getframe(depth + 1)
    return not caller.f_code.co_filename.startswith(_PACKAGE)


# --- nodes: where each value was saved ------------------------------------------------------------------

def remember_site(node):
    """Keep in ``node.metadata`` the line that made it (and so saved its values)."""
    node.metadata["site_"] = call_site(2)


def site_of(node) -> Optional[Site]:
    """The line that made ``node``, if it was recorded."""
    metadata = node.__dict__.get("_metadata") if node is not None else None
    return metadata.get("site_") if metadata else None


# --- in-place writes: where a value was changed ---------------------------------------------------------

def note_write(tensor, op=None):
    """An in-place write has just moved ``tensor``'s version counter on: remember the line and the op."""
    counter = tensor._version_box
    key = id(counter)
    entry = state.writes.get(key)
    if entry is None or entry[0] is not counter:
        writes: list = []
        entry = state.writes[key] = (counter, writes)   # holding the counter keeps its id from being reused
        if len(state.writes) > _MAX_COUNTERS:
            state.writes.popitem(last=False)
    entry[1].append((counter[0], call_site(2), op))
    if state.learner is not None and "_data_of" in tensor.__dict__:
        state.learner.data_written(tensor)


def name_last_write(tensor, node):
    """The write just remembered for ``tensor`` was recorded as ``node``: name its op as the learner wrote it
    (``MulBackward0`` -> ``mul_``); then, in learner mode, check what the write means (``total += loss``)."""
    entry = state.writes.get(id(tensor._version_box))
    if entry is not None and entry[1] and node is not None:
        version, site, _ = entry[1][-1]
        forward = re.sub(r"Backwards?\d*$", "", node.name())
        entry[1][-1] = (version, site, re.sub(r"(?<=[a-z])(?=[A-Z])", "_", forward).lower() + "_")
    if state.learner is not None:
        state.learner.recorded_inplace(tensor)


def writes_between(counter, first, last):
    """The remembered writes that took ``counter`` from version ``first`` to ``last``: ``[(version, Site, op)]``."""
    entry = state.writes.get(id(counter))
    if entry is None or entry[0] is not counter:
        return []
    return [w for w in entry[1] if first < w[0] <= last]


def modified_addendum(node, counter, expected, now):
    """Lines to add to PyTorch's "modified by an inplace operation" error: where the value was saved (the node's
    line) and where it was changed. Empty unless sites were recorded."""
    saved = site_of(node)
    changes = writes_between(counter, expected, now)
    if saved is None and not changes:
        return ""
    name = node.name() if node is not None else "a node"
    lines = ["", "Where it happened (call sites recorded by learner mode or anomaly detection):"]
    if saved is not None:
        lines.append(f"  saved    at {saved}, by {name} (it keeps the value for its backward):  {saved.code}")
    else:
        lines.append(f"  saved    by {name} (its line was not recorded: the mode was off when it ran)")
    for version, site, op in changes:
        what = f"in place by {op.removeprefix('torch::autograd::')}" if op else "in place"
        lines.append(f"  modified at {site}, {what} (version {version - 1} → {version}):  {site.code}")
    if not changes:
        lines.append("  modified: the in-place change was not recorded (the mode was off when it ran)")
    return "\n".join(lines)


# --- cuts: where a tensor that requires grad left the graph ---------------------------------------------

def note_cut(cause, source, result=None, depth=2):
    """``source`` (which requires grad) was used without being recorded, by the learner's line ``depth`` frames
    up; ``result`` is the new tensor, when there is one. Uses by gradiente itself (an optimizer's update, a
    detach inside an op) are not cuts the learner made, and are skipped."""
    if not called_by_learner(depth):
        return
    state.cuts.append(Cut(cause, call_site(depth + 1), source._version_box, _history(source),
                          weakref.ref(result) if result is not None else None, next(clock)))
    if cause == "data" and state.learner is not None:
        state.learner.data_taken(source, result)


# --- learner mode's entry points (the checks themselves live in gradiente.learner, on the API floor) ------

def learner_explanation(kind, **facts):
    """The learner's explanation to add to one of PyTorch's errors, or "" when learner mode is off."""
    learner = state.learner
    return "" if learner is None else learner.explain(kind, **facts)


def note_unrecorded(inputs, inference):
    """An op ran without recording (grad mode off): each input that requires grad is cut there, if the learner
    opened the no_grad or inference_mode block (gradiente's own blocks, such as an optimizer's, are not cuts)."""
    block = state.user_block
    if block is None:
        return
    cause = "inference_mode" if inference else "no_grad"
    site = None
    for t in inputs:
        if getattr(t, "_requires_grad", False):
            if site is None:
                site = call_site(3)
            state.cuts.append(Cut(cause, site or block, t._version_box, _history(t), None, next(clock)))


def enter_block(recording, depth=2):
    """A grad-mode block is being entered: if it stops recording (``recording`` false), remember its line when
    the learner wrote it, and forget it inside a block gradiente opens itself (an optimizer's). Returns what to
    restore on leaving."""
    previous = state.user_block
    if recording:
        state.user_block = None
        return previous
    frame: Optional[FrameType] = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.endswith("grad_mode.py"):
        frame = frame.f_back        # the decorator form: its wrapper is gradiente's, its caller the learner's
    if frame is not None and not frame.f_code.co_filename.startswith(_PACKAGE):
        state.user_block = _site(frame)
    else:
        state.user_block = None
    return previous


def recent_cuts():
    """The remembered cuts, newest first."""
    return list(reversed(state.cuts))


def _history(tensor, limit=10_000):
    """The ids of the nodes a gradient of ``tensor`` would flow through (at most ``limit``): its own node (its
    ``grad_fn``, or a leaf's AccumulateGrad) and every node below it."""
    ref = tensor._accumulator
    start = tensor.grad_fn if tensor.grad_fn is not None else ref() if ref is not None else None
    seen: set = set()
    stack = [start] if start is not None else []
    while stack and len(seen) < limit:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return frozenset(seen)
