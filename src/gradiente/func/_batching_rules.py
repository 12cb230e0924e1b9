"""Batching rules: how an op on batched values becomes one call of the plain op on their physical tensors.

A rule is ``rule(fn, args, kwargs, levels) -> result`` (``levels``: the sorted vmap levels of the batched
arguments); it returns ``NotImplemented`` for a variant it does not cover, and the op then runs per example
(``_dispatch.fallback``). Most rules are *translations*: ``translate(fn, args, kwargs, levels, inplace)`` returns
the physical arguments, the op runs once on them, and its tensor results are wrapped at ``levels``. A
translation also serves the op's in-place form (``x.add_(y)``, ``x.unsqueeze_(0)``), which then runs the plain
in-place method on the physical tensor.

The kinds of translation, each a few lines below:

* elementwise: every batched operand is aligned (batch dims, then size-1 dims up to the largest logical rank),
  so that broadcasting works per example; plain operands broadcast from the right as they are;
* dims: logical dims (``dim=1``, ``dim=(0, 2)``, ``dim=None`` meaning all) become physical ones, shifted past the
  batch dims;
* trailing: ops that read only their input's last dims and treat leading dims as a batch already (``tril``,
  ``F.linear``, ``F.layer_norm``, ``F.embedding``, the ``linalg`` functions of one matrix) run on the physical
  tensor as it is;
* rules of their own: ``matmul`` and its family, views with shapes (``view``, ``reshape``, ``expand``,
  ``permute``), ``cat``/``stack``, indexing, the losses (computed with ``reduction='none'``, then reduced over each
  example's own dims), convolutions and pools (the batch dims folded into N), dropout and the random ops.
"""
import inspect

from .. import functional_aliases
from ..core import creation
from ..core import random as _random
from ..core.backward import backward as _autograd_backward
from ..core.backward import grad as _autograd_grad_op
from ..core.backward import grad_of_batched as _grad_of_batched
from ..core.tensor import Tensor
from ..nn import functional as nn_functional
from ..ops import (
    arithmetic,
    binary_math,
    comparison,
    complex_numbers,
    conversions,
    fill,
    indexing,
    joining,
    legacy_linalg,
    linalg,
    matmul,
    products,
    rearranging,
    reductions,
    selection,
    sorting,
    special,
    unary,
    views,
)
from ..ops import softmax as softmax_ops
from ..ops.nn import (
    activations,
    classification,
    convolution,
    distance,
    dropout,
    embedding,
    losses,
    lp_pooling,
    normalization,
    padding,
    pooling,
    pooling3d,
    sparse,
)
from ..ops.nn import linear as nn_linear
from ..ops.nn import rrelu as nn_rrelu
from ._batched_tensor import BatchedTensor, active_levels, align, expand_to, physical, size_of_level, wrap

__all__ = ["RULES", "TRANSLATIONS", "INPLACE_OF", "RANDOM", "VIEW_INPLACE", "randomness"]

RULES: dict = {}          # op -> rule(fn, args, kwargs, levels)
TRANSLATIONS: dict = {}   # op -> translate(fn, args, kwargs, levels, inplace) -> (args, kwargs)
INPLACE_OF: dict = {}     # hand-written in-place method -> its out-of-place op (whose translation it uses)
RANDOM: set = set()       # ops that draw random numbers (vmap's ``randomness`` governs them)
VIEW_INPLACE = {"squeeze_": views.squeeze, "unsqueeze_": views.unsqueeze, "t_": matmul.t,
                "transpose_": views.transpose, "swapdims_": views.transpose, "swapaxes_": views.transpose}


def randomness():
    """The mode that governs a random op now: 'error' if any running vmap says so, else 'different' if any
    does, else 'same'."""
    modes = {level.randomness for level in active_levels()}
    if "error" in modes or "legacy" in modes:   # ('legacy': torch._vmap_internals._vmap, which refuses them)
        return "error"
    return "different" if "different" in modes else "same"


def _dispatch(fn, args, kwargs=None):
    from ._dispatch import dispatch  # (rules that compose other ops dispatch them again)
    return dispatch(fn, args, kwargs or {})


def _is_batched(x):
    return x.__class__ is BatchedTensor


def _wrap_result(result, levels):
    if isinstance(result, Tensor):
        return wrap(result, levels)
    if isinstance(result, tuple):
        parts = [_wrap_result(r, levels) for r in result]
        return type(result)(*parts) if hasattr(result, "_fields") else tuple(parts)
    if isinstance(result, list):
        return [_wrap_result(r, levels) for r in result]
    return result


def _by_translation(translate):
    def rule(fn, args, kwargs, levels):
        translated = translate(fn, args, kwargs, levels, False)
        if translated is NotImplemented:
            return NotImplemented
        pargs, pkwargs = translated
        return _wrap_result(fn(*pargs, **pkwargs), levels)
    return rule


def _unguarded(op):
    # a public function behind the sparse check (sparse_dispatch.py) is looked up as the op it guards
    return getattr(op, "sparse_dispatch_of", op)


def _translation(translate, *ops):
    for op in map(_unguarded, ops):
        TRANSLATIONS[op] = translate
        RULES[op] = _by_translation(translate)


def _rule(rule, *ops):
    for op in map(_unguarded, ops):
        RULES[op] = rule


_signatures: dict = {}


def _bind(fn, args, kwargs):
    """The arguments by parameter name, defaults filled in (None when ``fn`` cannot be bound so): ``arguments``
    in the signature's order, and ``args`` and ``kwargs`` to call ``fn`` with, as ``inspect`` binds them."""
    plan = _signatures.get(fn)
    if plan is None:
        plan = _signatures[fn] = _BindingPlan.of(inspect.signature(fn))
    if plan.__class__ is _BindingPlan:
        return plan.bind(args, kwargs)
    try:
        bound = plan.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return bound


_EMPTY = inspect.Parameter.empty


