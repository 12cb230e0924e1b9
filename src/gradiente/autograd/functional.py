"""Higher-level derivatives built on ``autograd.grad``: jacobian, hessian, vjp, jvp, hvp, vhp.

Each takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and mirrors the structure of
``inputs`` (and of ``func``'s outputs) in its result, as ``torch.autograd.functional`` does, with its checks
and messages: non-tensor inputs and outputs are refused with a TypeError, and under ``strict=True`` an output
or a derivative that does not depend on an input is an error rather than a block of zeros.

How each is computed (PyTorch's methods, so the ``strict`` errors arise at the same step):

* ``vjp``: one backward pass with ``v`` as the output gradient.
* ``jvp``: the double-backward trick. The vector-Jacobian product ``u ↦ Jᵀu`` is linear in ``u``; differentiating
  it with respect to ``u`` (a dummy that requires grad), weighted by ``v``, gives ``J·v``.
* ``jacobian``: one backward pass per output element; with ``vectorize=True`` (and no ``create_graph``), as
  PyTorch, ``torch.func.jacrev``'s passes vmapped over the rows; with ``strategy="forward-mode"`` (PyTorch requires
  ``vectorize=True`` there), ``torch.func.jacfwd``: one forward pass vmapped over the input elements.
* ``hessian``: the jacobian of the jacobian of a scalar function.
* ``vhp``: the gradient, then the backward pass of its dot product with ``v``; ``hvp``: the double-backward
  trick applied to the gradient (for a twice-differentiable function ``H`` is symmetric and the two agree).
"""

import numpy as np

from ..core import forward_grad
from ..core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor
from . import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --- arguments in and results out -----------------------------------------------------------------------------

def _tensors(value, what, api):
    """``(was_a_tuple, value as a tuple)``; anything but a Tensor or a tuple of Tensors is a TypeError."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if was_tuple else f"the given {what}"
            raise TypeError(f"The {what} given to {api} must be either a Tensor or a tuple of Tensors but {where} "
                            f"has type {type(item)}.")
    return was_tuple, items


def _unpack(result, was_tuple):
    """Undo ``_tensors``: a tuple back to the single Tensor the caller gave."""
    return result if was_tuple else result[0]


def _unpack_table(table, outputs_tuple, inputs_tuple):
    """A table indexed [output][input], unpacked along each axis the caller did not give as a tuple."""
    if not inputs_tuple:
        table = tuple(row[0] for row in table)
    return table if outputs_tuple else table[0]


def _differentiable_copies(inputs, create_graph):
    """Fresh Tensors to differentiate with respect to, new objects even for the same input twice (so a tensor
    that ``func`` captures is not mistaken for its argument). Under ``create_graph`` an input that requires grad
    stays connected to the caller's graph (a view of it), so the result can itself be differentiated; so does an
    input with a tangent (a forward-mode jacobian outside: PyTorch's vmap keeps it, here the view does)."""
    return tuple(_connected(x) if create_graph and (x.requires_grad or _has_tangent(x))
                 else x.detach().requires_grad_(True) for x in inputs)


def _has_tangent(x):
    return forward_grad.state.on and forward_grad.has_tangent(x)


def _connected(x):
    view = x.view_as(x)
    return view if view.requires_grad else view.requires_grad_(True)


def _constants(vectors, create_graph):
    """``v`` as the backward passes read it: detached unless the caller's graph is to be extended."""
    return tuple(v.view_as(v) if create_graph and v.requires_grad else v.detach() for v in vectors)


def _finish(values, create_graph):
    """Results without history unless the caller asked for it (``create_graph``); nested tuples allowed."""
    if create_graph:
        return values
    return tuple(v.detach() if isinstance(v, Tensor) else _finish(v, create_graph) for v in values)


def _check_v(v, like, like_is_tuple):
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (vi, li) in enumerate(zip(v, like)):
        if vi.size() != li.size():
            where = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {_size_text(li)} but got {_size_text(vi)}.")


def _size_text(t):
    """A tensor's size as PyTorch's messages print it: ``torch.Size([2, 3])``."""
    return f"torch.Size({list(t.shape)})"


def _v_or_scalar_default(v, like, like_is_tuple, api, about, create_graph):
    """``v`` checked against ``like``; None only where ``like`` is one single-element Tensor (then v is 1)."""
    if v is not None:
        _, vs = _tensors(v, "v", api)
        vs = _constants(vs, create_graph)
        _check_v(vs, like, like_is_tuple)
        return vs
    if len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {about} a single Tensor with a single element.")
    return None


# --- strict mode: what must depend on what --------------------------------------------------------------------

_NOT_DIFFERENTIABLE = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the "
                "input. This is not allowed in strict mode. You should ensure that your function is thrice "
                "differentiable and that the hessian depends on the inputs."),
}


