"""The operations library: one module per op family, each op next to its derivative rule.

Importing this package attaches every op to ``Tensor`` as a method. The families:
``elementwise`` (arithmetic, casts), ``unary`` (the table of math functions), ``reductions``,
``linalg``, and ``inplace`` (the one in-place mechanism).
"""
from . import elementwise, inplace, linalg, reductions, unary  # noqa: F401
from . import shape, indexing  # noqa: F401
from . import comparison  # noqa: F401
