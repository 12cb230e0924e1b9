"""``Proxy``, as ``torch.fx.Proxy``: the stand-in value a traced function computes with. Every operation on a
Proxy appends a node to the tracer's graph and returns a new Proxy for its result: an operator (``x + y``) becomes a
``call_function`` of ``operator.add``, a method (``x.sum(dim=1)``) a ``call_method``, an attribute read a
``getattr``, and a call of a torch function (``torch.relu(x)``, ``F.relu(x)``) a ``call_function`` of that function.

How ``torch.relu(proxy)`` becomes a node: PyTorch asks ``__torch_function__``. gradiente already checks, on every
public function, whether an argument needs other handling than a dense tensor's (``sparse_dispatch.guard``: one
``isinstance`` per argument, looked up in a set of classes). Importing fx adds ``Proxy`` to that set
(``sparse_dispatch.route_to``), and the guard hands a call with a Proxy argument to ``_record_call`` here. So no op
pays anything new: a program that never imports fx runs exactly the code it ran before, and once fx is loaded a
call on plain tensors still makes the same one set lookup per argument. (Swapping the namespaces' functions while a
tracer runs, as vmap does, would miss the calls made outside a trace: a GraphModule called with a Proxy, or a
function called on ``Proxy(node)`` to build nodes by hand, as fx programs do.)

The five public functions that are not behind the guard and may meet a Proxy (``mm``, ``matmul`` and ``addmm``, which
take sparse tensors themselves, and ``torch.ops.profiler``'s two ops) are wrapped once, when fx loads
(``_check_the_functions_outside_the_guard``).
"""
import bisect
import dis
import functools
import inspect
import operator

from .. import sparse_dispatch
from ..numpy_names import op_behind
from ._codegen import MAGIC_METHODS, REFLECTABLE_MAGIC_METHODS
from .graph import Graph
from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "ParameterProxy", "TracerBase", "GraphAppendingTracer", "TraceError"]


class TraceError(ValueError):
    pass