class _BindingPlan:
    """``inspect.Signature.bind`` and ``apply_defaults`` for a signature without ``*args``/``**kwargs``, done with
    a dict: inspect's general binding cost several microseconds, paid by every batched call of the rules that read
    their arguments by name (linear and cross_entropy in per-sample gradients)."""
    __slots__ = ("names", "positional", "positional_only", "defaults")

    @staticmethod
    def of(signature):
        kinds = [p.kind for p in signature.parameters.values()]
        if inspect.Parameter.VAR_POSITIONAL in kinds or inspect.Parameter.VAR_KEYWORD in kinds:
            return signature
        plan = _BindingPlan()
        params = list(signature.parameters.values())
        plan.names = tuple(p.name for p in params)
        plan.positional = sum(k is not inspect.Parameter.KEYWORD_ONLY for k in kinds)
        plan.positional_only = frozenset(p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY)
        plan.defaults = {p.name: p.default for p in params if p.default is not _EMPTY}
        return plan

    def bind(self, args, kwargs):
        if len(args) > self.positional:
            return None
        arguments = {}
        taken = 0
        for i, name in enumerate(self.names):
            if i < len(args):
                if name in kwargs:
                    return None                 # given twice
                arguments[name] = args[i]
            elif name in kwargs and name not in self.positional_only:
                arguments[name] = kwargs[name]
                taken += 1
            elif name in self.defaults:
                arguments[name] = self.defaults[name]
            else:
                return None                     # a required argument missing
        if taken != len(kwargs):
            return None                         # a keyword the signature lacks
        return _Bound(arguments, self.names[:self.positional])


class _Bound:
    """What the rules read of ``inspect.BoundArguments``."""
    __slots__ = ("arguments", "_positional")

    def __init__(self, arguments, positional):
        self.arguments, self._positional = arguments, positional

    @property
    def args(self):
        return tuple(self.arguments[name] for name in self._positional)

    @property
    def kwargs(self):
        return {name: value for name, value in self.arguments.items() if name not in self._positional}


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


# --- elementwise ------------------------------------------------------------------------------------------

def _elementwise(fn, args, kwargs, levels, inplace):
    values = list(args) + list(kwargs.values())
    tensors = [a for a in values if isinstance(a, Tensor)]
    rank = args[0].dim() if inplace else max(t.dim() for t in tensors)
    # PyTorch promotes a 0-dim operand as a lower category; physically it is not 0-dim, so mixed dtypes with a
    # batched 0-dim operand run per example
    if (len({t.dtype for t in tensors}) > 1 and any(_is_batched(t) and t.dim() == 0 for t in tensors)
            and any(t.dim() > 0 for t in tensors)):
        return NotImplemented

    def physical_of(a):
        return align(a, levels, rank) if _is_batched(a) else a
    return tuple(physical_of(a) for a in args), {k: physical_of(v) for k, v in kwargs.items()}


ELEMENTWISE = (
    [getattr(unary, n) for n in unary.__all__]
    + [getattr(arithmetic, n) for n in arithmetic.__all__]
    + [getattr(binary_math, n) for n in binary_math.__all__]
    + [getattr(comparison, n) for n in comparison.__all__ if n not in ("allclose", "equal", "isin")]
    + [getattr(selection, n) for n in selection.__all__ if n != "where"]
    + [getattr(special, n) for n in special.__all__ if n not in ("log_softmax", "softmax", "logsumexp")]
    + [getattr(complex_numbers, n) for n in ("angle", "complex", "conj", "conj_physical", "imag", "polar", "real",
                                             "resolve_conj", "resolve_neg")]
    + [conversions.to, conversions.tensor_type, conversions.type_as, conversions.to_float, conversions.to_double,
       conversions.to_half, conversions.to_long, conversions.to_int, conversions.to_short, conversions.to_char,
       conversions.to_byte, conversions.to_bool, views.clone, views.contiguous, fill.fill, fill.zero_,
       fill.copy_, creation.zeros_like, creation.ones_like, creation.empty_like, creation.full_like]
    + [getattr(activations, n) for n in activations.__all__ if n not in ("glu", "prelu")]
    + [arithmetic._rtruediv, arithmetic._rfloordiv, arithmetic._rmod, arithmetic._pow_scalar_base]
    + [unary._round, unary._polygamma_method, comparison.invert, unary.tanh_backward, unary.sigmoid_backward]
)
_translation(_elementwise, *ELEMENTWISE)
# the operator forms of tensor methods (``x + y`` with a NumPy-array check in front)
INPLACE_OF.update({arithmetic.add_: arithmetic.add, arithmetic.sub_: arithmetic.sub, arithmetic.mul_: arithmetic.mul,
                   arithmetic.div_: arithmetic.div, fill.fill_: fill.fill_, fill.zero_: fill.zero_,
                   fill.copy_: fill.copy_, complex_numbers.conj_physical_: complex_numbers.conj_physical})


def _where(fn, args, kwargs, levels, inplace):
    bound = _bind(fn, args, kwargs)
    if bound is None or bound.arguments.get("input") is None or bound.arguments.get("other") is None:
        return NotImplemented       # where(condition) alone is nonzero: a shape that depends on the values
    return _elementwise(fn, args, kwargs, levels, inplace)


_translation(_where, selection.where)
_rule(lambda fn, args, kwargs, levels: _dispatch(selection.where, (args[1], args[0], args[2]))
      if len(args) == 3 and not kwargs else NotImplemented, selection._where_method)


def _fill_with_number(fn, args, kwargs, levels, inplace):
    # fill(x, value) and masked_fill(x, mask, value) need a 0-dim value: a batched one runs per example
    value = kwargs.get("value", args[-1] if len(args) > (2 if fn is indexing.masked_fill else 1) else None)
    if _is_batched(value):
        return NotImplemented
    return _elementwise(fn, args, kwargs, levels, inplace)


_translation(_fill_with_number, fill.fill, fill.fill_, indexing.masked_fill)


def _elementwise_if_different(fn, args, kwargs, levels, inplace):
    """A random op whose every element is drawn on its own: one physical draw gives each example its own
    numbers ('different'); 'same' runs per example from one generator state."""
    if randomness() != "different":
        return NotImplemented
    return _elementwise(fn, args, kwargs, levels, inplace)


