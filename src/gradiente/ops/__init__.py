"""The operations library: one module per op family, each op next to its derivative rule.

Importing this package attaches every op to ``Tensor`` as a method. The families:
``elementwise`` (arithmetic, clamp/where/maximum, atan2/lerp/hypot/xlogy, fills and copies, casts),
``unary`` (the table of math functions), ``comparison`` (comparisons, logical and bitwise ops: no
gradients), ``reductions`` (and the scans cumsum/cumprod), ``linalg``, and ``inplace`` (the one in-place
mechanism).
"""
from . import comparison, elementwise, indexing, inplace, linalg, reductions, shape, softmax, unary
