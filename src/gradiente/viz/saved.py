"""What a backward node saved, under PyTorch's names (``_saved_self``, ``_saved_other``, ``_saved_result``...).

PyTorch shows each value a node keeps for its rule as an attribute ``_saved_<name>``; torchviz draws them
(``show_attrs``, ``show_saved``) in ``dir()`` order, that is sorted by name. gradiente's nodes keep the
same values by position (``node._saved``), scalar arguments in ``node.__dict__``. ``saved_attributes``
names them as PyTorch does: a general rule (tensor inputs are ``self``, ``other``; the node's own
output is ``result``; scalar arguments keep their names) and, below it, one row per op whose PyTorch
names or conditions differ (PyTorch saves ``other`` of a product only when ``self`` needs a gradient).

Identity follows PyTorch: a saved input is the very tensor object the user holds (one node in a
drawing), while a node's own output or a Python number the op used is a new ``SavedTensor`` each time
it is read, as PyTorch unpacks a new tensor for those.
"""
import numpy as np

from ..core.node import _SavedOutput
from ..core.tensor import Tensor

__all__ = ["FREED", "SavedTensor", "is_tensorlike", "saved_attributes"]


class SavedTensor:
    """A saved value that the user holds no tensor for: a node's own output, or a number the op used
    (PyTorch saves ``2`` in ``x * 2`` as a 0-d tensor). ``array`` is None when only the shape is known."""

    __slots__ = ("__weakref__", "array", "dtype", "shape")

    def __init__(self, array=None, shape=None, dtype=None):
        self.array = array
        self.shape = tuple(array.shape) if array is not None else tuple(shape)
        self.dtype = array.dtype if array is not None else dtype

    def size(self):
        return self.shape

    def __repr__(self):
        return f"SavedTensor(shape={self.shape})"


class _Freed:
    """Marks a saved tensor that backward() has already released (PyTorch raises on reading it)."""

    def __repr__(self):
        return "[freed]"


FREED = _Freed()


def is_tensorlike(value):
    """Tensors and ``SavedTensor``s: what torchviz draws as a saved-tensor node."""
    return isinstance(value, (Tensor, SavedTensor))


def saved_attributes(node):
    """``[(name, value), ...]`` sorted by name, PyTorch's ``_saved_<name>`` attributes of ``node``."""
    from ..autograd.function import BackwardCFunction
    if isinstance(node, BackwardCFunction) or not hasattr(node, "_saved"):
        return []                       # a custom Function exposes ``saved_tensors``, not ``_saved_*``
    freed = node._saved is None
    saved = [_unpack(v) for v in node._saved] if not freed else []
    needs = [nxt is not None for nxt, _ in node.next_functions]
    row = _ROWS.get(type(node).__name__)
    attrs = row(node, saved, needs, freed) if row is not None else _general(node, saved, freed)
    return sorted(attrs, key=lambda item: item[0])


def _unpack(value):
    if type(value) is _SavedOutput:
        return SavedTensor(value.array)
    if isinstance(value, (bool, int, float, complex, np.number)):
        return SavedTensor(np.asarray(value))   # a wrapped number, as PyTorch saves it
    return value


def _sizes(shape):
    return tuple(int(s) for s in shape)


def _general(node, saved, freed):
    """Inputs in order are ``self``, ``other`` (then ``other1``...); an output is ``result``; scalar
    arguments keep their names, except the few PyTorch spells differently."""
    attrs = []
    if freed:
        names = ("self", "other")
        inputs = sum(1 for nxt, _ in node.next_functions if nxt is not None)
        attrs = [(names[i] if i < 2 else f"other{i - 1}", FREED) for i in range(inputs)]
    else:
        inputs = 0
        for raw, value in zip(node._saved, saved):
            if type(raw) is _SavedOutput:
                attrs.append(("result", value))
                continue
            attrs.append((("self", "other")[inputs] if inputs < 2 else f"other{inputs - 1}", value))
            inputs += 1
    for key, value in node.__dict__.items():
        if not key.startswith("_") and key != "needs_input_grad":
            attrs.append((_RENAMED.get(key, key), _sizes(value) if key == "shape" else value))
    return attrs


_RENAMED = {"shape": "self_sym_sizes", "axes": "dim"}


def _input(node, saved, position, freed):
    """Input ``position`` of the node: the saved tensor if there is one, else the tensor object of a
    leaf, else a shape-only ``SavedTensor`` from the node's input metadata."""
    if freed:
        return FREED
    if position < len(saved):
        return saved[position]
    nxt = node.next_functions[position][0]
    if nxt is not None and hasattr(nxt, "variable"):
        return nxt.variable
    meta = node._input_meta[position] if node._input_meta else None
    return SavedTensor(shape=meta[0], dtype=meta[1]) if meta else None


def _get(saved, position, freed):
    return FREED if freed else saved[position]


def _when(condition, value):
    return value if condition else None


def _alpha(node, saved, needs, freed):
    return [("alpha", node.__dict__.get("alpha", 1))]


def _nothing(node, saved, needs, freed):
    return []


def _mul(node, saved, needs, freed):
    return [("other", _when(needs[0], _get(saved, 1, freed))), ("self", _when(needs[1], _get(saved, 0, freed)))]