RANDOM.update([_random.bernoulli, _random.multinomial, _random.normal, _random.rand, _random.rand_like,
               _random.randint, _random.randint_like, _random.randn, _random.randn_like, _random.randperm,
               _random.bernoulli_, _random.cauchy_, _random.exponential_, _random.geometric_,
               _random.log_normal_, _random.normal_, _random.random_, _random.uniform_,
               nn_rrelu.rrelu, nn_rrelu.rrelu_])
_translation(_elementwise_if_different, _random.bernoulli, _random.rand_like, _random.randn_like,
             _random.randint_like, _random.bernoulli_, _random.cauchy_, _random.exponential_,
             _random.geometric_, _random.log_normal_, _random.normal_, _random.random_, _random.uniform_,
             nn_rrelu.rrelu, nn_rrelu.rrelu_)


# --- dims ---------------------------------------------------------------------------------------------------

def _shift(value, ndim, nb, none):
    """Logical dim(s) ``value`` of a tensor of ``ndim`` logical dims, as physical dims."""
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0 and none == "all"):
        if none == "all":
            return tuple(range(nb, nb + ndim))
        return NotImplemented if none == "fallback" else None
    if isinstance(value, (tuple, list)):
        return tuple(_wrap_dim(d, ndim) + nb for d in value)
    if isinstance(value, (Tensor, bool)) or not isinstance(value, int):
        return NotImplemented       # (a bool where a dim goes is var's old ``unbiased``: per example)
    return _wrap_dim(value, ndim) + nb


def _dims(*names, extra=0, none="fallback", aligned=1):
    """A translation for ops whose parameters ``names`` are dims; the first ``aligned`` tensor parameters are
    aligned as elementwise operands, and any other batched argument sends the op per example. ``extra``: the
    result has that many more dims than the input (``unsqueeze``); ``none``: what ``dim=None`` means ('all'
    logical dims, 'fallback' to per example, or 'keep' as None)."""
    def translate(fn, args, kwargs, levels, inplace):
        bound = _bind(fn, args, kwargs)
        if bound is None:
            return NotImplemented
        params = list(bound.arguments)
        operands = [p for p in params[:aligned] if isinstance(bound.arguments[p], Tensor)]
        others = [v for p, v in bound.arguments.items() if p not in operands]
        if any(_is_batched(v) or (isinstance(v, (tuple, list)) and any(_is_batched(x) for x in v))
               for v in others):
            return NotImplemented
        ndim = max(bound.arguments[p].dim() for p in operands)
        if ndim + extra == 0:
            return NotImplemented       # dim 0 of a 0-dim tensor means the tensor itself: per example
        nb = len(levels)
        for p in operands:
            bound.arguments[p] = align(bound.arguments[p], levels, ndim)
        for name in names:
            shifted = _shift(bound.arguments[name], ndim + extra, nb, none)
            if shifted is NotImplemented:
                return NotImplemented
            bound.arguments[name] = shifted
        return bound.args, bound.kwargs
    return translate


_translation(_dims("dim", none="all"), reductions.sum, reductions.mean, reductions.nansum, reductions.nanmean,
             reductions.amax, reductions.amin, reductions.std, reductions.var, reductions.count_nonzero,
             reductions.std_mean, reductions.var_mean, reductions.all, reductions.any, linalg.vector_norm)
_translation(_dims("dim"), reductions.logsumexp, reductions.cumsum, reductions.cumprod, reductions.logcumsumexp,
             sorting.cummax, sorting.cummin, sorting.kthvalue, sorting.topk, sorting.sort,
             sorting.argsort, sorting.mode, softmax_ops.softmax, softmax_ops.log_softmax, special.softmax,
             special.log_softmax, special.logsumexp, activations.glu, distance.normalize, views.select,
             views.narrow, views.unflatten, joining.unbind, joining.split, joining.chunk, joining.tensor_split,
             joining.split_with_sizes, joining.unsafe_split, joining.unsafe_chunk, joining.unsafe_split_with_sizes,
             indexing.index_select)
_translation(_dims("dim", aligned=2), distance.cosine_similarity, linalg.cross)
# nn.functional's softmax family (their dim=None is PyTorch's deprecated implicit choice, made per example)
_translation(_dims("dim"), nn_functional.softmax, nn_functional.log_softmax, nn_functional.softmin)
_translation(_dims("dim"), linalg.matrix_norm)
_translation(_dims("dim", aligned=1), rearranging.diff)
_translation(_dims("dim0", "dim1"), views.transpose)
_translation(_dims("source", "destination"), views.movedim)
_translation(_dims("dim", extra=1), views.unsqueeze)
_translation(_dims("start_dim", "end_dim"), views.flatten)
_translation(_dims("dim1", "dim2"), views.diagonal)
_translation(_dims("dim1", "dim2", extra=1), products.diag_embed)
_translation(_dims("dims"), rearranging.roll)


def _max_min(fn, args, kwargs, levels):
    """``max(x)``, ``max(x, dim)`` and ``max(x, other)``."""
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    dim = a.get("dim")
    if isinstance(dim, Tensor) or a.get("other") is not None:
        other = dim if isinstance(dim, Tensor) else a["other"]
        return _dispatch(selection.maximum if fn is reductions.max else selection.minimum, (a["input"], other))
    x = a["input"]
    if x.dim() == 0 or a.get("out") is not None:
        return NotImplemented
    nb = len(levels)
    p = align(x, levels)
    if dim is None:
        return wrap(fn(p.reshape(*p.shape[:nb], -1), nb)[0], levels)
    return _wrap_result(fn(p, _wrap_dim(dim, x.dim()) + nb, a["keepdim"]), levels)


_rule(_max_min, reductions.max, reductions.min)


