"""Walks over the recorded graph shared by the drawing, the text rendering and the walkthrough.

Every walk here is iterative and visits nodes in a fixed order (``next_functions`` order, first visit
wins), so a 100,000-node chain needs no deeper Python stack than a 3-node one and the same program
always gives the same drawing. ``run`` drives a walk written as a generator that ``yield``s its
recursive calls: the code reads like the recursive torchviz original, the stack lives on the heap.
"""
from collections import Counter

__all__ = ["ChainSummary", "long_chains", "nodes_reaching", "output_meta", "parents_of", "postorder", "reachable",
           "run"]


def run(walk):
    """Drive a generator-based walk: each ``yield sub_walk`` runs ``sub_walk`` to completion first."""
    stack = [walk]
    while stack:
        try:
            stack.append(next(stack[-1]))
        except StopIteration:
            stack.pop()


def reachable(roots):
    """The backward nodes reachable from ``roots`` (nodes; None is skipped), in depth-first preorder."""
    order, seen = [], set()
    stack = [r for r in reversed(roots) if r is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(nxt for nxt, _ in reversed(node.next_functions) if nxt is not None and nxt not in seen)
    return order


def parents_of(nodes):
    """``{node: [(parent, input_index), ...]}``: the edges that lead into each node, in walk order."""
    parents = {node: [] for node in nodes}
    for node in nodes:
        for i, (nxt, _) in enumerate(node.next_functions):
            if nxt is not None:
                parents.setdefault(nxt, []).append((node, i))
    return parents


def output_meta(roots, nodes):
    """``{node: (shape, numpy dtype)}`` of each node's output, read from the input metadata its consumers
    recorded; ``roots`` are ``(node, tensor)`` pairs that give the outputs' own shapes."""
    meta = {}
    for node, tensor in roots:
        if node is not None:
            meta.setdefault(node, (tuple(tensor.shape), tensor._data.dtype))
    for node in nodes:
        inputs = getattr(node, "_input_meta", None) or ()
        for (nxt, _), m in zip(node.next_functions, inputs):
            if nxt is not None and m is not None:
                meta.setdefault(nxt, (tuple(m[0]), m[1]))
    return meta


def postorder(roots):
    """The reachable nodes with every node after all the nodes it leads to (leaves first)."""
    order, seen = [], set()
    stack = [(r, iter(r.next_functions)) for r in reversed(roots) if r is not None]
    seen.update(node for node, _ in stack)
    while stack:
        node, edges = stack[-1]
        for nxt, _ in edges:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(nxt.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def nodes_reaching(roots, targets):
    """The nodes reachable from ``roots`` from which some node in ``targets`` can be reached, targets
    included: the nodes on a path from the output to a target."""
    on_path = {t for t in targets if t is not None}
    for node in postorder(roots):
        if node not in on_path and any(nxt in on_path for nxt, _ in node.next_functions):
            on_path.add(node)
    return on_path


class ChainSummary:
    """A run of nodes each with one consumer and one input, drawn as a single box."""

    def __init__(self, hidden, exit_node):
        self.hidden = hidden            # the nodes the box stands for, output side first
        self.exit = exit_node           # the node after the run (the box's input), or None
        self.counts = Counter(type(n).__name__ for n in hidden)

    def describe(self, more="more nodes"):
        kinds = ", ".join(f"{name} ×{count:,}" for name, count in self.counts.most_common(3))
        if len(self.counts) > 3:
            kinds += ", ..."
        return f"... {len(self.hidden):,} {more} ...\n{kinds}"


def long_chains(nodes, parents, keep=3):
    """Find runs of chain nodes (one consumer, one input) longer than ``2 * keep + 1`` and return
    ``{first hidden node: ChainSummary}``: the first and last ``keep`` nodes of each run stay visible,
    the middle becomes one summary box."""
    def is_link(node):
        edges = [nxt for nxt, _ in node.next_functions if nxt is not None]
        return len(parents.get(node, ())) == 1 and len(edges) == 1 and not hasattr(node, "variable")

    summaries = {}
    visited = set()
    for node in nodes:
        if node in visited or not is_link(node):
            continue
        consumer = parents[node][0][0]
        if is_link(consumer):
            continue                    # not the start of a run: its run begins above
        run_nodes = []
        cur = node
        while cur is not None and is_link(cur) and cur not in visited:
            visited.add(cur)
            run_nodes.append(cur)
            cur = next(nxt for nxt, _ in cur.next_functions if nxt is not None)
        if len(run_nodes) > 2 * keep + 1:
            hidden = run_nodes[keep:len(run_nodes) - keep]
            summaries[hidden[0]] = ChainSummary(hidden, run_nodes[len(run_nodes) - keep])
    return summaries
