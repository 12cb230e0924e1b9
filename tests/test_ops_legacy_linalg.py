"""PyTorch's older top-level linear algebra, ``ops/legacy_linalg.py`` (``svd``, ``qr``, ``cholesky``,
``cholesky_solve``, ``cholesky_inverse``, ``lu``, ``lu_unpack``, ``lu_solve``, ``triangular_solve``, ``matrix_exp``,
and the removed ``matrix_rank``, ``solve``, ``lstsq``, ``eig``, ``symeig``), against PyTorch: values, gradients
(gradcheck, gradgradcheck, and against PyTorch), grad_fn names, argument names, result types and their output
numbers, deprecation warnings (PyTorch's text, once per process), errors, and the removed functions' messages.
"""
import inspect
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests
from test_ops_linalg import (
    _l,
    _pivots,
    _spd,
    _torch_names,
    _z,
    assert_same,
    both,
    node_name,
    to_np,
    well_conditioned,
)

import gradiente
from gradiente.ops import legacy_linalg

torch = pytest.importorskip("torch")


def lower_factor(rng, shapes):
    """A Cholesky-like lower-triangular factor (positive diagonal), then the other inputs."""
    first, *rest = shapes
    diagonal = rng.uniform(1, 2, size=first[:-1])[..., None] * np.eye(first[-1])
    factor = np.tril(rng.uniform(-1, 1, size=first), -1) + diagonal
    return [factor] + [rng.uniform(-1, 1, size=s) for s in rest]


def _quiet(fn):
    """``fn`` with PyTorch's (and our) deprecation warnings silenced: the tables test values, not warnings."""
    def quiet(lib, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *xs)
    return quiet


SQUARE = [((3, 3),), ((2, 4, 4),)]


@_quiet
def _svd_cubed(lib, a):
    """U diag(S³) Vᵀ, which does not depend on the signs of the singular vectors."""
    u, s, v = lib.svd(a)
    return u @ lib.diag_embed(s ** 3) @ v.mT


@_quiet
def _svd_full_reconstruction(lib, a):
    u, s, v = lib.svd(a, some=False)
    return u[..., :3] @ lib.diag_embed(s) @ v.mT


@_quiet
def _triangular_solve_both(lib, b, a):
    """Both results used: the copy of A is differentiable too, and its gradient adds to A's."""
    solution, coefficient = lib.triangular_solve(b, a, upper=False)
    return solution.sum(-1, keepdim=True) * coefficient


