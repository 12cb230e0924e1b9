"""``torch.func.rearrange``: einops' ``rearrange``, a pattern that says how a tensor's dims are reordered, split
and merged (``"b (h1 h) w -> (b h1) h w"``).

The pattern language is PyTorch's (functorch.einops): names, ``...`` for the dims no name takes (at most once a
side; on the right it may be grouped, ``(...)``), parentheses for a group of dims split from one dim on the left
or merged into one on the right, and ``1`` or ``()`` for a dim of size 1. Every name appears once on each side;
``axes_lengths`` give sizes the left side cannot infer (one unknown per group at most). A sequence of tensors is
stacked first, along a new dim 0.

Here the pattern becomes three ordinary ops, so autograd sees views where the memory allows: a reshape of the
input into its elementary dims (each name one dim), a permute into the right side's order, and a reshape into the
right side's groups. Unit dims of the left side are summed over at the end, as PyTorch's first-class dims do
(where such a dim has size 1 that is a squeeze). Parsing errors are PyTorch's ValueError and TypeError with its
messages; size errors are ``DimensionBindError`` with functorch.dim's messages, the dims named ``d0, d1, ...`` in
the order of the left side, as there. The recorded nodes are those of these ops; for the patterns tested they
are the nodes PyTorch's first-class dims record.
"""
import functools
import keyword
import math
import warnings

from ..core.tensor import Tensor
from ..ops.joining import stack
from ..ops.views import permute, reshape

__all__ = ["rearrange", "DimensionBindError"]

_ELLIPSIS = "…"     # what "..." becomes while parsing, as in PyTorch (its messages show it)


class DimensionBindError(Exception):
    """A size the pattern asks for does not fit the tensor (functorch.dim's error)."""


class _Expression:
    """One side of a pattern: ``composition`` lists its dims, each a list of names (a group; ``[]`` for a unit dim)
    or the ellipsis marker; ``identifiers`` holds every name (and the marker)."""

    def __init__(self, text):
        self.has_ellipsis = False
        self.ellipsis_in_group = None
        self.identifiers = set()
        self.non_unitary_numbers = False
        self.composition = []
        if "." in text:
            if "..." not in text:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if text.count("...") != 1 or text.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis for "
                                 "tensor ")
            text = text.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        self._group = None
        name = None
        for char in text:
            if char in "() ":
                if name is not None:
                    self._add(name)
                name = None
                if char == "(":
                    if self._group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                    self._group = []
                elif char == ")":
                    if self._group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(self._group)
                    self._group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                name = char if name is None else name + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if self._group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{text}'")
        if name is not None:
            self._add(name)

    def _add(self, name):
        if name in self.identifiers:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        if name == _ELLIPSIS:
            self.identifiers.add(name)
            self.ellipsis_in_group = self._group is not None
            (self.composition if self._group is None else self._group).append(name)
            return
        if name.isdecimal():
            if int(name) == 1:              # a unit dim; inside a group it changes nothing
                if self._group is None:
                    self.composition.append([])
                return
            self.non_unitary_numbers = True        # refused once the side is parsed, as in PyTorch
            return
        _check_name(name)
        self.identifiers.add(name)
        (self.composition.append([name]) if self._group is None else self._group.append(name))


def _check_name(name):
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name[0] == "_" or name[-1] == "_":
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start or end with underscore")
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning, stacklevel=5)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error in future",
                      FutureWarning, stacklevel=5)


def _parse(pattern, axes_lengths):
    try:
        left_text, right_text = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left, right = _Expression(left_text), _Expression(right_text)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.non_unitary_numbers or right.non_unitary_numbers:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    return left, right


