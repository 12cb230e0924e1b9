"""The ops of ``ops/matmul.py`` from the op table: matmul for every rank combination (with PyTorch's graph), mm, mv,
dot, bmm, addmm, baddbmm, addbmm, outer, trace (einsum's errors too; the rest of einsum: test_ops_einsum.py);
gradcheck in float64 and differential tests against PyTorch;
then values, dtypes and error messages against PyTorch, and the node and gradient of addbmm_ on a non-leaf."""
import math
import warnings

import pytest
from harness import (
    OpSpec,
    assert_same_tensors,
    both_quietly,
    check_in_place_chain,
    check_same_error,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((4, 2, 3), (3, 5)), ((4, 2, 3), (3,)), ((3,), (4, 3, 5)), ((5, 3), (4, 3, 2)),
    ((4, 2, 3), (4, 3, 5)), ((2, 2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (4, 5)), ((3, 4), (2, 2, 4, 5)),
    ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((2, 3, 4), (4, 2)),
]

SPECS = [
    OpSpec("matmul", lambda lib, x, y: x @ y, MATMUL_SHAPES),
    # Without a gradient for the right operand, PyTorch folds only contiguous batches; strided ones take bmm.
    OpSpec("matmul_left_grad", lambda lib, x, y: lib.matmul(x, y), [((4, 2, 3), (3, 5)), ((2, 2, 3, 4), (4,))],
           grad_inputs=[0]),
    OpSpec("matmul_right_grad", lambda lib, x, y: x.matmul(y), [((5, 3), (4, 3, 2)), ((4, 2, 3), (3, 5))],
           grad_inputs=[1]),
    OpSpec("mm", lambda lib, x, y: lib.mm(x, y), [((2, 3), (3, 4))]),
    OpSpec("mv", lambda lib, x, y: x.mv(y), [((2, 3), (3,))]),
    OpSpec("dot", lambda lib, x, y: lib.dot(x, y), [((3,), (3,))]),
    OpSpec("bmm", lambda lib, x, y: x.bmm(y), [((2, 3, 4), (2, 4, 5))]),
    OpSpec("outer", lambda lib, x, y: lib.outer(x, y), [((3,), (4,))]),
    OpSpec("ger", lambda lib, x, y: x.ger(y), [((3,), (2,))]),
    OpSpec("addmm", lambda lib, b, x, y: lib.addmm(b, x, y), [((4,), (2, 3), (3, 4)), ((2, 4), (2, 3), (3, 4)),
                                                            ((), (2, 3), (3, 4)), ((2, 1), (2, 3), (3, 4))]),
    OpSpec("addmm_scaled", lambda lib, b, x, y: b.addmm(x, y, beta=0.5, alpha=-2.0), [((2, 4), (2, 3), (3, 4))]),
    OpSpec("addmm_linear", lambda lib, x, w, b: lib.addmm(b, x, w.t()), [((5, 3), (4, 3), (4,))]),
    OpSpec("baddbmm", lambda lib, b, x, y: lib.baddbmm(b, x, y, alpha=1.5), [((2, 3, 5), (2, 3, 4), (2, 4, 5)),
                                                                           ((5,), (2, 3, 4), (2, 4, 5))]),
    OpSpec("trace", lambda lib, x: x.trace(), [((3, 3),), ((2, 4),)]),
    OpSpec("t", lambda lib, x: lib.t(x), [((2, 3),)]),
    # the method form, on a vector too (a 1-D tensor is its own transpose)
    OpSpec("mm_method", lambda lib, x, y: x.mm(y), [((2, 3), (3, 4))]),
    OpSpec("matmul_vec", lambda lib, x, y: lib.matmul(x, y), [((3,), (3,)), ((2, 3), (3,)), ((4, 2, 3), (3, 5))]),
    OpSpec("t_method", lambda lib, x: x.t(), [((2, 3),), ((3,),)]),
    OpSpec("addbmm", lambda lib, x, a, b: lib.addbmm(x, a, b, beta=0.5, alpha=2), [((2, 4), (3, 2, 5), (3, 5, 4)),
                                                                                    ((4,), (2, 3, 2), (2, 2, 4))]),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _chain(t, depth=5):
    names, node = [], t.grad_fn
    while node is not None and len(names) < depth:
        names.append(type(node).__name__)
        node = next((n for n, _ in node.next_functions if n is not None), None)
    return names


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=lambda s: "@".join("x".join(map(str, p)) for p in s))
def test_matmul_graph_is_torchs_graph(shapes):
    """Not only the last node: the whole chain (folds, views, expands, the product) is PyTorch's."""
    def chain(lib):
        x, y = (lib.ones(s, requires_grad=True) for s in shapes)
        return _chain(x @ y)
    assert chain(gradiente) == chain(torch)


def test_matmul_integers():
    g = gradiente.arange(6).reshape(2, 3) @ gradiente.arange(3)
    assert g.tolist() == [5, 14] and g.dtype == gradiente.int64


def test_matmul_double_backward():
    x = gradiente.randn(2, 2, 3, dtype=gradiente.float64, requires_grad=True)
    y = gradiente.randn(3, 2, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradgradcheck(lambda x, y: (x @ y) ** 2, (x, y))
    b = gradiente.randn(2, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradgradcheck(lambda b, x, y: gradiente.addmm(b, x[0], y) ** 2, (b, x, y))


ERRORS = [
    ("mm_shapes", lambda lib: lib.zeros(3, 4).mm(lib.zeros(3, 4))),
    ("mm_dtype", lambda lib: lib.zeros(2, 3).mm(lib.zeros(3, 4, dtype=lib.float64))),
    ("mm_not_matrix", lambda lib: lib.zeros(2, 3).mm(lib.zeros(3))),
    ("matmul_dtype", lambda lib: lib.zeros(2, 3) @ lib.zeros(3, 4, dtype=lib.float64)),
    ("matmul_0d", lambda lib: lib.zeros(3) @ lib.tensor(1.0)),
    ("matmul_2d_1d", lambda lib: lib.zeros(3, 4) @ lib.zeros(3)),
    ("matmul_1d_2d", lambda lib: lib.zeros(4) @ lib.zeros(3, 4)),
    ("matmul_1d_1d", lambda lib: lib.zeros(3) @ lib.zeros(4)),
    ("matmul_folded", lambda lib: lib.zeros(2, 3, 4) @ lib.zeros(3, 5)),
    ("matmul_batched", lambda lib: lib.zeros(2, 3, 4) @ lib.zeros(2, 3, 4)),
    ("matmul_batch_sizes", lambda lib: lib.zeros(2, 3, 4) @ lib.zeros(3, 4, 4)),
    ("bmm_sizes", lambda lib: lib.zeros(2, 3, 4).bmm(lib.zeros(2, 3, 4))),
    ("bmm_batch", lambda lib: lib.zeros(2, 3, 4).bmm(lib.zeros(3, 4, 4))),
    ("bmm_2d", lambda lib: lib.zeros(3, 4).bmm(lib.zeros(3, 4, 4))),
    ("bmm_dtype", lambda lib: lib.zeros(2, 2, 3).bmm(lib.zeros(2, 3, 4, dtype=lib.float64))),
    ("dot_dtype", lambda lib: lib.zeros(3).dot(lib.zeros(3, dtype=lib.float64))),
    ("outer_2d", lambda lib: lib.outer(lib.zeros(2, 3), lib.zeros(4))),
    ("addmm_bias", lambda lib: lib.addmm(lib.zeros(3), lib.zeros(2, 3), lib.zeros(3, 4))),
    ("addmm_vector", lambda lib: lib.addmm(lib.zeros(2), lib.zeros(3), lib.zeros(3, 2))),
    ("addmm_shapes", lambda lib: lib.addmm(lib.zeros(2), lib.zeros(2, 3), lib.zeros(4, 2))),
    ("trace_1d", lambda lib: lib.trace(lib.zeros(3))),
    ("t_3d", lambda lib: lib.zeros(2, 3, 4).t()),
    ("einsum_sizes", lambda lib: lib.einsum("ij,jk->ik", lib.zeros(2, 3), lib.zeros(4, 5))),
    ("einsum_operands", lambda lib: lib.einsum("ij,jk->ik", lib.zeros(2, 3))),
    ("einsum_subscripts", lambda lib: lib.einsum("ijk", lib.zeros(2, 3))),
    ("einsum_output", lambda lib: lib.einsum("ij->k", lib.zeros(2, 3))),
    ("einsum_dtype", lambda lib: lib.einsum("ij,jk", lib.zeros(2, 3), lib.zeros(3, 4, dtype=lib.float64))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_match_torch(name, fn):
    check_same_error(fn)


# --- addbmm -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(2, 2, 4), lib.ones(2, 4, 3)),
    lambda lib: lib.addbmm(lib.ones(3, dtype=lib.int64), lib.ones(2, 2, 4, dtype=lib.int64),
                           lib.ones(2, 4, 3, dtype=lib.int64), beta=2),
    lambda lib: lib.addbmm(lib.full((2, 3), float("nan")), lib.ones(2, 2, 4), lib.ones(2, 4, 3), beta=0),
    lambda lib: lib.ones(2, 3).addbmm_(lib.ones(2, 2, 4), lib.ones(2, 4, 3), alpha=0.5),
], ids=lambda fn: "")
def test_addbmm_matches_torch(fn):
    assert_same_tensors(*both_quietly(fn))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(2, 2, 4), lib.ones(1, 4, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(2, 4), lib.ones(2, 4, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(2, 2, 4), lib.ones(2, 4, 3, dtype=lib.float64)),
    lambda lib: lib.addbmm(lib.ones(4), lib.ones(2, 2, 4), lib.ones(2, 4, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(2, 2, 4), lib.ones(2, 5, 3)),
], ids=lambda fn: "")
def test_addbmm_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


def test_in_place_forms_record_torchs_nodes():
    """addbmm_ on a non-leaf: the same node and the same gradient (split from the chain of test_ops_scattering.py's
    test of this name)."""
    def chain(lib, y):
        return [type(y.addbmm_(lib.ones(2, 3, 2), lib.ones(2, 2, 4)).grad_fn).__name__]
    check_in_place_chain(chain)


# --- out= (the tensors tutorial writes torch.matmul(tensor, tensor.T, out=y3)) --------------------------------

def _product_into(lib, name, shapes, out_dtype, grad):
    x = lib.arange(1.0, 1.0 + math.prod(shapes[0])).reshape(shapes[0]).requires_grad_(grad)
    y = lib.linspace(-1.0, 2.0, math.prod(shapes[1])).reshape(shapes[1])
    out = lib.full((4, 4), 7.0, dtype=out_dtype)
    returned = getattr(lib, name)(x, y, out=out)
    return returned, out, returned is out


OUT_CASES = [("matmul", s) for s in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                     ((4, 2, 3), (3, 5)), ((4, 2, 3), (4, 3, 5))]] + [
    ("mm", ((2, 3), (3, 4))), ("mv", ((2, 3), (3,))), ("dot", ((3,), (3,))), ("bmm", ((2, 2, 3), (2, 3, 4)))]


@pytest.mark.parametrize("name,shapes", OUT_CASES, ids=[f"{n}{s}" for n, s in OUT_CASES])
def test_products_write_into_out(name, shapes):
    ours, theirs = both_quietly(lambda lib: _product_into(lib, name, shapes, lib.float32, False))
    assert_same_tensors(ours[:2], theirs[:2])
    assert ours[2] and theirs[2]


@pytest.mark.parametrize("name,shapes", OUT_CASES, ids=[f"{n}{s}" for n, s in OUT_CASES])
@pytest.mark.parametrize("out_dtype,grad", [("int64", False), ("float64", False), ("float32", True)])
def test_products_refuse_out_as_torch(name, shapes, out_dtype, grad):
    """A dtype that differs (each kernel words it in its own way) and an input that requires grad."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(lambda lib: _product_into(lib, name, shapes, getattr(lib, out_dtype), grad))


@pytest.mark.parametrize("shape", [(2,), (0,), (3,)])
def test_mv_out_of_the_right_shape_fails_addmvs_check(shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3), out=lib.empty(shape, dtype=lib.int64)))
