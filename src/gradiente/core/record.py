"""How an operation enters the graph: one function, ``record``, used by every built-in op.

An op computes its result on arrays, wraps it, and (only if ``wants_grad``: grad mode is on and some input
requires grad, or a dual level is active and some input carries a tangent) calls ``record`` to attach a new
backward node to the result and, in forward mode, to give the outputs their tangents
(``forward_grad.attach_tangents``). Nothing else about autograd appears in op code.
"""
import numpy as np

from . import anomaly, diagnostics, forward_grad, grad_mode
from . import dtype as dt
from . import node as _graph
from .meta import MetaArray
from .tensor import InferenceVersion, Tensor

__all__ = ["record", "wants_grad", "needs_derivative", "promote_operands", "wrap", "observer"]

_state = grad_mode.state
_anomaly = anomaly.state
_diagnostics = diagnostics.state
_forward = forward_grad.state
_carries_tangent = forward_grad.carries_tangent
wrap = Tensor._make


class _Observer:
    """Who is told of each node as it is recorded, before it saves its values (None: nobody, the usual case).
    Selective checkpointing (``utils/checkpoint_selective.py``, a floor up) asks its policy here about each op,
    since a recorded node is what gradiente calls one op."""

    __slots__ = ("see",)

    def __init__(self):
        self.see = None


observer = _Observer()


def wants_grad(*inputs):
    """Whether an op on ``inputs`` must be recorded: for backward (grad mode on and an input requires grad) or
    for forward mode (a dual level active and an input carries a tangent)."""
    if _state.enabled:
        if any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
            # As in PyTorch, an op whose tensors are all inference tensors is not seen by autograd.
            return not _state.inference_made or not _only_inference(inputs)
    elif _diagnostics.sites:
        diagnostics.note_unrecorded(inputs, _state.inference)     # for why_no_grad: where the path was cut
    return _forward.on and _carries_tangent(inputs)


def _only_inference(inputs):
    return all(t._version_box.__class__ is InferenceVersion for t in inputs if isinstance(t, Tensor))


_SAVE_INFERENCE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def _refuse_inference(saved):
    for v in saved:
        if isinstance(v, Tensor) and v._version_box.__class__ is InferenceVersion:
            raise RuntimeError(_SAVE_INFERENCE_ERROR)


def needs_derivative(t):
    """Whether the op being recorded must treat ``t`` as an input it differentiates in: it requires grad (the op
    records only when grad mode allows or forward mode asks), or it carries a tangent."""
    return isinstance(t, Tensor) and (t._requires_grad or (_forward.on and forward_grad.has_tangent(t)))


def _edge(t):
    """The edge to ``t``'s history; None for a number or a tensor that requires no grad (which also has no
    metadata: the node's ``_input_meta`` holds None for it)."""
    if t.__class__ is float or t.__class__ is int or not (isinstance(t, Tensor) and t._requires_grad):
        return None
    grad_fn = t.grad_fn
    if grad_fn is None:
        return t._grad_edge()
    if grad_fn.stale:       # a view whose base changed in place: PyTorch refuses to read its history
        raise RuntimeError(grad_fn.message)
    return (grad_fn, t._output_nr)


# Shared metadata (issue 14). Every node keeps each input's (shape, dtype), and a node with several outputs each
# output's. Made afresh for every node, these tuples would be new objects for Python's cyclic garbage collector:
# a tuple is tracked from its birth until a collection finds it holds nothing trackable, and a tuple inside a tuple
# needs a second collection, so a long graph kept the collector rescanning two or three of them per node. A
# program's tensors come in few shapes, so one tuple per combination of shapes and dtypes serves every node that
# meets it: the key, built from the arrays and looked up once, dies at once, and nothing new survives the op.
# The tables are emptied when they grow large (a program whose shapes keep changing), which costs only rebuilding
# them.
_SHARED_META: dict = {}         # (shape, dtype) -> that same tuple, the one (shape, dtype) of all nodes
_SHARED_METAS: dict = {}        # shape, dtype[, shape, dtype] (None, None for a missing one) -> a node's metas
_SHARED_MANY: dict = {}         # the same for three or more: ((shape, dtype), ...) -> a node's metas
_SHARED_LIMIT = 4096


