"""``_single``, ``_pair``, ``_triple``: an int or a sequence as a tuple of n ints (``torch.nn.modules.utils``)."""
import collections.abc
from itertools import repeat

__all__ = ["_single", "_pair", "_triple", "_ntuple", "_reverse_repeat_tuple"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")


def _reverse_repeat_tuple(t, n):
    """``(1, 2)`` with n=2 -> ``(2, 2, 1, 1)``: the padding order ``F.pad`` wants."""
    return tuple(x for x in reversed(t) for _ in range(n))
