"""Higher-level derivatives built on ``autograd.grad``: jacobian, hessian, vjp, jvp, hvp, vhp.

Each takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and mirrors the structure of
``inputs`` in its result, as ``torch.autograd.functional`` does.
"""
import numpy as np

from ..core.grad_mode import enable_grad
from ..core.tensor import Tensor
from . import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x):
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _prepare(inputs, create_graph):
    """Fresh leaves to differentiate with respect to; under create_graph they stay connected to the
    caller's graph (as in PyTorch), so the result can itself be differentiated."""
    prepared = []
    for x in inputs:
        if create_graph and x.requires_grad:
            prepared.append(x.view_as(x) if hasattr(x, "view_as") else x * 1)
        else:
            prepared.append(x.detach().requires_grad_(True))
    return tuple(prepared)


def _grads(outputs, inputs, grad_outputs, create_graph, strict, what):
    """autograd.grad with unused inputs given zero gradients (an error under ``strict``)."""
    outs = [o for o in outputs if o.requires_grad]
    if not outs:
        grads = (None,) * len(inputs)
    else:
        gouts = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad] if grad_outputs is not None else None
        grads = _grad(outs, inputs, gouts, retain_graph=True, create_graph=create_graph, allow_unused=True)
    result = []
    for i, (x, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   f"not allowed in strict mode.")
            g = Tensor._make(np.zeros_like(x._data))
        result.append(g)
    return tuple(result)


def _detach(values, create_graph):
    return tuple(v if create_graph else v.detach() for v in values)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ·J)``: the vector-Jacobian product at ``inputs``."""
    inputs, is_tuple = _as_tuple(inputs)
    with enable_grad():
        x = _prepare(inputs, create_graph)
        out = func(*x)
        outputs, out_tuple = _as_tuple(out)
        if v is None:
            if any(o.numel() != 1 for o in outputs):
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = None
        else:
            vs, _ = _as_tuple(v)
        result = _grads(outputs, x, vs, create_graph, strict, "vjp")
    outputs = _detach(outputs, create_graph)
    return (outputs if out_tuple else outputs[0]), (_detach(result, create_graph) if is_tuple
                                                   else _detach(result, create_graph)[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J·v)``: the Jacobian-vector product, by the double-backward trick
    (differentiate the vector-Jacobian product with respect to its vector)."""
    inputs, _ = _as_tuple(inputs)
    if v is None:
        if any(x.numel() != 1 for x in inputs):
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        vs = tuple(Tensor._make(np.ones_like(x._data)) for x in inputs)
    else:
        vs, _ = _as_tuple(v)
    with enable_grad():
        x = _prepare(inputs, create_graph)
        outputs, out_tuple = _as_tuple(func(*x))
        dummies = tuple(Tensor._make(np.zeros_like(o._data), True) for o in outputs)
        vjps = _grads(outputs, x, dummies, True, strict, "jvp")
        result = _grads(vjps, dummies, vs, create_graph, strict, "jvp")
    outputs = _detach(outputs, create_graph)
    result = _detach(result, create_graph)
    return (outputs if out_tuple else outputs[0]), (result if out_tuple else result[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian: ``J[i][j]`` of shape ``outputs[i].shape + inputs[j].shape`` (nested as in PyTorch)."""
    from .. import stack
    inputs, is_tuple = _as_tuple(inputs)
    with enable_grad():
        x = _prepare(inputs, create_graph)
        outputs, out_tuple = _as_tuple(func(*x))
        table = []
        for out in outputs:
            rows: list[list] = [[] for _ in x]      # rows[j]: d out[k] / d x[j], one per element k
            flat_n = out.numel()
            for k in range(flat_n):
                seed = np.zeros(flat_n, dtype=out._data.dtype)
                seed[k] = 1
                grads = _grads((out,), x, (Tensor._make(seed.reshape(out._data.shape)),), create_graph, strict,
                               "jacobian")
                for j, g in enumerate(grads):
                    rows[j].append(g)
            entry = []
            for j, xj in enumerate(x):
                if rows[j]:
                    jac = stack(rows[j]).reshape(tuple(out.shape) + tuple(xj.shape))
                else:
                    jac = Tensor._make(np.zeros(tuple(out.shape) + tuple(xj.shape), dtype=xj._data.dtype))
                entry.append(jac if create_graph else jac.detach())
            table.append(tuple(entry))
    if out_tuple and is_tuple:
        return tuple(table)
    if out_tuple:
        return tuple(row[0] for row in table)
    if is_tuple:
        return table[0]
    return table[0][0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    inputs_t, is_tuple = _as_tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        if out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        return jacobian(func, xs if is_tuple else xs[0], create_graph=True, strict=strict)

    return jacobian(gradient, inputs_t if is_tuple else inputs_t[0], create_graph=create_graph, strict=strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ·H)``: differentiate the gradient's dot product with ``v``."""
    inputs, is_tuple = _as_tuple(inputs)
    vs, _ = _as_tuple(v) if v is not None else (None, False)
    with enable_grad():
        x = _prepare(inputs, create_graph)
        out = func(*x)
        if out.numel() != 1:
            raise RuntimeError("The function given to hvp should return a single Tensor with a single element.")
        if vs is None:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        first = _grads((out,), x, None, True, strict, "vhp")
        second = _grads(first, x, vs, create_graph, strict, "vhp")
    out = out if create_graph else out.detach()
    second = _detach(second, create_graph)
    return out, (second if is_tuple else second[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H·v)``. The Hessian of a twice-differentiable function is symmetric, so this is
    computed as ``vhp`` (one double backward; PyTorch's documented double-backward trick gives the same
    values with one more pass)."""
    return vhp(func, inputs, v, create_graph, strict)
