"""``gradiente.special``, PyTorch's ``torch.special``. The functions and their rules are in
``gradiente/ops/special.py``."""
from .ops.special import *
from .ops.special import __all__