def _flattened_when_no_dim(fn, args, kwargs, levels):
    """``argmax(x)``, ``prod(x)``, ``median(x)``: over all of each example's elements, the logical dims
    flattened into one; with a dim, the dims translation."""
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x = a["input"]
    if a["dim"] is not None:
        return _by_translation(_dims("dim"))(fn, args, kwargs, levels)
    if x.dim() == 0 or a.get("keepdim") or any(_is_batched(v) for p, v in a.items() if p != "input"):
        return NotImplemented
    nb = len(levels)
    p = align(x, levels)
    a["input"], a["dim"] = p.reshape(*p.shape[:nb], -1), nb
    result = fn(*bound.args, **bound.kwargs)
    return wrap(result[0] if isinstance(result, tuple) else result, levels)


_rule(_flattened_when_no_dim, reductions.argmax, reductions.argmin, reductions.prod, reductions.median,
      reductions.nanmedian)


def _squeeze(fn, args, kwargs, levels, inplace):
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    x = bound.arguments["input"]
    nb = len(levels)
    dim = bound.arguments["dim"]
    if dim is None:
        dim = tuple(i for i, s in enumerate(x.shape) if s == 1)
    elif isinstance(dim, int):
        dim = (dim,)
    bound.arguments["input"] = physical(x)
    bound.arguments["dim"] = tuple(_wrap_dim(d, x.dim()) + nb for d in dim)
    return bound.args, bound.kwargs


_translation(_squeeze, views.squeeze)


# --- trailing: ops that already treat leading dims as a batch ---------------------------------------------

def _trailing(*batchable):
    """A translation for ops that read only the last dims of the parameters ``batchable`` (the first parameter
    by default); any other batched argument sends the op per example."""
    def translate(fn, args, kwargs, levels, inplace):
        bound = _bind(fn, args, kwargs)
        if bound is None:
            return NotImplemented
        names = batchable or (next(iter(bound.arguments)),)
        batched = [p for p, v in bound.arguments.items() if _is_batched(v)]
        if len(batched) != 1 or batched[0] not in names:
            return NotImplemented
        bound.arguments[batched[0]] = align(bound.arguments[batched[0]], levels)
        return bound.args, bound.kwargs
    return translate


_translation(_trailing(), rearranging.tril, rearranging.triu, views._mT, products.det, products.inverse,
             products.logdet, products.slogdet, products.matrix_power, products.pinverse, linalg.inv, linalg.det,
             linalg.slogdet, linalg.cholesky, linalg.eigh, linalg.eigvalsh, linalg.qr, linalg.svd,
             linalg.matrix_exp, legacy_linalg.matrix_exp, linalg.pinv, nn_linear.linear, normalization.layer_norm)
_translation(_trailing("input"), embedding.embedding)


def _one_hot(fn, args, kwargs, levels, inplace):
    bound = _bind(fn, args, kwargs)
    if bound is None or bound.arguments.get("num_classes", -1) == -1:
        return NotImplemented       # the number of classes would depend on every example's values
    return _trailing()(fn, args, kwargs, levels, inplace)


_translation(_one_hot, sparse.one_hot)


def _pad(fn, args, kwargs, levels, inplace):
    bound = _bind(fn, args, kwargs)
    if bound is None or bound.arguments.get("mode", "constant") != "constant":
        return NotImplemented       # reflect and replicate read the input's rank
    return _trailing()(fn, args, kwargs, levels, inplace)


_translation(_pad, padding.pad)


# --- shapes -------------------------------------------------------------------------------------------------

def _sizes(args):
    """``f(2, 3)`` and ``f((2, 3))`` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _shape_op(method_name):
    """``view``, ``reshape``, ``expand``, ``repeat``, ``permute``, ``flip`` with logical sizes or dims."""
    def translate(fn, args, kwargs, levels, inplace):
        x, rest = args[0], args[1:]
        if kwargs or not _is_batched(x) or any(isinstance(r, Tensor) and _is_batched(r) for r in rest):
            return NotImplemented
        try:
            sizes = _sizes(rest)
        except TypeError:
            return NotImplemented
        if not all(isinstance(s, int) for s in sizes):
            return NotImplemented       # view(dtype) and the like
        nb = len(levels)
        batch = tuple(physical(x).shape[:nb])
        if method_name in ("permute", "flip"):
            if len(sizes) != x.dim() and method_name == "permute":
                return NotImplemented
            dims = tuple(_wrap_dim(d, x.dim()) + nb for d in sizes)
            lead = tuple(range(nb)) if method_name == "permute" else ()
            return (align(x, levels),) + lead + dims, {}
        if method_name in ("expand", "repeat"):
            if len(sizes) < x.dim():
                return NotImplemented
            p = align(x, levels, len(sizes))
            return (p,) + ((-1,) * nb if method_name == "expand" else (1,) * nb) + sizes, {}
        return (align(x, levels),) + batch + sizes, {}
    return translate


for _name, _ops in (("view", (views.view,)), ("reshape", (views.reshape,)), ("expand", (views.expand,)),
                    ("repeat", (rearranging.repeat,)), ("permute", (views.permute,)), ("flip", (rearranging.flip,))):
    _translation(_shape_op(_name), *_ops)


def _view_rule(fn, args, kwargs, levels):
    translated = _shape_op("view")(fn, args, kwargs, levels, False)
    if translated is NotImplemented:
        return NotImplemented
    try:
        return wrap(fn(*translated[0]), levels)
    except RuntimeError:
        return NotImplemented       # not viewable physically: per example (each one a view of its own)


_rule(_view_rule, views.view)


def _as_other_shape(op):
    def rule(fn, args, kwargs, levels):
        x, other = args[0], args[1]
        if not _is_batched(x):
            return NotImplemented
        return _dispatch(op, (x, tuple(other.shape)))
    return rule


_rule(_as_other_shape(views.view), views.view_as)
_rule(_as_other_shape(views.reshape), views.reshape_as)
_rule(_as_other_shape(views.expand), views.expand_as)
_rule(lambda fn, args, kwargs, levels: _dispatch(views.reshape, (args[0], -1)), views.ravel)
_rule(lambda fn, args, kwargs, levels: _dispatch(views.expand, (args[0], tuple(args[1])))
      if len(args) == 2 and not kwargs else NotImplemented, views.broadcast_to)


def _as_strided(fn, args, kwargs, levels):
    """``as_strided`` of each example's own memory: the batch dims keep their physical strides, and
    ``storage_offset`` counts from the storage's start, so example ``i`` starts ``i`` batch strides further. A
    request that reaches past an example's elements would read another example's: refused, in PyTorch's words."""
    bound = _bind(fn, args, kwargs)
    if bound is None or not _is_batched(bound.arguments["input"]) or tuple(bound.arguments["input"]._levels) != levels:
        return NotImplemented
    x = bound.arguments["input"]
    size, stride = tuple(int(n) for n in bound.arguments["size"]), tuple(int(n) for n in bound.arguments["stride"])
    value, nb = x._value, len(levels)
    offset = bound.arguments["storage_offset"]
    offset = value.storage_offset() if offset is None else int(offset)
    base_offset = value.storage_offset()
    if 0 not in size and 0 not in value.shape[nb:] and len(size) == len(stride):
        reach = offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1
        own = base_offset + sum((n - 1) * st for n, st in zip(value.shape[nb:], value.stride()[nb:])) + 1
        if reach > own or offset < base_offset:
            raise RuntimeError(
                f"result = tensor.as_strided({_ints(size)},{_ints(stride)},{offset})can access memory outside of "
                f"`tensor`. `result` can access somememory in range [{offset}, {reach}], but `tensor` can only "
                f"access some memory in range [{base_offset}, {own}]. This is not supported inside of vmap, please "
                "try torewrite the `as_strided` call as a sequence of PyTorch view operations")
    return wrap(fn(value, tuple(value.shape[:nb]) + size, value.stride()[:nb] + stride, offset), levels)


