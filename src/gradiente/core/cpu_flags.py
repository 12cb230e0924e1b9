"""The CPU's feature flags as Linux lists them (``/proc/cpuinfo``), read once: the emulations of PyTorch's kernels
that depend on the instruction set (``vml_sqrt.py``) and ``torch.backends.cpu`` ask here."""
import functools

__all__ = ["cpu_flags"]


@functools.cache
def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The set of flag names of the first CPU listed (empty where Linux's description cannot be read)."""
    try:
        with open(cpuinfo) as fh:
            return frozenset(next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), ()))
    except OSError:
        return frozenset()
