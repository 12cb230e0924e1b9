"""Turning a drawing into SVG or PNG with no system Graphviz: which ``dot`` program to run, and the
``Digraph`` that ``make_dot`` returns.

The ``graphviz`` Python package builds the DOT source and runs a program named ``dot``. Where no system
Graphviz is installed, ``pip install graphviz-pure`` provides the same command-line program under the
name ``graphviz-pure`` (a port of Graphviz with its fonts built in). ``Digraph`` here is a
``graphviz.Digraph`` whose ``pipe``/``render``/``view`` and Jupyter display use the system ``dot`` when
there is one, else ``graphviz-pure``, so ``make_dot(y)`` shows inline in a notebook after a plain pip
install. Set ``GRADIENTE_DOT`` to a program path to choose one yourself.
"""
import contextlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

try:
    import graphviz as _graphviz
    from graphviz.backend import dot_command as _dot_command
except ImportError:  # the drawing extra is not installed; make_dot says what to install
    _graphviz = None
    _dot_command = None

__all__ = ["Digraph", "dot_program", "require_graphviz"]

_INSTALL = "pip install 'gradiente[viz]'  (or: pip install graphviz graphviz-pure)"


def require_graphviz():
    """The ``graphviz`` module, or an ImportError that says how to get it."""
    if _graphviz is None:
        raise ImportError("make_dot needs the graphviz Python package: " + _INSTALL +
                          ". gradiente.viz.to_text(y) draws the graph as text with no extra package.")
    return _graphviz


def dot_program():
    """The layout program to run: ``$GRADIENTE_DOT``, else the system ``dot``, else ``graphviz-pure``
    (looked up on PATH and next to this Python, where pip puts it even when PATH lacks that folder).
    None when there is none."""
    chosen = os.environ.get("GRADIENTE_DOT")
    if chosen:
        return shutil.which(chosen) or chosen
    system = shutil.which("dot")
    if system:
        return system
    found = shutil.which("graphviz-pure")
    if found:
        return found
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        for name in ("graphviz-pure", "graphviz-pure.exe"):
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return candidate
    return None


def _is_pure(program):
    return program is not None and Path(program).name.startswith("graphviz-pure")


if _graphviz is not None:
    class _NoLayoutProgram(_graphviz.ExecutableNotFound):
        """graphviz's own error, with the pip command that fixes it."""

        def __str__(self):
            return (super().__str__() + ". No system Graphviz and no graphviz-pure were found: " + _INSTALL +
                    ", or gradiente.viz.to_text(...) for a text drawing.")

    class Digraph(_graphviz.Digraph):
        """A ``graphviz.Digraph`` that renders with the system ``dot`` or, without one, ``graphviz-pure``.

        Everything else is graphviz's: ``source``, ``node``, ``edge``, ``body``, ``save``... Intended
        difference from torchviz's graph: rendering works with no system Graphviz, and Jupyter falls back
        to the DOT source, with the install advice, when no layout program exists at all.
        """

        def pipe(self, *args, **kwargs):
            with self._layout_program(kwargs):
                return super().pipe(*args, **kwargs)

        def render(self, *args, **kwargs):
            with self._layout_program(kwargs):
                return super().render(*args, **kwargs)

        def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
            try:
                return super()._repr_mimebundle_(include, exclude, **kwargs)
            except _graphviz.ExecutableNotFound:
                return {"text/plain": str(_NoLayoutProgram(["dot"])) + "\n\n" + self.source}

        def _repr_svg_(self):
            return self.pipe(format="svg", encoding=self._encoding)

        @contextlib.contextmanager
        def _layout_program(self, kwargs):
            """Point graphviz at the chosen program for one call. graphviz-pure has no font metrics
            for the generic name 'monospace' (it would warn and size boxes for Times), so the call
            uses Courier, whose metrics it has and which it draws with its built-in Cousine font; its
            warnings about the widths of non-ASCII characters (∂, ², Σ) are not shown unless asked
            for with ``quiet=False`` (errors still raise)."""
            program = dot_program()
            if program is None:
                raise _NoLayoutProgram(["dot"])
            if _is_pure(program):
                kwargs.setdefault("quiet", True)
            previous_binary = _dot_command.DOT_BINARY
            previous_font = self.node_attr.get("fontname")
            _dot_command.DOT_BINARY = Path(program)
            if _is_pure(program) and previous_font == "monospace":
                self.node_attr["fontname"] = "Courier"
            try:
                yield
            finally:
                _dot_command.DOT_BINARY = previous_binary
                if previous_font is not None:
                    self.node_attr["fontname"] = previous_font
else:
    Digraph = None
