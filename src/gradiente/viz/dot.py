"""``make_dot``: torchviz's drawing of the backward graph, node for node, plus what learners ask for.

With torchviz's arguments alone the result matches torchviz under PyTorch: the same nodes (backward
nodes by class name, ``AccumulateGrad``, leaves in light blue labelled with their ``params`` name and
size, saved tensors in orange, the output in green, a view's base in dark green), the same edges, the
same labels and attributes, in the same order. Only the node ids differ: torchviz uses ``id()`` of
Python objects, we number nodes in the order they are drawn, so a program always gives the same source.

Intended differences: no RecursionError on deep graphs (the walk is iterative, see ``walk``); graphs
with more than ``max_nodes`` nodes have their long chains summarized; after ``backward()`` has freed the
graph, ``show_attrs``/``show_saved`` show saved tensors as ``[freed]`` where PyTorch raises; and the
keyword-only options below, all off by default.
"""
from . import render
from .labels import Notes, gradients
from .modules import module_members
from .names import Names, caller_frame
from .saved import FREED, is_tensorlike, saved_attributes
from .summary import format_shape
from .walk import long_chains, nodes_reaching, output_meta, parents_of, reachable, run

__all__ = ["SAVED_PREFIX", "make_dot", "make_dot_from_trace", "resize_graph", "size_to_str"]

SAVED_PREFIX = "_saved_"

_NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
              "height": "0.2", "fontname": "monospace"}
_HIGHLIGHT = {"color": "red", "penwidth": "2"}
_HIGHLIGHT_FN = {**_HIGHLIGHT, "fillcolor": "lightgrey"}   # a filled node with only `color` is filled red


def size_to_str(size):
    """A shape written as torchviz writes it in a node's label: ``(2, 3)``."""
    return format_shape(size)


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50, *,
             show_values=False, show_grads=False, show_shapes=False, show_dtypes=False, show_formulas=False,
             auto_names=False, highlight=None, collapse=None, max_nodes=1000, max_elems=6):
    """Draw the backward graph that produced ``var`` (a tensor or a tuple of tensors) as a
    ``graphviz.Digraph``; display it in Jupyter, or ``.render(format="svg")`` / ``.pipe(format="png")``.

    torchviz's arguments: ``params`` names tensors (a dict ``{name: tensor}``; here also a module, whose
    ``named_parameters()`` are used, or an iterable of ``(name, tensor)`` pairs); ``show_attrs`` lists
    each node's saved attributes under PyTorch's names; ``show_saved`` draws its saved tensors;
    ``max_attr_chars`` truncates attribute values.

    Beyond torchviz (keyword-only, all off by default so the default drawing is torchviz's):

    * ``show_values``: forward values on tensor nodes and on backward nodes whose output is known
      (a variable of the caller bound to it, or an output the node saved); big tensors as a summary
      (shape, mean, min, max) past ``max_elems`` elements.
    * ``show_grads``: on each backward node the gradient flowing into it (d var / d its output), on
      each leaf the gradient that reaches it. Computed by a separate backward pass that keeps the graph
      and leaves every ``.grad`` untouched; once ``backward()`` has freed the graph, leaves show their
      ``.grad``. ``var`` must be a scalar.
    * ``show_shapes`` / ``show_dtypes``: the output shape (and dtype) of each backward node; dtypes on
      tensor nodes.
    * ``show_formulas``: each node's local derivative rule (e.g. ``d/dx sin x = cos x``).
    * ``auto_names``: name leaves that ``params`` does not name from the caller's variables (and the
      parameters of modules among them), and mark backward nodes whose output is a caller's variable.
    * ``highlight``: a tensor (or list of tensors); the paths from it to the output are drawn in red.
    * ``collapse``: a module, a list of modules, or ``{name: module}``; each module's nodes are drawn
      as one box listing its parameters (see ``gradiente.viz.watch`` for exact membership).
    * ``max_nodes``: above this many backward nodes, chains of more than 7 single-input nodes keep
      their first and last 3 nodes and the middle becomes one dashed box saying how many nodes of
      which kinds it stands for (None: never summarize).
    """
    render.require_graphviz()
    outputs = list(var) if isinstance(var, (tuple, list)) else [var]
    frame = caller_frame(1) if (auto_names or show_values) else None
    names = Names(params, frame, auto=auto_names)
    drawing = _Drawing(outputs, names, {
        "show_attrs": show_attrs, "show_saved": show_saved, "max_attr_chars": max_attr_chars,
        "show_values": show_values, "show_grads": show_grads, "show_shapes": show_shapes, "show_dtypes": show_dtypes,
        "show_formulas": show_formulas, "auto_names": auto_names, "max_elems": max_elems})
    drawing.prepare(highlight, collapse, max_nodes, params)
    for out in outputs:
        run(drawing.add_base_tensor(out))
    resize_graph(drawing.dot)
    return drawing.dot


