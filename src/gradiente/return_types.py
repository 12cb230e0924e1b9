"""``gradiente.return_types``, PyTorch's ``torch.return_types``: the named tuples ops return (defined in
``gradiente/core/return_types.py``)."""
from .core.return_types import *
from .core.return_types import __all__
