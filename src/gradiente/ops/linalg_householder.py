"""Householder reflectors, LAPACK's compact form of an orthogonal matrix: ``geqrf`` (the QR factorization as
reflectors), ``linalg.householder_product`` (alias ``orgqr``: the product of the reflectors, Q) and ``ormqr`` (Q,
or Qᴴ, times a matrix without forming Q), for a matrix or a batch ``(..., m, n)``.

Reflector i is Hᵢ = I − τᵢ vᵢ vᵢᴴ, vᵢ being column i of the input below the diagonal, with a 1 on it; Q = H₁H₂⋯Hₖ.
The derivatives of the products hold for complex inputs too, in PyTorch's convention.
"""
import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.dtype import scalar_name
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.rules import numpy_ops

__all__ = ["geqrf", "householder_product", "orgqr", "ormqr"]



def _mH(ops, x):
    """The conjugate transpose of the last two axes (the transpose, for real x)."""
    return ops.conj(ops.transpose(x, -1, -2))


def _reflector_vectors(ops, a, rows):
    """The vectors vᵢ as the columns of one matrix: ``a`` below its diagonal, ones on it, zeros above."""
    eye = ops.constant(np.eye(rows, a.shape[-1]), a)
    return ops.tril(a, -1) + eye


def _reflector_products(ops, vectors, tau):
    """Q = H₁H₂⋯Hₖ (m × m) and its prefixes H₁⋯Hᵢ₋₁, for vectors ``(..., m, ≥k)`` and tau ``(..., k)``."""
    rows = vectors.shape[-2]
    q = ops.constant(np.eye(rows), vectors)
    prefixes = []
    for i in range(tau.shape[-1]):
        prefixes.append(q)
        v = ops.narrow(vectors, -1, i, 1)
        t = ops.unsqueeze(ops.narrow(tau, -1, i, 1), -1)
        q = q - ops.matmul(ops.matmul(q, v) * t, _mH(ops, v))
    return q, prefixes


def _reflector_grads(ops, vectors, tau, grad_q):
    """The gradients of the vectors (``(..., m, k)``) and of tau from that of Q = H₁⋯Hₖ (m × m): with
    Lᵢ = H₁⋯Hᵢ₋₁ and Rᵢ = Hᵢ₊₁⋯Hₖ, the gradient of Hᵢ is M = Lᵢᴴ·gQ·Rᵢᴴ, and Hᵢ = I − τvvᴴ gives
    dτ = −vᴴMv and dv = −(τ̄M + τMᴴ)v (for real numbers −τ(M + Mᵀ)v; complex ones in PyTorch's convention,
    the conjugate Wirtinger derivative)."""
    _, prefixes = _reflector_products(ops, vectors, tau)
    after = ops.constant(np.eye(vectors.shape[-2]), vectors)
    grad_vectors, grad_tau = [], []
    for i in reversed(range(tau.shape[-1])):
        v = ops.narrow(vectors, -1, i, 1)
        t = ops.unsqueeze(ops.narrow(tau, -1, i, 1), -1)
        m = ops.matmul(ops.matmul(_mH(ops, prefixes[i]), grad_q), _mH(ops, after))
        grad_tau.append(-ops.sum(ops.matmul(_mH(ops, v), ops.matmul(m, v)), -1))
        grad_vectors.append(-ops.matmul(ops.conj(t) * m + t * _mH(ops, m), v))
        after = after - ops.matmul(v * t, ops.matmul(_mH(ops, v), after))
    return ops.cat(grad_vectors[::-1], -1), ops.cat(grad_tau[::-1], -1)


def _input_grad(ops, grad_vectors, shape):
    """The gradient of the input from that of its first k reflector vectors: only below the diagonal counts."""
    cols = shape[-1]
    k = grad_vectors.shape[-1]
    if k < cols:
        grad_vectors = ops.cat([grad_vectors, ops.zeros(grad_vectors.shape[:-1] + (cols - k,), grad_vectors)], -1)
    return ops.tril(grad_vectors, -1)


# --- geqrf ----------------------------------------------------------------------------------------------

