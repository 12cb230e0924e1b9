"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adamax``, ``NAdam``, ``RAdam``,
``Adadelta``, ``ASGD``, ``Rprop``, ``LBFGS``) and ``lr_scheduler``, as ``torch.optim``.

Each optimizer repeats the operations of PyTorch's single-tensor implementation in the same order, with
the same float32 rounding (``optim._kernels``), so a training run follows PyTorch's trajectory.
"""
from . import lr_scheduler, swa_utils  # swa_utils, Adafactor, SparseAdam, Muon, swap_in...: issue 16 item 4
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "ASGD",
           "Rprop", "LBFGS", "lr_scheduler", "Adafactor", "SparseAdam", "swa_utils", "Muon",
           "swap_in_optimizer_params_and_state"]
