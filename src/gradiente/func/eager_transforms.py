"""The derivative transforms of ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``,
``jacrev``, ``jacfwd``, ``hessian``.

How they compose. functorch gives each transform a level and wraps every tensor that enters it. Here the same
separation comes from two plain mechanisms:

* Reverse mode (``grad``, ``vjp``, ``jacrev``): each call differentiates with respect to copies of its inputs made
  for it alone: a fresh leaf that requires grad, or, for an input that an outer transform already differentiates
  (it requires grad, or carries a tangent), a view of it, through which the outer transform still sees. Only paths
  through those copies count, so an outer variable the function closes over is a constant to this transform, as in
  functorch. The gradients keep their graph (``create_graph=True``) only when something outside will differentiate
  them: another transform is running, an input requires grad, or a dual level is open.
* Forward mode (``jvp``, ``jacfwd``): each call opens its own dual level, nested above any that is open
  (``core/forward_grad.py`` propagates every level's tangents, and computes the tangents of an inner level as
  differentiable values at the outer ones).

Hence ``grad(grad(f))``, ``jacfwd(jacrev(f))`` (``hessian``), ``jvp(grad(f), ...)`` and ``jacfwd(jacfwd(f))`` work.

Under vmap. An input a reverse-mode transform differentiates inside ``vmap`` is first batched at every running vmap
level (a broadcast view where it is not batched, ``_batched_at_running_levels``): the transform differentiates the
physical graph, whose gradient for a value shared by the examples would otherwise be their sum. Forward mode makes
its duals on the physical tensors (``_make_dual``).

``jacrev`` and ``jacfwd`` batch over the basis vectors as PyTorch's do: ``jacrev`` runs ``func`` once and batches
the backward pass over the rows; ``jacfwd`` runs it once with tangents batched over the columns, the values
themselves plain. Where the Jacobian must stay differentiable or batched (inside another transform or a vmap), or
``func`` runs a transform of its own, they vmap the whole call instead (``func`` then runs batched; jacfwd finds
an inner transform only as it starts, and runs ``func`` again).

Differences from PyTorch: ``linearize`` runs ``func`` under ``jvp`` on each call instead of tracing it once. A
function that closes over a tensor requiring grad, called from no transform, returns gradients without a graph to
that tensor.
"""
import functools
import weakref

import numpy as np

from ..autograd import forward_ad
from ..core import forward_grad, grad_mode
from ..core.backward import grad as _autograd_grad
from ..core.tensor import Tensor
from . import _dispatch
from ._batched_tensor import (
    BatchedTensor,
    NestedInTangentsOnlyLevel,
    active_levels,
    expand_to,
    levels_of,
    physical,
    pop_level,
    push_level,
    refuse_inside_tangents_only_level,
    size_of_level,
    wrap,
)
from ._tree import flatten, spec_text, tree_map, unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

_forward = forward_grad.state
_running = [0]          # how many transforms are running now


class _Transform:
    """The frame of one transform call: counts it as running, turns grad mode on inside, and decides whether its
    results must stay differentiable (``keep``) for something outside it."""

    def __init__(self, inputs):
        refuse_inside_tangents_only_level()
        outer_grad = grad_mode.state.enabled
        self.keep = outer_grad and (_running[0] > 0 or _forward.on
                                    or any(isinstance(t, Tensor) and t._requires_grad for t in inputs))
        self._grad = grad_mode.enable_grad()

    def __enter__(self):
        _running[0] += 1
        self._grad.__enter__()
        return self

    def __exit__(self, *exc):
        self._grad.__exit__(*exc)
        _running[0] -= 1
        return False

    def release(self, tree):
        """Results as the caller gets them: detached unless something outside differentiates them."""
        if self.keep:
            return tree
        return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _leaves_of(args, kwargs=None):
    leaves, _ = flatten((args, kwargs or {}))
    return leaves


