"""``Tracer``, ``symbolic_trace`` and ``wrap``, as ``torch.fx``'s: tracing runs a module's ``forward`` once on
proxies, with ``Module.__call__`` and ``Module.__getattr__`` patched for the duration, so that a call of a leaf
module (every ``torch.nn`` module) becomes one ``call_module`` node, a parameter read a ``get_attr`` node, and a
function registered with ``wrap`` one ``call_function`` node, while everything else the function does on proxies
records itself (``proxy.py``).
"""
import builtins
import functools
import inspect

from ..core.tensor import Tensor
from .graph import Graph
from .node import map_aggregate
from .proxy import ParameterProxy, Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH"]

#: the functions ``wrap`` registered: (id of the module's globals, name) -> those globals
_wrapped_fns_to_patch = {}


class _PlaceholderMarker:
    pass


PH = _PlaceholderMarker()


def wrap(fn_or_name):
    """Record calls of the global function ``fn_or_name`` (a function or its name) of the calling module as
    ``call_function`` leaves rather than tracing through them. Call it at the top level of a module."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name


def _wrapped_leaf(orig_fn):
    """``orig_fn`` as a traced program sees it: a node when a Proxy is among its arguments, else ``orig_fn``."""
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxies = []
        map_aggregate((args, kwargs), lambda a: proxies.append(a) if isinstance(a, Proxy) else None)
        if proxies:
            proxy = proxies[0].tracer.create_proxy("call_function", orig_fn, args, kwargs)
            proxy.node.meta["is_wrapped"] = True
            return proxy
        return orig_fn(*args, **kwargs)
    return wrapped


class _Patcher:
    """Patches undone in reverse order when the trace ends."""

    def __init__(self):
        self._undo = []

    def setattr(self, owner, name, value):
        old = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else _MISSING
        self._undo.append(lambda: delattr(owner, name) if old is _MISSING else setattr(owner, name, old))
        setattr(owner, name, value)

    def setitem(self, mapping, name, value):
        old = mapping.get(name, _MISSING)
        self._undo.append(lambda: mapping.pop(name, None) if old is _MISSING else mapping.__setitem__(name, old))
        mapping[name] = value

    def undo(self):
        while self._undo:
            self._undo.pop()()


_MISSING = object()


def _parameter_proxy(tracer, node, name, param):
    return ParameterProxy(tracer, node, name, param)


class Tracer(TracerBase):
    """Traces a module or function into a ``Graph`` (``trace``). Override ``is_leaf_module``, ``call_module``,
    ``create_proxy``, ``create_node`` or ``create_arg`` to change what is recorded."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self.param_shapes_constant = param_shapes_constant
        self._autowrap_functions = tuple(autowrap_functions)
        self.submodule_paths = None
        self.root = None
        self.tensor_attrs = {}

    def create_arg(self, a):
        """As ``TracerBase.create_arg``, and a parameter or tensor of the module read by value becomes a
        ``get_attr`` node (a tensor that is no attribute becomes one, ``_tensor_constant0``)."""
        from ..nn.parameter import Parameter
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, p in self.root.named_buffers():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                setattr(self.root, qualname, a)
                self.tensor_attrs[id(a)] = qualname
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m, module_qualified_name):
        """Whether a call of ``m`` is recorded as one ``call_module`` node: every ``torch.nn`` module but
        ``Sequential``; a module of your own is traced through."""
        from ..nn import Sequential
        module = type(m).__module__
        return module.startswith(("gradiente.nn", "torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """The qualified name of ``mod`` in the traced root (``"layer1.0.conv1"``)."""
        path = self.submodule_paths.get(mod) if self.submodule_paths is not None else None
        if path is None:
            for n, p in self.root.named_modules():
                if mod is p:
                    return n
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """A call of the submodule ``m``: a ``call_module`` node for a leaf, else ``forward`` traced through."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """What reading the module attribute ``attr`` gives while tracing: a ``get_attr`` proxy for a parameter
        (or buffer), cached per name; else the value itself."""
        from ..nn.parameter import Parameter
        if isinstance(attr_val, Parameter):
            collection = self.root.named_parameters()
        elif self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            collection = self.root.named_buffers()
        else:
            return attr_val
        for n, p in collection:
            if attr_val is p:
                if n not in parameter_proxy_cache:
                    kwargs = {}
                    if "proxy_factory_fn" in inspect.signature(self.create_proxy).parameters:
                        kwargs["proxy_factory_fn"] = (None if not self.param_shapes_constant else functools.partial(
                            _parameter_proxy, self, name=n, param=attr_val))
                    parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {}, **kwargs)
                return parameter_proxy_cache[n]
        return attr_val

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Placeholders for ``root_fn``'s parameters (``self`` skipped for a module's forward)."""
        sig = inspect.signature(root_fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]
        concrete_args = concrete_args or {}
        args = [self.root] if is_module else []
        for p in params:
            if p.name in concrete_args:
                args.append(concrete_args[p.name])
                continue
            annotation = None if p.annotation is inspect.Parameter.empty else p.annotation
            if p.kind == inspect.Parameter.VAR_POSITIONAL:
                name, default = "*" + p.name, inspect.Signature.empty
            elif p.kind == inspect.Parameter.VAR_KEYWORD:
                name, default = "**" + p.name, inspect.Signature.empty
            else:
                name, default = p.name, p.default
            args.append(self.create_proxy("placeholder", name, () if default is inspect.Signature.empty
                                          else (default,), {}, type_expr=annotation))
        return root_fn, args

    def trace(self, root, concrete_args=None):
        """Run ``root`` (a module or function) on proxies and return the ``Graph`` of what it did."""
        from ..nn import Module
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        self._collect_tensor_attrs(self.root, [])
        self.submodule_paths = {mod: name for name, mod in self.root.named_modules()}
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        parameter_proxy_cache = {}
        tracer = self
        orig_call, orig_getattr = Module.__call__, Module.__getattr__

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return orig_call(mod, *args, **kwargs)
            return tracer.call_module(mod, forward, args, kwargs)

        patcher = _Patcher()
        try:
            patcher.setattr(Module, "__getattr__", module_getattr_wrapper)
            patcher.setattr(Module, "__call__", module_call_wrapper)
            self._patch_wrapped_functions(patcher, fn)
            result = fn(*args)
            return_type = fn.__annotations__.get("return", None) if hasattr(fn, "__annotations__") else None
            self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=return_type)
        finally:
            patcher.undo()
        self.submodule_paths = None
        return self.graph

    def _collect_tensor_attrs(self, m, prefix_atoms):
        """Remember the qualified name of each plain tensor attribute (no parameter, no buffer) of the modules, so
        that a read of one becomes a ``get_attr`` of that name."""
        from ..nn.parameter import Parameter
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor) and not isinstance(v, Parameter):
                self.tensor_attrs[id(v)] = ".".join(prefix_atoms + [k])
        for k, v in m.named_children():
            self._collect_tensor_attrs(v, prefix_atoms + [k])

    def _patch_wrapped_functions(self, patcher, fn):
        """Put leaf versions of the functions ``wrap`` registered (and this tracer's ``autowrap_functions``) in
        their modules' globals for the trace."""
        for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
            if name not in frame_dict and hasattr(builtins, name):
                orig_fn = getattr(builtins, name)
            else:
                orig_fn = frame_dict[name]
            patcher.setitem(frame_dict, name, _wrapped_leaf(orig_fn))
        fn_globals = getattr(fn, "__globals__", None)
        if fn_globals is not None:
            for f in self._autowrap_functions:
                if fn_globals.get(f.__name__) is f:
                    patcher.setitem(fn_globals, f.__name__, _wrapped_leaf(f))


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (a module or function) into a ``GraphModule``."""
    from ..nn import Module
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
