"""The Tensor: a NumPy array plus what autograd needs to know about it.

Data model: ``_data`` is the NumPy array (its dtype is the tensor's storage); ``grad_fn`` and
``_output_nr`` say which node produced the tensor; ``_requires_grad`` is set on leaves by the user and
on results by recording; ``_version_box`` is a one-element list shared by a tensor and its views and
bumped by every in-place change, so that a value saved for backward can tell it was overwritten. A tensor
made in inference mode has an ``InferenceVersion`` instead: it tracks no version, and refuses a change outside
inference mode.

Math methods (``add``, ``exp``, ``sum``, ...) are attached by the op modules in ``gradiente.ops``,
each next to its derivative rule; this module holds only what every tensor is.
"""
import weakref

import numpy as np

from . import diagnostics
from . import dtype as dt
from .device import _NO_ACCELERATOR, as_device, device, unavailable
from .device import CPU as _CPU
from .grad_dtype import check_assigned_grad_dtype
from .grad_mode import _State as _ModeState
from .grad_mode import state as _mode
from .layouts import is_channels_last, is_in_memory_format, storage_offset, strided
from .meta import NO_DATA, MetaArray, row_major_strides
from .node import AccumulateGrad, Node, RemovableHandle, _HookDict
from .size import Size
from .warnings_at_caller import warn_at_caller

__all__ = ["Tensor", "device", "is_inference", "is_tensor"]

_diagnostics = diagnostics.state        # learner or anomaly mode: where a tensor left the graph (why_no_grad)

_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. "
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"  # PyTorch's words
)




_META = device("meta")
_META_ITEM = "Tensor.item() cannot be called on meta tensors"

_INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


class DataVersion(list):
    """The version counter of a tensor made by ``.data``: its own (a change through it is hidden from autograd's
    in-place check, as in PyTorch), remembering the counter of the tensor it was taken from, so that
    ``explain.why_no_grad`` can still name ``.data`` as the cut."""
    __slots__ = ("source",)

    def __init__(self, source):
        super().__init__((0,))
        self.source = source


class InferenceVersion(list):
    """The version counter of an inference tensor and its views, which is none: it reads 0, an in-place change
    inside inference mode leaves it so, and one outside raises PyTorch's error (after the write, as in PyTorch)."""
    __slots__ = ()

    def __init__(self):
        super().__init__((0,))

    def __setitem__(self, index, value):
        if not _mode.inference:
            raise RuntimeError(_INFERENCE_INPLACE_ERROR)


def _to_accelerator(kind, device):
    """``Tensor.cuda(device)``/``xpu``: PyTorch checks that ``device`` is of that kind, then fails to reach it."""
    place = as_device(kind if device is None else device, kind)
    if place.type != kind:
        raise RuntimeError(f"Invalid device, must be {kind} device")
    raise unavailable(place)


def is_tensor(obj):
    """True if ``obj`` is a gradiente Tensor (Parameters included)."""
    return isinstance(obj, Tensor)