def _batched_at_running_levels(x):
    """Inside vmap, an input batched at every running level (a broadcast view where it is not batched): reverse
    mode differentiates the physical graph, and the physical gradient of a value shared by the examples would
    be their sum, where each example needs its own."""
    levels = tuple(level.id for level in active_levels())
    if not levels or levels_of(x) == levels:
        return x
    return wrap(expand_to(x, levels), levels)


def _differentiable(x):
    """This transform's own copy of an input (see the module docstring)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.__class__ is Tensor and not x._requires_grad and active_levels() and not _forward.on:
        return _shared_by_the_examples(x)
    x = _batched_at_running_levels(x)
    if x._requires_grad or (_forward.on and forward_grad.has_tangent(x)):
        own = x.view_as(x)
        if not own._requires_grad:
            own.requires_grad_()
        return own
    return x.detach().requires_grad_()


def _shared_by_the_examples(x):
    """``_differentiable`` of a plain tensor inside vmap (the parameters of per-sample gradients): a fresh leaf that
    is ``x`` broadcast over every running level, made at once rather than through the dispatched reshape, expand
    and detach that the general path takes (the same tensor: a read-only broadcast view sharing ``x``'s version
    counter, as ``detach`` shares it)."""
    levels = tuple(level.id for level in active_levels())
    sizes = tuple(level.size for level in active_levels())
    own = Tensor._make(np.broadcast_to(x._data, sizes + x._data.shape), requires_grad=True)
    own._version_box = x._version_box
    own._alias_of = weakref.ref(x if x._base is None else x._base)
    return wrap(own, levels)


def _zeros_like(t):
    if t.__class__ is BatchedTensor:
        return wrap(_zeros_like(t._value), t._levels)
    return Tensor._make(np.zeros_like(t._data))


def _any_batched(*groups):
    return any(x.__class__ is BatchedTensor for group in groups if group is not None for x in group)


def _grads(outputs, inputs, cotangents=None, retain_graph=None, create_graph=False):
    """``autograd.grad`` as functorch calls it: outputs that do not require grad are left out, and an input that no
    output reaches gets zeros."""
    if _any_batched(outputs, inputs, cotangents):
        return _batched_grads(outputs, inputs, cotangents, retain_graph, create_graph)
    if cotangents is None:
        pairs = [(o, None) for o in outputs if o._requires_grad]
    else:
        pairs = [(o, c) for o, c in zip(outputs, cotangents) if o._requires_grad]
    if not pairs:
        return tuple(_zeros_like(x) for x in inputs)
    found = _autograd_grad(tuple(o for o, _ in pairs), tuple(inputs),
                           None if cotangents is None else tuple(c for _, c in pairs),
                           retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    return tuple(_zeros_like(x) if g is None else g for g, x in zip(found, inputs))


def _batched_grads(outputs, inputs, cotangents, retain_graph, create_graph):
    """``_grads`` where values are batched. The inputs are batched at the levels that ran when they were made
    (``_differentiable``): over those, one backward pass of the physical graph gives every example's gradient.
    Levels the inputs lack (a ``vjp_fn`` made outside a vmap and called inside it with batched cotangents) run
    per example, since the graph holds one example only."""
    own = set(levels_of(inputs[0])) if inputs else set()
    extra = {lv for group in (outputs, cotangents or ()) for x in group for lv in levels_of(x)} - own
    if extra:
        level = max(extra)
        if not own or level > max(own):
            # one example of the innermost extra level at a time; the levels the inputs have stay batched (a
            # vjp_fn made inside one vmap and called inside a vmap within it: the neural tangent kernel)
            cots = list(cotangents or [None] * len(outputs))
            results = []
            for i in range(size_of_level(level)):
                (outs_i, cots_i), _ = _dispatch._select_all((list(outputs), cots), {}, level, i)
                results.append(_grads(tuple(outs_i), inputs, None if cotangents is None else tuple(cots_i), True,
                                      create_graph))
            return _dispatch._stack_results(results, level)

        def one_example(outs, cots):
            return _grads(tuple(outs), inputs, None if cotangents is None else tuple(cots), True, create_graph)
        return tuple(_dispatch.dispatch(one_example, (list(outputs), list(cotangents or [None] * len(outputs))),
                                        {}))
    levels = tuple(sorted(own))
    outs = [expand_to(o, levels) if o.__class__ is BatchedTensor or levels else o for o in outputs]
    if cotangents is None:
        cots = [Tensor._make(np.ones(o.shape, dtype=o._data.dtype)) if o._requires_grad else None for o in outs]
    else:
        cots = [expand_to(c, levels) if levels else physical(c) for c in cotangents]
    found = _grads(outs, [physical(x) for x in inputs], cots, retain_graph, create_graph)
    return tuple(wrap(g, levels_of(x)) for g, x in zip(found, inputs))


# --- argnums ------------------------------------------------------------------------------------------------

def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _normalize_argnums(argnums, num_args):
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    argnums = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def _slice_argnums(args, argnums):
    """The differentiated arguments: ``args[argnums]`` for an int, the tuple of them for a tuple."""
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def _replace_args(args, new, argnums):
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_tensor_outputs(flat, api):
    if (len(flat) == 1 and flat[0] is None) or len(flat) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat})")
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _refuse_complex(api, tree, is_input):
    for idx, t in enumerate(flatten(tree)[0]):
        if isinstance(t, Tensor) and t.is_complex():
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {kind} to be real but received complex tensor at flattened "
                               f"input idx: {idx}")


# --- reverse mode -------------------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient, value)`` of ``func``, which must return a 0-dim Tensor (or
    ``(output, aux)`` with ``has_aux``: then ``(gradient, (value, aux))``). The gradient has the structure of the
    arguments at ``argnums`` (an int: that argument, a pytree of tensors; a tuple: a tuple of them)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        argnums_ = _normalize_argnums(argnums, len(args))
        with _Transform(_leaves_of(args, kwargs)) as frame:
            flat, spec = flatten(_slice_argnums(args, argnums_))
            own = [_differentiable(x) for x in flat]
            output = func(*_replace_args(args, unflatten(own, spec), argnums_), **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   "APIs instead?")
            gradient = unflatten(_grads((output,), own, create_graph=frame.keep), spec)
            result = frame.release((gradient, (output, aux) if has_aux else output))
        return result

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of ``func`` (a 0-dim Tensor result) with respect to the arguments at
    ``argnums``; with ``has_aux``, ``func`` returns ``(output, aux)`` and the function ``(gradient, aux)``."""
    transformed = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = transformed(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)`` returns, for each
    primal, the vector-Jacobian product; ``cotangents`` has the structure of ``func``'s output."""
    with _Transform(_leaves_of(primals)) as frame:
        flat, spec = flatten(primals)
        own = [_differentiable(x) for x in flat]
        output = func(*unflatten(own, spec))
        output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
        flat_out, out_spec = flatten(output)
        _check_tensor_outputs(flat_out, "vjp(f, *primals)")
        for o in flat_out:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {o.dtype}")
        results = frame.release(output)
        aux = frame.release(aux)
    keep = frame.keep

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = keep or _running[0] > 0
        flat_cot, cot_spec = flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec_text(cot_spec)}, primal output: "
                               f"{spec_text(out_spec)}")
        with grad_mode.enable_grad():
            found = _grads(flat_out, own, flat_cot, retain_graph=retain_graph, create_graph=create_graph)
        return unflatten(found, spec)

    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of ``func`` with respect to the arguments at ``argnums``, by reverse
    mode: for each output, a block of shape ``output.shape + input.shape`` per differentiated input, in the
    structure of the output (outer) and of the arguments (inner).

    Vectorized as PyTorch's: the rows of the Jacobian are vector-Jacobian products with the rows of an identity
    (``chunk_size`` rows at a time), one backward pass of the plain call's graph batched over the rows
    (``autograd.grad(..., is_grads_batched=True)``). Where the Jacobian must itself stay differentiable or
    batched (inside another transform, or under vmap), the vmapped function runs ``func`` again, batched over the
    rows, and differentiates that batched graph in one backward pass instead."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    call = _dispatch.resolve(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _refuse_complex("jacrev", args, is_input=True)
        argnums_ = _normalize_argnums(argnums, len(args))
        with _Transform(_leaves_of(args, kwargs)) as frame:
            flat, spec = flatten(_slice_argnums(args, argnums_))
            own = [_differentiable(x) for x in flat]
            output = call(*_replace_args(args, unflatten(own, spec), argnums_), **kwargs)
            output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
            flat_out, out_spec = flatten(output)
            _check_tensor_outputs(flat_out, "vjp(f, *primals)")
            _refuse_complex("jacrev", output, is_input=False)

            def vjp_of_rows(*cotangents):
                mine = [_differentiable(x) for x in flat]
                out = call(*_replace_args(args, unflatten(mine, spec), argnums_), **kwargs)
                out = flatten(_split_aux(out, has_aux, "vjp(f, *primals)")[0])[0]
                return _grads(out, mine, cotangents, retain_graph=True, create_graph=frame.keep)

            if frame.keep or active_levels() or _forward.on:
                rows = _vmapped_over_identity(vjp_of_rows, flat_out, chunk_size)
            else:
                rows = _rows_by_batched_backward(flat_out, own, chunk_size)
            blocks, start = [], 0
            for o in flat_out:
                n = o.numel()
                blocks.append(unflatten([_rows_block(r, start, n, o, x) for r, x in zip(rows, own)], spec))
                start += n
            jacobian = frame.release(unflatten(blocks, out_spec))
            aux = frame.release(aux)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def _rows_by_batched_backward(outputs, inputs, chunk_size):
    """The rows of the Jacobian of ``outputs`` in ``inputs`` (one tensor per input, shaped ``(total,) +
    input.shape``): the plain graph's backward pass batched over the rows of the identity, as PyTorch's jacrev
    computes them; None for outputs with no element."""
    basis, total = _identity_basis(outputs)
    if total == 0:
        return None
    pairs = [(o, rows) for o, rows in zip(outputs, basis) if o._requires_grad]
    step = chunk_size or total
    chunks = []
    for start in range(0, total, step):
        stop = min(start + step, total)
        found = (None,) * len(inputs) if not pairs else _autograd_grad(
            tuple(o for o, _ in pairs), tuple(inputs), tuple(rows[start:stop] for _, rows in pairs),
            retain_graph=stop < total, allow_unused=True, is_grads_batched=True)
        chunks.append([g._data if g is not None else np.zeros((stop - start,) + tuple(x.shape), x.dtype._np)
                       for g, x in zip(found, inputs)])
    return [Tensor._make(np.concatenate(parts) if len(parts) > 1 else parts[0]) for parts in zip(*chunks)]


