"""``ops/einsum.py``: einsum from the op table (gradcheck in float64, values, gradients and grad_fn names against
PyTorch), its higher-order gradients, result strides, and mixed dtypes; its errors are in test_ops_matmul.py,
its whole decomposed graph in test_silent_regressions.py."""
import pytest
from harness import OpSpec, assert_same_tensors, both_quietly, check_strides_match_torch, on_both, spec_tests

import gradiente

torch = pytest.importorskip("torch")

SPECS = []

EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (2,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->j", [(2, 2, 3)]),
    ("ij,ij->i", [(2, 3), (2, 3)]), ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]), ("...ij,jk->...ik", [(3, 4), (4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("bi,bj->bij", [(2, 3), (2, 4)]), ("i j , j -> i", [(2, 3), (3,)]),
]

# einsum is recorded as PyTorch records it: the permutes, views and bmm it decomposes the contraction into.
def _einsum(equation):
    return lambda lib, *xs: lib.einsum(equation, *xs)


SPECS += [OpSpec(f"einsum[{eq}]", _einsum(eq), [tuple(shapes)]) for eq, shapes in EINSUMS]
SPECS.append(OpSpec("einsum_list", lambda lib, x, y: lib.einsum("ij,j->i", [x, y]), [((2, 3), (3,))]))


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def test_einsum_gradients_of_higher_order():
    x = gradiente.randn(3, 3, dtype=gradiente.float64, requires_grad=True)
    y = gradiente.randn(3, 4, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradgradcheck(lambda x, y: gradiente.einsum("ij,jk->ik", x, y) ** 2, (x, y))
    assert gradiente.autograd.gradgradcheck(lambda x: gradiente.einsum("ii->i", x) ** 3, (x,))


@pytest.mark.parametrize("equation,operands", [
    ("ij,jk->ik", lambda x: (x, x.t())),
    ("ij,kj->ik", lambda x: (x, x)),
    ("ij,jk->ki", lambda x: (x, x.t())),
    ("bij,bjk->bik", lambda x: (x.reshape(1, 3, 4), x.t().reshape(1, 4, 3))),
    ("i,j->ji", lambda x: (x[0], x[1])),
    ("ij,ik->jk", lambda x: (x, x)),
    ("ij->ji", lambda x: (x,)),
    ("ii->i", lambda x: (x[:, :3],)),
], ids=["mm", "mm_nt", "mm_transposed_out", "bmm", "outer", "tn", "transpose_view", "diagonal_view"])
def test_einsum_result_strides_match_torch(equation, operands):
    check_strides_match_torch(lambda lib, x: lib.einsum(equation, *operands(x)))


def test_einsum_result_reshapes_to_a_view_as_in_torch():
    """The issue's case: a contraction's result is contiguous, so reshape views it and a write reaches it."""
    def run(lib):
        y = lib.einsum("ij,kj->ik", lib.arange(6.0).reshape(2, 3), lib.ones(2, 3))
        y.reshape(-1)[0] = 100.0
        return y.view(4)
    assert_same_tensors(*both_quietly(run))


@pytest.mark.parametrize("equation,shapes", [("i,j->j", ((2,), (3,))), ("i,i->", ((2,), (2,))),
                                             ("i,j->ij", ((2,), (3,))), ("...i,j->...j", ((2, 2), (3,))),
                                             ("ij,jk->ik", ((2, 3), (3, 2)))])
def test_einsum_of_mixed_float_dtypes_as_pytorch(equation, shapes):
    """Issue 13, found by tools/random_programs.py: PyTorch's einsum promotes where it multiplies the operands
    and refuses mixed dtypes only where it contracts two of them with bmm; gradiente refused every mix."""
    def scenario(lib):
        a = lib.ones(*shapes[0], requires_grad=True)
        b = lib.ones(*shapes[1], dtype=lib.float64, requires_grad=True)
        out = lib.einsum(equation, a, b)
        out.sum().backward()
        return str(out.dtype)[-7:], out.tolist(), str(a.grad.dtype)[-7:], a.grad.tolist(), b.grad.tolist()
    on_both(scenario)
