"""Tensor's public surface: every method and property a tensor has beyond its data model, in one table.

``core/tensor.py`` says what a tensor *is*: its array, dtype, shape, ``requires_grad``, ``grad``, ``grad_fn``,
``backward`` and hooks. Everything a tensor can *do* is an op, defined beside its derivative rule in
``gradiente/ops/``; a row of this table gives an op its method names (``x.add(y)``, ``x + y``, ``1 + x``). An
in-place form is the op run through the one in-place mechanism (``ops/inplace.py``), written
``in_place(op)``; the few in-place forms that need more than that are written by hand beside their op
(``arithmetic.add_``). Private names (``views._T``, ``arithmetic._rtruediv``) are forms that exist only as
methods: properties and Python's reflected operators.

Binding happens when ``import gradiente`` imports this module: each row's names get a stand-in that makes the
row's methods on their first lookup (``_BoundOnFirstUse``); nothing else in the package sets a Tensor attribute
(``tests/test_architecture.py`` checks it).
"""
import importlib

import numpy as np

from . import _config, functional_aliases, tensor_extras
from .core import backward, creation, printing, random, storage
from .core.grad_dtype import get_grad_dtype, set_grad_dtype  # the remaining small names (issue 16)
from .core.inplace import make_inplace
from .core.sparse_compressed import SparseCompressedTensor  # compressed sparse tensors (issue 16)
from .core.sparse_tensor import SparseCooTensor  # sparse COO tensors (issue 16)
from .core.tensor import Tensor
from .numpy_names import accept_numpy_names
from .ops import (
    arithmetic,
    binary_math,
    comparison,
    complex_numbers,
    conversions,
    fill,
    indexing,
    joining,
    linalg_householder,  # geqrf, orgqr, ormqr (issue 16, the missing linear algebra)
    matmul,
    products,
    rearranging,
    reductions,
    scattering,
    selection,
    softmax,
    sorting,
    special,
    unary,
    view_copies,
    views,
)

# issue 13: sparse arguments never reach a dense op
from .sparse_dispatch import SPARSE_CLASSES, dense_method, sparse_call, sparse_dispatch_methods

__all__ = ["METHODS", "in_place", "on_first_use", "resolved_methods", "bind_through"]


class _InPlace:
    __slots__ = ("op", "check_arguments")

    def __init__(self, op, check_arguments=None):
        self.op, self.check_arguments = op, check_arguments


class _OnFirstUse:
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def load(self):
        return getattr(importlib.import_module(f"gradiente.ops.{self.module}"), self.name)


def on_first_use(module, name):
    """A table entry for an op that few programs call: ``gradiente.ops.<module>.<name>``, imported when a program
    first looks the method up, so that ``import gradiente`` does not load its module (issue 14). ``in_place`` takes
    it as it takes an op."""
    return _OnFirstUse(module, name)


def _property_on_first_use(module, name, doc):
    """A table entry: a property whose getter is ``gradiente.ops.<module>.<name>``, imported at its first read,
    documented by ``doc``."""
    getter = on_first_use(module, name)

    def get(self):
        return getter.load()(self)
    get.__doc__ = doc
    return property(get)


def in_place(op, check_arguments=None):
    """A table entry: the in-place form of ``op`` (``x.exp_()`` for ``exp``), bound under its row's names;
    ``check_arguments`` refuses bad arguments first, in the method's words (``make_inplace``)."""
    return _InPlace(op, check_arguments)


def _numpy_operand_to_numpy(op, ufunc, name):
    """``x + array`` and its kin: PyTorch leaves a NumPy operand to NumPy, which reads ``x`` through ``numpy()``
    (refused while x requires grad), computes with NumPy's dtype promotion (``float32 * float64 array`` is
    float64), and hands the result back as a tensor. Any other operand goes to ``op``."""
    def method(self, other):
        if isinstance(other, np.ndarray):
            return Tensor._make(np.asarray(ufunc(self.numpy(), other)))
        if other.__class__ in SPARSE_CLASSES:
            return sparse_call(op, name, (self, other), {})
        return op(self, other)
    method.__name__ = method.__qualname__ = name
    # The operators every training step runs check their operand for a sparse tensor here, in the frame they have
    # anyway, rather than behind ``guard``'s wrapper (a frame that cost a twentieth of a small op)
    method.checks_sparse_itself = True
    return method


