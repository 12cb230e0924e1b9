"""``torch.backends.cpu``: which vector instructions PyTorch's CPU kernels were dispatched to on this machine."""
from ..core.cpu_flags import cpu_flags

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``, as PyTorch's x86-64 build picks its kernels from the CPU's flags
    (``"DEFAULT"`` where they cannot be read). gradiente's kernels emulate those of the x86-64 build
    (``core/blas_order.py``, ``core/vml_sqrt.py``), whatever this answers."""
    flags = cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    return "DEFAULT"
