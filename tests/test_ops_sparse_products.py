"""The legacy sparse products (``ops/sparse_products.py``: ``dsmm``, ``smm``, ``hsmm``, ``hspmm``, ``saddmm``,
``sspaddmm``, and the ``smm``/``sspaddmm`` methods) against PyTorch 2.13: the stored indices and values (uncoalesced
as PyTorch leaves them), sparse and dense dims, printing, ``dsmm``'s node and gradients with a float64 gradcheck,
the sparse results' missing derivative, and PyTorch's errors."""
import numpy as np
import pytest
from harness import check_same_error

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


def text(value):
    return str(value).replace("gradiente.", "torch.")


def operands(lib, requires_grad=False):
    """S (3 × 3, one empty row), D (3 × 2) and M (3 × 2), float64; S and M sparse."""
    s = lib.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0], [0.0, 0.0, 0.0]], dtype=lib.float64).to_sparse()
    d = lib.tensor(np.arange(6.0).reshape(3, 2) / 7, dtype=lib.float64)
    m = lib.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 5.0]], dtype=lib.float64).to_sparse()
    if requires_grad:
        s.requires_grad_()
        d.requires_grad_()
    return s, d, m


def uncoalesced(lib):
    """An uncoalesced S (position (1, 0) twice) and M (position (2, 1) twice, out of order)."""
    s = lib.sparse_coo_tensor([[1, 0, 1], [0, 1, 0]], [1.0, 2.0, 3.0], (3, 3), dtype=lib.float64)
    m = lib.sparse_coo_tensor([[2, 0, 2], [1, 0, 1]], [1.0, 2.0, 3.0], (3, 2), dtype=lib.float64)
    return s, m


def stored(t):
    return (t.is_coalesced(), t._indices().tolist(), np.round(t._values().detach().numpy(), 12).tolist(),
            t.sparse_dim(), t.dense_dim(), tuple(t.shape), str(t.dtype).split(".")[-1])


SPARSE_RESULTS = [
    lambda lib, s, d, m: lib.smm(s, d),
    lambda lib, s, d, m: s.smm(d),
    lambda lib, s, d, m: lib.hsmm(s, d),
    lambda lib, s, d, m: lib.hspmm(s, d),
    lambda lib, s, d, m: lib.sspaddmm(m, s, d),
    lambda lib, s, d, m: lib.saddmm(m, s, d, beta=2, alpha=3),
    lambda lib, s, d, m: m.sspaddmm(s, d, beta=0.5, alpha=-1),
]


@pytest.mark.parametrize("call", SPARSE_RESULTS)
def test_sparse_results_match_torch(call):
    ours, theirs = call(gradiente, *operands(gradiente)), call(torch, *operands(torch))
    assert stored(ours) == stored(theirs)
    assert text(ours) == str(theirs)


@pytest.mark.parametrize("call", SPARSE_RESULTS)
def test_sparse_results_of_uncoalesced_operands_match_torch(call):
    results = []
    for lib in (gradiente, torch):
        s, m = uncoalesced(lib)
        results.append(stored(call(lib, s, operands(lib)[1], m)))
    assert results[0] == results[1]


@pytest.mark.parametrize("call", SPARSE_RESULTS)
def test_sparse_results_have_no_derivative_as_in_torch(call):
    names = []
    for lib in (gradiente, torch):
        out = call(lib, *operands(lib, requires_grad=True))
        names.append(type(out.grad_fn).__name__)
    assert names == ["NotImplemented", "NotImplemented"]
    check_same_error(lambda lib: call(lib, *operands(lib, requires_grad=True)).to_dense().sum().backward())


def test_dsmm_is_mm():
    seen = []
    for lib in (gradiente, torch):
        s, d, _ = operands(lib, requires_grad=True)
        out = lib.dsmm(s, d)
        out.backward(lib.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]], dtype=lib.float64))
        seen.append((out.tolist(), type(out.grad_fn).__name__, d.grad.tolist()))
    assert seen[0] == seen[1]
    s, d, _ = operands(gradiente, requires_grad=True)
    assert gradcheck(lambda values, dense: gradiente.dsmm(
        gradiente.sparse_coo_tensor(s._indices(), values, (3, 3)), dense), (s._values().detach().requires_grad_(), d))


@pytest.mark.parametrize("call", [
    lambda lib, s, d, m: lib.smm(s, lib.ones(2, 2, dtype=lib.float64)),
    lambda lib, s, d, m: lib.smm(s, lib.ones(3, dtype=lib.float64)),
    lambda lib, s, d, m: lib.smm(s.to_dense(), d),
    lambda lib, s, d, m: lib.smm(s, d.float()),
    lambda lib, s, d, m: lib.sspaddmm(m, s.to_dense(), d),
    lambda lib, s, d, m: lib.sspaddmm(m, s, lib.ones(2, 2, dtype=lib.float64)),
    lambda lib, s, d, m: lib.sspaddmm(m, s, d.float()),
    lambda lib, s, d, m: lib.hspmm(s, d.float()),
    lambda lib, s, d, m: lib.hspmm(lib.zeros(2, 2, 2).to_sparse(), d),
    lambda lib, s, d, m: lib.dsmm(s, lib.ones(2, 2, dtype=lib.float64)),
    lambda lib, s, d, m: lib.dsmm(s, d.float()),
    lambda lib, s, d, m: lib.dsmm(d, d),
])
def test_errors_match_torch(call):
    check_same_error(lambda lib: call(lib, *operands(lib)))


def test_hspmm_of_a_dense_matrix_is_refused():
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(NotImplementedError) as caught:
            lib.hspmm(lib.ones(2, 2), lib.ones(2, 2))
        errors.append(str(caught.value))
    assert errors[1].startswith(errors[0])


def test_sspaddmm_of_a_dense_input_is_refused():
    for lib in (gradiente, torch):
        s, d, m = operands(lib)
        with pytest.raises(RuntimeError):
            lib.sspaddmm(m.to_dense(), s, d)
