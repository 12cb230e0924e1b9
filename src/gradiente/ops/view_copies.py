"""The ``*_copy`` functions (``torch.view_copy``, ``torch.transpose_copy`` ...): a view op's values in memory of
their own, differentiable as the view is.

PyTorch generates one for each view op (they serve backends that cannot alias memory) and records each under
the view's node name with ``_copy`` appended (``ViewBackward0_copy``). Here the view is taken as usual, its
values are copied out (contiguous, as PyTorch's are), and the view's node, with its rule and saved values, is
handed to the copies under that name: a subclass of the view's node class, made once per class
(``_copy_node_class``). ``narrow_copy`` has a node of its own in PyTorch, ``NarrowCopyBackward0``.
"""
import numpy as np

from ..core.forward_grad import set_tangent
from ..core.record import wrap
from ..core.sparse_tensor import not_on_sparse
from ..core.tensor import Tensor
from . import complex_numbers, joining, matmul, views
from .arithmetic import _without_derivative

__all__ = ["view_copy", "expand_copy", "permute_copy", "select_copy", "slice_copy", "squeeze_copy",
           "unsqueeze_copy", "transpose_copy", "t_copy", "unbind_copy", "split_copy", "split_with_sizes_copy",
           "as_strided_copy", "diagonal_copy", "unfold_copy", "view_as_real_copy", "view_as_complex_copy",
           "narrow_copy", "alias_copy", "detach_copy", "indices_copy", "values_copy"]

_COPY_CLASSES: dict = {}


def _copy_node_class(cls, name=None):
    """``cls`` under the name PyTorch gives its copy variant (``ViewBackward0_copy``), rule and all."""
    key = (cls, name)
    if key not in _COPY_CLASSES:
        _COPY_CLASSES[key] = type(name or cls.__name__ + "_copy", (cls,), {"__slots__": ()})
    return _COPY_CLASSES[key]


def _as_copies(result, node_name=None):
    """The view(s) in ``result`` as new contiguous tensors, recorded with the view's node renamed."""
    many = isinstance(result, (tuple, list))
    views_ = list(result) if many else [result]
    # (a copy even where the view is contiguous already: ascontiguousarray would hand back the shared memory)
    copies = [wrap(np.array(v._data, order="C", copy=True)) for v in views_]
    for copy, view in zip(copies, views_):
        # a copy carries its view's tangent too (forward mode), in memory of its own as its values are
        for level, tangent in (view._fw_grads or {}).items():
            set_tangent(copy, tangent.clone(), level)
    node = views_[0].grad_fn
    if node is not None:
        node.__class__ = _copy_node_class(type(node), node_name)
        for copy, view in zip(copies, views_):
            copy.grad_fn, copy._output_nr, copy._requires_grad = node, view._output_nr, True
    return tuple(copies) if many else copies[0]


def _copy_variant(view_op, name, doc):
    def copy_op(input, *args, **kwargs):
        return _as_copies(view_op(input, *args, **kwargs))
    copy_op.__name__ = copy_op.__qualname__ = name
    copy_op.__doc__ = doc
    return copy_op


view_copy = _copy_variant(views.view, "view_copy",
                          "``input.view(size)`` in memory of its own (``ViewBackward0_copy``).")
expand_copy = _copy_variant(lambda input, size, *, implicit=False: views.expand(input, size),  # noqa: PLW0108
                            "expand_copy",
                            "``input.expand(size)`` materialized (``ExpandBackward0_copy``).")
permute_copy = _copy_variant(views.permute, "permute_copy",
                             "``input.permute(dims)``, contiguous (``PermuteBackward0_copy``).")
select_copy = _copy_variant(views.select, "select_copy", "``input.select(dim, index)``, copied.")
squeeze_copy = _copy_variant(views.squeeze, "squeeze_copy", "``input.squeeze(dim)``, copied.")
unsqueeze_copy = _copy_variant(views.unsqueeze, "unsqueeze_copy", "``input.unsqueeze(dim)``, copied.")
transpose_copy = _copy_variant(views.transpose, "transpose_copy", "``input.transpose(dim0, dim1)``, contiguous.")
t_copy = _copy_variant(matmul.t, "t_copy", "``input.t()``, contiguous (``TBackward0_copy``).")
unbind_copy = _copy_variant(joining.unbind, "unbind_copy", "``input.unbind(dim)``, each slice copied.")
split_copy = _copy_variant(joining.split, "split_copy", "``input.split(size, dim)``, each piece copied.")
split_with_sizes_copy = _copy_variant(joining.split_with_sizes, "split_with_sizes_copy",
                                      "``input.split_with_sizes(sizes, dim)``, each piece copied.")
as_strided_copy = _copy_variant(views.as_strided, "as_strided_copy", "``input.as_strided(...)``, copied.")
diagonal_copy = _copy_variant(views.diagonal, "diagonal_copy", "``input.diagonal(...)``, copied.")
unfold_copy = _copy_variant(views.unfold, "unfold_copy", "``input.unfold(dimension, size, step)``, copied.")
view_as_real_copy = _copy_variant(complex_numbers.view_as_real, "view_as_real_copy",
                                  "``torch.view_as_real(input)``, copied.")
view_as_complex_copy = _copy_variant(complex_numbers.view_as_complex, "view_as_complex_copy",
                                     "``torch.view_as_complex(input)``, copied.")


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """``input[..., start:end:step, ...]`` along ``dim``, copied (``SliceBackward0_copy``)."""
    index = (slice(None),) * (dim % max(input.dim(), 1)) + (slice(start, end, step),)
    return _as_copies(input[index])


def narrow_copy(input, dim, start, length):
    """``input.narrow(dim, start, length)`` in memory of its own, recorded as ``NarrowCopyBackward0``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"narrow_copy(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return _as_copies(views.narrow(input, dim, start, length), "NarrowCopyBackward0")


# --- the copies of alias, detach and the sparse parts (issue 16) ---------------------------------------------

alias_copy = _copy_variant(lambda input: views._view(input, input._data.view(), views.AliasBackward0),
                           "alias_copy", "A copy of ``input``, recorded as its alias is (``AliasBackward0_copy``).")


def detach_copy(input):
    """A copy of ``input``'s values. PyTorch 2.13 records it as an op with no derivative (``grad_fn=<NotImplemented>``
    where ``input`` requires grad, and backward through it raises), and so does gradiente."""
    return _without_derivative("detach_copy", (input,), wrap(np.array(input._data, copy=True)))


def _sparse_part_copy(name, layout_words):
    """``indices_copy`` and ``values_copy``: PyTorch 2.13's CPU build refuses a strided tensor (it has no sparse
    parts) and has no sparse kernel for these copies either, so both raise its error."""
    def part_copy(input):
        from .sparse_coo import _need_sparse  # (the sparse ops load with the first sparse tensor)
        _need_sparse(input, name.removesuffix("_copy"), layout_words)
        raise not_on_sparse(name)
    part_copy.__name__ = part_copy.__qualname__ = name
    part = name.removesuffix("_copy")
    part_copy.__doc__ = (f"``input.{part}()`` copied. Raises as PyTorch 2.13's CPU build does: RuntimeError for a "
                         "strided tensor, NotImplementedError (no SparseCPU kernel) for a sparse one; use "
                         f"``input.{part}().clone()``.")
    return part_copy


indices_copy = _sparse_part_copy("indices_copy", "sparse coordinate tensor")
values_copy = _sparse_part_copy("values_copy", "sparse tensor")
