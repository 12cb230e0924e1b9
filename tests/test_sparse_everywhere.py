"""Sparse tensors everywhere (issues 13 and 16): every public function and Tensor method that takes a tensor, called
on a small COO tensor and a small CSR tensor, against PyTorch (the table is tests/sparse_everywhere_table.py); then
the sparse kernels themselves (f of the values, sums and products, scaling, in place): values, layouts, nodes,
gradients against PyTorch, and float64 gradchecks through the values."""
import warnings

import numpy as np
import pytest
import sparse_everywhere_table as table
from harness import OpSpec, spec_tests
from test_sparse import same_error

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")

#: the table's rows at this commit (dense stand-ins for the argument checks): a count that falls means a row stopped
#: agreeing with PyTorch
AGREEING_AT_LEAST = 3117


@pytest.fixture(scope="module")
def rows():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return table.rows()


def test_no_call_with_a_sparse_tensor_is_silently_wrong(rows):
    silent = [f"{layout} {key}.{name}({family}): ours {table._short(ours)}; torch {table._short(theirs)}"
              for key, name, family, layout, kind, ours, theirs in rows if kind == "silent"]
    assert silent == []


def test_the_table_covers_every_namespace_and_both_layouts(rows):
    seen = {(key, layout) for key, _, _, layout, *_ in rows}
    assert seen == {(key, layout) for key in ("torch", "nn.functional", "linalg", "special", "Tensor")
                    for layout in ("coo", "csr")}
    assert len(rows) > 6000


def test_rows_agreeing_with_pytorch_do_not_fall(rows):
    agreeing = sum(1 for row in rows if row[4] == "agree")
    assert agreeing >= AGREEING_AT_LEAST


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_every_function_pytorch_runs_on_the_values_agrees(rows, layout):
    """Each zero-preserving function PyTorch computes on this layout agrees in every namespace, as a function and as
    a method."""
    key = "coo" if layout == "coo" else "compressed"
    names = gradiente.ops.sparse_elementwise.VALUEWISE[key]
    wrong = [(k, name, family, kind) for k, name, family, lay, kind, *_ in rows
             if lay == layout and name in names and family == "unary" and kind != "agree"]
    assert wrong == []


# --- the kernels, value by value --------------------------------------------------------------------------------

INDICES = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]        # uncoalesced: (0, 2) twice
VALUES = [0.3, 0.4, 0.45, 0.1, 0.2]         # inside every function's domain (asin, atanh, erfinv, sqrt ...), no
CSR = ([0, 1, 3, 4], [2, 0, 2, 1], [0.3, 0.4, 0.45, 0.2])   # value where round jumps


def coo(lib, values, dtype=None):
    return lib.sparse_coo_tensor(lib.tensor(INDICES), values, (3, 3), dtype=dtype)


def csr(lib, values):
    crow, col, _ = CSR
    return lib.sparse_csr_tensor(lib.tensor(crow), lib.tensor(col), values, (3, 3))


MAKERS = {"coo": (coo, VALUES), "csr": (csr, CSR[2])}
UNARY = ["abs", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "erf", "erfinv", "expm1", "floor", "frac",
         "log1p", "neg", "rad2deg", "relu", "round", "sgn", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]


def _weights(n):
    return np.linspace(-1.0, 2.0, n * 1).reshape(3, 3) if n == 9 else None


def _run(lib, layout, fn, dtype="float64"):
    """fn(sparse) for a sparse tensor made of values that require grad: (result, its dense form, the values' grad
    after a weighted sum of the dense form)."""
    make, values = MAKERS[layout]
    v = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, make(lib, v))
    dense = out.to_dense() if out.layout != lib.strided else out
    weights = lib.tensor(np.linspace(-1.0, 2.0, dense.numel()).reshape(tuple(dense.shape)), dtype=dense.dtype)
    if dense.requires_grad:
        try:
            (dense * weights).sum().backward()
        except (NotImplementedError, RuntimeError):
            # PyTorch 2.13's backward rules of many sparse ops call a function without a sparse kernel (sin's
            # backward: cos of a sparse tensor); gradiente gives the gradient (its gradcheck below checks it)
            assert lib is torch
            return out, dense, REFUSED
    return out, dense, v.grad


REFUSED = "PyTorch's backward refused"


