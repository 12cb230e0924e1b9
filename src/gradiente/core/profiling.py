"""The profiler's recording, as the core sees it: the one session that records, and the engine's timed steps.

The profiler (``gradiente.autograd.profiler``, ``gradiente.profiler``) lives on the API floor; what the engine needs
of it is here, below the engine: ``state.session``, the session that records now (None when none does), which
the engine reads once per backward walk, and ``TimedSteps``, the walk's general step wrapped in the two ranges
PyTorch's engine records for each node::

    autograd::engine::evaluate_function: MulBackward0      the node's whole turn: its rule, then sending the results
        MulBackward0                                       the node itself: its rule (and its hooks)

A session keeps plain records, ``(name, start_ns, end_ns, thread, scope, sequence_nr, input_shapes)``, appended
when a range closes; who contains whom is worked out afterwards from the intervals, as PyTorch does
(``autograd/profiler_util.py``), so recording is one append and needs no stack.

One session at a time, as in PyTorch: a profiler that starts while another records takes over, and the one it
displaced ends with no events (and a warning, PyTorch's words).
"""
import time
import warnings

from . import threads
from .node import AccumulateGrad

__all__ = ["state", "Session", "begin", "end", "clock", "TimedSteps", "Range", "FORWARD", "BACKWARD", "USER"]

clock = time.perf_counter_ns

#: PyTorch's RecordScope numbers: an op, a node of the backward pass, a ``record_function`` range
FORWARD, BACKWARD, USER = 0, 1, 7


class _State:
    __slots__ = ("session",)

    def __init__(self):
        self.session = None


state = _State()


class Session:
    """What one profiler recorded: its records and the moment it started (times are read relative to it)."""

    __slots__ = ("records", "started_ns", "started_wall_ns", "record_shapes", "threads", "displaced")

    def __init__(self, record_shapes=False):
        self.records: list = []
        self.started_ns = clock()
        self.started_wall_ns = time.time_ns()       # where a trace's timeline starts
        self.record_shapes = record_shapes
        self.threads: dict = {}         # threading.get_ident() -> 1, 2, ...: PyTorch numbers threads from 1
        self.displaced = False

    def add(self, name, start_ns, end_ns, scope=FORWARD, sequence_nr=-1, input_shapes=None):
        ident = threads.get_ident()
        thread = self.threads.get(ident)
        if thread is None:
            thread = self.threads[ident] = len(self.threads) + 1
        self.records.append((name, start_ns, end_ns, thread, scope, sequence_nr, input_shapes))


def begin(session):
    """Make ``session`` the one that records. One that was recording is displaced: its records are dropped."""
    previous = state.session
    if previous is not None:
        previous.records.clear()
        previous.displaced = True
    state.session = session


def end(session):
    """Stop ``session``; True if it was the one recording (False: another displaced it, and it has nothing)."""
    if state.session is not session:
        warnings.warn("disableProfiler called but no active profiling session found. This can happen if profiling "
                      "was cancelled during warmup.", stacklevel=3)
        return False
    state.session = None
    return True


class TimedSteps:
    """The engine's general step, timed for ``session``. A node's ``evaluate_function`` range lasts until the next
    node's turn begins (or the walk ends: ``finish``), so it covers what the engine does with the node's results
    after the step returns, summing them into the receivers and bringing them to the inputs' shapes."""

    __slots__ = ("step", "session", "_open")

    def __init__(self, step, session):
        self.step = step
        self.session = session
        self._open = None           # (name, start_ns, sequence_nr) of the evaluate_function range still open

    def __call__(self, node, *args):
        now = clock()
        self.finish(now)
        name = node.name()
        seq = -1 if node.__class__ is AccumulateGrad else node._seq     # PyTorch numbers no leaf's node
        self._open = ("autograd::engine::evaluate_function: " + name, now, seq)
        start = clock()
        try:
            return self.step(node, *args)
        finally:
            self.session.add(name, start, clock(), BACKWARD, seq)

    def finish(self, now=None):
        """Close the open ``evaluate_function`` range, at ``now`` or at once."""
        if self._open is not None:
            name, start, seq = self._open
            self._open = None
            self.session.add(name, start, clock() if now is None else now, FORWARD, seq)


class Range:
    """A named range of the session recording when it opens (``record_function``'s, an optimizer's step): nothing
    is recorded if no session records then, as in PyTorch."""

    __slots__ = ("name", "scope", "_session", "_start")

    def __init__(self, name, scope=USER):
        self.name = name
        self.scope = scope
        self._session = None

    def __enter__(self):
        self._session = state.session
        self._start = clock()
        return self

    def __exit__(self, *exc_info):
        session, self._session = self._session, None
        if session is not None and not session.displaced:
            session.add(self.name, self._start, clock(), self.scope)
        return False