def make_dot_from_trace(trace):
    """As in torchviz: this functionality is not available (it moved to PyTorch's tensorboard support)."""
    raise NotImplementedError("This function has been moved to pytorch core and "
                              "can be found here: https://pytorch.org/docs/stable/tensorboard.html")


def resize_graph(dot, size_per_element=0.15, min_size=12):
    """Resize the graph according to how much content it contains (torchviz's rule). Modifies ``dot``."""
    num_rows = len(dot.body)
    content_size = num_rows * size_per_element
    size = max(min_size, content_size)
    size_str = str(size) + "," + str(size)
    dot.graph_attr.update(size=size_str)


class _Drawing:
    """One ``make_dot`` call: torchviz's ``add_base_tensor``/``add_nodes`` as generator walks."""

    def __init__(self, outputs, names, options):
        self.dot = render.Digraph(node_attr=dict(_NODE_ATTR), graph_attr={"size": "12,12"})
        self.outputs = outputs
        self.names = names
        self.opt = options
        self.seen = set()               # ids of what has been drawn (objects kept alive in `_alive`)
        self._alive = []
        self._ids = {}
        self.chains = {}
        self.boxes = {}                 # node -> box id of its collapsed module
        self.box_labels = {}
        self.drawn_boxes = set()
        self.box_edges = set()
        self.on_path = None             # with `highlight`: the nodes on a path to a highlighted tensor
        self.highlighted_tensors = set()
        self.notes = None

    # --- setup: what the options need to know about the whole graph ------------------------------------
    def prepare(self, highlight, collapse, max_nodes, params):
        roots = [t.grad_fn for t in self.outputs if getattr(t, "grad_fn", None) is not None]
        nodes = reachable(roots)
        parents = parents_of(nodes)
        if max_nodes is not None and len(nodes) > max_nodes:
            self.chains = long_chains(nodes, parents)
        meta = {}
        if self.opt["show_shapes"] or self.opt["show_dtypes"]:
            meta = output_meta([(t.grad_fn, t) for t in self.outputs if getattr(t, "grad_fn", None)], nodes)
        if highlight is not None:
            targets = highlight if isinstance(highlight, (list, tuple)) else [highlight]
            ends = [t.grad_fn if t.grad_fn is not None else _accumulator(t, nodes) for t in targets]
            self.on_path = nodes_reaching(roots, ends)
            self.highlighted_tensors = {id(t) for t in targets}
        if collapse is not None:
            self._prepare_boxes(collapse, nodes, parents, params)
        grads = gradients(self.outputs, nodes) if self.opt["show_grads"] else None
        self.notes = Notes(self.names, self.opt, meta, grads)

    def _prepare_boxes(self, collapse, nodes, parents, params):
        if hasattr(collapse, "items"):
            pairs = list(collapse.items())
        else:
            modules = collapse if isinstance(collapse, (list, tuple)) else [collapse]
            known = {id(m): n for n, m in params.named_modules()} if hasattr(params, "named_modules") else {}
            pairs = [(known.get(id(m), ""), m) for m in modules]
        for index, (name, module) in enumerate(pairs):
            box = self._new_id(("box", index))
            title = f"{name} ({type(module).__name__})" if name else type(module).__name__
            lines = [title] + [f"  {n} {format_shape(p.shape)}" for n, p in module.named_parameters()]
            self.box_labels[box] = "\n".join(lines)
            for node in module_members(module, nodes, parents):
                self.boxes.setdefault(node, box)

    # --- ids -------------------------------------------------------------------------------------------
    def _new_id(self, key):
        ident = str(len(self._ids) + 1)
        self._ids[key] = ident
        return ident

    def id(self, obj):
        ident = self._ids.get(id(obj))
        if ident is None:
            self._alive.append(obj)
            ident = self._new_id(id(obj))
        return ident

    def target(self, fn):
        """Where an edge to ``fn`` lands: its module's box, or the summary box that replaces it."""
        box = self.boxes.get(fn)
        if box is not None:
            return box
        if fn in self.chains:
            return self.id(self.chains[fn])
        return self.id(fn)

    def mark(self, obj):
        self.seen.add(id(obj))
        self._alive.append(obj)

    # --- torchviz's walk -------------------------------------------------------------------------------
    def add_base_tensor(self, var, color="darkolivegreen1"):
        if id(var) in self.seen:
            return
        self.mark(var)
        self.dot.node(self.id(var), self.var_label(var), fillcolor=color, **self._tensor_style(var))
        if var.grad_fn is not None:
            yield self.add_nodes(var.grad_fn)
            self.edge(self.target(var.grad_fn), self.id(var), self._on_path(var.grad_fn))
        if getattr(var, "_base", None) is not None:
            yield self.add_base_tensor(var._base, color="darkolivegreen3")
            self.dot.edge(self.id(var._base), self.id(var), style="dotted")

    def add_nodes(self, fn):
        if id(fn) in self.seen:
            return
        self.mark(fn)
        if fn in self.chains:
            yield from self._add_chain(fn, self.chains[fn])
            return
        if fn in self.boxes:
            yield from self._add_boxed(fn, self.boxes[fn])
            return
        opt = self.opt
        if opt["show_saved"]:
            for attr, val in saved_attributes(fn):
                self.mark(val)
                if is_tensorlike(val):
                    self.dot.edge(self.id(fn), self.id(val), dir="none")
                    self.dot.node(self.id(val), self.var_label(val, attr), fillcolor="orange")
                if isinstance(val, tuple):
                    for i, t in enumerate(val):
                        if is_tensorlike(t):
                            self.dot.edge(self.id(fn), self.id(t), dir="none")
                            self.dot.node(self.id(t), self.var_label(t, f"{attr}[{i}]"), fillcolor="orange")
        if hasattr(fn, "variable"):
            var = fn.variable
            self.mark(var)
            self.dot.node(self.id(var), self.var_label(var), fillcolor="lightblue", **self._tensor_style(var))
            self.edge(self.id(var), self.id(fn), self._on_path(fn))
        self.dot.node(self.id(fn), self.fn_label(fn), **(_HIGHLIGHT_FN if self._on_path(fn) else {}))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                self.edge(self.target(nxt), self.id(fn), self._on_path(nxt) and self._on_path(fn))
                yield self.add_nodes(nxt)
        for t in _custom_saved_tensors(fn):
            self.mark(t)
            self.dot.edge(self.id(t), self.id(fn), dir="none")
            self.dot.node(self.id(t), self.var_label(t), fillcolor="orange")

    def _add_chain(self, fn, chain):
        ident = self.id(chain)
        self.dot.node(ident, chain.describe(), style="filled,dashed", fillcolor="white")
        for node in chain.hidden:
            self.mark(node)
        if chain.exit is not None:
            self.edge(self.target(chain.exit), ident, False)
            yield self.add_nodes(chain.exit)

    def _add_boxed(self, fn, box):
        if box not in self.drawn_boxes:
            self.drawn_boxes.add(box)
            self.dot.node(box, self.box_labels[box], shape="box3d", fillcolor="lemonchiffon")
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            source = self.target(nxt)
            if source != box and (source, box) not in self.box_edges:
                self.box_edges.add((source, box))
                self.edge(source, box, False)
            yield self.add_nodes(nxt)

    def edge(self, tail, head, highlighted):
        if highlighted:
            self.dot.edge(tail, head, **_HIGHLIGHT)
        else:
            self.dot.edge(tail, head)

    def _on_path(self, fn):
        return self.on_path is not None and fn in self.on_path

    def _tensor_style(self, var):
        return dict(_HIGHLIGHT) if id(var) in self.highlighted_tensors else {}

    # --- labels ----------------------------------------------------------------------------------------
    def var_label(self, var, name=None):
        """torchviz's ``get_var_name``: ``name\\n (size)``, then the lines the options ask for."""
        if not name:
            name = self.names.of_tensor(var)
        lines = [f"{name}\n {self.notes.tensor_size(var)}"] + [" " + line for line in self.notes.tensor_lines(var)]
        return "\n".join(lines)

    def fn_label(self, fn):
        """torchviz's ``get_fn_name`` (the class name, then with ``show_attrs`` a table of saved
        attributes), then the lines the options ask for."""
        label = _fn_name(fn, self.opt["show_attrs"], self.opt["max_attr_chars"])
        extra = self.notes.node_lines(fn)
        return label if not extra else label + "\n" + "\n".join(extra)


