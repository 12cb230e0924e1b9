"""``torch._dynamo``: the compiler front end that ``torch.compile`` drives in PyTorch.

gradiente compiles nothing (see ``gradiente.compiler``), but scripts written for PyTorch still reach into this
namespace around ``torch.compile``: they set ``torch._dynamo.config.suppress_errors = True``, call
``torch._dynamo.reset()`` between benchmarks, or mark a dimension dynamic. Those calls are accepted here and
change nothing, since there is no compiled code for them to act on.
"""
from ..compiler import OptimizedModule, disable, is_compiling, reset
from . import config

__all__ = ["OptimizedModule", "allow_in_graph", "config", "disable", "disallow_in_graph", "explain", "graph_break",
           "is_compiling", "list_backends", "mark_dynamic", "mark_static", "maybe_mark_dynamic", "reset"]


def allow_in_graph(fn):
    """Let ``fn`` into a compiled graph unchanged: without compilation it is simply returned."""
    return fn


def disallow_in_graph(fn):
    """Keep ``fn`` out of compiled graphs: without compilation it is simply returned."""
    return fn


def graph_break():
    """Split a compiled graph here: without compilation there is no graph to split."""


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Tell the compiler that dimension ``index`` of ``t`` varies between calls: no compiler, nothing to tell."""


def maybe_mark_dynamic(t, index):
    """As ``mark_dynamic``, a hint only."""


def mark_static(t, index=None):
    """Tell the compiler that a dimension (or a module) never changes: nothing to tell."""


def list_backends(exclude_tags=("debug", "experimental")):
    """The compiler backends ``torch.compile`` accepts by name. Every one runs the Python as written here."""
    return ["cudagraphs", "inductor", "onnxrt", "openxla", "tvm"]


def explain(f, *extra_args, **extra_kwargs):
    """PyTorch reports the graphs and graph breaks that compiling ``f`` would produce; gradiente produces none,
    so it says so rather than invent a report."""
    raise NotImplementedError("torch._dynamo.explain reports how torch.compile splits a function into graphs; "
                              "gradiente compiles nothing (torch.compile returns the function as it is), so there "
                              "is nothing to explain")