class TracerBase:
    """What every tracer does: turn a call on proxies into a node (``create_proxy``) and its arguments into what a
    node may hold (``create_arg``)."""
    graph: Graph
    trace_asserts = False
    proxy_buffer_attributes = False
    scope = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Add a node to ``self.graph`` (a tracer may override this to record more, or to make other nodes)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """A node for the call ``kind``/``target`` on ``args`` and ``kwargs`` (which may hold proxies), wrapped in a
        Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError(f"Expected args_ to be tuple, got {type(args_)}")
        if not isinstance(kwargs_, dict):
            raise AssertionError(f"Expected kwargs_ to be dict, got {type(kwargs_)}")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """``a`` as a node may hold it: a Proxy becomes its node, containers are walked into, numbers, strings,
        dtypes, devices, tensors and None stay as they are."""
        import gradiente
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(elem) for elem in a]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, Node) or a is None or a is ... or isinstance(
                a, (str, int, float, bool, complex, gradiente.dtype, gradiente.Tensor, gradiente.device,
                    gradiente.memory_format, gradiente.layout, gradiente.Size)):
            return a
        import enum
        if isinstance(a, enum.Enum):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or"
                         " as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the"
                         " Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to ``graph`` (what ``Proxy(node)`` uses to build nodes by hand)."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


def _find_tracer(args, kwargs):
    found = []
    map_aggregate((args, kwargs), lambda a: found.append(a.tracer) if isinstance(a, Proxy) else None)
    tracers = list(dict.fromkeys(found))
    if len(tracers) > 1:
        raise RuntimeError(f"Found multiple different tracers {tracers} while trying to trace operations")
    return tracers[0]


def _record_call(function, args, kwargs):
    """``function(*args, **kwargs)`` with a Proxy among the arguments: a ``call_function`` node.

    PyTorch's Python functions of ``nn.functional`` pass every argument but their tensors by keyword when they
    hand a call to a Proxy (``F.relu(x)`` records ``relu(x, inplace=False)``); so does this, so the nodes print
    alike."""
    tracer = _find_tracer(args, kwargs)
    args, kwargs = _as_functional_passes_them(function, args, kwargs)
    return tracer.create_proxy("call_function", function, args, kwargs)


#: the functions of PyTorch's ``torch.functional`` that hand a Proxy its call this way, and how many arguments
#: each passes by position
_TORCH_FUNCTIONAL_POSITIONAL = {"split": 2, "tensordot": 2, "cdist": 2, "norm": 1, "stft": 1, "istft": 1,
                                "unique": 1, "unique_consecutive": 1}


def _as_functional_passes_them(function, args, kwargs):
    from ._names import _FUNCTIONAL_C_HOMES, public_name
    name = public_name(function) or ""
    short = name.rsplit(".", 1)[-1]
    if name.startswith("torch.nn.functional.") and short not in _FUNCTIONAL_C_HOMES:
        positional = 1
    elif name.startswith("torch.functional.") and short in _TORCH_FUNCTIONAL_POSITIONAL:
        positional = _TORCH_FUNCTIONAL_POSITIONAL[short]
    else:
        return args, kwargs
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs
    bound.apply_defaults()
    names = list(bound.arguments)
    return tuple(bound.arguments[k] for k in names[:positional]), {k: bound.arguments[k] for k in names[positional:]}


class Proxy:
    """A value being traced: operations on it become nodes of ``self.tracer.graph``."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        sparse_dispatch.route_to(cls, _record_call)    # (a subclass's instances are proxies too)

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __deepcopy__(self, memo):
        raise RuntimeError("'__deepcopy__' is not supported on a Proxy")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy`` is traceable: the caller's next instruction says how many values it unpacks
        frame = inspect.currentframe().f_back
        instructions = list(dis.get_instructions(frame.f_code))
        index = bisect.bisect_left(instructions, frame.f_lasti, key=lambda x: x.offset)
        if index < len(instructions) and instructions[index].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(instructions[index].argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")


sparse_dispatch.route_to(Proxy, _record_call)


def _proxy_checked(function):
    """``function`` with a Proxy among its arguments recorded as a node, for the few public functions the guard
    does not wrap because they take sparse tensors themselves (``sparse_dispatch.SPARSE_AWARE``)."""
    @functools.wraps(function)
    def checked(*args, **kwargs):
        for a in args:
            if isinstance(a, Proxy):
                return _record_call(checked, args, kwargs)
        if kwargs and any(isinstance(a, Proxy) for a in kwargs.values()):
            return _record_call(checked, args, kwargs)
        return function(*args, **kwargs)
    # what vmap's dispatch reads to find the op behind a wrapper (numpy_names.op_behind), so that a batched matmul
    # still finds its batching rule after fx has loaded
    checked.numpy_names_of = op_behind(function)
    return checked


def _check_the_functions_outside_the_guard():
    # swapped once, when fx loads: ``torch.mm``, ``torch.matmul`` and ``torch.addmm`` (which take sparse tensors
    # themselves) and ``torch.ops.profiler``'s two ops (which a tracer records to keep profiler ranges); a program
    # that never uses fx calls them unwrapped, and one that does pays one frame on these
    import gradiente

    from ..ops import profiler
    for module, name in ((gradiente, "mm"), (gradiente, "matmul"), (gradiente, "addmm"),
                         (profiler, "_record_function_enter"), (profiler, "_record_function_exit")):
        setattr(module, name, _proxy_checked(getattr(module, name)))


_check_the_functions_outside_the_guard()


def _define_operator(method):
    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", getattr(operator, method), args, kwargs)
    impl.__name__ = method
    setattr(Proxy, f"__{method.strip('_')}__", impl)


def _define_reflected_operator(method):
    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", getattr(operator, method), (rhs, self), {})
    impl.__name__ = impl.__qualname__ = f"__r{method.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


for _method in MAGIC_METHODS:
    _define_operator(_method)
for _method in REFLECTABLE_MAGIC_METHODS:
    _define_reflected_operator(_method)


class Attribute(Proxy):
    """``proxy.name``: a method call when it is called (``call_method``), else a ``getattr`` node, made when first
    used as a value."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter read while tracing: its shape, size and dimensions are the parameter's own, so that code which
    tests them traces."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()
