"""dtypes: PyTorch's scalar types as objects, their NumPy storage, and PyTorch's type promotion.

A ``dtype`` prints as ``gradiente.float32`` and compares by identity, like ``torch.float32``.
Promotion follows PyTorch, not NumPy: a Python float meeting an integer tensor gives the default
float dtype, and a 0-d tensor never widens a dimensioned tensor of the same category
(float32 tensor + float64 0-d tensor -> float32).
"""
import builtins

import numpy as np

__all__ = [
    "dtype", "float16", "half", "float32", "float", "float64", "double", "bfloat16",
    "uint8", "int8", "int16", "short", "int32", "int", "int64", "long", "bool", "uint16", "uint32", "uint64",
    "complex64", "cfloat", "complex128", "cdouble",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
]

_BOOL, _INT, _FLOAT, _COMPLEX = range(4)


class dtype:
    """A scalar type. ``is_floating_point``, ``is_complex``, ``is_signed`` and ``itemsize`` as in PyTorch."""

    __slots__ = ("_name", "_np", "_category", "_rank", "_legacy", "is_signed")

    def __init__(self, name, np_dtype, category, rank, legacy, is_signed):
        self._name = name
        self._np = np.dtype(np_dtype)
        self._category = category
        self._rank = rank
        self._legacy = legacy          # the legacy tensor type name, e.g. "FloatTensor"
        self.is_signed = is_signed

    is_floating_point = property(lambda self: self._category == _FLOAT)
    is_complex = property(lambda self: self._category == _COMPLEX)
    itemsize = property(lambda self: self._np.itemsize)

    def __repr__(self):
        return "gradiente." + self._name

    def __reduce__(self):
        return self._name

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float32: complex64, float64: complex128, float16: complex64, bfloat16: complex64}.get(self, self)


bool = dtype("bool", np.bool_, _BOOL, 0, "BoolTensor", False)
uint8 = dtype("uint8", np.uint8, _INT, 1, "ByteTensor", False)
int8 = dtype("int8", np.int8, _INT, 1, "CharTensor", True)
int16 = short = dtype("int16", np.int16, _INT, 2, "ShortTensor", True)
int32 = int = dtype("int32", np.int32, _INT, 3, "IntTensor", True)
int64 = long = dtype("int64", np.int64, _INT, 4, "LongTensor", True)
float16 = half = dtype("float16", np.float16, _FLOAT, 5, "HalfTensor", True)
# NumPy has no bfloat16: its storage is ml_dtypes' (the JAX team's NumPy extension type). NumPy reports its kind
# as "V", not "f", so code that asks whether an array is floating asks ``kind`` below.
#
# ml_dtypes is imported on first use (issue 14: it was an eighth of ``import gradiente``). Until then no array can
# hold bfloat16, and bfloat16's NumPy dtype is a placeholder that equals none of NumPy's; the first read of
# ``bfloat16._np`` (any op or constructor that makes bfloat16 storage) or a bfloat16 array handed in from outside
# (``from_numpy_dtype``) loads it, and ``load_bfloat16`` puts the real dtype everywhere the placeholder stood.
_NOT_LOADED = np.dtype([("bfloat16 storage, ml_dtypes not imported yet", np.uint16)])
_NP_SLOT = dtype.__dict__["_np"]


class _Bfloat16(dtype):
    """The bfloat16 dtype, whose NumPy storage type is imported when first read."""

    __slots__ = ()

    @property
    def _np(self):
        stored = _NP_SLOT.__get__(self)
        return load_bfloat16() if stored is _NOT_LOADED else stored

    @_np.setter
    def _np(self, np_dtype):
        _NP_SLOT.__set__(self, np_dtype)