def _shared(table, key, value):
    """Keep ``value`` as ``table``'s shared tuple for ``key`` and return it."""
    if len(table) >= _SHARED_LIMIT:
        table.clear()
    table[key] = value
    return value


def _one_meta(shape, dtype):
    """The shared ``(shape, dtype)``; None for an input with no metadata (shape None: it requires no grad)."""
    if shape is None:
        return None
    key = (shape, dtype)
    return _SHARED_META.get(key) or _shared(_SHARED_META, key, key)


def _metas_of(arrays):
    """The shared tuple of the ``(shape, dtype)`` of each array (None for None): what a node keeps as its
    ``_input_meta`` or ``_output_meta``."""
    key = tuple([(data.shape, data.dtype) if data is not None else None for data in arrays])
    return _SHARED_MANY.get(key) or _shared(_SHARED_MANY, key, tuple([m and _one_meta(*m) for m in key]))


_NO_META = (None,)       # the metadata of a one-input node whose input requires no grad
_NO_EDGE = (None, 0)
_new_node = object.__new__
_next_sequence_nr = _graph._sequence.__next__


def record(node_cls, inputs, outputs, saved=(), **attrs):
    """Create a ``node_cls`` whose edges lead to ``inputs`` and make it the ``grad_fn`` of ``outputs``.

    ``saved`` are the values the rule will read (see ``Node.save``); ``attrs`` become attributes of the
    node (shapes, dims, scalar arguments). Returns the node.
    """
    # This runs once per recorded op, so it builds the node's slots directly (no __init__ call) and
    # spells out the one- and two-input cases rather than looping.
    node = _new_node(node_cls)
    if len(inputs) == 1:
        x = inputs[0]
        edge = _edge(x)
        if edge is None:
            node.next_functions, node._input_meta = (_NO_EDGE,), _NO_META
        else:
            data = x._data
            key = (data.shape, data.dtype)
            node.next_functions = (edge,)
            node._input_meta = _SHARED_METAS.get(key) or _shared(_SHARED_METAS, key, (_one_meta(*key),))
    elif len(inputs) == 2:
        x, y = inputs
        edge_x, edge_y = _edge(x), _edge(y)
        node.next_functions = (edge_x or _NO_EDGE, edge_y or _NO_EDGE)
        shape_x = dtype_x = shape_y = dtype_y = None
        if edge_x is not None:
            data = x._data
            shape_x, dtype_x = data.shape, data.dtype
        if edge_y is not None:
            data = y._data
            shape_y, dtype_y = data.shape, data.dtype
        both = (shape_x, dtype_x, shape_y, dtype_y)
        node._input_meta = _SHARED_METAS.get(both) or _shared(
            _SHARED_METAS, both, (_one_meta(shape_x, dtype_x), _one_meta(shape_y, dtype_y)))
    else:
        edges = [_edge(t) for t in inputs]
        node.next_functions = tuple([e or _NO_EDGE for e in edges])
        node._input_meta = _metas_of([t._data if e is not None else None for t, e in zip(inputs, edges)])
    # Numbered after its inputs' edges exist: a leaf's AccumulateGrad, made by the first op that uses the
    # leaf, must be older than that op's node (the engine runs the newest node first).
    node._seq = _next_sequence_nr()
    if attrs:
        node.__dict__.update(attrs)
    if _diagnostics.sites:          # anomaly or learner mode: where the node was made, for errors to show
        if _anomaly.enabled:
            anomaly.remember(node)  # the forward traceback, for the engine to show if the node's step fails
        diagnostics.remember_site(node)
    forward = _forward.on
    if forward and not (_state.enabled and any(m is not None for m in node._input_meta)):
        pass        # no input requires grad: the node serves forward mode only, as no output's grad_fn
    elif outputs.__class__ is Tensor or isinstance(outputs, Tensor):
        outputs.grad_fn = node
        outputs._requires_grad = True
        if outputs._data.dtype.kind == "c" and not node_cls.complex_ok:
            node._hooked = True     # the engine's general path, which runs the rule only if it is complex_ok
    else:
        for nr, out in enumerate(outputs):
            if out is not None:
                out.grad_fn, out._output_nr, out._requires_grad = node, nr, True
        if len(outputs) > 1:
            node._output_meta = _metas_of([o._data if o is not None else None for o in outputs])
    if observer.see is not None:
        observer.see(node, inputs, outputs)
    if saved:
        if _state.inference_made:
            _refuse_inference(saved)
        node.save(*saved)
    else:
        node._saved = ()
    if forward:
        forward_grad.attach_tangents(node, inputs, outputs)
    return node


