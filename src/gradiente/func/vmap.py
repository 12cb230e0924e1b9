"""``vmap``, the vectorizing map, as ``torch.func.vmap`` (PyTorch 2.13): ``vmap(f)(xs)`` is ``stack([f(x) for x
in xs])`` computed in one pass, each op running once over the whole batch.

What happens in a call: the inputs are checked against ``in_dims`` (PyTorch's messages), a new vmap level is
pushed, each input mapped over is wrapped as a ``BatchedTensor`` (its mapped dim moved to the front of its
physical tensor, ``_batched_tensor.py``), the public namespaces dispatch while the level runs (``_dispatch.py``),
``f`` runs once, and each output's batch dim of this level is moved to its ``out_dims`` place (an output that does
not depend on the mapped inputs is expanded to the batch). ``chunk_size`` splits the batch into pieces, each
vmapped in turn, and concatenates the results; ``randomness`` decides what random ops do inside ('error' refuses
them, 'same' draws once for the whole batch, 'different' draws for each example).
"""
import functools
import itertools

from ..core import random as _random
from ..core.tensor import Tensor
from ..ops import joining
from . import _batched_rule_ops, _dispatch
from ._batched_tensor import BatchedTensor, pop_level, push_level, refuse_inside_tangents_only_level, wrap
from ._tree import flatten, unflatten

__all__ = ["vmap"]

_dispatch.bind_methods()
_batched_rule_ops.install()


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _spec_repr(spec, indent=0):
    """A pytree spec as PyTorch's ``TreeSpec`` prints in its messages: ``TreeSpec(tuple, None, [*,\\n  *])``."""
    if spec is None:
        return "*"
    kind, keys, children = spec
    context = list(keys) if kind == "dict" else (keys._fields if kind == "namedtuple" else None)
    kind = keys.__name__ if kind == "namedtuple" else kind
    indent += 2
    parts = [_spec_repr(c, indent) for c in children]
    body = parts[0] + ("," if len(parts) > 1 else "") + ",".join("\n" + " " * indent + p for p in parts[1:]) \
        if parts else ""
    return f"TreeSpec({kind}, {context}, [{body}])"


def _broadcast_to_and_flatten(tree, spec):
    """``tree`` (an int/None per leaf, or a prefix of the structure ``spec`` whose leaves apply to whole
    subtrees) as one value per leaf of ``spec``; None when the structures differ."""
    if spec is None:
        return [tree] if flatten(tree)[1] is None else None
    if tree is None or isinstance(tree, int):
        return [tree] * _count_leaves(spec)
    kind, keys, children = spec
    if kind == "dict":
        if not isinstance(tree, dict) or set(tree) != set(keys):
            return None
        parts = [tree[k] for k in keys]
    elif kind == "namedtuple":
        if not isinstance(tree, tuple) or len(tree) != len(children):
            return None
        parts = list(tree)
    else:
        if type(tree).__name__ != kind or len(tree) != len(children):
            return None
        parts = list(tree)
    out = []
    for part, child in zip(parts, children):
        flat = _broadcast_to_and_flatten(part, child)
        if flat is None:
            return None
        out.extend(flat)
    return out


def _count_leaves(spec):
    if spec is None:
        return 1
    return sum(_count_leaves(c) for c in spec[2])


def _structure(tree):
    return _spec_repr(flatten(tree)[1])


# --- inputs -------------------------------------------------------------------------------------------------

def _process_inputs(func, in_dims, args):
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {_structure(in_dims)} but inputs has "
                         f"structure {_spec_repr(spec)}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
                             "but in_dim must be either an integer dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
                             f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, "
                             "please use None as the respective in_dim")
        if in_dim is not None and not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, "
                             f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    return _batch_size(flat_in_dims, flat_args), flat_in_dims, flat_args, spec


def _batch_size(flat_in_dims, flat_args):
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def add_batch_dim(x, dim, level):
    """``x`` mapped over its logical dim ``dim`` at ``level`` (the innermost level yet, so its dim goes after the
    batch dims ``x`` already has)."""
    if x.__class__ is BatchedTensor:
        nb = len(x._levels)
        return wrap(x._value.movedim(nb + dim, nb), x._levels + (level.id,))
    return wrap(x.movedim(dim, 0) if dim != 0 else x, (level.id,))


