"""``linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve`` (``ops/linalg_ldl.py``) against PyTorch (LAPACK's
sytrf and sytrs): the compact LD and the pivots, 1×1 and 2×2 blocks, on symmetric, complex symmetric and
Hermitian matrices, batched, in float32 and float64; solutions of A X = B; a singular D's info; the missing
derivatives; PyTorch's error messages."""
import numpy as np
import pytest
from harness import check_same_error

import gradiente

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(16)


def _matrix(shape, kind, small_diagonal=False):
    a = RNG.standard_normal(shape)
    if kind != "real":
        a = a + 1j * RNG.standard_normal(shape)
    if small_diagonal:          # forces 2×2 pivots and interchanges
        a = a * (1 - np.eye(shape[-1]) * (1 - 1e-3))
    return a


def _full(a, hermitian):
    """The matrix the lower triangle stands for (a Hermitian one's diagonal is real)."""
    lower = np.tril(a, -1)
    upper = np.conj(np.swapaxes(lower, -1, -2)) if hermitian else np.swapaxes(lower, -1, -2)
    diagonal = np.diagonal(a, axis1=-2, axis2=-1)
    return lower + upper + np.eye(a.shape[-1]) * (diagonal.real if hermitian else diagonal)[..., None, :]


@pytest.mark.parametrize("kind,hermitian", [("real", False), ("real", True), ("complex", False), ("complex", True)])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 6, 6), (2, 1, 9, 9), (70, 70)])
@pytest.mark.parametrize("small_diagonal", [False, True])
def test_factor_matches_lapack_through_torch(kind, hermitian, shape, small_diagonal):
    a = _matrix(shape, kind, small_diagonal)
    ours = gradiente.linalg.ldl_factor_ex(gradiente.tensor(a), hermitian=hermitian)
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype)[10:] == str(t.dtype)[6:]
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-9, atol=1e-9)
    b = RNG.standard_normal(shape[:-1] + (2,))
    b = (b + 1j * RNG.standard_normal(b.shape)) if kind != "real" else b
    x = gradiente.linalg.ldl_solve(ours.LD, ours.pivots, gradiente.tensor(b), hermitian=hermitian).numpy()
    np.testing.assert_allclose(_full(a, hermitian) @ x, b, atol=1e-8)
    expected = torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(b), hermitian=hermitian).numpy()
    np.testing.assert_allclose(x, expected, rtol=1e-8, atol=1e-8)


def test_float32_and_named_results():
    a = RNG.standard_normal((3, 5, 5)).astype("float32")
    ours, theirs = gradiente.linalg.ldl_factor(gradiente.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-4, atol=1e-4)
    assert ours.LD.dtype == gradiente.float32
    assert repr(ours).startswith("gradiente.return_types.linalg_ldl_factor(\nLD=")
    assert repr(gradiente.linalg.ldl_factor_ex(gradiente.tensor(a))).startswith(
        "gradiente.return_types.linalg_ldl_factor_ex(\nLD=")
    b = RNG.standard_normal((1, 5, 2)).astype("float32")      # batch dims broadcast
    x = gradiente.linalg.ldl_solve(*ours, gradiente.tensor(b))
    np.testing.assert_allclose(x.numpy(), torch.linalg.ldl_solve(*theirs, torch.tensor(b)).numpy(), rtol=1e-3,
                               atol=1e-4)
    long_pivots = gradiente.linalg.ldl_solve(ours.LD, ours.pivots.long(), gradiente.tensor(b))     # as PyTorch
    np.testing.assert_array_equal(long_pivots.numpy(), x.numpy())


def test_singular_d_reports_info_and_ldl_factor_raises_torchs_error():
    for lib in (gradiente, torch):
        result = lib.linalg.ldl_factor_ex(lib.zeros(2, 3, 3))
        assert result.info.tolist() == [1, 1] and result.pivots.tolist() == [[1, 2, 3]] * 2
    check_same_error(lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 3)))
    check_same_error(lambda lib: lib.linalg.ldl_factor_ex(lib.zeros(3, 3), check_errors=True))


def test_no_derivatives_as_in_torch():
    a = RNG.standard_normal((3, 3))
    for lib in (gradiente, torch):
        x = lib.tensor(a + a.T, requires_grad=True)
        ld, pivots = lib.linalg.ldl_factor(x)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            ld.sum().backward()
        b = lib.tensor(RNG.standard_normal((3, 1)), requires_grad=True)
        out = lib.linalg.ldl_solve(ld.detach(), pivots, b)
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
            out.sum().backward()


def _z(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype or lib.float64)


def _factored(lib):
    return lib.linalg.ldl_factor(lib.eye(3, dtype=lib.float64))


ERRORS = [
    ("factor_1d", lambda lib: lib.linalg.ldl_factor(_z(lib, 3))),
    ("factor_not_square", lambda lib: lib.linalg.ldl_factor_ex(_z(lib, 3, 4))),
    ("factor_int", lambda lib: lib.linalg.ldl_factor(_z(lib, 3, 3, dtype=lib.int32))),
    ("solve_rows", lambda lib: lib.linalg.ldl_solve(*_factored(lib), _z(lib, 4, 2))),
    ("solve_dtype", lambda lib: lib.linalg.ldl_solve(*_factored(lib), lib.zeros(3, 2))),
    ("solve_pivots_shape", lambda lib: lib.linalg.ldl_solve(_factored(lib)[0], _factored(lib)[1][:2],
                                                            _z(lib, 3, 2))),
    ("solve_pivots_float", lambda lib: lib.linalg.ldl_solve(_factored(lib)[0], _factored(lib)[1].double(),
                                                            _z(lib, 3, 2))),
    ("solve_ld_not_square", lambda lib: lib.linalg.ldl_solve(_z(lib, 3, 4), _factored(lib)[1], _z(lib, 3, 2))),
    ("solve_vector", lambda lib: lib.linalg.ldl_solve(*_factored(lib), _z(lib, 3))),
    ("solve_ld_1d", lambda lib: lib.linalg.ldl_solve(_z(lib, 3), _factored(lib)[1], _z(lib, 3, 2))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    check_same_error(fn)