SPECS = [
    OpSpec("svd_S", _quiet(lambda lib, a: lib.svd(a).S), [((4, 3),), ((2, 3, 5),)]),
    OpSpec("svd_values_only", _quiet(lambda lib, a: lib.svd(a, compute_uv=False).S), [((4, 3),)]),
    OpSpec("svd_gauge_invariant", _svd_cubed, [((4, 3),), ((3, 4),)], check_name=False),
    OpSpec("svd_full_gauge_invariant", _svd_full_reconstruction, [((4, 3),)], check_name=False),
    OpSpec("qr_Q", _quiet(lambda lib, a: lib.qr(a).Q), [((4, 3),), ((2, 3, 3),)]),
    OpSpec("qr_R", _quiet(lambda lib, a: lib.qr(a, some=True).R), [((4, 3),)]),
    OpSpec("qr_complete_R", _quiet(lambda lib, a: lib.qr(input=a, some=False).R), [((3, 3),)]),
    OpSpec("cholesky", _quiet(lambda lib, x: lib.cholesky(_spd(lib, x))), SQUARE),
    OpSpec("cholesky_upper", _quiet(lambda lib, x: lib.cholesky(_spd(lib, x), upper=True)), [((3, 3),)]),
    OpSpec("cholesky_solve", lambda lib, x, b: lib.cholesky_solve(b, _l(lib).cholesky(_spd(lib, x))),
           [((3, 3), (3, 2)), ((2, 1, 3, 3), (4, 3, 2))]),
    OpSpec("cholesky_solve_upper", lambda lib, x, b: lib.cholesky_solve(
        input=b, input2=_l(lib).cholesky(_spd(lib, x), upper=True), upper=True), [((3, 3), (3, 2))]),
    # PyTorch's gradient for the factor is the full matrix (not kept to its triangle): against PyTorch only
    OpSpec("cholesky_solve_factor", lambda lib, f, b: lib.cholesky_solve(b, f), [((3, 3), (3, 2)),
                                                                                 ((2, 3, 3), (3, 1))],
           make_inputs=lower_factor, gradcheck=False),
    OpSpec("cholesky_inverse", lambda lib, x: lib.cholesky_inverse(_l(lib).cholesky(_spd(lib, x))), SQUARE),
    OpSpec("cholesky_inverse_upper", lambda lib, x: lib.cholesky_inverse(
        input=_l(lib).cholesky(_spd(lib, x), upper=True), upper=True), [((3, 3),)]),
    OpSpec("cholesky_inverse_factor", lambda lib, f: lib.cholesky_inverse(f), [((3, 3),)], make_inputs=lower_factor,
           gradcheck=False),
    OpSpec("lu", _quiet(lambda lib, a: lib.lu(a)[0]), [((3, 3),), ((2, 4, 4),)]),
    OpSpec("lu_get_infos", _quiet(lambda lib, a: lib.lu(A=a, pivot=True, get_infos=True).LU), [((4, 2),)]),
    OpSpec("lu_unpack_L", lambda lib, a: lib.lu_unpack(*_l(lib).lu_factor(a)).L,
           [((3, 3),), ((4, 2),), ((2, 2, 4),)]),
    OpSpec("lu_unpack_U", lambda lib, a: lib.lu_unpack(LU_data=_l(lib).lu_factor(a).LU,
                                                       LU_pivots=_l(lib).lu_factor(a).pivots).U,
           [((3, 3),), ((4, 2),), ((2, 2, 4),)]),
    OpSpec("legacy_lu_solve", _quiet(lambda lib, b, a: lib.lu_solve(b, *_l(lib).lu_factor(a))),
           [((3, 2), (3, 3)), ((4, 1, 3, 2), (2, 3, 3))], make_inputs=well_conditioned),
    OpSpec("triangular_solve", _quiet(lambda lib, b, a: lib.triangular_solve(b, a).solution),
           [((3, 2), (3, 3)), ((2, 3, 2), (4, 1, 3, 3))], make_inputs=well_conditioned),
    OpSpec("triangular_solve_options", _quiet(lambda lib, b, a: lib.triangular_solve(
        input=b, A=a, upper=False, transpose=True, unitriangular=False).solution), [((3, 2), (3, 3))],
        make_inputs=well_conditioned),
    OpSpec("triangular_solve_unit_transpose", _quiet(lambda lib, b, a: lib.triangular_solve(
        b, a, True, True, True).solution), [((3, 2), (3, 3))], make_inputs=well_conditioned),
    OpSpec("triangular_solve_both", _triangular_solve_both, [((3, 2), (3, 3))], make_inputs=well_conditioned,
           check_name=False),
    OpSpec("matrix_exp", lambda lib, a: lib.matrix_exp(input=a), SQUARE),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- argument names: those of PyTorch's top-level function --------------------------------------------------------

_TOP_LEVEL = [
    "svd", "qr", "cholesky", "cholesky_solve", "cholesky_inverse", "lu", "lu_unpack", "lu_solve", "triangular_solve",
    "matrix_exp", "matrix_rank", "solve", "lstsq", "eig", "symeig",
]


@pytest.mark.parametrize("name", _TOP_LEVEL)
def test_top_level_argument_names(name):
    ours = [p for p in inspect.signature(getattr(gradiente, name)).parameters if p != "out"]
    assert ours == _torch_names(torch, name, name)


# --- result types and node names of the decompositions ------------------------------------------------------------

def test_legacy_result_types_and_nodes():
    a = np.random.RandomState(0).uniform(-1, 1, size=(4, 3))
    cases = [
        (lambda lib, x: lib.svd(x), ["U", "S", "V"]),
        (lambda lib, x: lib.svd(x, compute_uv=False), ["U", "S", "V"]),
        (lambda lib, x: lib.qr(x), ["Q", "R"]),
        (lambda lib, x: lib.lu(x, get_infos=True), ["LU", "pivots", "info"]),
        (lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x)), ["P", "L", "U"]),
        (lambda lib, x: lib.triangular_solve(x[:3, :2], x[:3]), ["solution", "cloned_coefficient"]),
        (lambda lib, x: lib.linalg.lu(x), ["P", "L", "U"]),
        (lambda lib, x: lib.linalg.lu_factor(x), ["LU", "pivots"]),
        (lambda lib, x: lib.linalg.lu_factor_ex(x), ["LU", "pivots", "info"]),
    ]
    for fn, fields in cases:
        (_, ours), (_, theirs) = both(fn, [a])
        assert type(ours).__name__ == type(theirs).__name__
        assert list(ours._fields) == fields
        assert all(getattr(theirs, f) is theirs[i] for i, f in enumerate(fields))
        assert repr(ours).startswith(f"gradiente.return_types.{type(ours).__name__}(\n{fields[0]}=tensor(")
        for x, y in zip(ours, theirs):
            assert tuple(x.shape) == tuple(y.shape) and str(x.dtype)[10:] == str(y.dtype)[6:]
            assert node_name(x) == node_name(y)
            assert x.requires_grad == y.requires_grad
    (_, ours), (_, theirs) = both(lambda lib, x: lib.lu(x), [a])
    assert type(ours) is tuple and type(theirs) is tuple


