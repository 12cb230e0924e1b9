"""What newer Pythons have and gradiente's oldest supported one (3.9) lacks, written once."""

__all__ = ["zip_strict"]


def zip_strict(*iterables):
    """``zip(*iterables, strict=True)``, as PyTorch's code writes it (``strict`` is new in Python 3.10): iterables
    of different lengths raise zip's own ValueError instead of being cut to the shortest."""
    lists = [list(iterable) for iterable in iterables]
    for position, items in enumerate(lists[1:], start=2):
        if len(items) != len(lists[0]):
            relation = "shorter" if len(items) < len(lists[0]) else "longer"
            raise ValueError(f"zip() argument {position} is {relation} than argument 1")
    return zip(*lists)