def _ints(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


_rule(_as_strided, views.as_strided)


def _t(fn, args, kwargs, levels):
    x = args[0]
    if x.dim() > 2 or len(args) > 1:
        return NotImplemented
    return x if x.dim() < 2 else _dispatch(views.transpose, (x, 0, 1))


_rule(_t, matmul.t)
_rule(lambda fn, args, kwargs, levels: _dispatch(views.permute, (args[0], tuple(range(args[0].dim() - 1, -1, -1)))),
      views._T)


def _join(stacking):
    def rule(fn, args, kwargs, levels):
        bound = _bind(fn, args, kwargs)
        if bound is None or bound.arguments.get("out") is not None:
            return NotImplemented
        tensors = list(bound.arguments["tensors"])
        ranks = {t.dim() for t in tensors}
        if len(ranks) != 1 or (0 in ranks and not stacking):
            return NotImplemented       # cat's skipping of empty 1-D tensors, and its errors: per example
        ndim = ranks.pop() + (1 if stacking else 0)
        dim = _wrap_dim(bound.arguments["dim"], ndim) + len(levels)
        return wrap(fn([expand_to(t, levels) for t in tensors], dim), levels)
    return rule


_rule(_join(False), joining.cat)
_rule(_join(True), joining.stack)


# --- products -----------------------------------------------------------------------------------------------

def _as_matrix(x, levels, vector_as, rank):
    """``x``'s physical tensor as a stack of matrices of logical rank ``rank`` (a vector becomes a row or a column,
    ``vector_as`` -2 or -1; a batched operand gains size-1 dims after its batch dims up to ``rank``)."""
    p = align(x, levels) if _is_batched(x) else x
    if x.dim() == 1:
        p = p.unsqueeze(vector_as)
    if _is_batched(x):
        nb = len(levels)
        missing = rank - (p.dim() - nb)
        if missing > 0:
            p = p.reshape(*p.shape[:nb], *(1,) * missing, *p.shape[nb:])
    return p


def _matmul(fn, args, kwargs, levels, a_vector=-2, b_vector=-1, ranks=None):
    if kwargs or len(args) != 2:
        return NotImplemented
    a, b = args
    if a.dim() == 0 or b.dim() == 0 or (ranks is not None and (a.dim(), b.dim()) != ranks):
        return NotImplemented       # the op's own error, per example
    if ranks is None and a.dim() == 2 and b.dim() == 1 and _is_batched(b) and not _is_batched(a):
        # a fixed matrix times a batch of vectors: the rows of the batch times Aᵀ, one matrix product, where the
        # general path below would broadcast A into a stack of matrix-vector products
        return wrap(matmul.matmul(align(b, levels), a.mT), levels)
    rank = max(a.dim(), b.dim(), 2)
    out = matmul.matmul(_as_matrix(a, levels, a_vector, rank), _as_matrix(b, levels, b_vector, rank))
    if b.dim() == 1:
        out = out.squeeze(-1)
    if a.dim() == 1:
        out = out.squeeze(-1 if b.dim() == 1 else -2)
    return wrap(out, levels)


_rule(_matmul, matmul.matmul)
_rule(lambda fn, args, kwargs, levels: _matmul(fn, args, kwargs, levels, ranks=(2, 2)), matmul.mm)
_rule(lambda fn, args, kwargs, levels: _matmul(fn, args, kwargs, levels, ranks=(3, 3)), matmul.bmm)
_rule(lambda fn, args, kwargs, levels: _matmul(fn, args, kwargs, levels, ranks=(2, 1)), matmul.mv)
_rule(lambda fn, args, kwargs, levels: _matmul(fn, args, kwargs, levels, ranks=(1, 1)), matmul.dot)
_rule(lambda fn, args, kwargs, levels: _matmul(fn, args, kwargs, levels, a_vector=-1, b_vector=-2, ranks=(1, 1)),
      matmul.outer)
_rule(lambda fn, args, kwargs, levels: _matmul(fn, (args[1], args[0]), kwargs, levels), matmul._rmatmul)


def _linear(fn, args, kwargs, levels):
    """``F.linear``: one physical call when only the input is batched; a batched weight (per-example
    parameters) is a batched matmul."""
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    x, weight, bias = bound.arguments["input"], bound.arguments["weight"], bound.arguments["bias"]
    if not _is_batched(weight) and not _is_batched(bias):
        return wrap(fn(align(x, levels), weight, bias), levels)
    if (len(levels) == 1 and _is_batched(x) and _is_batched(weight) and weight.dim() == 2 and x.dim() in (1, 2)
            and x.shape[-1] == weight.shape[-1] and x.dtype == weight.dtype
            and (bias is None or (bias.dim() == 1 and bias.shape[0] == weight.shape[0] and bias.dtype == x.dtype))):
        # (anything else, errors included, takes the general path below, which raises linear's own messages)
        return wrap(_per_example_linear(physical(x), physical(weight), bias, levels, x.dim()), levels)
    # W @ x (W @ xᵀ, transposed back, for a batch of rows): the weight's gradient, an outer product per example,
    # then comes out of the backward pass in the weight's own layout, with no transposed copy
    if x.dim() == 1:
        out = _dispatch(matmul.matmul, (weight, x))
    else:
        out = _dispatch(views.transpose, (_dispatch(matmul.matmul, (weight, _dispatch(views.transpose, (x, -1, -2)))),
                                          -1, -2))
    return out if bias is None else _dispatch(arithmetic.add, (out, bias))


def _per_example_linear(x, weight, bias, levels, rank):
    """``F.linear`` per example on physical tensors: ``x`` of shape (B, in) or (B, N, in), ``weight`` (B, out, in)
    (per-sample gradients' parameters: one matrix broadcast over the examples), as one batched matrix product ``W @
    xᵀ`` (the weight's gradient, an outer product per example, then comes out of the backward pass in the weight's
    own layout) and a broadcast sum: four or five recorded ops, where ``matmul``'s general composition records ten."""
    columns = x.unsqueeze(2) if rank == 1 else x.transpose(1, 2)
    out = matmul.bmm(weight, columns)                     # (B, out, 1 or N)
    out = out.squeeze(2) if rank == 1 else out.transpose(1, 2)
    if bias is None:
        return out
    b = align(bias, levels, 1)                            # (B or 1, out)
    return out + (b if rank == 1 else b.unsqueeze(1))


_rule(_linear, nn_linear.linear)


# --- indexing -----------------------------------------------------------------------------------------------

def _is_advanced(item):
    """An index item that selects by values (a tensor, a list, a NumPy array), not by position."""
    return isinstance(item, (Tensor, list)) or (hasattr(item, "ndim") and hasattr(item, "dtype"))


def _index_translation(x, index, levels):
    """The physical index for ``x[index]`` (``x`` batched at ``levels``), or NotImplemented."""
    items = index if isinstance(index, tuple) else (index,)
    nb = len(levels)
    advanced = [i for i, item in enumerate(items) if _is_advanced(item)]
    if any(isinstance(item, Tensor) and item.dim() == 0 and item.dtype.is_floating_point for item in items):
        return NotImplemented
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        return NotImplemented       # separated advanced indices put their dims first: per example
    batched_items = [i for i in advanced if _is_batched(items[i])]
    if not batched_items:
        return (slice(None),) * nb + tuple(items)
    # batched indices: index the batch dims too, with aranges, so each example reads its own entries
    if advanced[0] != 0 or any(items[i].dtype.is_floating_point or items[i].dtype == _bool() for i in batched_items):
        return NotImplemented
    rank = max(items[i].dim() if isinstance(items[i], Tensor) else 1 for i in advanced)
    sizes = [physical(x).shape[j] for j in range(nb)]
    aranges = []
    for j, size in enumerate(sizes):
        shape = [1] * (nb + rank)
        shape[j] = size
        aranges.append(creation.arange(size).reshape(shape))
    moved = tuple(align(items[i], levels, rank) if _is_batched(items[i]) else items[i] for i in advanced)
    return tuple(aranges) + moved + tuple(items[advanced[-1] + 1:])


def _bool():
    from ..core.dtype import bool as bool_dtype
    return bool_dtype


def _getitem(fn, args, kwargs, levels):
    x, index = args
    if not _is_batched(x) or x._levels != levels:
        x = wrap(expand_to(x, levels), levels)
    physical_index = _index_translation(x, index, levels)
    if physical_index is NotImplemented:
        return NotImplemented
    return wrap(fn(physical(x), physical_index), levels)


_rule(_getitem, indexing.getitem)


def _setitem(fn, args, kwargs, levels, inplace):
    x, index, value = args
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_batched(item) for item in items):
        return NotImplemented
    physical_index = _index_translation(x, index, levels)
    if physical_index is NotImplemented:
        return NotImplemented
    if _is_batched(value):
        from ..core import grad_mode  # the region's rank, to align the value's dims with it
        with grad_mode.no_grad():
            region = indexing.getitem(physical(x), physical_index)
        value = align(value, levels, region.dim() - len(levels))
    return (physical(x), physical_index, value), {}