def test_output_numbers_of_multi_output_nodes():
    """The differentiable outputs are numbered as in PyTorch (P of an LU is not an output of the node)."""
    a = np.random.RandomState(1).uniform(-1, 1, size=(3, 3))
    for fn in (lambda lib, x: lib.linalg.lu(x), lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x)),
               lambda lib, x: lib.triangular_solve(x, x), lambda lib, x: lib.svd(x)):
        (_, ours), (_, theirs) = both(fn, [a])
        assert [t._output_nr for t in ours if t.requires_grad] == [t.output_nr for t in theirs if t.requires_grad]


def test_svd_some_false_shapes_and_reconstruction():
    a = np.random.RandomState(2).uniform(-1, 1, size=(2, 5, 3))
    (_, ours), (_, theirs) = both(lambda lib, x: lib.svd(x, some=False), [a])
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs] == [(2, 5, 5), (2, 3), (2, 3, 3)]
    u, s, v = (to_np(t) for t in ours)
    np.testing.assert_allclose(u[..., :3] @ (s[..., None] * np.swapaxes(v, -1, -2)), a, atol=1e-12)
    (_, ours), (_, theirs) = both(lambda lib, x: lib.svd(x, compute_uv=False), [a])
    for x, y in zip(ours, theirs):
        assert_same(x, y)


# --- deprecation warnings: PyTorch's text, once per process -------------------------------------------------------

_WARNING_CALLS = {
    "qr": "torch.qr(A)",
    "cholesky": "torch.cholesky(A @ A.mT + torch.eye(3))",
    "lu": "torch.lu(A)",
    "lu_solve": "torch.lu_solve(A, *torch.linalg.lu_factor(A))",
    "triangular_solve": "torch.triangular_solve(A, A)",
}


