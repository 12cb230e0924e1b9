"""Which backward nodes an ``nn.Module`` produced, so that a drawing can collapse them into one box.

Exact: ``watch(model)`` before the forward pass records, for the module and each submodule, the range
of node sequence numbers created during each of its calls (every node gets the next number when it is
created). Without ``watch`` the membership is inferred from the graph: the nodes created between the
module's first and last use of its own parameters (``W.t()``, the product, ``+ bias`` inside a linear
layer). The inference misses nodes a module creates before its first or after its last parameter use
(an activation at the end of a block) and merges two calls of a shared module with everything between
them; ``watch`` has neither limitation.

Only PyTorch's ``nn.Module`` API is assumed: ``named_parameters``, ``named_modules``,
``register_forward_pre_hook`` and ``register_forward_hook``.
"""
import weakref

from ..core import node as _graph

__all__ = ["module_members", "watch"]

_spans = weakref.WeakKeyDictionary()   # module -> [(first seq, end seq), ...], one per call


class _WatchHandle:
    """Returned by ``watch``; ``remove()`` stops recording (the spans already recorded stay)."""

    def __init__(self, handles):
        self._handles = handles

    def remove(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def watch(module):
    """Record which graph nodes each call of ``module`` (and of each of its submodules) creates, so
    that ``make_dot(..., collapse=...)`` knows exactly what to put in the box. Returns a handle with
    ``remove()``; also a context manager: ``with watch(model): y = model(x)``."""
    modules = [m for _, m in module.named_modules()] if hasattr(module, "named_modules") else [module]
    handles = []
    for m in modules:
        open_calls = []

        def before(mod, args, _open=open_calls):
            _open.append(next(_graph._sequence))

        def after(mod, args, output, _open=open_calls):
            start = _open.pop() if _open else 0
            _spans.setdefault(mod, []).append((start, next(_graph._sequence)))

        handles.append(m.register_forward_pre_hook(before))
        handles.append(m.register_forward_hook(after))
    return _WatchHandle(handles)


def module_members(module, nodes, parents):
    """The nodes among ``nodes`` that belong to ``module``: its parameters' AccumulateGrad nodes and
    the nodes its forward created (recorded by ``watch``, else inferred; see the module docstring)."""
    params = {id(p) for _, p in module.named_parameters()}
    param_nodes = {n for n in nodes if hasattr(n, "variable") and id(n.variable) in params}
    spans = _spans.get(module) if _weakrefable(module) else None
    if spans:
        inside = {n for n in nodes if any(start <= n._seq < end for start, end in spans)}
        return inside | param_nodes
    consumers = [p for n in param_nodes for p, _ in parents.get(n, ())]
    members = set(param_nodes)
    if consumers:
        first = min(c._seq for c in consumers)
        last = max(c._seq for c in consumers)
        members.update(n for n in nodes if first <= n._seq <= last)
    return members


def _weakrefable(obj):
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False
