"""What the options beyond torchviz add to a node's label, shared by the DOT and the text drawings:
output name, shape and dtype, the local derivative, forward values and gradients."""
import numpy as np

from ..core.dtype import FROM_NUMPY
from ..core.node import _SavedOutput
from .saved import SavedTensor
from .summary import as_array, format_shape, format_values

__all__ = ["Notes", "dtype_name", "formula", "gradients"]


class Notes:
    """The extra lines for one drawing. ``options`` holds the ``show_*`` flags, ``auto_names`` and
    ``max_elems``; ``meta`` maps nodes to their output ``(shape, dtype)``; ``grads`` is a
    ``BackwardRecord`` (or None)."""

    def __init__(self, names, options, meta=None, grads=None):
        self.names = names
        self.opt = options
        self.meta = meta or {}
        self.grads = grads

    def _values(self, array):
        return format_values(array, self.opt["max_elems"])

    def node_lines(self, fn):
        """``→ name (shape) dtype``, the formula, ``= value``, ``grad = ...``: those the options ask for."""
        opt, lines = self.opt, []
        meta = self.meta.get(fn)
        described = [self.names.of_node(fn)] if opt["auto_names"] and self.names.of_node(fn) else []
        if opt["show_shapes"] and meta is not None:
            described.append(format_shape(meta[0]))
        if opt["show_dtypes"] and meta is not None:
            described.append(dtype_name(meta[1]))
        if described:
            lines.append("→ " + " ".join(described))
        if opt["show_formulas"]:
            lines.append(formula(fn))
        if opt["show_values"]:
            value = _output_value(fn, self.names)
            if value is not None:
                lines.append("= " + self._values(value))
        if opt["show_grads"] and self.grads is not None and fn in self.grads.incoming:
            lines.append("grad = " + self._values(self.grads.incoming[fn]))
        return lines

    def tensor_size(self, var):
        size = format_shape(var.shape)
        return size + " " + dtype_name(var) if self.opt["show_dtypes"] else size

    def tensor_lines(self, var):
        """``= value`` and ``grad = ...`` for a tensor node, as the options ask."""
        lines = []
        if self.opt["show_values"]:
            array = var.array if isinstance(var, SavedTensor) else as_array(var)
            if array is not None:
                lines.append("= " + self._values(array))
        if self.opt["show_grads"]:
            grad = _tensor_grad(var, self.grads)
            if grad is not None:
                lines.append("grad = " + self._values(grad))
        return lines


def gradients(outputs, nodes):
    """The gradient flowing into every node, from a backward pass that keeps the graph and touches no
    ``.grad``; None when the graph has been freed (leaves then show their ``.grad``)."""
    from ..explain.record import GraphFreedError, record_backward
    if len(outputs) != 1:
        raise ValueError("show_grads needs a single output tensor")
    try:
        return record_backward(outputs[0], accumulate=False, retain_graph=True, local_derivatives=False)
    except GraphFreedError:
        return None


def formula(fn):
    """The node's local derivative as a line of text; custom Functions say their rule is the user's."""
    from ..autograd.function import BackwardCFunction
    if isinstance(fn, BackwardCFunction):
        return f"user-defined rule ({type(fn).__name__[:-len('Backward')]}.backward)"
    doc = (type(fn).__doc__ or "").strip()
    return getattr(fn, "formula", "") or (doc.splitlines()[0] if doc else "")


def dtype_name(value):
    """``float32`` for a tensor, a saved value or a NumPy dtype."""
    if isinstance(value, np.dtype):
        np_dtype = value
    elif isinstance(value, SavedTensor):
        np_dtype = np.dtype(value.dtype)
    else:
        np_dtype = value._data.dtype
    dtype = FROM_NUMPY.get(np_dtype)
    return str(dtype).replace("gradiente.", "") if dtype is not None else str(np_dtype)


def _tensor_grad(tensor, record):
    """The gradient to show on a tensor node: from the recorded pass (a leaf's total, the output's
    starting gradient), else a leaf's ``.grad``."""
    if record is not None:
        if id(tensor) in record.leaf:
            return record.leaf[id(tensor)]
        if tensor is record.output:
            return record.root_grad
    if isinstance(tensor, SavedTensor) or not tensor.is_leaf:
        return None
    return tensor.grad._data if tensor.grad is not None else None


def _output_value(fn, names):
    """A node's forward output where it is known: a caller's variable holding it, or a saved output."""
    tensor = names.node_tensors.get(fn)
    if tensor is not None:
        return tensor._data
    for item in fn._saved or ():
        if type(item) is _SavedOutput:
            return item.array
    return None
