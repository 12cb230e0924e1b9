"""Selective activation checkpointing (SAC): a policy chooses, op by op, which outputs a checkpointed region keeps.

``checkpoint(fn, *args, use_reentrant=False, context_fn=partial(create_selective_checkpoint_contexts, policy))``
runs ``fn`` under the first of the two contexts made here and its recomputation under the second:

* **forward** (``_CachingMode``): every op is asked about once, as it is recorded: ``policy(ctx, func, *inputs)``
  with ``ctx.is_recompute`` False, ``ctx.op_output`` the op's result and ``func`` the op's handle
  (``gradiente.ops.aten``: ``aten.mm.default`` for the op that records ``MmBackward0``). A ``*_SAVE`` answer for
  the op whose node produced a call's result keeps that result (detached) and the tensors the call's nodes saved
  for backward, which checkpointing would otherwise drop;
* **recomputation** (``CachedMode``): the same call, met again in the same order, returns the kept result
  without running, so its ops are not recomputed and save nothing anew; every other call runs as before.

What PyTorch's dispatcher gives it and gradiente has not, and how gradiente stands in for it. An *op* is one
recorded backward node, as PyTorch's ATen ops each record one (so ``x @ w`` of matrices is ``aten.mm.default``
and ``F.linear`` is ``aten.t.default`` then ``aten.addmm.default``, as in PyTorch). A *call* is a call of a
public op function or Tensor method made from outside any other op (``_timed_ops.swap_ops`` reaches each one
before it runs, as the profiler does, only while a SAC context is open); the ops it records are asked about
together, and whether it is skipped in the recomputation follows the answer for the op that made its result.
Intended differences: ops that record no node (no input requires grad) are neither asked about nor kept; the
policy is given the op's recorded inputs, not ATen's full argument list, and no kwargs; in-place calls are
always rerun (the kept result would not be the tensor they write into); a name a program imported from
gradiente before the region ran (``from gradiente import mm``) is not reached, so its call always reruns; in
nested selective checkpoints an op is asked about, and kept, by the innermost region only (PyTorch asks each
enclosing region's policy too). Entering a context swaps the op functions in and out (about 10 ms each time).
"""
import enum
import inspect

from ..autograd import _timed_ops
from ..core import record as _record
from ..core.tensor import Tensor
from ..ops import aten
from .checkpoint_policies import CheckpointPolicy, SelectiveCheckpointContext

__all__ = ["create_selective_checkpoint_contexts", "CachedMode", "note_pack"]

_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_SAC_MISMATCH_MSG = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on "
                     "global state that changed between forward and backward.")


class _Entry(enum.Enum):
    RECOMPUTE = 0           # the call reruns in the recomputation
    CONSUMED = 1            # its kept result was handed out once already


class _Call:
    """One call seen in a forward: what the policy answered for each node it recorded (by node id) and the
    tensors checkpointing packed meanwhile, ``(frame, index, tensor)``, kept if the call is."""

    __slots__ = ("answers", "packs")

    def __init__(self):
        self.answers: dict = {}
        self.packs: list = []


class _State:
    """The SAC contexts open now (innermost last), whether a call is running (its ops are not calls of their
    own), the call a forward is in, and the swapped-in wrappers while any context is open."""

    def __init__(self):
        self.modes: list = []
        self.in_call = False
        self.call = None
        self.swapped = None


_state = _State()


def note_pack(frame, index, tensor):
    """Checkpointing packed ``tensor`` as ``frame``'s holder ``index``: kept if the running call is kept."""
    if _state.call is not None:
        _state.call.packs.append((frame, index, tensor))


def _see(node, inputs, outputs):
    mode = _state.modes[-1] if _state.modes else None
    if mode is None or mode.__class__ is not _CachingMode:
        return
    answer = mode.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=outputs), aten.handle_of(node),
                            *inputs)
    if isinstance(answer, bool):        # PyTorch's older policies answer True for "save"
        answer = CheckpointPolicy.MUST_SAVE if answer else CheckpointPolicy.PREFER_RECOMPUTE
    if _state.call is not None:
        _state.call.answers[id(node)] = answer


_wrappers: dict = {}       # (function, name) -> its wrapper: they hold no state, so each is made once


def _reaching(function, name):
    """``function``, going through the innermost SAC context when called from outside any op."""
    if hasattr(function, "__wrapped__"):       # another swap's wrapper (a profiler's), made anew each time: not kept
        return _make_reaching(function, name)
    made = _wrappers.get((function, name))
    if made is None:
        made = _wrappers[(function, name)] = _make_reaching(function, name)
    return made


def _make_reaching(function, name):
    # the op itself names its calls, whatever else wraps it (a profiler's timing, swapped in before or after)
    key = inspect.unwrap(function)

    def call(*args, **kwargs):
        if not _state.modes or _state.in_call:
            return function(*args, **kwargs)
        return _state.modes[-1].call(function, key, name, args, kwargs)
    call.__name__, call.__qualname__, call.__doc__ = function.__name__, function.__qualname__, function.__doc__
    call.__wrapped__ = function
    return call


