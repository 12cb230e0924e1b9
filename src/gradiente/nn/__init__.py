"""Neural-network building blocks: ``functional`` (stateless ops and losses), modules, ``init``."""
from . import attention, functional, init, parallel, utils
from .modules import *
from .parallel import DataParallel
from .parameter import Buffer, Parameter
