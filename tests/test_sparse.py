"""Sparse COO tensors against PyTorch: construction and printing, coalescing, the parts (indices, values, nnz,
dims), to_dense/to_sparse, sparse @ dense in each of its spellings, torch.sparse.addmm/sum/softmax/log_softmax,
scaling, errors and the invariant checks; an op table (float64 gradchecks on the dense operands and the values,
PyTorch's nodes and gradients, second derivatives); then a small graph convolution and an
embedding-style recommender trained a few steps, printing what PyTorch prints."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, spec_tests

import gradiente

torch = pytest.importorskip("torch")

INDICES = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]        # uncoalesced: (0, 2) appears twice, out of order
VALUES = [3.0, 4.0, 5.0, 1.0, -2.0]
SIZE = (3, 3)


def sp(lib, values):
    """A (3, 3) sparse COO tensor with ``values`` (5 entries, or 5 rows) at INDICES."""
    return lib.sparse_coo_tensor(lib.tensor(INDICES), values, SIZE + tuple(values.shape[1:]))


# The op table: gradcheck and gradgradcheck in float64, PyTorch's values, node and gradients through each sparse
# node.
SPECS = [
    OpSpec("sparse_mm", lambda lib, v, d: lib.sparse.mm(sp(lib, v), d), [((5,), (3, 2))]),
    OpSpec("sparse_torch_mm", lambda lib, v, d: lib.mm(sp(lib, v), d), [((5,), (3, 4))]),
    OpSpec("sparse_matmul", lambda lib, v, d: sp(lib, v) @ d, [((5,), (3, 1))]),
    OpSpec("sparse_addmm", lambda lib, m, v, d: lib.sparse.addmm(m, sp(lib, v), d, beta=0.5, alpha=1.5),
           [((3, 2), (5,), (3, 2))]),
    OpSpec("sparse_to_dense", lambda lib, v: sp(lib, v).to_dense(), [((5,),), ((5, 2),)]),
    OpSpec("sparse_coalesce", lambda lib, v: sp(lib, v).coalesce().to_dense(), [((5,),)]),
    OpSpec("sparse_values", lambda lib, v: sp(lib, v).coalesce().values(), [((5,),), ((5, 2),)]),
    OpSpec("sparse_sum", lambda lib, v: lib.sparse.sum(sp(lib, v)), [((5,),)]),
    OpSpec("sparse_tensor_sum", lambda lib, v: sp(lib, v).sum(), [((5,),)]),
    OpSpec("sparse_sum_dim", lambda lib, v: lib.sparse.sum(sp(lib, v), 0).to_dense(), [((5,),), ((5, 2),)]),
    OpSpec("sparse_sum_all_dims", lambda lib, v: lib.sparse.sum(sp(lib, v), (0, 1)), [((5,),)]),
    OpSpec("sparse_softmax", lambda lib, v: lib.sparse.softmax(sp(lib, v), 1).to_dense(), [((5,),)]),
    OpSpec("sparse_log_softmax", lambda lib, v: lib.sparse.log_softmax(sp(lib, v), 0).to_dense(), [((5,),)]),
    OpSpec("sparse_scaled", lambda lib, v: (sp(lib, v) * 2.5).to_dense() + (-sp(lib, v) / 4).to_dense(), [((5,),)]),
    OpSpec("sparse_t", lambda lib, v, d: lib.sparse.mm(sp(lib, v).t(), d), [((5,), (3, 2))]),
    OpSpec("sparse_transpose", lambda lib, v: sp(lib, v).transpose(0, 1).to_dense(), [((5,),)]),
    # (float32 values: too coarse for gradcheck's finite differences; its gradient is compared with PyTorch's)
    OpSpec("sparse_to_float32", lambda lib, v: sp(lib, v).float().to_dense(), [((5,),)], dtypes=("float64",),
           gradcheck=False),
    OpSpec("sparse_to_float64", lambda lib, v: sp(lib, v).double().to_dense(), [((5,),)], dtypes=("float32",)),
    OpSpec("dense_to_sparse", lambda lib, x: x.to_sparse().to_dense(), [((3, 3),)]),
    OpSpec("dense_to_sparse_dim", lambda lib, x: x.to_sparse(1).to_dense(), [((3, 2),)]),
]
test_op_gradcheck, test_op_against_torch, test_op_gradgradcheck = spec_tests(SPECS)

# PyTorch warns once that invariant checks are implicitly off; gradiente does not (said in its docstring)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

def text(value):
    """What ``print`` shows, with PyTorch's module name."""
    return str(value).replace("gradiente.", "torch.").replace("gradiente", "torch")