def is_inference(input):
    """``torch.is_inference(t)``: ``t.is_inference()``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()



_SCALAR_WITH_GRAD = {"warned": False}


def _warn_once_of_scalar_with_grad(tensor):
    """PyTorch's warning, once per process, when ``float()`` or ``complex()`` (``'%f' % t`` too) reads a tensor that
    requires grad while grad mode is on; ``int()`` and ``item()`` do not warn."""
    if tensor._requires_grad and _mode.enabled:
        warn_once_of_scalar_with_grad()


def warn_once_of_scalar_with_grad():
    """The warning of a tensor that requires grad read as a number: once per process, whichever way it is read
    (``float(t)``, ``torch.tensor([t, t])``), as PyTorch's one TORCH_WARN_ONCE."""
    if not _SCALAR_WITH_GRAD["warned"]:
        _SCALAR_WITH_GRAD["warned"] = True
        warn_at_caller("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                       "Consider using tensor.detach() first. (Triggered internally at "
                       "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)",
                       UserWarning)

class Tensor:
    """An n-dimensional array that records the operations applied to it when it requires grad."""

    # A dict of slots gives ``grad_fn`` (a plain attribute, read on every op) a docstring at no cost per tensor
    __slots__ = {"_data": None, "_requires_grad": None,
                 "grad_fn": "The graph node that made this tensor (``None`` for a leaf or a tensor that does not "
                            "require grad): its backward computes the vector-Jacobian product of that operation, "
                            "and its ``next_functions`` lead to the nodes of its inputs.",
                 "_output_nr": None, "_version_box": None, "__weakref__": None, "__dict__": None}
    # Published as gradiente.Tensor, so it prints as PyTorch's <class 'torch.Tensor'> does
    __module__ = "gradiente"
    _data: np.ndarray
    _requires_grad: bool
    grad_fn: "Node | None"
    _output_nr: int
    _version_box: "list[int]"

    # Set on few tensors, so class defaults rather than per-tensor slots (a tensor is made per op).
    _grad = None                # the accumulated gradient (leaves, and non-leaves that retain_grad)
    _base = None                # the tensor this one is a view of
    _accumulator = None         # weak reference to the leaf's AccumulateGrad node
    _hooks = None               # hooks of a leaf (a non-leaf's live on its grad_fn)
    _retains_grad = False
    _fw_grads = None            # {dual level: tangent}, on tensors that carry one (core/forward_grad.py)
    _levels = ()                # the vmap levels a batched tensor is batched at (func/_batched_tensor.py)

    # ``torch.Tensor`` outranks NumPy arrays in mixed arithmetic (ndarray + Tensor -> Tensor).
    __array_priority__ = 1000

    # --- construction ----------------------------------------------------------------------------------
    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def _make(cls, array, requires_grad=False):
        """Wrap an ndarray without copying (internal; the fast path every op uses)."""
        t = object.__new__(cls)
        t._data = array
        t._requires_grad = requires_grad
        t.grad_fn = None
        t._output_nr = 0
        # (the class flag first: a thread-local attribute costs twice as much, and inference mode is rare)
        t._version_box = InferenceVersion() if _ModeState.inference_made and _mode.inference else [0]
        return t

    # --- shape and type --------------------------------------------------------------------------------
    @property
    def shape(self):
        """The sizes of the dimensions, a ``gradiente.Size`` (a tuple): ``(2, 3)`` for a 2×3 matrix."""
        return Size(self._data.shape)

    @property
    def nbytes(self):
        """The bytes of the elements: numel() · element_size()."""
        return self._data.size * self._data.itemsize

    @property
    def itemsize(self):
        """The bytes of one element (element_size())."""
        return self._data.itemsize

    def size(self, dim=None):
        """The shape as a ``Size``, or the length of dimension ``dim`` (negative counts from the end)."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        """The number of dimensions: 0 for a scalar, 2 for a matrix (also ``ndim``, ``ndimension()``)."""
        return self._data.ndim

    ndimension = dim
    ndim = property(dim)

    def numel(self):
        """The number of elements: the product of the shape (also ``nelement()``)."""
        return self._data.size

    nelement = numel

    @property
    def dtype(self):
        """The element type, a ``gradiente.dtype`` such as ``gradiente.float32``."""
        return dt.FROM_NUMPY[self._data.dtype]

    @property
    def device(self):
        """``device(type='cpu')``, where gradiente computes with NumPy, or ``device(type='meta')`` for a tensor
        with a shape and no values (``core/meta.py``)."""
        return _META if type(self._data) is MetaArray else _CPU

    @property
    def is_meta(self):
        """Whether this is a meta tensor: a shape and a dtype, and no values (``core/meta.py``)."""
        return type(self._data) is MetaArray

    @property
    def is_cpu(self):
        """Whether the tensor is on the CPU: every tensor but a meta one."""
        return type(self._data) is not MetaArray

    is_cuda = False
    is_xpu = False
    is_mps = False
    is_sparse = False
    is_quantized = False
    layout = strided

    def is_floating_point(self):
        """Whether the dtype is a floating-point one (float16/32/64, bfloat16)."""
        return dt.kind(self._data.dtype) == "f"

    def is_complex(self):
        """Whether the dtype is complex (complex64 or complex128)."""
        return self._data.dtype.kind == "c"

    def element_size(self):
        """The bytes of one element: 4 for float32."""
        return self._data.itemsize

    def stride(self, dim=None):
        """How many elements to step in memory to move one place along each dimension (a tuple), or along
        ``dim``; counted in elements, as PyTorch does, not in NumPy's bytes."""
        if type(self._data) is MetaArray:
            strides = row_major_strides(self._data.shape)       # (a meta tensor has no memory: core/meta.py)
        else:
            strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        """Where this tensor's first element lies in its storage, in elements (nonzero for views such as
        ``x[1:]``)."""
        return storage_offset(self._data)

    def data_ptr(self):
        """The memory address of the first element (an int); equal for tensors that start at the same place.
        0 for a meta tensor, which has no memory."""
        if type(self._data) is MetaArray:
            return 0
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        """Whether the elements lie in memory in row-major order without gaps, or, for ``channels_last`` (4-d)
        and ``channels_last_3d`` (5-d), in that order of dims."""
        if type(self._data) is MetaArray:
            return memory_format is None or not is_channels_last(memory_format)
        if is_channels_last(memory_format):
            return is_in_memory_format(self._data, memory_format)
        return self._data.flags.c_contiguous

    def get_device(self):
        """-1, the number PyTorch gives a CPU tensor."""
        return -1

    def cpu(self, memory_format=None):
        """This tensor itself: it is already on the CPU (as in PyTorch, no copy is made). A meta tensor has no
        values to copy there."""
        if type(self._data) is MetaArray:
            raise NotImplementedError(NO_DATA)
        return self

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """A copy on a CUDA device, which a CPU-only build lacks: PyTorch's errors (``core/device.py``)."""
        _to_accelerator("cuda", device)

    def xpu(self, device=None, non_blocking=False, memory_format=None):
        """A copy on an XPU device, which a CPU-only build lacks: raises PyTorch's error."""
        _to_accelerator("xpu", device)

    def pin_memory(self, device=None):
        """Page-locked memory serves copies to an accelerator, which a CPU-only build lacks."""
        if type(self._data) is MetaArray:
            raise RuntimeError(f"cannot pin 'Meta{dt.FROM_NUMPY[self._data.dtype]._legacy[:-6]}Type' only dense CPU "
                               "tensors can be pinned")
        raise RuntimeError(_NO_ACCELERATOR)

    def is_pinned(self, device=None):
        """False: page-locked memory exists only where there is an accelerator."""
        return False

    # --- values ----------------------------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number (``loss.item()``); raises for more elements."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if type(self._data) is MetaArray:
            raise RuntimeError(_META_ITEM)
        if self._requires_grad and _diagnostics.sites:
            diagnostics.note_cut("item", self)
        return self._data.reshape(()).item()

    def tolist(self):
        """The values as nested Python lists of numbers (a number for a 0-d tensor); cuts the graph."""
        if self._requires_grad and _diagnostics.sites:
            diagnostics.note_cut("tolist", self)
        return self._data.tolist()

    def numpy(self, *, force=False):
        """The tensor's values as a NumPy array sharing its memory. Refused while the tensor requires grad (NumPy
        would compute outside the graph): ``t.detach().numpy()`` says you mean it; ``force=True`` does the same."""
        if self._requires_grad and _mode.enabled and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._requires_grad and _diagnostics.sites:
            diagnostics.note_cut("numpy", self)
        if type(self._data) is MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")
        if self._data.dtype == dt.BFLOAT16:
            # NumPy has no bfloat16, and PyTorch refuses rather than hand out an extension type (``.float()`` first)
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._data

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()        # as PyTorch's: refused while the tensor requires grad
        return array if dtype is None else array.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # A NumPy function applied to a tensor (``np.sin(t)``) gives a tensor, as with PyTorch; like PyTorch's,
        # a boolean result becomes uint8
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return Tensor._make(np.asanyarray(array))

    # --- DLPack: zero-copy exchange with NumPy, PyTorch and other array libraries ----------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        options = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
                   if v is not None}
        return self._data.__dlpack__(stream=stream, **options)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()       # (1, 0): the CPU

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def _scalar(self, kind):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if type(self._data) is MetaArray:
            raise RuntimeError(_META_ITEM)
        return kind(self._data.reshape(()).item())

    def __bool__(self):
        if self._data.size != 1:
            if self._data.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if type(self._data) is MetaArray:
            raise RuntimeError(_META_ITEM)
        return bool(self._data.reshape(()).item())

    def __float__(self):
        _warn_once_of_scalar_with_grad(self)
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __complex__(self):
        _warn_once_of_scalar_with_grad(self)
        return self._scalar(complex)

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()).item())

    def __hash__(self):
        return id(self)

    def __str__(self):
        return self.__repr__()

    def __format__(self, format_spec):
        """``f"{t:.2f}"``: a 0-d tensor formats as its number (``f"{t}"`` too, as PyTorch does); any other tensor,
        or a subclass such as Parameter, only with an empty spec, as its str."""
        if self._data.ndim == 0 and type(self) is Tensor and type(self._data) is not MetaArray:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        new = type(self)._make(self._data.copy(), self._requires_grad)
        if type(self) is not Tensor:
            # a copy is a fresh tensor: it is nobody's view and has no views of its own
            new.__dict__.update({k: v for k, v in self.__dict__.items() if k not in _VIEW_STATE})
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    # --- autograd state --------------------------------------------------------------------------------
    @property
    def requires_grad(self):
        """Whether autograd records operations on this tensor, so that gradients can reach it. Settable on leaves
        only, and only True for floating-point and complex tensors (``x.requires_grad = True``)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if not isinstance(flag, bool):
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
                + diagnostics.learner_explanation("requires_grad_non_leaf", tensor=self))
        if flag and dt.kind(self._data.dtype) not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(flag)

    @requires_grad.deleter
    def requires_grad(self):
        _refuse_deletion("requires_grad")

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place and return this tensor: ``w = torch.randn(3).requires_grad_()`` makes a
        leaf that tracks gradients; ``x.requires_grad_(False)`` stops tracking. Only leaves can change it, and only
        floating-point and complex tensors can require gradients (PyTorch's errors otherwise)."""
        if not isinstance(requires_grad, bool):
            kind = type(requires_grad)
            name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not {name}")
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if self.grad_fn is None:
            self.requires_grad = requires_grad
        elif _diagnostics.learner is not None:      # a no-op on a computed tensor: often a mistake
            _diagnostics.learner.warn("requires_grad_non_leaf", tensor=self)
        return self

    @property
    def is_leaf(self):
        """True for a tensor no recorded operation made (``grad_fn`` is None): tensors you create, and results
        computed without grad. Only leaves get ``.grad`` filled by ``backward()`` (non-leaves: ``retain_grad``)."""
        return self.grad_fn is None

    @property
    def grad(self):
        """The gradient ``backward()`` accumulated into this leaf, shaped like the tensor; None until a backward
        pass reaches it. Backward passes *add* to it: empty it with ``x.grad.zero_()``, ``x.grad = None`` or an
        optimizer's ``zero_grad()``. Reading it on a non-leaf warns, as in PyTorch, unless ``retain_grad()`` was
        called."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warn_at_caller(_NONLEAF_GRAD_WARNING, UserWarning)
        grad = self._grad
        if grad is not None and self.__dict__.get("_sparse_grad") is not None:
            # a weight looked up by ``embedding(..., sparse=True)``: its gradient reads as sparse COO, as PyTorch's
            # (the rows given a gradient, and the function that shows them so: ops/nn/embedding.py)
            rows, as_sparse = self.__dict__["_sparse_grad"]
            return as_sparse(grad, rows)
        return grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of {type(value).__name__}")
            check_assigned_grad_dtype(self, value)
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self.__dict__.pop("_sparse_grad", None)
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        """Whether ``retain_grad()`` was called on this non-leaf, so that backward fills its ``.grad``."""
        return self._retains_grad

    @property
    def _version(self):
        if self._version_box.__class__ is InferenceVersion:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_box[0]

    def _bump_version(self):
        self._version_box[0] += 1

    def is_inference(self):
        """Whether this tensor was made in inference mode (or is a view of one that was)."""
        return self._version_box.__class__ is InferenceVersion

    def _is_view(self):
        """Whether this tensor is a view of another (``_base``) to autograd: ``detach()``, ``.data`` and the
        views of an inference tensor share memory without being views."""
        return self._base is not None

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is (0 for ops with one output and for leaves)."""
        return self._output_nr

    @property
    def data(self):
        """The same values, detached from the graph (sharing memory), with a version counter of its own: a change
        made through ``.data`` is hidden from autograd's in-place check (as in PyTorch; ``detach()`` shares the
        counter and is caught). Assigning replaces the values."""
        t = Tensor._make(self._data)
        box = self._version_box
        t._version_box = InferenceVersion() if box.__class__ is InferenceVersion else DataVersion(box)
        if self._requires_grad and _diagnostics.sites:
            diagnostics.note_cut("data", self, t)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and dt.kind(value._data.dtype) not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        if _diagnostics.learner is not None and diagnostics.called_by_learner():
            _diagnostics.learner.data_replaced(self)
        self._data = value._data

    # PyTorch's C++ attributes cannot be deleted. (Property deleters, not ``__delattr__``: a class that defines
    # ``__delattr__`` makes CPython route every attribute assignment through a slower slot, about 0.3 µs more
    # per new tensor.)
    @data.deleter
    def data(self):
        _refuse_deletion("data")

    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self):
        _refuse_deletion("grad_fn")

    @property
    def _backward_hooks(self):
        """The dict of this tensor's gradient hooks, as PyTorch exposes it (None before the first)."""
        if self.grad_fn is None:
            return self._hooks
        given = self.__dict__.get("_hooks_given")
        return given if given is not None else (self.grad_fn._tensor_pre_hooks or {}).get(self._output_nr)

    @_backward_hooks.setter
    def _backward_hooks(self, hooks):
        # As in PyTorch: a leaf's hooks are the given dict from now on; a non-leaf's dict is only kept, until
        # ``grad_fn._register_hook_dict(tensor)`` makes its node call it.
        if self.grad_fn is None:
            self._hooks = hooks
        else:
            self.__dict__["_hooks_given"] = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self):
        _refuse_deletion("backward_hooks")

    def _grad_edge(self):
        """The edge an op on this tensor records: ``(grad_fn, output_nr)``, or the leaf's AccumulateGrad."""
        if self.grad_fn is not None:
            if self.grad_fn.stale:
                raise RuntimeError(self.grad_fn.message)
            return (self.grad_fn, self._output_nr)
        if not self._requires_grad or (self._base is not None and "_no_edge" in self.__dict__):
            return (None, 0)
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return (acc, 0)

    def detach(self):
        """A new tensor with the same values, sharing this one's memory, that is outside the graph: no
        ``grad_fn``, ``requires_grad=False``; nothing computed from it sends gradients back here. Use it to hand
        values to NumPy (``t.detach().numpy()``) or to stop a gradient on purpose. An in-place change to either
        tensor is seen by the other (and by autograd's checks on saved values)."""
        t = Tensor._make(self._data)
        t._version_box = self._version_box
        # not a view to autograd (no ``_base``), but an in-place change through it still reaches the views of
        # the memory it shares (``core/inplace.py``). Weakly: a detached tensor must not keep the graph alive
        # (as in PyTorch), and once the base is gone so are its views (each holds its base).
        t._alias_of = weakref.ref(self if self._base is None else self._base)
        if self._requires_grad and _diagnostics.sites:
            diagnostics.note_cut("detach", self, t)
        return t

    def detach_(self):
        """Detach this tensor from the graph in place: it becomes a leaf with ``requires_grad=False`` (views of
        tensors that require grad refuse, as in PyTorch)."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        self.__dict__.pop("_fw_grads", None)        # out of forward mode's graph as well, as in PyTorch
        return self

    def retain_grad(self):
        """Ask backward to keep this non-leaf tensor's gradient in its ``.grad`` (normally only leaves keep
        one); call it before ``backward()``. A no-op on leaves that require grad."""
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        node = self.grad_fn
        if node._retain_hooks is None:
            node._retain_hooks = {}
        node._retain_hooks[self._output_nr] = weakref.ref(self)
        node._hooked = True
        self._retains_grad = True

    def register_hook(self, hook):
        """Register ``hook(grad)``, called with this tensor's gradient each time backward computes it. A hook that
        returns a tensor (of the same shape) replaces the gradient that passes on; one that returns None only
        looks. Returns a handle whose ``remove()`` unregisters it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = _HookDict()
            hooks = self._hooks
        else:
            node = self.grad_fn
            node._hooked = True
            if node._tensor_pre_hooks is None:
                node._tensor_pre_hooks = {}
            existing = node._tensor_pre_hooks.get(self._output_nr)
            if existing is None:
                existing = node._tensor_pre_hooks[self._output_nr] = _HookDict()
            hooks = existing
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after the gradient has been accumulated into this leaf's ``.grad``."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = self.__dict__.setdefault("_post_hooks", _HookDict())
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle



