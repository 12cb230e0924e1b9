"""The batched value of ``vmap``: a ``BatchedTensor`` is what a function under ``vmap`` sees in place of a tensor.

Representation. A BatchedTensor holds one ordinary Tensor, its *physical* value, whose leading dimensions are the
batch dimensions, one per vmap level it is batched at (``_levels``, outermost vmap first), followed by the
*logical* dimensions, the ones the function sees. ``x`` of logical shape (3,) batched at one level of size 5 is a
physical (5, 3) tensor. A value batched at some levels only (a closure variable of an outer vmap, inside an inner
one) has no dimension for the others; ``align`` inserts size-1 dimensions for them, so that NumPy broadcasting
lines the values up.

Why this representation: every op on a BatchedTensor becomes one call of the ordinary op on the physical tensor
(``_batching_rules.py`` translates the logical arguments: dims shift by the number of batch dims, shapes gain the
batch sizes, ranks are aligned by inserting size-1 dims right after the batch dims). The ordinary op records an
ordinary graph on the physical tensors, so ``grad`` inside ``vmap`` and ``vmap`` of ``grad`` need no autograd of
their own: per-example computations never mix, so the physical gradient is the stack of per-example gradients.

A BatchedTensor is a ``Tensor`` subclass, as PyTorch's is: ``isinstance(x, Tensor)`` holds, and Python's rule
for reflected operators (a subclass's ``__radd__`` goes first) makes ``w @ x`` reach the batched ``__rmatmul__``
when ``w`` is a plain tensor. Its ``_data`` is not an array: a plain op that reaches for it was handed a batched
value by a path that does not dispatch (see ``_dispatch.py``), and raises instead of computing with the physical
array as if the batch dims were the function's own.
"""
import sys
import threading

from ..core.tensor import Tensor, _wrap_dim

__all__ = ["BatchedTensor", "Level", "active_levels", "push_level", "pop_level", "is_batched", "levels_of",
           "physical", "wrap", "align", "expand_to", "size_of_level", "NestedInTangentsOnlyLevel",
           "refuse_inside_tangents_only_level"]


class Level:
    """One running ``vmap``: its id (larger for inner vmaps), batch size and randomness mode. ``tangents_only``: a
    level that batches forward-mode tangents alone, the primal values staying plain (jacfwd's one call)."""
    __slots__ = ("id", "size", "randomness", "tangents_only")

    def __init__(self, id, size, randomness, tangents_only=False):
        self.id, self.size, self.randomness, self.tangents_only = id, size, randomness, tangents_only


class NestedInTangentsOnlyLevel(BaseException):
    """Raised when a transform or vmap starts inside a ``tangents_only`` level, whose caller then runs the whole
    computation the general way (a nested transform expects every running level to batch the values too). A
    BaseException, so that a function's own ``except Exception`` cannot swallow it."""


def refuse_inside_tangents_only_level():
    """Raise ``NestedInTangentsOnlyLevel`` if a ``tangents_only`` level is running (called as a transform starts)."""
    if _stack.levels and any(level.tangents_only for level in _stack.levels):
        raise NestedInTangentsOnlyLevel()


class _LevelStack(threading.local):
    def __init__(self):
        self.levels = []        # the running vmaps, outermost first
        self.next_id = 1


_stack = _LevelStack()


def active_levels():
    """The vmaps running in this thread, outermost first."""
    return _stack.levels


def push_level(size, randomness, tangents_only=False):
    level = Level(_stack.next_id, size, randomness, tangents_only)
    _stack.next_id += 1
    _stack.levels.append(level)
    return level


def pop_level(level):
    _stack.levels.remove(level)


def size_of_level(level_id):
    for level in _stack.levels:
        if level.id == level_id:
            return level.size
    raise RuntimeError(f"vmap: level {level_id} is not running (a batched value escaped its vmap)")


_NOT_AN_ARRAY = (
    "vmap: a gradiente function that has no batching dispatch was handed a batched tensor. This happens when a "
    "plain tensor's method is called with a batched argument (write the call on the batched tensor, or as "
    "torch.<function>(...)), or when a function was imported by name before vmap started (call it through its "
    "module, e.g. torch.sum or F.relu).")

_INPLACE_ERROR = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
    "being vmapped over in a vmap. Please try to use out-of-place operators instead of inplace arithmetic. If said "
    "operator is being called inside the PyTorch framework, please file a bug report instead.")


def _inside_inplace_op():
    """Whether the code reaching for a batched value's array is an in-place op on a plain tensor (PyTorch's
    in-place error then applies). Only ever asked on the way to an error, so walking the stack costs nothing on
    the normal path."""
    frame = sys._getframe(2)
    for _ in range(12):
        if frame is None:
            return False
        name = frame.f_code.co_name
        if name in ("apply_inplace", "setitem", "_direct", "_write_region", "copy_") or (
                name.endswith("_") and not name.endswith("__") and "gradiente" in frame.f_code.co_filename):
            return True
        frame = frame.f_back
    return False


