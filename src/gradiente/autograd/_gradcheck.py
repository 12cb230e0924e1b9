"""``gradcheck`` and ``gradgradcheck``: compare analytical gradients with finite differences.

Like PyTorch's slow mode: the numerical Jacobian comes from central differences on each input element,
the analytical one from one vector-Jacobian product per output element. Use float64 inputs.
"""
import numpy as np

from ..core.grad_mode import enable_grad, no_grad
from ..core.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients disagree."""


def _tensors(inputs):
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    return tuple(inputs), [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _outputs(func, inputs):
    out = func(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Tensor)]


def _numerical_jacobians(func, inputs, diff_idx, eps):
    """J[out][inp] of shape (numel(inp), numel(out)), by central differences."""
    with no_grad():
        base = _outputs(func, inputs)
    jacobians = [[np.zeros((inputs[i]._data.size, o._data.size)) for i in diff_idx] for o in base]
    for k, i in enumerate(diff_idx):
        flat = inputs[i]._data.reshape(-1) if inputs[i]._data.flags.c_contiguous else None
        data = inputs[i]._data
        for j in range(data.size):
            idx = np.unravel_index(j, data.shape)
            orig = data[idx].copy()
            data[idx] = orig + eps
            with no_grad():
                plus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            data[idx] = orig - eps
            with no_grad():
                minus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            data[idx] = orig
            for o in range(len(base)):
                jacobians[o][k][j] = (plus[o] - minus[o]) / (2 * eps)
        del flat
    return jacobians


def _analytical_jacobians(func, inputs, diff_idx):
    from .. import autograd
    outs = _outputs(func, inputs)
    jacobians = [[np.zeros((inputs[i]._data.size, o._data.size)) for i in diff_idx] for o in outs]
    for o, out in enumerate(outs):
        if not out.requires_grad:
            continue
        for j in range(out._data.size):
            seed = np.zeros(out._data.size, dtype=out._data.dtype)
            seed[j] = 1
            grads = autograd.grad(out, [inputs[i] for i in diff_idx], Tensor._make(seed.reshape(out._data.shape)),
                                  retain_graph=True, allow_unused=True)
            for k, g in enumerate(grads):
                if g is not None:
                    jacobians[o][k][:, j] = g._data.reshape(-1)
    return jacobians


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True if the analytical gradients of ``func`` at ``inputs`` match finite differences."""
    inputs, diff_idx = _tensors(inputs)
    for i in diff_idx:
        if inputs[i]._data.dtype != np.float64:
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. This check "
                          "will likely fail if all the inputs are not of double precision floating point. ",
                          stacklevel=2)
    numerical = _numerical_jacobians(func, inputs, diff_idx, eps)
    analytical = _analytical_jacobians(func, inputs, diff_idx)
    for o, (num_row, ana_row) in enumerate(zip(numerical, analytical)):
        for k, (num, ana) in enumerate(zip(num_row, ana_row)):
            if not np.allclose(ana, num, rtol=rtol, atol=atol, equal_nan=True):
                message = (f"Jacobian mismatch for output {o} with respect to input {diff_idx[k]},\n"
                           f"numerical:{num}\nanalytical:{ana}\n")
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradients themselves: second derivatives against finite differences."""
    from .. import autograd
    inputs, diff_idx = _tensors(inputs)
    if grad_outputs is None:
        rng = np.random.RandomState(0)
        grad_outputs = tuple(Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype), True)
                             for o in _outputs(func, inputs) if o.requires_grad)
    grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    n = len(inputs)

    def first_derivatives(*args):
        ins, gouts = args[:n], args[n:]
        with enable_grad():     # the numerical pass calls this under no_grad; the gradient must still be built
            outs = [o for o in _outputs(func, ins) if o.requires_grad]
            diff = [ins[i] for i in diff_idx]
            return autograd.grad(outs, diff, gouts, create_graph=True, allow_unused=True)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
