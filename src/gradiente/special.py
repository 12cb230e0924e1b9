"""``gradiente.special``, PyTorch's ``torch.special``. The functions and their rules are in
``gradiente/ops/special.py``; the polynomials and Bessel functions (issue 16) in ``ops/special_polynomials.py``
and ``ops/special_bessel.py``, J₀, J₁, Y₀, Y₁ and Ai in ``ops/special_bessel_j.py``."""
from .ops import special_bessel as _bessel
from .ops import special_bessel_j as _bessel_j
from .ops import special_polynomials as _polynomials
from .ops.special import *
from .ops.special import __all__ as _special_names
from .ops.special_bessel import *
from .ops.special_bessel_j import *
from .ops.special_polynomials import *

__all__ = _special_names + _bessel.__all__ + _bessel_j.__all__ + _polynomials.__all__  # noqa: PLE0605

# --- issue 13 (s5-sparseops): a sparse argument never reaches a dense function (gradiente/sparse_dispatch.py)
from . import sparse_dispatch as _sparse_dispatch

_sparse_dispatch.guard_namespace(globals(), {"round": "round.decimals"})
# --- end s5-sparseops
