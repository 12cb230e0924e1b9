"""MkDocs hook: every ``python exec`` block of a page runs at build time, and its output is written below it.

A page's blocks run in order in one namespace (a fresh one per page, as in a notebook), against the code in
``src/`` of this repository. Each block runs as a notebook cell: what it prints is shown, and so is the value of
its last statement when that is an expression, as Jupyter would show it:

* a graph (anything with ``_repr_svg_``, such as ``make_dot(y)``) becomes an inline ``<svg>``;
* an explanation (anything with ``_repr_markdown_``, such as ``explain(y)``) becomes Markdown with its formulas;
* anything else is shown with ``repr``, like ``x.grad`` → ``tensor([10., 10.])``.

The fence's info string chooses how the block runs::

    ```python exec                      the block must run without an exception
    ```python exec raises=RuntimeError  the block must raise this exception; its message is shown

Any other exception, or a missing one, stops the build with the page, the block and the traceback, so the docs
cannot drift from the code. Blocks without ``exec`` are shown as written and not run.
"""
import ast
import contextlib
import io
import re
import sys
import traceback
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```python exec(?P<options>[^\n]*)\n(?P<source>.*?)^```[ \t]*$", re.M | re.S)


def on_config(config):
    # the examples document the code of this checkout, whatever else is installed
    src = str(ROOT / "src")
    if sys.path[0] != src:
        sys.path.insert(0, src)
    return config


def on_page_markdown(markdown, page, config, files):
    if "```python exec" not in markdown:
        return markdown
    namespace = {"__name__": "__course__"}
    count = 0

    def run(match):
        nonlocal count
        count += 1
        where = f"{page.file.src_uri}, example {count}"
        return render_block(match.group("source"), match.group("options").split(), namespace, where)

    return FENCE.sub(run, markdown)


def render_block(source, options, namespace, where):
    raises = None
    for option in options:
        if option.startswith("raises="):
            raises = option.split("=", 1)[1]
        else:
            raise PluginError(f"{where}: unknown option {option!r} (known: raises=ExceptionName)")
    outputs, error = run_cells(source, namespace, where)
    if raises is None and error is not None:
        raise PluginError(f"{where} raised an exception:\n{error[1]}")
    if raises is not None:
        if error is None:
            raise PluginError(f"{where} should raise {raises}, and ran without an exception")
        if type(error[0]).__name__ != raises:
            raise PluginError(f"{where} should raise {raises}, and raised:\n{error[1]}")
        outputs.append(("text", f"{type(error[0]).__name__}: {error[0]}"))
    parts = ["```python\n" + source.rstrip("\n") + "\n```"]
    for kind, content in merge_text(outputs):
        if kind == "text":
            # a fence longer than any run of backticks in the output
            parts.append('<div class="result" markdown>\n\n```text\n' + content.rstrip("\n") + "\n```\n\n</div>")
        elif kind == "svg":
            parts.append('<div class="result graph">' + inline_svg(content) + "</div>")
        else:
            parts.append('<div class="result explain" markdown>\n\n' + demote_headings(content) + "\n\n</div>")
    return "\n\n".join(parts) + "\n"


def run_cells(source, namespace, where):
    """Run ``source`` statement by statement; returns ([(kind, content)], None or (exception, traceback))."""
    outputs = []
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError:
        raise PluginError(f"{where}: syntax error\n{traceback.format_exc()}") from None
    for number, statement in enumerate(tree.body, 1):
        last = number == len(tree.body)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                if last and isinstance(statement, ast.Expr):
                    code = compile(ast.Expression(statement.value), where, "eval")
                    value = eval(code, namespace)
                else:
                    code = compile(ast.Module([statement], type_ignores=[]), where, "exec")
                    exec(code, namespace)
                    value = None
        except Exception as exc:
            outputs.append(("text", printed.getvalue()))
            return [o for o in outputs if o[1]], (exc, traceback.format_exc())
        outputs.append(("text", printed.getvalue()))
        if value is not None:
            outputs.append(display(value))
    return [o for o in outputs if o[1]], None


def display(value):
    """What a notebook would show for ``value``."""
    if hasattr(value, "_repr_svg_"):
        return "svg", value._repr_svg_()
    if hasattr(value, "_repr_markdown_"):
        return "markdown", value._repr_markdown_()
    return "text", repr(value) + "\n"


def merge_text(outputs):
    merged = []
    for kind, content in outputs:
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + content)
        else:
            merged.append((kind, content))
    return merged


def inline_svg(svg):
    """The ``<svg>`` element alone (no XML prolog, doctype or comments), on lines without blank ones, so Markdown
    leaves it as it is."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return "\n".join(line for line in svg.splitlines() if line.strip())


def demote_headings(markdown):
    """``explain``'s title is a level-4 heading; inside a page it is a bold line, so it stays out of the page's
    table of contents."""
    return re.sub(r"^#{1,6} (.*)$", r"**\1**", markdown, flags=re.M)