_VIEW_STATE = ("_views", "_base", "_view_meta", "_alias_of", "_no_edge")


def _rebuild(array, requires_grad):
    return Tensor._make(array, requires_grad)


def _wrap_dim(dim, ndim):
    """A possibly negative dim as an index into the shape, with PyTorch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _type_name(obj):
    kind = type(obj)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _is_size(s, first):
    """An int, a NumPy integer or a 0-d integer tensor (a bool too, except first, as PyTorch's parser reads)."""
    if isinstance(s, (bool, np.bool_)):
        return not first
    if isinstance(s, Tensor):
        return s._data.ndim == 0 and s._data.dtype.kind in "iu"
    return isinstance(s, (int, np.integer))


def _size_args(size, fname=None, arg="size"):
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean the shape (2, 3). Anything but integers raises
    PyTorch's TypeError for ``fname`` (a float is never truncated)."""
    one = len(size) == 1
    if one and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    elif one and not _is_size(size[0], True):
        raise TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, not {_type_name(size[0])}")
    for i, s in enumerate(size):
        if not _is_size(s, i == 0):
            if i > 0:
                raise TypeError(f"{fname}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                                f'"type must be tuple of ints,but got {_type_name(s)}"')
            if one:
                raise TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, but found element "
                                f"of type {_type_name(s)} at pos 0")
            raise TypeError(f"{fname}() takes 1 positional argument but {len(size)} were given")
    return tuple(int(s) for s in size)


def _refuse_deletion(name):
    raise RuntimeError(f"cannot delete Variable's {name}")