class BatchedTensor(Tensor):
    """A tensor as seen inside ``vmap``: logical shape and dims, physical value with the batch dims in front."""

    __slots__ = ("_value", "_levels")
    __module__ = "gradiente"

    # --- what a plain op must not read (see the module docstring) ---------------------------------------
    @property
    def _data(self):
        raise RuntimeError(_INPLACE_ERROR if _inside_inplace_op() else _NOT_AN_ARRAY)

    # autograd state is the physical value's
    @property
    def _requires_grad(self):
        return self._value._requires_grad

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def _output_nr(self):
        return self._value._output_nr

    @property
    def _version_box(self):
        return self._value._version_box

    @property
    def _fw_grads(self):
        return self._value._fw_grads

    # --- logical metadata -----------------------------------------------------------------------------------
    @property
    def _nb(self):
        return len(self._levels)

    @property
    def shape(self):
        return self._value.shape[len(self._levels):]

    def size(self, dim=None):
        shape = self.shape
        if dim is None:
            return shape
        return shape[_wrap_dim(dim, len(shape))]

    def dim(self):
        return self._value.dim() - len(self._levels)

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self):
        return self._value.dtype

    # the device is the physical value's (a meta one too)
    @property
    def device(self):
        return self._value.device

    @property
    def is_meta(self):
        return self._value.is_meta

    @property
    def is_cpu(self):
        return self._value.is_cpu

    def is_floating_point(self):
        return self._value.is_floating_point()

    def is_complex(self):
        return self._value.is_complex()

    def element_size(self):
        return self._value.element_size()

    def is_contiguous(self, memory_format=None):
        return self._value.is_contiguous()

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # --- values cannot leave vmap as Python numbers -------------------------------------------------------
    def item(self):
        if any(level.randomness == "legacy" for level in _stack.levels):     # torch._vmap_internals._vmap's words
            raise RuntimeError("Batching rule not implemented for aten::item. We could not generate a fallback.")
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
                           "report.")

    def _data_dependent(self, *args, **kwargs):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please file an issue at "
                           "https://github.com/pytorch/pytorch/issues .")

    __bool__ = _data_dependent
    __float__ = __int__ = __complex__ = __index__ = item

    def tolist(self):
        self.item()

    def numpy(self, *, force=False):
        raise RuntimeError("vmap: a batched tensor cannot be read as a NumPy array inside vmap; return it from the "
                           "function instead.")

    __array__ = numpy

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def stride(self, dim=None):
        strides = self._value.stride()[len(self._levels):]
        return strides if dim is None else strides[_wrap_dim(dim, len(strides))]

    def storage_offset(self):
        return self._value.storage_offset()

    def __repr__(self, *, tensor_contents=None):
        """PyTorch's form: the innermost level, its dim in the (wrapped) value, and the value."""
        inner = wrap(self._value, self._levels[:-1]) if len(self._levels) > 1 else self._value
        text = "\n".join("    " + line for line in repr(inner).split("\n"))
        return f"BatchedTensor(lvl={self._levels[-1]}, bdim={len(self._levels) - 1}, value=\n{text}\n)"

    __str__ = __repr__

    def __format__(self, format_spec):
        return object.__format__(self, format_spec)

    def __reduce_ex__(self, protocol):
        raise RuntimeError("vmap: a batched tensor cannot be pickled inside vmap")

    def __deepcopy__(self, memo):
        return wrap(self._value.clone(), self._levels)

    # --- autograd state -------------------------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._value.requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._value.is_leaf

    @property
    def grad(self):
        g = self._value._grad
        return None if g is None else wrap(g, self._levels)

    @grad.setter
    def grad(self, value):
        self._value.grad = None if value is None else expand_to(value, self._levels)

    @property
    def data(self):
        return wrap(self._value.data, self._levels)

    def detach(self):
        return wrap(self._value.detach(), self._levels)

    def detach_(self):
        self._value.detach_()
        return self

    def retain_grad(self):
        self._value.retain_grad()

    def register_hook(self, hook):
        levels = self._levels

        def physical_hook(grad):
            result = hook(wrap(grad, levels))
            return None if result is None else expand_to(result, levels)
        return self._value.register_hook(physical_hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise RuntimeError("backward() called inside a functorch transform. This is not supported, please use "
                           "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
                           "transforms.")


# --- moving between logical and physical ------------------------------------------------------------------

def is_batched(x):
    return x.__class__ is BatchedTensor


def levels_of(x):
    """The level ids ``x`` is batched at (``()`` for anything else)."""
    return x._levels if x.__class__ is BatchedTensor else ()


def physical(x):
    return x._value if x.__class__ is BatchedTensor else x


def wrap(value, levels):
    """The batched value whose physical tensor is ``value`` (a plain tensor when ``levels`` is empty)."""
    if not levels:
        return value
    b = object.__new__(BatchedTensor)
    b._value = value
    b._levels = tuple(levels)
    return b


def align(x, levels, rank=None):
    """``x``'s physical tensor with one leading dim per level of ``levels`` (size 1 where ``x`` is not batched
    at that level), then ``x``'s logical dims, preceded by size-1 dims up to logical rank ``rank``: a value
    that broadcasts against every other value aligned the same way. A plain tensor not batched at all is
    returned as it is when no rank is asked, since NumPy broadcasting lines it up from the right already."""
    own = levels_of(x)
    value = physical(x)
    if not own and rank is None:
        return value
    nb = len(own)
    logical = value.dim() - nb
    extra = 0 if rank is None else rank - logical
    if own == tuple(levels) and extra <= 0:
        return value
    shape = list(value.shape)
    new = []
    it = iter(shape[:nb])
    for level in levels:
        new.append(next(it) if level in own else 1)
    new.extend([1] * max(extra, 0))
    new.extend(shape[nb:])
    # (a value's levels are a sorted subset of ``levels``: inserting size-1 dims is all it takes, a view)
    return value.reshape(new)


def expand_to(x, levels, rank=None):
    """``align`` with the size-1 batch dims expanded to each level's size (a broadcast view, no copy)."""
    value = align(x, levels, x.dim() if rank is None else rank)
    sizes = [size_of_level(lv) for lv in levels]
    if list(value.shape[:len(levels)]) == sizes:
        return value
    return value.expand(*sizes, *value.shape[len(levels):])