#: (what to bind, its method names); ``in_place(op)`` rows bind the in-place mechanism around ``op``
METHODS = (
    # core/backward.py
    (backward.tensor_backward, "backward"),
    # core/creation.py
    (staticmethod(creation.tensor_new), "__new__"),
    (creation.new, "new"),
    (creation.new_tensor, "new_tensor"),
    (creation.new_zeros, "new_zeros"),
    (creation.new_ones, "new_ones"),
    (creation.new_full, "new_full"),
    (creation.new_empty, "new_empty"),
    # core/storage.py
    (storage.resize_, "resize_"),
    (storage.resize_as_, "resize_as_"),
    (storage.set_, "set_"),
    (storage.storage, "storage"),
    (storage.untyped_storage, "untyped_storage"),
    # core/printing.py
    (printing.tensor_repr, "__repr__"),
    # core/random.py
    (random.bernoulli, "bernoulli"),
    (random.bernoulli_, "bernoulli_"),
    (random.cauchy_, "cauchy_"),
    (random.exponential_, "exponential_"),
    (random.geometric_, "geometric_"),
    (random.log_normal_, "log_normal_"),
    (random.multinomial, "multinomial"),
    (random.normal_, "normal_"),
    (random.random_, "random_"),
    (random.uniform_, "uniform_"),
    # ops/conversions.py
    (conversions.to, "to"),
    (conversions.tensor_type, "type"),
    (conversions.type_as, "type_as"),
    (conversions.to_float, "float"),
    (conversions.to_double, "double"),
    (conversions.to_half, "half"),
    (conversions.to_bfloat16, "bfloat16"),
    (conversions.to_long, "long"),
    (conversions.to_int, "int"),
    (conversions.to_short, "short"),
    (conversions.to_char, "char"),
    (conversions.to_byte, "byte"),
    (conversions.to_bool, "bool"),
    # ops/arithmetic.py
    (arithmetic.add, "add", "__radd__"),
    (_numpy_operand_to_numpy(arithmetic.add, np.add, "__add__"), "__add__"),
    (arithmetic.add_, "add_", "__iadd__"),
    (arithmetic.div, "div", "divide", "true_divide"),
    (_numpy_operand_to_numpy(arithmetic.div, np.true_divide, "__truediv__"), "__truediv__"),
    (arithmetic.div_, "div_", "__itruediv__"),
    (in_place(arithmetic.div), "divide_", "true_divide_"),
    (arithmetic.float_power, "float_power"),
    (arithmetic.float_power_, "float_power_"),
    (arithmetic.floor_divide, "floor_divide", "__floordiv__"),
    (in_place(arithmetic.floor_divide), "floor_divide_", "__ifloordiv__"),
    (arithmetic.fmod, "fmod"),
    (in_place(arithmetic.fmod), "fmod_"),
    (arithmetic.mul, "mul", "multiply", "__rmul__"),
    (_numpy_operand_to_numpy(arithmetic.mul, np.multiply, "__mul__"), "__mul__"),
    (arithmetic.mul_, "mul_", "__imul__"),
    (in_place(arithmetic.mul), "multiply_"),
    (arithmetic.neg, "neg", "negative", "__neg__"),
    (in_place(arithmetic.neg), "neg_", "negative_"),
    (arithmetic.positive, "positive", "__pos__"),
    (arithmetic.pow, "pow", "__pow__"),
    (in_place(arithmetic.pow), "pow_", "__ipow__"),
    (arithmetic.reciprocal, "reciprocal"),
    (in_place(arithmetic.reciprocal), "reciprocal_"),
    (arithmetic.remainder, "remainder", "__mod__"),
    (in_place(arithmetic.remainder), "remainder_", "__imod__"),
    (arithmetic._rfloordiv, "__rfloordiv__"),
    (arithmetic._rmod, "__rmod__"),
    (arithmetic._pow_scalar_base, "__rpow__"),
    (arithmetic.rsub, "__rsub__"),
    (arithmetic._rtruediv, "__rtruediv__"),
    (arithmetic.square, "square"),
    (in_place(arithmetic.square), "square_"),
    (arithmetic.sub, "sub", "subtract"),
    (_numpy_operand_to_numpy(arithmetic.sub, np.subtract, "__sub__"), "__sub__"),
    (arithmetic.sub_, "sub_", "__isub__"),
    (in_place(arithmetic.sub), "subtract_"),
    (arithmetic.addcdiv, "addcdiv"),
    (in_place(arithmetic.addcdiv, arithmetic.addc_method_arguments("addcdiv_")), "addcdiv_"),
    (arithmetic.addcmul, "addcmul"),
    (in_place(arithmetic.addcmul, arithmetic.addc_method_arguments("addcmul_")), "addcmul_"),
    # ops/unary.py
    (unary.abs, "abs", "absolute", "__abs__"),
    (in_place(unary.abs), "abs_", "absolute_"),
    (unary.acos, "acos", "arccos"),
    (in_place(unary.acos), "acos_", "arccos_"),
    (unary.acosh, "acosh", "arccosh"),
    (in_place(unary.acosh), "acosh_", "arccosh_"),
    (unary.asin, "arcsin", "asin"),
    (unary.asinh, "arcsinh", "asinh"),
    (unary.atan, "arctan", "atan"),
    (unary.atanh, "arctanh", "atanh"),
    (in_place(unary.asin), "asin_", "arcsin_"),
    (in_place(unary.asinh), "asinh_", "arcsinh_"),
    (in_place(unary.atan), "atan_", "arctan_"),
    (in_place(unary.atanh), "atanh_", "arctanh_"),
    (unary.ceil, "ceil"),
    (in_place(unary.ceil), "ceil_"),
    (unary.cos, "cos"),
    (in_place(unary.cos), "cos_"),
    (unary.cosh, "cosh"),
    (in_place(unary.cosh), "cosh_"),
    (unary.erf, "erf"),
    (in_place(unary.erf), "erf_"),
    (unary.exp, "exp"),
    (in_place(unary.exp), "exp_"),
    (unary.exp2, "exp2"),
    (in_place(unary.exp2), "exp2_"),
    (unary.expm1, "expm1"),
    (in_place(unary.expm1), "expm1_"),
    (unary.trunc, "fix", "trunc"),
    (in_place(unary.trunc), "fix_", "trunc_"),
    (unary.floor, "floor"),
    (in_place(unary.floor), "floor_"),
    (unary.frac, "frac"),
    (in_place(unary.frac), "frac_"),
    (unary.log, "log"),
    (in_place(unary.log), "log_"),
    (unary.log10, "log10"),
    (in_place(unary.log10), "log10_"),
    (unary.log1p, "log1p"),
    (in_place(unary.log1p), "log1p_"),
    (unary.log2, "log2"),
    (in_place(unary.log2), "log2_"),
    (unary.logit, "logit"),
    (in_place(unary.logit), "logit_"),
    (unary.relu, "relu"),
    (in_place(unary.relu), "relu_"),
    (unary._round, "round"),
    (in_place(unary._round), "round_"),
    (unary.rsqrt, "rsqrt"),
    (in_place(unary.rsqrt), "rsqrt_"),
    (unary.sgn, "sgn"),
    (in_place(unary.sgn), "sgn_"),
    (unary.sigmoid, "sigmoid"),
    (in_place(unary.sigmoid), "sigmoid_"),
    (unary.sign, "sign"),
    (in_place(unary.sign), "sign_"),
    (unary.sin, "sin"),
    (in_place(unary.sin), "sin_"),
    (unary.sinh, "sinh"),
    (in_place(unary.sinh), "sinh_"),
    (unary.sqrt, "sqrt"),
    (in_place(unary.sqrt), "sqrt_"),
    (unary.tan, "tan"),
    (in_place(unary.tan), "tan_"),
    (unary.tanh, "tanh"),
    (in_place(unary.tanh), "tanh_"),
    (unary.deg2rad, "deg2rad"),
    (in_place(unary.deg2rad), "deg2rad_"),
    (unary.digamma, "digamma"),
    (in_place(unary.digamma), "digamma_"),
    (unary.erfc, "erfc"),
    (in_place(unary.erfc), "erfc_"),
    (unary.erfinv, "erfinv"),
    (in_place(unary.erfinv), "erfinv_"),
    (unary.frexp, "frexp"),
    (unary.i0, "i0"),
    (in_place(unary.i0), "i0_"),
    (unary.lgamma, "lgamma"),
    (in_place(unary.lgamma), "lgamma_"),
    (unary.nan_to_num, "nan_to_num"),
    (in_place(unary.nan_to_num), "nan_to_num_"),
    (unary._polygamma_method, "polygamma"),
    (in_place(unary._polygamma_of_self), "polygamma_"),
    (unary.rad2deg, "rad2deg"),
    (in_place(unary.rad2deg), "rad2deg_"),
    (unary.sinc, "sinc"),
    (in_place(unary.sinc), "sinc_"),
    # ops/binary_math.py
    (binary_math.copysign, "copysign"),
    (in_place(binary_math.copysign), "copysign_"),
    (binary_math.gcd, "gcd"),
    (in_place(binary_math.gcd), "gcd_"),
    (binary_math.heaviside, "heaviside"),
    (in_place(binary_math.heaviside), "heaviside_"),
    (binary_math.lcm, "lcm"),
    (in_place(binary_math.lcm), "lcm_"),
    (binary_math.ldexp, "ldexp"),
    (in_place(binary_math.ldexp), "ldexp_"),
    (binary_math.logaddexp, "logaddexp"),
    (binary_math.logaddexp2, "logaddexp2"),
    (binary_math.nextafter, "nextafter"),
    (in_place(binary_math.nextafter), "nextafter_"),
    (binary_math.atan2, "arctan2", "atan2"),
    (in_place(binary_math.atan2), "arctan2_", "atan2_"),
    (binary_math.hypot, "hypot"),
    (in_place(binary_math.hypot), "hypot_"),
    (binary_math.lerp, "lerp"),
    (in_place(binary_math.lerp, binary_math.check_lerp_method_arguments), "lerp_"),
    (binary_math.xlogy, "xlogy"),
    (in_place(binary_math.xlogy), "xlogy_"),
    # ops/special.py
    (special.mvlgamma, "mvlgamma"),
    (in_place(special.mvlgamma), "mvlgamma_"),
    (special.igamma, "igamma"),
    (in_place(special.igamma), "igamma_"),
    (special.igammac, "igammac"),
    (in_place(special.igammac), "igammac_"),
    # ops/selection.py
    (selection.clamp, "clamp", "clip"),
    (in_place(selection.clamp), "clamp_", "clip_"),
    (selection.clamp_max, "clamp_max"),
    (in_place(selection.clamp_max), "clamp_max_"),
    (selection.clamp_min, "clamp_min"),
    (in_place(selection.clamp_min), "clamp_min_"),
    (selection.fmax, "fmax"),
    (selection.fmin, "fmin"),
    (selection.maximum, "maximum"),
    (selection.minimum, "minimum"),
    (selection._where_method, "where"),
    # ops/comparison.py
    (comparison.allclose, "allclose"),
    (comparison.bitwise_and, "bitwise_and", "__and__"),
    (in_place(comparison.bitwise_and), "bitwise_and_", "__iand__"),
    (comparison.bitwise_left_shift, "bitwise_left_shift", "__lshift__"),
    (in_place(comparison.bitwise_left_shift), "bitwise_left_shift_", "__ilshift__"),
    (comparison.bitwise_not, "bitwise_not"),
    (in_place(comparison.bitwise_not), "bitwise_not_"),
    (comparison.bitwise_or, "bitwise_or", "__or__"),
    (in_place(comparison.bitwise_or), "bitwise_or_", "__ior__"),
    (comparison.bitwise_right_shift, "bitwise_right_shift", "__rshift__"),
    (in_place(comparison.bitwise_right_shift), "bitwise_right_shift_", "__irshift__"),
    (comparison.bitwise_xor, "bitwise_xor", "__xor__"),
    (in_place(comparison.bitwise_xor), "bitwise_xor_", "__ixor__"),
    (comparison.eq, "eq", "__eq__"),
    (in_place(comparison.comparison_into_input(comparison.eq, "Eq")), "eq_"),
    (comparison.equal, "equal"),
    (comparison.ge, "ge", "greater_equal", "__ge__"),
    (in_place(comparison.comparison_into_input(comparison.ge, "Ge")), "ge_", "greater_equal_"),
    (comparison.gt, "greater", "gt", "__gt__"),
    (in_place(comparison.comparison_into_input(comparison.gt, "Gt")), "greater_", "gt_"),
    (comparison.invert, "__invert__"),
    (comparison.isclose, "isclose"),
    (comparison.isfinite, "isfinite"),
    (comparison.isinf, "isinf"),
    (comparison.isnan, "isnan"),
    (comparison.isneginf, "isneginf"),
    (comparison.isposinf, "isposinf"),
    (comparison.isreal, "isreal"),
    (comparison.le, "le", "less_equal", "__le__"),
    (in_place(comparison.comparison_into_input(comparison.le, "Le")), "le_", "less_equal_"),
    (comparison.lt, "less", "lt", "__lt__"),
    (in_place(comparison.comparison_into_input(comparison.lt, "Lt")), "less_", "lt_"),
    (comparison.logical_and, "logical_and"),
    (in_place(comparison.logical_and), "logical_and_"),
    (comparison.logical_not, "logical_not"),
    (in_place(comparison.logical_not), "logical_not_"),
    (comparison.logical_or, "logical_or"),
    (in_place(comparison.logical_or), "logical_or_"),
    (comparison.logical_xor, "logical_xor"),
    (in_place(comparison.logical_xor), "logical_xor_"),
    (comparison.ne, "ne", "not_equal", "__ne__"),
    (in_place(comparison.comparison_into_input(comparison.ne, "Ne")), "ne_", "not_equal_"),
    (comparison.reflected_bitwise(comparison.bitwise_and), "__rand__"),
    (comparison.reflected_shift(comparison.bitwise_left_shift), "__rlshift__"),
    (comparison.reflected_bitwise(comparison.bitwise_or), "__ror__"),
    (comparison.reflected_shift(comparison.bitwise_right_shift), "__rrshift__"),
    (comparison.reflected_bitwise(comparison.bitwise_xor), "__rxor__"),
    (comparison.signbit, "signbit"),
    # ops/complex_numbers.py
    (complex_numbers.angle, "angle"),
    (complex_numbers.conj, "conj"),
    (complex_numbers.conj_physical, "conj_physical"),
    (complex_numbers.conj_physical_, "conj_physical_"),
    (property(complex_numbers.imag, complex_numbers._set_imag), "imag"),
    (complex_numbers.is_conj, "is_conj"),
    (complex_numbers.is_neg, "is_neg"),
    (property(complex_numbers.real, complex_numbers._set_real), "real"),
    (complex_numbers.resolve_conj, "resolve_conj"),
    (complex_numbers.resolve_neg, "resolve_neg"),
    (complex_numbers._neg_view, "_neg_view"),
    # ops/fill.py
    (fill.copy_, "copy_"),
    (fill.fill_, "fill_"),
    (fill.zero_, "zero_"),
    # ops/reductions.py
    (reductions.all, "all"),
    (reductions.amax, "amax"),
    (reductions.amin, "amin"),
    (reductions.any, "any"),
    (reductions.argmax, "argmax"),
    (reductions.argmin, "argmin"),
    (reductions.count_nonzero, "count_nonzero"),
    (reductions.cumprod, "cumprod"),
    (reductions.cumsum, "cumsum"),
    (reductions.logsumexp, "logsumexp"),
    (reductions.max, "max"),
    (reductions.mean, "mean"),
    (reductions.median, "median"),
    (reductions.min, "min"),
    (reductions.norm, "norm"),
    (reductions.prod, "prod"),
    (reductions.std, "std"),
    (reductions.sum, "sum"),
    (reductions.sum_to_size, "sum_to_size"),
    (reductions.var, "var"),
    (reductions.aminmax, "aminmax"),
    (reductions.nanmedian, "nanmedian"),
    (reductions.renorm, "renorm"),
    (in_place(reductions.renorm), "renorm_"),
    (reductions.logcumsumexp, "logcumsumexp"),
    (reductions.nanmean, "nanmean"),
    (reductions.nansum, "nansum"),
    # ops/statistics.py
    (on_first_use("statistics", "bincount"), "bincount"),
    (on_first_use("statistics", "corrcoef"), "corrcoef"),
    (on_first_use("statistics", "cov"), "cov"),
    (on_first_use("statistics", "histogram"), "histogram"),
    (on_first_use("statistics", "histc"), "histc"),
    # ops/softmax.py
    (softmax.log_softmax, "log_softmax"),
    (softmax.softmax, "softmax"),
    # ops/sorting.py
    (sorting.nanquantile, "nanquantile"),
    (sorting.quantile, "quantile"),
    (sorting.argsort, "argsort"),
    (sorting.cummax, "cummax"),
    (sorting.cummin, "cummin"),
    (sorting.kthvalue, "kthvalue"),
    (sorting.mode, "mode"),
    (sorting.msort, "msort"),
    (sorting.sort, "sort"),
    (sorting.topk, "topk"),
    (sorting.unique, "unique"),
    (sorting.unique_consecutive, "unique_consecutive"),
    # ops/views.py
    (views.ravel, "ravel"),
    (views.as_strided, "as_strided"),
    (views.unfold, "unfold"),
    (views.as_strided_, "as_strided_"),
    (views.squeeze_, "squeeze_"),
    (views.t_, "t_"),
    (views.transpose_, "transpose_", "swapdims_", "swapaxes_"),
    (views.unsqueeze_, "unsqueeze_"),
    (property(views._H), "H"),
    (property(views._T), "T"),
    (views.broadcast_to, "broadcast_to"),
    (views.clone, "clone"),
    (views.contiguous, "contiguous"),
    (views.diagonal, "diagonal"),
    (views.expand, "expand"),
    (views.expand_as, "expand_as"),
    (views.flatten, "flatten"),
    (property(views._mH), "mH"),
    (property(views._mT), "mT"),
    (views.movedim, "moveaxis", "movedim"),
    (views.narrow, "narrow"),
    (views.permute, "permute"),
    (views.reshape, "reshape"),
    (views.reshape_as, "reshape_as"),
    (views.select, "select"),
    (views.squeeze, "squeeze"),
    (views.transpose, "swapaxes", "swapdims", "transpose"),
    (views.unflatten, "unflatten"),
    (views.unsqueeze, "unsqueeze"),
    (views.view, "view"),
    (views.view_as, "view_as"),
    # ops/joining.py
    (joining.chunk, "chunk"),
    (joining.split, "split"),
    (joining.split_with_sizes, "split_with_sizes"),
    (joining.unsafe_chunk, "unsafe_chunk"),
    (joining.unsafe_split, "unsafe_split"),
    (joining.unsafe_split_with_sizes, "unsafe_split_with_sizes"),
    (joining.iterate, "__iter__"),
    (joining.unbind, "unbind"),
    (joining.dsplit, "dsplit"),
    (joining.hsplit, "hsplit"),
    (joining.tensor_split, "tensor_split"),
    (joining.vsplit, "vsplit"),
    # ops/rearranging.py
    (rearranging.diag, "diag"),
    (rearranging.flip, "flip"),
    (rearranging.fliplr, "fliplr"),
    (rearranging.flipud, "flipud"),
    (rearranging.repeat, "repeat"),
    (rearranging.repeat_interleave, "repeat_interleave"),
    (rearranging.roll, "roll"),
    (rearranging.tile, "tile"),
    (rearranging.tril, "tril"),
    (in_place(rearranging.tril), "tril_"),
    (rearranging.triu, "triu"),
    (in_place(rearranging.triu), "triu_"),
    (rearranging.diff, "diff"),
    (rearranging.rot90, "rot90"),
    # ops/indexing.py
    (indexing.take, "take"),
    (indexing.argwhere, "argwhere"),
    (indexing.gather, "gather"),
    (indexing.getitem, "__getitem__"),
    (indexing.index_select, "index_select"),
    (indexing.masked_fill, "masked_fill"),
    (in_place(indexing.masked_fill), "masked_fill_"),
    (indexing.masked_select, "masked_select"),
    (indexing.nonzero, "nonzero"),
    (indexing.scatter, "scatter"),
    (indexing.in_place_without_overlap(indexing.scatter, "scatter_"), "scatter_"),
    (indexing.scatter_add, "scatter_add"),
    (indexing.in_place_without_overlap(indexing.scatter_add, "scatter_add_"), "scatter_add_"),
    (indexing.setitem, "__setitem__"),
    (indexing.take_along_dim, "take_along_dim"),
    # ops/scattering.py
    (scattering.index_add, "index_add"),
    (indexing.in_place_without_overlap(scattering.index_add, "index_add_"), "index_add_"),
    (scattering.index_copy, "index_copy"),
    (indexing.in_place_without_overlap(scattering.index_copy, "index_copy_"), "index_copy_"),
    (scattering.index_fill, "index_fill"),
    (in_place(scattering.index_fill), "index_fill_"),
    (scattering.masked_scatter, "masked_scatter"),
    (scattering.masked_scatter_, "masked_scatter_"),
    (scattering.scatter_reduce, "scatter_reduce"),
    (indexing.in_place_without_overlap(scattering.scatter_reduce, "scatter_reduce_"), "scatter_reduce_"),
    (scattering.as_strided_scatter, "as_strided_scatter"),
    (scattering.diagonal_scatter, "diagonal_scatter"),
    (scattering.index_put, "index_put"),
    (scattering.index_put_, "index_put_"),
    (scattering.index_reduce, "index_reduce"),
    (indexing.in_place_without_overlap(scattering.index_reduce, "index_reduce_"), "index_reduce_"),
    (scattering.put, "put"),
    (indexing.in_place_without_overlap(scattering.put, "put_"), "put_"),
    (scattering.select_scatter, "select_scatter"),
    (scattering.slice_scatter, "slice_scatter"),
    # ops/matmul.py
    (matmul.addbmm, "addbmm"),
    (in_place(matmul.addbmm), "addbmm_"),
    (matmul.addmm, "addmm"),
    (matmul.baddbmm, "baddbmm"),
    (matmul.bmm, "bmm"),
    (matmul.dot, "dot"),
    (matmul.outer, "ger", "outer"),
    (matmul.matmul, "matmul", "__matmul__"),
    (matmul.mm, "mm"),
    (matmul.mv, "mv"),
    (matmul._rmatmul, "__rmatmul__"),
    (matmul.t, "t"),
    (matmul.trace, "trace"),
    # ops/products.py
    (products.addmv, "addmv"),
    (products.addr, "addr"),
    (products.cross, "cross"),
    (products.det, "det"),
    (products.diag_embed, "diag_embed"),
    (products.dist, "dist"),
    (products.inner, "inner"),
    (products.inverse, "inverse"),
    (products.kron, "kron"),
    (products.logdet, "logdet"),
    (products.matrix_power, "matrix_power"),
    (products.pinverse, "pinverse"),
    (products.slogdet, "slogdet"),
    (products.vdot, "vdot"),
    # _config.py
    (_config.is_nonzero, "is_nonzero"),
    (_config.is_same_size, "is_same_size"),
    (_config.is_signed, "is_signed"),
    # --- in-place forms of products and scans, linear algebra's older names, memory questions ------------------
    (in_place(reductions.cumsum), "cumsum_"),
    (in_place(reductions.cumprod), "cumprod_"),
    (in_place(matmul.addmm), "addmm_"),
    (in_place(matmul.baddbmm), "baddbmm_"),
    (in_place(products.addmv), "addmv_"),
    (in_place(products.addr), "addr_"),
    (views.adjoint, "adjoint"),
    (products.diagflat, "diagflat"),
    (indexing.nonzero_static, "nonzero_static"),
    (view_copies.narrow_copy, "narrow_copy"),
    (functional_aliases.hardshrink, "hardshrink"),
    (functional_aliases.prelu, "prelu"),
    (on_first_use("legacy_linalg", "qr"), "qr"),
    (on_first_use("legacy_linalg", "svd"), "svd"),
    (on_first_use("legacy_linalg", "cholesky"), "cholesky"),
    (on_first_use("legacy_linalg", "cholesky_inverse"), "cholesky_inverse"),
    (on_first_use("legacy_linalg", "cholesky_solve"), "cholesky_solve"),
    (on_first_use("legacy_linalg", "lu"), "lu"),
    (on_first_use("legacy_linalg", "lu_solve"), "lu_solve"),
    (on_first_use("legacy_linalg", "matrix_exp"), "matrix_exp"),
    (on_first_use("legacy_linalg", "triangular_solve"), "triangular_solve"),
    (on_first_use("legacy_linalg", "lstsq"), "lstsq"),
    (on_first_use("legacy_linalg", "solve"), "solve"),
    (on_first_use("legacy_linalg", "symeig"), "symeig"),
    (on_first_use("legacy_linalg", "eig"), "eig"),
    (tensor_extras.cdouble, "cdouble"),
    (tensor_extras.cfloat, "cfloat"),
    (tensor_extras.dim_order, "dim_order"),
    (tensor_extras.is_set_to, "is_set_to"),
    (tensor_extras.apply_, "apply_"),
    (tensor_extras.map_, "map_"),
    (tensor_extras.map2_, "map2_"),
    (tensor_extras.module_load, "module_load"),
    (tensor_extras.new_empty_strided, "new_empty_strided"),
    (tensor_extras.is_distributed, "is_distributed"),
    (tensor_extras.const_data_ptr, "const_data_ptr"),
    (tensor_extras.reinforce, "reinforce"),
    (property(tensor_extras.volatile), "volatile"),
    (property(tensor_extras.is_nested), "is_nested"),
    # --- the remaining small names (issue 16) ---------------------------------------------------------------
    (tensor_extras.as_subclass, "as_subclass"),
    (property(tensor_extras.name), "name"),
    (property(get_grad_dtype, set_grad_dtype), "grad_dtype"),
    (storage.is_shared, "is_shared"),
    (storage.share_memory_, "share_memory_"),
    (storage.storage_type, "storage_type"),
    (tensor_extras.resize, "resize"),
    (tensor_extras.resize_as, "resize_as"),
    (on_first_use("diagonal_fill", "fill_diagonal_"), "fill_diagonal_"),
    (on_first_use("slice_inverse", "slice_inverse"), "slice_inverse"),
    (on_first_use("hashing", "hash_tensor"), "hash_tensor"),
    (on_first_use("sparse_products", "smm"), "smm"),
    (on_first_use("sparse_products", "sspaddmm"), "sspaddmm"),
    # --- sparse COO tensors (issue 16, ops/sparse_coo.py): on every tensor, refusing or passing a dense one
    (on_first_use("sparse_coo", "to_dense"), "to_dense"),
    (on_first_use("sparse_compressed", "to_sparse"), "to_sparse"),       # COO, or layout=... (ops/sparse_compressed.py)
    (on_first_use("sparse_coo", "coalesce"), "coalesce"),
    (on_first_use("sparse_coo", "is_coalesced"), "is_coalesced"),
    (on_first_use("sparse_coo", "indices"), "indices"),
    (on_first_use("sparse_coo", "values"), "values"),
    (on_first_use("sparse_coo", "_indices"), "_indices"),
    (on_first_use("sparse_coo", "_values"), "_values"),
    (on_first_use("sparse_coo", "_nnz"), "_nnz"),
    (on_first_use("sparse_coo", "sparse_dim"), "sparse_dim"),
    (on_first_use("sparse_coo", "dense_dim"), "dense_dim"),
    (on_first_use("sparse_coo", "sparse_mask"), "sparse_mask"),
    (on_first_use("sparse_coo", "sparse_resize_"), "sparse_resize_"),
    (on_first_use("sparse_coo", "sparse_resize_and_clear_"), "sparse_resize_and_clear_"),
    (on_first_use("sparse_coo", "resize_as_sparse_"), "resize_as_sparse_"),
    # --- end of sparse COO rows
    # --- compressed sparse tensors (issue 16, ops/sparse_compressed.py): on every tensor, refusing a dense one
    (on_first_use("sparse_compressed", "to_sparse_coo"), "to_sparse_coo"),
    (on_first_use("sparse_compressed", "to_sparse_csr"), "to_sparse_csr"),
    (on_first_use("sparse_compressed", "to_sparse_csc"), "to_sparse_csc"),
    (on_first_use("sparse_compressed", "to_sparse_bsr"), "to_sparse_bsr"),
    (on_first_use("sparse_compressed", "to_sparse_bsc"), "to_sparse_bsc"),
    (on_first_use("sparse_compressed", "crow_indices"), "crow_indices"),
    (on_first_use("sparse_compressed", "col_indices"), "col_indices"),
    (on_first_use("sparse_compressed", "ccol_indices"), "ccol_indices"),
    (on_first_use("sparse_compressed", "row_indices"), "row_indices"),
    (_property_on_first_use("sparse_compressed", "is_sparse_csr", "Whether the tensor is a sparse CSR tensor "
                            "(``layout == torch.sparse_csr``)."), "is_sparse_csr"),
    # --- end of compressed sparse rows
    # --- the short-time Fourier transform (issue 16, signal; ops/spectral.py)
    (on_first_use("spectral", "stft"), "stft"),
    (on_first_use("spectral", "istft"), "istft"),
    # --- end of the short-time Fourier transform rows
    # --- LAPACK's Householder form (issue 16, ops/linalg_householder.py)
    (linalg_householder.geqrf, "geqrf"),
    (linalg_householder.orgqr, "orgqr"),
    (linalg_householder.ormqr, "ormqr"),
)

