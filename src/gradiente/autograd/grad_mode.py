"""``gradiente.autograd.grad_mode``, PyTorch's ``torch.autograd.grad_mode``: the context managers that switch
recording on and off (defined in ``gradiente/core/grad_mode.py``)."""
from ..core.grad_mode import *
from ..core.grad_mode import __all__
