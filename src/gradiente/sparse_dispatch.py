"""The one check that keeps sparse tensors from silent wrong results (issue 13): every torch-level function, every
``nn.functional``, ``linalg`` and ``special`` function and every Tensor method that takes a second argument goes
through ``guard``, which lets dense arguments pass untouched and sends a call with a sparse tensor anywhere in its
arguments to ``sparse_call``.

A sparse tensor's ``_data`` is its values array, so a dense op given one would compute on the values and return a
dense tensor of the wrong shape, or a plausible number. ``sparse_call`` runs instead what PyTorch runs on that layout
(the sparse tensor's own method, f of the values, a sum or product of entries: ``ops/sparse_elementwise.py``) or
raises PyTorch's error for an op without a sparse kernel. The Tensor methods of the sparse classes are bound to the
same ``sparse_call`` (``sparse_method``), so ``torch.sin(s)`` and ``s.sin()`` cannot differ.

Cost: a dense call pays one ``isinstance`` per positional argument (and per keyword argument, when there are any).

The same check serves torch.fx (issue 16): while ``gradiente.fx`` is loaded, ``route_to`` adds its ``Proxy`` class
to the classes the check looks for, and a call with a Proxy among its arguments goes to fx's handler, which records
the call as a graph node. A program that never imports fx pays nothing for it, and one that does pays it only on the
calls that were already leaving the fast path (a list, a tuple or a keyword argument).
"""
import math

import numpy as np

from .core.sparse_compressed import LAYOUT_WORDS, SparseCompressedTensor
from .core.sparse_tensor import SparseCooTensor, SparseLayoutTensor, not_on_sparse
from .core.tensor import Tensor
from .core.warnings_at_caller import SKIPPED_CODE
from .core.wrapping import wraps
from .numpy_names import op_behind, rename_numpy_names
from .ops import sparse_elementwise as elementwise

__all__ = ["guard", "guard_namespace", "route_to", "sparse_call", "sparse_method", "layout_error", "has_sparse",
           "sparse_dispatch_methods", "SPARSE_CLASSES"]

_ADD = frozenset({"add", "add_", "__add__", "__radd__", "__iadd__"})
_SUB = frozenset({"sub", "subtract", "sub_", "subtract_", "__sub__", "__isub__", "__rsub__"})
# (a sparse class is a subclass of Tensor, so Python asks its reflected operator first: ``dense + sparse`` runs
# ``sparse.__radd__(dense)``, which must compute ``dense + sparse``)
_REFLECTED = frozenset({"__radd__", "__rmul__", "__rsub__"})
_MUL = frozenset({"mul", "multiply", "mul_", "multiply_", "__mul__", "__rmul__", "__imul__"})
#: joining COO tensors (torch.cat and its aliases, torch.stack)
#: the joins of a list that holds a sparse tensor: ``ops/sparse_coo.py``'s function of that name
_JOINS = {"cat": "cat", "concat": "cat", "concatenate": "cat", "stack": "stack"}
_IN_PLACE_OPERATORS = frozenset({"__iadd__", "__isub__", "__imul__", "__itruediv__"})


#: the sparse layouts' classes
SPARSE_CLASSES = frozenset({SparseCooTensor, SparseCompressedTensor})
#: the classes of an argument that is, or may hold, a sparse tensor (a subclass of these is checked by
#: ``has_sparse``, which the sparse classes' own methods never reach: they are bound to ``sparse_call``)
_MAYBE_SPARSE = frozenset({SparseCooTensor, SparseCompressedTensor, list, tuple})
#: vmap's batched tensor class, once vmap has loaded (``see_batched_tensors``)
_BATCHED: set = set()
#: the classes a guarded function looks at twice: the sparse ones, the batched one, and fx's Proxy (``route_to``)
_LOOKED_AT: set = set(_MAYBE_SPARSE)


def see_batched_tensors(cls):
    """Called by vmap's dispatch as it loads (it cannot be imported from here: it stands on these guards)."""
    _BATCHED.add(cls)
    _LOOKED_AT.add(cls)


