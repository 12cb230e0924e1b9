"""``why_no_grad(x, loss)``: the learner's question "why is ``x.grad`` None?", answered.

It looks, in order, at what ``x`` is (its dtype, whether it requires grad, whether it is a leaf), then at
``loss``'s graph: whether a path leads from it back to ``x``, and if not, where the path was cut. A cut leaves
traces that can be read afterwards (a tensor in the graph that shares ``x``'s memory was detached from it; one
that holds a copy of ``x``'s values went through NumPy or Python), and, in learner or anomaly mode, gradiente
remembers each cut as it happens, with its line (``core/diagnostics.py``). Without the mode the answer names the
cause when the traces show it, and says how to get the line.

    >>> why_no_grad(w, loss)                # a Diagnosis: print it, or show it in a notebook
    >>> why_no_grad(w, loss, lang="es")     # en español
"""
import html
import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..core import diagnostics
from ..core.diagnostics import Site
from ..core.tensor import Tensor
from ..viz.names import caller_frame
from ..viz.walk import reachable
from .diagnosis_messages import CAUSES, DIAGNOSES, HOW, SITES_HINT, TITLES, WHERE
from .messages import LANGUAGES

__all__ = ["Diagnosis", "why_no_grad"]


@dataclass(frozen=True, repr=False)
class Diagnosis:
    """The answer: ``cause`` (a key of ``CAUSES``: "detach", "no_grad", "not_leaf", ...), ``message`` (the
    explanation in the learner's language, which is also what ``str`` gives), ``where`` (the ``Site``, file, line
    and code, where it happened, or None when unknown) and ``title`` (the question, with the learner's name)."""
    cause: str
    message: str
    where: Optional[Site] = None
    lang: str = "en"
    title: str = ""

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"{self.title}\n{self.message}" if self.title else self.message

    @property
    def label(self):
        """The cause in a few words, in the diagnosis's language."""
        return CAUSES[self.cause][LANGUAGES.index(self.lang)]

    def _repr_markdown_(self):
        lines = [f"**{self.title}** ({self.label})", "", self.message]
        return "\n".join(lines)

    def _repr_html_(self):
        message = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(self.message, quote=False))
        where = ""
        if self.where is not None:
            where = (f'<div style="margin-top:0.3em;opacity:0.8"><code>{html.escape(str(self.where))}</code>'
                     f' &nbsp; <code>{html.escape(self.where.code)}</code></div>')
        return ('<div class="gradiente-diagnosis" style="border-left:4px solid #d9822b;padding:0.4em 0.8em;'
                'margin:0.4em 0">'
                f'<div style="font-weight:bold">{html.escape(self.title)} '
                f'<span style="font-weight:normal;opacity:0.8">({html.escape(self.label)})</span></div>'
                f'<p style="margin:0.3em 0">{message}</p>{where}</div>')


