"""``gradcheck`` and ``gradgradcheck``: compare analytical gradients with finite differences.

PyTorch's slow mode, with its checks and messages. The numerical Jacobian of each differentiable output comes
from central differences, one input element at a time, changing the input's memory in place (the function
runs on the caller's tensors, in grad mode, as in PyTorch); the analytical one from one vector-Jacobian product
per output element, computed twice: the two must agree within ``nondet_tol`` (a backward that gives different
values on the same gradient is "not reentrant"). Use float64 or complex128 inputs. Complex numbers are checked as
PyTorch checks them (``_run_checks``): the real and imaginary parts of complex outputs, and of complex inputs in
forward mode, one at a time, against the conjugate Wirtinger derivative.

``check_batched_grad`` and ``check_batched_forward_grad`` run PyTorch's batched checks through vmap
(``_gradcheck_batched.py``).

Where gradiente differs: ``fast_mode=True`` runs the slow mode (same verdicts, slower); ``check_undefined_grad``
hands None to the tensor hooks of each output (what PyTorch's engine does first with an undefined gradient) rather
than running the whole backward with undefined gradients, which gradiente's engine does not model.

This module is ``torch.autograd.gradcheck``; ``gradiente.autograd.gradcheck`` is also the function, as in
PyTorch (the package binds the name to the function after importing the module).
"""
import sys
import types
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.backward import grad as _grad
from ..core.tensor import Tensor
from . import _gradcheck_batched as _batched

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when the gradients disagree."""


_NONDETERMINISM_HINT = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_UNDEFINED_NOTE = 'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'


# --- inputs and outputs ---------------------------------------------------------------------------------------

def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _checked_inputs(inputs):
    """The inputs as a tuple, and the positions of those that require grad, with PyTorch's input checks."""
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    for i in diff_idx:
        x = inputs[i]
        if x._data.dtype not in (np.float64, np.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ", stacklevel=2)
        if x._data.size and any(stride == 0 and size > 1 for stride, size in zip(x._data.strides, x._data.shape)):
            raise RuntimeError(f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return inputs, diff_idx


def _tensor_outputs(out):
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _differentiable(outputs):
    return tuple(o for o in outputs if o.requires_grad)


def _text(matrix):
    """A Jacobian as PyTorch's messages print it (a tensor)."""
    return repr(Tensor._make(matrix)).replace("gradiente.", "torch.")


# --- the two Jacobians ----------------------------------------------------------------------------------------

def _numerical(func, inputs, diff_idx, eps, pick):
    """``J[o][k]``, shape (numel of input diff_idx[k], numel of output o), by central differences; ``pick``
    chooses, from ``func``'s tensor outputs, those to differentiate. A complex input is moved along its real and
    its imaginary axis, and its column is the conjugate Wirtinger derivative ds/dx + i·ds/dy of each (real)
    output, PyTorch's convention; a real input of a complex output (forward mode) has the complex ds/dx."""
    base = pick(_tensor_outputs(func(*inputs)))
    jacobians = [[np.zeros((inputs[i]._data.size, o._data.size), dtype=_jacobian_dtype(inputs[i], o))
                  for i in diff_idx] for o in base]
    for k, i in enumerate(diff_idx):
        data = inputs[i]._data
        steps = (eps, eps * 1j) if data.dtype.kind == "c" else (eps,)
        for j in range(data.size):
            idx = np.unravel_index(j, data.shape)
            original = data[idx].copy()
            for step in steps:
                data[idx] = original - step
                below = _values(func, inputs, pick, base, eps, idx)
                data[idx] = original + step
                above = _values(func, inputs, pick, base, eps, idx)
                data[idx] = original
                for o in range(len(base)):
                    column = (above[o] - below[o]) / (2 * eps)
                    jacobians[o][k][j] += column if step.__class__ is not complex else column * 1j
    return jacobians


def _real_dtype(x):
    return np.float64 if dt.kind(x._data.dtype) != "f" else x._data.dtype


def _jacobian_dtype(x, out):
    """A Jacobian's dtype: the input's when it is complex, complex128 for a complex output, else real."""
    if x._data.dtype.kind == "c":
        return x._data.dtype
    return np.complex128 if out._data.dtype.kind == "c" else _real_dtype(x)


def _values(func, inputs, pick, base, eps, idx):
    """The picked outputs of ``func`` at the perturbed inputs, flat, checked against the unperturbed ``base``."""
    picked = pick(_tensor_outputs(func(*inputs)))
    values = []
    for o, b in zip(picked, base):
        where = f"on index {tuple(int(i) for i in idx)} "
        if o.shape != b.shape:
            raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed "
                                 f"{where}by {eps}, but got: shapes {b.shape} and {o.shape}.")
        if o.dtype != b.dtype:
            raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
                                 f"{where}by {eps}, but got: dtypes {b.dtype} and {o.dtype}.")
        values.append(np.array(o._data, dtype=np.float64 if o._data.dtype.kind != "c" else o._data.dtype,
                               copy=True).reshape(-1))
    return values


