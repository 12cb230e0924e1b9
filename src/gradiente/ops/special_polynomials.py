"""The orthogonal polynomials of ``torch.special``: Chebyshev T, U, V, W (and shifted to [0, 1]), Hermite H
(physicists') and He (probabilists'), Laguerre L and Legendre P, each ``f(input, n)`` evaluated elementwise with
the degree ``n`` truncated to an integer (either side may be a number).

As in PyTorch they are not differentiable: the result records no node and does not require grad. A negative
degree gives 0. Values come from the three-term recurrences, with PyTorch's closed forms at x = ±1 and, for
high degrees inside (-1, 1), its trigonometric forms of T, U, V, W, so that rounding follows PyTorch's.

Pure NumPy on purpose: scipy.special would add a large runtime dependency for a dozen functions whose
recurrences fit in a page, and its edge conventions (negative n, x = ±1) differ from PyTorch's.
"""
import numpy as np

from ..core import dtype as dt
from ..core.errors import broadcasting
from ..core.record import as_result, promote_operands
from .arithmetic import _write_out

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]


def _recurrence(x, n, first, step):
    """p_n(x) from p_0 = 1, p_1 = ``first(x)`` and p_{k+1} = ``step(k, x, p_k, p_{k-1})``, for an array of
    degrees ``n`` (each element stops at its own degree); negative degrees give 0."""
    previous, current = np.ones_like(x), first(x)
    result = np.where(n == 0, previous, np.where(n == 1, current, 0.0)).astype(x.dtype)
    top = int(n.max(initial=0))
    with np.errstate(all="ignore"):
        for k in range(1, top):
            previous, current = current, step(k, x, current, previous)
            result = np.where(n == k + 1, current, result)
    return result


def _degree(n):
    with np.errstate(invalid="ignore"):
        return np.trunc(n).astype(np.int64) if n.dtype.kind == "f" else n.astype(np.int64)


def _odd(n):
    return (n % 2) == 1


def _chebyshev_t(x, n):
    value = _recurrence(x, n, lambda x: x, lambda k, x, p, q: 2 * x * p - q)
    with np.errstate(invalid="ignore"):
        trig = np.cos(n * np.arccos(np.clip(x, -1, 1)))
    value = np.where((n > 6) & (np.abs(x) < 1), trig, value)
    edge = np.where((x > 0) | ~_odd(n), 1.0, -1.0)
    return np.where(n < 0, 0.0, np.where(np.abs(x) == 1, edge, value))


def _chebyshev_u(x, n):
    value = _recurrence(x, n, lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q)
    with np.errstate(all="ignore"):
        angle = np.arccos(np.clip(x, -1, 1))
        trig = np.where(np.sin(angle) != 0, np.sin((n + 1) * angle) / np.sin(angle),
                        (n + 1) * np.cos((n + 1) * angle) / x)
    value = np.where((n > 8) & (np.abs(x) < 1), trig, value)
    edge = np.where((x > 0) | ~_odd(n), n + 1.0, -(n + 1.0))
    return np.where(n < 0, 0.0, np.where(np.abs(x) == 1, edge, value))


def _chebyshev_v(x, n):
    value = _recurrence(x, n, lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * p - q)
    with np.errstate(all="ignore"):
        angle = np.arccos(np.clip(x, -1, 1))
        trig = np.where(np.sin(angle / 2) != 1, np.cos((n + 0.5) * angle) / np.cos(angle / 2),
                        np.where(_odd(n), -(2.0 * n + 1), 2.0 * n + 1))
    value = np.where((n > 8) & (np.abs(x) < 1), trig, value)
    edge = np.where(x > 0, 1.0, np.where(_odd(n), -(2.0 * n + 1), 2.0 * n + 1))
    return np.where(n < 0, 0.0, np.where(np.abs(x) == 1, edge, value))


def _chebyshev_w(x, n):
    value = _recurrence(x, n, lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * p - q)
    with np.errstate(all="ignore"):
        angle = np.arccos(np.clip(x, -1, 1))
        trig = np.where(np.cos(angle / 2) != 1, np.sin((n + 0.5) * angle) / np.sin(angle / 2),
                        np.where(x > 0, 2.0 * n + 1, np.where(_odd(n), -1.0, 1.0)))
    value = np.where((n > 8) & (np.abs(x) < 1), trig, value)
    edge = np.where(x > 0, 2.0 * n + 1, np.where(_odd(n), -1.0, 1.0))
    return np.where(n < 0, 0.0, np.where(np.abs(x) == 1, edge, value))


def _shifted(kernel):
    """The polynomial on [0, 1]: ``kernel`` at 2x - 1."""
    def shifted(x, n):
        with np.errstate(all="ignore"):
            return kernel(2 * x - 1, n)
    return shifted


def _hermite_h(x, n):
    value = _recurrence(x, n, lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q)
    return np.where(n < 0, 0.0, value)


def _hermite_he(x, n):
    value = _recurrence(x, n, lambda x: x, lambda k, x, p, q: x * p - k * q)
    return np.where(n < 0, 0.0, value)


def _laguerre_l(x, n):
    value = _recurrence(x, n, lambda x: 1 - x, lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1))
    return np.where(n < 0, 0.0, np.where(x == 0, 1.0, value))


def _legendre_p(x, n):
    value = _recurrence(x, n, lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1))
    edge = np.where((x > 0) | ~_odd(n), 1.0, -1.0)
    return np.where(n < 0, 0.0, np.where(np.abs(x) == 1, edge, value))


def _polynomial(name, kernel):
    def evaluate(x, n):
        compute = np.float32 if x.dtype in dt.REDUCED_FLOATS else x.dtype
        return kernel(x.astype(compute), _degree(np.asanyarray(n))).astype(x.dtype)

    def polynomial(input, n, *, out=None):
        xa, na, target = promote_operands(input, n, floating=True)
        xa = np.asanyarray(xa, dtype=target)
        result = as_result(broadcasting(evaluate, xa, np.asanyarray(na)), target)
        return result if out is None else _write_out(result, out, name)

    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = (f"The polynomial ``{name}(input, n)`` elementwise (shapes broadcast; ``n`` truncated to "
                          f"an integer, negative n gives 0). Not differentiable, as in PyTorch.")
    return polynomial


chebyshev_polynomial_t = _polynomial("special_chebyshev_polynomial_t", _chebyshev_t)
chebyshev_polynomial_u = _polynomial("special_chebyshev_polynomial_u", _chebyshev_u)
chebyshev_polynomial_v = _polynomial("special_chebyshev_polynomial_v", _chebyshev_v)
chebyshev_polynomial_w = _polynomial("special_chebyshev_polynomial_w", _chebyshev_w)
shifted_chebyshev_polynomial_t = _polynomial("special_shifted_chebyshev_polynomial_t", _shifted(_chebyshev_t))
shifted_chebyshev_polynomial_u = _polynomial("special_shifted_chebyshev_polynomial_u", _shifted(_chebyshev_u))
shifted_chebyshev_polynomial_v = _polynomial("special_shifted_chebyshev_polynomial_v", _shifted(_chebyshev_v))
shifted_chebyshev_polynomial_w = _polynomial("special_shifted_chebyshev_polynomial_w", _shifted(_chebyshev_w))
hermite_polynomial_h = _polynomial("special_hermite_polynomial_h", _hermite_h)
hermite_polynomial_he = _polynomial("special_hermite_polynomial_he", _hermite_he)
laguerre_polynomial_l = _polynomial("special_laguerre_polynomial_l", _laguerre_l)
legendre_polynomial_p = _polynomial("special_legendre_polynomial_p", _legendre_p)