def _batched_call(fn, args, kwargs):
    """``fn`` handed one of vmap's batched tensors. While vmap runs the namespaces hold batching versions of their
    functions; this one was bound before (a layer's ``activation=F.relu`` default, ``act = torch.tanh``), so it
    hands the call to the batching version of itself, as PyTorch's dispatcher would."""
    from .func._dispatch import resolve
    batching = resolve(fn)
    return (fn.sparse_dispatch_of if batching is fn else batching)(*args, **kwargs)


#: what ``has_sparse`` looks for: the sparse layouts, and fx's Proxy once fx has called ``route_to``
_ROUTED = SparseLayoutTensor
#: fx's handler for a call with a Proxy argument (``route_to``), or None while fx is not loaded
_proxy_call = None


def route_to(proxy_class, handler):
    """Send every guarded call that has a ``proxy_class`` argument to ``handler(public_function, args, kwargs)``
    (how ``gradiente.fx`` records ``torch.relu(proxy)`` as a node: called when fx is imported, with its ``Proxy``,
    then once for each subclass of it, which the guard's set lookup must know by name)."""
    global _ROUTED, _proxy_call  # noqa: PLW0603 - the guard reads them as globals, at no cost
    _LOOKED_AT.add(proxy_class)
    if _proxy_call is None:
        _ROUTED = (SparseLayoutTensor, proxy_class)
        _proxy_call = handler


def _has_proxy(args, kwargs):
    if isinstance(_ROUTED, tuple):
        proxy_class = _ROUTED[1]
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, proxy_class) or (a.__class__ in (list, tuple) and
                                              any(isinstance(b, proxy_class) for b in a)):
                return True
    return False


def has_sparse(args, kwargs):
    """Whether a sparse tensor is among ``args`` (or inside a list or tuple there, as for ``cat``) or ``kwargs``."""
    for a in args:
        if isinstance(a, _ROUTED):
            return True
        if a.__class__ is list or a.__class__ is tuple:
            for b in a:
                if isinstance(b, _ROUTED):
                    return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, _ROUTED):
                return True
    return False


def _first_sparse(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        for b in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(b, SparseLayoutTensor):
                return b
    return None


def _in_place(name):
    """Whether ``name`` changes its first argument: ``sin_``, ``__iadd__`` (not ``__add__``)."""
    return name in _IN_PLACE_OPERATORS if name.startswith("__") else name.endswith("_")


def _aten_name(name):
    return name[2:-2] if name.startswith("__") and name.endswith("__") else name


def layout_error(name, t, args=()):
    """PyTorch's error for ``name`` without a kernel for ``t``'s layout: for COO, "Could not run 'aten::name' with
    arguments from the 'SparseCPU' backend" (its first sentences, naming the ATen overload); for a compressed layout,
    "unsupported tensor layout"."""
    if t.is_sparse:
        return not_on_sparse(_aten_overload(name, args))
    return RuntimeError(f"unsupported tensor layout: {LAYOUT_WORDS[t.layout]}")


#: the ATen op behind a Python name where they differ (aliases, operators)
_ATEN_ALIASES = {
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne", "clip": "clamp",
    "arctan2": "atan2", "arccos": "acos", "arccosh": "acosh", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt",
    "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__and__": "bitwise_and", "__or__": "bitwise_or",
    "__xor__": "bitwise_xor", "__mod__": "remainder", "__floordiv__": "floor_divide", "__rsub__": "rsub"}
#: ATen ops whose overload for a number second argument is ``.Scalar`` and for a tensor ``.Tensor``
_SCALAR_OR_TENSOR = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "fill_"})
#: ATen ops whose overload is ``.Tensor`` whatever the second argument
_TENSOR_OVERLOAD = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "remainder", "fmod", "copysign", "xlogy",
                              "clamp_min", "clamp_max", "bitwise_left_shift", "bitwise_right_shift", "rsub"})


