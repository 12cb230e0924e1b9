"""``gradiente.linalg`` (``ops/linalg.py``) against ``torch.linalg``: norms, inverses, solves, determinants, Cholesky,
QR, eigh, SVD, pinv, matrix_power, multi_dot, cross, vecdot, solve_triangular, lu_factor(_ex), lu, lu_solve,
matrix_exp. Table-driven float64 gradcheck, differential tests with grad_fn names, gradgradcheck; decompositions
through functions that do not depend on the signs of singular vectors and eigenvectors; then result types, values up
to sign, argument names, LU's pivots and empty and singular inputs, and error messages against PyTorch.

The helpers ``to_np``, ``both``, ``assert_same``, ``node_name``, ``_torch_names``, ``_z`` and ``_pivots`` are shared:
test_ops_legacy_linalg.py, test_functional_aliases.py and test_ops_sampling.py import them from here."""
import inspect
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def well_conditioned(rng, shapes):
    """Square matrices far from singular (a random matrix plus 3·I); other inputs random."""
    out = []
    for s in shapes:
        a = rng.uniform(-1, 1, size=s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + 3 * np.eye(s[-1])
        out.append(a)
    return out


def positive_definite(rng, shapes):
    """Symmetric positive-definite matrices: B Bᵀ + I."""
    b = [rng.uniform(-1, 1, size=s) for s in shapes]
    return [x @ np.swapaxes(x, -1, -2) + np.eye(x.shape[-1]) for x in b]


def _spd(lib, x):
    """An unconstrained input made symmetric positive-definite, so that gradcheck may move every entry."""
    return x @ x.mT + lib.eye(x.shape[-1], dtype=x.dtype)


def _sym(x):
    return x + x.mT


def _l(lib):
    return lib.linalg


def _reconstruct_eigh(lib, a):
    values, vectors = _l(lib).eigh(a)
    return vectors @ lib.diag_embed(values) @ vectors.mT


def _reconstruct_svd(lib, a):
    u, s, vh = _l(lib).svd(a, full_matrices=False)
    return u @ lib.diag_embed(s) @ vh


def to_np(t):
    return t.detach().numpy()


def both(fn, arrays, requires_grad=True):
    """``fn(lib, *tensors)`` in each library on the same arrays: [(inputs, output)] for gradiente, then torch."""
    results = []
    for lib in (gradiente, torch):
        inputs = [lib.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f") for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results.append((inputs, fn(lib, *inputs)))
    return results


def assert_same(ours, theirs, rtol=1e-10, atol=1e-12):
    """Same shape, dtype and values."""
    a, b = to_np(ours), to_np(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def node_name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


VECTORS = [((5,),), ((2, 3),), ((2, 3, 4),)]
MATRICES = [((3, 4),), ((2, 3, 3),)]

SPECS = [
    # norms
    OpSpec("norm", lambda lib, x: _l(lib).norm(x), VECTORS),
    OpSpec("norm_ord_vector", lambda lib, x: _l(lib).norm(x, 3), [((5,),)]),
    OpSpec("norm_dim", lambda lib, x: _l(lib).norm(x, dim=1, keepdim=True), [((2, 3, 4),)]),
    OpSpec("norm_dims_no_ord", lambda lib, x: _l(lib).norm(x, dim=(0, 2)), [((2, 3, 4),)]),
    OpSpec("norm_matrix_fro", lambda lib, x: _l(lib).norm(x, "fro"), [((3, 4),)]),
    OpSpec("norm_matrix_nuc", lambda lib, x: _l(lib).norm(x, "nuc"), [((3, 4),)]),
    OpSpec("norm_matrix_ord", lambda lib, x: _l(lib).norm(x, 2), [((3, 4),)]),
    OpSpec("norm_matrix_dims", lambda lib, x: _l(lib).norm(x, 1, dim=(2, 0)), [((2, 3, 4),)]),
    OpSpec("vector_norm", lambda lib, x: _l(lib).vector_norm(x), VECTORS),
    OpSpec("vector_norm_1", lambda lib, x: _l(lib).vector_norm(x, 1, dim=-1), [((2, 3),)]),
    OpSpec("vector_norm_inf", lambda lib, x: _l(lib).vector_norm(x, float("inf")), [((2, 3),)]),
    OpSpec("vector_norm_neg_inf", lambda lib, x: _l(lib).vector_norm(x, -float("inf"), dim=0), [((2, 3),)]),
    OpSpec("vector_norm_3_keepdim", lambda lib, x: _l(lib).vector_norm(x, 3, dim=(0, 1), keepdim=True),
           [((2, 3, 2),)]),
    OpSpec("vector_norm_dtype", lambda lib, x: _l(lib).vector_norm(x, dtype=lib.float64), [((3,),)],
           dtypes=("float32",)),
    OpSpec("matrix_norm_fro", lambda lib, x: _l(lib).matrix_norm(x), MATRICES),
    OpSpec("matrix_norm_nuc", lambda lib, x: _l(lib).matrix_norm(x, "nuc"), MATRICES),
    OpSpec("matrix_norm_2", lambda lib, x: _l(lib).matrix_norm(x, 2), MATRICES),
    OpSpec("matrix_norm_-2", lambda lib, x: _l(lib).matrix_norm(x, -2), MATRICES),
    OpSpec("matrix_norm_1", lambda lib, x: _l(lib).matrix_norm(x, 1), MATRICES),
    OpSpec("matrix_norm_-1", lambda lib, x: _l(lib).matrix_norm(x, -1), MATRICES),
    OpSpec("matrix_norm_inf", lambda lib, x: _l(lib).matrix_norm(x, float("inf")), MATRICES),
    OpSpec("matrix_norm_-inf", lambda lib, x: _l(lib).matrix_norm(x, -float("inf")), MATRICES),
    OpSpec("matrix_norm_keepdim", lambda lib, x: _l(lib).matrix_norm(x, 1, keepdim=True), [((2, 3, 4),)]),
    OpSpec("matrix_norm_nuc_keepdim", lambda lib, x: _l(lib).matrix_norm(x, "nuc", dim=(0, 2), keepdim=True),
           [((3, 2, 4),)]),
    OpSpec("matrix_norm_2_dims", lambda lib, x: _l(lib).matrix_norm(x, 2, dim=(2, 0)), [((3, 2, 4),)]),
    OpSpec("matrix_norm_inf_dims", lambda lib, x: _l(lib).matrix_norm(x, float("inf"), dim=(0, 2), keepdim=True),
           [((3, 2, 4),)]),
    # inverses and determinants
    OpSpec("inv", lambda lib, x: _l(lib).inv(x), [((3, 3),), ((2, 3, 3),)], make_inputs=well_conditioned),
    OpSpec("inv_ex", lambda lib, x: _l(lib).inv_ex(x).inverse, [((3, 3),)], make_inputs=well_conditioned),
    OpSpec("det", lambda lib, x: _l(lib).det(x), [((3, 3),), ((2, 2, 2),), ((1, 1),)], make_inputs=well_conditioned),
    OpSpec("slogdet", lambda lib, x: _l(lib).slogdet(x).logabsdet, [((3, 3),), ((2, 3, 3),)],
           make_inputs=well_conditioned),
    OpSpec("solve", lambda lib, a, b: _l(lib).solve(a, b), [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (3,)),
                                                            ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 4)),
                                                            ((3, 3), (2, 3, 1))], make_inputs=well_conditioned),
    OpSpec("solve_right", lambda lib, a, b: _l(lib).solve(a, b, left=False), [((3, 3), (2, 3)),
                                                                              ((2, 3, 3), (4, 2, 4, 3))],
           make_inputs=well_conditioned),
    OpSpec("solve_ex", lambda lib, a, b: _l(lib).solve_ex(a, b).result, [((3, 3), (3, 2))],
           make_inputs=well_conditioned),
    # decompositions, through functions that do not depend on sign choices
    OpSpec("cholesky", lambda lib, x: _l(lib).cholesky(_spd(lib, x)), [((3, 3),), ((2, 4, 4),)]),
    OpSpec("cholesky_upper", lambda lib, x: _l(lib).cholesky(_spd(lib, x), upper=True), [((3, 3),)]),
    OpSpec("cholesky_ex", lambda lib, x: _l(lib).cholesky_ex(_spd(lib, x)).L, [((3, 3),)]),
    OpSpec("qr_q", lambda lib, x: _l(lib).qr(x).Q, [((4, 3),), ((3, 3),), ((2, 4, 3),), ((3, 5),)]),
    OpSpec("qr_r", lambda lib, x: _l(lib).qr(x)[1], [((4, 3),), ((3, 5),)]),
    OpSpec("qr_both", lambda lib, x: sum(t.sum() for t in _l(lib).qr(x)), [((4, 3),), ((3, 5),)],
           check_name=False),
    OpSpec("qr_complete_square", lambda lib, x: _l(lib).qr(x, mode="complete").Q, [((3, 3),), ((3, 4),)]),
    OpSpec("eigh_values", lambda lib, x: _l(lib).eigh(_sym(x)).eigenvalues, [((3, 3),), ((2, 4, 4),)]),
    OpSpec("eigh_vectors_squared", lambda lib, x: _l(lib).eigh(_sym(x)).eigenvectors ** 2, [((3, 3),)]),
    OpSpec("eigh_upper", lambda lib, x: _l(lib).eigh(_sym(x), UPLO="U")[0], [((3, 3),)]),
    OpSpec("eigh_reconstruct", lambda lib, x: _reconstruct_eigh(lib, _sym(x)), [((3, 3),)]),
    OpSpec("eigvalsh", lambda lib, x: _l(lib).eigvalsh(_sym(x)), [((3, 3),), ((2, 3, 3),)]),
    OpSpec("svd_values", lambda lib, x: _l(lib).svd(x).S, [((4, 3),), ((3, 4),), ((2, 3, 3),)]),
    OpSpec("svd_u_squared", lambda lib, x: _l(lib).svd(x, full_matrices=False).U ** 2, [((4, 3),), ((3, 4),),
                                                                                      ((3, 3),)]),
    OpSpec("svd_vh_squared", lambda lib, x: _l(lib).svd(x, full_matrices=False).Vh ** 2, [((4, 3),), ((3, 4),)]),
    OpSpec("svd_full_u_squared", lambda lib, x: _l(lib).svd(x)[0][..., :3] ** 2, [((4, 3),), ((3, 4),)]),
    OpSpec("svd_reconstruct", _reconstruct_svd, [((4, 3),), ((2, 3, 4),)]),
    OpSpec("svdvals", lambda lib, x: _l(lib).svdvals(x), [((4, 3),), ((2, 3, 4),)]),
    OpSpec("pinv", lambda lib, x: _l(lib).pinv(x), [((4, 3),), ((3, 4),), ((2, 3, 3),)]),
    OpSpec("pinv_hermitian", lambda lib, x: _l(lib).pinv(_spd(lib, x), hermitian=True), [((3, 3),)],
           rtol32=1e-4, atol32=1e-4),
    # powers and products
    OpSpec("matrix_power_0", lambda lib, x: _l(lib).matrix_power(x, 0), [((3, 3),), ((2, 3, 3),)]),
    OpSpec("matrix_power_1", lambda lib, x: _l(lib).matrix_power(x, 1), [((3, 3),)]),
    OpSpec("matrix_power_2", lambda lib, x: _l(lib).matrix_power(x, 2), [((3, 3),)]),
    OpSpec("matrix_power_5", lambda lib, x: _l(lib).matrix_power(x, 5), [((3, 3),), ((2, 3, 3),)], domain=(-1, 1)),
    OpSpec("matrix_power_-1", lambda lib, x: _l(lib).matrix_power(x, -1), [((3, 3),)], make_inputs=well_conditioned),
    OpSpec("matrix_power_-3", lambda lib, x: _l(lib).matrix_power(x, -3), [((3, 3),), ((2, 3, 3),)],
           make_inputs=well_conditioned),
    OpSpec("multi_dot", lambda lib, *xs: _l(lib).multi_dot(xs), [((2, 3), (3, 4)), ((3, 4), (4, 3), (3, 4)),
                                                                   ((5, 2), (2, 4), (4, 3), (3, 6)),
                                                                   ((3,), (3, 4), (4,)), ((3,), (3, 2)),
                                                                   ((2, 3), (3,))]),
    OpSpec("matmul", lambda lib, x, y: _l(lib).matmul(x, y), [((2, 3), (3, 4)), ((2, 2, 3), (3,))]),
    OpSpec("cross", lambda lib, x, y: _l(lib).cross(x, y), [((4, 3), (4, 3)), ((2, 4, 3), (1, 4, 3))]),
    OpSpec("cross_dim", lambda lib, x, y: _l(lib).cross(x, y, dim=0), [((3, 2), (3, 2))]),
    OpSpec("vecdot", lambda lib, x, y: _l(lib).vecdot(x, y), [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,))]),
    OpSpec("vecdot_dim", lambda lib, x, y: _l(lib).vecdot(x, y, dim=0), [((3, 2), (3, 2))]),
    OpSpec("diagonal", lambda lib, x: _l(lib).diagonal(x), [((3, 4),), ((2, 3, 3),)]),
    OpSpec("diagonal_offset", lambda lib, x: _l(lib).diagonal(x, offset=1, dim1=0, dim2=2), [((3, 2, 4),)]),
    # triangular solves, LU, matrix_exp
    OpSpec("solve_triangular_upper", lambda lib, a, b: _l(lib).solve_triangular(a, b, upper=True),
           [((3, 3), (3, 2)), ((2, 1, 3, 3), (4, 3, 2))], make_inputs=well_conditioned),
    OpSpec("solve_triangular_lower_right", lambda lib, a, b: _l(lib).solve_triangular(input=a, B=b, upper=False,
                                                                                      left=False),
           [((3, 3), (2, 3))], make_inputs=well_conditioned),
    OpSpec("solve_triangular_unit", lambda lib, a, b: _l(lib).solve_triangular(a, b, upper=False,
                                                                               unitriangular=True),
           [((3, 3), (3, 2))], make_inputs=well_conditioned),
    OpSpec("lu_factor", lambda lib, a: _l(lib).lu_factor(a).LU,
           [((4, 4),), ((2, 3, 3),), ((5, 3),), ((3, 5),)]),
    OpSpec("lu_factor_ex", lambda lib, a: _l(lib).lu_factor_ex(A=a).LU, [((2, 4, 2),), ((2, 2, 4),)]),
    OpSpec("lu_L", lambda lib, a: _l(lib).lu(a).L, [((4, 4),), ((5, 3),), ((2, 3, 5),)]),
    OpSpec("lu_U", lambda lib, a: _l(lib).lu(a).U, [((4, 4),), ((5, 3),), ((2, 3, 5),)]),
    OpSpec("lu_solve", lambda lib, a, b: _l(lib).lu_solve(*_l(lib).lu_factor(a), b),
           [((3, 3), (3, 2)), ((2, 3, 3), (4, 1, 3, 2))], make_inputs=well_conditioned),
    OpSpec("lu_solve_adjoint_right", lambda lib, a, b: _l(lib).lu_solve(*_l(lib).lu_factor(a), B=b,
                                                                        left=False, adjoint=True),
           [((3, 3), (2, 3))], make_inputs=well_conditioned),
    OpSpec("lu_solve_adjoint", lambda lib, a, b: _l(lib).lu_solve(*_l(lib).lu_factor(a), b, adjoint=True),
           [((3, 3), (3, 2))], make_inputs=well_conditioned),
    OpSpec("linalg_matrix_exp", lambda lib, a: _l(lib).matrix_exp(a), [((3, 3),), ((2, 4, 4),), ((1, 1),)]),
    OpSpec("linalg_matrix_exp_large", lambda lib, a: _l(lib).matrix_exp(a * 4), [((3, 3),)]),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- values and result types --------------------------------------------------------------------------------