@functools.lru_cache(256)
def _plan(ndim, pattern, lengths):
    """What the pattern does to a tensor of ``ndim`` dims: the left side's groups as lists of elementary dims
    (numbered from 0, the names ``d0, d1, ...`` of the messages), the numbers of the unit dims to sum over, and
    the right side's groups in elementary dims."""
    axes_lengths = dict(lengths)
    left, right = _parse(pattern, axes_lengths)
    unit_dims = sum(1 for group in left.composition if group == [])
    if left.has_ellipsis:
        named = len(left.identifiers) - 1
        ellipsis_dims = ndim - (len(left.composition) - 1)
        if unit_dims + named > ndim:
            raise ValueError(f"Number of dimensions in pattern ({unit_dims + named}) must be less than or equal to "
                             f"the number of dimensions in the tensor ({ndim})")
    else:
        ellipsis_dims = 0
        if len(left.composition) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be equal to the "
                             f"number of dimensions in the tensor ({ndim})")
    numbers, left_groups, units = {}, [], []       # numbers: each name's elementary dims
    next_dim = 0
    for group in left.composition:
        if group == _ELLIPSIS:
            numbers[_ELLIPSIS] = list(range(next_dim, next_dim + ellipsis_dims))
            left_groups.extend([d] for d in numbers[_ELLIPSIS])
            next_dim += ellipsis_dims
        elif group == []:
            units.append(next_dim)
            left_groups.append([next_dim])
            next_dim += 1
        else:
            for i, name in enumerate(group):
                numbers[name] = [next_dim + i]
            left_groups.append(list(range(next_dim, next_dim + len(group))))
            next_dim += len(group)
    right_groups = []
    for group in right.composition:
        if group == _ELLIPSIS:
            right_groups.extend([d] for d in numbers[_ELLIPSIS])
        else:
            right_groups.append([d for name in group for d in numbers[name]])
    known = {numbers[name][0]: length for name, length in axes_lengths.items()}
    return left_groups, tuple(units), right_groups, known


def _names(dims):
    return "(" + ", ".join(f"d{d}" for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _elementary_sizes(shape, left_groups, known):
    """The size of each elementary dim, from the tensor's shape and the given lengths (functorch.dim's errors)."""
    sizes = {}
    for size, group in zip(shape, left_groups):
        unknown = [d for d in group if d not in known]
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once d{unknown[0]} and "
                                     f"d{unknown[1]}")
        product = math.prod(known[d] for d in group if d in known)
        if unknown:
            if product == 0 or size % product:
                shown = tuple(known.get(d, "?") for d in group)
                raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {size} vs "
                                         f"{shown}")
            sizes[unknown[0]] = size // product
        elif product != size:
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {product}) when matching "
                                     f"dimension pack {_names(group)}")
        sizes.update((d, known[d]) for d in group if d in known)
    return sizes


def rearrange(tensor, pattern, **axes_lengths):
    """``tensor`` (or a sequence of tensors, stacked along a new dim 0) with its dims reordered, split and merged as
    ``pattern`` says (einops' ``rearrange``; the module's docstring gives the language). ``axes_lengths`` give the
    sizes of names the left side cannot infer. Differentiable: the result is a reshape, permute and reshape of the
    input (a view where the memory allows)."""
    if not isinstance(tensor, Tensor):
        tensor = stack(list(tensor))
    left_groups, units, right_groups, known = _plan(tensor.dim(), pattern, tuple(sorted(axes_lengths.items())))
    if not left_groups and not right_groups:
        return tensor                           # a 0-d tensor, "->": PyTorch returns it as it is
    sizes = _elementary_sizes(tuple(tensor.shape), left_groups, known)
    order = [d for group in left_groups for d in group]
    elementary = reshape(tensor, [sizes[d] for d in order])
    # the left side's unit dims go last and are summed over at the end, as PyTorch orders it
    kept = [d for group in right_groups for d in group] + list(units)
    moved = permute(elementary, [order.index(d) for d in kept])
    out = reshape(moved, [math.prod(sizes[d] for d in group) for group in right_groups] + [sizes[d] for d in units])
    return out.sum(dim=tuple(range(len(right_groups), out.dim()))) if units else out
