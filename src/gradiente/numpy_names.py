"""NumPy's argument names where PyTorch accepts them: ``x.sum(axis=0)``, ``torch.mean(x, axis=1, keepdims=True)``.

PyTorch's argument parser, which reads the arguments of every function written in its C++ core, accepts ``axis``
for ``dim`` and ``keepdims`` for ``keepdim``. Functions PyTorch writes in Python (``Tensor.norm``,
``Tensor.split``, ``nn.functional``...) have no such aliases, and neither do they here. ``accept_numpy_names``
gives a function the aliases when its signature has ``dim`` or ``keepdim``; it is applied once, where Tensor
methods are bound and where the torch-level functions are exported, so the ops themselves and gradiente's own
calls between them are untouched. A call without keyword arguments pays one ``if``.
"""
import inspect

from .core.wrapping import wraps

__all__ = ["accept_numpy_names", "op_behind", "with_torch_names", "rename_numpy_names", "WRITTEN_IN_PYTHON"]

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}

#: the functions and methods PyTorch writes in Python (its parser never sees their arguments): no aliases
WRITTEN_IN_PYTHON = frozenset({
    "norm", "split", "unique", "unique_consecutive", "stft", "istft", "lu", "einsum", "meshgrid", "tensordot",
    "cdist", "block_diag", "cartesian_prod", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors",
    "chain_matmul", "unravel_index", "lu_unpack", "pca_lowrank", "svd_lowrank", "lobpcg", "align_to",
    "refine_names", "rename", "unflatten", "split_with_sizes_copy",
})


def accept_numpy_names(fn, name=None):
    """``fn``, or a wrapper of it that reads ``axis``/``keepdims`` as ``dim``/``keepdim``, when ``fn`` takes
    those and PyTorch's version of it (named ``name``) is one of its C++ functions."""
    name = name or getattr(fn, "__name__", "")
    if name in WRITTEN_IN_PYTHON or name.startswith("__"):
        return fn
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return fn
    # the parameter names, read off the code object (inspect.signature would cost milliseconds at import)
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    renames = {alias: own for alias, own in _ALIASES.items() if own in parameters and alias not in parameters}
    if not renames:
        return fn

    @wraps(fn)
    def with_numpy_names(*args, **kwargs):
        if kwargs:
            rename_numpy_names(kwargs, renames, name)
        return fn(*args, **kwargs)

    # what code that looks ops up by identity (vmap's batching rules) needs: the op, and how to rename
    with_numpy_names.numpy_names_of = fn
    with_numpy_names.numpy_names = renames
    with_numpy_names.numpy_names_for = name
    return with_numpy_names


def rename_numpy_names(kwargs, renames, name):
    """Replace, in ``kwargs``, each NumPy name of ``renames`` by PyTorch's (``name``: the function, for the error
    PyTorch's parser gives when both spellings are passed)."""
    for alias, own in renames.items():
        if alias in kwargs:
            if own in kwargs:       # both spellings: PyTorch's parser knows only one of them here
                raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
            kwargs[own] = kwargs.pop(alias)


def op_behind(fn):
    """The op a NumPy-names wrapper calls (``fn`` itself for anything else)."""
    return getattr(fn, "numpy_names_of", fn)


def with_torch_names(fn, kwargs):
    """``kwargs`` with NumPy's names replaced by PyTorch's, as ``fn`` (a wrapper or not) would read them."""
    renames = getattr(fn, "numpy_names", None)
    if renames and kwargs:
        rename_numpy_names(kwargs, renames, fn.__name__)
    return kwargs