def _same(ours, theirs):
    out, dense, grad = ours
    t_out, t_dense, t_grad = theirs
    assert str(out.layout).replace("gradiente", "torch") == str(t_out.layout)
    assert str(out.dtype).replace("gradiente", "torch") == str(t_out.dtype)
    np.testing.assert_allclose(dense.detach().numpy(), t_dense.detach().numpy(), rtol=1e-6, atol=1e-9)
    assert (out.grad_fn is None) == (t_out.grad_fn is None)
    if t_out.grad_fn is not None:
        assert type(out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    if t_grad is REFUSED:
        assert grad is not None
        return
    assert (grad is None) == (t_grad is None)
    if t_grad is not None:
        np.testing.assert_allclose(grad.numpy(), t_grad.numpy(), rtol=1e-6, atol=1e-9)


def _gradcheck(layout, fn):
    make, values = MAKERS[layout]
    v = gradiente.tensor(values, dtype=gradiente.float64, requires_grad=True)
    assert gradcheck(lambda v: fn(gradiente, make(gradiente, v)).to_dense(), (v,))


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("name", UNARY)
def test_functions_of_the_values(name, layout):
    for call in (lambda lib, s: getattr(lib, name)(s), lambda lib, s: getattr(s, name)()):
        _same(_run(gradiente, layout, call), _run(torch, layout, call))
    _gradcheck(layout, lambda lib, s: getattr(lib, name)(s))


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isposinf", "isneginf", "signbit"])
def test_predicates_keep_the_pattern(name, layout):
    call = lambda lib, s: getattr(lib, name)(s)     # noqa: E731
    _same(_run(gradiente, layout, call), _run(torch, layout, call))


@pytest.mark.parametrize("call", [
    lambda lib, s: lib.nn.functional.relu(s),
    lambda lib, s: lib.nn.functional.tanh(s),
    lambda lib, s: lib.special.erf(s),
    lambda lib, s: lib.special.expm1(s),
    lambda lib, s: lib.nan_to_num(s),
    lambda lib, s: lib.square(s),
    lambda lib, s: s * 2.5,
    lambda lib, s: 2.5 * s,
    lambda lib, s: lib.mul(s, lib.tensor(3.0, dtype=lib.float64)),
    lambda lib, s: s / 4,
    lambda lib, s: lib.div(s, 4),
    lambda lib, s: s ** 2,
    lambda lib, s: lib.pow(s, 3),
    lambda lib, s: lib.float_power(s, 2),
    lambda lib, s: -s,
    lambda lib, s: abs(s),
])
def test_coo_only_functions_and_numbers(call):
    _same(_run(gradiente, "coo", call), _run(torch, "coo", call))
    _gradcheck("coo", call)


@pytest.mark.parametrize("call", [
    lambda lib, s: lib.nn.functional.relu(s),
    lambda lib, s: s * 2.5,
    lambda lib, s: lib.mul(s, 3),
    lambda lib, s: -s,
])
def test_csr_functions_and_numbers(call):
    _same(_run(gradiente, "csr", call), _run(torch, "csr", call))
    _gradcheck("csr", call)


OTHER = [[0.0, 0.7, 0.0], [0.6, 0.0, 0.0], [0.0, 0.9, 0.8]]


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("call", [
    lambda lib, s, o: s + o,
    lambda lib, s, o: lib.add(s, o, alpha=2),
    lambda lib, s, o: s * o,
    lambda lib, s, o: lib.mul(s, o),
], ids=["add", "add_alpha", "mul", "torch_mul"])
def test_two_sparse_tensors_of_one_layout(call, layout):
    convert = (lambda t: t.to_sparse()) if layout == "coo" else (lambda t: t.to_sparse_csr())

    def fn(lib, s):
        return call(lib, s, convert(lib.tensor(OTHER, dtype=lib.float64)))
    _same(_run(gradiente, layout, fn), _run(torch, layout, fn))
    _gradcheck(layout, fn)


def test_coo_subtraction():
    def fn(lib, s):
        return s - lib.tensor(OTHER, dtype=lib.float64).to_sparse()
    _same(_run(gradiente, "coo", fn), _run(torch, "coo", fn))
    _gradcheck("coo", fn)


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("call", [
    lambda lib, s, d: d + s,
    lambda lib, s, d: lib.add(d, s, alpha=3),
    lambda lib, s, d: s * d,
    lambda lib, s, d: d * s,
], ids=["dense_plus_sparse", "add_alpha", "sparse_times_dense", "dense_times_sparse"])
def test_sparse_with_dense(call, layout):
    def fn(lib, s):
        return call(lib, s, lib.tensor(OTHER, dtype=lib.float64))
    _same(_run(gradiente, layout, fn), _run(torch, layout, fn))
    _gradcheck(layout, fn)


def test_dense_gradient_through_a_product_with_a_sparse_tensor():
    def grads(lib):
        d = lib.tensor(OTHER, dtype=lib.float64, requires_grad=True)
        s = coo(lib, lib.tensor(VALUES, dtype=lib.float64))
        (s * d).to_dense().sum().backward()
        return d.grad.to_dense().numpy()        # (PyTorch's is sparse, gradiente's dense: sparse_mul's docstring)
    np.testing.assert_allclose(grads(gradiente), grads(torch))


@pytest.mark.parametrize("call", [
    lambda lib: coo(lib, VALUES).coalesce().sin_(),
    lambda lib: coo(lib, VALUES).coalesce().neg_(),
    lambda lib: coo(lib, VALUES).mul_(2),
    lambda lib: csr(lib, CSR[2]).sqrt_(),
    lambda lib: csr(lib, CSR[2]).mul_(3),
    lambda lib: coo(lib, VALUES).coalesce().add_(lib.tensor(OTHER).to_sparse()),
    lambda lib: lib.tensor(OTHER).add_(coo(lib, VALUES)),
])
def test_in_place(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = call(gradiente), call(torch)
    assert str(ours.layout).replace("gradiente", "torch") == str(theirs.layout)
    np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib: lib.exp(coo(lib, VALUES)),
    lambda lib: lib.cos(csr(lib, CSR[2])),
    lambda lib: coo(lib, VALUES) + lib.tensor(OTHER),
    lambda lib: coo(lib, VALUES) + 1,
    lambda lib: coo(lib, VALUES) / lib.tensor(OTHER),
    lambda lib: lib.floor_divide(coo(lib, VALUES), lib.tensor(OTHER)),
    lambda lib: coo(lib, VALUES) ** lib.tensor(OTHER),
    lambda lib: coo(lib, VALUES) ** 0,
    lambda lib: csr(lib, CSR[2]) / 2,
    lambda lib: csr(lib, CSR[2]) - csr(lib, CSR[2]),
    lambda lib: lib.sum(csr(lib, CSR[2]), 0),
    lambda lib: lib.nn.functional.softplus(coo(lib, VALUES)),
    lambda lib: lib.tensor(OTHER) / coo(lib, VALUES),
    lambda lib: coo(lib, VALUES) == 0.3,
    lambda lib: coo(lib, VALUES).sin_(),
])
def test_errors_as_pytorch(call):
    same_error(call)


