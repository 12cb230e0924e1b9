"""``linalg.eig``, ``eigvals`` and ``lstsq`` (``ops/linalg_eig_lstsq.py``) against ``torch.linalg``: table-driven
float64 gradchecks and comparisons (values, gradients, grad_fn names) in float32 and float64, batched; eigenpairs
through functions that do not depend on each eigenvector's phase; complex results and their dtypes; the gauge
error; which results each lstsq driver leaves empty; and PyTorch's error messages."""
import inspect

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")


def _l(lib):
    return lib.linalg


def _real_spectrum(rng, shapes):
    """Matrices with real, well separated eigenvalues (1..n, similar to a diagonal), whatever the random part."""
    out = []
    for s in shapes:
        n = s[-1]
        basis = rng.uniform(-1, 1, size=s) + 2 * np.eye(n)
        out.append(basis @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(basis))
    return out


def _tall(rng, shapes):
    """Well-conditioned A (m ≥ n) and any B."""
    a = rng.uniform(-1, 1, size=shapes[0]) + np.eye(*shapes[0][-2:])
    return [a] + [rng.uniform(-1, 1, size=s) for s in shapes[1:]]


SPECS = [
    OpSpec("eigvals_abs", lambda lib, x: _l(lib).eigvals(x).abs(), [((3, 3),), ((2, 4, 4),)]),
    OpSpec("eig_values_real", lambda lib, x: _l(lib).eig(x).eigenvalues.real, [((3, 3),)],
           make_inputs=_real_spectrum),
    OpSpec("eig_vectors_abs", lambda lib, x: _l(lib).eig(x)[1].abs(), [((3, 3),), ((2, 3, 3),)],
           make_inputs=_real_spectrum),
    OpSpec("lstsq", lambda lib, a, b: _l(lib).lstsq(a, b).solution, [((4, 3), (4, 2)), ((2, 5, 3), (2, 5, 1))],
           make_inputs=_tall),
    OpSpec("lstsq_vector", lambda lib, a, b: _l(lib).lstsq(a, b).solution, [((4, 3), (4,))], make_inputs=_tall),
    OpSpec("lstsq_square_gelsd", lambda lib, a, b: _l(lib).lstsq(a, b, driver="gelsd")[0], [((3, 3), (3, 2))],
           make_inputs=_tall),
    OpSpec("lstsq_wide", lambda lib, a, b: _l(lib).lstsq(a, b, driver="gelss").solution, [((2, 4), (2, 3))]),
    OpSpec("lstsq_b_only", lambda lib, a, b: _l(lib).lstsq(a, b).solution, [((4, 3), (4, 2))], make_inputs=_tall,
           grad_inputs=(1,)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


RNG = np.random.default_rng(16)


def _pair(array, requires_grad=False):
    return gradiente.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def _close(ours, theirs, rtol=1e-9, atol=1e-12):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig_matches_torch_with_complex_results(dtype):
    a = RNG.standard_normal((2, 4, 4))
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal((2, 4, 4))
    a = a.astype(dtype)
    ours, theirs = _pair(a)
    rtol = 1e-4 if dtype in ("float32", "complex64") else 1e-9
    values, vectors = gradiente.linalg.eig(ours)
    t_values, t_vectors = torch.linalg.eig(theirs)
    _close(values, t_values, rtol, rtol)
    # Both are LAPACK's geev (unit columns), but two LAPACKs may pick different phases (signs) for a column.
    v, t_v = vectors.numpy(), t_vectors.numpy()
    phase = (v.conj() * t_v).sum(-2, keepdims=True)
    np.testing.assert_allclose(np.abs(phase), 1, rtol=rtol)
    np.testing.assert_allclose(v * phase, t_v, rtol=rtol, atol=rtol)
    assert vectors.dtype == gradiente.complex64 if dtype in ("float32", "complex64") else gradiente.complex128
    _close(gradiente.linalg.eigvals(ours), torch.linalg.eigvals(theirs), rtol, rtol)
    assert repr(gradiente.linalg.eig(ours)).startswith("gradiente.return_types.linalg_eig(\neigenvalues=")


def test_eig_gradients_match_torch_for_gauge_invariant_losses():
    a = RNG.standard_normal((2, 4, 4))
    ours, theirs = _pair(a, requires_grad=True)
    values, vectors = gradiente.linalg.eig(ours)
    t_values, t_vectors = torch.linalg.eig(theirs)
    assert type(values.grad_fn).__name__ == type(t_values.grad_fn).__name__ == "LinalgEigBackward0"
    assert values.grad_fn is vectors.grad_fn
    (values.abs().sum() + (vectors.abs() ** 3).sum()).backward()
    (t_values.abs().sum() + (t_vectors.abs() ** 3).sum()).backward()
    _close(ours.grad, theirs.grad, 1e-8, 1e-10)
    assert gradcheck(lambda x: (gradiente.linalg.eig(x)[1].abs() ** 2).sum(-1), (ours,))


def test_eig_of_a_complex_matrix_gradcheck_and_torch():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    ours, theirs = _pair(a, requires_grad=True)
    assert gradcheck(gradiente.linalg.eigvals, (ours,))
    assert gradcheck(lambda x: gradiente.linalg.eig(x).eigenvectors.abs(), (ours,))
    (gradiente.linalg.eig(ours)[1].abs().sum() + gradiente.linalg.eigvals(ours).real.sum()).backward()
    (torch.linalg.eig(theirs)[1].abs().sum() + torch.linalg.eigvals(theirs).real.sum()).backward()
    _close(ours.grad, theirs.grad, 1e-8, 1e-10)


def test_eig_refuses_a_loss_that_depends_on_the_phase():
    a = _real_spectrum(np.random.RandomState(0), [(3, 3)])[0]
    for lib in (gradiente, torch):
        x = lib.tensor(a, requires_grad=True)
        loss = lib.linalg.eig(x).eigenvectors[0, 0].imag
        with pytest.raises(RuntimeError) as error:
            loss.backward()
        assert str(error.value) == ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                    "multiplication by e^{i phi}. The specified loss function depends on this "
                                    "quantity, so it is ill-defined.")


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((2, 5, 3), (2, 5, 2)), ((3, 3), (3, 1)), ((2, 4), (2, 3)),
                                    ((4, 2), (4,)), ((2, 4, 2), (1, 4, 3))])
