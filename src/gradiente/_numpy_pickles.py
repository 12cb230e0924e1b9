"""NumPy arrays and scalars in checkpoints, as ``torch.save`` pickles them, read without running NumPy's pickle code.

``torch.save(np.arange(3), f)`` writes what NumPy's ``__reduce__`` says: ``_reconstruct(ndarray, (0,), b'b')``, then
``BUILD`` with ``(1, shape, dtype, is_fortran, raw bytes)``, the dtype being ``numpy.dtype('i8', False, True)`` with
its own ``BUILD`` state ``(3, '<', None, None, None, -1, -1, 0)``; a scalar is ``scalar(dtype, raw bytes)``.

Read by Python's unpickler, that ``BUILD`` would call ``dtype.__setstate__`` on NumPy's shared ``dtype('int64')``
object, which a crafted file could use to change it for the whole process. So the file's names resolve to functions
of ours, and what it builds is checked field by field:

* ``numpy.dtype`` makes a new ``_DtypeSpec`` (a plain record of the type code), never a NumPy dtype object that
  could be shared; its ``BUILD`` may only set a byte order. Only numbers, bools and fixed-width strings are allowed
  (no object arrays, whose items would be pickles themselves, no structured or void types).
* ``_reconstruct`` makes a new empty array; its ``BUILD`` fills that array, and only it, from raw bytes whose length
  must match the shape and dtype (NumPy's ``__setstate__`` copies them into memory the array owns).
* ``scalar`` makes a new NumPy scalar from exactly ``itemsize`` bytes.

Writing is the mirror image (``write_numpy``): the same opcodes ``torch.save`` writes, so real ``torch.load(...,
weights_only=False)`` reads our files and our reader reads PyTorch's.
"""
import re

import numpy as np

from ._weights_only_unpickler import refused

__all__ = ["NUMPY_GLOBALS", "NUMPY_CONSTRUCTORS", "NUMPY_BUILDERS", "write_numpy", "is_numpy_data"]

# Type codes NumPy writes for the dtypes a checkpoint may hold: bool, integers, floats, complex, fixed-width strings.
_SIMPLE_CODE = re.compile(r"(b1|[iu][1248]|f[248]|c(8|16)|[US]\d{1,9})")
_ALLOWED_KINDS = "biufcUS"


class _DtypeSpec:
    """What a file's ``numpy.dtype(code, False, True)`` stands for until its ``BUILD`` sets the byte order."""
    __slots__ = ("code", "byteorder")

    def __init__(self, code):
        self.code = code
        self.byteorder = "="

    def resolve(self):
        dtype = np.dtype(self.code)
        return dtype.newbyteorder(self.byteorder) if self.byteorder in "<>" else dtype


def _numpy_dtype(code, align=False, copy=True):
    if type(code) is not str or not _SIMPLE_CODE.fullmatch(code) or align is not False or copy is not True:
        raise refused(f"gradiente.load refused numpy.dtype{(code, align, copy)!r:.80}: a checkpoint may hold arrays of "
                      "numbers, bools and fixed-width strings only.")
    return _DtypeSpec(code)


def _build_dtype(spec, state):
    """A dtype's ``BUILD``: ``(3, byteorder, None, None, None, elsize, alignment, flags)``; only the byte order
    matters for the simple types allowed."""
    if type(state) is not tuple or len(state) != 8 or state[0] != 3 or state[1] not in ("<", ">", "|", "=") or \
            state[2:5] != (None, None, None) or not all(type(v) is int for v in state[5:]):
        raise refused("gradiente.load refused a numpy dtype's state: it is not the state NumPy writes for a "
                      "simple dtype.")
    spec.byteorder = state[1]


def _reconstruct(subtype, shape, typecode):
    """NumPy's ``_reconstruct(ndarray, (0,), b'b')``: a new, empty array for the ``BUILD`` that follows."""
    if subtype is not np.ndarray or shape != (0,) or typecode != b"b":
        raise refused("gradiente.load refused numpy's _reconstruct with arguments NumPy does not write for a plain "
                      "array.")
    return np.empty((0,), dtype=np.uint8)