def both(fn):
    """``fn(lib)`` on each library, warnings silenced: (gradiente's result, PyTorch's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(gradiente), fn(torch)


def same_print(fn):
    """``fn(lib)`` prints the same in both libraries (a value or a list of them)."""
    ours, theirs = both(fn)
    ours, theirs = (list(v) if isinstance(v, (tuple, list)) else [v] for v in (ours, theirs))
    assert [text(v) for v in ours] == [text(v) for v in theirs]


def same_error(fn):
    """The same exception type, with gradiente's message equal to PyTorch's or its first sentences (PyTorch's
    "Could not run 'aten::...'" goes on to list backends)."""
    errors = []
    for lib in (gradiente, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as caught:
                fn(lib)
        errors.append(caught.value)
    ours, theirs = errors
    assert type(ours) is type(theirs)
    if str(ours).startswith("Could not run"):
        assert str(theirs).startswith(str(ours))
    else:
        assert str(ours) == str(theirs)


def uncoalesced(lib, dtype=None, requires_grad=False):
    v = lib.tensor(VALUES, dtype=dtype, requires_grad=requires_grad)
    return lib.sparse_coo_tensor(lib.tensor(INDICES), v, SIZE), v


def dense_matrix(lib, shape=(3, 2), seed=0, dtype="float32"):
    array = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return lib.tensor(array, requires_grad=True)


# --- making and printing -------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: uncoalesced(lib)[0],
    lambda lib: uncoalesced(lib, requires_grad=True)[0],
    lambda lib: uncoalesced(lib, dtype=lib.float64)[0],
    lambda lib: lib.sparse_coo_tensor([[0, 2]], [1, 2]),
    lambda lib: lib.sparse_coo_tensor([[0, 2]], [1.0, 2.0]),
    lambda lib: lib.sparse_coo_tensor([[0, 1]], [[1.0, 2.0], [3.0, 4.0]], (3, 2)),
    lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0), (2, 2)),
    lambda lib: lib.sparse_coo_tensor(INDICES, VALUES, SIZE, requires_grad=True),
    lambda lib: lib.sparse_coo_tensor(INDICES, VALUES, SIZE, dtype=lib.float64, requires_grad=True),
    lambda lib: lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse(),
    lambda lib: lib.tensor([[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]]).to_sparse(1),
    lambda lib: lib.tensor([[0.0, 2.5], [3.0, 0.0]], requires_grad=True).to_sparse(),
    lambda lib: lib.tensor([[0.0, 2.5], [3.0, 0.0]], requires_grad=True).to_sparse(1),
])
def test_construction_prints_as_pytorch(make):
    same_print(make)


def test_attributes():
    def attributes(lib):
        s, _ = uncoalesced(lib)
        c = s.coalesce()
        return (s.is_sparse, s.layout, s.is_coalesced(), c.is_coalesced(), s.sparse_dim(), s.dense_dim(), s._nnz(),
                c._nnz(), s.shape, s.dim(), s.numel(), s.dtype, lib.ones(2).layout, lib.ones(2).is_sparse,
                lib.ones(2, 3).sparse_dim(), lib.ones(2, 3).dense_dim(), lib.sparse_coo, lib.strided)
    same_print(attributes)


def test_coalesce_indices_values():
    def parts(lib):
        s, _ = uncoalesced(lib, requires_grad=True)
        c = s.coalesce()
        return c, c.indices(), c.values(), s._indices(), s._values(), c.coalesce() is c
    same_print(parts)


# --- gradients -----------------------------------------------------------------------------------------------

def test_values_get_the_gradient_through_to_dense_and_coalesce():
    def grads(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        weights = lib.arange(9.0).reshape(3, 3)
        d = s.to_dense()
        (d * weights).sum().backward()
        first = v.grad.clone()
        s, v = uncoalesced(lib, requires_grad=True)      # PyTorch frees the first graph's saved values
        (s.coalesce().values() * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return d, first, v.grad
    same_print(grads)


@pytest.mark.parametrize("product", [
    lambda lib, s, d: lib.sparse.mm(s, d),
    lambda lib, s, d: lib.mm(s, d),
    lambda lib, s, d: lib.matmul(s, d),
    lambda lib, s, d: s @ d,
    lambda lib, s, d: s.mm(d),
    lambda lib, s, d: lib.spmm(s, d),
])
def test_sparse_times_dense(product):
    def run(lib):
        s, _ = uncoalesced(lib, requires_grad=True)
        d = dense_matrix(lib)
        out = product(lib, s, d)
        (out * out).sum().backward()
        return [type(out.grad_fn).__name__, [type(f).__name__ for f, _ in out.grad_fn.next_functions]]
    same_print(run)
    ours, theirs = both(lambda lib: _product_grads(lib, product))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


def _product_grads(lib, product):
    s, v = uncoalesced(lib, requires_grad=True)
    d = dense_matrix(lib)
    out = product(lib, s, d)
    (out * out).sum().backward()
    return out, v.grad, d.grad


def test_a_sparse_leaf_gets_a_sparse_gradient():
    def run(lib):
        leaf = lib.sparse_coo_tensor(INDICES, VALUES, SIZE, requires_grad=True)
        d = dense_matrix(lib)
        lib.sparse.mm(leaf, d).pow(2).sum().backward()
        first = leaf.grad
        coalesced_leaf = lib.sparse_coo_tensor(INDICES, VALUES, SIZE).coalesce().requires_grad_()
        coalesced_leaf.to_dense().sum().backward()
        return leaf, first, first.is_coalesced(), coalesced_leaf.grad, first.layout
    ours, theirs = both(run)
    assert text(ours[0]) == text(theirs[0])
    assert [text(v) for v in ours[2:]] == [text(v) for v in theirs[2:]]
    for o, t in ((ours[1], theirs[1]), (ours[3], theirs[3])):
        assert o.is_sparse and t.is_sparse
        np.testing.assert_array_equal(o._indices().numpy(), t._indices().numpy())
        np.testing.assert_allclose(o._values().numpy(), t._values().numpy(), rtol=1e-5)
    assert text(ours[3]) == text(theirs[3])


def test_addmm_with_scales():
    def run(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        d = dense_matrix(lib)
        m = dense_matrix(lib, (3, 2), seed=1)
        out = lib.sparse.addmm(m, s, d, beta=0.5, alpha=-2.0)
        out.sum().backward()
        return out, v.grad, d.grad, m.grad
    ours, theirs = both(run)
    assert text(ours[0]).split("grad_fn")[1] == text(theirs[0]).split("grad_fn")[1]
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sparse_sum(dim):
    def run(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        out = lib.sparse.sum(s) if dim is None else lib.sparse.sum(s, dim)
        dense = out.to_dense() if out.is_sparse else out
        (dense * lib.arange(1.0, dense.numel() + 1).reshape(dense.shape)).sum().backward()
        return out, v.grad
    same_print(run)


def test_sparse_sum_over_a_dense_dim():
    def run(lib):
        v = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        s = lib.sparse_coo_tensor([[0, 2, 0]], v, (3, 2))
        out = lib.sparse.sum(s, 1)
        (out.to_dense() * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        return out, v.grad, lib.sparse.sum(s, 0)
    same_print(run)


def test_tensor_sum_of_a_sparse_tensor():
    def run(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        out = s.sum()
        out.backward()
        return out, v.grad
    same_print(run)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
def test_sparse_softmax(name, dim):
    def run(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        out = getattr(lib.sparse, name)(s, dim)
        (out.to_dense() * lib.arange(9.0).reshape(3, 3)).sum().backward()
        return out, v.grad
    ours, theirs = both(run)
    assert text(ours[0]).split("values")[0] == text(theirs[0]).split("values")[0]
    assert text(ours[0]).split("size=")[1] == text(theirs[0]).split("size=")[1]
    for o, t in ((ours[0]._values(), theirs[0]._values()), (ours[1], theirs[1])):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_scaling_and_negation():
    def run(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        scaled, halved, negated, left = s * 2, s / 2, -s, 3 * s
        (scaled.to_dense().sum() + halved.to_dense().sum() + negated.to_dense().sum() + left.to_dense().sum()
         ).backward()
        return scaled, halved, negated, left, v.grad
    same_print(run)


def test_transposes_conversions_and_method_sums():
    def run(lib):
        s, _ = uncoalesced(lib, requires_grad=True)
        c = s.coalesce()
        return (s.t(), c.t().is_coalesced(), s.transpose(1, 0), s.double(), s.to(lib.float64), s.to("cpu").dtype,
                s.sum(0), s.sum(dim=1), s.sum((0, 1)), s.detach(), s.requires_grad, s.is_leaf)
    same_print(run)


def test_sum_method_has_pytorchs_backward_error():
    same_error(lambda lib: uncoalesced(lib, requires_grad=True)[0].sum(0).to_dense().sum().backward())


def test_a_dtype_copy_gives_the_gradient_in_the_values_dtype():
    def run(lib):
        s, v = uncoalesced(lib, requires_grad=True)
        (s.double().to_dense() * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return v.grad
    same_print(run)


def test_sparse_mask():
    def run(lib):
        dense = lib.arange(9.0).reshape(3, 3)
        return dense.sparse_mask(lib.tensor([[0.0, 2.0, 0.0], [0.0, 0.0, 1.0], [4.0, 0.0, 0.0]]).to_sparse())
    same_print(run)


# --- errors --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: uncoalesced(lib)[0].indices(),
    lambda lib: uncoalesced(lib)[0].values(),
    lambda lib: lib.ones(2).indices(),
    lambda lib: lib.ones(2).values(),
    lambda lib: lib.ones(2).coalesce(),
    lambda lib: lib.ones(2).is_coalesced(),
    lambda lib: lib.ones(2)._nnz(),
    lambda lib: lib.sparse.sum(lib.ones(2)),
    lambda lib: uncoalesced(lib)[0] + 1,
    lambda lib: uncoalesced(lib)[0].exp(),
    lambda lib: uncoalesced(lib)[0].view(9),
    lambda lib: lib.sparse_coo_tensor(INDICES, [1.0, 2.0]),
    lambda lib: lib.sparse_coo_tensor(INDICES, VALUES, (3,)),
    lambda lib: lib.sparse.mm(uncoalesced(lib)[0], lib.ones(2, 2)),
    lambda lib: lib.mm(uncoalesced(lib)[0], lib.ones(2, 2)),
    lambda lib: lib.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,), check_invariants=True),
    lambda lib: lib.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,), check_invariants=True),
])
def test_errors_as_pytorch(call):
    same_error(call)


def test_invariant_checks_switch():
    def run(lib):
        checks = lib.sparse.check_sparse_tensor_invariants
        seen = [checks.is_enabled()]
        with checks():
            seen.append(checks.is_enabled())
            try:
                lib.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))
            except RuntimeError as e:
                seen.append(str(e))
        seen.append(checks.is_enabled())
        unchecked = lib.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,), check_invariants=False)
        checks.enable()
        seen.append(checks.is_enabled())
        checks.disable()

        @checks()
        def make():
            return lib.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,))
        try:
            make()
        except RuntimeError as e:
            seen.append(str(e))
        return seen + [unchecked._nnz(), checks.is_enabled()]
    same_print(run)


# --- examples ------------------------------------------------------------------------------------------------

def _normalized_adjacency(lib, edges, nodes):
    """D^-1/2 (A + I) D^-1/2 of an undirected graph, as a sparse COO matrix."""
    rows = [a for a, b in edges] + [b for a, b in edges] + list(range(nodes))
    cols = [b for a, b in edges] + [a for a, b in edges] + list(range(nodes))
    degree = np.bincount(rows, minlength=nodes).astype(np.float32)
    weights = [1.0 / np.sqrt(degree[r] * degree[c]) for r, c in zip(rows, cols)]
    return lib.sparse_coo_tensor(lib.tensor([rows, cols]), lib.tensor(weights), (nodes, nodes)).coalesce()


def test_graph_convolution_trains_as_in_pytorch():
    def run(lib):
        edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 4)]
        adjacency = _normalized_adjacency(lib, edges, 5)
        rng = np.random.default_rng(0)
        features = lib.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        labels = lib.tensor([0, 1, 0, 1, 1])
        w1 = lib.tensor((rng.standard_normal((4, 8)) * 0.5).astype(np.float32), requires_grad=True)
        w2 = lib.tensor((rng.standard_normal((8, 2)) * 0.5).astype(np.float32), requires_grad=True)
        optimizer = lib.optim.SGD([w1, w2], lr=0.5)
        printed = [adjacency]
        for _ in range(4):
            hidden = lib.relu(lib.sparse.mm(adjacency, features @ w1))
            logits = adjacency @ (hidden @ w2)
            loss = lib.nn.functional.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            printed.append(f"{loss.item():.5f} {loss.grad_fn.name()} {logits.grad_fn.name()}")
        printed.append(w2)
        return printed
    same_print(run)


def test_embedding_recommender_trains_as_in_pytorch():
    def run(lib):
        users, items, dim = 4, 6, 3
        clicked = [(0, 1), (0, 3), (1, 0), (1, 3), (1, 5), (2, 2), (3, 4), (3, 1)]
        interactions = lib.sparse_coo_tensor(lib.tensor(clicked).t(), lib.ones(len(clicked)), (users, items))
        counts = lib.sparse.sum(interactions, 1).to_dense().unsqueeze(1)
        rng = np.random.default_rng(1)
        item_embedding = lib.nn.Embedding(items, dim)
        with lib.no_grad():
            item_embedding.weight.copy_(lib.tensor(rng.standard_normal((items, dim)).astype(np.float32)))
        optimizer = lib.optim.Adam(item_embedding.parameters(), lr=0.1)
        target = interactions.to_dense()
        printed = [interactions, counts]
        for _ in range(3):
            profile = lib.sparse.mm(interactions, item_embedding.weight) / counts      # each user's mean item
            scores = profile @ item_embedding.weight.t()
            loss = lib.nn.functional.binary_cross_entropy_with_logits(scores, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            printed.append(f"{loss.item():.5f}")
        printed.append(scores.argmax(1))
        return printed
    same_print(run)