def _pair(shape, make=None, seed=0):
    rng = np.random.RandomState(seed)
    a = make(rng, [shape])[0] if make else rng.uniform(-1, 1, size=shape)
    return gradiente.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _close_up_to_sign(ours, theirs, axis):
    """Columns (axis=-2 varies within a column) or rows equal up to the sign of each."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    flip = np.sign(np.sum(ours * theirs, axis=axis, keepdims=True))
    np.testing.assert_allclose(ours * flip, theirs, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_values_match_up_to_sign(shape, full):
    g, t = _pair(shape)
    ours, theirs = gradiente.linalg.svd(g, full_matrices=full), torch.linalg.svd(t, full_matrices=full)
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_svd"
    assert [tuple(x.shape) for x in ours] == [tuple(x.shape) for x in theirs]
    np.testing.assert_allclose(ours.S.numpy(), theirs.S.numpy(), rtol=1e-10)
    k = min(shape[-2:])
    _close_up_to_sign(ours.U.numpy()[..., :k], theirs.U.numpy()[..., :k], axis=-2)
    _close_up_to_sign(ours.Vh.numpy()[..., :k, :], theirs.Vh.numpy()[..., :k, :], axis=-1)


def test_eigh_values_match_up_to_sign():
    g, t = _pair((2, 4, 4), positive_definite)
    ours, theirs = gradiente.linalg.eigh(g), torch.linalg.eigh(t)
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_eigh"
    np.testing.assert_allclose(ours.eigenvalues.numpy(), theirs.eigenvalues.numpy(), rtol=1e-10)
    _close_up_to_sign(ours.eigenvectors.numpy(), theirs.eigenvectors.numpy(), axis=-2)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_qr_modes(mode, shape):
    g, t = _pair(shape)
    ours, theirs = gradiente.linalg.qr(g, mode=mode), torch.linalg.qr(t, mode=mode)
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_qr"
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-10)


def test_named_results():
    g, t = _pair((3, 3), well_conditioned)
    for name, fn in [("linalg_slogdet", lambda lib, x: lib.linalg.slogdet(x)),
                     ("linalg_inv_ex", lambda lib, x: lib.linalg.inv_ex(x)),
                     ("linalg_solve_ex", lambda lib, x: lib.linalg.solve_ex(x, x)),
                     ("linalg_cholesky_ex", lambda lib, x: lib.linalg.cholesky_ex(x @ x.mT))]:
        ours, theirs = fn(gradiente, g), fn(torch, t)
        assert type(ours).__name__ == type(theirs).__name__ == name
        assert ours._fields == theirs._fields if hasattr(theirs, "_fields") else len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-15)
    assert repr(gradiente.linalg.slogdet(gradiente.eye(2))) == \
        "gradiente.return_types.linalg_slogdet(\nsign=tensor(1.),\nlogabsdet=tensor(0.))"


def test_multi_output_grad_fns_are_shared():
    """Every output of a decomposition hangs from the one node, as in PyTorch."""
    x = gradiente.randn(3, 3, requires_grad=True)
    for result, name in [(gradiente.linalg.qr(x), "LinalgQrBackward0"), (gradiente.linalg.svd(x), "LinalgSvdBackward0"),
                         (gradiente.linalg.eigh(x), "LinalgEighBackward0"),
                         (gradiente.linalg.slogdet(x), "LinalgSlogdetBackward0")]:
        assert {type(t.grad_fn).__name__ for t in result} == {name}
        assert len({id(t.grad_fn) for t in result}) == 1


@pytest.mark.parametrize("kwargs", [{}, {"hermitian": True}, {"atol": 0.5}, {"rtol": 0.3}, {"tol": 0.5}])
def test_matrix_rank(kwargs):
    rng = np.random.RandomState(0)
    b = rng.uniform(-1, 1, size=(2, 4, 2))
    a = b @ np.swapaxes(b, -1, -2) + np.diag([0, 0, 0, 0.4])       # rank 3, symmetric, one small value
    ours = gradiente.linalg.matrix_rank(gradiente.from_numpy(a), **kwargs)
    theirs = torch.linalg.matrix_rank(torch.from_numpy(a), **kwargs)
    assert ours.tolist() == theirs.tolist() and ours.dtype == gradiente.int64


def test_pinv_of_a_rank_deficient_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    ours = gradiente.linalg.pinv(gradiente.from_numpy(a)).numpy()
    np.testing.assert_allclose(ours, torch.linalg.pinv(torch.from_numpy(a)).numpy(), atol=1e-12)
    np.testing.assert_allclose(gradiente.pinverse(gradiente.from_numpy(a)).numpy(), ours, atol=1e-12)


def test_eigvalsh_with_repeated_eigenvalues_has_a_gradient():
    """Only eigenvector gradients divide by eigenvalue gaps: eigvalsh stays finite at I."""
    def grad(lib):
        x = lib.eye(3, dtype=lib.float64, requires_grad=True)
        lib.linalg.eigvalsh(x).pow(2).sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(grad(gradiente), grad(torch), atol=1e-12)


def test_decompositions_double_backward():
    x = gradiente.randn(3, 3, dtype=gradiente.float64, requires_grad=True)
    linalg = gradiente.linalg
    checks = [lambda x: linalg.svd(x, full_matrices=False).U ** 2,
              lambda x: linalg.eigh(x + x.mT).eigenvectors ** 2,
              lambda x: linalg.qr(x).R,
              lambda x: linalg.cholesky(_spd(gradiente, x)),
              lambda x: linalg.det(x + 3 * gradiente.eye(3, dtype=x.dtype)),
              lambda x: linalg.solve(x + 3 * gradiente.eye(3, dtype=x.dtype), x)]
    for fn in checks:
        assert gradiente.autograd.gradgradcheck(fn, (x,))


def test_solve_broadcasts_batches():
    g, t = _pair((2, 1, 3, 3), well_conditioned)
    gb, tb = _pair((4, 3, 2), seed=1)
    ours, theirs = gradiente.linalg.solve(g, gb), torch.linalg.solve(t, tb)
    assert tuple(ours.shape) == tuple(theirs.shape) == (2, 4, 3, 2)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10)


# --- argument names: those of PyTorch's functions --------------------------------------------------------------

_LINALG = ["solve_triangular", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp"]


def _torch_names(module, name, aten):
    """The parameter names of a PyTorch function: its Python signature, or (a builtin) those of its longest ATen
    schema that is not an ``out=`` overload, with ``self`` spelled ``input`` as PyTorch's Python binding spells
    it."""
    fn = torch.functional._lu_impl if module is torch and name == "lu" else getattr(module, name)   # a dispatcher
    try:
        return [p for p in inspect.signature(fn).parameters if p != "out"]
    except (TypeError, ValueError):
        pass
    schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{aten}")
               if not any(a.is_out for a in s.arguments)]
    longest = max(schemas, key=lambda s: len(s.arguments))
    return ["input" if a.name == "self" else a.name for a in longest.arguments]


@pytest.mark.parametrize("name", _LINALG)
def test_linalg_argument_names(name):
    ours = [p for p in inspect.signature(getattr(gradiente.linalg, name)).parameters if p != "out"]
    assert ours == _torch_names(torch.linalg, name, f"linalg_{name}")


# --- LU, matrix_exp, solve_triangular ------------------------------------------------------------------------

def test_lu_pivots_and_permutation_match_lapack():
    rng = np.random.RandomState(3)
    for shape in [(5, 5), (3, 6, 4), (2, 3, 6)]:
        a = rng.uniform(-1, 1, size=shape)
        (_, ours), (_, theirs) = both(lambda lib, x: lib.linalg.lu_factor_ex(x), [a])
        assert_same(ours.pivots, theirs.pivots)
        assert_same(ours.info, theirs.info)
        (_, ours), (_, theirs) = both(lambda lib, x: lib.linalg.lu(x), [a])
        assert_same(ours.P, theirs.P)
        np.testing.assert_allclose(to_np(ours.P @ ours.L @ ours.U), a, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 3, 3), (3, 0), (0, 0), (2, 0, 4), (2, 4, 0)])
def test_lu_of_empty_matrices(shape):
    for fn in (lambda lib, x: lib.linalg.lu(x), lambda lib, x: lib.linalg.lu_factor_ex(x),
               lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor_ex(x)[:2])):
        (_, ours), (_, theirs) = both(fn, [np.zeros(shape)], requires_grad=False)
        for x, y in zip(ours, theirs):
            assert_same(x, y)


def test_singular_lu_reports_info_and_lu_factor_raises():
    singular = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])
    (_, ours), (_, theirs) = both(lambda lib, x: lib.linalg.lu_factor_ex(x), [singular], requires_grad=False)
    assert_same(ours.info, theirs.info)
    assert_same(ours.LU, theirs.LU)
    check_same_error(lambda lib: lib.linalg.lu_factor(lib.tensor(singular)))
    check_same_error(lambda lib: lib.linalg.lu_factor_ex(lib.tensor(singular[1]), check_errors=True))


def test_matrix_exp_against_torch_in_float32_and_complex():
    rng = np.random.RandomState(4)
    a = rng.uniform(-2, 2, size=(3, 4, 4))
    assert_same(gradiente.matrix_exp(gradiente.tensor(a, dtype=gradiente.float32)),
                torch.matrix_exp(torch.tensor(a, dtype=torch.float32)), rtol=1e-5, atol=1e-5)
    c = a + 1j * rng.uniform(-1, 1, size=a.shape)
    assert_same(gradiente.linalg.matrix_exp(gradiente.tensor(c)), torch.linalg.matrix_exp(torch.tensor(c)))
    zero = gradiente.linalg.matrix_exp(gradiente.zeros(2, 0, 0))
    assert tuple(zero.shape) == (2, 0, 0)


def test_solve_triangular_reads_only_its_triangle():
    rng = np.random.RandomState(5)
    a, b = well_conditioned(rng, [(4, 4), (4, 2)])
    ours = gradiente.linalg.solve_triangular(gradiente.tensor(a), gradiente.tensor(b), upper=True)
    tri = gradiente.linalg.solve_triangular(gradiente.tensor(np.triu(a)), gradiente.tensor(b), upper=True)
    assert np.array_equal(to_np(ours), to_np(tri))


def test_distributions_use_the_linalg_solve_triangular():
    from gradiente.distributions import kl, multivariate_normal
    # (torch.linalg's name puts it behind the sparse check, sparse_dispatch.py: the op behind it)
    linalg_op = gradiente.linalg.solve_triangular.sparse_dispatch_of
    assert kl.solve_triangular is linalg_op
    assert multivariate_normal.solve_triangular is linalg_op


# --- errors -----------------------------------------------------------------------------------------------

def _singular(lib):
    return lib.tensor([[1.0, 2.0], [2.0, 4.0]])


def _z(lib, *shape, **kw):
    return lib.zeros(*shape, **kw)


def _pivots(lib, *values, dtype=None):
    return lib.tensor(list(values), dtype=dtype or lib.int32)


ERRORS = [
    ("inv_not_square", lambda lib: lib.linalg.inv(_z(lib, 2, 3))),
    ("inv_1d", lambda lib: lib.linalg.inv(_z(lib, 3))),
    ("inv_int", lambda lib: lib.linalg.inv(lib.eye(2, dtype=lib.int64))),
    ("inv_half", lambda lib: lib.linalg.inv(lib.eye(2, dtype=lib.float16))),
    ("det_not_square", lambda lib: lib.linalg.det(_z(lib, 2, 2, 3))),
    ("slogdet_not_square", lambda lib: lib.linalg.slogdet(_z(lib, 2, 3))),
    ("solve_not_square", lambda lib: lib.linalg.solve(_z(lib, 2, 3), _z(lib, 2))),
    ("solve_vector_size", lambda lib: lib.linalg.solve(lib.eye(2), _z(lib, 3))),
    ("solve_matrix_size", lambda lib: lib.linalg.solve(lib.eye(2), _z(lib, 3, 4))),
    ("solve_right_size", lambda lib: lib.linalg.solve(lib.eye(2), _z(lib, 3, 4), left=False)),
    ("solve_right_vector", lambda lib: lib.linalg.solve(lib.eye(3), _z(lib, 3), left=False)),
    ("inv_ex_not_square", lambda lib: lib.linalg.inv_ex(_z(lib, 2, 3))),
    ("cholesky_ex_not_square", lambda lib: lib.linalg.cholesky_ex(_z(lib, 2, 3))),
    ("solve_ex_not_square", lambda lib: lib.linalg.solve_ex(_z(lib, 2, 3), _z(lib, 2))),
    ("solve_dtype", lambda lib: lib.linalg.solve(lib.eye(2), _z(lib, 2, dtype=lib.float64))),
    ("solve_int", lambda lib: lib.linalg.solve(lib.eye(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))),
    ("cholesky_not_square", lambda lib: lib.linalg.cholesky(_z(lib, 2, 3))),
    ("cholesky_int", lambda lib: lib.linalg.cholesky(lib.eye(2, dtype=lib.int64))),
    ("qr_mode", lambda lib: lib.linalg.qr(_z(lib, 2, 3), mode="foo")),
    ("qr_1d", lambda lib: lib.linalg.qr(_z(lib, 3))),
    ("qr_int", lambda lib: lib.linalg.qr(lib.eye(2, dtype=lib.int64))),
    ("qr_r_backward", lambda lib: lib.linalg.qr(lib.ones(4, 2, requires_grad=True), mode="r").R.sum().backward()),
    ("qr_complete_backward", lambda lib: lib.linalg.qr(lib.ones(4, 2, requires_grad=True),
                                                       mode="complete").Q.sum().backward()),
    ("eigh_not_square", lambda lib: lib.linalg.eigh(_z(lib, 2, 3))),
    ("eigh_uplo", lambda lib: lib.linalg.eigh(_z(lib, 2, 2), UPLO="X")),
    ("eigh_int", lambda lib: lib.linalg.eigh(lib.eye(2, dtype=lib.int64))),
    ("eigvalsh_not_square", lambda lib: lib.linalg.eigvalsh(_z(lib, 2, 3))),
    ("svd_1d", lambda lib: lib.linalg.svd(_z(lib, 3))),
    ("svd_int", lambda lib: lib.linalg.svd(lib.eye(2, dtype=lib.int64))),
    ("svd_driver", lambda lib: lib.linalg.svd(_z(lib, 2, 2), driver="gesvd")),
    ("svdvals_1d", lambda lib: lib.linalg.svdvals(_z(lib, 3))),
    ("pinv_1d", lambda lib: lib.linalg.pinv(_z(lib, 3))),
    ("pinv_int", lambda lib: lib.linalg.pinv(lib.eye(2, dtype=lib.int64))),
    ("matrix_power_1d", lambda lib: lib.linalg.matrix_power(_z(lib, 3), 2)),
    ("matrix_power_not_square", lambda lib: lib.linalg.matrix_power(_z(lib, 2, 3), 2)),
    ("matrix_rank_1d", lambda lib: lib.linalg.matrix_rank(_z(lib, 3))),
    ("matrix_rank_int", lambda lib: lib.linalg.matrix_rank(lib.eye(2, dtype=lib.int64))),
    ("cross_length", lambda lib: lib.linalg.cross(_z(lib, 2, 4), _z(lib, 2, 4))),
    ("cross_broadcast", lambda lib: lib.linalg.cross(_z(lib, 2, 3), _z(lib, 4, 3))),
    ("cross_ndim", lambda lib: lib.linalg.cross(_z(lib, 3), _z(lib, 2, 3))),
    ("vecdot_sizes", lambda lib: lib.linalg.vecdot(_z(lib, 3), _z(lib, 4))),
    ("vecdot_broadcast", lambda lib: lib.linalg.vecdot(_z(lib, 2, 3), _z(lib, 2, 4))),
    ("vecdot_dtype", lambda lib: lib.linalg.vecdot(_z(lib, 3), _z(lib, 3, dtype=lib.float64))),
    ("vecdot_int", lambda lib: lib.linalg.vecdot(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))),
    ("multi_dot_one", lambda lib: lib.linalg.multi_dot([_z(lib, 2, 2)])),
    ("multi_dot_none", lambda lib: lib.linalg.multi_dot([])),
    ("multi_dot_first_3d", lambda lib: lib.linalg.multi_dot([_z(lib, 2, 2, 2), _z(lib, 2, 2)])),
    ("multi_dot_last_3d", lambda lib: lib.linalg.multi_dot([_z(lib, 2, 2), _z(lib, 2, 2, 2)])),
    ("multi_dot_middle_1d", lambda lib: lib.linalg.multi_dot([_z(lib, 2, 3), _z(lib, 3), _z(lib, 3, 2)])),
    ("multi_dot_shapes", lambda lib: lib.linalg.multi_dot([_z(lib, 2, 3), _z(lib, 2, 3)])),
    ("multi_dot_dtype", lambda lib: lib.linalg.multi_dot([_z(lib, 2, 3), _z(lib, 3, 2, dtype=lib.float64)])),
    ("norm_ord_3d", lambda lib: lib.linalg.norm(_z(lib, 2, 2, 2), 2)),
    ("norm_fro_1d", lambda lib: lib.linalg.norm(_z(lib, 3), "fro")),
    ("norm_three_dims", lambda lib: lib.linalg.norm(_z(lib, 3, 3, 3), dim=(0, 1, 2))),
    ("norm_fro_one_dim", lambda lib: lib.linalg.norm(_z(lib, 3, 3), "fro", dim=0)),
    ("norm_int", lambda lib: lib.linalg.norm(lib.eye(2, dtype=lib.int64))),
    ("matrix_norm_ord", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3), 3)),
    ("matrix_norm_ord_float", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3), 3.5)),
    ("matrix_norm_ord_str", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3), "foo")),
    ("matrix_norm_1d", lambda lib: lib.linalg.matrix_norm(_z(lib, 3))),
    ("matrix_norm_one_dim", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3), dim=(0,))),
    ("matrix_norm_three_dims", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3, 3), dim=(0, 1, 2))),
    ("matrix_norm_same_dims", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3), dim=(0, 0))),
    ("matrix_norm_dim_range", lambda lib: lib.linalg.matrix_norm(_z(lib, 3, 3), dim=(0, 5))),
    ("matrix_norm_int", lambda lib: lib.linalg.matrix_norm(lib.eye(2, dtype=lib.int64))),
    ("vector_norm_int", lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.int64))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


# solve_triangular, lu_factor(_ex), lu, lu_solve, matrix_exp
LU_ERRORS = [
    ("solve_triangular_1d_A", lambda lib: lib.linalg.solve_triangular(_z(lib, 3), _z(lib, 3, 2), upper=True)),
    ("solve_triangular_1d_B", lambda lib: lib.linalg.solve_triangular(lib.eye(3), _z(lib, 3), upper=True)),
    ("solve_triangular_shapes", lambda lib: lib.linalg.solve_triangular(lib.eye(3), _z(lib, 2, 2), upper=True)),
    ("solve_triangular_right_shapes", lambda lib: lib.linalg.solve_triangular(lib.eye(3), _z(lib, 2, 2), upper=True,
                                                                              left=False)),
    ("solve_triangular_not_square", lambda lib: lib.linalg.solve_triangular(_z(lib, 2, 3), _z(lib, 3, 2),
                                                                            upper=False)),
    ("solve_triangular_int", lambda lib: lib.linalg.solve_triangular(lib.eye(2, dtype=lib.int64),
                                                                     lib.eye(2, dtype=lib.int64), upper=False)),
    ("solve_triangular_batch", lambda lib: lib.linalg.solve_triangular(_z(lib, 2, 3, 3), _z(lib, 4, 3, 2),
                                                                       upper=True)),
    ("lu_factor_1d", lambda lib: lib.linalg.lu_factor(_z(lib, 3))),
    ("lu_factor_int", lambda lib: lib.linalg.lu_factor(lib.eye(2, dtype=lib.int64))),
    ("lu_factor_half", lambda lib: lib.linalg.lu_factor(lib.eye(2, dtype=lib.float16))),
    ("lu_factor_no_pivot", lambda lib: lib.linalg.lu_factor(lib.eye(2), pivot=False)),
    ("lu_factor_ex_1d", lambda lib: lib.linalg.lu_factor_ex(_z(lib, 3))),
    ("linalg_lu_1d", lambda lib: lib.linalg.lu(_z(lib, 3))),
    ("linalg_lu_int", lambda lib: lib.linalg.lu(lib.eye(2, dtype=lib.int64))),
    ("linalg_lu_no_pivot", lambda lib: lib.linalg.lu(lib.eye(2), pivot=False)),
    ("lu_solve_1d_B", lambda lib: lib.linalg.lu_solve(lib.eye(2), _pivots(lib, 1, 2), lib.ones(2))),
    ("lu_solve_shapes", lambda lib: lib.linalg.lu_solve(lib.eye(2), _pivots(lib, 1, 2), lib.ones(3, 1))),
    ("lu_solve_not_square", lambda lib: lib.linalg.lu_solve(_z(lib, 2, 3), _pivots(lib, 1, 2), lib.ones(2, 1))),
    ("lu_solve_pivot_dtype", lambda lib: lib.linalg.lu_solve(lib.eye(2), _pivots(lib, 1, 2, dtype=lib.int64),
                                                             lib.ones(2, 1))),
    ("lu_solve_pivot_count", lambda lib: lib.linalg.lu_solve(lib.eye(2), _pivots(lib, 1, 2, 3), lib.ones(2, 1))),
    ("lu_solve_dtype", lambda lib: lib.linalg.lu_solve(lib.eye(2), _pivots(lib, 1, 2),
                                                       lib.ones(2, 1, dtype=lib.float64))),
    ("matrix_exp_1d", lambda lib: lib.linalg.matrix_exp(_z(lib, 3))),
]


@pytest.mark.parametrize("name,fn", LU_ERRORS, ids=[e[0] for e in LU_ERRORS])
def test_lu_errors_match_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


LINALG_ERRORS = [
    ("inv_singular", lambda lib: lib.linalg.inv(_singular(lib))),
    ("inv_zeros", lambda lib: lib.linalg.inv(_z(lib, 3, 3))),
    ("inv_ones", lambda lib: lib.linalg.inv(lib.ones(3, 3))),
    ("inv_batch", lambda lib: lib.linalg.inv(lib.stack([lib.eye(2), _singular(lib)]))),
    ("inv_ex_checked", lambda lib: lib.linalg.inv_ex(_singular(lib), check_errors=True)),
    ("cholesky_ex_checked", lambda lib: lib.linalg.cholesky_ex(-lib.eye(2), check_errors=True)),
    ("solve_ex_checked", lambda lib: lib.linalg.solve_ex(_singular(lib), _z(lib, 2), check_errors=True)),
    ("solve_singular", lambda lib: lib.linalg.solve(_singular(lib), _z(lib, 2))),
    ("solve_batch", lambda lib: lib.linalg.solve(lib.stack([lib.eye(2), _singular(lib)]), _z(lib, 2, 2))),
    ("cholesky_first", lambda lib: lib.linalg.cholesky(-lib.eye(3))),
    ("cholesky_second", lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("cholesky_batch", lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), -lib.eye(2)]))),
    ("matrix_power_singular", lambda lib: lib.linalg.matrix_power(_singular(lib), -2)),
]


@pytest.mark.parametrize("name,fn", LINALG_ERRORS, ids=[e[0] for e in LINALG_ERRORS])
def test_linalg_errors_match_torch(name, fn):
    """PyTorch raises ``torch.linalg.LinAlgError``; we raise ``gradiente.linalg.LinAlgError``, a RuntimeError
    too, with the same message."""
    with pytest.raises(torch.linalg.LinAlgError) as expected:
        fn(torch)
    with pytest.raises(gradiente.linalg.LinAlgError) as got:
        fn(gradiente)
    assert str(got.value) == str(expected.value)
    assert isinstance(got.value, RuntimeError)


def test_ex_variants_report_info_without_raising():
    for lib in (gradiente, torch):
        assert lib.linalg.inv_ex(_singular(lib)).info.item() == 2
        assert lib.linalg.cholesky_ex(lib.tensor([[1.0, 2.0], [2.0, 1.0]])).info.item() == 2
        assert lib.linalg.inv_ex(lib.eye(2)).info.dtype == lib.int32
