"""How an op reaches its batching rule, and the per-example fallback for ops that have none.

Three roads lead a BatchedTensor into an op:

* its own methods (``x.sum(1)``, ``x + y``, ``w @ x`` through the reflected ``__rmatmul__``): BatchedTensor is a
  class of its own, whose methods are generated here from the one table of Tensor methods
  (``tensor_methods.METHODS``), so plain tensors' methods are untouched;
* the public functions (``torch.sum``, ``torch.nn.functional.linear``, ``torch.special.erf``, ...): while a vmap
  runs, and only then, the public namespaces hold dispatching versions of their functions (``install``). Outside
  vmap the namespaces hold the plain functions, so an ordinary program pays nothing for vmap's existence; inside
  vmap, a call with no batched argument goes straight to the plain function;
* a plain tensor's method with a batched argument (``w.matmul(x)``, ``mask.eq(x)``): while a vmap runs, the
  out-of-place methods that take a second tensor (``PLAIN_SELF_METHODS``) dispatch too; every other plain op
  reads the batched value's array and raises (``_batched_tensor.py``), with PyTorch's message for an in-place
  write of a batched value into an unbatched tensor (``plain.add_(x)``), which PyTorch refuses as well.

``dispatch(fn, args, kwargs)`` finds the batching rule of ``fn`` (``_batching_rules.RULES``): one call of the plain
op on the physical tensors. An op without a rule, or a variant its rule does not cover, runs per example
(``fallback``): the innermost level's batch is looped over, each slice goes through ``dispatch`` again (so a
nested vmap batches the outer levels whenever it can), and the results are stacked. It gives the same values and
gradients, one call per example. ``FALLBACK_COUNTS`` counts its uses per op, for tests and for curiosity.
"""
import collections
import functools
import threading
import types

from .. import sparse_dispatch as _sparse_dispatch
from ..core import random as _random
from ..core.tensor import Tensor
from ..numpy_names import op_behind, with_torch_names
from ..ops import joining
from ._batched_tensor import (
    _INPLACE_ERROR,
    BatchedTensor,
    active_levels,
    expand_to,
    levels_of,
    size_of_level,
    wrap,
)
from ._batching_rules import INPLACE_OF, RANDOM, RULES, TRANSLATIONS, VIEW_INPLACE, randomness

__all__ = ["dispatch", "fallback", "install", "uninstall", "FALLBACK_COUNTS"]

# a public function bound before vmap started (a layer's activation=F.relu) hands a batched argument back here
_sparse_dispatch.see_batched_tensors(BatchedTensor)

#: how many times each op ran per example (its name: count)
FALLBACK_COUNTS: collections.Counter = collections.Counter()


def _leaves(args, kwargs):
    """Every argument, and the items of list and tuple arguments (``cat([x, y])``, an index tuple)."""
    for a in args:
        yield a
        if a.__class__ is tuple or a.__class__ is list:
            yield from a
    for a in kwargs.values():
        yield a
        if a.__class__ is tuple or a.__class__ is list:
            yield from a


def batch_levels(args, kwargs):
    """The sorted union of the levels of the batched arguments (``()``: none is batched)."""
    found = set()
    for a in _leaves(args, kwargs):
        if a.__class__ is BatchedTensor:
            found.update(a._levels)
    return tuple(sorted(found))


def dispatch(fn, args, kwargs):
    """``fn(*args, **kwargs)`` where some arguments may be batched."""
    levels = batch_levels(args, kwargs)
    if fn in RANDOM and active_levels():
        if fn not in RULES or not levels:
            check_randomness()      # (a rule of a random op checks for itself: dropout in eval mode draws nothing)
        if not levels:
            return _random_without_batched_inputs(fn, args, kwargs)
    if not levels:
        return fn(*args, **kwargs)
    rule = RULES.get(fn)
    if rule is not None:
        result = rule(fn, args, kwargs, levels)
        if result is not NotImplemented:
            return result
    return fallback(fn, args, kwargs, levels)


# --- randomness ---------------------------------------------------------------------------------------------

def check_randomness():
    if any(level.randomness == "legacy" for level in active_levels()):
        raise RuntimeError("vmap: We do not yet support calling random operations inside of vmap. Please perform "
                           "random operations outside of vmap as a workaround")
    if randomness() == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")


def _random_without_batched_inputs(fn, args, kwargs):
    """``torch.randn(3)`` inside vmap: one draw for the whole batch ('same'), or one per example at each level
    that asks for 'different'."""
    if randomness() == "same":
        return fn(*args, **kwargs)
    return _draws(fn, args, kwargs, tuple(level.id for level in active_levels() if level.randomness == "different"))