def _analytical(output, inputs, diff_idx):
    """``J[k]``, shape (numel of input diff_idx[k], numel of output), one vector-Jacobian product per output
    element; and whether the gradients had the inputs' dtypes and sizes."""
    targets = [inputs[i] for i in diff_idx]
    jacobians = [np.zeros((t._data.size, output._data.size), dtype=_jacobian_dtype(t, output)) for t in targets]
    dtypes_ok = sizes_ok = True
    for j in range(output._data.size):
        seed = np.zeros(output._data.size, dtype=output._data.dtype)
        seed[j] = 1
        grads = _grad(output, targets, Tensor._make(seed.reshape(output._data.shape)), retain_graph=True,
                      allow_unused=True)
        for k, (g, t) in enumerate(zip(grads, targets)):
            if g is None:
                continue
            dtypes_ok &= g._data.dtype == t._data.dtype
            if g._data.size != t._data.size:
                sizes_ok = False
                continue
            jacobians[k][:, j] = g._data.reshape(-1)
    return jacobians, dtypes_ok, sizes_ok


def _checked_analytical(output, inputs, diff_idx, nondet_tol, check_grad_dtypes):
    first, dtypes_ok, sizes_ok = _analytical(output, inputs, diff_idx)
    second, _, _ = _analytical(output, inputs, diff_idx)
    if not dtypes_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if any((np.abs(a - b) > nondet_tol).any() for a, b in zip(first, second)):
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches numerical "
                             f"gradient.The tolerance for nondeterminism was {nondet_tol}." + _NONDETERMINISM_HINT)
    return first


def _forward_mode(func, inputs, diff_idx, outputs_count):
    """``J[o][k]`` by forward mode: one pass per input element, every differentiable input a dual tensor (as in
    PyTorch), with tangent 1 at that element and 0 everywhere else."""
    from . import forward_ad
    jacobians: list = [[None] * len(diff_idx) for _ in range(outputs_count)]
    for k, i in enumerate(diff_idx):
        x = inputs[i]
        for j in range(x._data.size):
            with forward_ad.dual_level():
                args = []
                for n, a in enumerate(inputs):
                    if n in diff_idx:
                        tangent = np.zeros(a._data.size, dtype=a._data.dtype)
                        if n == i:
                            tangent[j] = 1
                        a = forward_ad.make_dual(a.detach(), Tensor._make(tangent.reshape(a._data.shape)))
                    elif isinstance(a, Tensor):
                        a = a.detach()      # requires_grad only told gradcheck which inputs to vary
                    args.append(a)
                outputs = _tensor_outputs(func(*args))
                for o, out in enumerate(outputs[:outputs_count]):
                    primal, out_tangent = forward_ad.unpack_dual(out)
                    if jacobians[o][k] is None:
                        jacobians[o][k] = np.zeros((x._data.size, primal._data.size), dtype=_jacobian_dtype(x, primal))
                    if out_tangent is not None:
                        jacobians[o][k][j] = out_tangent._data.reshape(-1)
    return jacobians


# --- the checks -----------------------------------------------------------------------------------------------

def _mismatch(analytical, numerical, o, k, forward, complex_indices=(), test_imag=False):
    """PyTorch's message; a complex output (backward) or input (forward) names the part being checked."""
    part = "imaginary" if test_imag else "real"
    element = "inputs" if forward else "outputs"
    prefix = f"While considering the {part} part of complex {element} only, " if (k if forward else o) in \
        complex_indices else ""
    mode = "computed with forward mode " if forward else ""
    return (f"{prefix}Jacobian {mode}mismatch for output {o:d} with respect to input {k:d},\n"
            f"numerical:{_text(numerical)}\nanalytical:{_text(analytical)}\n")


def _close(analytical, numerical, rtol, atol):
    return np.allclose(analytical, numerical, rtol=rtol, atol=atol, equal_nan=True)


