"""The timing wrappers a profiler swaps in while it records: every op reached by name becomes an ``aten::`` event.

Nothing here runs unless a profiler records, so ops cost nothing extra otherwise. ``install`` puts a timing wrapper
in place of each op function

* on ``Tensor`` (every method of the table in ``tensor_methods.py``, rebound through ``bind_through``),
* in the namespaces a program calls ops through (``gradiente``, ``gradiente.nn.functional``),
* and in every loaded gradiente module's globals, so that an op calling another op by name shows it nested, as in
  PyTorch: ``aten::linear`` around ``aten::t`` and ``aten::addmm``, ``aten::matmul`` around ``aten::mm``;

and ``uninstall`` puts the very same objects back (``Tensor.add is gradiente.ops.arithmetic.add`` again).

An event is named as PyTorch names the op: ``aten::`` and the name it was called by (``x.divide(y)`` is
``aten::divide``, ``x.div(y)`` ``aten::div``), with Python's operators under their ops' names (``x + y`` is
``aten::add``, ``x @ w`` ``aten::matmul``, ``x[0]`` ``aten::select``). What is not an op in PyTorch's eyes records
nothing: ``backward``, ``repr``, the conversion constructors (``tensor``, ``from_numpy``), predicates and settings
(``is_*``, ``set_*``, ``manual_seed``). A name a program imported into its own module before the profiler started
(``from gradiente import relu``) is not swapped, so that call is not seen.
"""
import functools
import sys
import types

import numpy as np

from ..core import profiling
from ..core.tensor import Tensor

__all__ = ["install", "uninstall", "installed", "swap_ops", "put_back"]

#: Python's operators, as the ops PyTorch records for them (a missing one keeps its name: ``aten::__and__``)
_OPERATORS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_",
    "__floordiv__": "floor_divide", "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__rmod__": "remainder",
    "__imod__": "remainder_", "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow_", "__matmul__": "matmul",
    "__rmatmul__": "matmul", "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_not",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    # the dtype conversions are all aten::to
    "float": "to", "double": "to", "half": "to", "long": "to", "int": "to", "short": "to", "char": "to",
    "byte": "to", "bool": "to", "type": "to",
}

#: functions PyTorch records under another op's name
_RENAMED = {"cross_entropy": "cross_entropy_loss", "nll_loss": "nll_loss_nd"}

#: methods that are no op of their own: nothing recorded (the ops they call are, where they call them by name:
#: ``1 / x`` shows ``aten::reciprocal`` and ``aten::mul``, as in PyTorch)
_NOT_OPS = {"backward", "storage", "untyped_storage", "__repr__", "__new__", "new", "is_conj", "is_neg",
            "__rtruediv__", "__rfloordiv__", "__iter__"}

#: the modules whose public functions are ops, when gradiente exports them
_OP_MODULES = ("gradiente.ops.", "gradiente.core.creation", "gradiente.core.windows", "gradiente.functional_aliases")
_SAMPLERS = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like", "randn_like",
             "randint_like"}
_NOT_OP_FUNCTIONS = {"tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "result_type", "promote_types",
                     "can_cast"}


class _Swap:
    """What ``install`` replaced, to be put back (``current`` is None while nothing is swapped in): the function
    that binds the Tensor table back, and ``(namespace, name, original)`` for each global replaced."""

    current: "_Swap | None" = None

    def __init__(self, restore_methods, replaced):
        self.restore_methods = restore_methods
        self.replaced = replaced


def installed():
    return _Swap.current is not None


def install():
    """Swap the timing wrappers in (once; a second call while installed does nothing)."""
    if _Swap.current is not None:
        return
    wrappers: dict = {}                        # (id(function), event name) -> its wrapper: aliases stay identical

    def wrap_method(name, method):
        if name == "__getitem__":
            return _timed_indexing(method, _reading_event)
        if name == "__setitem__":
            return _timed_indexing(method, _writing_event)
        return _wrapper(wrappers, method, _OPERATORS.get(name, name))
    _Swap.current = _Swap(*swap_ops(lambda function, name: _wrapper(wrappers, function, name), wrap_method))


def swap_ops(wrap_function, wrap_method):
    """Put ``wrap_function(function, name)`` in place of every op function reached by name (the namespaces and
    every loaded gradiente module's globals) and ``wrap_method(name, method)`` in place of each op method of
    Tensor; returns ``(restore_methods, replaced)``, what ``put_back`` needs. The profiler times ops this way,
    and selective checkpointing (``utils/checkpoint_selective.py``) reaches each op call before it runs."""
    replaced = []
    # The methods first: binding them makes the table's methods not made yet, and a method whose op loads on first
    # use reads it from its module's globals, which must not hold a wrapper of the swap's yet.
    restore_methods = _bind_methods(wrap_method)
    try:
        for namespace, global_name, value, name in _targets():
            namespace[global_name] = wrap_function(value, name)
            replaced.append((namespace, global_name, value))
    except BaseException:
        for namespace, name, original in replaced:
            namespace[name] = original
        restore_methods()
        raise
    return restore_methods, replaced


#: the swap's targets, found once per set of loaded modules: (how many modules were loaded, the targets)
_found: list = [-1, []]


