"""``torch.backends.openmp``: whether PyTorch was built with OpenMP. gradiente runs its own Python on one thread,
so the answer is False."""

__all__ = ["is_available"]


def is_available():
    return False
