"""``Graph``, as ``torch.fx.Graph``: the nodes of one function in order, the methods that add, copy, move and erase
them, and the two ways to read a graph back (``print(graph)``, and ``python_code``, the source ``GraphModule``
runs). New nodes go at the insertion point: the end, or where ``inserting_before``/``inserting_after`` put it.
"""
import inspect

from ._codegen import python_code
from ._names import Namespace, snake_case
from .node import Node, map_arg

__all__ = ["Graph"]


class _NodeList:
    """The live view ``Graph.nodes`` returns: it iterates, reverses and counts the nodes, and survives erasing
    the node an iteration stands on (the iteration moves on past erased nodes)."""

    def __init__(self, graph, direction="_next"):
        self._graph = graph
        self._direction = direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            nxt = getattr(cur, self._direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _NodeList(self._graph, "_prev" if self._direction == "_next" else "_next")


class _InsertPoint:
    def __init__(self, graph, insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, insert

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        self.graph._insert = self.orig_insert


class Graph:
    """The nodes of one function: ``placeholder`` inputs, operations, one ``output``."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The nodes, in order (iterate it, or ``reversed(graph.nodes)``)."""
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """The nodes of kind ``op`` (and ``target``, when given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # --- adding nodes ---------------------------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Make a node at the insertion point; ``name`` (or one made from ``target``) is made unique."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError(f"args must be a tuple, got {type(args)}")
        if not isinstance(kwargs, dict):
            raise AssertionError(f"kwargs must be a dict, got {type(kwargs)}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    @staticmethod
    def _target_to_str(target):
        if callable(target):
            from ._names import public_short_name
            op = public_short_name(target)
        else:
            op = target
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return snake_case(op)

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """An input of the function, named ``name`` (with ``default_value`` when the argument may be left out)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """A read of the module attribute ``qualified_name`` (``"lin.weight"``)."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """A call of the submodule ``module_name``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """A call of the method ``method_name`` of ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """A call of the function ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """The function's return of ``result``."""
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) in this one, its arguments mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy the nodes of ``g`` into this graph, ``val_map`` mapping each of its nodes to its copy (filled in
        here; pre-filled entries are used as given). Returns the value the copied output returned."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def erase_node(self, to_erase):
        """Remove ``to_erase``, which no node may still read."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def inserting_before(self, n=None):
        """A context in which new nodes go before ``n`` (at the start when ``n`` is None)."""
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """A context in which new nodes go after ``n`` (at the end when ``n`` is None)."""
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    # --- checks and passes ----------------------------------------------------------------------------------------
    def lint(self):
        """Check that every node reads only nodes of this graph defined before it, and names are unique."""
        seen_values, seen_names = set(), set()
        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                context = f" of Node '{node}' "
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}'{context}does not belong to this Graph, but was used as an "
                                       "argument! If you are copying nodes from another graph, make sure to use "
                                       f"``arg_transform`` on node_copy() to remap values\n{self}")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}'{context}was used before it has been defined! Please check "
                                       f"that Nodes in the graph are topologically ordered\n{self}")
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase every node whose value nothing reads and whose call changes nothing; returns whether any was."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # --- reading it back ------------------------------------------------------------------------------------------
    def python_code(self, root_module, *, verbose=False, **kwargs):
        """The source of the function this graph is (a ``PythonCode``: ``.src`` and ``.globals``)."""
        return python_code(self, root_module, verbose=verbose)

    def __str__(self):
        placeholder_names = []
        lines = [node.format_node(placeholder_names) for node in self.nodes]
        s = f"graph({', '.join(placeholder_names)}):"
        for line in lines:
            if line:
                s += "\n    " + line
        return s

    def print_tabular(self):
        """The nodes as a table (needs the ``tabulate`` package, as PyTorch's does)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. "
                  "Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))