def _identity_basis(like):
    """One tensor per value of ``like``: together, the rows of the identity of the total size, each tensor the
    columns of one value, shaped ``(total,) + value.shape``, in its dtype."""
    total = sum(t.numel() for t in like)
    basis, start = [], 0
    for t in like:
        n = t.numel()
        cols = np.zeros((total, n), dtype=t.dtype._np)
        cols[start:start + n] = np.eye(n, dtype=cols.dtype)
        basis.append(Tensor._make(cols.reshape((total,) + tuple(t.shape))))
        start += n
    return basis, total


def _vmapped_over_identity(fn, like, chunk_size, randomness="error"):
    """``fn`` vmapped over the rows of the identity basis of ``like``; one result per value ``fn`` returns, each
    with the rows in front. An empty basis gives None (no rows to map over)."""
    from .vmap import vmap
    basis, total = _identity_basis(like)
    if total == 0:
        return None
    return vmap(fn, chunk_size=chunk_size, randomness=randomness)(*basis)


def _columns_by_batched_tangents(fn, like):
    """``fn`` called once on the columns of the identity basis of ``like`` batched at a new vmap level (the
    arguments themselves are not mapped over); its results with the columns in front, as ``vmap`` returns them.
    None for an empty basis."""
    from .vmap import _unwrap_outputs
    basis, total = _identity_basis(like)
    if total == 0:
        return None
    level = push_level(total, "error", tangents_only=True)
    _dispatch.install()
    try:
        return _unwrap_outputs(fn(*(wrap(b, (level.id,)) for b in basis)), 0, level, fn)
    finally:
        _dispatch.uninstall()
        pop_level(level)