TRANSLATIONS[indexing.setitem] = _setitem


def _gather(fn, args, kwargs, levels):
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    x, index = bound.arguments["input"], bound.arguments["index"]
    if x.dim() == 0 or x.dim() != index.dim():
        return NotImplemented
    bound.arguments["input"] = expand_to(x, levels)
    bound.arguments["index"] = expand_to(index, levels)
    bound.arguments["dim"] = _wrap_dim(bound.arguments["dim"], x.dim()) + len(levels)
    return wrap(fn(*bound.args, **bound.kwargs), levels)


_rule(_gather, indexing.gather)


def _take_along_dim(fn, args, kwargs, levels):
    bound = _bind(fn, args, kwargs)
    if bound is None or bound.arguments["dim"] is None:
        return NotImplemented
    x, index = bound.arguments["input"], bound.arguments["indices"]
    ndim = max(x.dim(), index.dim())
    if x.dim() != index.dim() or ndim == 0:
        return NotImplemented
    return wrap(fn(expand_to(x, levels), expand_to(index, levels),
                   _wrap_dim(bound.arguments["dim"], ndim) + len(levels)), levels)


_rule(_take_along_dim, indexing.take_along_dim)


# --- losses -------------------------------------------------------------------------------------------------

def _reduce_per_example(loss, reduction, levels):
    """An elementwise loss (physical, batch dims first) reduced over each example's own dims."""
    nb = len(levels)
    if reduction == "none" or loss.dim() == nb:
        return wrap(loss, levels)
    dims = tuple(range(nb, loss.dim()))
    if reduction == "sum":
        return wrap(reductions.sum(loss, dims), levels)
    return wrap(reductions.mean(loss, dims), levels)


