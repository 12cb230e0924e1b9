"""Issue 16's audit of ``raise NotImplementedError`` in src/gradiente, against torch 2.13 on the CPU.

Three kinds of refusal are found there: abstract methods that PyTorch's classes also leave to subclasses
(``Optimizer.step``, ``Distribution.sample`` ...), PyTorch's own refusals in PyTorch's words (a kernel not
implemented for a dtype, a derivative PyTorch lacks), and gradiente's own, whose message names gradiente. Only
the last are gaps: ``GRADIENTE_REFUSALS`` lists each with what torch does, and the first test keeps the list
equal to the source, so a new one is seen. The other tests check samples of the second kind word for word, and
the refusals this audit replaced (sums, scaling, conversions and errors of sparse tensors; gradients of complex
determinants, inverses, matrix exponentials, logsumexp, slogdet, Cholesky factors and eigh; selective activation
checkpointing, whose tests are in test_checkpoint_selective.py) against torch.
"""
import ast
import pathlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import gradiente as g
import gradiente.nn.functional as GF
from gradiente.autograd import gradcheck

SRC = pathlib.Path(__file__).resolve().parent.parent / "src" / "gradiente"

#: gradiente's own NotImplementedErrors: (file, start of the message) -> what torch 2.13 does on the CPU, and why
#: gradiente still refuses
GRADIENTE_REFUSALS = {
    ("autograd/profiler.py", "gradiente's profiler times ops"): "torch measures memory/flops/stacks; not faked",
    ("profiler/profiler.py", "gradiente's profiler times ops"): "the same, for torch.profiler.profile",
    ("utils/benchmark/utils/timer.py", "gradiente times Python statements only"):
        "torch.utils.benchmark.Timer(language='cpp') compiles the statement against torch's C++ API (a compiler "
        "and libtorch's headers); gradiente has no C++ API",
    ("core/engine.py", "gradiente does not compute gradients of complex"):
        "torch differentiates every op for complex; here only rules marked complex_ok or holomorphic (this audit "
        "added det, inv, matrix_exp, logsumexp, slogdet, cholesky, eigh; svd and qr of complex matrices remain)",
    ("core/random.py", "gradiente's randperm supports n <"): "torch's 64-bit shuffle for huge n is not reproduced",
    ("core/meta.py", "gradiente works out {} of meta tensors"):
        "torch has a meta kernel (a shape function) for every op; gradiente's meta arrays answer NumPy's ufuncs, "
        "views and a few functions with shape rules, and run any other NumPy function on zeros of the inputs' "
        "shapes, which it refuses beyond 2**22 elements",
    ("utils/tensorboard/summary.py", "gradiente's add_image encodes images at their own size"):
        "torch resizes by rescale with Pillow; here only rescale=1",
    ("utils/tensorboard/writer.py", "SummaryWriter.add_graph needs torch.jit.trace's TorchScript graph"):
        "torch traces the model with TorchScript, which gradiente does not have; the message points to viz",
    ("core/sparse_compressed.py", "gradiente assigns to a compressed sparse"): "torch accepts other patterns",
    ("core/sparse_tensor.py", "gradiente does not replace the data of a sparse"): "torch's .data = of sparse works",
    ("core/sparse_tensor.py", "gradiente assigns to a sparse tensor's .grad"): "torch accepts other patterns",
    ("ops/nn/interpolation.py", "gradiente interpolates uint8 images with mode"):
        "torch's uint8 bilinear/bicubic round in fixed point, not reproduced",
    ("ops/sparse_compressed.py", "gradiente's compressed sparse tensors have no batch"): "torch has batched CSR",
    ("ops/sparse_compressed.py", "gradiente converts only matrices (2 dims, no batch"): "torch converts batches",
    ("ops/sparse_compressed.py", "gradiente's conversions to compressed layouts take"): "torch has dense_dim",
    ("ops/sparse_compressed.py", "gradiente multiplies CSR and CSC matrices (no blocks"): "torch multiplies BSR",
    ("ops/sparse_compressed.py", "gradiente multiplies a compressed matrix by a dense"):
        "torch's S @ vector is MvBackward0 with a dense gradient for S, which gradiente's sparse leaves cannot hold",
    ("ops/sparse_compressed.py", "gradiente sums a CSR tensor over a dim only when"): "batched/blocked CSR sums",
    ("ops/sparse_compressed.py", "gradiente transposes BSR and BSC tensors without"): "torch transposes them",
    ("ops/sparse_compressed.py", "gradiente transposes only the two matrix dims of"): "batch dims, as above",
    ("ops/sparse_coo.py", "sparse softmax of a tensor with dense dims is not in"): "torch softmaxes them",
    ("ops/sparse_coo.py", "gradiente's sum of a sparse tensor keeps dims only"):
        "torch's keepdim turns dense dims into sparse ones, or gives a dense result whose gradient is dense",
    ("ops/sparse_coo.py", "gradiente's sparse Tensor.to takes a dtype or 'cpu'"): "other devices do not exist here",
    # (the sparse dispatch of this stop, sparse_dispatch.py: every other call with a sparse tensor is torch's or
    # torch's error)
    ("ops/sparse_coo.py", "gradiente stacks sparse tensors along a new sparse"): "torch stacks along dense dims too",
    ("ops/sparse_coo.py", "gradiente unsqueezes a sparse tensor among its sparse"): "torch adds dense dims too",
    ("ops/sparse_coo.py", "gradiente's {} of a sparse tensor moves its sparse"): "torch moves dense dims too",
    ("ops/sparse_elementwise.py", "gradiente adds and multiplies sparse tensors of"): "torch adds BSR/BSC too",
    # (torch._dynamo, _dynamo/__init__.py: explain reports torch.compile's graphs, and there are none here)
    ("_dynamo/__init__.py", "torch._dynamo.explain reports how torch.compile"): "torch reports its graph breaks",
    ("sparse_dispatch.py", "gradiente changes a sparse tensor that requires grad"):
        "torch records in-place ops on sparse leaves' descendants more widely",
}


