"""``gradiente.jit``, as ``torch.jit``, for programs that script or trace to run faster: gradiente has no
TorchScript compiler, so everything runs eagerly, as Python.

The decision, and what differs from PyTorch:

* ``script(fn_or_module)`` and ``trace(fn_or_module, example_inputs)`` return what they were given: calls give the
  values PyTorch's compiled code gives. A scripted or traced Module prints as the Module itself, where PyTorch
  prints ``RecursiveScriptModule(original_name=Linear)``, and is not an instance of ``ScriptModule``; ``trace``
  does not run the function (PyTorch runs it to trace and again to check).
* ``ignore``, ``unused``, ``export``, ``interface``, ``annotate``, ``Attribute``, ``script_if_tracing`` return
  their argument; ``Final`` is ``typing.Final``; ``is_scripting()`` and ``is_tracing()`` are False;
  ``isinstance`` checks parameterized containers (``List[Tensor]``...); ``fork`` runs the function at once and
  ``wait`` returns its result; ``CompilationUnit`` runs TorchScript source as Python.
* ``save`` and ``load`` raise ``NotImplementedError``: a TorchScript archive holds compiled code, which gradiente
  cannot write or run. Save the weights instead: ``torch.save(model.state_dict(), path)``, and in the loading
  program build the model in Python and call ``model.load_state_dict(torch.load(path))``.
* PyTorch 2.13's deprecation warnings (``torch.jit.script`` is deprecated...) are given as PyTorch gives them.
"""
from .compilation_unit import CompilationUnit
from .eager import (
    Attribute,
    Error,
    Final,
    ScriptFunction,
    ScriptModule,
    annotate,
    enable_onednn_fusion,
    export,
    freeze,
    ignore,
    interface,
    is_scripting,
    is_tracing,
    isinstance,
    onednn_fusion_enabled,
    optimize_for_inference,
    script,
    script_if_tracing,
    script_method,
    set_fusion_strategy,
    strict_fusion,
    trace,
    trace_module,
    unused,
)
from .futures import Future, fork, wait

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze", "interface", "ignore", "isinstance",
           "load", "onednn_fusion_enabled", "optimize_for_inference", "save", "script", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]

_NO_TORCHSCRIPT = ("gradiente has no TorchScript, so {} is not available. To save a model, save its weights: "
                   "torch.save(model.state_dict(), path); to load it, build the model in Python and call "
                   "model.load_state_dict(torch.load(path)).")


def save(m, f, _extra_files=None):
    """Raises ``NotImplementedError``: there is no compiled code to archive (the message says what to do)."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format("torch.jit.save"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Raises ``NotImplementedError``: a TorchScript archive holds code that gradiente cannot run."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format("torch.jit.load"))


def export_opnames(m):
    """Raises ``NotImplementedError``: the operator names come from a compiled TorchScript graph."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format("torch.jit.export_opnames"))
