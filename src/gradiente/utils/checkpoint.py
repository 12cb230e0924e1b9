"""``gradiente.utils.checkpoint``, PyTorch's ``torch.utils.checkpoint``: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the tensors its ops save for backward, and runs it again
during backward to get them back. Two implementations, as in PyTorch:

* ``use_reentrant=False`` (recommended): ``fn`` runs under saved-tensor hooks whose pack step keeps only a
  small placeholder (a ``_Holder``) for each saved tensor. The first unpack in a backward reruns ``fn`` under
  hooks that catch the recomputed values, stopping as soon as every value still needed is back (early stop);
  each unpack then hands over its holder's value once. The graph is the one ``fn`` built, so hooks on its
  nodes, ``autograd.grad``, double backward and nesting work as without checkpointing.
* ``use_reentrant=True``: ``fn`` runs under ``no_grad`` inside a custom Function, whose backward reruns it
  with grad on and calls ``backward`` on the recomputed outputs (a backward inside a backward).

With ``preserve_rng_state`` the generator's state is stashed before the forward and restored for the
recomputation, so random ops (dropout) draw the same numbers twice.
"""
import contextlib
import warnings
import weakref

from .. import autograd
from ..autograd.graph import saved_tensors_hooks
from ..core import grad_mode
from ..core import random as _random
from ..core.engine import current_graph_task
from ..core.node import _Packed, saved_hooks
from ..core.tensor import Tensor
from . import checkpoint_selective as _sac

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "detach_variable",
           "check_backward_validity", "noop_context_fn", "set_checkpoint_early_stop",
           "set_checkpoint_debug_enabled"]


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not save what the original forward saved."""


def noop_context_fn():
    """The default ``context_fn`` of ``checkpoint``: two empty contexts, one for the forward pass and one for its
    recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Each tensor of the tuple ``inputs`` detached, with its ``requires_grad`` kept; other items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for item in inputs:
        if isinstance(item, Tensor):
            detached = item.detach()
            detached.requires_grad = item.requires_grad
            item = detached
        out.append(item)
    return tuple(out)


def check_backward_validity(inputs):
    """Warns, as PyTorch's reentrant checkpoint does, when none of ``inputs`` is a tensor that requires grad: the
    checkpointed segment would then get no gradients."""
    if not any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


_settings = {"early_stop": None, "debug": None}


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints made in this context stop recomputing once every value is back."""
    previous = _settings["early_stop"]
    _settings["early_stop"] = enable
    try:
        yield
    finally:
        _settings["early_stop"] = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides every checkpoint's ``debug`` within the context (None: each checkpoint's own)."""
    previous = _settings["debug"]
    _settings["debug"] = enabled
    try:
        yield
    finally:
        _settings["debug"] = previous


# --- use_reentrant=True ------------------------------------------------------------------------------------
class CheckpointFunction(autograd.Function):
    """The reentrant checkpoint: forward under no_grad, recomputation and an inner backward in backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _random.get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        with _rng_restored(ctx.fwd_cpu_state if ctx.preserve_rng_state else None):
            detached = detach_variable(tuple(inputs))
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(out, g) for out, g in zip(outputs, grads) if isinstance(out, Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([out for out, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(t.grad if isinstance(t, Tensor) else None for t in detached)


@contextlib.contextmanager
def _rng_restored(state):
    """Run the block from generator state ``state`` (None: as it is), and leave the generator as it was."""
    if state is None:
        yield
        return
    outside = _random.get_rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(outside)


# --- use_reentrant=False -----------------------------------------------------------------------------------
class _Holder:
    """What the forward saves in a tensor's place. A recomputation puts the value in ``values`` under its backward
    pass's id (None outside a backward pass), where it stays until that pass unpacks it: a backward started by
    a hook in the middle of another one recomputes for itself, as in PyTorch."""

    __slots__ = ("values", "kept", "__weakref__")

    def __init__(self):
        self.values = {}
        self.kept = None        # the tensor itself, where selective checkpointing keeps it (never recomputed)


class _StopRecomputation(Exception):
    pass


def _metadata(tensor):
    return {"shape": tensor.shape, "dtype": tensor.dtype, "device": tensor.device}


_CHECKS = {"default": _metadata, "none": lambda _: None}

_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint-debug mode globally.
"""


