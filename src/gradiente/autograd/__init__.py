"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes, ``Function``, ``Variable``.

Layout: ``graph`` (nodes, saved values, hooks), ``engine`` (the backward walk), ``rule_ops`` (the array
namespaces rules compute with), ``grad_mode``, ``function`` (user-defined ops), ``functional``
(jacobian, hessian, vjp, jvp, hvp, vhp) and ``gradcheck``.
"""
import numpy as np

from ..core import grad_mode
from ..core.engine import run_backward
from ..core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ..core.node import Node
from ..core.rules import numpy_ops, tensor_ops
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable

__all__ = ["backward", "grad", "Variable", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "Node", "once_differentiable",
           "gradcheck", "gradgradcheck", "functional", "set_detect_anomaly", "detect_anomaly", "graph"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _root_grads(outputs, grad_outputs, create_graph, what="grad"):
    """The starting gradient of each output: given, or 1 for a scalar (PyTorch's checks and messages)."""
    from ..core.tensor import Tensor
    grads = []
    if len(grad_outputs) != len(outputs):
        if grad_outputs:
            raise RuntimeError(f"{what} requires grad_outputs to be the same length as outputs "
                               f"(got {len(grad_outputs)} and {len(outputs)})")
        grad_outputs = (None,) * len(outputs)
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise TypeError(f"{what}(): argument 'outputs' must be tuple of Tensors, not {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind != "f":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            arr = np.ones(out._data.shape, dtype=out._data.dtype)
            grads.append(Tensor._make(arr) if create_graph else arr)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=out._data.dtype))
        if g._data.shape != out._data.shape:
            from ..core.size import Size
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)!r} and "
                               f"output[{i}] has a shape of {Size(out._data.shape)!r}.".replace("gradiente.", "torch."))
        if (g._data.dtype.kind != out._data.dtype.kind
                or (g._data.dtype != out._data.dtype and out._data.dtype.kind != "f")):
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same "
                               f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] "
                               f"has a dtype of {out.dtype}.")
        if g._data.dtype != out._data.dtype:
            g = g.to(out.dtype)
        grads.append(g if create_graph else g._data)
    return grads


def _capture(inputs):
    """The engine's ``capture`` dict, ``{edge: slot}`` with one slot per distinct input, and each input's slot."""
    capture: dict[tuple, int] = {}
    slots: list[int] = []
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        slots.append(capture.setdefault(t._grad_edge(), len(capture)))
    return capture, slots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate into the ``.grad`` of the graph's leaves the gradient of ``tensors`` (weighted by
    ``grad_tensors``, the vector of a vector-Jacobian product; implicit 1 for a scalar)."""
    from ..core.tensor import Tensor
    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _root_grads(outputs, _as_tuple(grad_tensors) if not isinstance(grad_tensors, Tensor) else (grad_tensors,),
                        create_graph, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [t._grad_edge() for t in outputs]
    if inputs is None:
        run_backward(roots, grads, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    capture, slots = _capture(inputs)
    captured = run_backward(roots, grads, retain_graph, create_graph, capture=capture, accumulate=False)
    ops = tensor_ops if create_graph else numpy_ops
    done = set()
    for t, slot in zip(inputs, slots):
        g = captured[slot]
        if g is None or slot in done:     # an input listed twice gets its gradient once, as in PyTorch
            continue
        done.add(slot)
        # `captured` and `g` hold the array as the engine's buffer and frame do in AccumulateGrad, so
        # accumulate's "nobody else holds it" test means the same here (a shared array is copied)
        ops.accumulate(t, g)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated into ``.grad``)."""
    from ..core.tensor import Tensor
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by gradiente")
    grads = _root_grads(outputs, _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor) else (grad_outputs,),
                        create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): argument 'inputs' must be tuple of Tensors, not {type(t).__name__}")
    capture, slots = _capture(inputs)
    roots = [t._grad_edge() for t in outputs]
    captured = run_backward(roots, grads, retain_graph, create_graph, capture=capture, accumulate=False)
    result = []
    for t, slot in zip(inputs, slots):
        g = captured[slot]
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                g = Tensor._make(np.zeros_like(t._data))
            result.append(g)
            continue
        result.append(g if create_graph else Tensor._make(np.array(g, copy=True)))
    return tuple(result)


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        from ..core.tensor import Tensor
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """The legacy wrapper: ``Variable(t, requires_grad=True)`` returns a Tensor (Variables and Tensors
    merged in PyTorch 0.4). The result shares ``t``'s memory."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from ..core.tensor import Tensor
        if data is None:
            from ..core.creation import tensor
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = Tensor._make(data._data)
        t._version_box = data._version_box
        if requires_grad:
            t.requires_grad_(True)
        return t


class set_detect_anomaly:
    """Accepted for compatibility; gradiente's errors already name the operation involved."""

    def __init__(self, mode, check_nan=True):
        self.mode = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


detect_anomaly = set_detect_anomaly


def __getattr__(name):
    # functional and gradcheck are loaded on first use: `import gradiente` stays fast.
    import importlib
    if name == "functional":
        return importlib.import_module(".functional", __name__)
    if name in ("gradcheck", "gradgradcheck"):
        return getattr(importlib.import_module("._gradcheck", __name__), name)
    raise AttributeError(f"module 'gradiente.autograd' has no attribute '{name}'")