def _aten_overload(name, args):
    """The ATen op and overload PyTorch's message names for the Python function or method ``name``."""
    in_place = _in_place(name) and not name.startswith("__")
    base = name[:-1] if in_place else name
    base = _ATEN_ALIASES.get(base, _aten_name(base))
    if in_place:
        base += "_"
    root = base.rstrip("_")
    if (root in _SCALAR_OR_TENSOR or base in _SCALAR_OR_TENSOR) and len(args) > 1:
        return base + (".Tensor" if isinstance(args[1], Tensor) else ".Scalar")
    if root in _TENSOR_OVERLOAD and len(args) > 1:
        return base + ".Tensor"
    if root == "clamp" and (len(args) == 1 or isinstance(args[1], Tensor)):
        return base + ".Tensor"
    return base


def _own_sparse_method(t, name):
    """The method of ``t``'s sparse class named ``name`` when that class defines one of its own (``sum``, ``t``,
    ``mm``, ``to`` ...), else None."""
    for cls in type(t).__mro__:
        if cls is Tensor:
            return None
        if name in cls.__dict__:
            method = _class_attribute(cls, name)
            if not callable(method) or _bound_for_sparse_check(method):
                return None
            return method
    return None


def _generic_method(t, name):
    """The dense class's method ``name`` when ``t``'s sparse class lets it through as meaningful for any layout
    (``numel``, ``is_complex``, ``requires_grad_`` ...), else None."""
    method = dense_class_method(name)
    if name not in type(t)._sparse_allowed or not callable(method) or \
            _bound_for_sparse_check(getattr(type(t), name, None)):
        return None         # (a name bound for the sparse check has no kernel for these arguments: an error)
    return getattr(method, "sparse_dispatch_of", method)


def _binary(name, args, kwargs):
    """add/sub/mul with a sparse operand: PyTorch's result, or None when PyTorch has no such kernel."""
    x, y = args[0], args[1] if len(args) > 1 else kwargs.get("other")
    if name in _REFLECTED:
        x, y = y, x
    alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
    x_sparse, y_sparse = elementwise.is_sparse_tensor(x), elementwise.is_sparse_tensor(y)
    if name in _MUL:
        if x_sparse and y_sparse and x.layout is not y.layout:
            return None
        numbers = elementwise.is_number(x) or elementwise.is_number(y)
        if isinstance(y, Tensor) and isinstance(x, Tensor) and not numbers:
            return elementwise.sparse_mul(x, y)
        return None
    if x_sparse and x.is_sparse and not y_sparse and (isinstance(y, Tensor) or elementwise.is_number(y)):
        # (PyTorch says "add" for sub too: its sub is add with -alpha)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if name in _SUB and ((x_sparse and not x.is_sparse) or (y_sparse and not y.is_sparse)):
        return None         # PyTorch subtracts COO tensors only
    if x_sparse and y_sparse and x.layout is y.layout:
        return elementwise.sparse_add(x, y, alpha, subtract=name in _SUB)
    if not x_sparse and isinstance(x, Tensor) and y_sparse:
        return elementwise.dense_plus_sparse(x, y, alpha, subtract=name in _SUB)
    if x_sparse and not x.is_sparse and isinstance(y, Tensor) and not y_sparse and name in _ADD:
        return elementwise.dense_plus_sparse(y, x, alpha) if alpha == 1 else None
    return None


def _in_place_result(target, result):
    """Write an out-of-place ``result`` into ``target`` (a dense target takes the values, a sparse one the whole
    pattern), as an in-place op must."""
    if not elementwise.is_sparse_tensor(target):
        if elementwise.is_sparse_tensor(result) and not result.is_sparse:
            raise RuntimeError(f"Expected result Tensor to be of format {LAYOUT_WORDS[result.layout][6:].upper()}")
        return target.copy_(result.to_dense() if elementwise.is_sparse_tensor(result) else result)
    if not elementwise.is_sparse_tensor(result):
        raise RuntimeError(f"Sparse {LAYOUT_WORDS[target.layout][6:].upper()} tensors do not have is_contiguous")
    if target._requires_grad:
        raise NotImplementedError("gradiente changes a sparse tensor that requires grad in place only for the "
                                  "elementwise functions: use the out-of-place form")
    for slot in ("_sparse_indices", "_coalesced", "_compressed_indices", "_plain_indices", "_sparse_size", "_data"):
        if hasattr(result, slot):
            setattr(target, slot, getattr(result, slot))
    return target