def _check_no_differentiable_outputs(func, inputs, diff_idx, eps):
    for row in _numerical(func, inputs, diff_idx, eps, lambda outputs: outputs):
        for jacobian in row:
            if (jacobian != 0).any():
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _check_undefined_grad(func, inputs):
    """Each output's tensor hooks must accept an undefined (None) gradient, as PyTorch's engine gives them one."""
    for out in _differentiable(_tensor_outputs(func(*inputs))):
        node = out.grad_fn
        hooks = node._tensor_pre_hooks.get(out._output_nr, {}) if node is not None and node._tensor_pre_hooks \
            else (out._hooks or {})
        for hook in list(hooks.values()):
            try:
                hook(None)
            except RuntimeError as error:
                # on gradcheck's own line, as PyTorch's (``stacklevel=2`` from its helper ``warn_bc_breaking``)
                warnings.warn('Backwards compatibility: New undefined gradient support checking feature is enabled by '
                              'default, but it may break existing callers of this function. If this is true for you, '
                              'you can call this function with "check_undefined_grad=False" to disable the feature',
                              stacklevel=1)
                raise GradcheckError("Expected backward function to handle undefined output grads. "
                                     + _UNDEFINED_NOTE) from error
    return True


def _random_like(rng, array):
    """Uniform values in [-1, 1) of ``array``'s shape and dtype from a private generator: PyTorch's checks that
    leave the global generator alone."""
    values = rng.uniform(-1, 1, array.shape)
    if array.dtype.kind == "c":
        values = values + 1j * rng.uniform(-1, 1, array.shape)
    return np.asarray(values).astype(array.dtype)


def _check_undefined_tangent(func, inputs):
    """Forward mode with one input's tangent zero must give what it gives with that input not dual at all (the
    tangent undefined), each other differentiable input carrying a random tangent: PyTorch's check."""
    from . import forward_ad
    rng = np.random.RandomState(0)
    with forward_ad.dual_level():
        duals = list(inputs)
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor) and x.requires_grad:
                duals[i] = forward_ad.make_dual(x.detach(), Tensor._make(_random_like(rng, x._data)))
        for i, x in enumerate(inputs):
            if not (isinstance(x, Tensor) and x.requires_grad):
                continue
            kept = duals[i]
            duals[i] = forward_ad.make_dual(x.detach(), Tensor._make(np.zeros_like(x._data)))
            zero_tangent = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = x.detach()
            no_tangent = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = kept
            for index_o, (first, second) in enumerate(zip(zero_tangent, no_tangent)):
                res1, res2 = forward_ad.unpack_dual(first)[1], forward_ad.unpack_dual(second)[1]
                if res1 is not None and res2 is not None and not np.allclose(res1._data, res2._data):
                    raise GradcheckError(f"Mismatch in tangent values for output with index: {index_o} when input: "
                                         f"{x} has an undefined tangent value.  Got: {res1} but expected: {res2}")
    return True


def _is_float_or_complex(x):
    return isinstance(x, Tensor) and dt.kind(x._data.dtype) in "fc"


def _run_checks(func, inputs, diff_idx, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                check_forward_ad, check_backward_ad):
    """PyTorch's slow mode. Complex numbers are checked as PyTorch checks them, in real terms: in backward mode
    the real and then the imaginary part of each complex output is a function of its own (so the gradient is
    that of a real function, a conjugate Wirtinger derivative for a complex input); in forward mode each complex
    input is replaced by its real part, then its imaginary part, the other held fixed."""
    everything = _tensor_outputs(func(*inputs))
    outputs = _differentiable(everything)
    if check_backward_ad:
        if not outputs:
            return _check_no_differentiable_outputs(func, inputs, diff_idx, eps)
        complex_outputs = [o for o, out in enumerate(outputs) if out._data.dtype.kind == "c"]
        if any(out._data.dtype.kind == "c" for out in everything):
            real_fn, imag_fn = _real_and_imag_outputs(func)
            _backward_check(imag_fn, inputs, diff_idx, eps, atol, rtol, nondet_tol, check_grad_dtypes,
                            complex_outputs, test_imag=True)
            _backward_check(real_fn, inputs, diff_idx, eps, atol, rtol, nondet_tol, check_grad_dtypes,
                            complex_outputs)
        else:
            _backward_check(func, inputs, diff_idx, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    if check_forward_ad:
        complex_inputs = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._data.dtype.kind == "c"]
        if complex_inputs:
            real_fn, imag_fn = _real_and_imag_inputs(func, complex_inputs, inputs)
            imag_inputs = tuple(x.imag if i in complex_inputs else x for i, x in enumerate(inputs))
            _forward_check(imag_fn, imag_inputs, diff_idx, eps, atol, rtol, complex_inputs, test_imag=True)
            real_inputs = tuple(x.real if i in complex_inputs else x for i, x in enumerate(inputs))
            _forward_check(real_fn, real_inputs, diff_idx, eps, atol, rtol, complex_inputs)
            if check_undefined_grad:
                _check_undefined_tangent(imag_fn, imag_inputs)
                _check_undefined_tangent(real_fn, real_inputs)
        else:
            _forward_check(func, inputs, diff_idx, eps, atol, rtol)
            if check_undefined_grad:
                _check_undefined_tangent(func, inputs)
    if check_backward_ad and check_undefined_grad:
        _check_undefined_grad(func, inputs)
    return True


