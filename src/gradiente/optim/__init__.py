"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``) and ``lr_scheduler``, as ``torch.optim``.

Each optimizer repeats the operations of PyTorch's single-tensor implementation in the same order, with
the same float32 rounding (``optim._kernels``), so a training run follows PyTorch's trajectory.
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