def _require_grad(values, kind, strict):
    """Under ``strict``: each value exists and requires grad (``kind`` picks PyTorch's message)."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind].format(i=i))


# For a gradient that came out None (the result does not depend on that input), by the pass that computed it.
_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_missing(grads, like, strict, create_graph, stage):
    """Replace each None gradient by zeros shaped as ``like[i]``, or, under ``strict``, refuse it; under
    ``strict`` and ``create_graph`` a gradient must also be differentiable."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = Tensor._make(np.zeros_like(like[i]._data))
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _grads_or_none(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad (None gradients where there are none, or where an
    input is unused)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


def _grad_mode_for_result(create_graph):
    return set_grad_enabled(True if create_graph else is_grad_enabled())


def _scalar_function_output(outputs, outputs_tuple, api):
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {api} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {api} should contain a single element")


# --- the public functions -------------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ·J)``: the vector-Jacobian product at ``inputs``. ``v`` has the outputs' shapes; it
    may be omitted when ``func`` returns one single-element Tensor."""
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "vjp")
        x = _differentiable_copies(inputs, create_graph)
        outputs_tuple, outputs = _tensors(func(*x), "outputs of the user-provided function", "vjp")
        _require_grad(outputs, "outputs", strict)
        vs = _v_or_scalar_default(v, outputs, outputs_tuple, "vjp", "the user-provided function returns", create_graph)
    with _grad_mode_for_result(create_graph):
        result = _zeros_for_missing(_grads_or_none(outputs, x, vs, create_graph), x, strict, create_graph, "back")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(result, create_graph),
                                                                           inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J·v)``: the Jacobian-vector product, by the double-backward trick (see the module's
    docstring). ``v`` has the inputs' shapes; it may be omitted for one single-element input."""
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "jvp")
        x = _differentiable_copies(inputs, create_graph)
        vs = _v_or_scalar_default(v, x, inputs_tuple, "jvp", "the input to the user-provided function is", create_graph)
        outputs_tuple, outputs = _tensors(func(*x), "outputs of the user-provided function", "jvp")
        _require_grad(outputs, "outputs", strict)
        # Any finite value would do: the vector-Jacobian product is linear in it, so it leaves no trace.
        dummies = tuple(Tensor._make(np.zeros_like(o._data), True) for o in outputs)
        grad_inputs = _grads_or_none(outputs, x, dummies, create_graph=True)
        _require_grad(grad_inputs, "grad_inputs", strict)
    with _grad_mode_for_result(create_graph):
        result = _zeros_for_missing(_grads_or_none(grad_inputs, dummies, vs, create_graph), outputs, strict,
                                    create_graph, "back_trick")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(result, create_graph),
                                                                           outputs_tuple)


def _construct_standard_basis_for(tensors, tensor_numels):
    """The N×N identity (N = the sum of ``tensor_numels``) cut into column blocks, one per tensor, of that
    tensor's dtype: block k is ``(N, numel_k)``, with the ones of the rows that belong to tensor k."""
    total = sum(tensor_numels)
    blocks, start = [], 0
    for t, n in zip(tensors, tensor_numels):
        block = np.zeros((total, n), dtype=t._data.dtype)
        block[np.arange(start, start + n), np.arange(n)] = 1
        blocks.append(Tensor._make(block))
        start += n
    return tuple(blocks)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian: entry ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape`` (unnested where ``func``
    returns, or ``inputs`` is, a single Tensor). ``vectorize=True`` computes the rows in one vmapped pass."""
    from .. import stack
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                               'are not supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                      "implemented for `vectorize=True`.")
        return _jacfwd(func, inputs)
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
        x = _differentiable_copies(inputs, create_graph)
        outputs_tuple, outputs = _tensors(func(*x), "outputs of the user-provided function", "jacobian")
        _require_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        if vectorize and not create_graph:
            from ..func import jacrev
            return _vectorized(jacrev, func, inputs, outputs_tuple, inputs_tuple)
        table = []
        for i, out in enumerate(outputs):
            rows: list[list] = [[] for _ in x]          # rows[j][k]: d out.flat[k] / d x[j]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                for j, g in enumerate(_grads_or_none((flat[k],), x, retain_graph=True, create_graph=create_graph)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = Tensor._make(np.zeros_like(x[j]._data))
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            table.append(tuple(_stacked(stack, rows[j], out, xj) for j, xj in enumerate(x)))
        return _unpack_table(_finish(tuple(table), create_graph), outputs_tuple, inputs_tuple)


def _vectorized(transform, func, inputs, outputs_tuple, inputs_tuple):
    """The Jacobian table by ``torch.func``'s vectorized ``jacrev`` or ``jacfwd``."""
    def as_tuple(*xs):
        out = func(*xs)
        return out if isinstance(out, tuple) else (out,)
    table = transform(as_tuple, argnums=tuple(range(len(inputs))))(*[x.detach() for x in inputs])
    return _unpack_table(_finish(tuple(table), False), outputs_tuple, inputs_tuple)


