"""The backward graph as plain text, for terminals, logs and error messages (no extra package).

    y ()  output
    MeanBackward0
    AddBackward0
    ├─ MulBackward0
    │  SinBackward0
    │  AccumulateGrad ◄ x (5)  [1]
    └─ ReciprocalBackward0
       AddBackward0
       AccumulateGrad ◄ x (5)  [1] again

Each line is a node; the line below it is its input. A node with several inputs opens a branch
(``├─``/``└─``); a node with one input continues in the same column, so a long chain does not drift to
the right. A node reached along several paths is written once and marked ``[k]``; later it appears as
``[k] again``. Branches nested deeper than ``max_depth`` continue in a separate block, ``[k] continued``,
after the rest, so no line grows without bound. As in ``make_dot``, graphs of more than ``max_nodes``
nodes have the middle of long chains replaced by one line. The walk is iterative.
"""
from ..core.node import Node
from .labels import Notes, gradients
from .names import Names, caller_frame
from .walk import long_chains, output_meta, parents_of, reachable

__all__ = ["to_text"]


def to_text(var, params=None, *, auto_names=True, show_values=False, show_grads=False, show_shapes=False,
            show_dtypes=False, show_formulas=False, max_nodes=1000, max_depth=12, max_lines=None, max_elems=6):
    """The graph of ``var`` (a tensor, a tuple of tensors, or a backward node) as text; see the module
    docstring for how to read it. The ``show_*`` options, ``params`` and ``auto_names`` mean what they
    mean for ``make_dot``, except that ``auto_names`` is on by default here. ``max_lines`` cuts the
    drawing short (for error messages)."""
    items = list(var) if isinstance(var, (tuple, list)) else [var]
    frame = caller_frame(1) if (auto_names or show_values) else None
    names = Names(params, frame, auto=auto_names)
    roots = [item if isinstance(item, Node) else item.grad_fn for item in items]
    nodes = reachable(roots)
    parents = parents_of(nodes)
    options = {"show_values": show_values, "show_grads": show_grads, "show_shapes": show_shapes,
               "show_dtypes": show_dtypes, "show_formulas": show_formulas, "max_elems": max_elems,
               "auto_names": auto_names}
    meta = {}
    if show_shapes or show_dtypes:
        meta = output_meta([(i.grad_fn, i) for i in items if not isinstance(i, Node) and i.grad_fn], nodes)
    tensors = [i for i in items if not isinstance(i, Node)]
    grads = gradients(tensors, nodes) if show_grads and len(tensors) == 1 else None
    writer = _Writer(names, Notes(names, options, meta, grads), max_depth)
    writer.shared = {n for n, p in parents.items() if len(p) > 1}
    if max_nodes is not None and len(nodes) > max_nodes:
        writer.chains = long_chains(nodes, parents)
    for item in items:
        if isinstance(item, Node):
            writer.block(item, "")
        else:
            writer.lines.append(writer.tensor_label(item, names.of_tensor(item)) + "  output")
            if item.grad_fn is not None:
                writer.block(item.grad_fn, "")
    while writer.deferred:
        node = writer.deferred.pop(0)
        writer.lines.append("")
        writer.block(node, f"[{writer.number[node]}] continued: ")
    lines = writer.lines
    if max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(writer.lines) - max_lines:,} more lines)"]
    return "\n".join(lines)


class _Writer:
    def __init__(self, names, notes, max_depth):
        self.names = names
        self.notes = notes
        self.max_depth = max_depth
        self.lines = []
        self.number = {}                # shared or deferred node -> its [k]
        self.written = set()
        self.deferred = []
        self.shared = set()
        self.chains = {}

    def mark(self, node):
        if node not in self.number:
            self.number[node] = len(self.number) + 1
        return f"[{self.number[node]}]"

    def block(self, root, lead):
        """Write the subtree of ``root``: a stack of (node, prefix for its line, prefix for its inputs)."""
        stack = [(root, lead, "")]
        first = True
        while stack:
            node, head, indent = stack.pop()
            if node in self.written:
                self.lines.append(f"{head}{self.node_label(node)}  {self.mark(node)} again")
                continue
            if not first and node in self.number and node in self.deferred:
                self.lines.append(f"{head}{self.node_label(node)}  {self.mark(node)} continued below")
                continue
            first = False
            chain = self.chains.get(node)
            if chain is not None:
                self.written.update(chain.hidden)
                self.lines.append(f"{head}{chain.describe().replace(chr(10), ': ')}")
                if chain.exit is not None:
                    stack.append((chain.exit, indent, indent))
                continue
            self.written.add(node)
            tag = f"  {self.mark(node)}" if node in self.shared else ""
            self.lines.append(f"{head}{self.node_label(node)}{tag}")
            inputs = [nxt for nxt, _ in node.next_functions if nxt is not None]
            if len(inputs) == 1:
                stack.append((inputs[0], indent, indent))
                continue
            if len(indent) // 3 >= self.max_depth:
                for nxt in inputs:
                    if nxt not in self.written and nxt not in self.deferred:
                        self.mark(nxt)
                        self.deferred.append(nxt)
                    self.lines.append(f"{indent}└─ {type(nxt).__name__}  [{self.number[nxt]}] continued below")
                continue
            for i in range(len(inputs) - 1, -1, -1):
                last = i == len(inputs) - 1
                stack.append((inputs[i], indent + ("└─ " if last else "├─ "), indent + ("   " if last else "│  ")))

    # --- labels ----------------------------------------------------------------------------------------
    def node_label(self, node):
        if hasattr(node, "variable"):
            var = node.variable
            return f"{type(node).__name__} ◄ {self.tensor_label(var, self.names.of_tensor(var))}"
        notes = self.notes.node_lines(node)
        return type(node).__name__ + ("  " + " | ".join(notes) if notes else "")

    def tensor_label(self, tensor, name):
        return " ".join(([name] if name else []) + [self.notes.tensor_size(tensor)] + self.notes.tensor_lines(tensor))
