"""Bessel functions of ``torch.special`` that gradiente computes so far: ``modified_bessel_i0``/``i1`` (the
values of ``i0``/``special.i1``) and ``spherical_bessel_j0`` (sin x / x). As in PyTorch they are not
differentiable: the result records no node. Pure NumPy (see ``special_polynomials`` for why not scipy)."""
import numpy as np

from ..core.special_math import i0_array, i1_array
from ..core.tensor import Tensor
from .arithmetic import _write_out
from .unary import _floating_array, _on_floats

__all__ = ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0"]


def _spherical_j0(x):
    with np.errstate(all="ignore"):
        small = np.abs(x) < 0.5
        # the Taylor series near 0, where sin(x)/x loses digits; 0 at ±inf, where sin(x) has no value
        series = 1 - x * x / 6 * (1 - x * x / 20 * (1 - x * x / 42))
        value = np.where(small, series, np.sin(x) / x)
        return np.where(np.isinf(x), 0.0, value).astype(x.dtype)


def _not_differentiable(name, array_fn):
    def function(input, *, out=None):

        result = Tensor._make(np.asarray(_on_floats(array_fn, _floating_array(input))))
        return result if out is None else _write_out(result, out, name)

    function.__name__ = function.__qualname__ = name.removeprefix("special_")
    function.__doc__ = f"``torch.special.{function.__name__}`` elementwise, same shape; no derivative, as in PyTorch."
    return function


modified_bessel_i0 = _not_differentiable("special_modified_bessel_i0", i0_array)
modified_bessel_i1 = _not_differentiable("special_modified_bessel_i1", i1_array)
spherical_bessel_j0 = _not_differentiable("special_spherical_bessel_j0", _spherical_j0)

