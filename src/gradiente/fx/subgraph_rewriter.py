"""``replace_pattern``, as ``torch.fx.subgraph_rewriter``'s: find every non-overlapping occurrence of a pattern
(a function, traced) among a GraphModule's nodes, matched by data dependence and not by name, and put in its place
the nodes of a replacement function, traced likewise.

The match starts from the node the pattern returns (its anchor) and walks the pattern's arguments backwards beside
the graph's: operations must agree in kind, target and literal arguments; a pattern input matches any node, the
same node wherever the input is used. A match whose inner values are read outside it is refused (replacing it
would change what those readers see).
"""
from typing import NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Node          # the pattern's node the match was found from (the node it returns)
    nodes_map: dict       # each pattern node -> the graph node it matched


def _as_graph(fn):
    from ._symbolic_trace import symbolic_trace
    if isinstance(fn, GraphModule):
        return fn.graph
    if isinstance(fn, Graph):
        return fn
    return symbolic_trace(fn).graph


def _match_value(p, g, nodes_map):
    if isinstance(p, Node):
        return isinstance(g, Node) and _match_node(p, g, nodes_map)
    if isinstance(p, (list, tuple)):
        return isinstance(g, (list, tuple)) and len(p) == len(g) and \
            all(_match_value(a, b, nodes_map) for a, b in zip(p, g))
    if isinstance(p, dict):
        return isinstance(g, dict) and p.keys() == g.keys() and all(_match_value(p[k], g[k], nodes_map) for k in p)
    return type(p) is type(g) and p == g


def _match_node(p, g, nodes_map):
    if p in nodes_map:
        return nodes_map[p] is g
    if p.op == "placeholder":
        nodes_map[p] = g
        return True
    if p.op != g.op or p.target != g.target:
        return False
    nodes_map[p] = g
    return _match_value(p.args, g.args, nodes_map) and _match_value(p.kwargs, g.kwargs, nodes_map)


def _find_matches(graph, pattern_graph):
    output = next(n for n in reversed(pattern_graph.nodes) if n.op == "output")
    anchor = output.args[0]
    placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    matches, taken = [], set()
    for node in graph.nodes:
        nodes_map = {}
        if node.op in ("placeholder", "output") or not _match_node(anchor, node, nodes_map):
            continue
        inner = {nodes_map[p] for p in nodes_map if p.op != "placeholder"}
        if inner & taken or any(user not in inner for n in inner if n is not node for user in n.users) or \
                any(p not in nodes_map for p in placeholders):
            continue
        taken |= inner
        matches.append(Match(anchor=anchor, nodes_map={p: nodes_map[p] for p in pattern_graph.nodes
                                                     if p in nodes_map}))
    return matches, anchor, placeholders


def replace_pattern(gm, pattern, replacement):
    """Replace each occurrence of ``pattern`` in ``gm``'s graph by ``replacement`` (functions, GraphModules or
    Graphs taking the same inputs) and recompile; returns the ``Match`` of each one replaced."""
    original_graph = gm.graph
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    matches, _, placeholders = _find_matches(original_graph, pattern_graph)
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(replacement_placeholders):
        raise AssertionError(f"Placeholder count mismatch: {len(placeholders)} vs {len(replacement_placeholders)}")
    for match in matches:
        val_map = {rn: match.nodes_map[pn] for rn, pn in zip(replacement_placeholders, placeholders)}
        returning = match.nodes_map[match.anchor]
        users = set(returning.users)
        insert_point = next((n for n in original_graph.nodes if n in users), returning.next)
        with original_graph.inserting_before(insert_point):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        returning.replace_all_uses_with(copied)
        for p in reversed(pattern_graph.nodes):
            if p.op not in ("placeholder", "output"):
                original_graph.erase_node(match.nodes_map[p])
    gm.recompile()
    return matches