def sparse_call(fn, name, args, kwargs):
    """``fn(*args, **kwargs)`` (the dense function or method named ``name``) where an argument is sparse: what
    PyTorch computes for that layout, or its error. (A call with an fx Proxy argument goes to fx: ``route_to``.)"""
    if _proxy_call is not None and _has_proxy(args, kwargs):
        return _proxy_call(_GUARDS.get((getattr(fn, "sparse_dispatch_of", fn), name), fn), args, kwargs)
    first = args[0] if args else None
    if name in _JOINS and isinstance(first, (list, tuple)) and first and any(
            elementwise.is_sparse_tensor(t) and t.is_sparse for t in first):
        from .ops import sparse_coo  # (the sparse ops load with the first sparse tensor)
        return getattr(sparse_coo, _JOINS[name])(list(first), *args[1:], **kwargs)
    if elementwise.is_sparse_tensor(first):
        own = _own_sparse_method(first, name)
        if own is not None:
            return own(*args, **kwargs)
        key = elementwise.layout_key(first)
        rest = args[1:]
        dense = getattr(fn, "sparse_dispatch_of", fn)
        if name in elementwise.VALUEWISE[key]:
            run = elementwise.on_values_ if _in_place(name) else elementwise.on_values
            return run(dense, name, first, rest, kwargs)
        if name in elementwise.WITH_A_NUMBER[key] and rest and elementwise.is_number(rest[0]) and \
                not (name in _POWERS and not isinstance(rest[0], Tensor) and rest[0] == 0):
            run = elementwise.on_values_ if _in_place(name) else elementwise.on_values
            return run(dense, name, first, rest, kwargs)
    if name in _ADD or name in _SUB or name in _MUL:
        result = _binary(name, args, kwargs)
        if result is not None:
            if _in_place(name):
                return _in_place_result(args[0], result)
            return result
    elif elementwise.is_sparse_tensor(first):
        generic = _generic_method(first, name)
        if generic is not None:
            return generic(*args, **kwargs)
    refusal = _refusal(name, args)
    if refusal is None:
        refusal = _argument_error(fn, name, args, kwargs) or layout_error(name, _first_sparse(args, kwargs), args)
    if isinstance(refusal, _Untouched):
        return refusal.result
    raise refusal


def _with_sparse_replaced(value, replace):
    """``value`` with each sparse tensor in it (itself, or an item of a list or tuple) replaced by ``replace(it)``."""
    if elementwise.is_sparse_tensor(value):
        return replace(value)
    if isinstance(value, (list, tuple)) and any(elementwise.is_sparse_tensor(v) for v in value):
        return type(value)(_with_sparse_replaced(v, replace) for v in value)
    return value


def _sparse_copy(sparse):
    copy = sparse._with_values(sparse._data.copy())
    copy._requires_grad = sparse._requires_grad
    return copy


#: elements: a larger sparse tensor is checked through its values (a dense copy might not fit in memory)
_STAND_IN_LIMIT = 1 << 20


def _dense_copy(sparse):
    if math.prod(sparse.shape) > _STAND_IN_LIMIT:
        return _sparse_copy(sparse)
    dense = Tensor._make(sparse.to_dense()._data.copy())
    dense._requires_grad = sparse._requires_grad
    return dense


def _private_copy(value):
    return _with_sparse_replaced(value, _sparse_copy)


def _dense_stand_in(value):
    return _with_sparse_replaced(value, _dense_copy)