def _targets():
    """``(namespace, global name, op function, its name)`` for each op function reached by name in a loaded
    gradiente module. Walking every module is the slow part of a swap, so the list is kept until a module loads
    or a listed name stops holding its function."""
    from ..nn import functional  # noqa: F401  - loaded now, so that its functions are swapped too
    count, targets = _found
    if count == len(sys.modules) and all(namespace.get(g) is value for namespace, g, value, _ in targets):
        return targets
    names = _op_function_names()
    targets = []
    for module in [m for name, m in list(sys.modules.items()) if _is_gradiente_module(name, m)]:
        namespace = vars(module)
        for global_name, value in list(namespace.items()):
            known = names.get(id(value))
            if known is None or known[0] is not value:
                continue
            targets.append((namespace, global_name, value, global_name if not global_name.startswith("_") else
                            known[1]))
    _found[:] = [len(sys.modules), targets]
    return targets


def put_back(restore_methods, replaced):
    """Undo ``swap_ops``: the very objects it replaced are bound again."""
    try:
        restore_methods()
    finally:
        for namespace, name, original in replaced:
            namespace[name] = original


def uninstall():
    """Put back every object ``install`` replaced."""
    done, _Swap.current = _Swap.current, None
    if done is not None:
        put_back(done.restore_methods, done.replaced)


def _is_gradiente_module(name, module):
    return (module is not None and (name == "gradiente" or name.startswith("gradiente."))
            and not name.startswith(("gradiente.profiler", "gradiente.autograd.profiler", __name__,
                                     "gradiente.utils.checkpoint")))


def _op_function_names():
    """``{id(function): (function, its name)}`` for every op function: gradiente's, ``nn.functional``'s, the
    methods'."""
    from .. import __name__ as package_name
    from ..nn import functional
    from ..tensor_methods import resolved_methods
    gradiente = sys.modules[package_name]
    gradiente._make_every_function()        # (the namespace makes its functions on first use)
    found: dict = {}
    for name, value in vars(gradiente).items():
        if _is_op_function(name, value):
            found.setdefault(id(value), (value, name))
    for name, value in vars(functional).items():
        if (isinstance(value, types.FunctionType) and not name.startswith("_")
                and value.__module__.startswith("gradiente.")):
            found.setdefault(id(value), (value, name))
    for what, *method_names in resolved_methods():
        public = [n for n in method_names if not n.startswith("_")]
        if isinstance(what, types.FunctionType) and public and public[0] not in _NOT_OPS:
            found.setdefault(id(what), (what, public[0]))
    return found


def _is_op_function(name, value):
    if not isinstance(value, types.FunctionType) or name.startswith("_") or name in _NOT_OP_FUNCTIONS:
        return False
    if name.startswith(("is_", "set_", "get_")):
        return False
    module = value.__module__ or ""
    return module.startswith(_OP_MODULES) or (module == "gradiente.core.random" and name in _SAMPLERS)


def _bind_methods(wrap_method):
    from ..tensor_methods import bind_through

    def wrap(name, method):
        if not isinstance(method, types.FunctionType) or name in _NOT_OPS:
            return None
        return wrap_method(name, method)
    return bind_through(wrap)


def _wrapper(wrappers, function, name):
    key = (id(function), name)
    wrapper = wrappers.get(key)
    if wrapper is None:
        wrapper = wrappers[key] = _timed(function, "aten::" + _RENAMED.get(name, name))
    return wrapper


def _timed(function, event):
    """``function``, recording one event named ``event`` per call while a session records."""
    @functools.wraps(function)
    def timed(*args, **kwargs):
        session = profiling.state.session
        if session is None:
            return function(*args, **kwargs)
        start = profiling.clock()
        try:
            return function(*args, **kwargs)
        finally:
            session.add(event, start, profiling.clock(), profiling.FORWARD, -1,
                        _shapes(args) if session.record_shapes else None)
    return timed


def _timed_indexing(method, event_of):
    """``x[key]`` and ``x[key] = v``: PyTorch records the op the key asks for (``select``, ``slice``, ``index``)."""
    @functools.wraps(method)
    def timed(self, key, *value):
        session = profiling.state.session
        if session is None:
            return method(self, key, *value)
        start = profiling.clock()
        try:
            return method(self, key, *value)
        finally:
            session.add(event_of(key, *value), start, profiling.clock(), profiling.FORWARD, -1,
                        _shapes((self, key) + value) if session.record_shapes else None)
    return timed


def _is_advanced(item):
    return isinstance(item, (Tensor, list, np.ndarray, bool))


def _reading_event(key):
    """The first op PyTorch's indexing records for ``key``, item by item: an int selects, a slice that is not the
    whole dim slices, None unsqueezes; tensors, lists and bools index."""
    items = key if type(key) is tuple else (key,)
    if any(_is_advanced(item) for item in items):
        return "aten::index"
    for item in items:
        if isinstance(item, (int, np.integer)):
            return "aten::select"
        if isinstance(item, slice) and item != slice(None):
            return "aten::slice"
        if item is None:
            return "aten::unsqueeze"
    return "aten::slice" if any(isinstance(item, slice) for item in items) else "aten::alias"


def _writing_event(key, value):
    """``x[key] = value``: PyTorch's write: ``index_put_`` for advanced indexing, else ``fill_`` for a number and
    ``copy_`` for a tensor."""
    items = key if type(key) is tuple else (key,)
    if any(_is_advanced(item) for item in items):
        return "aten::index_put_"
    return "aten::copy_" if isinstance(value, Tensor) else "aten::fill_"


def _shapes(args):
    """PyTorch's ``input_shapes``: each argument's shape as a list, ``[]`` for what is not a tensor."""
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in args]
