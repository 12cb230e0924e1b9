"""``torch.linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``: A = L D Lᵀ (L Dᴴ Lᴴ with ``hermitian=True``)
for a symmetric or Hermitian, possibly indefinite, matrix, with Bunch-Kaufman's symmetric pivoting and 1×1 or 2×2
blocks on D, stored compactly as LAPACK's sytrf (lower triangle) stores it; and the solve that reads that form.

NumPy has no sytrf, so both are written here, step for step as LAPACK's unblocked sytf2/hetf2 and sytrs/hetrs.
PyTorch, like LAPACK, has no derivative for either.
"""
import math

import numpy as np

from ..core import dtype as dt
from ..core import return_types
from ..core.dtype import scalar_name
from ..core.errors import broadcast_shape
from ..core.record import wrap
from .arithmetic import _without_derivative
from .linalg import _check_square

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]


_ALPHA = (1 + math.sqrt(17)) / 8        # Bunch-Kaufman's threshold, which bounds the growth of the entries


def _size(z):
    """LAPACK's cabs1 for complex numbers, |Re| + |Im|, with which i?amax picks its pivots; |x| for real ones."""
    return np.abs(z.real) + np.abs(z.imag) if np.iscomplexobj(z) else np.abs(z)


def _factor_one(a, hermitian):
    """sytf2/hetf2 on the lower triangle of one matrix, in place: returns LAPACK's (1-based) pivots and info."""
    n = a.shape[0]
    conj = np.conj if hermitian else (lambda z: z)
    real = np.real if hermitian else (lambda z: z)
    pivots = np.zeros(n, dtype=np.int32)
    info, k = 0, 0
    while k < n:
        step = 1
        diagonal = abs(real(a[k, k])) if hermitian else _size(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_size(a[k + 1:, k])))
            colmax = _size(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(diagonal, colmax) == 0 or np.isnan(diagonal):
            info = info or k + 1
            kp = k
            if hermitian:
                a[k, k] = real(a[k, k])
        else:
            if diagonal >= _ALPHA * colmax:
                kp = k
            else:
                rowmax = _size(a[imax, k:imax]).max()
                if imax < n - 1:
                    rowmax = max(rowmax, _size(a[imax + 1:, imax]).max())
                if diagonal >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif (abs(real(a[imax, imax])) if hermitian else _size(a[imax, imax])) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, step = imax, 2
            kk = k + step - 1
            if kp != kk:
                _interchange(a, kk, kp, conj, real)
                if step == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k].copy()
            if hermitian:
                a[k, k] = real(a[k, k])
                if step == 2:
                    a[k + 1, k + 1] = real(a[k + 1, k + 1])
            if step == 1:
                _eliminate_one(a, k, conj, real)
            else:
                _eliminate_two(a, k, conj, real, hermitian)
        pivots[k] = kp + 1 if step == 1 else -(kp + 1)
        if step == 2:
            pivots[k + 1] = pivots[k]
        k += step
    return pivots, info


def _interchange(a, kk, kp, conj, real):
    """Swap rows and columns kk and kp of the trailing lower triangle."""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = slice(kk + 1, kp)
    column, row = a[between, kk].copy(), a[kp, between].copy()
    a[between, kk], a[kp, between] = conj(row), conj(column)
    a[kp, kk] = conj(a[kp, kk])
    a[kk, kk], a[kp, kp] = real(a[kp, kp]), real(a[kk, kk])


def _eliminate_one(a, k, conj, real):
    """A 1×1 pivot: the trailing triangle loses x·d⁻¹·xᴴ, and x becomes the column of L."""
    if k == a.shape[0] - 1:
        return
    inverse = 1 / real(a[k, k])
    x = a[k + 1:, k].copy()
    a[k + 1:, k + 1:] -= np.tril(inverse * np.outer(x, conj(x)))
    a[k + 1:, k] = x * inverse


def _eliminate_two(a, k, conj, real, hermitian):
    """A 2×2 pivot on rows k, k + 1: the trailing triangle loses W·D⁻¹·Wᴴ, and W·D⁻¹ becomes L's two columns."""
    if k >= a.shape[0] - 2:
        return
    if hermitian:
        d = abs(a[k + 1, k])
        d11, d22 = real(a[k + 1, k + 1]) / d, real(a[k, k]) / d
        d21 = a[k + 1, k] / d
        scale = 1 / (d11 * d22 - 1) / d
        first = scale * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
        second = scale * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
    else:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        scale = 1 / (d11 * d22 - 1) / d21
        first = scale * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
        second = scale * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
    update = np.outer(a[k + 2:, k], conj(first)) + np.outer(a[k + 2:, k + 1], conj(second))
    a[k + 2:, k + 2:] -= np.tril(update)
    a[k + 2:, k], a[k + 2:, k + 1] = first, second
    if hermitian:
        trailing = np.arange(k + 2, a.shape[0])
        a[trailing, trailing] = real(a[trailing, trailing])


