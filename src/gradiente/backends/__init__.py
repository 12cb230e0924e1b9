"""``torch.backends``: what the build has (``cpu``, ``cuda``, ``cudnn``, ``mps``, ``mkldnn``, ``mkl``, ``openmp``,
``opt_einsum``) and the flags programs set for it, answered as a CPU-only PyTorch answers, or, where gradiente's
NumPy differs from PyTorch's CPU libraries, as gradiente is (each module says which)."""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