def _open(mode):
    if not _state.modes:
        _state.swapped = _timed_ops.swap_ops(_reaching, lambda name, method: _reaching(method, name))
        _record.observer.see = _see
    _state.modes.append(mode)


def _close(mode):
    _state.modes.remove(mode)
    if not _state.modes:
        _record.observer.see = None
        swapped, _state.swapped = _state.swapped, None
        _timed_ops.put_back(*swapped)


def _run(function, args, kwargs):
    _state.in_call = True
    try:
        return function(*args, **kwargs)
    finally:
        _state.in_call = False


def _first_tensor(out):
    if isinstance(out, Tensor):
        return out
    if isinstance(out, (tuple, list)):
        return next((o for o in out if isinstance(o, Tensor)), None)
    return None


class _CountingMode:
    """What the two contexts share: entered and left as a checkpoint mode, and each op's calls counted, the count
    being the call's index in the storage."""

    counts: dict

    def __enter__(self):
        _open(self)
        return self

    def __exit__(self, *exc):
        _close(self)

    def _next_index(self, key):
        index = self.counts.get(key, 0)
        self.counts[key] = index + 1
        return index


class _CachingMode(_CountingMode):
    """The forward's context: asks the policy about each op and keeps what it says to save."""

    def __init__(self, policy_fn, storage):
        self.policy_fn = policy_fn
        self.storage = storage
        self.counts = {}

    def call(self, function, key, name, args, kwargs):
        index = self._next_index(key)
        outer, _state.call = _state.call, _Call()
        call = _state.call
        try:
            out = _run(function, args, kwargs)
        finally:
            _state.call = outer
        first = _first_tensor(out)
        answer = call.answers.get(id(first.grad_fn)) if first is not None and first.grad_fn is not None else None
        if answer in _SAVE and not name.endswith("_"):
            self.storage.setdefault(key, {})[index] = _kept(out)
            for frame, position, tensor in call.packs:
                frame.keep(position, tensor)
        else:
            self.storage.setdefault(key, {})[index] = _Entry.RECOMPUTE
        return out


class _Kept:
    """A tensor as the cache holds it: detached (sharing its version counter, to catch a later in-place change),
    with whether it required grad and its version then."""

    __slots__ = ("value", "requires_grad", "version")

    def __init__(self, tensor):
        self.value, self.requires_grad, self.version = tensor.detach(), tensor.requires_grad, tensor._version


class _Sequence:
    """A tuple or list of results (``torch.return_types.max`` and its kin included), kept item by item."""

    __slots__ = ("cls", "items")

    def __init__(self, out):
        self.cls, self.items = type(out), [_kept(o) for o in out]


def _kept(out):
    if isinstance(out, Tensor):
        return _Kept(out)
    return _Sequence(out) if isinstance(out, (tuple, list)) else out


class CachedMode(_CountingMode):
    """The recomputation's context: a call whose result the forward kept returns it instead of running. Entered
    once per recomputation (its count starts again, as PyTorch's does)."""

    def __init__(self, storage, allow_cache_entry_mutation):
        self.storage = storage
        self.allow_mutation = allow_cache_entry_mutation
        self.counts = {}

    def __enter__(self):
        self.counts.clear()
        return super().__enter__()

    def call(self, function, key, name, args, kwargs):
        index = self._next_index(key)
        entries = self.storage.get(key)
        if entries is None:
            raise RuntimeError(f"aten.{name} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH_MSG}")
        entry = entries.get(index)
        if entry is None:
            raise RuntimeError(f"aten.{name} invocation index {index} encountered during backward but not found in "
                               f"storage. {_SAC_MISMATCH_MSG}")
        if entry is _Entry.RECOMPUTE:
            return _run(function, args, kwargs)
        if entry is _Entry.CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any region "
                               "computed under selective activation checkpoint.")
        entries[index] = _Entry.CONSUMED
        return self._handed_out(entry)

    def _handed_out(self, entry):
        if entry.__class__ is _Sequence:
            items = [self._handed_out(e) for e in entry.items]
            return entry.cls(*items) if hasattr(entry.cls, "_fields") else entry.cls(items)
        if entry.__class__ is not _Kept:
            return entry
        if entry.value._version != entry.version and not self.allow_mutation:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        # a fresh leaf, so that the ops after it record and save as they did in the forward
        value = entry.value.detach()
        return value.requires_grad_() if entry.requires_grad else value


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``context_fn`` of ``checkpoint(..., use_reentrant=False)`` for selective checkpointing: two contexts,
    for the forward and for the recomputation, sharing what the forward kept. ``policy_fn_or_list``: a function
    ``policy(ctx, func, *args, **kwargs)`` answering a ``CheckpointPolicy`` (or a bool, True for MUST_SAVE) for
    each op, or a list of op handles (``gradiente.ops.aten.mm.default``) to save, every other op being
    recomputed. A kept tensor changed in place before the recomputation raises RuntimeError, unless
    ``allow_cache_entry_mutation``. What an op is here, and how it differs from PyTorch, is in the module
    docstring."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, aten.OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, if you have "
                         "`torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                         if isinstance(op, aten.OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
        chosen = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in chosen else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = {}
    return _CachingMode(policy_fn, storage), CachedMode(storage, allow_cache_entry_mutation)