def _rows_block(rows, start, n, out, x):
    """The Jacobian block of ``out`` in ``x`` from the rows ``start:start + n`` of the stacked VJPs."""
    shape = tuple(out.shape) + tuple(x.shape)
    if rows is None:
        return _zeros_of(shape, x)
    return rows[start:start + n].reshape(shape)


def _zeros_of(shape, like):
    return Tensor._make(np.zeros(shape, dtype=like.dtype._np))


# --- forward mode -------------------------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _check_tensor_list(flat, argname):
    if len(flat) == 0:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(t)}")


def _make_dual(primal, tangent, level, plain_primal=False):
    """``make_dual`` where the primal or the tangent may be batched: both as one physical shape (the union of
    their levels), the dual batched as they are. ``plain_primal``: a plain primal keeps its shape and carries the
    batched tangent as it is (``_columns_by_batched_tangents``)."""
    if (primal.__class__ is not BatchedTensor and tangent.__class__ is not BatchedTensor) or \
            (plain_primal and primal.__class__ is not BatchedTensor):
        return forward_ad.make_dual(primal, tangent, level=level)
    levels = tuple(sorted(set(levels_of(primal)) | set(levels_of(tangent))))
    return wrap(forward_ad.make_dual(expand_to(primal, levels), expand_to(tangent, levels), level=level), levels)


