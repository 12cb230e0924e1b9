"""``torch.nn.utils.parametrizations``: ``orthogonal``, ``weight_norm`` and ``spectral_norm`` as
parametrizations (``parametrize.register_parametrization``), so their state_dict keys are PyTorch's
(``parametrizations.weight.original0``...).

Every forward here is composed of differentiable gradiente ops, so gradients come from their rules; only
the no-grad initialisations (QR of ``right_inverse``, the power iteration) compute on arrays.
"""
from enum import Enum, auto

import numpy as np

import gradiente

from ...core.grad_mode import no_grad
from ...core.tensor import Tensor
from ...ops.nn.weight_norm import _weight_norm, norm_except_dim
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q):
    n, k = q.size(-2), q.size(-1)
    eye = gradiente.eye(k, dtype=q.dtype)
    eps = 10.0 * n * np.finfo(q._data.dtype).eps
    return gradiente.allclose(q.mH @ q, eye, atol=eps)


def _make_orthogonal(a):
    """The Q of ``a``'s QR decomposition with R's diagonal made positive (the signs of LAPACK's
    Householder R, as PyTorch's geqrf + householder_product)."""
    q, r = np.linalg.qr(a._data, mode="reduced")
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    return Tensor._make(np.ascontiguousarray(q * signs[..., None, :]).astype(a._data.dtype))


def _householder_product(a, tau):
    """``H_0 H_1 ... H_{k-1}`` applied to the first k columns of the identity, with ``H_i = I - tau_i v_i v_iᴴ``
    and ``v_i`` column i of ``a`` below the diagonal with a 1 on it (LAPACK's orgqr), as differentiable ops."""
    n, k = a.size(-2), a.size(-1)
    eye = gradiente.eye(n, dtype=a.dtype)
    q = eye[:, :k].expand(*a.shape[:-2], n, k)
    for i in range(k - 1, -1, -1):
        v = (a[..., :, i] + eye[:, i]).unsqueeze(-1)
        q = q - tau[..., i, None, None] * (v @ (v.mH @ q))
    return q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """The parametrization that ``orthogonal`` registers: a matrix (or batch) with orthonormal columns, or
    rows when it is wide, made from an unconstrained one by ``orthogonal_map``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # A skew-symmetric (n, n) matrix from the lower triangle, padded with zero columns if X is tall.
            X = X.tril()
            if n != k:
                X = gradiente.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = gradiente.matrix_exp(A)
            else:
                eye = gradiente.eye(n, dtype=A.dtype)
                Q = gradiente.linalg.solve(gradiente.add(eye, A, alpha=-0.5), gradiente.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # PyTorch multiplies by the diagonal truncated to integers; kept, so the values agree.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A = _geqrf_reflectors(Q)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                N = gradiente.randn(*Q.size()[:-2], n, n - k, dtype=Q.dtype)
                Q = _make_orthogonal(gradiente.cat([Q, N], dim=-1))
            self.base = Q
            neg_id = gradiente.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def _geqrf_reflectors(q):
    """LAPACK geqrf's packed result for ``q`` with its diagonal replaced by the signs PyTorch's
    ``right_inverse`` stores (so the householder map gives back ``q``)."""
    packed, tau = np.linalg.qr(q._data, mode="raw")
    a = np.swapaxes(packed, -1, -2).copy()
    signs = np.sign(np.diagonal(a, axis1=-2, axis2=-1))
    signs[tau == 0.0] *= -1
    idx = np.arange(signs.shape[-1])
    a[..., idx, idx] = signs
    return Tensor._make(a.astype(q._data.dtype))


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Make ``module.<name>`` (a matrix or batch of matrices, shape ``(..., n, k)``) orthogonal: orthonormal
    columns if n ≥ k, rows otherwise. ``orthogonal_map``: ``"matrix_exp"`` (square or complex default),
    ``"cayley"`` or ``"householder"`` (default for non-square real). ``use_trivialization``: keep a ``base``
    buffer so that assignment works and optimisation runs around it. The starting value is the QR
    orthogonalisation of the current weight. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square_or_complex = weight.size(-2) == weight.size(-1) or weight.is_complex()
        orthogonal_map = "matrix_exp" if square_or_complex else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """The parametrization that ``weight_norm`` registers: ``weight = g * v / ||v||``, the norm taken over every
    dim but ``dim``; its originals are ``g`` (original0) and ``v`` (original1)."""

    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into a magnitude ``original0`` (its norm over every dim but ``dim``;
    ``dim=None``: one norm for all) and a direction ``original1``, as ``parametrizations.<name>``.
    A state_dict of the older ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) still loads. Returns
    ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(mod, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


def _reshape_weight_to_matrix(weight, dim):
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.flatten(1)


def _power_iteration(weight_mat, u, v, n_power_iterations, eps):
    """Update the buffers ``u`` and ``v`` in place by ``n_power_iterations`` rounds of
    ``u = normalize(W v)``, ``v = normalize(Wᴴ u)``, the estimate of W's top singular vectors."""
    with no_grad():
        for _ in range(n_power_iterations):
            u.copy_(F.normalize(gradiente.mv(weight_mat, v), dim=0, eps=eps))
            v.copy_(F.normalize(gradiente.mv(weight_mat.H, u), dim=0, eps=eps))


class _SpectralNorm(Module):
    """The parametrization that ``spectral_norm`` registers: ``weight / sigma``, sigma W's largest singular
    value estimated by power iteration on the buffers ``_u`` and ``_v`` (one round per forward in training)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _reshape_weight_to_matrix(weight, self.dim)
            h, w = weight_mat.size()
            # Drawn in this order from the default generator, as PyTorch does: the same seed gives the same u, v.
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            _power_iteration(weight_mat.detach(), self._u, self._v, 15, self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = _reshape_weight_to_matrix(weight, self.dim)
        if self.training:
            _power_iteration(weight_mat.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        u, v = self._u.clone(), self._v.clone()
        sigma = gradiente.vdot(u, gradiente.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm (largest singular value of the weight reshaped to a
    matrix with ``dim`` first; default 0, 1 for transposed convolutions), estimated by power iteration.
    The buffers ``_u`` and ``_v`` start from ``normal_`` draws of the default generator and 15 rounds.
    Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