def _argument_error(fn, name, args, kwargs):
    """The error the dense function raises for these arguments, or None when it would compute. PyTorch checks most
    arguments before it looks for a kernel of the input's layout, and gradiente's dense functions raise the same
    checks; a dense function that computes on a sparse argument is never let through, its result is dropped for the
    layout error.

    It runs on dense stand-ins of the sparse arguments (their shape and dtype), so that its checks of dims and shapes
    read the shape PyTorch's read, not the values array's; a function that may hand its input back, or that refuses
    a stand-in for being strided (a check of the layout itself), runs on private sparse copies instead."""
    if name not in _MAY_HAND_BACK:
        error = _dense_run(fn, name, args, kwargs, _dense_stand_in)
        if not (isinstance(error, RuntimeError) and "Strided" in str(error)):
            return error
    return _dense_run(fn, name, args, kwargs, _private_copy)


def _dense_run(fn, name, args, kwargs, stand_in):
    copies = [stand_in(a) for a in args]
    if _in_place(name) and copies and isinstance(copies[0], Tensor) and not elementwise.is_sparse_tensor(copies[0]):
        copies[0] = Tensor._make(copies[0]._data.copy())
    dense = getattr(fn, "sparse_dispatch_of", fn)
    before = [(c, c._data, c._data.copy()) for c in copies if elementwise.is_sparse_tensor(c)]
    try:
        result = dense(*copies, **{k: stand_in(v) for k, v in kwargs.items()})
    except TypeError:
        return None         # (a call the dense signature does not take: PyTorch's parser took it, its layout refuses)
    except Exception as error:      # (any refusal of the arguments is the answer)
        return error
    return _Untouched(args, copies, result) if name in _MAY_HAND_BACK and _untouched(before, result) else None


#: functions that hand back their input itself where they have nothing to do (a real tensor's conj, dropout outside
#: training, atleast_1d of a matrix): for a sparse input that is PyTorch's answer too
_MAY_HAND_BACK = frozenset({
    "conj", "real", "resolve_conj", "resolve_neg", "as_tensor", "asarray", "atleast_1d", "atleast_2d",
    "broadcast_tensors", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "detach", "positive"})


class _Untouched(Exception):
    """Not an error: the dense function handed back its (copied) sparse arguments themselves, as ``conj`` of a real
    tensor or ``dropout`` outside training do, so the call computed nothing and the originals are the answer."""

    def __init__(self, args, copies, result):
        super().__init__()
        originals = {id(c): a for c, a in zip(copies, args)}
        self.result = originals[id(result)] if id(result) in originals else \
            type(result)(originals[id(r)] for r in result)


def _untouched(before, result):
    """Whether ``result`` is the sparse copies themselves, their values as they were (an in-place function hands back
    its input too, changed)."""
    if any(c._data is not data or not np.array_equal(data, saved, equal_nan=data.dtype.kind in "fc")
           for c, data, saved in before):
        return False
    ids = {id(c) for c, _, _ in before}
    if id(result) in ids:
        return True
    return isinstance(result, (tuple, list)) and bool(result) and all(id(r) in ids for r in result)


_DIVISIONS = {"div": "division", "divide": "division", "true_divide": "division", "div_": "division",
              "divide_": "division", "true_divide_": "division", "__truediv__": "division",
              "__itruediv__": "division", "floor_divide": "floor division", "floor_divide_": "floor division",
              "__floordiv__": "floor division"}
_POWERS = frozenset({"pow", "pow_", "__pow__", "float_power", "float_power_"})


def _refusal(name, args):
    """PyTorch's own words where a COO kernel exists but refuses these arguments (a tensor divisor, a tensor or zero
    exponent), else None."""
    if len(args) < 2 or not any(elementwise.is_sparse_tensor(a) and a.is_sparse for a in args[:2]):
        return None
    divisor = args[0] if name == "__rtruediv__" else args[1]
    if (name in _DIVISIONS or name == "__rtruediv__") and isinstance(divisor, Tensor) and divisor.dim() > 0:
        return RuntimeError(f"Sparse {_DIVISIONS.get(name, 'division')} requires a scalar or zero-dim dense tensor "
                            f"divisor (got shape {list(divisor.shape)} for divisor)")
    if not elementwise.is_sparse_tensor(args[0]):
        return None
    other = args[1]
    if name in _POWERS:
        if isinstance(other, Tensor):
            return not_on_sparse("pow.Tensor_Tensor")
        if other == 0:
            return RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                                "dense")
    return None