def _jvp_at_new_level(func, args, kwargs, argnums, flat_tangents, strict, has_aux, plain_primals=False):
    """Run ``func`` with the differentiated arguments made dual at a new level; returns the flat outputs, their
    spec, their tangents and ``aux``. The caller holds a ``_Transform``. ``plain_primals``: see ``_make_dual``."""
    flat, spec = flatten(args if argnums is None else _slice_argnums(args, argnums))
    enabled = _forward.enabled
    _forward.enabled = True
    level = forward_grad.enter_level(nested=True)
    try:
        duals = unflatten([_make_dual(p, t, level, plain_primals) for p, t in zip(flat, flat_tangents)], spec)
        output = func(*duals, **kwargs) if argnums is None else func(*_replace_args(args, duals, argnums), **kwargs)
        output, aux = _split_aux(output, has_aux, _JVP)
        flat_out, out_spec = flatten(output)
        _check_tensor_outputs(flat_out, _JVP)
        tangents_out = []
        for o in flat_out:
            t = forward_grad.tangent(physical(o), level)
            if t is not None and o.__class__ is BatchedTensor:
                t = wrap(t, o._levels)
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of "
                                       "the inputs. This is not allowed with strict=True.")
                t = _zeros_like(o)
            tangents_out.append(t)
    finally:
        forward_grad.exit_level(level)
        _forward.enabled = enabled
        _forward.refresh()
    return flat_out, out_spec, tangents_out, aux


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J·tangents)`` by forward mode (and ``aux`` with ``has_aux``); ``tangents`` has the
    structure and shapes of ``primals``."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = flatten(primals)
    flat_tangents, tangents_spec = flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{spec_text(primals_spec)} and tangents with structure {spec_text(tangents_spec)}")
    _check_tensor_list(flat_primals, "primals")
    _check_tensor_list(flat_tangents, "tangents")
    with _Transform(flat_primals + flat_tangents) as frame:
        flat_out, out_spec, tangents_out, aux = _jvp_at_new_level(func, primals, {}, None, flat_tangents, strict,
                                                                  has_aux)
        result = frame.release((unflatten(flat_out, out_spec), unflatten(tangents_out, out_spec)))
        aux = frame.release(aux)
    return (*result, aux) if has_aux else result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at ``primals``.
    PyTorch traces ``func`` once; here each call of ``jvp_fn`` runs ``func`` again under ``jvp``."""
    output = func(*primals)
    flat_primals, primals_spec = flatten(primals)
    metas = [(tuple(p.shape), p.device, p.dtype) for p in flat_primals]

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {spec_text(tangents_spec)} to have the same argspec as the "
                               f"primals {spec_text(primals_spec)}")
        for idx, (t, (shape, device, dtype)) in enumerate(zip(flat_tangents, metas)):
            for what, mine, theirs in (("shape", t.shape, shape), ("device", t.device, device),
                                       ("dtype", t.dtype, dtype)):
                if (tuple(mine) if what == "shape" else mine) != theirs:
                    shown = t.shape if what == "shape" else mine
                    expected = type(t.shape)(theirs) if what == "shape" else theirs
                    raise RuntimeError(f"tangent:{idx} with {what} {shown} in flattened pytree doesn't match the "
                                       f"{what} {expected} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """A function returning the Jacobian of ``func`` with respect to the arguments at ``argnums``, by forward
    mode, laid out as ``jacrev``'s. Vectorized as PyTorch's: the columns are Jacobian-vector products with the
    columns of an identity, all computed in one forward pass under ``vmap``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    call = _dispatch.resolve(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _refuse_complex("jacfwd", args, is_input=True)
        argnums_ = _normalize_argnums(argnums, len(args))
        flat, spec = flatten(_slice_argnums(args, argnums_))
        _check_tensor_list(flat, "primals")
        with _Transform(_leaves_of(args, kwargs)) as frame:
            found = {}

            # One plain call whose inputs carry the identity's columns as tangents batched at a new vmap level: the
            # function's own values are computed once, its tangents for every column at once (functorch's vmap
            # leaves the primal unbatched likewise). Where the Jacobian must stay differentiable or batched, random
            # ops may run per column, or func runs a transform of its own (found as it starts, and the call run
            # again), the whole call is vmapped instead, its primals batched too.
            plain = randomness == "error" and not frame.keep and not active_levels() and not _forward.on

            def jvp_of_columns(*tangents):
                flat_out, out_spec, tangents_out, _ = _jvp_at_new_level(
                    call, args, kwargs, argnums_, list(tangents), False, has_aux, plain_primals=plain)
                found["spec"], found["shapes"] = out_spec, [tuple(o.shape) for o in flat_out]
                return tuple(tangents_out)

            columns = None
            if plain:
                try:
                    columns = _columns_by_batched_tangents(jvp_of_columns, flat)
                except NestedInTangentsOnlyLevel:   # func runs a transform of its own: vmap the whole call
                    plain = False
            if not plain:
                columns = _vmapped_over_identity(jvp_of_columns, flat, None, randomness)
            aux = None
            if columns is None or has_aux:      # no column to map over, or aux wanted: one plain call
                output, aux = _split_aux(call(*args, **kwargs), has_aux, _JVP)
                flat_out, out_spec = flatten(output)
                shapes = [tuple(o.shape) for o in flat_out]
                if columns is None:
                    columns = [None] * len(flat_out)
            else:
                out_spec, shapes = found["spec"], found["shapes"]
            _refuse_complex("jacfwd", columns if columns[0] is not None else [], is_input=False)
            blocks = []
            for shape, column in zip(shapes, columns):
                parts, start = [], 0
                for x in flat:
                    n = x.numel()
                    if column is None:
                        parts.append(_zeros_of(shape + tuple(x.shape), x))
                    else:
                        # columns in front: move them behind the output's dims
                        block = column[start:start + n].movedim(0, -1) if len(shape) else column[start:start + n]
                        parts.append(block.reshape(shape + tuple(x.shape)))
                    start += n
                blocks.append(unflatten(parts, spec))
            jacobian = frame.release(unflatten(blocks, out_spec))
            aux = frame.release(aux)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func`` with respect to the arguments at ``argnums``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)