# --- nn.Embedding(sparse=True): a sparse COO weight gradient, SGD and SparseAdam on it ----------------------------

def _embedding_run(lib, make_optimizer, steps=3, padding_idx=None):
    lib.manual_seed(0)
    embedding = lib.nn.Embedding(6, 3, sparse=True, padding_idx=padding_idx)
    optimizer = make_optimizer(lib, embedding.parameters())
    batches = [lib.tensor([[0, 2, 2], [4, 0, 1]]), lib.tensor([[5, 5, 3]]), lib.tensor([[1, 0, 2]])]
    grads = []
    for batch in batches[:steps]:
        optimizer.zero_grad()
        loss = (embedding(batch) ** 2).sum() + embedding(batch).sum()
        loss.backward()
        grad = embedding.weight.grad
        grads.append((str(grad.layout).replace("gradiente", "torch"), grad.to_dense().numpy().copy()))
        optimizer.step()
    return embedding.weight.detach().numpy(), grads


@pytest.mark.parametrize("make_optimizer", [
    lambda lib, params: lib.optim.SGD(params, lr=0.1),
    lambda lib, params: lib.optim.SGD(params, lr=0.1, momentum=0.9),
    lambda lib, params: lib.optim.SGD(params, lr=0.1, momentum=0.5, nesterov=True),
    lambda lib, params: lib.optim.SparseAdam(params, lr=0.05),
    lambda lib, params: lib.optim.SparseAdam(params, lr=0.05, betas=(0.8, 0.9), maximize=True),
    lambda lib, params: lib.optim.Adagrad(params, lr=0.1),
], ids=["sgd", "sgd_momentum", "sgd_nesterov", "sparse_adam", "sparse_adam_maximize", "adagrad"])
def test_sparse_embedding_trains_as_pytorch(make_optimizer):
    ours, theirs = _embedding_run(gradiente, make_optimizer), _embedding_run(torch, make_optimizer)
    for (layout, grad), (t_layout, t_grad) in zip(ours[1], theirs[1]):
        assert layout == t_layout == "torch.sparse_coo"
        np.testing.assert_allclose(grad, t_grad, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)


def test_sparse_embedding_padding_row_gets_no_gradient():
    ours = _embedding_run(gradiente, lambda lib, p: lib.optim.SparseAdam(p), steps=2, padding_idx=5)
    theirs = _embedding_run(torch, lambda lib, p: lib.optim.SparseAdam(p), steps=2, padding_idx=5)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)


