"""``lobpcg`` (``ops/linalg_lobpcg.py``) against ``torch.lobpcg`` and against the full eigendecomposition: the k
largest or smallest eigenvalues of symmetric positive-definite matrices, batched, generalized (B), from a given
start or a preconditioner, in float32 and float64; eigenvectors that are eigenvectors; the gradients; the shape
checks."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(16)


def _spd(n, batch=(), spread=1.0):
    """Symmetric positive-definite matrices with well separated eigenvalues 1, 1 + spread, ..."""
    q, _ = np.linalg.qr(RNG.standard_normal(batch + (n, n)))
    values = 1 + spread * np.arange(n) + 0.1 * RNG.random(batch + (n,))
    return (q * values[..., None, :]) @ np.swapaxes(q, -1, -2)


def _check_pairs(values, vectors, a, b=None, rtol=1e-6):
    """Each column is an eigenvector of its value: A x = λ B x."""
    a_x = a @ vectors
    b_x = vectors if b is None else b @ vectors
    np.testing.assert_allclose(a_x, b_x * values[..., None, :], atol=rtol * np.abs(values).max() * 10)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,k", [((12,), 2), ((30,), 4), ((2, 15), 3)])
def test_eigenvalues_match_torch_and_eigh(largest, dtype, shape, k):
    a = _spd(shape[-1], shape[:-1]).astype(dtype)
    values, vectors = gradiente.lobpcg(gradiente.tensor(a), k=k, largest=largest)
    t_values, _ = torch.lobpcg(torch.tensor(a), k=k, largest=largest)
    assert values.dtype == getattr(gradiente, dtype) and tuple(values.shape) == tuple(t_values.shape)
    assert tuple(vectors.shape) == shape[:-1] + (shape[-1], k)
    rtol = 1e-3 if dtype == "float32" else 1e-7
    np.testing.assert_allclose(values.numpy(), t_values.numpy(), rtol=rtol)
    exact = np.linalg.eigvalsh(a.astype("float64"))
    wanted = exact[..., ::-1][..., :k] if largest else exact[..., :k]
    np.testing.assert_allclose(values.numpy(), wanted, rtol=rtol)
    _check_pairs(values.numpy().astype("float64"), vectors.numpy().astype("float64"), a.astype("float64"),
                 rtol=rtol)


def test_generalized_problem_start_and_preconditioner():
    a, b = _spd(20), _spd(20, spread=0.1)
    start = RNG.standard_normal((20, 3))
    preconditioner = np.linalg.inv(a)
    ours = gradiente.lobpcg(gradiente.tensor(a), B=gradiente.tensor(b), X=gradiente.tensor(start),
                            iK=gradiente.tensor(preconditioner), largest=False)
    theirs = torch.lobpcg(torch.tensor(a), B=torch.tensor(b), X=torch.tensor(start), iK=torch.tensor(preconditioner),
                          largest=False)
    assert tuple(ours[0].shape) == tuple(theirs[0].shape) == (3,)
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-7)
    _check_pairs(ours[0].numpy(), ours[1].numpy(), a, b)
    gram = ours[1].numpy().T @ b @ ours[1].numpy()
    np.testing.assert_allclose(gram, np.eye(3), atol=1e-8)     # B-orthonormal, as PyTorch's


def test_a_sparse_matrix_and_the_seeded_start():
    a = _spd(15)
    gradiente.manual_seed(0)
    dense = gradiente.lobpcg(gradiente.tensor(a), k=2)[0]
    gradiente.manual_seed(0)
    sparse = gradiente.lobpcg(gradiente.tensor(a).to_sparse(), k=2)[0]
    np.testing.assert_array_equal(dense.numpy(), sparse.numpy())
    np.testing.assert_allclose(dense.numpy(), torch.lobpcg(torch.tensor(a).to_sparse(), k=2)[0].numpy(), rtol=1e-7)


@pytest.mark.parametrize("call", [
    lambda lib: lib.lobpcg(lib.ones(10, 10), k=4),
    lambda lib: lib.lobpcg(lib.ones(10, 9), k=2),
    lambda lib: lib.lobpcg(lib.ones(10, 10), k=2, B=lib.ones(9, 9)),
    lambda lib: lib.lobpcg(lib.ones(10, 10), X=lib.ones(9, 2)),
], ids=["too_many_pairs", "not_square", "b_shape", "x_shape"])
def test_shape_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(gradiente)
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "gradiente.Size")


@pytest.mark.parametrize("largest", [True, False])
def test_gradients_match_torch_and_gradcheck(largest):
    a = _spd(12) + 0.01 * RNG.standard_normal((12, 12))       # not quite symmetric: lobpcg symmetrizes it
    weights = RNG.standard_normal(2)
    grads = []
    for lib in (gradiente, torch):
        x = lib.tensor(a, requires_grad=True)
        values, vectors = lib.lobpcg(x, k=2, largest=largest, tol=1e-12)
        assert type(values.grad_fn).__name__ == "LOBPCGAutogradFunctionBackward"
        assert type(values.grad_fn.next_functions[0][0]).__name__ == "DivBackward0"
        # squared eigenvector entries: a loss that does not depend on each eigenvector's sign
        (values.sum() + (vectors ** 2 * lib.tensor(weights)).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-9)
    x = gradiente.tensor(a, requires_grad=True)
    assert gradiente.autograd.gradcheck(lambda t: gradiente.lobpcg(t, k=2, largest=largest, tol=1e-12)[0], (x,))


def test_no_gradient_with_b_as_in_torch():
    a, b = _spd(9), _spd(9, spread=0.1)
    for lib in (gradiente, torch):
        values, _ = lib.lobpcg(lib.tensor(a, requires_grad=True), k=1, B=lib.tensor(b))
        with pytest.raises(ValueError, match=r"lobpcg\.backward does not support backward with B != I yet\."):
            values.sum().backward()