#: the conversions both sparse classes take from COO's module (dtype and device changes keep the layout)
_SPARSE_CONVERSIONS = (
    (on_first_use("sparse_coo", "to"), "to"),
    (on_first_use("sparse_coo", "double"), "double"),
    (on_first_use("sparse_coo", "float_"), "float"),
)

#: (sparse op, method names) bound on SparseCooTensor only, over the dense forms: the few arithmetic methods a
#: sparse tensor has (issue 16; every other public method refuses it, core/sparse_tensor.py)
SPARSE_METHODS = (
    (on_first_use("sparse_coo", "sparse_dense_mm"), "mm", "matmul", "__matmul__"),
    (on_first_use("sparse_coo", "sum_of_sparse"), "sum"),
    (on_first_use("sparse_coo", "t"), "t"),
    (on_first_use("sparse_coo", "transpose"), "transpose"),
    *_SPARSE_CONVERSIONS,
    (on_first_use("sparse_coo", "permute"), "permute"),     # the shape ops PyTorch has for COO (s5-sparseops)
    (on_first_use("sparse_coo", "movedim"), "movedim", "moveaxis"),
    (on_first_use("sparse_coo", "transpose"), "swapaxes", "swapdims"),
    (on_first_use("sparse_coo", "unsqueeze"), "unsqueeze"),
    (on_first_use("sparse_coo", "index_select"), "index_select"),
    (on_first_use("sparse_coo", "select"), "select"),
    (on_first_use("sparse_coo", "unbind"), "unbind"),
    (on_first_use("sparse_coo", "getitem"), "__getitem__"),
)

