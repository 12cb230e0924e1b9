"""Nested Python containers of tensors (PyTorch's pytrees, the part ``torch.func`` needs): tuples (named ones
too), lists and dicts are containers, anything else is a leaf. ``flatten`` gives the leaves in order and a spec that
``unflatten`` fills back."""

__all__ = ["flatten", "unflatten", "tree_map", "spec_text"]


def flatten(tree):
    """``(leaves, spec)``: spec is None for a leaf, else ``(kind, keys, child specs)``."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree, leaves):
    if isinstance(tree, dict):
        keys = tuple(tree)
        return ("dict", keys, tuple(_flatten_into(tree[k], leaves) for k in keys))
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):     # a named tuple (``max(x, 0)``'s values, indices)
        return ("namedtuple", type(tree), tuple(_flatten_into(x, leaves) for x in tree))
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, len(tree), tuple(_flatten_into(x, leaves) for x in tree))
    leaves.append(tree)
    return None


def unflatten(leaves, spec):
    it = iter(leaves)
    return _build(it, spec)


def _build(it, spec):
    if spec is None:
        return next(it)
    kind, keys, children = spec
    if kind == "dict":
        return {k: _build(it, c) for k, c in zip(keys, children)}
    values = [_build(it, c) for c in children]
    if kind == "namedtuple":
        return keys(*values)
    return tuple(values) if kind == "tuple" else values


def tree_map(fn, tree):
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


def spec_text(spec):
    """A short picture of a spec for error messages: ``*`` for a leaf."""
    if spec is None:
        return "*"
    kind, keys, children = spec
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {spec_text(c)}" for k, c in zip(keys, children)) + "}"
    if kind == "namedtuple":
        return f"{keys.__name__}(" + ", ".join(spec_text(c) for c in children) + ")"
    inner = ", ".join(spec_text(c) for c in children)
    return f"({inner}{',' if len(children) == 1 else ''})" if kind == "tuple" else f"[{inner}]"