def _elementwise_loss(weights=("weight", "pos_weight")):
    def rule(fn, args, kwargs, levels):
        bound = _bind(fn, args, kwargs)
        if bound is None:
            return NotImplemented
        a = bound.arguments
        if a.get("size_average") is not None or a.get("reduce") is not None:
            return NotImplemented
        if any(_is_batched(a.get(w)) for w in weights):
            return NotImplemented
        x, target = a["input"], a["target"]
        if tuple(x.shape) != tuple(target.shape):
            return NotImplemented       # PyTorch's size warning and broadcasting, per example
        reduction = a["reduction"]
        if reduction == "batchmean" and x.dim() == 0:
            return NotImplemented
        a["input"], a["target"], a["reduction"] = expand_to(x, levels), expand_to(target, levels), "none"
        loss = fn(*bound.args, **bound.kwargs)
        if reduction == "batchmean":
            summed = _reduce_per_example(loss, "sum", levels)
            return _dispatch(arithmetic.div, (summed, x.shape[0]))
        return _reduce_per_example(loss, reduction, levels)
    return rule


_rule(_elementwise_loss(), losses.mse_loss, losses.l1_loss, losses.smooth_l1_loss, losses.huber_loss,
      losses.binary_cross_entropy, losses.binary_cross_entropy_with_logits, losses.kl_div,
      losses.poisson_nll_loss)


def _nll_loss(fn, args, kwargs, levels):
    """``nll_loss`` per example: computed with ``reduction='none'`` over all examples at once (the class dim
    moved to where the op reads it), then each example's mean is its own weighted mean."""
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    if a.get("size_average") is not None or a.get("reduce") is not None or _is_batched(a.get("weight")):
        return NotImplemented
    x, target, weight, ignore = a["input"], a["target"], a["weight"], a["ignore_index"]
    if x.dim() not in (1, target.dim() + 1) or x.dim() == 0:
        return NotImplemented
    nb = len(levels)
    class_dim = 0 if x.dim() == 1 else 1
    p = expand_to(x, levels).movedim(nb + class_dim, 1)
    t = expand_to(target, levels)
    loss = fn(p, t, weight, None, ignore, None, "none")
    reduction = a["reduction"]
    if reduction != "mean":
        return _reduce_per_example(loss, reduction, levels)
    kept = comparison.ne(t, ignore).to(loss.dtype)
    if weight is not None:
        safe = selection.where(comparison.ne(t, ignore), t, 0)
        kept = kept * indexing.getitem(weight, safe)
    dims = tuple(range(nb, loss.dim()))
    if dims:
        return wrap(reductions.sum(loss, dims) / reductions.sum(kept, dims), levels)
    return wrap(loss / kept, levels)


_rule(_nll_loss, classification.nll_loss)


def _cross_entropy(fn, args, kwargs, levels):
    bound = _bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x, target = a["input"], a["target"]
    if (a["label_smoothing"] != 0.0 or target.is_floating_point() or a.get("size_average") is not None
            or a.get("reduce") is not None or x.dim() == 0):
        return NotImplemented
    log_p = _dispatch(softmax_ops.log_softmax, (x, 0 if x.dim() == 1 else 1))
    return _dispatch(classification.nll_loss, (log_p, target),
                     {"weight": a["weight"], "ignore_index": a["ignore_index"], "reduction": a["reduction"]})


_rule(_cross_entropy, classification.cross_entropy)


# --- convolutions and pools: the batch dims folded into N --------------------------------------------------

def _spatial(spatial_dims):
    def rule(fn, args, kwargs, levels):
        bound = _bind(fn, args, kwargs)
        if bound is None:
            return NotImplemented
        x = bound.arguments["input"]
        if any(_is_batched(v) for p, v in bound.arguments.items() if p != "input") or not _is_batched(x):
            return NotImplemented
        if x.dim() not in (spatial_dims + 1, spatial_dims + 2):
            return NotImplemented
        p = align(x, levels)
        lead = tuple(p.shape[:p.dim() - spatial_dims - 1])
        bound.arguments["input"] = p.reshape(-1, *p.shape[-spatial_dims - 1:])
        result = fn(*bound.args, **bound.kwargs)

        def unfold(r):
            return r.reshape(*lead, *r.shape[1:])
        if isinstance(result, tuple):
            return _wrap_result(type(result)(*map(unfold, result)) if hasattr(result, "_fields")
                                else tuple(map(unfold, result)), levels)
        return wrap(unfold(result), levels)
    return rule


_rule(_spatial(1), convolution.conv1d, pooling.max_pool1d, pooling.avg_pool1d, pooling.adaptive_avg_pool1d,
      lp_pooling.lp_pool1d)
_rule(_spatial(2), convolution.conv2d, pooling.max_pool2d, pooling.avg_pool2d, pooling.adaptive_avg_pool2d,
      lp_pooling.lp_pool2d)
_rule(_spatial(3), convolution.conv3d, pooling3d.max_pool3d, pooling3d.max_pool3d_with_indices, pooling3d.avg_pool3d,
      pooling3d.adaptive_avg_pool3d, pooling3d.adaptive_max_pool3d, pooling3d.adaptive_max_pool3d_with_indices,
      lp_pooling.lp_pool3d)


# --- dropout ------------------------------------------------------------------------------------------------