def _message(node):
    """The text of a message expression, with ``{}`` where it is computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp):
        return _message(node.left) + _message(node.right)
    return "{}"


def _not_implemented_raises():
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc
            name = exc.func.id if isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) else \
                getattr(exc, "id", None)
            if name == "NotImplementedError":
                message = _message(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else ""
                yield path.relative_to(SRC).as_posix(), message


def test_gradiente_own_refusals_are_the_audited_list():
    found = {(path, message) for path, message in _not_implemented_raises() if "gradiente" in message}
    unlisted = sorted(f for f in found if not any(f[0] == p and f[1].startswith(m) for p, m in GRADIENTE_REFUSALS))
    stale = sorted(k for k in GRADIENTE_REFUSALS if not any(f[0] == k[0] and f[1].startswith(k[1]) for f in found))
    assert not unlisted, f"a new refusal of gradiente's own: audit it against torch and list it: {unlisted}"
    assert not stale, f"listed refusals that are gone: {stale}"
    assert sum(1 for _ in _not_implemented_raises()) > 100      # the scan reads the source


def _cases(lib, fn):
    i, f, b = lib.tensor([1, 2]), lib.tensor([1.5, 2.5]), lib.tensor([True, False])
    return {
        "hypot int": lambda: lib.hypot(i, i), "bincount float": lambda: lib.bincount(f),
        "logcumsumexp int": lambda: lib.logcumsumexp(i, 0),
        "cholesky int": lambda: lib.cholesky(lib.ones(2, 2, dtype=lib.int64)),
        "softmax int": lambda: lib.softmax(i, 0), "median bool": lambda: lib.median(b),
        "div bool floor": lambda: lib.div(b, b, rounding_mode="floor"), "histc int": lambda: lib.histc(i),
        "pad mode": lambda: fn.pad(lib.ones(1, 2, 2), (1, 1), mode="foo"),
        "embedding_bag weights": lambda: fn.embedding_bag(lib.tensor([[0, 1]]), lib.ones(3, 2),
                                                          per_sample_weights=lib.ones(1, 2), mode="mean"),
        "kl across families": lambda: lib.distributions.kl_divergence(lib.distributions.Normal(0., 1.),
                                                                      lib.distributions.Bernoulli(0.5)),
        "module without forward": lambda: lib.nn.Module()(1),
        "function without forward": lambda: type("F", (lib.autograd.Function,), {})().apply(1),
        "lu int": lambda: lib.linalg.lu_factor(lib.ones(2, 2, dtype=lib.int64)),
        "eigh int": lambda: lib.linalg.eigh(lib.ones(2, 2, dtype=lib.int64)),
        "unique's derivative": lambda: lib.unique(lib.ones(3, requires_grad=True),
                                                  return_inverse=True)[0].sum().backward(),
    }


@pytest.mark.parametrize("case", list(_cases(torch, TF)))
def test_pytorch_worded_refusals_match_torch(case):
    with pytest.raises(NotImplementedError) as theirs:
        _cases(torch, TF)[case]()
    with pytest.raises(NotImplementedError) as ours:
        _cases(g, GF)[case]()
    assert str(ours.value) == str(theirs.value)


# --- what the audit implemented or reworded ------------------------------------------------------------------

def _coo(lib, values=(3., 4., 5.), requires_grad=False):
    indices = lib.tensor([[0, 1, 1], [2, 0, 2]])
    s = lib.sparse_coo_tensor(indices, lib.tensor(values, dtype=lib.float64), (2, 3)).coalesce()
    return s.requires_grad_() if requires_grad else s


def _same_sparse(ours, theirs):
    assert ours.layout.__repr__().split(".")[-1] == theirs.layout.__repr__().split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().to_dense().numpy(), theirs.detach().to_dense().numpy(), rtol=1e-15)
    assert repr(ours).replace("gradiente", "torch") == repr(theirs)


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1)])
def test_torch_sum_of_a_sparse_tensor_over_dims(dim):
    """torch.sum(sparse, dim) was read off the stored values alone (an IndexError, or a wrong scalar)."""
    ours, theirs = g.sum(_coo(g), dim), torch.sum(_coo(torch), dim)
    if theirs.layout == torch.strided:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    else:
        _same_sparse(ours, theirs)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_coo_sum_keepdim_as_torch(dim):
    ours, theirs = _coo(g, requires_grad=True), _coo(torch, requires_grad=True)
    r_ours, r_theirs = ours.sum(dim, keepdim=True), theirs.sum(dim, keepdim=True)
    _same_sparse(r_ours, r_theirs)
    assert r_ours.grad_fn.name() == r_theirs.grad_fn.name()
    with pytest.raises(RuntimeError) as t_info:
        r_theirs.to_dense().sum().backward()
    with pytest.raises(RuntimeError) as g_info:
        r_ours.to_dense().sum().backward()
    assert str(g_info.value) == str(t_info.value)


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1)])
def test_csr_sum_keepdim_as_torch(dim):
    dense = [[1., 0, 2], [0, 3, 0], [0, 0, 0]]
    ours = g.tensor(dense, dtype=g.float64).to_sparse_csr().requires_grad_()
    theirs = torch.tensor(dense, dtype=torch.float64).to_sparse_csr().requires_grad_()
    r_ours, r_theirs = g.sum(ours, dim, keepdim=True), torch.sum(theirs, dim, keepdim=True)
    _same_sparse(r_ours, r_theirs)
    assert r_ours.grad_fn.name() == r_theirs.grad_fn.name() == "SumBackward1"
    assert _error(lambda: r_ours.to_dense().sum().backward()) == _error(lambda: r_theirs.to_dense().sum().backward())
    _same_sparse(ours.sum(dim, keepdim=True, dtype=g.float32), theirs.sum(dim, keepdim=True, dtype=torch.float32))


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_sparse_errors_in_torch_words():
    dense = [[1., 0, 2], [0, 3, 0]]
    for lib in (torch, g):
        lib.d = lib.tensor(dense)
    pairs = [
        (lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 1], [1, 2]]), lib.ones(2, 2), (2, 3, 2)).transpose(1, 2)),
        (lambda lib: lib.d.to_sparse_csr() - lib.d.to_sparse_csr()),
        (lambda lib: lib.d.to_sparse_csc().sub(lib.d.to_sparse_csc())),
        (lambda lib: lib.sum(lib.d.to_sparse_csc(), 0, keepdim=True)),
        (lambda lib: lib.sum(lib.d.to_sparse_csr(), 0)),
    ]
    for make in pairs:
        assert _error(lambda make=make: make(g)) == _error(lambda make=make: make(torch))
    for lib in (torch, g):
        del lib.d


def test_coo_to_another_tensors_dtype():
    _same_sparse(_coo(g).to(g.ones(1, dtype=g.float32)), _coo(torch).to(torch.ones(1, dtype=torch.float32)))


@pytest.mark.parametrize("op", ["mul", "rmul", "div"])
def test_coo_scaled_by_a_0_dim_tensor(op):
    results = []
    for lib in (torch, g):
        s = _coo(lib, requires_grad=True)
        factor = lib.tensor(2.5, dtype=lib.float32)     # a 0-dim tensor counts as a number in type promotion
        out = {"mul": s.__mul__, "rmul": s.__rmul__, "div": s.__truediv__}[op](factor)
        out.to_dense().backward(lib.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=lib.float64))
        results.append((out, out.grad_fn.name(), s.grad))
    (t_out, t_name, t_grad), (g_out, g_name, g_grad) = results
    _same_sparse(g_out.detach(), t_out.detach())
    assert g_name == t_name
    np.testing.assert_allclose(g_grad.to_dense().numpy(), t_grad.to_dense().numpy(), rtol=1e-15)


def test_coo_scaled_by_a_0_dim_tensor_gradcheck():
    indices = g.tensor([[0, 1, 1], [2, 0, 2]])

    def f(values):
        return (g.sparse_coo_tensor(indices, values, (2, 3)) / g.tensor(4.0)).to_dense()
    assert gradcheck(f, (g.tensor([3., 4., 5.], dtype=g.float64, requires_grad=True),))


def test_selective_checkpointing_no_longer_refuses():
    import gradiente.utils.checkpoint as gc
    x = g.ones(2, requires_grad=True)
    out = gc.checkpoint(lambda t: (t * 2).sin(), x, use_reentrant=False,
                        context_fn=lambda: gc.create_selective_checkpoint_contexts([g.ops.aten.mul.Tensor]))
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * np.ones(2)), rtol=1e-6)


# --- complex gradients the audit added (det, inv, matrix_exp, logsumexp are holomorphic; slogdet is written out) --

_M = np.array([[1 + 1j, 2 - 1j, 0.5j], [0.3, -1j, 2 + 0.5j], [1, 1j, -1 + 0.2j]]) * 0.5
_Z = np.array([1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j])
COMPLEX = {
    "linalg.det": (lambda lib, a: lib.linalg.det(a), _M), "det": (lambda lib, a: lib.det(a), _M),
    "linalg.inv": (lambda lib, a: lib.linalg.inv(a), _M), "inverse": (lambda lib, a: lib.inverse(a), _M),
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a), _M), "logsumexp": (lambda lib, z: lib.logsumexp(z, 0), _Z),
    "slogdet.logabsdet": (lambda lib, a: lib.linalg.slogdet(a).logabsdet, _M),
    "slogdet.sign": (lambda lib, a: lib.linalg.slogdet(a).sign, _M),
    "batched det": (lambda lib, a: lib.linalg.det(lib.stack([a, a * 1j])), _M),
    "cholesky": (lambda lib, b: lib.linalg.cholesky(b @ b.mH + lib.eye(3)), _M),
    "cholesky upper": (lambda lib, b: lib.linalg.cholesky(b @ b.mH + lib.eye(3), upper=True), _M),
    "cholesky_ex upper": (lambda lib, b: lib.linalg.cholesky_ex(b @ b.mH + lib.eye(3), upper=True).L, _M),
    "eigvalsh": (lambda lib, b: lib.linalg.eigvalsh(b + b.mH), _M),
    "eigh, |eigenvectors|": (lambda lib, b: lib.linalg.eigh(b + b.mH).eigenvectors.abs(), _M),
    "eigh, eigenvalues": (lambda lib, b: lib.linalg.eigh(b + b.mH).eigenvalues, _M),
}


@pytest.mark.parametrize("name", list(COMPLEX))
def test_complex_gradients_match_torch(name):
    fn, data = COMPLEX[name]
    grads = []
    for lib in (torch, g):
        x = lib.tensor(data, requires_grad=True)
        out = fn(lib, x)
        loss = (out * (out.conj() + 0.3j)).real.sum() if out.is_complex() else (out * 1.7).sum()
        loss.backward()
        grads.append((out.grad_fn.name(), x.grad.numpy()))
    (t_name, t_grad), (g_name, g_grad) = grads
    assert g_name == t_name
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(COMPLEX))
def test_complex_gradcheck(name):
    from gradiente.autograd import gradgradcheck
    fn, data = COMPLEX[name]
    x = g.tensor(data, requires_grad=True)
    assert gradcheck(lambda a: fn(g, a), (x,))
    assert gradgradcheck(lambda a: fn(g, a), (x,))


def test_upper_cholesky_factor_of_a_complex_matrix_is_the_conjugate_transpose():
    """U = Lᴴ (it was Lᵀ, a wrong factor, before this audit)."""
    a = _M @ _M.conj().T + np.eye(3)
    np.testing.assert_allclose(g.linalg.cholesky(g.tensor(a), upper=True).numpy(),
                               torch.linalg.cholesky(torch.tensor(a), upper=True).numpy(), rtol=1e-13)


def test_a_loss_of_a_complex_eigenvectors_phase_is_refused_as_torch():
    errors = []
    for lib in (torch, g):
        x = lib.tensor(_M + _M.conj().T, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.linalg.eigh(x).eigenvectors.real.sum().backward()
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def test_slogdet_of_both_results_of_a_complex_matrix():
    grads = []
    for lib in (torch, g):
        x = lib.tensor(_M, requires_grad=True)
        sign, logabsdet = lib.linalg.slogdet(x)
        ((sign * (0.3 + 0.7j)).real + sign.imag * 2 + logabsdet * 1.3).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)
