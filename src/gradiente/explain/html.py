"""The walkthrough as self-contained HTML for Jupyter (``Explanation._repr_html_``): a table of the steps
with each local derivative named and valued, the notes, the results and the graph as inline SVG. No
external resources (no scripts, styles or fonts fetched); every piece of text is HTML-escaped."""
from html import escape

from ..viz.summary import format_values
from .messages import words
from .notes import notes
from .symbols import bracket

__all__ = ["to_html"]

_HEADERS = {
    "en": ("Step", "Node", "Output", "Local derivatives", "Gradient arriving", "Passed on"),
    "es": ("Paso", "Nodo", "Salida", "Derivadas locales", "Gradiente que llega", "Se pasa"),
}


def to_html(explanation, lang):
    """An HTML ``<div class="gradiente-explain">`` for ``explanation`` in ``lang``."""
    w = words(lang)
    e = explanation
    steps = [e.step(i) for i in range(len(e.record.order))]
    head, tail = e.window()
    if head + tail < len(steps):
        steps = steps[:head] + steps[len(steps) - tail:]
    parts = ['<div class="gradiente-explain">',
             f"<h4>{escape(w['title'].format(output=e.output_name))}</h4>", "<table>",
             "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in _HEADERS[lang]) + "</tr></thead>", "<tbody>"]
    for step in steps:
        parts.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in _row(e, step, w)) + "</tr>")
    parts += ["</tbody>", "</table>"]
    found = notes(steps, lang)
    if found:
        parts.append(f"<h5>{escape(w['notes'])}</h5><ul class=\"notes\">"
                     + "".join(f"<li>{escape(note)}</li>" for note in found) + "</ul>")
    parts.append(f"<h5>{escape(w['result'])}</h5><ul class=\"results\">")
    for _, name, grad, _ in e.results:
        parts.append(f"<li><code>{escape(name)}.grad</code> = <code>{escape(_values(e, grad, w))}</code></li>")
    parts.append("</ul>")
    svg = _graph_svg(e)
    if svg:
        parts.append(f'<div class="graph">{svg}</div>')
    parts.append("</div>")
    return "\n".join(parts)


def _row(e, step, w):
    if step.is_leaf:
        node = f"<code>AccumulateGrad</code> ({escape(w['leaf'].format(name=step.leaf_name))})"
        return [str(step.number), node, f"<code>{escape(step.leaf_name)}</code>", "",
                f"<code>{escape(_values(e, step.incoming, w))}</code>", ""]
    output = step.out_name or step.expression or ""
    symbolic = []
    for p in step.passes:
        name = step.input_names[p.input_nr] if p.input_nr < len(step.input_names) else "?"
        form = step.symbolic[p.input_nr] if step.symbolic and p.input_nr < len(step.symbolic) else None
        text = f"∂/∂{bracket(name)}"
        if form is not None:
            text += f" = {form}"
        if p.local is not None:
            text += f" = {_values(e, p.local, w)}"
        symbolic.append(f'<span class="math">{escape(text)}</span>')
    passed = [f"<code>{escape(_values(e, p.passed, w))}</code>" for p in step.passes]
    return [str(step.number), f"<code>{escape(step.name)}</code>", f"<code>{escape(output)}</code>",
            "<br>".join(symbolic), f"<code>{escape(_values(e, step.incoming, w))}</code>", "<br>".join(passed)]


def _values(e, array, w):
    return "" if array is None else format_values(array, e.max_elems, words=w["words"])


def _graph_svg(e):
    """The graph drawn by ``gradiente.viz.make_dot`` as inline SVG, or "" where Graphviz is not installed
    (the table says everything the picture does)."""
    try:
        from ..viz import make_dot
        svg = make_dot(e.record.output).pipe(format="svg", encoding="utf-8")
    except Exception:  # no Graphviz program or package here: the HTML is complete without the picture
        return ""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