def _check_factor(a):
    name = "torch.linalg.ldl_factor_ex"
    _check_square(name, a)
    if dt.kind(a.dtype) not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_name(a.dtype)}")
    if a.dtype == np.float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def _factor(A, hermitian):
    a = A._data
    _check_factor(a)
    n = a.shape[-1]
    ld = np.tril(np.array(a, dtype=a.dtype))
    pivots = np.zeros(a.shape[:-1], dtype=np.int32)
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    hermitian = hermitian and np.iscomplexobj(a)
    for index in np.ndindex(a.shape[:-2]):
        pivots[index], info[index] = _factor_one(ld[index], hermitian)
    ld, pivots = wrap(np.tril(ld) if n else ld), wrap(pivots)
    _without_derivative("linalg_ldl_factor_ex", (A,), (ld,))
    return ld, pivots, wrap(info)


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """The LDL factorization of the symmetric (Hermitian with ``hermitian=True``) matrices ``(..., n, n)``, of
    which only the lower triangle is read: ``LD`` ``(..., n, n)`` (L below the diagonal, D's blocks on and just
    below it, zeros above), ``pivots`` ``(..., n)`` as LAPACK's sytrf (1-based; negative pairs for a 2×2 block) and
    ``info`` (the 1-based position of the first zero pivot, 0 when none). The pivots are the unblocked
    algorithm's (sytf2); LAPACK's blocked sytrf, which PyTorch calls, makes the same choices except where rounding
    ties two candidates, and either is a valid factorization that ``ldl_solve`` reads."""
    ld, pivots, info = _factor(input, hermitian)
    if check_errors and info._data.any():
        _raise_info(info._data, "torch.linalg.ldl_factor_ex")
    return return_types.linalg_ldl_factor_ex(ld, pivots, info)


def _raise_info(info, name):
    # PyTorch's own message: its check has no case for a positive info (a singular D), so it reports its
    # internal assertion, which a program that compares messages sees.
    code = int(np.reshape(info, -1)[np.flatnonzero(info)[0]])
    raise RuntimeError('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                       'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. '
                       f"{name}: Unknown error code: {code}.")


def ldl_factor(input, *, hermitian=False, out=None):
    """``ldl_factor_ex`` that raises when D is singular; returns ``(LD, pivots)``."""
    ld, pivots, info = _factor(input, hermitian)
    if info._data.any():
        _raise_info(info._data, "torch.linalg.ldl_factor")
    return return_types.linalg_ldl_factor(ld, pivots)


# --- the solve --------------------------------------------------------------------------------------------

def _solve_one(ld, pivots, b, hermitian):
    """sytrs/hetrs: X with A X = B from the lower factorization (``b`` ``(n, k)``, overwritten)."""
    conj = np.conj if hermitian else (lambda z: z)
    n = ld.shape[0]
    k = 0
    while k < n:                        # L D Y = B, the interchanges applied on the way
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k].real if hermitian else ld[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            off = ld[k + 1, k]
            first, second = ld[k, k] / conj(off), ld[k + 1, k + 1] / off
            denominator = first * second - 1
            top, bottom = b[k] / conj(off), b[k + 1] / off
            b[k], b[k + 1] = (second * top - bottom) / denominator, (first * bottom - top) / denominator
            k += 2
    k = n - 1
    while k >= 0:                       # Lᵀ X = Y (Lᴴ), the interchanges undone in reverse
        if pivots[k] > 0:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _check_solve(ld, pivots, b):
    name = "torch.linalg.ldl_solve"
    _check_square(name, ld)
    if b.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(b.ndim, 1)}, "
                         f"{max(b.ndim, 1) - 1}], but got -2)")
    if pivots.shape != ld.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape [{', '.join(map(str, pivots.shape))}] instead")
    if pivots.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {scalar_name(pivots.dtype)}")
    if b.dtype != ld.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {scalar_name(b.dtype)} and A "
                           f"of type {scalar_name(ld.dtype)} instead.")
    if b.shape[-2] != ld.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {ld.shape[-1]} by "
                           f"{ld.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X ``(..., n, k)`` with A X = B, for A given by ``ldl_factor``'s ``(LD, pivots)`` and B ``(..., n, k)``;
    batch dimensions broadcast. Not differentiable, as in PyTorch."""
    ld, piv, b = LD._data, pivots._data, B._data
    _check_solve(ld, piv, b)
    batch = broadcast_shape(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=b.dtype)
    hermitian = hermitian and np.iscomplexobj(ld)
    for index in np.ndindex(batch):
        _solve_one(ld[index], piv[index], x[index], hermitian)
    result = wrap(x)
    _without_derivative("linalg_ldl_solve", (LD, B), (result,))
    return result if out is None else out.copy_(result)