bfloat16 = _Bfloat16("bfloat16", _NOT_LOADED, _FLOAT, 5, "BFloat16Tensor", True)
_NP_SLOT.__set__(bfloat16, _NOT_LOADED)        # (np.dtype may have made an equal copy of the placeholder)
float32 = float = dtype("float32", np.float32, _FLOAT, 6, "FloatTensor", True)
float64 = double = dtype("float64", np.float64, _FLOAT, 7, "DoubleTensor", True)
complex64 = cfloat = dtype("complex64", np.complex64, _COMPLEX, 8, "ComplexFloatTensor", True)
complex128 = cdouble = dtype("complex128", np.complex128, _COMPLEX, 9, "ComplexDoubleTensor", True)
# The wide unsigned types (issue 16): PyTorch 2.13 stores and converts them, but gives them few CPU kernels and
# no promotion with other integer types (``promote_types``). ``refuse_unsigned_wide`` raises its missing-kernel
# error in the most used ops (``+``, ``-``, ``<``/``<=``/``>``/``>=``, ``max``/``min``, ``amax``/``amin``,
# ``argmax``/``argmin``, ``clamp`` with numbers, ``neg``, ``//``, ``arange``); the other ops PyTorch also lacks
# for them (abs, relu, matmul, pow, tril ...) compute here, on NumPy's unsigned types: an intended difference, a
# superset of PyTorch's support.
uint16 = dtype("uint16", np.uint16, _INT, 2, "UInt16Tensor", False)
uint32 = dtype("uint32", np.uint32, _INT, 3, "UInt32Tensor", False)
uint64 = dtype("uint64", np.uint64, _INT, 4, "UInt64Tensor", False)
UNSIGNED_WIDE = (uint16, uint32, uint64)

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
              uint16, uint32, uint64)
FROM_NUMPY = {_NP_SLOT.__get__(d): d for d in ALL_DTYPES}
BY_NAME = {d._name: d for d in ALL_DTYPES}

#: the NumPy dtype of bfloat16 storage (the placeholder until ``load_bfloat16``)
BFLOAT16 = _NOT_LOADED
#: the two 16-bit floating types, which PyTorch's CPU kernels compute in float32 and round once
REDUCED_FLOATS = (np.dtype(np.float16), BFLOAT16)
_ml_dtypes: list = []      # the module, once imported


def load_bfloat16():
    """Import ml_dtypes and give bfloat16 its real NumPy storage type; returns that type."""
    global BFLOAT16, REDUCED_FLOATS
    if not _ml_dtypes:
        import ml_dtypes
        real = np.dtype(ml_dtypes.bfloat16)
        _NP_SLOT.__set__(bfloat16, real)
        FROM_NUMPY[real] = bfloat16
        BFLOAT16, REDUCED_FLOATS = real, (np.dtype(np.float16), real)
        _ml_dtypes.append(ml_dtypes)
    return BFLOAT16


# C++ type names, as PyTorch's dtype-mismatch messages print them ("expected dtype float ... got dtype double").
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
              "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
              "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long"}


def scalar_name(np_dtype):
    """PyTorch's ScalarType name of a NumPy dtype, as its messages print it: Float, Double, Long, Bool ..."""
    return FROM_NUMPY[np.dtype(np_dtype)]._legacy[:-len("Tensor")]


def cpp_name(np_dtype):
    """The C++ name of a NumPy dtype's scalar type, as PyTorch prints it: float, double, long int ..."""
    return _CPP_NAMES[np.dtype(np_dtype).name]


def from_numpy_dtype(np_dtype):
    """The gradiente dtype stored as ``np_dtype``; TypeError for types PyTorch does not have."""
    try:
        return FROM_NUMPY[np_dtype]
    except KeyError:
        if not _ml_dtypes and np.dtype(np_dtype).name == "bfloat16":     # handed in from outside, before any use
            load_bfloat16()
            return from_numpy_dtype(np_dtype)
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        ) from None


# --- default dtype -------------------------------------------------------------------------------------

_default = [float32]


