"""The ops: every differentiable primitive, one module per op family, each op beside its derivative rule.

The second floor of the package (docs/architecture.md): ops import only from ``gradiente.core`` and each
other. The families:

* elementwise: ``arithmetic`` (+ - * / // % **, addcmul/addcdiv), ``unary`` (the table of functions of one tensor,
  from exp to lgamma, plus nan_to_num, frexp, polygamma), ``binary_math`` (atan2, hypot, lerp, xlogy, logaddexp,
  copysign, ldexp, gcd ...), ``selection`` (clamp, where, maximum/minimum), ``comparison`` (comparisons, logical
  and bitwise ops, isin: no gradients), ``conversions`` (to, type, float() ...), ``complex_numbers``, ``fill``;
* reductions and their kin: ``reductions`` (sum, mean, var, norms, min/max, median, nansum, scans, trapezoid),
  ``statistics`` (cov, corrcoef, bincount, histograms), ``softmax``, ``sorting`` (sort, topk, quantile ...);
* shapes and indices: ``views`` (view, reshape, permute, expand, narrow ...), ``joining`` (cat, stack, split,
  meshgrid ...), ``rearranging`` (repeat, flip, roll, triangles, diag, diff, rot90), ``indexing`` (x[i], gather,
  masks, take), ``scattering`` (x[i] = v, scatter, index_add, index_put, put);
* linear algebra: ``matmul`` (mm, bmm, matmul, einsum, addbmm), ``products`` (tensordot, kron, cross, cdist ...),
  ``linalg`` (torch.linalg) and ``legacy_linalg`` (the older top-level names);
* ``special`` (torch.special), the random ``samplers`` and differentiable ``sampling``;
* ``nn/``: what nn.functional computes (convolution, pooling, normalization, attention, losses, ...).

``_table`` builds elementwise ops from table rows. Importing the package hands ``TensorOps`` (``tensor_rules``),
the rules' namespace under create_graph, down to the core. Tensor methods are bound by
``gradiente/tensor_methods.py``, a floor up.
"""
from ..core import inplace
from ..core.rules import use_tensor_ops
from . import (
    arithmetic,
    aten,
    binary_math,
    comparison,
    complex_numbers,
    fill,
    indexing,
    matmul,
    products,
    rearranging,
    reductions,
    scattering,
    selection,
    softmax,
    sorting,
    unary,
    views,
)
from . import joining as assembling
from .tensor_rules import TensorOps

use_tensor_ops(TensorOps())     # the rules' namespace under create_graph, handed down to the core


def __getattr__(name):
    # ``torch.ops.profiler`` (its two ops, for programs that call them directly) loads on first use
    if name == "profiler":
        import importlib
        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module 'gradiente.ops' has no attribute '{name}'")
