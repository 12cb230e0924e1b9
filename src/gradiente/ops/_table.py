"""Installing a table of op functions as Tensor methods (``x.exp()``) and in-place methods (``x.exp_()``)."""
from ..core.tensor import Tensor


def install(functions, method_aliases=None, inplace=True):
    """Make each ``functions[name]`` a method ``Tensor.name``, its aliases, and ``Tensor.name_``."""
    from .inplace import make_inplace
    for name, fn in functions.items():
        setattr(Tensor, name, fn)
        for alias in (method_aliases or {}).get(name, ()):
            setattr(Tensor, alias, fn)
        if inplace:
            setattr(Tensor, name + "_", make_inplace(fn, name + "_"))