def _fn_name(fn, show_attrs, max_attr_chars):
    name = str(type(fn).__name__)
    if not show_attrs:
        return name
    attrs = {}
    for attr, val in saved_attributes(fn):
        if is_tensorlike(val) or val is FREED:
            attrs[attr] = "[saved tensor]" if val is not FREED else "[freed]"
        elif isinstance(val, tuple) and any(is_tensorlike(t) for t in val):
            attrs[attr] = "[saved tensors]"
        else:
            attrs[attr] = str(val)
    if not attrs:
        return name
    max_attr_chars = max(max_attr_chars, 3)
    col1width = max(len(k) for k in attrs)
    col2width = min(max(len(str(v)) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1width + col2width + 2, len(name))
    attrstr = "%-" + str(col1width) + "s: %" + str(col2width) + "s"

    def truncate(s):
        return s[:col2width - 3] + "..." if len(s) > col2width else s
    params = "\n".join(attrstr % (k, truncate(str(v))) for (k, v) in attrs.items())
    return name + "\n" + sep + "\n" + params


def _custom_saved_tensors(fn):
    """``ctx.saved_tensors`` of a custom Function's node (torchviz draws them always); none once freed."""
    from ..autograd.function import BackwardCFunction
    if not isinstance(fn, BackwardCFunction) or fn._saved is None:
        return ()
    try:
        return fn.saved_tensors
    except RuntimeError:
        return ()


def _accumulator(tensor, nodes):
    for node in nodes:
        if getattr(node, "variable", None) is tensor:
            return node
    return None
