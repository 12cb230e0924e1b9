"""``gradiente.testing``, PyTorch's ``torch.testing``: ``assert_close`` (with PyTorch's default tolerances per
dtype and its messages, word for word) and ``make_tensor``.

``assert_close`` compares tensors with tensors, NumPy arrays with arrays, Python numbers, booleans and None, and
sequences and mappings of those, item by item. Values are close when |actual - expected| <= atol + rtol·|expected|
(nan only equals nan with ``equal_nan``; an infinity only itself). A failure raises AssertionError saying how
many elements differ and where the largest differences are, and for a nested input, at which item.
"""
import cmath
import collections.abc
import math
import warnings

import numpy as np

from .core import dtype as dt
from .core.creation import tensor as _tensor
from .core.tensor import Tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

#: default (rtol, atol) per dtype; any other dtype (integers, bool) must match exactly
_TOLERANCES = {
    dt.float16: (1e-3, 1e-5),
    dt.bfloat16: (1.6e-2, 1e-5),
    dt.float32: (1.3e-6, 1e-5),
    dt.float64: (1e-7, 1e-7),
    dt.complex64: (1.3e-6, 1e-5),
    dt.complex128: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: dt.int64, float: dt.float64, complex: dt.complex128}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its message, before the item path is added."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind, self.message, self.located = kind, message, False


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close (see the module docstring).

    Without ``rtol``/``atol`` (give both or neither) the tolerances are PyTorch's for the dtype: float32 1.3e-6
    and 1e-5, float64 1e-7 and 1e-7, float16 1e-3 and 1e-5, exact for integers and bools. ``msg`` replaces the
    message (a string) or rewrites it (a function of the message). ``check_device`` and ``check_layout`` are
    accepted for PyTorch's signature: gradiente has one device and one layout.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_dtype": check_dtype,
               "check_stride": check_stride}
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as failure:
        text = failure.message
        if failure.kind is AssertionError and msg is not None:
            text = msg if isinstance(msg, str) else msg(text)
        raise failure.kind(text) from None


def _compare(actual, expected, path, options):
    """Compare one pair, recursing into sequences and mappings; ``path`` names the item (``[1]['b']``)."""
    try:
        _compare_pair(actual, expected, path, options)
    except _Mismatch as failure:
        if path and not failure.located:        # named once, by the innermost item
            failure.message += f"\n\nThe failure occurred for item {path}"
        failure.located = True
        raise


def _is_number(value):
    return isinstance(value, (int, float, complex, np.number)) and not isinstance(value, (bool, np.bool_))


def _is_sequence(value):
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def _compare_pair(actual, expected, path, options):
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
    elif isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) != bool(expected):
            raise _Mismatch(AssertionError, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}")
    elif _is_number(actual) and _is_number(expected):
        _compare_numbers(_python_number(actual), _python_number(expected), options)
    elif (isinstance(actual, Tensor) and isinstance(expected, Tensor)) or \
            (isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray)):
        _compare_tensors(_as_tensor(actual), _as_tensor(expected), options)
    elif _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]", options)
    elif isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        _compare_mappings(actual, expected, path, options)
    else:
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                                   f"{type(expected)}.")


def _compare_mappings(actual, expected, path, options):
    if set(actual) != set(expected):
        missing = _sorted([k for k in expected if k not in actual])
        extra = _sorted([k for k in actual if k not in expected])
        raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                                        f"{missing}\nAdditional keys in the actual mapping: {extra}")
    for key in _sorted(list(expected)):
        _compare(actual[key], expected[key], f"{path}[{key!r}]", options)


def _sorted(keys):
    try:
        return sorted(keys)
    except TypeError:           # keys of several types: keep their order
        return keys


def _python_number(value):
    return value.item() if isinstance(value, np.generic) else value


def _as_tensor(value):
    return value.detach() if isinstance(value, Tensor) else Tensor._make(np.asarray(value))


