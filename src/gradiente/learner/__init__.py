"""Learner mode: warnings for the classic mistakes of a first training loop, in English or Spanish.

    >>> gradiente.learner_mode(lang="es")          # on from here on
    >>> with gradiente.learner_mode():             # or on for a block, then back to what it was
    ...     train()

While it is on, gradiente records the line of the learner's program where each value was saved, changed in place
or cut from the graph (so errors and ``gradiente.explain.why_no_grad`` can name both lines), and warns
(``LearnerWarning``) when it sees: gradients piling up across optimizer steps without ``zero_grad``, a running
total that keeps every iteration's graph alive (``total += loss``), training with Dropout or BatchNorm in eval mode
or evaluating in train mode, a parameter changed through ``.data`` during training, and ``requires_grad_()`` on a
computed tensor. It adds an explanation to PyTorch's errors for ``backward()`` on a non-scalar, a second backward
through a freed graph, and ``requires_grad`` set on a computed tensor. ``learner/checks.py`` says how each mistake
is recognized.

It is off by default, and off it costs nothing: each point where it looks tests one flag, and programs print
exactly what PyTorch prints.
"""
from ..core import diagnostics
from .checks import LearnerChecks, LearnerWarning
from .messages import HEADINGS

__all__ = ["learner_mode", "is_learner_mode_enabled", "LearnerWarning"]


class learner_mode:
    """Turn learner mode on (``enabled=True``, the default) or off, in language ``lang`` ("en" or "es").
    Takes effect at once when called; used as a context manager, what was on before is restored on leaving."""

    def __init__(self, lang="en", enabled=True):
        if lang not in HEADINGS:
            raise ValueError(f"lang must be one of {', '.join(HEADINGS)}; got {lang!r}")
        self._previous = diagnostics.state.learner
        if self._previous is not None:
            self._previous.uninstall()
        _switch(LearnerChecks(lang) if enabled else None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        current = diagnostics.state.learner
        if current is not None:
            current.uninstall()
        _switch(self._previous)
        return False


def _switch(checks):
    """Make ``checks`` the learner-mode session (None: off), with its hooks installed."""
    diagnostics.state.learner = checks
    diagnostics.set_source("learner", checks is not None)
    if checks is not None:
        checks.install()


def is_learner_mode_enabled():
    """Whether learner mode is on."""
    return diagnostics.state.learner is not None
