"""The Python source of a graph, as ``torch.fx`` writes it (``GraphModule.code``): one line per node, each
operator written as an operator (``add = x + y``), a method as a method call, a module as ``self.name(...)``, every
other function by its qualified name (``torch.relu(x)``), and, after a value's last use, ``;  x = None`` so that
the generated ``forward`` frees memory as early as the graph allows. The text matches PyTorch's character for
character, so that a learner's printout reads as the tutorial's.
"""
import math
from dataclasses import dataclass

from ._names import GeneratedCodeTorch, Namespace, is_from_torch, qualified_name
from ._names import type_repr as _plain_type_repr
from .node import Node

__all__ = ["PythonCode", "python_code", "MAGIC_METHODS", "REFLECTABLE_MAGIC_METHODS", "INPLACE_METHODS"]

REFLECTABLE_MAGIC_METHODS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}"}
MAGIC_METHODS = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
    "pos": "+{}", "neg": "-{}", "invert": "~{}", **REFLECTABLE_MAGIC_METHODS}
INPLACE_METHODS = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}", "imod": "{} %= {}",
    "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}", "ipow": "{} **= {}", "irshift": "{} >>= {}",
    "isub": "{} -= {}", "itruediv": "{} /= {}", "ixor": "{} ^= {}", "setitem": "{}[{}] = {}"}


@dataclass
class PythonCode:
    """The source of a graph's function and the globals it must run with."""
    src: str
    globals: dict


def _format_target(base, target):
    """``self.a.b``, or ``getattr(self.a, "0")`` for a part that is not an identifier."""
    r = base
    for part in target.split("."):
        r = f"{r}.{part}" if part.isidentifier() else f'getattr({r}, "{part}")'
    return r