def _build_array(array, state):
    """An array's ``BUILD``: ``(1, shape, dtype, is_fortran, raw bytes)``, each field checked before NumPy copies
    the bytes into the new array."""
    if type(state) is not tuple or len(state) != 5 or state[0] != 1:
        raise refused("gradiente.load refused a numpy array's state: it is not the state NumPy writes.")
    _, shape, spec, is_fortran, raw = state
    if type(shape) is not tuple or not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 64:
        raise refused(f"gradiente.load refused a numpy array of shape {shape!r:.80}.")
    if type(spec) is not _DtypeSpec or type(is_fortran) is not bool or type(raw) is not bytes:
        raise refused("gradiente.load refused a numpy array whose dtype, order or data is not what NumPy writes "
                      "for an array of numbers (object arrays are refused).")
    dtype = spec.resolve()
    count = 1
    for n in shape:
        count *= n
    if len(raw) != count * dtype.itemsize:
        raise refused(f"gradiente.load refused a numpy array: {len(raw)} bytes of data for shape {shape} of "
                      f"{dtype}.")
    array.__setstate__((1, shape, dtype, is_fortran, raw))


def _scalar(spec, raw):
    """NumPy's ``scalar(dtype, raw bytes)``: one new NumPy scalar."""
    if type(spec) is not _DtypeSpec or type(raw) is not bytes:
        raise refused("gradiente.load refused numpy's scalar with arguments NumPy does not write for a number.")
    dtype = spec.resolve()
    if len(raw) != dtype.itemsize:
        raise refused(f"gradiente.load refused a numpy scalar: {len(raw)} bytes for one {dtype}.")
    return np.frombuffer(raw, dtype=dtype)[0]


# NumPy 2 pickles name numpy._core, NumPy 1 numpy.core: both are read.
NUMPY_GLOBALS = {**{(module, name): fn for module in ("numpy._core.multiarray", "numpy.core.multiarray")
                    for name, fn in (("_reconstruct", _reconstruct), ("scalar", _scalar))},
                 ("numpy", "dtype"): _numpy_dtype,
                 ("numpy", "ndarray"): np.ndarray}          # named as _reconstruct's argument, never called
NUMPY_CONSTRUCTORS = (_reconstruct, _scalar, _numpy_dtype)
NUMPY_BUILDERS = {_DtypeSpec: _build_dtype, np.ndarray: _build_array}


# --- writing ------------------------------------------------------------------------------------------------

def is_numpy_data(obj):
    """Whether ``obj`` is a NumPy array or scalar that a checkpoint may hold (numbers, bools, strings)."""
    plain = type(obj) is np.ndarray or isinstance(obj, np.generic)     # not a subclass (np.matrix, masked arrays)
    return plain and obj.dtype.kind in _ALLOWED_KINDS and obj.dtype.fields is None


def write_numpy(pickler, obj):
    """Append ``obj`` to ``pickler`` (serialization's ``_TorchPickler``) as ``torch.save`` pickles it."""
    function, args, *state = obj.__reduce__()
    pickler.global_(function.__module__, function.__name__)
    if isinstance(obj, np.ndarray):                 # _reconstruct(ndarray, (0,), b'b'), then BUILD
        pickler.global_("numpy", "ndarray")
        pickler.save((0,))
        pickler.save_bytes(args[2])
        pickler.out += b"\x87R"
        version, shape, dtype, is_fortran, raw = state[0]
        pickler.out += b"("
        pickler.save(version)
        pickler.save(tuple(shape))
        _write_dtype(pickler, dtype)
        pickler.save(bool(is_fortran))
        pickler.save_bytes(raw)
        pickler.out += b"tb"
    else:                                           # scalar(dtype, raw)
        _write_dtype(pickler, args[0])
        pickler.save_bytes(args[1])
        pickler.out += b"\x86R"


def _write_dtype(pickler, dtype):
    """``numpy.dtype(code, False, True)`` and its ``BUILD`` state, as NumPy reduces it."""
    _, args, state = dtype.__reduce__()
    pickler.global_("numpy", "dtype")
    pickler.save(tuple(args))
    pickler.out += b"R"
    pickler.save(tuple(state))
    pickler.out += b"b"
