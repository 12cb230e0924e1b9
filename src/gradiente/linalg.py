"""``gradiente.linalg``, PyTorch's ``torch.linalg``: norms, inverses, solves, determinants and the matrix
decompositions. The ops themselves, each beside its derivative rule, are in ``gradiente/ops/linalg.py``."""
from .ops.linalg import *
from .ops.linalg import __all__

# issue 16: the functions PyTorch composes from other ops
from .ops.linalg_composite import cond, tensorinv, tensorsolve, vander

# issue 16: the general eigendecomposition, least squares, Householder products and the LDL factorization
from .ops.linalg_eig_lstsq import eig, eigvals, lstsq
from .ops.linalg_householder import householder_product
from .ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve

# a new list (``+=`` would extend ops.linalg's own)
__all__ = __all__ + ["eig", "eigvals", "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq"]

# --- issue 13 (s5-sparseops): a sparse argument never reaches a dense function (gradiente/sparse_dispatch.py)
from . import sparse_dispatch as _sparse_dispatch

_sparse_dispatch.guard_namespace(globals())
# --- end s5-sparseops
