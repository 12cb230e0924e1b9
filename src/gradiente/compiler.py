"""``torch.compile`` and ``torch.compiler``: PyTorch compiles a model's Python into fused kernels; gradiente runs
the Python as written, so compiling changes no result, and none here either.

What stays visible is kept: a compiled function is a new function of the same name that calls the original; a
compiled ``nn.Module`` is an ``OptimizedModule`` holding the original as ``_orig_mod``, which shows in its
printout and its ``state_dict`` keys (``_orig_mod.weight``), exactly as checkpoints of compiled PyTorch models
have them. The options PyTorch checks (``mode``, with ``options``) are checked the same way.
"""
import functools

from .nn.modules.module import Module

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "disable", "reset"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False, **kwargs):
    """``torch.compile(model)``, or ``@torch.compile`` / ``@torch.compile(mode=...)`` as a decorator."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if model is None:
        # @torch.compile(...) with arguments: a decorator still waiting for its function
        return lambda function: compile(function, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                        options=options, name=name, disable=disable, **kwargs)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    _as_dynamo_leaves_the_process()
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    return compiled


def _as_dynamo_leaves_the_process():
    """What PyTorch's compiler changes for the whole process the first time it wraps a model (its patches run once):
    the distributions no longer check their arguments (``Distribution.set_default_validate_args(False)``), so a
    program that compiles sees the same errors, and the same absence of them, as under PyTorch."""
    if _patched:
        return
    _patched.append(True)
    from .distributions import Distribution
    Distribution.set_default_validate_args(False)


_patched: list = []


class OptimizedModule(Module):
    """A compiled module: calls ``_orig_mod``, and reads through to its attributes (``compiled.in_features``)."""

    def __init__(self, original):
        super().__init__()
        self._orig_mod = original
        self.training = original.training

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def is_compiling():
    """Whether this code runs inside a compilation: never in gradiente."""
    return False


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """Mark ``fn`` as never to be compiled: it already is not, so ``fn`` comes back as it is."""
    if fn is None:
        return lambda function: function
    return fn


def reset():
    """Forget compiled code: there is none."""
