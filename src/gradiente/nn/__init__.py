"""Neural-network building blocks: ``functional`` (stateless ops and losses), modules, ``init``."""
from . import functional, init, utils
from .modules import *
from .parameter import Buffer, Parameter