def guard(fn, name):
    """``fn`` behind the sparse check: dense arguments go straight to it, a sparse one to ``sparse_call``. One
    wrapper per (function, name), so that a function that is also a Tensor method (``torch.add`` and
    ``Tensor.add``) stays one object, as the profiler's swaps expect. (A method's ``self`` is checked too: a sparse
    ``self`` reaches a dense method only for the names its class lets through, which ``sparse_call`` hands back.)"""
    if getattr(fn, "sparse_dispatch_of", None) is not None:
        return fn
    made = _GUARDS.get((fn, name))
    if made is not None:
        return made
    # an in-place method writing a batched value into a plain tensor is refused, as PyTorch refuses it (the
    # plain op raises that), not handed to vmap
    batchable = not (name.endswith("_") or name == "__setitem__" or name.startswith("__i"))
    batched_classes = _BATCHED if batchable else ()

    renames = getattr(fn, "numpy_names", None)
    if renames:
        # ``fn`` is a wrapper that reads NumPy's argument names (numpy_names.py): one wrapper does both jobs and
        # calls the op itself, a frame less on every call of a reduction (``x.sum(0)``: 5.1 -> 4.4 µs)
        op, op_name = fn.numpy_names_of, getattr(fn, "numpy_names_for", name)

        @wraps(fn)
        def checked(*args, **kwargs):
            for a in args:
                if a.__class__ in _LOOKED_AT:
                    if a.__class__ in batched_classes:
                        return _batched_call(checked, args, kwargs)
                    if has_sparse(args, kwargs):
                        return sparse_call(fn, name, args, kwargs)
            if kwargs:
                if has_sparse((), kwargs):
                    return sparse_call(fn, name, args, kwargs)
                rename_numpy_names(kwargs, renames, op_name)
            return op(*args, **kwargs)
    else:
        # (the loop is spelled out here, not a call of has_sparse: a dense call pays for it on every op)
        @wraps(fn)
        def checked(*args, **kwargs):
            for a in args:
                if a.__class__ in _LOOKED_AT:
                    if a.__class__ in batched_classes:
                        return _batched_call(checked, args, kwargs)
                    if has_sparse(args, kwargs):
                        return sparse_call(fn, name, args, kwargs)
            if kwargs and has_sparse((), kwargs):
                return sparse_call(fn, name, args, kwargs)
            return fn(*args, **kwargs)

    checked.sparse_dispatch_of = fn
    # an op's warning names its caller's line: this wrapper is a frame it does not count (core/warnings_at_caller.py)
    SKIPPED_CODE.add(checked.__code__)
    # what vmap's dispatch reads to find the op and its NumPy names (numpy_names.op_behind, with_torch_names)
    checked.numpy_names_of = op_behind(fn)
    if getattr(fn, "numpy_names", None):
        checked.numpy_names = fn.numpy_names
    _GUARDS[(fn, name)] = checked
    return checked


_GUARDS: dict = {}


