"""Products and matrix helpers (tensordot, inner, vdot, kron, addmv, addr, cross, cdist, dist, diag_embed,
block_diag, chain_matmul) and the top-level linalg names (det, logdet, slogdet, inverse, matrix_power,
pinverse): float64 gradcheck, differential tests against PyTorch with grad_fn names, gradgradcheck; then
graphs, warnings and error messages against PyTorch."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests
from test_ops_linalg import positive_definite, well_conditioned

import gradiente
from gradiente.ops import products

torch = pytest.importorskip("torch")


def _quiet(fn):
    """``fn`` with the deprecation warnings of both libraries silenced (tested on their own below)."""
    def call(lib, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *xs)
    return call


def _cdist(p, **kwargs):
    return lambda lib, x, y: lib.cdist(x, y, p=p, **kwargs)


SPECS = [
    # tensordot: an int, explicit pairs (out of order), zero dims (an outer product), all dims
    OpSpec("tensordot_int", lambda lib, x, y: lib.tensordot(x, y, dims=2), [((2, 3, 4), (3, 4, 5)),
                                                                             ((3, 4), (3, 4))]),
    OpSpec("tensordot_one", lambda lib, x, y: lib.tensordot(x, y, 1), [((2, 3), (3, 4))]),
    OpSpec("tensordot_pairs", lambda lib, x, y: lib.tensordot(x, y, dims=([1, 2], [2, 0])),
           [((2, 3, 4), (4, 5, 3))]),
    OpSpec("tensordot_lists", lambda lib, x, y: lib.tensordot(x, y, dims=[[0], [1]]), [((3, 2), (4, 3))]),
    OpSpec("tensordot_zero", lambda lib, x, y: lib.tensordot(x, y, dims=0), [((2,), (3,))]),
    OpSpec("tensordot_all", lambda lib, x, y: lib.tensordot(x, y, dims=([0, 1], [0, 1])), [((2, 3), (2, 3))]),
    OpSpec("inner", lambda lib, x, y: lib.inner(x, y), [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,))]),
    OpSpec("inner_scalar", lambda lib, x, y: x.inner(y), [((), (3,))]),
    OpSpec("vdot", lambda lib, x, y: lib.vdot(x, y), [((4,), (4,))]),
    OpSpec("kron", lambda lib, x, y: lib.kron(x, y), [((2, 3), (3, 2)), ((2,), (3,)), ((2,), (2, 3)),
                                                      ((2, 1, 2), (3, 2))]),
    OpSpec("kron_method", lambda lib, x, y: x.kron(y), [((2, 2), (2,))]),
    OpSpec("addmv", lambda lib, b, a, v: lib.addmv(b, a, v), [((2,), (2, 3), (3,)), ((), (2, 3), (3,)),
                                                              ((1,), (2, 3), (3,))]),
    OpSpec("addmv_scaled", lambda lib, b, a, v: b.addmv(a, v, beta=0.5, alpha=-2.0), [((2,), (2, 3), (3,))]),
    OpSpec("addr", lambda lib, b, u, v: lib.addr(b, u, v), [((2, 3), (2,), (3,)), ((3,), (2,), (3,)),
                                                            ((), (2,), (3,))]),
    OpSpec("addr_scaled", lambda lib, b, u, v: b.addr(u, v, beta=2.0, alpha=0.5), [((2, 3), (2,), (3,))]),
    OpSpec("cross", lambda lib, x, y: lib.cross(x, y, dim=-1), [((4, 3), (4, 3)), ((4, 3), (1, 3)), ((3,), (3,))]),
    OpSpec("cross_dim0", lambda lib, x, y: x.cross(y, dim=0), [((3, 2), (3, 2))]),
    OpSpec("cross_default_dim", _quiet(lambda lib, x, y: lib.cross(x, y)), [((2, 3), (2, 3)), ((3, 3), (3, 1))]),
    OpSpec("cdist", _cdist(2.0), [((3, 4), (5, 4)), ((2, 3, 4), (2, 5, 4)), ((2, 3, 4), (5, 4))]),
    OpSpec("cdist_p1", _cdist(1.0), [((3, 4), (5, 4))]),
    OpSpec("cdist_inf", _cdist(float("inf")), [((3, 4), (5, 4))]),
    OpSpec("cdist_p3", _cdist(3.0), [((3, 4), (2, 4))]),
    OpSpec("cdist_p_half", _cdist(0.5), [((3, 4), (2, 4))]),
    OpSpec("cdist_p0", _cdist(0.0), [((3, 4), (2, 4))]),
    # More than 25 rows: PyTorch computes the euclidean distances with one matrix product (and so do we).
    OpSpec("cdist_by_product", _cdist(2.0), [((30, 3), (4, 3))], rtol32=1e-4, atol32=1e-4),
    OpSpec("cdist_mm_forced", _cdist(2.0, compute_mode="use_mm_for_euclid_dist"), [((3, 4), (5, 4))],
           rtol32=1e-4, atol32=1e-4),
    OpSpec("cdist_no_mm", _cdist(2.0, compute_mode="donot_use_mm_for_euclid_dist"), [((30, 3), (4, 3))]),
    OpSpec("dist", lambda lib, x, y: lib.dist(x, y), [((2, 3), (2, 3)), ((2, 3), (3,))]),
    OpSpec("dist_p", lambda lib, x, y: x.dist(y, 3), [((4,), (4,))]),
    OpSpec("dist_p1", lambda lib, x, y: lib.dist(x, y, 1), [((4,), (4,))]),
    OpSpec("dist_inf", lambda lib, x, y: lib.dist(x, y, float("inf")), [((4,), (4,))]),
    OpSpec("diag_embed", lambda lib, x: lib.diag_embed(x), [((3,),), ((2, 3),)]),
    OpSpec("diag_embed_offset", lambda lib, x: x.diag_embed(offset=1, dim1=0, dim2=2), [((2, 3),)]),
    OpSpec("diag_embed_negative", lambda lib, x: lib.diag_embed(x, -1, dim1=-1, dim2=0), [((2, 3),)]),
    OpSpec("block_diag", lambda lib, *xs: lib.block_diag(*xs), [((2, 3), (3,), (), (2, 2)), ((1, 2), (2, 1))]),
    OpSpec("chain_matmul", _quiet(lambda lib, *xs: lib.chain_matmul(*xs)), [((2, 3), (3, 4), (4, 2)),
                                                                          ((2, 3), (3, 4)), ((2, 3),)]),
    OpSpec("det", lambda lib, x: lib.det(x), [((3, 3),), ((2, 3, 3),)], make_inputs=well_conditioned),
    OpSpec("det_method", lambda lib, x: x.det(), [((2, 2),)], make_inputs=well_conditioned),
    OpSpec("logdet", lambda lib, x: lib.logdet(x), [((3, 3),), ((2, 3, 3),)], make_inputs=positive_definite),
    OpSpec("logdet_negative", lambda lib, x: x.logdet(), [((3, 3),)], make_inputs=well_conditioned),
    OpSpec("slogdet", lambda lib, x: lib.slogdet(x).logabsdet, [((3, 3),), ((2, 3, 3),)],
           make_inputs=well_conditioned),
    OpSpec("inverse", lambda lib, x: lib.inverse(x), [((3, 3),), ((2, 3, 3),)], make_inputs=well_conditioned),
    OpSpec("inverse_method", lambda lib, x: x.inverse(), [((2, 2),)], make_inputs=well_conditioned),
    OpSpec("matrix_power", lambda lib, x: lib.matrix_power(x, 3), [((3, 3),)]),
    OpSpec("matrix_power_method", lambda lib, x: x.matrix_power(-2), [((3, 3),)], make_inputs=well_conditioned),
    OpSpec("pinverse", lambda lib, x: lib.pinverse(x), [((3, 2),), ((2, 4),)]),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _chain(t, depth=4):
    names, node = [], t.grad_fn
    while node is not None and len(names) < depth:
        names.append(type(node).__name__)
        node = next((n for n, _ in node.next_functions if n is not None and type(n).__name__ != "AccumulateGrad"),
                    None)
    return names


GRAPHS = [
    ("tensordot", lambda lib, x, y: lib.tensordot(x, y, dims=1), [(2, 3), (3, 4)]),
    ("inner", lambda lib, x, y: lib.inner(x, y), [(2, 3), (4, 3)]),
    ("kron", lambda lib, x, y: lib.kron(x, y), [(2, 2), (2, 3)]),
    ("chain_matmul", _quiet(lambda lib, x, y, z: lib.chain_matmul(x, y, z)), [(3, 4), (4, 3), (3, 4)]),
    ("logdet", lambda lib, x: lib.logdet(x), [(3, 3)]),
    ("matrix_power_0", lambda lib, x: lib.matrix_power(x, 0), [(3, 3)]),
    ("matrix_power_5", lambda lib, x: lib.matrix_power(x, 5), [(3, 3)]),
    ("matrix_power_-3", lambda lib, x: lib.matrix_power(x, -3), [(3, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_graph_is_torchs_graph(name, fn, shapes):
    """PyTorch composes these from other ops; the chain of nodes below the result is PyTorch's too."""
    def chain(lib):
        inputs = [lib.eye(s[0]) + lib.ones(s) if s[0] == s[-1] else lib.ones(s) for s in shapes]
        return _chain(fn(lib, *[t.requires_grad_() for t in inputs]))
    assert chain(gradiente) == chain(torch)