def _draws(fn, args, kwargs, levels):
    if not levels:
        return fn(*args, **kwargs)
    return _stack_results([_draws(fn, args, kwargs, levels[:-1]) for _ in range(size_of_level(levels[-1]))],
                          levels[-1])


# --- the per-example fallback -------------------------------------------------------------------------------

def _select(x, level, i):
    """Example ``i`` of ``x`` at ``level`` (``x`` itself when it is not batched there)."""
    if x.__class__ is not BatchedTensor or level not in x._levels:
        return x
    position = x._levels.index(level)
    return wrap(x._value.select(position, i), tuple(lv for lv in x._levels if lv != level))


def _select_all(args, kwargs, level, i):
    def one(a):
        if a.__class__ is tuple or a.__class__ is list:
            return a.__class__(_select(x, level, i) for x in a)
        return _select(a, level, i)
    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def fallback(fn, args, kwargs, levels):
    """``fn`` once per example of the innermost level, results stacked: for ops with no batching rule."""
    FALLBACK_COUNTS[getattr(fn, "__name__", repr(fn))] += 1
    level = levels[-1]
    state = _random.get_rng_state() if fn in RANDOM and randomness() == "same" else None
    results = []
    for i in range(size_of_level(level)):
        if state is not None:
            _random.set_rng_state(state)        # 'same': every example draws the same numbers
        a, k = _select_all(args, kwargs, level, i)
        results.append(dispatch(fn, a, k))
    return _stack_results(results, level)


def _stack_results(results, level):
    """Per-example results (tensors, tuples of them, or equal non-tensors) stacked at ``level``."""
    first = results[0] if results else None
    if isinstance(first, Tensor):
        return _stack_tensors(results, level)
    if isinstance(first, (tuple, list)) and results and all(len(r) == len(first) for r in results):
        parts = [_stack_results([r[j] for r in results], level) for j in range(len(first))]
        if hasattr(first, "_fields"):
            return type(first)(*parts)
        return type(first)(parts) if isinstance(first, list) else tuple(parts)
    if all(r is first or r == first for r in results):
        return first
    raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
                       "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")


def _stack_tensors(tensors, level):
    union = tuple(sorted({lv for t in tensors for lv in levels_of(t)}))
    rank = max(t.dim() for t in tensors)
    parts = [expand_to(t, union, rank) for t in tensors]
    # the level of a fallback is the innermost of its arguments, so its dim goes after the results' own
    return wrap(joining.stack(parts, len(union)), union + (level,))


# --- in-place ops on a batched tensor -----------------------------------------------------------------------

def dispatch_inplace(name, op, self, args, kwargs):
    """``self.name(*args)`` for an in-place method ``name`` whose out-of-place op is ``op``: the plain in-place
    method on the physical tensor when ``op`` has a translating rule, else per example, on views of ``self``."""
    own = set(self._levels)
    if not set(batch_levels(args, kwargs)) <= own:
        raise RuntimeError(_INPLACE_ERROR)
    if op in RANDOM:
        check_randomness()
    method = getattr(Tensor, name)
    translation = TRANSLATIONS.get(op)
    if translation is not None:
        translated = translation(op, (self,) + tuple(args), kwargs, self._levels, True)
        if translated is not NotImplemented:
            pargs, pkwargs = translated
            method(pargs[0], *pargs[1:], **pkwargs)
            return self
    FALLBACK_COUNTS[name] += 1
    level = self._levels[-1]
    state = _random.get_rng_state() if op in RANDOM and randomness() == "same" else None
    for i in range(size_of_level(level)):
        if state is not None:
            _random.set_rng_state(state)
        a, k = _select_all(args, kwargs, level, i)
        getattr(_select(self, level, i), name)(*a, **k)
    return self


# --- BatchedTensor's methods, from the one method table -----------------------------------------------------

