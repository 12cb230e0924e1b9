"""``Size``: the shape of a tensor, a tuple that prints as ``gradiente.Size([2, 3])``."""


class Size(tuple):
    """A tuple of ints; ``numel()`` is the product of its entries."""

    __slots__ = ()

    def __repr__(self):
        return f"gradiente.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))