def test_matrix_power_zero_has_zero_gradient():
    x = gradiente.randn(3, 3, requires_grad=True)
    gradiente.matrix_power(x, 0).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 3


def test_det_gradient_of_a_singular_matrix_is_the_cofactor_matrix():
    """det is a polynomial, so its gradient exists at a singular A too: the cofactor matrix. PyTorch 2.13
    returns zeros there (pytorch/pytorch#104675); gradiente differs on purpose and agrees with finite
    differences."""
    a = gradiente.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=gradiente.float64,
                         requires_grad=True)
    gradiente.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)
    assert gradiente.autograd.gradcheck(gradiente.det, (a.detach().requires_grad_(),))
    b = gradiente.zeros(2, 2, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradcheck(gradiente.det, (b,))


def test_cross_default_dim_warns_and_takes_first_dim_of_size_3(monkeypatch):
    monkeypatch.setattr(products, "_warned", set())
    x, y = gradiente.randn(3, 4), gradiente.randn(3, 4)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        out = gradiente.cross(x, y)
    np.testing.assert_allclose(out.numpy(), np.cross(x.numpy(), y.numpy(), axis=0), rtol=1e-6)


def test_cross_default_dim_warns_once_in_torchs_words(monkeypatch):
    """PyTorch's warning ends with the C++ line that gave it, and comes once per process (TORCH_WARN_ONCE): a
    second call, even from another line and with every warning shown, is silent."""
    monkeypatch.setattr(products, "_warned", set())
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.cross(torch.ones(3), torch.ones(3))
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        gradiente.cross(gradiente.ones(3), gradiente.ones(3))
        gradiente.cross(gradiente.ones(3, 2), gradiente.ones(3, 2))
    assert [str(w.message) for w in ours] == [products._CROSS_DEFAULT_DIM]
    if theirs:      # empty when an earlier test of this process made PyTorch warn already
        assert str(theirs[0].message) == products._CROSS_DEFAULT_DIM


def test_chain_matmul_warns():
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        gradiente.chain_matmul(gradiente.ones(2, 2), gradiente.ones(2, 2))


def test_slogdet_result_type():
    x = gradiente.tensor([[2.0, 0.0], [0.0, -3.0]])
    result = gradiente.slogdet(x)
    assert type(result).__name__ == "slogdet" and result.sign.item() == -1.0
    np.testing.assert_allclose(result.logabsdet.item(), np.log(6.0), rtol=1e-6)
    assert [t.item() for t in result] == [result.sign.item(), result.logabsdet.item()]
    assert repr(result).startswith("gradiente.return_types.slogdet(\nsign=tensor(-1.)")


def test_cdist_inf_ties_each_get_the_whole_gradient():
    """Unlike max, cdist's ∞-norm gives every tied coordinate the full gradient (as PyTorch does); dist shares it."""
    def grads(lib):
        a = lib.tensor([[0.0, 0.0]], requires_grad=True)
        lib.cdist(a, lib.tensor([[1.0, -1.0]]), p=float("inf")).sum().backward()
        b = lib.tensor([0.0, 0.0], requires_grad=True)
        lib.dist(b, lib.tensor([1.0, -1.0]), float("inf")).backward()
        return a.grad.tolist(), b.grad.tolist()
    assert grads(gradiente) == grads(torch)


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("float32", "float64"), ("int64", "float32")])
def test_result_dtypes(dtypes):
    def results(lib):
        x, y = (lib.ones(3, dtype=getattr(lib, d)) for d in dtypes)
        out = [lib.kron(x, y).dtype, lib.addr(lib.ones(3, 3, dtype=getattr(lib, dtypes[0])), x, y).dtype,
               lib.block_diag(x, y).dtype]
        if dtypes[0] == dtypes[1]:
            out += [lib.tensordot(x, y, 1).dtype, lib.inner(x, y).dtype, lib.diag_embed(x).dtype,
                    lib.cross(x, y, dim=0).dtype, lib.addmv(x, lib.ones(3, 3, dtype=x.dtype), y).dtype]
        return [str(d).split(".")[-1] for d in out]
    assert results(gradiente) == results(torch)


