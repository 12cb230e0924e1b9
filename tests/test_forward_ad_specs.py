"""Forward-mode AD on every op of the op tables: each OpSpec row (its first shape case, float64) runs under
``forward_ad.dual_level`` with a random tangent on each input it differentiates, and the output's tangent is
compared

* with PyTorch's forward AD on the same inputs and tangents, where PyTorch supports the op, and
* with the central finite difference (f(x + h·t) - f(x - h·t)) / 2h, where the op is differentiable there
  (the row runs gradcheck).

Most ops state no forward rule of their own: their JVP is read off their backward rule (``forward_grad``'s
``_jvp_by_transposing_the_vjp``), so this file is also the check that each backward rule is the transpose of
its op's Jacobian.
"""
import warnings

import numpy as np
import pytest
from harness import all_op_specs, make_arrays

import gradiente

torch = pytest.importorskip("torch")

# Where PyTorch 2.13's forward AD disagrees with the finite difference, and gradiente's agrees: compared with
# the finite difference alone.
TORCH_DIFFERS = {
    "cholesky_inverse": "PyTorch's JVP reads the whole tangent; the op reads only one triangle of its input",
    "cholesky_inverse_upper": "likewise",
    "cholesky_inverse_factor": "likewise",
    "triangular_solve": "PyTorch's JVP reads the whole tangent of A; the op reads only one triangle of A",
    "triangular_solve_options": "likewise",
    "triangular_solve_unit_transpose": "likewise",
    "triangular_solve_both": "likewise",
    "logcumsumexp_wide_range": "PyTorch's JVP loses the small terms of a sum over a wide range",
    "scatter_reduce_prod": "PyTorch gives no tangent at all",
    "scatter_reduce_prod_excluding_self": "PyTorch gives no tangent at all",
    "scatter_reduce_0d": "PyTorch gives no tangent at all",
}

SPECS = [spec for _, spec in all_op_specs(skip=(__name__,))]


def _inputs_and_tangents(spec):
    arrays = make_arrays(spec, spec.shapes[0], 0, "float64")
    wanted = spec.grad_inputs if spec.grad_inputs is not None else range(len(arrays))
    rng = np.random.RandomState(5)
    tangents = [rng.uniform(-1, 1, np.shape(a)) if i in wanted and a.dtype.kind == "f" else None
                for i, a in enumerate(arrays)]
    return arrays, tangents


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _forward_mode(lib, spec, arrays, tangents):
    """The spec's (first) output and its tangent, as NumPy arrays (the tangent None if it has none)."""
    fw = lib.autograd.forward_ad
    with warnings.catch_warnings(), fw.dual_level():
        warnings.simplefilter("ignore")
        inputs = [lib.from_numpy(np.array(a)) if t is None else
                  fw.make_dual(lib.from_numpy(np.array(a)), lib.from_numpy(np.array(t)))
                  for a, t in zip(arrays, tangents)]
        primal, tangent = fw.unpack_dual(_first(spec.fn(lib, *inputs)))
        return primal.numpy().copy(), None if tangent is None else tangent.numpy().copy()


def _finite_difference(spec, arrays, tangents, h=1e-6):
    def at(step):
        inputs = [gradiente.from_numpy(np.array(a if t is None else a + step * t)) for a, t in zip(arrays, tangents)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _first(spec.fn(gradiente, *inputs)).numpy().astype(np.float64)
    return (at(h) - at(-h)) / (2 * h)


def _as_array(tangent, primal):
    return np.zeros_like(primal) if tangent is None else tangent


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in SPECS])
def test_forward_mode_matches_torch_and_finite_differences(spec):
    arrays, tangents = _inputs_and_tangents(spec)
    if all(t is None for t in tangents):
        pytest.skip("no floating-point input to give a tangent")
    try:
        _, theirs = _forward_mode(torch, spec, arrays, tangents)
        their_error = None
    except (NotImplementedError, RuntimeError) as error:
        theirs, their_error = False, error      # no forward rule in PyTorch, or an input it refuses here
    try:
        primal, ours = _forward_mode(gradiente, spec, arrays, tangents)
    except (NotImplementedError, RuntimeError) as error:
        # only where PyTorch raises too, the same error (a row that differentiates a gradient needs inputs that
        # require grad; an op without a forward rule in either library)
        assert their_error is not None and type(error) is type(their_error), (spec.name, str(error))
        assert str(error).split("\n")[0] == str(their_error).split("\n")[0], spec.name
        return
    checked = False
    if theirs is not False and spec.name not in TORCH_DIFFERS:
        np.testing.assert_allclose(_as_array(ours, primal), _as_array(theirs, primal), rtol=1e-7, atol=1e-9,
                                   equal_nan=True, err_msg=f"{spec.name}: tangent differs from PyTorch's")
        checked = True
    if spec.gradcheck and np.issubdtype(primal.dtype, np.floating):
        expected = _finite_difference(spec, arrays, tangents)
        np.testing.assert_allclose(_as_array(ours, primal), expected, rtol=1e-4, atol=1e-5, equal_nan=True,
                                   err_msg=f"{spec.name}: tangent differs from the finite difference")
        checked = True
    if not checked:
        pytest.skip("PyTorch has no forward rule to compare with, and the op is not differentiable everywhere")


def test_the_known_differences_are_still_differences():
    # Each entry of TORCH_DIFFERS names a row whose PyTorch tangent really differs from gradiente's.
    named = {spec.name: spec for spec in SPECS}
    for name in TORCH_DIFFERS:
        spec = named[name]
        arrays, tangents = _inputs_and_tangents(spec)
        primal, ours = _forward_mode(gradiente, spec, arrays, tangents)
        _, theirs = _forward_mode(torch, spec, arrays, tangents)
        assert theirs is None or not np.allclose(_as_array(ours, primal), theirs, rtol=1e-7, atol=1e-9), name