def test_lstsq_results_per_driver_match_torch(driver, dtype, shapes):
    a, b = (RNG.standard_normal(s).astype(dtype) for s in shapes)
    ours = gradiente.linalg.lstsq(gradiente.tensor(a), gradiente.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    tolerance = 2e-4 if dtype == "float32" else 1e-9
    for field in ("solution", "residuals", "rank", "singular_values"):
        _close(getattr(ours, field), getattr(theirs, field), tolerance, tolerance)
    assert repr(ours).startswith("gradiente.return_types.linalg_lstsq(\nsolution=")


def test_lstsq_of_a_rank_deficient_matrix():
    a = RNG.standard_normal((5, 3))
    a[:, 2] = a[:, 0] + a[:, 1]
    b = RNG.standard_normal((5, 2))
    for driver in ("gelsy", "gelsd", "gelss"):
        ours = gradiente.linalg.lstsq(gradiente.tensor(a), gradiente.tensor(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        _close(ours.solution, theirs.solution, 1e-8, 1e-10)     # the minimum-norm solution
        assert int(ours.rank) == int(theirs.rank) == 2
        _close(ours.residuals, theirs.residuals)                # empty: the rank is not full


def test_lstsq_gradients_match_torch_and_its_grad_fn():
    a, b = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 5, 2))
    (oa, ta), (ob, tb) = _pair(a, True), _pair(b, True)
    ours, theirs = gradiente.linalg.lstsq(oa, ob, driver="gelsd"), torch.linalg.lstsq(ta, tb, driver="gelsd")
    assert type(ours.solution.grad_fn).__name__ == type(theirs.solution.grad_fn).__name__
    (ours.solution ** 2).sum().backward()
    (theirs.solution ** 2).sum().backward()
    _close(oa.grad, ta.grad)
    _close(ob.grad, tb.grad)


def _z(lib, *shape, **kw):
    return lib.zeros(*shape, **kw)


ERRORS = [
    ("eig_1d", lambda lib: lib.linalg.eig(_z(lib, 3))),
    ("eigvals_1d", lambda lib: lib.linalg.eigvals(_z(lib, 3))),
    ("eig_not_square", lambda lib: lib.linalg.eig(_z(lib, 3, 4))),
    ("eigvals_not_square", lambda lib: lib.linalg.eigvals(_z(lib, 2, 3, 4))),
    ("eig_int", lambda lib: lib.linalg.eig(_z(lib, 3, 3, dtype=lib.int32))),
    ("eig_half", lambda lib: lib.linalg.eig(_z(lib, 3, 3, dtype=lib.float16))),
    ("lstsq_1d", lambda lib: lib.linalg.lstsq(_z(lib, 3), _z(lib, 3))),
    ("lstsq_dtypes", lambda lib: lib.linalg.lstsq(_z(lib, 3, 3), _z(lib, 3, 3, dtype=lib.float64))),
    ("lstsq_int", lambda lib: lib.linalg.lstsq(_z(lib, 3, 3, dtype=lib.int32), _z(lib, 3, 3, dtype=lib.int32))),
    ("lstsq_rows", lambda lib: lib.linalg.lstsq(_z(lib, 3, 3), _z(lib, 4, 3))),
    ("lstsq_vector_rows", lambda lib: lib.linalg.lstsq(_z(lib, 3, 3), _z(lib, 4))),
    ("lstsq_driver", lambda lib: lib.linalg.lstsq(_z(lib, 3, 3), _z(lib, 3, 3), driver="foo")),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    check_same_error(fn)


_NEW_NAMES = [("linalg", n) for n in ("eig", "eigvals", "lstsq", "householder_product", "ldl_factor", "ldl_factor_ex",
                                      "ldl_solve")] + \
    [("", n) for n in ("geqrf", "orgqr", "ormqr", "nuclear_norm", "frobenius_norm", "native_norm", "addmv_", "lobpcg")]


@pytest.mark.parametrize("module,name", _NEW_NAMES, ids=[n for _, n in _NEW_NAMES])
def test_argument_names_are_torchs(module, name):
    """Keyword callers use PyTorch's binding's names (``input``, ``b``), which its documentation does not always
    show (``A``, ``B``)."""
    from test_ops_linalg import _torch_names
    ours = getattr(gradiente.linalg, name) if module else getattr(gradiente, name)
    theirs = _torch_names(torch.linalg if module else torch, name, f"linalg_{name}" if module else name)
    assert [p for p in inspect.signature(ours).parameters if p != "out"] == theirs


@pytest.mark.parametrize("left", [True, False])
def test_complex_solve_gradients_match_torch(left):
    """eig's rule solves with complex matrices, so solve's own rule (second derivatives) must hold for them."""
    a = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3, 2)) + 1j * RNG.standard_normal((2, 3, 2))
    b = b if left else np.swapaxes(b, -1, -2).copy()
    (oa, ta), (ob, tb) = _pair(a, True), _pair(b, True)
    assert gradcheck(lambda x, y: gradiente.linalg.solve(x, y, left=left), (oa, ob))
    assert gradiente.autograd.gradgradcheck(lambda x, y: gradiente.linalg.solve(x, y, left=left), (oa, ob))
    (gradiente.linalg.solve(oa, ob, left=left).abs() ** 2).sum().backward()
    (torch.linalg.solve(ta, tb, left=left).abs() ** 2).sum().backward()
    _close(oa.grad, ta.grad.resolve_conj(), 1e-9, 1e-12)
    _close(ob.grad, tb.grad.resolve_conj(), 1e-9, 1e-12)


def test_complex_lstsq_and_pinv_gradients_match_torch():
    a = RNG.standard_normal((2, 5, 3)) + 1j * RNG.standard_normal((2, 5, 3))
    b = RNG.standard_normal((2, 5, 2)) + 1j * RNG.standard_normal((2, 5, 2))
    (oa, ta), (ob, tb) = _pair(a, True), _pair(b, True)
    assert gradcheck(lambda x, y: gradiente.linalg.lstsq(x, y).solution, (oa, ob))
    assert gradcheck(gradiente.linalg.pinv, (oa,))
    (gradiente.linalg.lstsq(oa, ob).solution.abs() ** 2).sum().backward()
    (torch.linalg.lstsq(ta, tb).solution.abs() ** 2).sum().backward()
    _close(oa.grad, ta.grad, 1e-9, 1e-12)
    _close(ob.grad, tb.grad, 1e-9, 1e-12)
    oa.grad = ta.grad = None
    (gradiente.linalg.pinv(oa).abs() ** 2).sum().backward()
    (torch.linalg.pinv(ta).abs() ** 2).sum().backward()
    _close(oa.grad, ta.grad, 1e-9, 1e-12)