def _tolerances(dtypes, rtol, atol):
    """The given tolerances, or the largest defaults among ``dtypes``."""
    if rtol is not None:
        return rtol, atol
    defaults = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in defaults), max(a for _, a in defaults)


# --- numbers ---------------------------------------------------------------------------------------------------

def _compare_numbers(actual, expected, options):
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)]],
                             options["rtol"], options["atol"])
    if _numbers_close(actual, expected, rtol, atol, options["equal_nan"]):
        return
    raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol))


def _numbers_close(a, e, rtol, atol, equal_nan):
    if a == e:
        return True
    cmath_like = isinstance(a, complex) or isinstance(e, complex)
    isnan, isfinite = (cmath.isnan, cmath.isfinite) if cmath_like else (math.isnan, math.isfinite)
    if isnan(a) or isnan(e):
        return equal_nan and isnan(a) and isnan(e)
    # an infinity is close to itself only (inf - -inf is inf, which no tolerance admits)
    return isfinite(a) and isfinite(e) and abs(a - e) <= atol + rtol * abs(e)


def _scalar_message(actual, expected, rtol, atol):
    """PyTorch's message for two numbers (or 0-d tensors) that differ."""
    with np.errstate(divide="ignore", invalid="ignore"):
        abs_diff = abs(actual - expected)
        rel_diff = float(np.float64(abs_diff) / np.float64(abs(expected)))
    exact = rtol == 0 and atol == 0
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {expected} but got {actual}.\n"
            f"Absolute difference: {abs_diff}{_allowed(atol, exact)}\n"
            f"Relative difference: {rel_diff}{_allowed(rtol, exact)}")


def _allowed(tolerance, exact):
    return "" if exact else f" (up to {tolerance} allowed)"


# --- tensors ---------------------------------------------------------------------------------------------------

def _compare_tensors(actual, expected, options):
    if actual.shape != expected.shape:
        raise _Mismatch(AssertionError, f"The values for attribute 'shape' do not match: {actual.shape!r} != "
                                        f"{expected.shape!r}.")
    if actual.dtype is not expected.dtype and options["check_dtype"]:
        raise _Mismatch(AssertionError, f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                                        f"{expected.dtype}.")
    if options["check_stride"] and actual.stride() != expected.stride():
        raise _Mismatch(AssertionError, f"The values for attribute 'stride()' do not match: {actual.stride()} != "
                                        f"{expected.stride()}.")
    rtol, atol = _tolerances([actual.dtype, expected.dtype], options["rtol"], options["atol"])
    common = dt.promote_types(actual.dtype, expected.dtype)._np
    a, e = actual._data.astype(common, copy=False), expected._data.astype(common, copy=False)
    matches = _close(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_message(a.item(), e.item(), rtol, atol))
    raise _Mismatch(AssertionError, _tensor_message(a, e, matches, rtol, atol))


def _close(a, e, rtol, atol, equal_nan):
    """Elementwise |a - e| <= atol + rtol·|e| for finite values; equal values (an infinity and itself) are close."""
    with np.errstate(invalid="ignore", over="ignore"):
        if a.dtype.kind in "biu":
            if rtol == 0 and atol == 0:
                return a == e
            a, e = a.astype(np.float64), e.astype(np.float64)
        close = (a == e) | (np.isfinite(a) & np.isfinite(e) & (np.abs(a - e) <= atol + rtol * np.abs(e)))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