def _method(fn, name):
    def method(self, *args, **kwargs):
        return dispatch(fn, (self,) + args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _inplace_method(op, name):
    def method(self, *args, **kwargs):
        return dispatch_inplace(name, op, self, args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _view_inplace_method(op, name):
    """``x.squeeze_()`` and its kin change ``x``'s shape: the batched tensor takes the view's physical value."""
    def method(self, *args, **kwargs):
        result = dispatch(op, (self,) + args, kwargs)
        self._value = result._value
        return self
    method.__name__ = method.__qualname__ = name
    return method


def _is_inplace_name(name):
    return (name.endswith("_") and not name.endswith("__")) or (name.startswith("__i") and name != "__init__"
                                                                and name not in ("__index__", "__invert__",
                                                                                 "__iter__"))


_OWN = {"__new__", "__repr__", "backward", "__iter__"}    # BatchedTensor defines these itself, or needs none
# operators whose Tensor method first hands a NumPy operand to NumPy: on a batched tensor, the op itself
_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div"}


def bind_methods():
    """Give BatchedTensor a dispatching method for every row of the Tensor method table (once)."""
    from ..tensor_methods import _InPlace, resolved_methods
    for what, *names in resolved_methods():
        for name in names:
            if name in _OWN:
                continue
            if name in _OPERATORS:      # (the op behind the method's wrappers: the sparse check's, sparse_dispatch.py)
                what = op_behind(getattr(Tensor, _OPERATORS[name]))
            if name in VIEW_INPLACE:
                setattr(BatchedTensor, name, _view_inplace_method(VIEW_INPLACE[name], name))
                continue
            if isinstance(what, _InPlace):
                setattr(BatchedTensor, name, _inplace_method(what.op, name))
            elif isinstance(what, property):
                setattr(BatchedTensor, name, property(_method(what.fget, name)))
            elif name == "__setitem__":
                setattr(BatchedTensor, name, _inplace_method(what, name))
            elif _is_inplace_name(name):
                setattr(BatchedTensor, name, _inplace_method(INPLACE_OF.get(what, what), name))
            else:
                setattr(BatchedTensor, name, _method(what, name))
    BatchedTensor.__iter__ = lambda self: iter(self.unbind(0))


# --- the public namespaces while a vmap runs ----------------------------------------------------------------

_NAMESPACES = ("gradiente", "gradiente.nn.functional", "gradiente.special", "gradiente.linalg", "gradiente.fft",
               "gradiente.autograd")
_NOT_OPS = ("gradiente.func", "gradiente.autograd", "gradiente.serialization", "gradiente.utils", "gradiente.legacy",
            "gradiente.core.grad_mode", "gradiente.core.dtype", "gradiente.core.printing")
_swap = threading.Lock()
_installed = [0]
_tables: list = []         # (namespace dict, dispatching functions, plain functions)


def _dispatching(fn):
    # a namespace may hold an op behind its NumPy-names wrapper (numpy_names.py): rules know the op itself
    op = op_behind(fn)

    @functools.wraps(fn)
    def dispatching(*args, **kwargs):
        return dispatch(op, args, with_torch_names(fn, kwargs))
    dispatching.__wrapped_op__ = op
    return dispatching


def _build_tables():
    import importlib

    import gradiente
    # the functions torch.* makes or loads on first use join the namespace now, so that vmap swaps them too
    gradiente._make_every_function()
    for names in gradiente._LOADED_ON_FIRST_USE.values():
        for name in names:
            getattr(gradiente, name)
    for module_name in _NAMESPACES:
        module = importlib.import_module(module_name)
        namespace = vars(module)
        plain = {name: value for name, value in namespace.items()
                 if isinstance(value, types.FunctionType) and not name.startswith("__")
                 and not any(value.__module__ == p or value.__module__.startswith(p + ".") for p in _NOT_OPS)}
        _tables.append((namespace, {name: _dispatching(fn) for name, fn in plain.items()}, plain))


#: the plain Tensor methods that dispatch while a vmap runs: out-of-place, with a second tensor operand that may be
#: the batched one. A short list, because binding costs a little at every outermost vmap call; the rest raise.
PLAIN_SELF_METHODS = (
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "where",
    "masked_fill", "matmul", "mm", "mv", "bmm", "dot", "outer", "expand_as", "view_as", "reshape_as", "type_as")


def _plain_self_method(name, method):
    op = op_behind(method)

    def dispatching_method(self, *args, **kwargs):
        if any(a.__class__ is BatchedTensor for a in _leaves(args, kwargs)):
            return dispatch(op, (self,) + args, kwargs)
        return method(self, *args, **kwargs)
    dispatching_method.__name__ = dispatching_method.__qualname__ = name
    return dispatching_method


_method_tables: list = []       # [dispatching methods, plain methods], built by the first vmap


def install():
    """Put the dispatching functions in the public namespaces, and the dispatching methods of
    ``PLAIN_SELF_METHODS`` on Tensor (the outermost vmap of any thread does it)."""
    from ..tensor_methods import rebind
    with _swap:
        if not _tables:
            _build_tables()
        if not _method_tables:
            # (looked up through the class: the table makes a method on its first lookup, tensor_methods.py)
            plain = {name: getattr(Tensor, name) for name in PLAIN_SELF_METHODS}
            dispatching = {name: _plain_self_method(name, method) for name, method in plain.items()}
            _method_tables[:] = [dispatching, plain]
        _installed[0] += 1
        if _installed[0] == 1:
            for namespace, dispatching, _ in _tables:
                namespace.update(dispatching)
            rebind(_method_tables[0])


def uninstall():
    from ..tensor_methods import rebind
    with _swap:
        _installed[0] -= 1
        if _installed[0] == 0:
            for namespace, _, plain in _tables:
                namespace.update(plain)
            rebind(_method_tables[1])


_by_op: dict = {}           # plain op -> its dispatching version (for functions handed to a transform)


def resolve(func):
    """The function a transform should call for ``func``: a public op handed over as a value (``vmap(torch.sin)``,
    ``vmap(torch.Tensor.sum)``) was bound before any vmap ran, so it is swapped for its dispatching version."""
    if not _by_op:
        with _swap:
            if not _tables:
                _build_tables()
            for _, dispatching, plain in _tables:
                for name, fn in plain.items():
                    _by_op.setdefault(fn, dispatching[name])
                    # (and by the op behind its wrappers: a transform looks a function up by op_behind)
                    _by_op.setdefault(op_behind(fn), dispatching[name])
            from ..tensor_methods import resolved_methods
            for what, *_ in resolved_methods():
                if isinstance(what, types.FunctionType) and what not in _by_op:
                    _by_op[what] = _dispatching(what)
    try:
        return _by_op.get(op_behind(func), func)    # (a Tensor method may be an op behind its NumPy-names wrapper)
    except TypeError:           # an unhashable callable
        return func


#: public functions that take no tensor to batch (factories, settings, the generator): nothing to list
_NOTHING_TO_BATCH = frozenset((
    "arange", "are_deterministic_algorithms_enabled", "as_tensor", "asarray", "bartlett_window", "from_dlpack",
    "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache", "get_autocast_cpu_dtype",
    "get_autocast_dtype", "get_autocast_gpu_dtype", "is_autocast_available", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled", "is_learner_mode_enabled",
    "blackman_window", "broadcast_shapes", "can_cast", "empty", "eye", "from_numpy", "full",
    "get_default_device", "get_deterministic_debug_mode", "get_float32_matmul_precision",
    "get_num_interop_threads", "get_num_threads", "get_rng_state", "hamming_window", "hann_window",
    "initial_seed", "is_deterministic_algorithms_warn_only_enabled", "is_warn_always_enabled", "kaiser_window",
    "linspace", "logspace", "manual_seed", "ones", "rand", "randint", "randn", "randperm", "scalar_tensor",
    "seed", "set_default_device", "set_deterministic_debug_mode", "set_float32_matmul_precision",
    "set_flush_denormal", "set_num_interop_threads", "set_num_threads", "set_rng_state", "set_warn_always",
    "tensor", "tril_indices", "triu_indices", "use_deterministic_algorithms", "zeros", "typename", "is_tensor"))


def ops_without_rules():
    """The public functions (``torch.*``, ``torch.nn.functional.*``, ``torch.special.*``, ``torch.linalg.*``) that
    run per example under vmap, by name (docs/architecture.md lists them)."""
    import gradiente
    with _swap:
        if not _tables:
            _build_tables()
    # (a name torch.* loads on first use is listed where it lives, e.g. nn.functional: whether the top-level
    # namespace holds it yet depends on what ran before)
    lazy = gradiente._LAZY_ATTRIBUTES
    names = {name for namespace, _, plain in _tables for name, fn in plain.items()
             if op_behind(fn) not in RULES and not name.startswith("_") and name not in _NOTHING_TO_BATCH
             and not (namespace is vars(gradiente) and name in lazy)}
    # the ops torch.* itself loads on first use (gradiente._LAZY_ATTRIBUTES), loaded here to be listed
    loaded_later = {name for listed in gradiente._LOADED_ON_FIRST_USE.values() for name in listed}
    loaded_later |= {name for name, module in gradiente._LAZY_ATTRIBUTES.items() if module.startswith("ops.")}
    names |= {name for name in loaded_later if op_behind(getattr(gradiente, name)) not in RULES
              and name not in _NOTHING_TO_BATCH and not name.startswith("_")}
    return sorted(names)
