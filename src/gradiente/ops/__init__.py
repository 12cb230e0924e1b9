"""The ops: every differentiable primitive, one module per op family, each op beside its derivative rule.

The second floor of the package (docs/architecture.md): ops import only from ``gradiente.core`` and each
other. The families: ``arithmetic`` (+ - * / // % **, casts), ``conversions`` (to, type, float(), ...),
``unary`` (the table of elementwise math), ``elementwise_extra`` (special functions and integer ops),
``binary_math`` (atan2, hypot, lerp, xlogy), ``selection`` (clamp, where, maximum/minimum), ``comparison``
(comparisons, logical and bitwise ops: no gradients), ``fill``, ``reductions`` (and the scans),
``statistics``, ``softmax``, ``sorting``, ``views``, ``rearranging`` (cat/stack, split, flip/roll, tril/triu),
``assembling``, ``indexing``, ``scattering``, ``matmul`` (mm, bmm, matmul, einsum), ``products``, ``linalg``
(torch.linalg) and ``legacy_linalg``, ``special``, ``complex_numbers``, the samplers, and ``nn/`` (what
nn.functional computes: convolution, pooling, normalization, attention, losses, ...).

Importing the package hands ``TensorOps`` (``tensor_rules``), the rules' namespace under create_graph, down
to the core. Tensor methods are bound by ``gradiente/tensor_methods.py``, a floor up.
"""
from ..core import inplace
from ..core.rules import use_tensor_ops
from . import (
    arithmetic,
    binary_math,
    comparison,
    complex_numbers,
    elementwise_extra,
    fill,
    indexing,
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
from . import joining as assembling
from .tensor_rules import TensorOps

use_tensor_ops(TensorOps())     # the rules' namespace under create_graph, handed down to the core