def _backward_check(func, inputs, diff_idx, eps, atol, rtol, nondet_tol, check_grad_dtypes, complex_indices=(),
                    test_imag=False):
    outputs = _differentiable(_tensor_outputs(func(*inputs)))
    numerical = _numerical(func, inputs, diff_idx, eps, _differentiable)
    for o, out in enumerate(outputs):
        analytical = _checked_analytical(out, inputs, diff_idx, nondet_tol, check_grad_dtypes)
        for k, (a, n) in enumerate(zip(analytical, numerical[o])):
            if not _close(a, n, rtol, atol):
                raise GradcheckError(_mismatch(a, n, o, k, False, complex_indices, test_imag))


def _forward_check(func, inputs, diff_idx, eps, atol, rtol, complex_indices=(), test_imag=False):
    everything = _tensor_outputs(func(*inputs))
    numerical = _numerical(func, inputs, diff_idx, eps, lambda outs: outs)
    forward = _forward_mode(func, inputs, diff_idx, len(everything))
    for o in range(len(everything)):
        for k, (a, n) in enumerate(zip(forward[o], numerical[o])):
            if a is not None and not _close(a, n, rtol, atol):
                raise GradcheckError(_mismatch(a, n, o, k, True, complex_indices, test_imag))


def _real_and_imag_outputs(func):
    """``func`` with each complex output replaced by its real part, and by its imaginary part."""
    def applying(part):
        def wrapped(*inputs):
            return tuple(part(o) if isinstance(o, Tensor) and o._data.dtype.kind == "c" else o
                         for o in _as_tuple(func(*inputs)))
        return wrapped
    return applying(lambda o: o.real), applying(lambda o: o.imag)


def _real_and_imag_inputs(func, complex_inputs, inputs):
    """``func`` of the real part of each complex input (its imaginary part held at its value), and of the
    imaginary part (the real part held)."""
    def applying(join):
        def wrapped(*args):
            joined = list(args)
            for i in complex_inputs:
                joined[i] = join(joined[i], inputs[i])
            return _as_tuple(func(*joined))
        return wrapped
    return (applying(lambda part, original: part + original.imag * 1j),
            applying(lambda part, original: original.real + part * 1j))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True if the analytical gradients of ``func`` at ``inputs`` match finite differences (see the module's
    docstring). A mismatch raises GradcheckError, or returns False with ``raise_exception=False``; any other
    error ``func`` raises is not caught."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    inputs, diff_idx = _checked_inputs(inputs)
    try:
        _run_checks(func, inputs, diff_idx, eps, atol, rtol, nondet_tol, check_undefined_grad,
                    check_grad_dtypes, check_forward_ad, check_backward_ad)
        if check_batched_forward_grad:
            _batched.check_batched_forward(func, inputs, _as_tuple, GradcheckError)
        if check_backward_ad and check_batched_grad:
            for o, out in enumerate(_differentiable(_tensor_outputs(func(*inputs)))):
                _batched.check_batched_backward(inputs, out, o, GradcheckError)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradients themselves: the second derivatives of ``func`` against finite differences of
    its first derivatives (``grad_outputs``, random if not given, are differentiated too)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        # drawn as PyTorch draws them, from the global generator: the same values for the same seed, and the
        # numbers a program draws afterwards are the same too
        from ..testing import make_tensor
        grad_outputs = tuple(
            make_tensor(o.shape, dtype=o.dtype if o.is_floating_point() or o.is_complex() else dt.float64,
                        device=o.device, low=-1, high=1, requires_grad=True, noncontiguous=gen_non_contig_grad_outputs)
            for o in _differentiable(_tensor_outputs(func(*inputs))))
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivatives(*args):
        ins, gouts = args[:n], args[n:]
        outs = _differentiable(_tensor_outputs(func(*ins)))
        wrt = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        grads = _grad(outs, wrt, gouts, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, fast_mode=fast_mode)


class _CallableModule(types.ModuleType):
    """This module, callable as ``gradcheck``. The package binds ``autograd.gradcheck`` to the function, but an
    import of this module under a second name (an importer that serves ``torch.autograd.gradcheck`` from this
    file) makes the import system rebind the package's attribute to the module: being callable, it still works
    as ``autograd.gradcheck(func, inputs)``."""

    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