def _div(node, saved, needs, freed):
    return [("other", _get(saved, 1, freed)), ("self", _when(needs[1], _get(saved, 0, freed)))]


def _pow_scalar(node, saved, needs, freed):
    return [("exponent", node.exponent), ("self", _get(saved, 0, freed))]


def _pow_tensor(node, saved, needs, freed):
    return [("exponent", _get(saved, 1, freed)), ("result", _get(saved, 2, freed)), ("self", _get(saved, 0, freed))]


def _pow_base(node, saved, needs, freed):
    return [("exponent", _input(node, (), 0, freed)), ("result", _get(saved, 0, freed)), ("self", node.base)]


def _sum_all(node, saved, needs, freed):
    return [("self_sym_sizes", _sizes(node.shape))]


def _sum_dims(node, saved, needs, freed):
    return [("dim", tuple(node.axes)), ("keepdim", node.keepdim), ("self_sym_sizes", _sizes(node.shape))]


def _mean_all(node, saved, needs, freed):
    return [("self_sym_numel", int(np.prod(node.shape, dtype=np.int64))), ("self_sym_sizes", _sizes(node.shape))]


def _mean_dims(node, saved, needs, freed):
    return _sum_dims(node, saved, needs, freed) + [("self_sym_numel", int(np.prod(node.shape, dtype=np.int64)))]


def _mm(node, saved, needs, freed):
    meta = node._input_meta
    x_shape = meta[0][0] if meta and meta[0] else _get(saved, 0, freed).shape
    y_shape = meta[1][0] if meta and meta[1] else _get(saved, 1, freed).shape
    x, y = (_get(saved, 0, freed), _get(saved, 1, freed)) if not freed else (FREED, FREED)
    # an operand not saved (its partner needs no gradient) left its strides with the node
    x_strides, y_strides = node.__dict__.get("unsaved_strides", (None, None))
    return [("mat2", _when(needs[0], y)), ("mat2_sym_sizes", _sizes(y_shape)),
            ("mat2_sym_strides", (y_strides or _strides(y)) if needs[1] else ()),
            ("self", _when(needs[1], x)), ("self_sym_sizes", _sizes(x_shape)),
            ("self_sym_strides", (x_strides or _strides(x)) if needs[0] else ())]


def _strides(tensor):
    if tensor is FREED or not hasattr(tensor, "stride"):
        return FREED
    return tuple(tensor.stride())


def _pair(first, second):
    """A product whose PyTorch names are ``first`` (for input 0) and ``second`` (for input 1); each is
    saved only when the other input needs a gradient."""
    def row(node, saved, needs, freed):
        return [(first, _when(needs[1], _get(saved, 0, freed))), (second, _when(needs[0], _get(saved, 1, freed)))]
    return row


def _taken_at_indices(node, saved, needs, freed):
    """Ops that take elements at saved ``indices`` (max/min/median along a dim, sort, topk, kthvalue, mode)."""
    meta = node._input_meta[0] if node._input_meta and node._input_meta[0] else None
    shape = node.__dict__.get("shape", meta[0] if meta else ())
    attrs = [("indices", _get(saved, 0, freed)), ("dim", node.dim), ("self_sym_sizes", _sizes(shape))]
    if "keepdim" in node.__dict__:
        attrs.append(("keepdim", node.keepdim))
    return attrs


def _running_extreme(node, saved, needs, freed):
    """cummax / cummin: the indices, the dim, and the input itself."""
    nxt = node.next_functions[0][0]
    meta = node._input_meta[0] if node._input_meta else None
    self_ = FREED if freed else (nxt.variable if hasattr(nxt, "variable") else
                                 SavedTensor(shape=meta[0], dtype=meta[1]) if meta else None)
    return [("indices", _get(saved, 0, freed)), ("dim", node.dim), ("self", self_)]


def _unsafe_view(node, saved, needs, freed):
    return [("self_sym_sizes", _sizes(node._input_meta[0][0]))]


_ROWS = {
    "AddBackward0": _alpha,
    "SubBackward0": _alpha,
    "RsubBackward1": _alpha,
    "MulBackward0": _mul,
    "DivBackward0": _div,
    "PowBackward0": _pow_scalar,
    "PowBackward1": _pow_tensor,
    "PowBackward2": _pow_base,
    "NegBackward0": _nothing,
    "TBackward0": _nothing,
    "ToCopyBackward0": _nothing,
    "SumBackward0": _sum_all,
    "SumBackward1": _sum_dims,
    "MeanBackward0": _mean_all,
    "MeanBackward1": _mean_dims,
    "MmBackward0": _mm,
    "DotBackward0": _pair("self", "tensor"),
    "MvBackward0": _pair("self", "vec"),
    "BmmBackward0": _pair("self", "mat2"),
    "UnsafeViewBackward0": _unsafe_view,
    **dict.fromkeys(("MaxBackward0", "MinBackward0", "MedianBackward1", "SortBackward0", "SortBackward1",
                     "TopkBackward0", "KthvalueBackward0", "ModeBackward0"), _taken_at_indices),
    "CummaxBackward0": _running_extreme,
    "CumminBackward0": _running_extreme,
}
