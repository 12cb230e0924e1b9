"""``torch.gradient``: the derivative of sampled values estimated by finite differences, one tensor per dim,
built from differentiable ops (slices, arithmetic, ``cat``), so it is itself differentiable.

Inside, each point gets the second-order central difference; at the two ends a one-sided difference of first
(``edge_order=1``) or second order (``edge_order=2``). With uniform spacing h along a dim:

    inside:  (f[i+1] - f[i-1]) / 2h
    edges 1: (f[1] - f[0]) / h,                       (f[-1] - f[-2]) / h
    edges 2: (-1.5·f[0] + 2·f[1] - 0.5·f[2]) / h,     (0.5·f[-3] - 2·f[-2] + 1.5·f[-1]) / h

With coordinates x (a 1-D tensor per dim), the same orders on unequal steps d₁ = x[i] - x[i-1], d₂ = x[i+1] -
x[i]: inside, f'(x[i]) ≈ -d₂/(d₁(d₁+d₂))·f[i-1] + (d₂-d₁)/(d₁d₂)·f[i] + d₁/(d₂(d₁+d₂))·f[i+1], exact for
quadratics, and the matching three-point formulas at the ends.
"""
from numbers import Number

from ..core.tensor import Tensor
from .arithmetic import add, div, mul, neg, sub
from .joining import cat
from .nn._common import div_scalar, mul_scalar
from .views import _dims, select, slice_dim, view

__all__ = ["gradient"]

_SIZE_FOR_ORDER = "torch.gradient expected each dimension size to be at least edge_order+1"


def _part(t, dim, start, stop):
    return slice_dim(t, dim, start, stop, 1)


def _uniform(f, dim, h, edge_order):
    # PyTorch writes these steps in C++ with numbers as Scalars, so its graph records MulBackward1/DivBackward1
    # (one edge); with a floating ``f`` gradiente records the same nodes
    scalar_steps = isinstance(h, Number) and f.is_floating_point()
    by = div_scalar if scalar_steps else div
    times = mul_scalar if scalar_steps else mul
    center = by(sub(_part(f, dim, 2, None), _part(f, dim, 0, -2)), h)
    if edge_order == 1:
        first = by(sub(_part(f, dim, 1, 2), _part(f, dim, 0, 1)), h)
        last = by(sub(_part(f, dim, -1, None), _part(f, dim, -2, -1)), h)
    else:
        first = by(sub(add(times(_part(f, dim, 0, 1), -1.5), times(_part(f, dim, 1, 2), 2)),
                       times(_part(f, dim, 2, 3), 0.5)), h)
        last = by(add(sub(times(_part(f, dim, -3, -2), 0.5), times(_part(f, dim, -2, -1), 2)),
                      times(_part(f, dim, -1, None), 1.5)), h)
    return cat([first, by(center, 2), last], dim)


def _along(coefficient, dim, ndim):
    """A 1-D tensor of per-point coefficients shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return view(coefficient, *shape)


def _coordinates(f, dim, x, edge_order):
    # Written as PyTorch's C++ writes it, product for product, so that a graph through the coordinates records
    # PyTorch's nodes: the steps by diff, the inner coefficients reshaped, the edge ones 0-d (select).
    ndim = f.dim()
    steps = sub(_part(x, 0, 1, None), _part(x, 0, 0, -1))
    d1, d2 = _part(steps, 0, 0, -1), _part(steps, 0, 1, None)
    a = _along(div(neg(d2), mul(d1, add(d1, d2))), dim, ndim)
    b = _along(div(sub(d2, d1), mul(d1, d2)), dim, ndim)
    c = _along(div(d1, mul(d2, add(d1, d2))), dim, ndim)
    center = add(add(mul(a, _part(f, dim, 0, -2)), mul(b, _part(f, dim, 1, -1))), mul(c, _part(f, dim, 2, None)))
    count = steps.shape[0]

    def step(i):
        """steps[i], a fresh select each time it is read, as PyTorch's ``ax_dx[i]``"""
        return select(steps, 0, i % count)

    if edge_order == 1:
        first = div(sub(_part(f, dim, 1, 2), _part(f, dim, 0, 1)), step(0))
        last = div(sub(_part(f, dim, -1, None), _part(f, dim, -2, -1)), step(-1))
    else:
        a0 = div(neg(add(mul_scalar(step(0), 2.0), step(1))), mul(step(0), add(step(0), step(1))))
        b0 = div(add(step(0), step(1)), mul(step(0), step(1)))
        c0 = div(neg(step(0)), mul(step(1), add(step(0), step(1))))
        first = add(add(mul(a0, _part(f, dim, 0, 1)), mul(b0, _part(f, dim, 1, 2))), mul(c0, _part(f, dim, 2, 3)))
        a1 = div(step(-1), mul(step(-2), add(step(-1), step(-2))))
        b1 = div(neg(add(step(-1), step(-2))), mul(step(-1), step(-2)))
        c1 = div(add(mul_scalar(step(-1), 2), step(-2)), mul(step(-1), add(step(-1), step(-2))))
        last = add(add(mul(a1, _part(f, dim, -3, -2)), mul(b1, _part(f, dim, -2, -1))),
                   mul(c1, _part(f, dim, -1, None)))
    return cat([first, center, last], dim)


def _spacing_count(spacing):
    return None if spacing is None or isinstance(spacing, (Number, Tensor)) else len(spacing)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of ∂input/∂xᵢ by finite differences, one tensor of ``input``'s shape per dim in ``dim`` (every
    dim by default), as a tuple. ``spacing`` is the step between samples: one number for every dim, one number
    per dim, or one 1-D tensor of sample coordinates per dim. ``edge_order`` (1 or 2) is the order of the
    one-sided differences at the ends; each dim needs at least ``edge_order + 1`` samples. Integer inputs give
    floating results. Differentiable in ``input`` and in coordinate tensors."""
    if isinstance(spacing, Tensor):
        raise TypeError("gradient() received an invalid combination of arguments - got (Tensor, spacing=Tensor), "
                        "but expected one of:\n * (Tensor input, *, tuple of ints dim, int edge_order = 1)\n"
                        " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)\n"
                        " * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
                        " * (Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)\n"
                        " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)\n"
                        " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
                        " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n")
    ndim = input.dim()
    dims = tuple(range(ndim)) if dim is None else _dims(dim, ndim)
    count = _spacing_count(spacing)
    if count is not None and count != len(dims):
        if dim is None:
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
                               f"of length {count}")
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {count} and a "
                           f"dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError(_SIZE_FOR_ORDER)
    steps = [spacing] * len(dims) if count is None else list(spacing)
    if any(isinstance(s, Tensor) for s in steps):
        for s in steps:
            if not isinstance(s, Tensor) or s.dim() != 1:
                got = s.dim() if isinstance(s, Tensor) else 0
                raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got "
                                   f"an element with {got} dimensions!")
        return tuple(_coordinates(input, d, x, edge_order) for d, x in zip(dims, steps))
    return tuple(_uniform(input, d, h, edge_order) for d, h in zip(dims, steps))