class GeqrfBackward0(Node):
    """geqrf has no derivative in PyTorch (linalg.qr has): backward raises, as there"""
    formula = "no derivative defined"

    def backward(self, ops, grad_a, grad_tau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _householder_qr(a):
    """LAPACK geqrf's (a, tau) of one matrix: NumPy's ``qr(mode='raw')`` calls geqrf and returns its array in
    Fortran order, that is transposed."""
    h, tau = np.linalg.qr(a, mode="raw")
    return np.swapaxes(h, -1, -2), tau


def geqrf(input, *, out=None):
    """The QR factorization as LAPACK's geqrf leaves it: ``a`` ``(..., m, n)`` holds R on and above its diagonal
    and the Householder vectors below it, ``tau`` ``(..., min(m, n))`` their scales. Q is
    ``householder_product(a, tau)``. Not differentiable (use ``linalg.qr``), as in PyTorch."""
    x = input._data
    if x.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if x.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{scalar_name(x.dtype)}'")
    if 0 in x.shape[-2:]:
        a, tau = x.copy(), np.zeros(x.shape[:-2] + (min(x.shape[-2:]),), x.dtype)
    else:
        a, tau = _householder_qr(x)
    a, tau = wrap(a.astype(x.dtype, copy=False)), wrap(tau.astype(x.dtype, copy=False))
    if wants_grad(input):
        record(GeqrfBackward0, (input,), (a, tau))
    if out is not None:
        out[0].copy_(a)
        out[1].copy_(tau)
        return return_types.geqrf(*out)
    return return_types.geqrf(a, tau)


# --- the product of the reflectors ----------------------------------------------------------------------

class LinalgHouseholderProductBackward0(Node):
    """Q = (H₁⋯Hₖ)[:, :n], Hᵢ = I − τᵢvᵢvᵢᵀ;  the gradient of the full product is gQ padded with zero columns,
    and each reflector's part, M = (H₁⋯Hᵢ₋₁)ᵀ gQ (Hᵢ₊₁⋯Hₖ)ᵀ, gives dτᵢ = −vᵢᵀMvᵢ, dvᵢ = −τᵢ(M + Mᵀ)vᵢ"""
    __slots__ = ()
    complex_ok = True           # written with conjugate transposes, for the conjugate Wirtinger derivative
    formula = "∂(H₁⋯Hₖ)/∂(V, τ): dτᵢ = −vᵢᵀMvᵢ, dvᵢ = −τᵢ(M + Mᵀ)vᵢ"

    def backward(self, ops, grad):
        a, tau = self.saved(ops)
        rows, cols = a.shape[-2:]
        if cols < rows:
            grad = ops.cat([grad, ops.zeros(grad.shape[:-1] + (rows - cols,), grad)], -1)
        grad_vectors, grad_tau = _reflector_grads(ops, _reflector_vectors(ops, a, rows), tau, grad)
        return _input_grad(ops, grad_vectors, a.shape), grad_tau


def _check_batches(name, x, tau, other=None):
    """tau (and ``other``) must have the input's batch dimensions: PyTorch broadcasts none of them."""
    if tau.ndim != x.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {x.ndim}")
    if other is not None and other.ndim != x.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {other.ndim} and input.ndim is equal to {x.ndim}")
    batches = [("tau", tau.shape[:-1])] + ([] if other is None else [("other", other.shape[:-2])])
    for what, shape in batches:
        if shape != x.shape[:-2]:
            raise RuntimeError(f"{name}: Expected batch dimensions of {what} to be equal to input.shape[:-2], but got "
                               f"[{', '.join(map(str, shape))}]")


def _check_householder(x, tau):
    name = "torch.linalg.householder_product"
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if x.shape[-2] < x.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if x.shape[-1] < tau.shape[-1] if tau.ndim else False:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    _check_batches(name, x, tau)
    if tau.dtype != x.dtype:
        raise RuntimeError(f"{name}: tau dtype {scalar_name(tau.dtype)} does not match input dtype "
                           f"{scalar_name(x.dtype)}")
    if dt.kind(x.dtype) not in "fc" or x.dtype == np.float16:
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{scalar_name(x.dtype)}'")


def householder_product(input, tau, *, out=None):
    """The first n columns of H₁H₂⋯Hₖ, Hᵢ = I − τᵢvᵢvᵢᴴ, for ``input`` ``(..., m, n)`` (m ≥ n) holding the vectors vᵢ
    below its diagonal (as ``geqrf`` leaves them) and tau ``(..., k)``, k ≤ n: Q ``(..., m, n)``. Differentiable
    in both."""
    a, t = input._data, tau._data
    _check_householder(a, t)
    q, _ = _reflector_products(numpy_ops, _reflector_vectors(numpy_ops, a, a.shape[-2]), t)
    result = wrap(np.ascontiguousarray(q[..., :a.shape[-1]]).astype(a.dtype, copy=False))
    if wants_grad(input, tau):
        record(LinalgHouseholderProductBackward0, (input, tau), result, (input, tau))
    return result if out is None else out.copy_(result)


def orgqr(input, input2, *, out=None):
    """``linalg.householder_product(input, tau=input2)``, under LAPACK's name (and PyTorch's argument names)."""
    return householder_product(input, input2, out=out)


# --- Q times a matrix -----------------------------------------------------------------------------------

class OrmqrBackward0(Node):
    """out = op(Q)·C (or C·op(Q), op the identity or the transpose), Q = H₁⋯Hₖ;  dC = op(Q)ᵀ·grad (or
    grad·op(Q)ᵀ), and Q's gradient (grad·Cᵀ, C·gradᵀ, Cᵀ·grad or gradᵀ·C, by side and op) goes to the reflectors
    as in householder_product's rule"""
    __slots__ = ()
    complex_ok = True           # written with conjugate transposes, for the conjugate Wirtinger derivative
    formula = "∂(op(Q)·C)/∂(V, τ, C): dC = op(Q)ᵀ·grad, gQ → reflectors"

    def backward(self, ops, grad):
        a, tau, other = self.saved(ops)
        vectors = _reflector_vectors(ops, a, a.shape[-2])
        q, _ = _reflector_products(ops, vectors, tau)
        grad_other = None
        if self.next_functions[2][0] is not None:
            q_op = q if self.transpose else _mH(ops, q)     # op(Q)ᴴ
            grad_other = ops.matmul(q_op, grad) if self.left else ops.matmul(grad, q_op)
        grad_a = grad_tau = None
        if self.next_functions[0][0] is not None or self.next_functions[1][0] is not None:
            if self.left:
                grad_q = ops.matmul(other, _mH(ops, grad)) if self.transpose else ops.matmul(grad, _mH(ops, other))
            else:
                grad_q = ops.matmul(_mH(ops, grad), other) if self.transpose else ops.matmul(_mH(ops, other), grad)
            grad_vectors, grad_tau = _reflector_grads(ops, vectors, tau, grad_q)
            grad_a = _input_grad(ops, grad_vectors, a.shape)
        return grad_a, grad_tau, grad_other


def _check_ormqr(x, tau, c, left):
    name = "torch.ormqr"
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != x.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != min(c.shape[side], x.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])")
    _check_batches(name, x, tau, c)
    if tau.dtype != x.dtype:
        raise RuntimeError(f"{name}: Expected input and tau to have the same dtype, but input has dtype"
                           f"{scalar_name(x.dtype)} and tau has dtype {scalar_name(tau.dtype)}")
    if c.dtype != x.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but input has dtype"
                           f"{scalar_name(x.dtype)} and other has dtype {scalar_name(c.dtype)}")
    if dt.kind(x.dtype) not in "fc" or x.dtype == np.float16:
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for '{scalar_name(x.dtype)}'")


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """op(Q)·C (``left=True``) or C·op(Q), Q = H₁⋯Hₖ the m × m product of the reflectors in ``input``
    ``(..., m, k)`` and tau ``input2`` ``(..., k)`` (as ``geqrf`` gives them), C ``input3`` ``(..., m, n)`` or
    ``(..., n, m)``; op is the conjugate transpose when ``transpose=True``. Differentiable in all three.
    (PyTorch's documentation calls the arguments input, tau and other; its binding, input, input2 and input3, which
    keyword callers must use.)"""
    tau, other = input2, input3
    x, t, c = input._data, tau._data, other._data
    _check_ormqr(x, t, c, left)
    ops = numpy_ops
    rows = x.shape[-2]
    q, _ = _reflector_products(ops, _reflector_vectors(ops, x, rows), t)
    if transpose:
        q = np.conj(np.swapaxes(q, -1, -2))
    result = q @ c if left else c @ q
    result = wrap(result.astype(x.dtype, copy=False))
    if wants_grad(input, tau, other):
        record(OrmqrBackward0, (input, tau, other), result, (input, tau, other), left=left, transpose=transpose)
    return result if out is None else out.copy_(result)

