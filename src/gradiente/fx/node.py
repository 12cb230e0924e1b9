"""``Node``: one operation of a graph, as ``torch.fx.Node``, and ``map_arg``/``map_aggregate``, which walk the
nested tuples, lists and dicts a node's arguments may be.

A node is one of six kinds (``op``): ``placeholder`` (an input of the function), ``get_attr`` (a parameter or
attribute of the module), ``call_function``, ``call_method``, ``call_module`` and ``output``. Its ``args`` and
``kwargs`` hold values and other nodes; each node knows the nodes it reads (``all_input_nodes``) and the nodes
that read it (``users``), kept current whenever ``args`` or ``kwargs`` are assigned. The nodes of a graph form a
doubly linked list around a sentinel (``Graph._root``), so that inserting and erasing cost nothing per node.
"""
from ._names import pretty_print_target, type_repr
from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "Target", "Argument"]

Target = object
Argument = object


def map_aggregate(a, fn):
    """``a`` with ``fn`` applied to each of its leaves (tuples, lists, dicts and slices are walked into; lists and
    dicts come back immutable, as fx keeps them)."""
    if isinstance(a, tuple):
        items = tuple(map_aggregate(elem, fn) for elem in a)
        return items if not hasattr(a, "_fields") else type(a)(*items)
    if isinstance(a, list):
        return immutable_list([map_aggregate(elem, fn) for elem in a])
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``a`` with ``fn`` applied to each Node inside it."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg, max_list_len=float("inf")):
    """An argument as a graph prints it: a node as ``%name``, containers item by item."""
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        items = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation of a ``Graph``: ``op`` (its kind), ``target`` (what it calls or reads), ``args``, ``kwargs``,
    ``name`` (the variable the generated code assigns), ``users`` and ``meta`` (a dict for passes to annotate)."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"):
            raise AssertionError(f"Unexpected op: {op}")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}      # (a dict as an ordered set)
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta = {}
        self._args = ()
        self._kwargs = immutable_dict()
        self._update_args_kwargs(args, kwargs)

    # --- the linked list ------------------------------------------------------------------------------------
    @property
    def next(self):
        """The node after this one in the graph."""
        return self._next

    @property
    def prev(self):
        """The node before this one in the graph."""
        return self._prev

    def prepend(self, x):
        """Put ``x`` just before this node (moving it if it is in the graph already)."""
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Put ``x`` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # --- arguments and uses ------------------------------------------------------------------------------------
    @property
    def args(self):
        """The positional arguments (a tuple); assigning it updates the users of the nodes read."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments (an immutable dict); assigning it updates the users of the nodes read."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """Every node this one reads, in the order its arguments name them."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        """Set positional argument ``idx``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Set keyword argument ``key``."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old_use in self._input_nodes:
            old_use.users.pop(self)
        self._input_nodes = {}

        def collect(n):
            self._input_nodes.setdefault(n)
            return n
        self._args = map_arg(tuple(new_args), collect)
        self._kwargs = map_arg(dict(new_kwargs), collect)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    def replace_all_uses_with(self, replace_with, delete_user_cb=None, *, propagate_meta=False):
        """Make every user of this node read ``replace_with`` instead (those ``delete_user_cb`` accepts, when it
        is given); returns the users changed."""
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if delete_user_cb is not None and not delete_user_cb(user):
                continue
            changed.append(user)
            user._replace_input_with(self, replace_with)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Make this node read ``new_input`` wherever it read ``old_input``."""
        self._replace_input_with(old_input, new_input)

    def _replace_input_with(self, old_input, new_input):
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random=True):
        """Whether removing this node could change what the program does (an input, the output, an in-place
        call, or a call of a module that is impure): ``eliminate_dead_code`` keeps such nodes."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return getattr(self.target, "_is_impure", False) or \
                getattr(self.target, "__name__", "").startswith("_record_function")
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            module = self.graph.owning_module
            target = module.get_submodule(self.target) if module is not None else None
            return getattr(target, "_is_impure", False)
        return False

    # --- printing ------------------------------------------------------------------------------------------------
    def __repr__(self):
        return self.name

    @staticmethod
    def _pretty_print_target(target):
        return pretty_print_target(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """This node as a graph prints it: ``%add : [num_users=1] = call_function[target=operator.add](args =
        (%x, %y), kwargs = {})``."""
        typename = f"{type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += arg_str + f": {type_repr(self.type)}" if self.type else ""
            if placeholder_names:
                placeholder_names.append(arg_str)
                return None
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}[target={self.target}]" \
                   f"{default_val}"
        if self.op == "get_attr":
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = " \
                   f"{self.op}[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {type_repr(self.type)}"
            return f"return {self.args[0]}"
        return f"%{self.name} : {typename}[num_users={len(self.users)}] = " \
               f"{self.op}[target={self._pretty_print_target(self.target)}](" \
               f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
