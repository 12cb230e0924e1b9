"""``GraphModule``, as ``torch.fx.GraphModule``: a module whose ``forward`` is the source generated from a graph
(``.code``), run as Python. It keeps, of the module it was made from, only the submodules, parameters and buffers
its graph reads; ``recompile()`` after changing the graph writes the new ``forward``. Each GraphModule gets a class
of its own, so that assigning its ``forward`` touches no other one.
"""
import linecache

from ..core.tensor import Tensor
from ..nn import Module
from .graph import Graph

__all__ = ["GraphModule"]

_generated_count = [0]


def _forward_from_src(src, globals_):
    """The function ``forward`` that ``src`` defines, compiled under a file name of its own so that tracebacks
    show the generated line."""
    _generated_count[0] += 1
    filename = f"<eval_with_key>.{_generated_count[0]}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(globals_)
    exec(compile(src, filename, "exec"), namespace)
    return namespace["forward"]


def _copy_attr(from_module, to_module, target):
    """Give ``to_module`` the attribute ``target`` (``"a.b.weight"``) of ``from_module``, making empty modules for
    the path where ``to_module`` has none."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    _set_attr(to_module, field, getattr(from_module, field))


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    _set_attr(to_module, field, from_obj)


def _set_attr(module, field, value):
    """A plain tensor becomes a buffer of ``module`` (so that it moves with the module); anything else an
    attribute."""
    from ..nn.parameter import Parameter
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        module.register_buffer(field, value)
    else:
        setattr(module, field, value)


def _addindent(s, num_spaces):
    """Every line of ``s`` but the first indented by ``num_spaces``; blank lines stay empty."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(num_spaces * " " + line if line.strip() else "" for line in lines[1:])


def _print_readable(module, module_name, print_output=True):
    code = module.graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
    module_code = _addindent(f"class {module_name}(torch.nn.Module):\n" + code, 4)
    children = [""] + [_print_readable(child, name, print_output=False)
                       for name, child in module.named_children() if isinstance(child, GraphModule)]
    output = module_code + _addindent("\n".join(children), 4)
    if print_output:
        print(output)
    return output


class GraphModule(Module):
    """A module made of ``root`` (a module, or a dict of the attributes the graph reads) and ``graph``."""

    def __new__(cls, *args, **kwargs):
        # a class per instance: ``recompile`` sets ``forward`` on it
        base = cls
        for klass in cls.__mro__:
            if klass.__name__ == "GraphModuleImpl":
                base = klass.__mro__[1]
                break

        class GraphModuleImpl(base):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError("Node " + str(node) + " referenced target " + node.target +
                                           " but that target was not provided in ``root``!")
                    targets.append(node.target)
            for target in sorted(targets, key=lambda t: t.count(".")):
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    @property
    def graph(self):
        """The graph this module runs; assigning one recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The source of ``forward``, generated from the graph."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Generate ``forward`` again from ``self.graph`` (after changing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, **kwargs):
        """The module's code as a class, with the comment lines of the verbose code and the code of the
        GraphModules among its children nested inside."""
        return _print_readable(self, type(self).__name__, print_output)

    def __str__(self):
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__str__(), self._code, reminder])

    def __copy__(self):
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __deepcopy__(self, memo):
        import copy
        res = Module.__new__(type(self))
        memo[id(self)] = res
        fake = Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, fake, fake.__dict__["_graph"])
        return res