#: (compressed op, method names) bound on SparseCompressedTensor only, over the dense and COO forms (issue 16; every
#: other public method refuses a compressed tensor, core/sparse_compressed.py)
COMPRESSED_METHODS = (
    (on_first_use("sparse_compressed", "to_dense"), "to_dense"),
    (on_first_use("sparse_compressed", "values"), "values"),
    (on_first_use("sparse_compressed", "_nnz"), "_nnz"),
    (on_first_use("sparse_compressed", "sparse_dim"), "sparse_dim"),
    (on_first_use("sparse_compressed", "dense_dim"), "dense_dim"),
    (on_first_use("sparse_compressed", "mm"), "mm", "matmul", "__matmul__"),
    (on_first_use("sparse_compressed", "sum"), "sum"),
    (on_first_use("sparse_compressed", "t"), "t"),
    (on_first_use("sparse_compressed", "transpose"), "transpose"),
    *_SPARSE_CONVERSIONS,
)


def _loaded(what):
    """A table entry with its op loaded, if it is loaded on first use."""
    if isinstance(what, _OnFirstUse):
        return what.load()
    if isinstance(what, _InPlace) and isinstance(what.op, _OnFirstUse):
        return _InPlace(what.op.load(), what.check_arguments)
    return what


def resolved_methods():
    """``METHODS`` with every op loaded (for the transforms and the profiler, which read the whole table)."""
    return tuple((_loaded(what), *names) for what, *names in METHODS)