def get_default_dtype():
    """The dtype of floating tensors created from Python floats (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d):
    """Sets the dtype that Python floats become in new tensors (float32 at start): one of float32, float64,
    float16 and bfloat16, as in PyTorch."""
    if not isinstance(d, dtype) or d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


# --- promotion -----------------------------------------------------------------------------------------

def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to without losing their category (PyTorch's table)."""
    if a is b:
        return a
    if (a in UNSIGNED_WIDE or b in UNSIGNED_WIDE) and not (a.is_floating_point or b.is_floating_point):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a._legacy[:-len('Tensor')]} and {b._legacy[:-len('Tensor')]}")
    if a._category == b._category == _INT and {a, b} == {uint8, int8}:
        return int16
    if a._category == b._category == _INT and not a.is_signed and b.is_signed:
        return b if b._rank > a._rank else a if a._rank > b._rank else b
    if {a, b} == {float16, bfloat16}:
        return float32
    if _COMPLEX in (a._category, b._category):
        real = promote_types(a.to_real(), b.to_real())
        return complex128 if real is float64 else complex64
    return a if a._rank >= b._rank else b


def _combine_categories(higher, lower):
    # PyTorch's combine_categories: a lower-priority group only wins when it is of a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        return higher.to_complex() if higher._category == _FLOAT else lower
    if higher._category == _FLOAT:
        return higher
    if higher is bool or lower._category == _FLOAT:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value):
    """The dtype a Python number takes when it meets a tensor (a 'wrapped number')."""
    if isinstance(value, _py_bool):
        return bool
    if isinstance(value, _py_int):
        return int64
    if isinstance(value, _py_complex):
        return complex64 if _default[0] is float32 else complex128
    return _default[0]


# The module defines dtypes named bool, int and float; these are Python's own types.
_py_bool, _py_int, _py_float, _py_complex = builtins.bool, builtins.int, builtins.float, builtins.complex


def result_type(*operands):
    """PyTorch's result type for tensors and Python scalars: dimensioned tensors, then 0-d tensors, then
    scalars, each group consulted only if it is of a higher category than the groups before it."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.dim() > 0:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        else:
            d = scalar_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine_categories(dim, _combine_categories(zero, wrapped))


UNSIGNED_WIDE_NP = frozenset(d._np for d in UNSIGNED_WIDE)


def refuse_unsigned_wide(kernel, np_dtype):
    """PyTorch 2.13's CPU build has no ``kernel`` for uint16, uint32 and uint64 (it has copies, casts, ``*``,
    ``==``, bitwise ops, sort and sums): the NotImplementedError it raises, for those three dtypes only."""
    if np_dtype in UNSIGNED_WIDE_NP:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(np_dtype)}\'')


def refuse_unsigned_wide_operands(kernel, *operands):
    """``refuse_unsigned_wide`` for a binary op: raises where an operand is a wide unsigned tensor and the result
    type is one too (``t + 0.5`` is float and has a kernel). Costs one set lookup per operand otherwise."""
    for x in operands:
        a = getattr(x, "_data", None)
        if a is not None and a.dtype in UNSIGNED_WIDE_NP:
            refuse_unsigned_wide(kernel, result_type(*operands)._np)
            return


def can_cast(from_, to):
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor (no category narrowing)."""
    return from_._category <= to._category


def kind(np_dtype):
    """NumPy's kind letter of ``np_dtype`` ("f" floating, "c" complex, "i"/"u" integer, "b" bool), with "f" for
    bfloat16, whose extension type NumPy reports as "V"."""
    return "f" if np_dtype == BFLOAT16 else np_dtype.kind


def widened(array):
    """The array a kernel computes on: bfloat16 as float32 (PyTorch's CPU kernels compute bfloat16 in float and
    round their result once, which NumPy does only for single ufunc calls), any other as it is."""
    return array.astype(np.float32) if array.dtype == BFLOAT16 else array


def finfo_of(np_dtype):
    """``np.finfo`` of a floating NumPy dtype, bfloat16 included (NumPy's finfo does not know it; ml_dtypes' does)."""
    return _ml_dtypes[0].finfo(np_dtype) if np_dtype == BFLOAT16 else np.finfo(np_dtype)