def remove_batch_dim(x, level, out_dim):
    """The result of ``level`` for output ``x``: its batch dim of ``level`` moved to logical position ``out_dim``
    (expanded there when ``x`` does not depend on the mapped inputs)."""
    if x.__class__ is BatchedTensor and level.id in x._levels:
        position = x._levels.index(level.id)
        rest = tuple(lv for lv in x._levels if lv != level.id)
        logical = x._value.dim() - len(x._levels)
        target = len(rest) + _wrap_out_dim(out_dim, logical + 1)
        value = x._value if position == target else x._value.movedim(position, target)
        return wrap(value, rest)
    rest = x._levels if x.__class__ is BatchedTensor else ()
    value = x._value if x.__class__ is BatchedTensor else x
    nb = len(rest)
    logical = value.dim() - nb
    target = nb + _wrap_out_dim(out_dim, logical + 1)
    value = value.unsqueeze(target)
    sizes = list(value.shape)
    sizes[target] = level.size
    return wrap(value.expand(*sizes), rest)


def _wrap_out_dim(dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


# --- outputs ------------------------------------------------------------------------------------------------

def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for leaf in flatten(out_dims)[0]:
        if not (leaf is None or isinstance(leaf, int)):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _unwrap_outputs(outputs, out_dims, level, func, none_passes=False):
    flat, spec = flatten(outputs)
    name = _name(func)

    def incompatible():
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {_structure(out_dims)} but outputs has "
                         f"structure {_spec_repr(spec)}.")
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_out_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_out_dims = list(out_dims)
        else:
            incompatible()
    else:
        flat_out_dims = _broadcast_to_and_flatten(out_dims, spec)
        if flat_out_dims is None:
            incompatible()
    results = []
    for out, out_dim in zip(flat, flat_out_dims):
        if out is None and none_passes:
            results.append(None)
            continue
        if out_dim is None:
            if isinstance(out, BatchedTensor) and level.id in out._levels:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            results.append(out)
            continue
        if not isinstance(out, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. Did you "
                             "mean to set out_dims= to None for output?")
        results.append(remove_batch_dim(out, level, out_dim))
    return unflatten(results, spec)


# --- the transform ------------------------------------------------------------------------------------------

def _flat_vmap(call, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs, func,
               none_passes=False):
    refuse_inside_tangents_only_level()
    level = push_level(batch_size, randomness)
    _dispatch.install()
    try:
        batched = [arg if d is None else add_batch_dim(arg, d, level) for d, arg in zip(flat_in_dims, flat_args)]
        outputs = call(*unflatten(batched, spec), **kwargs)
        return _unwrap_outputs(outputs, out_dims, level, func, none_passes)
    finally:
        _dispatch.uninstall()
        pop_level(level)


def _chunks(flat_args, flat_in_dims, batch_size, chunk_size):
    bounds = list(itertools.accumulate([chunk_size] * (batch_size // chunk_size)
                                       + ([batch_size % chunk_size] if batch_size % chunk_size else [])))
    pieces = [joining.tensor_split(arg, bounds, d) if d is not None else [arg] * len(bounds)
              for arg, d in zip(flat_args, flat_in_dims)]
    return zip(*pieces)


def _chunked_vmap(call, flat_in_dims, chunks, spec, out_dims, randomness, kwargs, func):
    state = _random.get_rng_state() if randomness == "same" else None
    outputs = []
    for chunk in chunks:
        chunk = list(chunk)
        size = _batch_size(flat_in_dims, chunk)
        if size == 0:
            continue
        if state is not None:
            _random.set_rng_state(state)
        outputs.append(_flat_vmap(call, size, flat_in_dims, chunk, spec, out_dims, randomness, kwargs, func))
    flat_outputs = [flatten(o)[0] for o in outputs]
    out_spec = flatten(outputs[0])[1]
    flat_out_dims = _broadcast_to_and_flatten(out_dims, out_spec)
    joined = [joining.cat([pieces[i] for pieces in flat_outputs], dim=d) for i, d in enumerate(flat_out_dims)]
    return unflatten(joined, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dim ``in_dims`` of its inputs (an int for all, or a structure like the arguments' with
    an int or None per input), its outputs stacked at ``out_dims``; see the module docstring."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    call = _dispatch.resolve(func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        if chunk_size is not None:
            chunks = _chunks(flat_args, flat_in_dims, batch_size, chunk_size)
            return _chunked_vmap(call, flat_in_dims, chunks, spec, out_dims, randomness, kwargs, func)
        return _flat_vmap(call, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs, func)

    return wrapped