def _dropout(fn, args, kwargs, levels):
    """Each element draws its own mask entry: one physical call gives every example its own mask
    ('different'); 'same' (one mask for all) runs per example from one generator state."""
    bound = _bind(fn, args, kwargs)
    if bound is None or any(_is_batched(v) for p, v in bound.arguments.items() if p != "input"):
        return NotImplemented
    a = bound.arguments
    if a.get("training", True) and a.get("p", 0.5) != 0:
        from ._dispatch import check_randomness
        check_randomness()
        if randomness() != "different":
            return NotImplemented
    a["input"] = align(a["input"], levels)
    return _wrap_result(fn(*bound.args, **bound.kwargs), levels)


_rule(_dropout, dropout.dropout, dropout.alpha_dropout, dropout.feature_alpha_dropout)
RANDOM.update([dropout.dropout, dropout.alpha_dropout, dropout.feature_alpha_dropout, dropout.dropout1d,
               dropout.dropout2d, dropout.dropout3d, functional_aliases.poisson, functional_aliases.binomial,
               functional_aliases._standard_gamma, functional_aliases._sample_dirichlet])


# --- tensors' metadata, asked of a function -----------------------------------------------------------------

def _first_example(x):
    if not _is_batched(x):
        return x
    p = x._value
    for _ in x._levels:
        p = p.select(0, 0)
    return p


def _metadata(fn, args, kwargs, levels):
    return fn(*[_first_example(a) for a in args], **{k: _first_example(v) for k, v in kwargs.items()})


from .._config import is_nonzero, is_same_size  # noqa: E402  (the config floor's tensor questions)

_rule(_metadata, is_same_size)
_rule(lambda fn, args, kwargs, levels: args[0]._data_dependent(), is_nonzero)  # a truth value read out of vmap


# --- torch.<name> forms of nn ops and of in-place ops (``torch.conv2d``, ``torch.abs_``) ------------------

def _aliases():
    elementwise = {op.__name__: op for op in ELEMENTWISE}
    for name in dir(functional_aliases):
        fn = getattr(functional_aliases, name)
        if callable(fn) and name.endswith("_") and not name.startswith("_") and name[:-1] in elementwise:
            _translation(_elementwise, fn)
    _translation(_elementwise, functional_aliases.detach)
    _rule(_spatial(1), functional_aliases.conv1d)
    _rule(_spatial(2), functional_aliases.conv2d)
    _rule(_spatial(3), functional_aliases.conv3d)
    _translation(_trailing(), functional_aliases.layer_norm)
    _translation(_dims("dim", aligned=2), functional_aliases.cosine_similarity)


_aliases()


# --- autograd.grad inside vmap ------------------------------------------------------------------------------

def _autograd_grad(fn, args, kwargs, levels):
    """``autograd.grad`` of batched outputs in batched inputs: the physical graph's gradient, one backward pass
    (examples never mix). Inputs at different levels, or outputs batched where the inputs are not, run per
    example, which cannot differentiate a slice that is not in the graph and so raises the plain op's error."""
    bound = _bind(fn, args, kwargs)
    if bound is None or bound.arguments["is_grads_batched"]:
        return NotImplemented
    a = bound.arguments

    def as_tuple(value):
        return (value,) if isinstance(value, Tensor) or value is None else tuple(value)
    outputs, inputs = as_tuple(a["outputs"]), as_tuple(a["inputs"])
    cotangents = (None,) * len(outputs) if a["grad_outputs"] is None else as_tuple(a["grad_outputs"])
    own = {getattr(x, "_levels", ()) for x in inputs}
    if own == {()}:
        return _grad_of_batched_gradients(fn, outputs, inputs, cotangents, a)
    if len(own) != 1 or not (own := own.pop()):
        return NotImplemented
    if any(set(t._levels) - set(own) for t in outputs + cotangents if isinstance(t, Tensor)):
        return NotImplemented
    physical_cotangents = [expand_to(c, own, o.dim()) if isinstance(c, Tensor) else
                           (creation.ones_like(expand_to(o, own)) if c is None and o.dim() == 0 else c)
                           for o, c in zip(outputs, cotangents)]
    found = fn([expand_to(o, own) for o in outputs], [physical(x) for x in inputs], physical_cotangents,
               a["retain_graph"], a["create_graph"], a["only_inputs"], a["allow_unused"], False,
               a["materialize_grads"])
    return tuple(None if g is None else wrap(g, own) for g in found)


def _grad_of_batched_gradients(fn, outputs, inputs, cotangents, a):
    """``autograd.grad`` of a graph recorded outside vmap (plain outputs and inputs) for batched
    ``grad_outputs`` (``is_grads_batched``, gradcheck's batched check): one walk with each rule on the batched
    gradient; where a rule cannot batch, one walk per example, keeping the graph for all but the last (a caller's
    ``retain_graph=False`` frees it once, as one walk would)."""
    if any(_is_batched(o) for o in outputs) or not any(_is_batched(c) for c in cotangents):
        return NotImplemented
    found = _grad_of_batched(outputs, inputs, cotangents, a["retain_graph"], a["create_graph"], a["allow_unused"],
                             a["materialize_grads"])
    if found is not None:
        return found
    from ._dispatch import batch_levels, fallback
    levels = batch_levels(cotangents, {})
    size, calls = size_of_level(levels[-1]), []

    def one_example(*cots):
        calls.append(None)
        retain = True if len(calls) < size else a["retain_graph"]
        return fn(outputs, inputs, cots, retain, a["create_graph"], a["only_inputs"], a["allow_unused"], False,
                  a["materialize_grads"])
    return fallback(one_example, tuple(cotangents), {}, levels)


RULES[_autograd_grad_op] = _autograd_grad
RULES[_autograd_backward] = lambda fn, args, kwargs, levels: BatchedTensor.backward(None)   # PyTorch's refusal


def _new_tensor(fn, args, kwargs, levels):
    if any(_is_batched(a) for a in list(args[1:]) + list(kwargs.values())):
        return NotImplemented
    return fn(physical(args[0]), *args[1:], **kwargs)


_rule(_new_tensor, creation.new, creation.new_tensor, creation.new_zeros, creation.new_ones, creation.new_full,
      creation.new_empty)
