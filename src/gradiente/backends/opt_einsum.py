"""``torch.backends.opt_einsum``: PyTorch orders the products of a many-operand ``einsum`` with the
``opt_einsum`` package when it is installed. gradiente's ``einsum`` never uses it, so ``is_available()`` is
False, and ``enabled`` and ``strategy`` hold what PyTorch holds without the package (False and None)."""

__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy"]

enabled = False
strategy = None


def is_available():
    return False


def get_opt_einsum():
    """The opt_einsum package if PyTorch uses it: never here."""
    return None
