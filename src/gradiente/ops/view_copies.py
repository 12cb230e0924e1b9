"""The ``*_copy`` functions (``torch.view_copy``, ``torch.transpose_copy`` ...): a view op's values in memory of
their own, differentiable as the view is.

PyTorch generates one for each view op (they serve backends that cannot alias memory) and records each under
the view's node name with ``_copy`` appended (``ViewBackward0_copy``). Here the view is taken as usual, its
values are copied out (contiguous, as PyTorch's are), and the view's node, with its rule and saved values, is
handed to the copies under that name: a subclass of the view's node class, made once per class
(``_copy_node_class``). ``narrow_copy`` has a node of its own in PyTorch, ``NarrowCopyBackward0``.
"""
import numpy as np

from ..core.record import wrap
from ..core.tensor import Tensor
from . import complex_numbers, joining, matmul, views

__all__ = ["view_copy", "expand_copy", "permute_copy", "select_copy", "slice_copy", "squeeze_copy",
           "unsqueeze_copy", "transpose_copy", "t_copy", "unbind_copy", "split_copy", "split_with_sizes_copy",
           "as_strided_copy", "diagonal_copy", "unfold_copy", "view_as_real_copy", "view_as_complex_copy",
           "narrow_copy"]

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
    copies = [wrap(np.ascontiguousarray(v._data)) for v in views_]
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
