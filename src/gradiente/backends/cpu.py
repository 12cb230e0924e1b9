"""``torch.backends.cpu``: which vector instructions PyTorch's CPU kernels were dispatched to on this machine."""
__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``, as PyTorch's x86-64 build picks its kernels from the CPU's flags
    (Linux's ``/proc/cpuinfo``; ``"DEFAULT"`` where it cannot tell). gradiente's kernels emulate those of the
    x86-64 build (``core/blas_order.py``, ``core/vml_sqrt.py``), whatever this answers."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return "DEFAULT"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "AVX512"
    if {"avx2", "fma"} <= set(flags):
        return "AVX2"
    return "DEFAULT"
