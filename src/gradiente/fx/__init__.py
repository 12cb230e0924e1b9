"""``torch.fx``: trace a module or function into a graph of its operations, change the graph, and run it again as
Python (``symbolic_trace``, ``Graph``, ``Node``, ``Proxy``, ``Tracer``, ``GraphModule``, ``Interpreter``,
``Transformer``, ``replace_pattern``). Loaded only when a program uses it; importing it routes calls that have a
Proxy argument to the tracer (``proxy.py`` says how, at no cost to calls on tensors).
"""
from . import immutable_collections, node, proxy
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "replace_pattern", "map_arg", "PH"]
