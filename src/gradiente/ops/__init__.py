"""The operations library: one module per op family, each op next to its derivative rule.

Importing this package attaches every op to ``Tensor`` as a method. The families:
``arithmetic`` (+ - * / // % **, casts), ``selection`` (clamp, where, maximum/minimum, fmax/fmin),
``binary_math`` (atan2, hypot, lerp, xlogy), ``fill`` (zero_, fill_, copy_), ``unary`` (the table of math
functions), ``comparison`` (comparisons, logical and bitwise ops: no gradients), ``reductions`` (and the
scans cumsum/cumprod), ``views`` (view, reshape, permute, expand, narrow ...), ``rearranging`` (cat/stack,
split, repeat, flip/roll, tril/triu), ``indexing``, ``linalg``, ``softmax``, and ``inplace`` (the one
in-place mechanism). ``_errors`` holds PyTorch's error messages that several families share.
"""
from . import (
    arithmetic,
    assembling,
    binary_math,
    comparison,
    complex_numbers,
    elementwise_extra,
    fill,
    functional_aliases,
    indexing,
    inplace,
    legacy_linalg,
    linalg,
    matmul,
    products,
    rearranging,
    reductions,
    scattering,
    selection,
    softmax,
    sorting,
    statistics,
    unary,
    views,
)