def test_block_diag_of_nothing():
    assert tuple(gradiente.block_diag().shape) == tuple(torch.block_diag().shape) == (1, 0)


def test_products_double_backward():
    x = gradiente.randn(3, 4, dtype=gradiente.float64, requires_grad=True)
    y = gradiente.randn(4, 2, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradgradcheck(lambda x, y: gradiente.tensordot(x, y, 1) ** 2, (x, y))
    assert gradiente.autograd.gradgradcheck(lambda x, y: gradiente.cdist(x, y.mT, p=3.0) ** 2, (x, y))


def _singular(lib):
    return lib.tensor([[1.0, 2.0], [2.0, 4.0]])


ERRORS = [
    ("tensordot_sizes", lambda lib: lib.tensordot(lib.zeros(2, 3), lib.zeros(4, 5), dims=1)),
    ("tensordot_lengths", lambda lib: lib.tensordot(lib.zeros(2, 3), lib.zeros(3, 5), dims=([1], [0, 1]))),
    ("tensordot_negative", lambda lib: lib.tensordot(lib.zeros(2, 3), lib.zeros(3, 5), dims=-1)),
    ("tensordot_too_many", lambda lib: lib.tensordot(lib.zeros(2, 3), lib.zeros(3, 5), dims=3)),
    ("tensordot_dtype", lambda lib: lib.tensordot(lib.zeros(2, 3), lib.zeros(3, 5, dtype=lib.float64), dims=1)),
    ("inner_sizes", lambda lib: lib.inner(lib.zeros(2, 3), lib.zeros(2, 4))),
    ("vdot_sizes", lambda lib: lib.vdot(lib.zeros(3), lib.zeros(4))),
    ("vdot_2d", lambda lib: lib.vdot(lib.zeros(3, 1), lib.zeros(3))),
    ("addmv_sizes", lambda lib: lib.addmv(lib.zeros(2), lib.zeros(2, 3), lib.zeros(4))),
    ("addmv_bias", lambda lib: lib.addmv(lib.zeros(3), lib.zeros(2, 3), lib.zeros(3))),
    ("addmv_dims", lambda lib: lib.addmv(lib.zeros(2), lib.zeros(2, 3, 1), lib.zeros(3))),
    ("addmv_2d_bias", lambda lib: lib.addmv(lib.zeros(2, 2), lib.zeros(2, 3), lib.zeros(3))),
    ("addmv_dtype", lambda lib: lib.addmv(lib.zeros(2), lib.zeros(2, 3), lib.zeros(3, dtype=lib.float64))),
    ("addr_sizes", lambda lib: lib.addr(lib.zeros(2, 3), lib.zeros(2), lib.zeros(4))),
    ("addr_dims", lambda lib: lib.addr(lib.zeros(2, 3), lib.zeros(2, 1), lib.zeros(3))),
    ("cross_length", lambda lib: lib.cross(lib.zeros(2, 4), lib.zeros(2, 4), dim=1)),
    ("cross_no_dim_of_3", _quiet(lambda lib: lib.cross(lib.zeros(2, 4), lib.zeros(2, 4)))),
    ("cross_broadcast", _quiet(lambda lib: lib.cross(lib.zeros(3, 2), lib.zeros(3, 3)))),
    ("cross_ndim", lambda lib: lib.cross(lib.zeros(3), lib.zeros(2, 3), dim=-1)),
    ("cross_dtype", lambda lib: lib.cross(lib.zeros(3), lib.zeros(3, dtype=lib.float64), dim=0)),
    ("cross_dim_range", lambda lib: lib.cross(lib.zeros(4, 3), lib.zeros(4, 3), dim=2)),
    ("cdist_1d", lambda lib: lib.cdist(lib.zeros(3), lib.zeros(3))),
    ("cdist_1d_second", lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(3))),
    ("cdist_columns", lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 4))),
    ("cdist_p", lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3), p=-1)),
    ("cdist_int", lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3, dtype=lib.int64))),
    ("cdist_batch", lambda lib: lib.cdist(lib.zeros(2, 2, 3), lib.zeros(3, 2, 3))),
    ("cdist_dtype", lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3, dtype=lib.float64))),
    ("cdist_mode", lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3), compute_mode="x")),
    ("dist_sizes", lambda lib: lib.dist(lib.zeros(2), lib.zeros(3))),
    ("dist_int", lambda lib: lib.dist(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))),
    ("diag_embed_same_dims", lambda lib: lib.diag_embed(lib.zeros(2, 3), dim1=0, dim2=0)),
    ("diag_embed_range", lambda lib: lib.diag_embed(lib.zeros(2, 3), dim1=5)),
    ("block_diag_3d", lambda lib: lib.block_diag(lib.zeros(2, 2), lib.zeros(2, 2, 2))),
    ("chain_matmul_3d", _quiet(lambda lib: lib.chain_matmul(lib.zeros(2, 2), lib.zeros(2, 2, 2)))),
    ("chain_matmul_none", _quiet(lambda lib: lib.chain_matmul())),
    ("det_not_square", lambda lib: lib.det(lib.zeros(2, 3))),
    ("det_1d", lambda lib: lib.det(lib.zeros(3))),
    ("det_int", lambda lib: lib.det(lib.eye(2, dtype=lib.int64))),
    ("slogdet_not_square", lambda lib: lib.slogdet(lib.zeros(2, 3))),
    ("logdet_not_square", lambda lib: lib.logdet(lib.zeros(2, 3))),
    ("inverse_not_square", lambda lib: lib.inverse(lib.zeros(2, 3))),
    ("matrix_power_not_square", lambda lib: lib.matrix_power(lib.zeros(2, 3), 2)),
    ("matrix_power_int_inverse", lambda lib: lib.matrix_power(lib.eye(2, dtype=lib.int64), -1)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


@pytest.mark.parametrize("fn", [lambda lib: lib.inverse(_singular(lib)),
                                lambda lib: lib.matrix_power(_singular(lib), -1)], ids=["inverse", "matrix_power"])
def test_singular_inverse_is_a_linalg_error(fn):
    """PyTorch raises ``torch.linalg.LinAlgError`` (a RuntimeError); we raise ``gradiente.linalg.LinAlgError``."""
    with pytest.raises(torch.linalg.LinAlgError) as expected:
        fn(torch)
    with pytest.raises(gradiente.linalg.LinAlgError, match=r"^linalg\.inv") as got:
        fn(gradiente)
    assert str(got.value) == str(expected.value) and isinstance(got.value, RuntimeError)


def test_integer_products_match_torch():
    def values(lib):
        x, m = lib.arange(3), lib.arange(9).reshape(3, 3)
        return [lib.kron(x, x).tolist(), lib.tensordot(m, m, 1).tolist(), lib.addmv(x, m, x).tolist(),
                lib.matrix_power(m, 3).tolist(), lib.matrix_power(m, 0).tolist(), lib.diag_embed(x).tolist(),
                lib.cross(x, x + 1, dim=0).tolist()]
    assert values(gradiente) == values(torch)


def test_torch_level_addmv_in_place_matches_torch():
    rng = np.random.default_rng(5)
    x, m, v = rng.standard_normal(3), rng.standard_normal((3, 3)), rng.standard_normal(3)
    results = []
    for lib in (gradiente, torch):
        into = lib.tensor(x)
        out = lib.addmv_(into, lib.tensor(m), lib.tensor(v), beta=2, alpha=0.5)
        assert out is into
        weight = lib.tensor(m, requires_grad=True)
        base = lib.tensor(x, requires_grad=True) * 1
        lib.addmv_(base, weight, lib.tensor(v)).sum().backward()
        results.append((into.numpy(), type(base.grad_fn).__name__, weight.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert results[0][1] == results[1][1]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    check_same_error(lambda lib: lib.addmv_(lib.zeros(1), lib.zeros(3, 3), lib.zeros(3)))
    check_same_error(lambda lib: lib.addmv_(lib.zeros(3, requires_grad=True), lib.zeros(3, 3), lib.zeros(3)))
    check_same_error(lambda lib: lib.addmv_(lib.zeros(3), lib.zeros(3, 3), lib.zeros(4)))
