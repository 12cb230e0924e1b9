"""Seeing the graph: torchviz's ``make_dot`` (``from torchviz import make_dot`` is served by this module),
a plain-text drawing, and rendering to SVG/PNG without a system Graphviz.

    from gradiente.viz import make_dot, to_text
    make_dot(y, params={"x": x})                  # torchviz's drawing; shows inline in Jupyter
    make_dot(y, show_values=True, show_grads=True, auto_names=True, show_formulas=True)
    print(to_text(y))                             # the same graph as text, no extra package
    make_dot(y).render("graph", format="svg")     # system dot, else pip's graphviz-pure

Layout: ``dot`` (make_dot), ``text`` (to_text), ``render`` (which layout program; the Digraph),
``saved`` (PyTorch's names of saved values), ``names`` (leaf names), ``modules`` (collapsing modules),
``summary`` (numbers as short text), ``walk`` (the iterative traversals they share).
The step-by-step chain-rule walkthrough is ``gradiente.explain``.
"""
from .dot import SAVED_PREFIX, make_dot, make_dot_from_trace, resize_graph, size_to_str
from .modules import watch
from .render import Digraph, dot_program
from .text import to_text

__all__ = [
           "SAVED_PREFIX",
           "Digraph",
           "dot_program",
           "make_dot",
           "make_dot_from_trace",
           "resize_graph",
           "size_to_str",
           "to_text",
           "watch",
]