def python_code(graph, root_module, verbose=False):
    """The ``forward`` source of ``graph`` (a ``PythonCode``), with modules and attributes read from
    ``root_module`` (usually ``"self"``); ``verbose`` adds the comment lines ``print_readable`` shows."""
    import gradiente

    from . import _symbolic_trace
    namespace = Namespace()
    for node in graph.nodes:
        namespace.create_name(node.name, node)    # (graph names come first: a global takes what is left)
    free_vars, body, globals_, wrapped_fns = [], [], {}, {}
    return_annotation = [""]

    def add_global(name_hint, obj):
        if is_from_torch(obj):
            return qualified_name(obj) if callable(obj) and not isinstance(obj, type) else _plain_type_repr(obj)
        name = namespace.create_name(name_hint, obj)
        if name in globals_ and globals_[name] is not obj:
            raise AssertionError(f"Global name {name} already assigned to different object")
        globals_[name] = obj
        return name

    for name, obj in (("inf", math.inf), ("nan", math.nan), ("NoneType", type(None)), ("torch", GeneratedCodeTorch())):
        globals_[name] = obj

    def type_repr(o):
        if o == ():
            return "()"
        if getattr(o, "__origin__", None) is not None:
            origin = add_global(_plain_type_repr(o.__origin__), o.__origin__)
            args = getattr(o, "__args__", ())
            return f"{origin}[{','.join(type_repr(a) for a in args)}]" if args else origin
        return add_global(_plain_type_repr(o), o)

    def get_repr(arg):
        if isinstance(arg, Node):
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            name = add_global(qualified_name(type(arg)), type(arg))
            return f"{name}{tuple(arg)!r}"
        if isinstance(arg, gradiente.Tensor):
            return f"torch.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
        if isinstance(arg, tuple):
            return f"({get_repr(arg[0])},)" if len(arg) == 1 else "(" + ", ".join(get_repr(a) for a in arg) + ")"
        if isinstance(arg, list):
            return "[" + ", ".join(get_repr(a) for a in arg) + "]"
        if isinstance(arg, slice):
            return f"slice({get_repr(arg.start)}, {get_repr(arg.stop)}, {get_repr(arg.step)})"
        return repr(arg)

    def format_args(args, kwargs):
        return ", ".join([get_repr(a) for a in args] + [f"{k} = {get_repr(v)}" for k, v in kwargs.items()])

    # each value is freed after the node that reads it last
    last_use, to_free = {}, {}
    for node in reversed(graph.nodes):
        for input_node in node._input_nodes:
            if input_node not in last_use:
                last_use[input_node] = node
                to_free.setdefault(node, []).append(input_node)

    def free_unused(user):
        if user.op == "placeholder":
            return
        if user.op == "output":
            body.append("\n")
            return
        freed = list(to_free.get(user, []))
        if not user.users:
            freed.append(user)
        body.append(f";  {' = '.join([repr(n) for n in freed] + ['None'])}\n" if freed else "\n")

    def emit(node):
        annotation = "" if node.type is None else f" : {type_repr(node.type)}"
        if node.op == "placeholder":
            default = "" if not node.args else f" = {get_repr(node.args[0])}"
            free_vars.append(f"{node.target}{annotation}{default}")
            raw_name = node.target.replace("*", "")
            if raw_name != repr(node):
                body.append(f"{node!r} = {raw_name}\n")
        elif node.op == "call_method":
            body.append(f"{node!r}{annotation} = {_format_target(get_repr(node.args[0]), node.target)}"
                        f"({format_args(node.args[1:], node.kwargs)})")
        elif node.op == "call_function":
            name = getattr(node.target, "__name__", "")
            if getattr(node.target, "__module__", "") == "_operator" and name in MAGIC_METHODS:
                body.append(f"{node!r}{annotation} = "
                            f"{MAGIC_METHODS[name].format(*(get_repr(a) for a in node.args))}")
                return
            if getattr(node.target, "__module__", "") == "_operator" and name in INPLACE_METHODS:
                body.append(f"{INPLACE_METHODS[name].format(*(get_repr(a) for a in node.args))};  "
                            f"{node!r}{annotation} = {get_repr(node.args[0])}")
                return
            global_name = add_global(qualified_name(node.target), node.target)
            if global_name == "getattr" and isinstance(node.args, tuple) and len(node.args) == 2 and \
                    isinstance(node.args[1], str) and node.args[1].isidentifier():
                body.append(f"{node!r}{annotation} = {_format_target(get_repr(node.args[0]), node.args[1])}")
                return
            body.append(f"{node!r}{annotation} = {global_name}({format_args(node.args, node.kwargs)})")
            if node.meta.get("is_wrapped", False):
                wrapped_fns.setdefault(global_name)
        elif node.op == "call_module":
            body.append(f"{node!r}{annotation} = "
                        f"{_format_target(root_module, node.target)}({format_args(node.args, node.kwargs)})")
        elif node.op == "get_attr":
            body.append(f"{node!r}{annotation} = {_format_target(root_module, node.target)}")
        elif node.op == "output":
            if node.type is not None:
                return_annotation[0] = f" -> {type_repr(node.type)}"
            body.append(f"return {get_repr(node.args[0])}")
        else:
            raise NotImplementedError(f"node: {node.op} {node.target}")

    summary = None
    for node in graph.nodes:
        if verbose and node.op not in ("placeholder", "output"):
            # (the traced program's line each node came from; gradiente records none, as PyTorch by default)
            line = f"\n# {node.meta.get('stack_trace') or 'No stacktrace found for following nodes'}\n"
            if line != summary:
                summary = line
                body.append(line)
        emit(node)
        free_unused(node)
    if not body:
        body.append("pass\n")
    wrap_stmts = ""
    if wrapped_fns:
        wrap_name = add_global("wrap", _symbolic_trace.wrap)
        wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
    if not free_vars or free_vars[0] != "self":
        free_vars.insert(0, "self")
    prologue = f"def forward({', '.join(free_vars)}){return_annotation[0]}:"
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)