def _method(what, names):
    """What the table binds for a row's names: the in-place form made, NumPy's argument names accepted."""
    if isinstance(what, _InPlace):
        what = make_inplace(what.op, names[0], what.check_arguments)
    return {name: accept_numpy_names(what, name) if callable(what) else what for name in names}


class _BoundOnFirstUse:
    """Stands in the class for the methods of a table row until a program first looks one of them up: the lookup
    makes the row's methods as ``_method`` and the sparse check make them (loading the op's module first if it
    loads on first use), binds each in place of its stand-in, and goes on as if they had been there all along.

    Why: making the wrappers of the whole table at import (NumPy's argument names, the sparse check) cost an eighth
    of ``import gradiente``, measured (issue 14), and a program looks up a few dozen of its five hundred rows. After
    the first lookup a method is an ordinary function of the class: calls pay nothing for this."""

    __slots__ = ("row", "name", "cls")

    def __init__(self, row, name, cls=Tensor):
        self.row, self.name, self.cls = row, name, cls

    def __get__(self, instance, owner=None):
        what, names = self.row
        cls = self.cls
        if cls is Tensor:
            made = _method(_loaded(what), names)
            methods = {name: dense_method(Tensor, name, method) for name, method in made.items()}
        else:                   # a sparse class's own op, bound as it is
            methods = dict.fromkeys(names, _loaded(what))
        for name, method in methods.items():
            standing = cls.__dict__.get(name)
            # (a name rebound meanwhile, by vmap or the profiler, keeps what it was rebound to)
            if standing.__class__ is _BoundOnFirstUse and standing.row is self.row:
                setattr(cls, name, method)
        return _bound(methods[self.name], instance, owner)