@pytest.fixture(scope="module")
def torch_warnings():
    """The text of each deprecation warning, from a fresh process (PyTorch warns once per process)."""
    script = ("import json, warnings, torch\nA = torch.randn(3, 3)\nout = {}\n" + "".join(
        f"with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    {call}\n"
        f"    {call}\n    out[{name!r}] = [str(x.message) for x in w]\n" for name, call in _WARNING_CALLS.items())
        + "print(json.dumps(out))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300)
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", list(_WARNING_CALLS))
def test_deprecation_warnings_match_torch_and_come_once(name, torch_warnings, monkeypatch):
    monkeypatch.setattr(legacy_linalg, "_warned", set())
    call = _WARNING_CALLS[name].replace("torch.", "gradiente.")
    namespace = {"gradiente": gradiente, "A": gradiente.randn(3, 3)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(call, namespace)
        exec(call, namespace)
    assert [str(w.message) for w in caught] == torch_warnings[name]
    assert all(w.category is UserWarning for w in caught)


def test_svd_and_the_new_functions_do_not_warn():
    a = gradiente.randn(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradiente.svd(a)
        gradiente.matrix_exp(a)
        gradiente.lu_unpack(*gradiente.linalg.lu_factor(a))
        gradiente.cholesky_inverse(gradiente.linalg.cholesky(a @ a.mT + gradiente.eye(3)))


# --- errors -------------------------------------------------------------------------------------------------------

ERRORS = [
    ("matrix_exp_not_square", lambda lib: lib.matrix_exp(_z(lib, 2, 3))),
    ("matrix_exp_int", lambda lib: lib.matrix_exp(lib.eye(2, dtype=lib.int64))),
    ("svd_1d", lambda lib: lib.svd(_z(lib, 3))),
    ("svd_1d_values_only", lambda lib: lib.svd(_z(lib, 3), compute_uv=False)),
    ("svd_int", lambda lib: lib.svd(lib.eye(2, dtype=lib.int64))),
    ("qr_1d", lambda lib: lib.qr(_z(lib, 3))),
    ("qr_int", lambda lib: lib.qr(lib.eye(2, dtype=lib.int64))),
    ("cholesky_1d", lambda lib: lib.cholesky(_z(lib, 3))),
    ("cholesky_not_square", lambda lib: lib.cholesky(_z(lib, 2, 3))),
    ("cholesky_int", lambda lib: lib.cholesky(lib.eye(2, dtype=lib.int64))),
    ("cholesky_half", lambda lib: lib.cholesky(lib.eye(2, dtype=lib.float16))),
    ("cholesky_solve_1d_b", lambda lib: lib.cholesky_solve(lib.ones(3), lib.eye(3))),
    ("cholesky_solve_1d_factor", lambda lib: lib.cholesky_solve(lib.ones(3, 2), lib.ones(3))),
    ("cholesky_solve_not_square", lambda lib: lib.cholesky_solve(lib.ones(3, 2), lib.ones(3, 2))),
    ("cholesky_solve_sizes", lambda lib: lib.cholesky_solve(lib.ones(3, 2), lib.eye(2))),
    ("cholesky_solve_dtype", lambda lib: lib.cholesky_solve(lib.ones(3, 2, dtype=lib.float64), lib.eye(3))),
    ("cholesky_solve_int", lambda lib: lib.cholesky_solve(lib.ones(3, 2, dtype=lib.int64),
                                                          lib.ones(3, 3, dtype=lib.int64))),
    ("cholesky_solve_batch", lambda lib: lib.cholesky_solve(lib.ones(4, 3, 2), lib.ones(2, 3, 3))),
    ("cholesky_inverse_1d", lambda lib: lib.cholesky_inverse(_z(lib, 3))),
    ("cholesky_inverse_not_square", lambda lib: lib.cholesky_inverse(_z(lib, 3, 2))),
    ("cholesky_inverse_int", lambda lib: lib.cholesky_inverse(lib.eye(3, dtype=lib.int64))),
    ("lu_1d", lambda lib: lib.lu(_z(lib, 3))),
    ("lu_int", lambda lib: lib.lu(lib.eye(2, dtype=lib.int64))),
    ("lu_no_pivot", lambda lib: lib.lu(lib.eye(2), pivot=False)),
    ("lu_unpack_pivot_dtype", lambda lib: lib.lu_unpack(lib.eye(2), _pivots(lib, 1, 2, dtype=lib.int64))),
    ("lu_unpack_pivot_range", lambda lib: lib.lu_unpack(lib.eye(2), _pivots(lib, 1, 3))),
    ("lu_solve_legacy_shapes", lambda lib: lib.lu_solve(lib.ones(3, 1), lib.eye(2), _pivots(lib, 1, 2))),
    ("triangular_solve_1d_b", lambda lib: lib.triangular_solve(lib.ones(3), lib.eye(3))),
    ("triangular_solve_1d_A", lambda lib: lib.triangular_solve(lib.ones(3, 2), lib.ones(3))),
    ("triangular_solve_not_square", lambda lib: lib.triangular_solve(lib.ones(3, 2), lib.ones(3, 2))),
    ("triangular_solve_sizes", lambda lib: lib.triangular_solve(lib.ones(2, 2), lib.eye(3))),
    ("triangular_solve_dtype", lambda lib: lib.triangular_solve(lib.ones(3, 2, dtype=lib.float64), lib.eye(3))),
    ("triangular_solve_int", lambda lib: lib.triangular_solve(lib.ones(2, 2, dtype=lib.int64),
                                                              lib.eye(2, dtype=lib.int64))),
    # removed from PyTorch: the message names the replacement
    ("matrix_rank_removed", lambda lib: lib.matrix_rank(lib.eye(3))),
    ("solve_removed", lambda lib: lib.solve(lib.ones(3, 1), lib.eye(3))),
    ("lstsq_removed", lambda lib: lib.lstsq(lib.ones(3, 1), lib.eye(3))),
    ("eig_removed", lambda lib: lib.eig(lib.eye(3), eigenvectors=True)),
    ("symeig_removed", lambda lib: lib.symeig(lib.eye(3))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


LINALG_ERRORS = [
    ("cholesky_not_positive_definite", lambda lib: lib.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("cholesky_batch", lambda lib: lib.cholesky(lib.stack([lib.eye(2), -lib.eye(2)]))),
    ("cholesky_inverse_zero_diagonal", lambda lib: lib.cholesky_inverse(lib.zeros(3, 3))),
    ("cholesky_inverse_batch", lambda lib: lib.cholesky_inverse(lib.stack([lib.eye(2), lib.zeros(2, 2)]))),
]


@pytest.mark.parametrize("name,fn", LINALG_ERRORS, ids=[e[0] for e in LINALG_ERRORS])
def test_linalg_errors_match_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(torch.linalg.LinAlgError) as expected:
            fn(torch)
        with pytest.raises(gradiente.linalg.LinAlgError) as got:
            fn(gradiente)
    assert str(got.value) == str(expected.value)
