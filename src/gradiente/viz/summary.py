"""Short, readable text for the numbers in a drawing or a walkthrough.

Small tensors are written in full, one line, four decimals as PyTorch prints them (``[0.6667, 1.3333]``;
integral values as ``[1., 2.]``). Tensors with more than ``max_elems`` elements become a summary:
shape, mean, min and max, so that a 1000×1000 gradient never floods a label or a notebook cell.
"""
import numpy as np

__all__ = ["as_array", "format_shape", "format_values"]


def as_array(value):
    """The NumPy array behind a tensor, a saved value, an array, or a number."""
    data = getattr(value, "_data", None)
    if data is None:
        data = getattr(value, "array", None)
    return np.asarray(data if data is not None else value)


def format_shape(shape):
    """``(3, 4)`` as torchviz writes sizes; a 0-d shape is ``()``."""
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def format_values(value, max_elems=8, precision=4, words=("shape", "mean", "min", "max")):
    """One line of text for ``value``: every element when there are at most ``max_elems``, else a summary
    (``words`` name its parts, for translations)."""
    a = as_array(value)
    if a.dtype == np.bool_:
        a = a.astype(np.int64)
    if a.size > max_elems:
        return _summary(a, precision, words)
    if a.dtype.kind == "c":
        return np.array2string(a, precision=precision, separator=", ").replace("\n", "")
    if a.ndim == 0:
        return _format_number(a.item(), _style(a), precision)
    style = _style(a)
    return _nested(a, lambda v: _format_number(v, style, precision))


def _style(a):
    """Like PyTorch's printer: integers stay integers; a float tensor is all-integral ("2."), fixed
    ("0.3333"), or scientific when its magnitudes are very large or very small."""
    if a.dtype.kind in "iub":
        return "int"
    finite = a[np.isfinite(a)] if a.size else a
    if finite.size == 0:
        return "fixed"
    if np.all(finite == np.round(finite)) and np.max(np.abs(finite)) < 1e8:
        return "integral"
    big = np.max(np.abs(finite))
    nonzero = np.abs(finite[finite != 0])
    small = np.min(nonzero) if nonzero.size else 1.0
    if big >= 1e8 or small < 1e-4 or (small > 0 and big / small > 1e3 and big >= 1e3):
        return "sci"
    return "fixed"


def _format_number(v, style, precision):
    if style == "int":
        return str(int(v))
    v = float(v)
    if not np.isfinite(v):
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    if style == "integral":
        return f"{int(v)}."
    if style == "sci":
        return np.format_float_scientific(v, precision=precision, unique=False, exp_digits=2)
    return f"{v:.{precision}f}"


def _nested(a, fmt):
    """``[[1., 2.], [3., 4.]]`` on one line, built without recursion."""
    flat = [fmt(v) for v in a.reshape(-1).tolist()]
    for size in reversed(a.shape):
        groups = [flat[i:i + size] for i in range(0, len(flat), size)] if size else [[]]
        flat = ["[" + ", ".join(g) + "]" for g in groups]
    return flat[0] if flat else "[]"


def _summary(a, precision, words):
    shape = format_shape(a.shape)
    if a.size == 0:
        return f"{words[0]} {shape}"
    f = a.astype(np.float64) if a.dtype.kind != "c" else np.abs(a)
    style = _style(f)
    stats = ", ".join(f"{name} {_format_number(v, style if style != 'integral' else 'fixed', precision)}"
                      for name, v in zip(words[1:], (f.mean(), f.min(), f.max())))
    return f"{words[0]} {shape}: {stats}"
