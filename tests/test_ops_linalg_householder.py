"""``geqrf``, ``linalg.householder_product`` (``orgqr``) and ``ormqr`` (``ops/linalg_householder.py``) against
PyTorch: LAPACK's values of geqrf, table-driven float64 gradchecks and comparisons (values, gradients, grad_fn
names) in float32 and float64, batched, on reflectors from geqrf and on arbitrary ones; the Tensor methods;
geqrf's missing derivative; PyTorch's error messages."""
import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def _reflectors(rng, shapes):
    """geqrf's (a, tau) of a random matrix, then any further operands."""
    h, tau = np.linalg.qr(rng.uniform(-1, 1, size=shapes[0]), mode="raw")
    return [np.ascontiguousarray(np.swapaxes(h, -1, -2)), tau[..., :shapes[1][-1]]] + \
        [rng.uniform(-1, 1, size=s) for s in shapes[2:]]


SPECS = [
    OpSpec("householder_product", lambda lib, a, tau: lib.linalg.householder_product(a, tau),
           [((4, 3), (3,)), ((2, 3, 3), (2, 3)), ((5, 3), (2,))], make_inputs=_reflectors),
    OpSpec("householder_product_any", lambda lib, a, tau: lib.linalg.householder_product(a, tau),
           [((4, 2), (2,)), ((2, 3, 2), (2, 1))]),
    OpSpec("orgqr", lambda lib, a, tau: lib.orgqr(a, tau), [((4, 3), (3,))], make_inputs=_reflectors),
    OpSpec("orgqr_method", lambda lib, a, tau: a.orgqr(tau), [((3, 3), (3,))], make_inputs=_reflectors),
    OpSpec("ormqr_left", lambda lib, a, tau, c: lib.ormqr(a, tau, c), [((4, 3), (3,), (4, 2)),
                                                                          ((2, 3, 3), (2, 3), (2, 3, 2))],
           make_inputs=_reflectors),
    OpSpec("ormqr_left_transpose", lambda lib, a, tau, c: lib.ormqr(a, tau, c, transpose=True),
           [((4, 3), (3,), (4, 2))], make_inputs=_reflectors),
    OpSpec("ormqr_right", lambda lib, a, tau, c: lib.ormqr(a, tau, c, left=False), [((4, 3), (3,), (2, 4))],
           make_inputs=_reflectors),
    OpSpec("ormqr_right_transpose", lambda lib, a, tau, c: a.ormqr(tau, c, False, True), [((4, 3), (3,), (2, 4))],
           make_inputs=_reflectors),
    OpSpec("ormqr_other_only", lambda lib, a, tau, c: lib.ormqr(a, tau, c), [((4, 3), (3,), (4, 2))],
           make_inputs=_reflectors, grad_inputs=(2,)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


RNG = np.random.default_rng(16)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (2, 1, 4, 2), (0, 3), (3, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_geqrf_matches_lapack_through_torch(shape, dtype):
    a = RNG.standard_normal(shape)
    if dtype == "complex128":
        a = a + 1j * RNG.standard_normal(shape)
    a = a.astype(dtype)
    ours, theirs = gradiente.geqrf(gradiente.tensor(a)), torch.geqrf(torch.tensor(a))
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype)[10:] == str(t.dtype)[6:]
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=tolerance, atol=tolerance)
    method = gradiente.tensor(a).geqrf()
    np.testing.assert_array_equal(method.a.numpy(), ours.a.numpy())
    assert repr(ours).startswith("gradiente.return_types.geqrf(\na=")


def test_householder_product_of_geqrf_is_qrs_q_for_complex_too():
    a = RNG.standard_normal((2, 4, 3)) + 1j * RNG.standard_normal((2, 4, 3))
    h, tau = gradiente.geqrf(gradiente.tensor(a))
    q = gradiente.linalg.householder_product(h, tau).numpy()
    expected = torch.linalg.householder_product(*torch.geqrf(torch.tensor(a))).numpy()
    np.testing.assert_allclose(q, expected, atol=1e-12)
    c = RNG.standard_normal((2, 4, 2)) + 1j * RNG.standard_normal((2, 4, 2))
    for left, transpose in ((True, False), (True, True)):
        ours = gradiente.ormqr(h, tau, gradiente.tensor(c), left, transpose).numpy()
        theirs = torch.ormqr(*torch.geqrf(torch.tensor(a)), torch.tensor(c), left, transpose).numpy()
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_geqrf_has_no_derivative_as_in_torch():
    for lib in (gradiente, torch):
        x = lib.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
        a = lib.geqrf(x).a
        assert type(a.grad_fn).__name__ == "GeqrfBackward0"
        with pytest.raises(NotImplementedError, match=r"the derivative for 'geqrf' is not implemented\."):
            a.sum().backward()


def _z(lib, *shape, **kw):
    return lib.zeros(*shape, **kw, dtype=kw.pop("dtype", lib.float64))


ERRORS = [
    ("geqrf_1d", lambda lib: lib.geqrf(_z(lib, 3))),
    ("geqrf_int", lambda lib: lib.geqrf(lib.zeros(3, 3, dtype=lib.int32))),
    ("householder_1d", lambda lib: lib.linalg.householder_product(_z(lib, 3), _z(lib, 3))),
    ("householder_wide", lambda lib: lib.linalg.householder_product(_z(lib, 3, 4), _z(lib, 3))),
    ("householder_tau_long", lambda lib: lib.linalg.householder_product(_z(lib, 4, 3), _z(lib, 4))),
    ("householder_tau_dtype", lambda lib: lib.linalg.householder_product(_z(lib, 4, 3), lib.zeros(3))),
    ("householder_int", lambda lib: lib.linalg.householder_product(lib.zeros(4, 3, dtype=lib.int32),
                                                                   lib.zeros(3, dtype=lib.int32))),
    ("householder_tau_batch", lambda lib: lib.linalg.householder_product(_z(lib, 2, 4, 3), _z(lib, 3, 3))),
    ("householder_tau_ndim", lambda lib: lib.linalg.householder_product(_z(lib, 4, 3), _z(lib, 2, 3))),
    ("ormqr_rows", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 3), _z(lib, 5, 2))),
    ("ormqr_dtype", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 3), lib.zeros(4, 2))),
    ("ormqr_1d_other", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 3), _z(lib, 4))),
    ("ormqr_tau_long", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 5), _z(lib, 4, 2))),
    ("ormqr_tau_short", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 2), _z(lib, 4, 2))),
    ("ormqr_tau_short_right", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 2), _z(lib, 2, 4), left=False)),
    ("ormqr_right_columns", lambda lib: lib.ormqr(_z(lib, 4, 3), _z(lib, 3), _z(lib, 2, 5), left=False)),
    ("ormqr_tau_batch", lambda lib: lib.ormqr(_z(lib, 2, 4, 3), _z(lib, 3, 3), _z(lib, 2, 4, 2))),
    ("ormqr_other_batch", lambda lib: lib.ormqr(_z(lib, 2, 4, 3), _z(lib, 2, 3), _z(lib, 3, 4, 2))),
    ("ormqr_int", lambda lib: lib.ormqr(lib.zeros(4, 3, dtype=lib.int32), lib.zeros(3, dtype=lib.int32),
                                        lib.zeros(4, 2, dtype=lib.int32))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    check_same_error(fn)


_COMPLEX_CASES = [
    lambda lib, h, tau, c: lib.linalg.householder_product(h, tau),
    lambda lib, h, tau, c: lib.ormqr(h, tau, c),
    lambda lib, h, tau, c: lib.ormqr(h, tau, c, True, True),
    lambda lib, h, tau, c: lib.ormqr(h, tau, c.mT, False),
    lambda lib, h, tau, c: lib.ormqr(h, tau, c.mT, False, True),
]


@pytest.mark.parametrize("case", range(len(_COMPLEX_CASES)))
def test_complex_gradients_gradcheck_and_match_torch(case):
    fn = _COMPLEX_CASES[case]
    a = RNG.standard_normal((2, 4, 3)) + 1j * RNG.standard_normal((2, 4, 3))
    c = RNG.standard_normal((2, 4, 2)) + 1j * RNG.standard_normal((2, 4, 2))
    h, tau = (x.numpy() for x in torch.geqrf(torch.tensor(a)))
    ours = [gradiente.tensor(x, requires_grad=True) for x in (h, tau, c)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (h, tau, c)]
    assert gradiente.autograd.gradcheck(lambda *xs: fn(gradiente, *xs), ours)
    (fn(gradiente, *ours).abs() ** 2).sum().backward()
    (fn(torch, *theirs).abs() ** 2).sum().backward()
    for o, t in zip(ours, theirs):
        if t.grad is None:
            assert o.grad is None
        else:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), atol=1e-12)
