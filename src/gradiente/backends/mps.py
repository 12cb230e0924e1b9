"""``torch.backends.mps``: Apple's Metal backend, absent from a CPU-only build (and from gradiente)."""

__all__ = ["is_available", "is_built"]


def is_available():
    """Whether an MPS device can be used now: no."""
    return False


def is_built():
    """Whether the build includes MPS support: no."""
    return False
