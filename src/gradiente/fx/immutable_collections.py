"""The list and dict a Node keeps its arguments in, as ``torch.fx.immutable_collections``: changing one in place
would bypass the bookkeeping of users that ``Node.args`` does on assignment, so they refuse it."""

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. "
                    "If you want to modify it, please make a copy of the object.")


class immutable_list(list):
    """A list that refuses to change (``Node.args`` holds these in place of lists)."""
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):
    """A dict that refuses to change (``Node.kwargs`` is one)."""
    __setitem__ = __delitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))
