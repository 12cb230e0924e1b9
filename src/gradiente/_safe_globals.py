"""The globals a program allowlists for loading: ``torch.serialization.add_safe_globals`` and its kin.

PyTorch's weights-only loader refuses any name a file mentions beyond tensors, storages and plain containers.
A program that saved a whole model (``torch.save(model, f)``) lists the classes it trusts instead, and the loader
then builds instances of those classes as ``pickle`` would, without calling anything else::

    with torch.serialization.safe_globals([Net, torch.nn.modules.conv.Conv2d]):
        model = torch.load(f)

An entry is a class or function, named in files by ``{__module__}.{__qualname__}``, or a pair ``(object, "its
full name")`` for a file that names it otherwise. The list is process-wide, as PyTorch's; ``safe_globals`` adds
its entries for the ``with`` block only.
"""
__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals", "allowed_by_name"]

_allowed: set = set()     # changed in place, never rebound


def add_safe_globals(safe_globals):
    """Mark the classes and functions in the list (or ``(object, "module.name")`` pairs) as safe to load."""
    _allowed.update(safe_globals)


def get_safe_globals():
    """The entries marked safe, as a list."""
    return list(_allowed)


def clear_safe_globals():
    """Forget every entry marked safe."""
    _allowed.clear()


class safe_globals:
    """``with safe_globals([...]):`` the entries are safe to load inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._added = set(self.safe_globals) - _allowed
        _allowed.update(self._added)

    def __exit__(self, *exc):
        _allowed.difference_update(self._added)


def allowed_by_name():
    """``{(module, name): object}`` for every entry marked safe, as a file would name it."""
    found = {}
    for entry in _allowed:
        if isinstance(entry, tuple):
            obj, full_name = entry
            module, _, name = full_name.rpartition(".")
        else:
            obj, module, name = entry, entry.__module__, entry.__qualname__
        found[(module, name)] = obj
    return found