def _jacfwd(func, inputs):
    """The Jacobian by forward mode, ``torch.func.jacfwd``: one pass vmapped over the input elements."""
    from ..func import jacfwd
    inputs_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
    outputs_tuple, _ = _tensors(func(*inputs), "outputs", "jacobian")
    return _vectorized(jacfwd, func, inputs, outputs_tuple, inputs_tuple)


def _stacked(stack, rows, out, xj, dim=0):
    shape = tuple(out.shape) + tuple(xj.shape)
    if not rows:            # an output with no elements
        return Tensor._make(np.zeros(shape, dtype=xj._data.dtype))
    return stack(rows, dim).reshape(shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient; entry ``[i][j]`` has shape
    ``inputs[i].shape + inputs[j].shape``."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*xs):
        out = func(*xs)
        out_tuple, outs = _tensors(out, "outputs of the user-provided function", "hessian")
        _require_grad(outs, "outputs", strict)
        _scalar_function_output(outs, out_tuple, "hessian")
        return out.squeeze()

    def gradient(*xs):
        jac = jacobian(scalar, xs, create_graph=True)
        _require_grad(jac, "jacobian", strict)
        return jac

    if vectorize and not (create_graph or strict):
        # torch.func.hessian, forward over reverse: every row in one vmapped pass (the checks of one plain call)
        from ..func import hessian as vectorized_hessian
        scalar(*inputs)
        table = vectorized_hessian(lambda *xs: func(*xs).reshape(()), tuple(range(len(inputs))))(
            *[x.detach() for x in inputs])
        return _unpack_table(_finish(tuple(table), False), inputs_tuple, inputs_tuple)
    table = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                     strategy=outer_jacobian_strategy)
    return _unpack_table(table, inputs_tuple, inputs_tuple)


def _gradient_of_scalar_function(func, inputs, v, create_graph, strict, name):
    """The first half of ``vhp`` and ``hvp`` (``name``), checked as PyTorch checks it: ``(inputs_tuple, x, vs,
    outputs_tuple, outputs, gradient)``, with ``x`` the differentiable copies of the inputs, ``vs`` the vectors
    and ``gradient`` the recorded gradient of the scalar output in ``x`` (run under enable_grad)."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", name)
    x = _differentiable_copies(inputs, create_graph)
    vs = _v_or_scalar_default(v, x, inputs_tuple, name, "the input to the user-provided function is", create_graph)
    outputs_tuple, outputs = _tensors(func(*x), "outputs of the user-provided function", name)
    _require_grad(outputs, "outputs", strict)
    _scalar_function_output(outputs, outputs_tuple, name)
    gradient = _grads_or_none(outputs, x, create_graph=True)
    _require_grad(gradient, "jacobian", strict)
    return inputs_tuple, x, vs, outputs_tuple, outputs, gradient


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ·H)``: the backward pass of the gradient's dot product with ``v``."""
    with enable_grad():
        inputs_tuple, x, vs, outputs_tuple, outputs, gradient = _gradient_of_scalar_function(
            func, inputs, v, create_graph, strict, "vhp")
    with _grad_mode_for_result(create_graph):
        result = _zeros_for_missing(_grads_or_none(gradient, x, vs, create_graph), x, strict, create_graph,
                                    "double_back")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(result, create_graph),
                                                                           inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H·v)``, by the double-backward trick on the gradient (see the module's docstring)."""
    with enable_grad():
        inputs_tuple, x, vs, outputs_tuple, outputs, gradient = _gradient_of_scalar_function(
            func, inputs, v, create_graph, strict, "hvp")
        dummies = tuple(Tensor._make(np.zeros_like(xi._data), True) for xi in x)
        transposed = _grads_or_none(gradient, x, dummies, create_graph=True)
        _require_grad(gradient, "hessian", strict)
    with _grad_mode_for_result(create_graph):
        result = _zeros_for_missing(_grads_or_none(transposed, dummies, vs, create_graph), x, strict, create_graph,
                                    "double_back_trick")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(result, create_graph),
                                                                           inputs_tuple)