def promote_operands(x, y, floating=False):
    """The arrays of two operands, cast to PyTorch's result dtype. ``floating``: integer results become the
    default float dtype (true division)."""
    xa = x._data if isinstance(x, Tensor) else x
    ya = y._data if isinstance(y, Tensor) else y
    tx, ty = type(xa), type(ya)
    # Fast path: two arrays of one dtype, or an array and a Python number of no higher category (bfloat16, whose
    # NumPy kind is "V", takes the general path).
    if tx is np.ndarray and ty is np.ndarray and xa.dtype is ya.dtype:
        target = xa.dtype
    elif tx is np.ndarray and ((ty is float and xa.dtype.kind in "fc") or (ty is int and xa.dtype.kind in "fciu")):
        target = xa.dtype
        if ty is int and target.kind in "iu":
            ya = _wrap_int(ya, target)
    elif ty is np.ndarray and ((tx is float and ya.dtype.kind in "fc") or (tx is int and ya.dtype.kind in "fciu")):
        target = ya.dtype
        if tx is int and target.kind in "iu":
            xa = _wrap_int(xa, target)
    else:
        x, y = _tensorish(x), _tensorish(y)
        target = dt.result_type(x, y)._np
        if tx is np.ndarray and xa.dtype != target:
            xa = xa.astype(target)
        if ty is np.ndarray and ya.dtype != target:
            ya = ya.astype(target)
        if tx is not np.ndarray and not isinstance(xa, (int, float, complex)):
            xa = np.asanyarray(xa, dtype=target)
        if ty is not np.ndarray and not isinstance(ya, (int, float, complex)):
            ya = np.asanyarray(ya, dtype=target)
    if floating and dt.kind(target) not in "fc":
        # An integer result computed in floating point: each operand converts from its own values (an int32
        # -3 stays -3 when met with uint8), as PyTorch casts the inputs, not their integer common type.
        target = dt.get_default_dtype()._np
        xa, ya = (_as_float(v, target) for v in (x, y))
    return xa, ya, target


def _as_float(value, target):
    data = value._data if isinstance(value, Tensor) else value
    return data.astype(target) if type(data) is np.ndarray else data


def _wrap_int(value, np_dtype):
    """A Python int as the integer type meets it in PyTorch: wrapped around when out of range."""
    info = np.iinfo(np_dtype)
    if info.min <= value <= info.max:
        return value
    return np.array(value & ((1 << (8 * np_dtype.itemsize)) - 1), dtype=np.uint64).astype(np_dtype)


def _tensorish(v):
    if isinstance(v, (Tensor, bool, int, float, complex)):
        return v
    if isinstance(v, np.ndarray):
        return Tensor._make(v)
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"unsupported operand type: '{type(v).__name__}'")


def as_result(array, dtype_np=None):
    """Wrap a NumPy result, which may be a NumPy scalar for 0-d inputs, as a tensor of ``dtype_np``."""
    if type(array) is MetaArray:        # a meta tensor's result (``core/meta.py``): a cast is its dtype alone
        return Tensor._make(array if dtype_np is None or array.dtype == dtype_np else array.astype(dtype_np))
    if type(array) is not np.ndarray:
        array = np.asanyarray(array, dtype=dtype_np)
    elif dtype_np is not None and array.dtype != dtype_np:
        array = array.astype(dtype_np)
    return Tensor._make(array)