def why_no_grad(x, loss, lang="en"):
    """Why ``x.grad`` is None (or would be, after ``loss.backward()``): where the path from ``x`` to ``loss`` was
    cut, in ``lang`` ("en" or "es"), with the file and line when learner or anomaly mode recorded them. Returns a
    ``Diagnosis``."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}; got {lang!r}")
    for value, role in ((x, "x"), (loss, "loss")):
        if not isinstance(value, Tensor):
            raise TypeError(f"why_no_grad() expects Tensors; {role} is a {type(value).__name__}")
    frame = caller_frame(1)
    names = {"x": _name_in(frame, x, "x"), "loss": _name_in(frame, loss, "loss")}
    cause, key, where, facts = _diagnose(x, loss, frame)
    return _say(cause, key, where, dict(names, **facts), lang, frame)


# --- the diagnosis: (cause, message key, where, facts for the message) -----------------------------------

def _diagnose(x, loss, frame):
    if x._data.dtype.kind not in "fc":
        return "dtype", "dtype", None, {"dtype": x.dtype}
    if x.is_inference():
        return "inference_mode", "inference_mode_self", None, {}
    if not x._requires_grad:
        return _why_not_required(x, _name_in(frame, x, None))
    graph = _graph(loss)
    mine = _node_of(x)
    if mine is not None and mine in graph:
        return _path_intact(x, loss, graph, frame)
    if x.grad_fn is not None and x._version_box[0] > 0 and _ancestors(x.grad_fn, graph):
        writes = diagnostics.writes_between(x._version_box, 0, x._version_box[0])
        return "modified_in_place", "modified_in_place", writes[-1][1] if writes else None, \
            {"node": x.grad_fn.name()}
    return _where_cut(x, loss, graph)


def _why_not_required(x, name):
    """``x`` (called ``name`` by the learner) does not require grad: made by a cut (detach, .data), assigned in a
    no_grad block (a cut there whose line assigns to ``name``), or never asked to."""
    for cut in diagnostics.recent_cuts():
        if cut.result is not None and cut.result() is x:
            return cut.cause, f"{cut.cause}_self", cut.site, {}
    if "_alias_of" in x.__dict__:
        return "detach", "detach_self", None, {}
    assigns = re.compile(rf"\s*{re.escape(name)}\s*(\[.*\])?\s*[-+*/@]?=[^=]") if name else None
    for cut in diagnostics.recent_cuts():
        if cut.cause == "no_grad" and assigns and cut.site is not None and assigns.match(cut.site.code):
            return "no_grad", "no_grad_self", cut.site, {}
    return "requires_grad_false", "requires_grad_false", None, {}


def _path_intact(x, loss, graph, frame):
    """A path leads from ``loss`` to ``x``: what keeps ``x.grad`` empty is ``x`` being no leaf (or no longer the
    leaf the learner made: a leaf of its shape in its history that no variable of ``frame`` holds), the graph's
    state, or nothing."""
    if x.grad_fn is not None and not x._retains_grad:
        facts = {"node": x.grad_fn.name()}
        where = diagnostics.site_of(x.grad_fn)
        leaf = _leaf_like(x)
        if leaf is not None and _name_in(frame, leaf, None) is None:
            return "replaced", "replaced", where, facts
        facts["leaf"] = leaf
        return "not_leaf", "not_leaf", where, facts
    if x._grad is not None:
        return "has_grad", "has_grad", None, {}
    learner = diagnostics.state.learner
    used = learner is not None and loss.grad_fn in learner.used_graphs
    if used or any(node._saved is None for node in graph):
        return "graph_freed", "graph_freed", learner.last_backward_site if learner is not None else None, {}
    return "not_backpropagated", "not_backpropagated", None, {}


def _where_cut(x, loss, graph):
    """No path leads from ``loss`` to ``x``: find the cut among the ones remembered, then among the traces a cut
    leaves in the graph; else ``x`` was never used."""
    held = _tensors_in(loss, graph)
    # the cuts of x (or of a tensor computed from it) made before loss: one whose result the graph holds is the
    # one; otherwise the newest
    made = loss.grad_fn._seq if loss.grad_fn is not None else float("inf")
    cuts = [cut for cut in diagnostics.recent_cuts() if cut.time < made and _comes_from(cut, x)]
    cuts.sort(key=lambda cut: not (cut.result is not None and id(cut.result()) in held))
    if cuts:
        cut = cuts[0]
        if cut.cause in ("item", "tolist", "numpy"):
            return "numpy", "numpy", cut.site, {"how": cut.cause}
        return cut.cause, cut.cause, cut.site, {}
    # the traces, surest first: x's own version counter (detach() shares it; .data's remembers it), x's memory
    # under another counter (torch.from_numpy of x's array), x's values in other memory (torch.tensor(x.tolist()) and
    # the like)
    others = [t for t in held.values() if t is not x and t._data.size]
    if any(t._version_box is x._version_box for t in others):
        return "detach", "detach", None, {}
    if any(getattr(t._version_box, "source", None) is x._version_box for t in others):
        return "data", "data", None, {}
    if any(np.shares_memory(t._data, x._data) for t in others):
        return "numpy", "numpy", None, {"how": "shared"}
    if any(t._data.shape == x._data.shape and np.array_equal(t._data, x._data) for t in others):
        return "numpy", "numpy", None, {"how": "copy"}
    if not loss._requires_grad:
        return "no_graph", "no_graph", None, {}
    return "never_used", "never_used", None, {}


# --- reading the graph ----------------------------------------------------------------------------------

def _graph(loss):
    return set(reachable([loss.grad_fn])) if loss.grad_fn is not None else set()


def _node_of(x):
    """The node through which a gradient reaches ``x``: its ``grad_fn``, or a leaf's AccumulateGrad."""
    if x.grad_fn is not None:
        return x.grad_fn
    ref = x._accumulator
    return ref() if ref is not None else None


def _ancestors(node, within):
    """Whether a node below ``node`` (not ``node`` itself) is in ``within``."""
    return any(n in within for n in reachable([node]) if n is not node)


def _tensors_in(loss, graph):
    """The tensors ``loss``'s graph holds, by id: ``loss``, its leaves, and the values its nodes saved."""
    held = {id(loss): loss}
    for node in graph:
        variable = getattr(node, "variable", None)
        if isinstance(variable, Tensor):
            held[id(variable)] = variable
        for item in node._saved or ():
            if isinstance(item, Tensor):
                held[id(item)] = item
    return held


def _comes_from(cut, x):
    """Whether the tensor cut at ``cut`` was ``x`` or a view of it (the same version counter), or was computed
    from it (``x``'s node lies in its history)."""
    if cut.counter is x._version_box:
        return True
    node = _node_of(x)
    return node is not None and id(node) in cut.history


def _leaf_like(x):
    """A leaf in ``x``'s history with ``x``'s shape and dtype: the tensor ``x`` most likely started as."""
    for node in reachable([x.grad_fn]):
        variable = getattr(node, "variable", None)
        if isinstance(variable, Tensor) and variable._data.shape == x._data.shape \
                and variable._data.dtype == x._data.dtype:
            return variable
    return None


def _name_in(frame, tensor, default):
    """The name of a variable of ``frame`` (locals, then globals) bound to ``tensor``."""
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in scope.items():
            if value is tensor and not name.startswith("_"):
                return name
    return default


# --- saying it ------------------------------------------------------------------------------------------

def _say(cause, key, where, facts, lang, frame):
    i = LANGUAGES.index(lang)
    facts["where"] = WHERE[lang].format(site=where, code=where.code) if where is not None else ""
    if "how" in facts:
        facts["how"] = HOW[facts["how"]][i]
    leaf = facts.pop("leaf", None)
    if key == "not_leaf":
        leaf_name = _name_in(frame, leaf, None) if leaf is not None else None
        facts["leaf"] = DIAGNOSES["leaf_hint"][i].format(leaf=leaf_name) if leaf_name else ""
    message = DIAGNOSES[key][i].format(**facts)
    if where is None and key in _LINE_KNOWABLE and not diagnostics.state.sites:
        message += SITES_HINT[lang].format(**facts)
    return Diagnosis(cause, message, where, lang, TITLES[lang].format(**facts))


# messages whose line learner mode records (the others are about what x is, and have no line)
_LINE_KNOWABLE = {"inference_mode", "no_grad", "detach", "detach_self", "data", "data_self", "numpy", "not_leaf",
                  "replaced", "modified_in_place", "graph_freed"}