def test_sparse_embedding_gradient_is_the_functional_one_too():
    def grad(lib):
        weight = lib.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
        lib.nn.functional.embedding(lib.tensor([3, 1, 3]), weight, sparse=True).sum().backward()
        return weight.grad
    ours, theirs = grad(gradiente), grad(torch)
    assert ours.is_sparse and theirs.is_sparse
    np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy())


@pytest.mark.parametrize("make_optimizer", [
    lambda lib, params: lib.optim.SGD(params, lr=0.1, weight_decay=0.1),
    lambda lib, params: lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))]),
    lambda lib, params: lib.optim.Adam(params),
    lambda lib, params: lib.optim.AdamW(params),
    lambda lib, params: lib.optim.RMSprop(params),
    lambda lib, params: lib.optim.NAdam(params),
], ids=["sgd_weight_decay", "sparse_adam_dense_grad", "adam", "adamw", "rmsprop", "nadam"])
def test_optimizer_errors_on_sparse_gradients(make_optimizer):
    def run(lib):
        if "SparseAdam" in repr(make_optimizer.__code__.co_names):
            p = lib.nn.Parameter(lib.ones(2))
            p.sum().backward()
            return lib.optim.SparseAdam([p]).step()
        return _embedding_run(lib, make_optimizer, steps=1)
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as caught:
            run(lib)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


# --- the shape ops PyTorch has for COO tensors ---------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, s: s[1],
    lambda lib, s: s.select(1, 2),
    lambda lib, s: lib.select(s, 0, -1),
    lambda lib, s: s.index_select(1, lib.tensor([2, 0, 2])),
    lambda lib, s: lib.index_select(s, 0, lib.tensor([1])),
    lambda lib, s: lib.cat([s, s.coalesce()]),
    lambda lib, s: lib.cat([s, s], dim=1),
    lambda lib, s: lib.stack([s, s], 1),
    lambda lib, s: s.permute(1, 0),
    lambda lib, s: lib.permute(s, (1, 0)),
    lambda lib, s: lib.unsqueeze(s, 0),
    lambda lib, s: s.unsqueeze(2),
    lambda lib, s: s.swapaxes(0, 1),
    lambda lib, s: lib.swapdims(s, 0, 1),
    lambda lib, s: lib.movedim(s, 0, 1),
    lambda lib, s: lib.transpose(s, 0, 1),
    lambda lib, s: lib.t(s),
    lambda lib, s: lib.sparse.sum(s, 0),
    lambda lib, s: lib.sum(s),
], ids=["getitem", "select", "torch_select", "index_select", "torch_index_select", "cat", "cat_dim1", "stack",
        "permute", "torch_permute", "unsqueeze", "unsqueeze_last", "swapaxes", "swapdims", "movedim", "transpose", "t",
        "sum_dim", "sum"])
def test_coo_shape_ops(call):
    _same(_run(gradiente, "coo", call), _run(torch, "coo", call))
    _gradcheck("coo", call)


@pytest.mark.parametrize("call", [
    lambda lib: coo(lib, VALUES)[0:1],
    lambda lib: coo(lib, VALUES)[lib.tensor([0, 1])],
    lambda lib: lib.cat([coo(lib, VALUES), lib.ones(3, 3)]),
    lambda lib: coo(lib, VALUES).select(0, 3),
])
def test_coo_shape_op_errors(call):
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(Exception) as caught:
            call(lib)
        errors.append(caught.value)
    ours, theirs = errors
    assert type(ours) is type(theirs)
    assert str(theirs).startswith(str(ours)) if str(ours).startswith("Could not run") else str(ours) == str(theirs)


# The op table for the shape ops' nodes (gradcheck, gradgradcheck, PyTorch's values; PyTorch 2.13's backward through
# these sparse nodes runs as_strided or expand on a sparse gradient, which it has no kernel for: torch_grad=False,
# gradiente's gradients are the gradchecked ones).
SHAPE_SPECS = [
    OpSpec("sparse_select", lambda lib, v: coo(lib, v).select(1, 2).to_dense(), [((5,),)], torch_grad=False),
    OpSpec("sparse_permute", lambda lib, v: coo(lib, v).permute(1, 0).to_dense(), [((5,),)], torch_grad=False),
    OpSpec("sparse_unsqueeze", lambda lib, v: coo(lib, v).unsqueeze(0).to_dense(), [((5,),)], torch_grad=False),
    OpSpec("sparse_stack", lambda lib, v, w: lib.stack([coo(lib, v), coo(lib, w)], 1).to_dense(), [((5,), (5,))],
           torch_grad=False),
]
test_op_gradcheck, test_op_against_torch, test_op_gradgradcheck = spec_tests(SHAPE_SPECS)
