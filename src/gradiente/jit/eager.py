"""``script``, ``trace`` and the TorchScript annotations, run eagerly: each returns what it was given, so the program
runs as ordinary Python, as it does in PyTorch under ``PYTORCH_JIT=0``. The deprecation warnings are PyTorch's."""
import builtins
import collections
import collections.abc
import typing
import warnings

__all__ = ["script", "trace", "trace_module", "script_if_tracing", "script_method", "ignore", "unused", "export",
           "interface", "annotate", "Attribute", "Final", "is_scripting", "is_tracing", "isinstance", "freeze",
           "optimize_for_inference", "ScriptModule", "ScriptFunction", "Error", "enable_onednn_fusion",
           "onednn_fusion_enabled", "set_fusion_strategy", "strict_fusion"]

_SCRIPT_DEPRECATED = "`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`."
_TRACE_DEPRECATED = "`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`."

Final = typing.Final


def _deprecated(message):
    # raised from inside the library, as PyTorch raises it: Python's default filters then show it only to those
    # who ask for DeprecationWarnings (a program run as a script prints nothing)
    warnings.warn(message, DeprecationWarning, stacklevel=1)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function, a Module or a class) itself: calls run eagerly, with the same values as
    PyTorch's compiled version. A scripted Module prints as the Module (PyTorch prints
    ``RecursiveScriptModule(original_name=...)``) and is not a ``ScriptModule`` instance."""
    _deprecated(_SCRIPT_DEPRECATED)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Returns ``func`` (a function or a Module) itself, without running it on ``example_inputs``: later calls run
    the Python code, so data-dependent control flow, which a trace would freeze, keeps working. (PyTorch runs the
    function while tracing and again to check the trace, so a random function draws more numbers there.)"""
    _deprecated(_TRACE_DEPRECATED)
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Returns ``mod`` itself (see ``trace``)."""
    _deprecated("`torch.jit.trace_method` is deprecated. Please switch to `torch.compile` or `torch.export`.")
    return mod


def script_if_tracing(fn):
    """Returns ``fn``: nothing is ever traced here."""
    return fn


def script_method(fn):
    """Returns ``fn`` (the old ``ScriptModule`` API's method decorator)."""
    _deprecated("`torch.jit.script_method` is deprecated. Please switch to `torch.compile` or `torch.export`.")
    return fn


def ignore(drop=False, **kwargs):
    """``@ignore`` or ``@ignore(drop=True)``: leaves the function as it is (it runs as Python either way)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Returns ``fn``: outside TorchScript an unused method is an ordinary method."""
    return fn


def export(fn):
    """Returns ``fn``: every method of an eager Module can be called."""
    return fn


def interface(obj):
    """Returns ``obj``, the class that declares the interface."""
    _deprecated("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.")
    return obj


def annotate(the_type, the_value):
    """Returns ``the_value``: the type is for the TorchScript compiler."""
    return the_value


#: ``Attribute(value, type)``, declaring a ScriptModule attribute's type: outside TorchScript, PyTorch's is this
#: named tuple (its ``value`` is the value)
Attribute = collections.namedtuple("Attribute", ["value", "type"])


def is_scripting():
    """False: gradiente never compiles TorchScript."""
    return False


def is_tracing():
    """False: gradiente never traces."""
    return False


def _matches(obj, target_type):
    origin = typing.get_origin(target_type)
    args = typing.get_args(target_type)
    if target_type is typing.Any:
        return True
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union:      # Optional[T] is Union[T, None]
        return any(_matches(obj, arg) for arg in args)
    if origin is list:
        return builtins.isinstance(obj, list) and all(_matches(x, args[0]) for x in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(_matches(k, args[0]) and _matches(v, args[1])
                                                      for k, v in obj.items())
    if origin is tuple:
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and all(
            _matches(x, arg) for x, arg in zip(obj, args))
    if origin in (collections.abc.Sequence, collections.abc.Mapping):
        return builtins.isinstance(obj, origin)
    raise RuntimeError(f"Unsupported type {target_type} in torch.jit.isinstance")


def isinstance(obj, target_type):
    """Whether ``obj`` is of ``target_type``, which may be a parameterized container: ``List[int]``,
    ``Dict[str, List[Tensor]]``, ``Tuple[int, str]``, ``Optional[...]`` (every element is checked)."""
    return _matches(obj, target_type)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Returns ``mod`` (there is no graph to freeze) after PyTorch's check that it is in eval mode."""
    warnings.warn("`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """``mod`` in eval mode (PyTorch also freezes and fuses its graph)."""
    warnings.warn("`torch.jit.optimize_for_inference` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return mod.eval()


class ScriptModule:
    """The class of PyTorch's compiled modules. ``script`` returns the Module itself here, so no object is a
    ScriptModule; a class deriving from it (the old ``@script_method`` API) should derive from ``nn.Module``."""


class ScriptFunction:
    """The class of PyTorch's compiled functions; ``script`` returns the function itself here."""


class Error(RuntimeError):
    """TorchScript's runtime error (``torch.jit.Error``)."""


_FUSION = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    """Records the setting; there is no oneDNN graph fuser here."""
    _FUSION["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    return _FUSION["onednn"]


def set_fusion_strategy(strategy):
    """Records the fusion strategy and returns the previous one (nothing is fused here)."""
    warnings.warn("`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    previous, _FUSION["strategy"] = _FUSION["strategy"], list(strategy)
    return previous


class strict_fusion:
    """A context manager that, in TorchScript, checks that the code inside fused; a no-op when run eagerly."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, tb):
        return None