def _tensor_message(a, e, matches, rtol, atol):
    """PyTorch's message for tensors that differ: the count of mismatches, and the greatest absolute and relative
    differences among them with their indices. Integers are compared in int64 (so that a difference cannot
    overflow a small type); their relative difference is a float32, as PyTorch's division gives."""
    shape, total = a.shape, matches.size
    bad = int(total - np.count_nonzero(matches))
    a, e, matches = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if a.dtype.kind in "biu":
            a, e = a.astype(np.int64), e.astype(np.int64)
            abs_diff = np.abs(a - e)
            rel_diff = abs_diff.astype(np.float32) / np.abs(e).astype(np.float32)
        else:
            abs_diff = np.abs(a - e)
            rel_diff = abs_diff / np.abs(e)
    abs_diff[matches] = 0
    rel_diff[matches] = 0
    exact = rtol == 0 and atol == 0
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"]
    for label, diff, tolerance in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        at = int(np.argmax(diff))              # the first nan if any (as torch.max), else the first maximum
        index = tuple(int(i) for i in np.unravel_index(at, shape))
        lines.append(f"Greatest {label} difference: {diff[at].item()} at index {index}{_allowed(tolerance, exact)}")
    return "\n".join(lines)


# --- make_tensor -------------------------------------------------------------------------------------------------

def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with random values for tests: floating (and complex parts) uniform on
    [low, high), by default [-9, 9); integers uniform on [low, high), by default [-9, 10) ([0, 10) for uint8);
    bools either. The bounds are clamped to the dtype's range. ``exclude_zero`` replaces zeros (by 1, or the
    smallest normal float); ``noncontiguous`` gives the same values in a strided tensor. It draws from the global
    generator (``gradiente.manual_seed``)."""
    import gradiente
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    # a strided tensor: values drawn for twice the last dimension, every second one kept
    strided = noncontiguous and math.prod(shape) > 1
    if strided:
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype is dt.bool:
        result = gradiente.randint(0, 2, shape, dtype=dt.int64).to(dt.bool)
    elif dtype.is_floating_point or dtype.is_complex:
        info = dt.finfo_of(dtype._np)
        low, high = _bounds(low, high, -9, 9, info, float(info.min), float(info.max))
        real = dtype.to_real() if dtype.is_complex else dtype
        parts = shape + ((2,) if dtype.is_complex else ())
        values = gradiente.empty(parts, dtype=real).uniform_(low, high)
        # a complex number is its real and imaginary parts side by side in memory, as the last dimension of 2
        result = Tensor._make(values._data.view(dtype._np)[..., 0]) if dtype.is_complex else values
    else:
        info = np.iinfo(dtype._np)
        low, high = _bounds(low, high, 0 if info.min == 0 else -9, 10, info, info.min, info.max + 1)
        result = gradiente.randint(math.ceil(low), math.ceil(high), shape, dtype=dtype)
    if exclude_zero:
        replacement = 1 if dtype is dt.bool or not (dtype.is_floating_point or dtype.is_complex) \
            else float(dt.finfo_of(dtype._np).tiny)
        result = gradiente.where(result == 0, gradiente.full((), replacement, dtype=dtype), result)
    if strided:
        result = result[..., 1::2]
    if requires_grad:
        result.requires_grad_(True)
    return result


def _bounds(low, high, default_low, default_high, info, lowest, highest):
    """``low`` and ``high`` (defaults where None) clamped to [lowest, highest], with PyTorch's checks."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and isinstance(info, np.finfo):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    return max(low, lowest), min(high, highest)


# --- the deprecated alias (issue 16) ---------------------------------------------------------------------------

#: assert_allclose's own defaults, looser than assert_close's; other dtypes must match exactly
_ALLCLOSE_TOLERANCES = {dt.float16: (1e-3, 1e-3), dt.float32: (1e-4, 1e-5), dt.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated form of ``assert_close``, kept because old tests call it: warns FutureWarning with PyTorch's
    text, turns non-tensors into tensors (``expected`` in ``actual``'s dtype), ignores dtype and stride
    differences, treats nan as equal by default and has looser float defaults (float32: rtol 1e-4, atol 1e-5)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        defaults = [_ALLCLOSE_TOLERANCES.get(d, (0.0, 0.0)) for d in (actual.dtype, expected.dtype)]
        rtol, atol = max(r for r, _ in defaults), max(a for _, a in defaults)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