def sparse_method(name):
    """The method ``name`` of a sparse class: ``sparse_call`` with the dense class's method, as ``torch.name`` does.
    (That method is looked up when called: the table makes most of Tensor's methods on their first lookup.)"""
    def method(self, *args, **kwargs):
        return sparse_call(dense_class_method(name), name, (self,) + args, kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``Tensor.{name}`` on a sparse tensor: PyTorch's sparse result or its error."
    method.sparse_method_for = name
    return method


def dense_class_method(name):
    """``Tensor``'s own attribute ``name`` (not a sparse class's), as looking it up on the class gives it: a
    stand-in of the table makes the method then (``tensor_methods._BoundOnFirstUse``)."""
    return _class_attribute(Tensor, name)


def _class_attribute(cls, name):
    """``cls``'s own attribute ``name`` (None if it has none), through its descriptor as a lookup on the class."""
    value = cls.__dict__.get(name)
    get = getattr(type(value), "__get__", None)
    return value if get is None else get(value, None, cls)


def _bound_for_sparse_check(method):
    """Whether a class attribute is a method bound for the sparse check: a dense one behind ``guard``, or a sparse
    class's ``sparse_method``."""
    return getattr(method, "sparse_dispatch_of", None) is not None or hasattr(method, "sparse_method_for")


#: functions that take sparse tensors themselves (products with a sparse operand, constructors, norms), beside those
#: of the sparse modules
SPARSE_AWARE = frozenset({"mm", "matmul", "__matmul__", "__rmatmul__", "addmm", "native_norm", "lobpcg", "is_tensor",
                          "numel", "is_floating_point", "result_type", "is_same_size", "typename", "is_storage",
                          "is_conj", "is_neg", "is_signed", "is_distributed", "is_inference",
                          # methods that read only another tensor's shape, dtype or device
                          "to", "expand_as", "view_as", "reshape_as", "resize_as"})


def _takes_sparse_itself(name, fn):
    module = getattr(fn, "__module__", None) or ""
    return name in SPARSE_AWARE or module.startswith(("gradiente.ops.sparse_", "gradiente.sparse"))


def guard_namespace(namespace, aten_names=None):
    """Put every public function of ``namespace`` (a module's globals) that gradiente defines behind ``guard``, but
    those that take sparse tensors themselves. ``aten_names`` maps a function whose PyTorch op differs from its
    name to that op (``special.round`` is ``round.decimals``, which has no sparse kernel)."""
    for name, value in list(namespace.items()):
        if name.startswith("_") or isinstance(value, type) or not callable(value) or \
                not (getattr(value, "__module__", None) or "").startswith("gradiente") or \
                _takes_sparse_itself(name, value):
            continue
        namespace[name] = guard(value, (aten_names or {}).get(name, name))


def _takes_more_than_self(fn):
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    return code is None or code.co_argcount > 1 or bool(code.co_flags & 0x0C)     # (0x04 *args, 0x08 **kwargs)


def dense_method(tensor_cls, name, value):
    """The dense class's method ``name``, ``value`` behind ``guard`` when it takes more than ``self`` and does not
    take sparse tensors itself; else ``value``."""
    if callable(value) and not isinstance(value, type) and _takes_more_than_self(value) and \
            not _takes_sparse_itself(name, value) and not getattr(value, "checks_sparse_itself", False):
        return guard(value, name)
    return value


def sparse_dispatch_methods(tensor_cls, names, sparse_classes):
    """What ``tensor_methods`` binds for the sparse check: ``{class: {name: method}}``. The dense class gets its
    methods ``names`` that take more than ``self`` behind ``guard``; each sparse class (``{class: table key}``) gets
    the methods PyTorch has for its layout (``ops/sparse_elementwise.py``'s tables and the sums and products), bound
    to ``sparse_call``. Returns also, per sparse class, the names to add to the ones it lets through."""
    dense = {}
    for name in names:
        value = tensor_cls.__dict__.get(name)
        checked = dense_method(tensor_cls, name, value)
        if checked is not value:
            dense[name] = checked
    bound = {tensor_cls: dense}
    for cls, key in sparse_classes.items():
        below_tensor = cls.__mro__[:cls.__mro__.index(tensor_cls)]
        # Python's operators bypass the sparse classes' __getattribute__: each must be bound, to a kernel or an error
        operators = {name for name in names if name.startswith("__") and name not in _NOT_OPERATORS
                     and not _takes_sparse_itself(name, tensor_cls.__dict__.get(name))
                     and not any(name in c.__dict__ for c in below_tensor)}
        wanted = elementwise.VALUEWISE[key] | elementwise.WITH_A_NUMBER[key] | _ADD | _SUB | _MUL | operators
        bound[cls] = {name: sparse_method(name)
                      for name in sorted(wanted) if name in tensor_cls.__dict__}
    return bound


_NOT_OPERATORS = frozenset({"__getitem__", "__setitem__", "__iter__", "__new__", "__repr__"})
