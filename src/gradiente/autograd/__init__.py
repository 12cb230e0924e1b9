"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes, ``Function``, ``Variable``.

The public face of the core's autograd (``gradiente/core``: nodes, grad modes, the engine, ``backward`` and
``grad``), with what is built on it here: ``function`` (user-defined ops), ``functional`` (jacobian, hessian,
vjp, jvp, hvp, vhp), ``gradcheck``, and ``graph``/``grad_mode`` under PyTorch's module names.
"""
import numpy as np

from ..core import grad_mode, rules
from ..core.backward import backward, grad
from ..core.backward import use_vmapped_grad as _use_vmapped_grad
from ..core.creation import tensor
from ..core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from ..core.node import Node, SavedTensor
from ..core.rules import numpy_ops
from ..core.tensor import Tensor
from . import anomaly_mode, forward_ad, graph
from ._grads_batched import grads_batched as _grads_batched  # issue 11: is_grads_batched through vmap
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import enforce_grad_layout_policy  # issue 16
from .gradcheck import gradcheck, gradgradcheck  # binds the names to the functions; the module stays importable

_use_vmapped_grad(_grads_batched)

__all__ = ["backward", "grad", "Variable", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "Node", "once_differentiable",
           "gradcheck", "gradgradcheck", "functional", "set_detect_anomaly", "detect_anomaly", "graph",
           "SavedTensor", "set_multithreading_enabled", "variable", "enforce_grad_layout_policy"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """The legacy wrapper: ``Variable(t, requires_grad=True)`` returns a Tensor (Variables and Tensors
    merged in PyTorch 0.4). The result shares ``t``'s memory."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = Tensor._make(data._data)
        t._version_box = data._version_box
        if requires_grad:
            t.requires_grad_(True)
        return t



def variable(*args, **kwargs):
    """Removed long ago in PyTorch (``torch.tensor`` makes tensors): raises its message."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


def __getattr__(name):
    # functional and the profiler are loaded on first use: `import gradiente` stays fast.
    import importlib
    if name in ("functional", "_functions", "profiler", "profiler_util"):
        return importlib.import_module(f".{name}", __name__)
    if name == "DeviceType":
        return importlib.import_module(".profiler_util", __name__).DeviceType
    raise AttributeError(f"module 'gradiente.autograd' has no attribute '{name}'")