class _Frame:
    """One non-reentrant checkpoint: ``fn`` and its inputs (saved through whatever hooks were around the call,
    so checkpoints nest), a weak reference to each holder in the order the forward saved them, and each saved
    tensor's metadata for the determinism check."""

    def __init__(self, fn, args, kwargs, rng_state, early_stop, metadata_fn, debug, recompute_context):
        self.fn, self.kwargs = fn, kwargs
        self.rng_state, self.early_stop, self.metadata_fn = rng_state, early_stop, metadata_fn
        self.debug, self.recompute_context = debug, recompute_context
        self.holders: list = []
        self.metadata: list = []
        self.kept: list = []                    # per holder: whether selective checkpointing keeps its tensor
        self.forward_done = False
        self.recomputed_in: set = set()         # the ids of the backward passes that recomputed already
        self.ignore_saved_mismatch = False
        self.args = [self._keep(a) for a in args]

    @staticmethod
    def _keep(arg):
        if not isinstance(arg, Tensor):
            return arg
        if saved_hooks.stack:
            pack, unpack = saved_hooks.stack[-1]
            return _Packed(arg, None, pack, unpack)
        return arg

    def inputs(self):
        return [a.tensor(None) if a.__class__ is _Packed else a for a in self.args]

    def pack(self, tensor):
        holder = _Holder()
        _sac.note_pack(self, len(self.holders), tensor)
        self.holders.append(weakref.ref(holder))
        self.kept.append(False)
        with grad_mode.no_grad():
            self.metadata.append(self.metadata_fn(tensor))
        return holder

    def keep(self, index, tensor):
        """Selective checkpointing keeps holder ``index``'s tensor: no recomputation gives it back, so the
        recomputation's saves are matched to the other holders."""
        holder = self.holders[index]()
        if holder is not None:
            holder.kept = tensor.detach() if tensor.requires_grad else tensor
        self.kept[index] = True

    def unpack(self, holder):
        if holder.kept is not None:
            return holder.kept
        task = current_graph_task()
        key = None if task is None else task.id
        # One recomputation per backward pass (PyTorch's graph task): a value unpacked in this pass already is
        # gone. Outside a backward pass every read recomputes.
        if key not in holder.values and (key is None or key not in self.recomputed_in):
            if key is not None:
                self.recomputed_in.add(key)
            self.recompute(key)
        value = holder.values.pop(key, None)
        if value is None:
            raise CheckpointError("torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                                  "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do "
                                  "so only once. Otherwise please open an issue with details on your use case.")
        return value

    def recompute(self, key):
        """Rerun ``fn``, giving each live holder its recomputed value (dropping the values of holders that were
        unpacked already in an earlier recomputation), and check the recomputation saved what the forward did."""
        counter = [0]
        mismatch = []
        live = [i for i, kept in enumerate(self.kept) if not kept]     # the holders a recomputation fills
        stop_at = len(live)

        def pack(tensor):
            index = counter[0]
            counter[0] += 1
            if index >= stop_at:
                if not self.forward_done:
                    # a backward inside the checkpointed function, recomputing before the forward has ended and
                    # without early stop: the recomputation saves more than the forward had so far
                    self.ignore_saved_mismatch = True
                    return tensor.detach()
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      "than during the original forward pass.\n" + self._tip())
            # detached, so that the recomputed graph, which nothing uses, holds no cycle through its outputs
            value = tensor.detach() if tensor.requires_grad else tensor
            holder = self.holders[live[index]]()
            if holder is not None:
                with grad_mode.no_grad():
                    if self.metadata_fn(value) != self.metadata[live[index]]:
                        mismatch.append((index, self.metadata[live[index]], self.metadata_fn(value)))
                holder.values[key] = value
            if self.early_stop and counter[0] == stop_at:
                raise _StopRecomputation
            return value

        args = self.inputs()
        try:
            with _rng_restored(self.rng_state), saved_tensors_hooks(pack, _identity), grad_mode.enable_grad(), \
                    self.recompute_context():
                self.fn(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        if counter[0] != stop_at and not self.ignore_saved_mismatch:
            raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                  "original forward and recomputation.\n"
                                  f"Number of tensors saved during forward: {stop_at}\n"
                                  f"Number of tensors saved during recomputation: {counter[0]}.\n" + self._tip())
        if mismatch:
            listing = "".join(f"tensor at position {i}:\nsaved metadata: {saved}\nrecomputed metadata: {now}\n"
                              for i, saved, now in mismatch)
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{listing}.\n" + self._tip())

    def _tip(self):
        if not self.debug:
            return _DEBUG_TIP
        return ("\n ERROR: Detected non-determinism while running activation checkpointing\n\n"
                " You are seeing this error because you passed `debug=True` to checkpoint and\n"
                " tensors to be saved during the original forward and differ between those saved\n"
                " during recomputation. This can happen if different operators were ran in the\n"
                " original forward and in the recomputation.\n")


def _identity(x):
    return x


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, early_stop, args,
                                  kwargs):
    debug = _settings["debug"] if _settings["debug"] is not None else debug
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_CHECKS)}, but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not grad_mode.state.enabled:
        with forward_context:
            return function(*args, **kwargs)
    early_stop = _settings["early_stop"] if _settings["early_stop"] is not None else early_stop
    rng_state = _random.get_rng_state() if preserve else None
    contexts = [recompute_context]

    def next_recompute_context():
        # context_fn's second manager serves the first recomputation; later ones ask context_fn again, except
        # selective checkpointing's, which must read what its forward kept
        if isinstance(recompute_context, _sac.CachedMode):
            return recompute_context
        return contexts.pop() if contexts else context_fn()[1]

    frame = _Frame(function, args, kwargs, rng_state, early_stop, _CHECKS[determinism_check], debug,
                   next_recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        result = function(*args, **kwargs)
    frame.forward_done = True
    return result


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)``, keeping none of the tensors its ops save for backward: backward runs it
    again to get them. ``use_reentrant`` should be given (False is recommended; None warns and means True, as
    in PyTorch 2.13). ``preserve_rng_state`` (default True): the recomputation draws the same random numbers.
    ``context_fn`` returns two context managers, for the forward and for the recomputation (non-reentrant
    only, as are ``determinism_check`` ("default": shapes, dtypes and devices must match; "none"), ``debug``
    and ``early_stop``). ``debug=True`` adds an explanation to the error but no operator logs (gradiente has
    no dispatcher to log them)."""
    if use_reentrant is None:
        # PyTorch's ``stacklevel=2`` lands in the frame of the ``torch._disable_dynamo`` wrapper around its
        # checkpoint, one line of its own whoever calls: here, this line, printed once per process as there
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=1)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, early_stop,
                                         args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list of callables or an ``nn.Sequential``) in order on ``input``, in ``segments``
    pieces of equal length; every piece but the last is checkpointed."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# issue 16: device states, the names of selective activation checkpointing, and SAC itself
from .checkpoint_policies import *  # noqa: E402,F403
from .checkpoint_policies import __all__ as _policy_names  # noqa: E402
from .checkpoint_selective import create_selective_checkpoint_contexts  # noqa: E402

__all__ = __all__ + _policy_names + ["create_selective_checkpoint_contexts"]  # noqa: PLE0605
