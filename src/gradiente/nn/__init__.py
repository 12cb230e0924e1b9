"""Neural-network building blocks: ``functional`` (stateless ops and losses), modules, ``init``."""
from . import functional  # noqa: F401
from . import init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .parameter import Buffer, Parameter  # noqa: F401