def _bound(value, instance, owner):
    """``value`` looked up through ``instance`` as a class attribute is (a function becomes a bound method)."""
    get = getattr(type(value), "__get__", None)
    return value if get is None else get(value, instance, owner)


def _binds_on_first_use(what):
    """Whether a row's methods can wait for their first lookup: functions and in-place forms can; a property or a
    static ``__new__`` is bound as it stands (nothing is made for it, and a stand-in would not be a data descriptor)."""
    return not isinstance(what, (property, staticmethod))


def _bind():
    for row in METHODS:
        what, *names = row
        if _binds_on_first_use(what):
            row = (what, names)
            for name in names:
                setattr(Tensor, name, _BoundOnFirstUse(row, name))
        else:
            for name in names:
                setattr(Tensor, name, what)
    for cls, table in ((SparseCooTensor, SPARSE_METHODS), (SparseCompressedTensor, COMPRESSED_METHODS)):
        for what, *names in table:
            row = (what, names)
            for name in names:
                setattr(cls, name, _BoundOnFirstUse(row, name, cls))
    # issue 13: dense methods check their other arguments for a sparse tensor; the sparse classes get PyTorch's
    # sparse methods (gradiente/sparse_dispatch.py)
    table_names = [name for _, *names in METHODS for name in names]
    classes = {SparseCooTensor: "coo", SparseCompressedTensor: "compressed"}
    for cls, methods in sparse_dispatch_methods(Tensor, table_names, classes).items():
        for name, method in methods.items():
            setattr(cls, name, method)
        if cls is not Tensor:
            cls._sparse_allowed.update(methods)


def rebind(methods):
    """Bind ``methods`` (``{name: function}``) in place of the table's methods of those names; returns the ones
    replaced, for binding back (vmap's dispatching methods, while it runs)."""
    replaced = {name: Tensor.__dict__[name] for name in methods}
    for name, method in methods.items():
        setattr(Tensor, name, method)
    return replaced


def bind_through(wrap):
    """Rebind the table's methods through ``wrap(name, method)``, which returns a replacement or None to leave
    the method as it is (the profiler's timing wrappers, while it records). Returns the function that binds
    back the very objects that were bound before."""
    names = [name for _, *names in METHODS for name in names]
    for name in names:
        getattr(Tensor, name)       # (a method loaded on first use, loaded now)
    bound = {name: Tensor.__dict__[name] for name in names}
    for name, method in bound.items():
        replacement = wrap(name, method)
        if replacement is not None:
            setattr(Tensor, name, replacement)

    def restore():
        for name, method in bound.items():
            setattr(Tensor, name, method)
    return restore


_bind()
