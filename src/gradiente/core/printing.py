"""Printing tensors exactly as PyTorch 2.13 prints them (the behaviour of ``torch/_tensor_str.py``).

Learners compare what they see with tutorials, so every character counts: widths, line breaks, the
``...`` of large tensors, the choice between ``1.5000``, ``2.`` and ``1.0000e+08``, and the suffixes
(``dtype=``, ``size=``, ``grad_fn=``, ``requires_grad=True``).

How a tensor is printed:
  1. A formatter looks at the values it will have to print (only the visible corners of a summarized
     tensor) and picks one style for all of them: integer-looking floats (``2.``), fixed point
     (``2.5000``) or scientific (``2.5000e+00``), and the width that right-aligns every element.
  2. The rows are laid out recursively: a blank line per dimension between blocks, elements wrapped at
     ``linewidth`` characters.
  3. Suffixes go after the values, on the last line if it has room, else on a line of their own.

Values are formatted as Python floats (float64), as PyTorch does via ``.item()`` and ``.tolist()``, so
float32 and float16 values print through their exact double value.
"""
import contextlib
import math

import numpy as np

from . import dtype as dt
from . import forward_grad
from .meta import MetaArray
from .tensor import Tensor

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]


class _PrintOptions:
    """The current options; ``sci_mode=None`` lets each formatter choose."""

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES: dict[str, dict[str, float]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}



class Invalid:
    """Stands for the history of a stale view in its repr (``grad_fn=<Invalid>``, as PyTorch prints it)."""


_INVALID = Invalid()

def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set options for printing tensors.

    precision: digits after the decimal point (default 4). threshold: element count above which a
    tensor is summarized with ``...`` (default 1000). edgeitems: items kept at each end of a summarized
    dimension (default 3). linewidth: characters per line before wrapping (default 80). profile:
    ``'default'``, ``'short'`` or ``'full'``, applied before the other arguments. sci_mode: True or False
    forces scientific notation on or off; None (the default) lets each tensor choose.

    As in PyTorch, ``sci_mode`` is reset to its argument on every call, so
    ``set_printoptions(precision=2)`` also turns forced scientific notation off.
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current options, as a dict that ``set_printoptions(**options)`` accepts."""
    names = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")
    return {name: getattr(PRINT_OPTS, name) for name in names}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Change the print options inside a ``with`` block only; takes ``set_printoptions``'s arguments."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --- one style and width for all the elements ----------------------------------------------------------

class _Formatter:
    """Formats single elements so that all the elements of one tensor share a style and a width.

    ``values`` is a NumPy array of the elements that will be shown (real, integer or bool).
    """

    def __init__(self, values):
        self.floating = dt.kind(values.dtype) == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.ravel()
        if not self.floating:
            if flat.size:
                # the longest of str(int) is that of the largest or of the most negative value
                extremes = (flat.min().item(), flat.max().item())
                self.max_width = max(len(str(v)) for v in extremes)
            return

        # nan, inf and zero print the same whatever the style, so they do not take part in choosing it
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if not shown.size:
            return
        magnitude = np.abs(shown)
        smallest, largest = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if PRINT_OPTS.sci_mode is None:
            # compared as float64, as PyTorch does, so float16 values cannot overflow the ratio
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        # The printed length grows with |value| in fixed point; in scientific notation it grows at both
        # ends (three-digit exponents). So the longest string is among the largest and smallest values
        # of each sign, and formatting those four stands in for formatting every element.
        positive, negative = magnitude[shown > 0], -magnitude[shown < 0]
        ends = [float(v) for part in (positive, negative) if part.size for v in (part.min(), part.max())]
        if self.sci_mode:
            widths = [len(f"{v:.{precision}e}") for v in ends]
        elif self.int_mode:
            # one more for the "." that marks the tensor as floating
            widths = [len(f"{v:.0f}") + 1 for v in ends]
        else:
            widths = [len(f"{v:.{precision}f}") for v in ends]
        self.max_width = max(self.max_width, *widths)

    def format(self, value):
        """``value`` is a Python number; the result is right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.max_width)


class _ComplexFormatter:
    """Real and imaginary parts each get their own formatter, as in PyTorch: ``1.+2.0000j``."""

    def __init__(self, real, imag):
        self.real, self.imag = _Formatter(real), _Formatter(imag)
        # the imaginary part is printed unpadded, but lines are still sized as if it were padded, plus "j"
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value):
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        # "-" (and "+", never produced, but PyTorch checks for it) already join the two parts
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _formatter(array):
    if array.dtype.kind == "c":
        return _ComplexFormatter(array.real, array.imag)
    return _Formatter(array)


def _summarized(array):
    """The elements a summarized tensor shows: ``edgeitems`` from each end of every long dimension."""
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array
    if not edge:
        # the tensor prints as "[...]": no values to fit
        return array[(slice(0, 0),) * array.ndim]
    for axis, n in enumerate(array.shape):
        if n > 2 * edge:
            array = array.take(np.r_[0:edge, n - edge:n], axis=axis)
    return array


# --- laying out the elements ---------------------------------------------------------------------------

def _vector_str(array, indent, summarize, formatter):
    # each element takes its width plus ", "
    element_length = formatter.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    fmt = formatter.format
    if summarize and not edge:
        data = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        data = [fmt(v) for v in array[:edge].tolist()] + [" ..."] + [fmt(v) for v in array[-edge:].tolist()]
    else:
        data = [fmt(v) for v in array.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block_str(array, indent, summarize, formatter):
    """The bracketed text of ``array``; ``indent`` is the column its opening bracket sits at."""
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _vector_str(array, indent, summarize, formatter)
    edge, n = PRINT_OPTS.edgeitems, array.shape[0]
    if summarize and n > 2 * edge:
        rows: list = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = list(range(n))
    parts = ["..." if i is None else _block_str(array[i], indent + 1, summarize, formatter) for i in rows]
    # blocks of a 3-d tensor are separated by one blank line, of a 4-d tensor by two, and so on
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _tensor_str(array, indent):
    if array.size == 0:
        return "[]"
    summarize = array.size > PRINT_OPTS.threshold
    formatter = _formatter(_summarized(array) if summarize else array)
    return _block_str(array, indent, summarize, formatter)


_MODULE = "gradiente."


def _add_suffixes(text, suffixes, indent, last_line_len=None):
    """Append ``, suffix`` items, wrapping to a new line (aligned under the values) when too long.
    ``last_line_len``: PyTorch's count where it differs from the text's (a sparse tensor's forced newline)."""
    parts = [text]
    # PyTorch's count, two more than the last line's length (kept: it decides where lines wrap)
    if last_line_len is None:
        last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # measured as PyTorch's "torch.float64", so that lines break where they break in PyTorch
        suffix_len = len(suffix) - suffix.count(_MODULE) * (len(_MODULE) - len("torch."))
        if last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
        else:
            parts.append(", " + suffix)
            last_line_len += suffix_len + 2
    parts.append(")")
    return "".join(parts)


# --- the whole repr ------------------------------------------------------------------------------------

def tensor_repr(t, tensor_contents=None):
    """``repr(t)`` as PyTorch writes it, with ``gradiente.`` where PyTorch writes ``torch.`` in dtypes.

    ``tensor_contents`` replaces the bracketed values, as in ``torch.Tensor.__repr__``.
    """

    cls = type(t)
    # nn.Parameter is recognised by name, so that printing does not import nn
    is_parameter = any(c.__name__ == "Parameter" for c in cls.__mro__)
    # A user's subclass prints its class name, MyTensor([1., 2.]); our own subclasses stand for what
    # PyTorch keeps as plain tensors (nn.Buffer), so they print as tensor(...)
    plain = cls is Tensor or cls.__name__ == "Parameter" or cls.__module__.startswith("gradiente.")
    prefix = "tensor(" if plain else cls.__name__ + "("
    indent = len(prefix)
    array, dtype = t._data, t.dtype
    default = dt.get_default_dtype()
    suffixes = []
    text = tensor_contents

    if type(array) is MetaArray:
        # No values to show: the device, the shape, and the dtype unless it is the default one
        suffixes += ["device='meta'", "size=" + str(tuple(array.shape))]
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        text = "..." if text is None else text
    elif array.size == 0:
        # NumPy's convention: the shape is shown unless it is (0,); the dtype always, since no value hints at it
        if array.ndim != 1:
            suffixes.append("size=" + str(tuple(array.shape)))
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        if text is None:
            text = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(array.shape)))
        # the values themselves show int64 (no ".") and bool, so those need no dtype
        default_complex = dt.complex128 if default is dt.float64 else dt.complex64
        if dtype not in (default, default_complex, dt.int64, dt.bool):
            suffixes.append(f"dtype={dtype!r}")
        if text is None:
            text = _tensor_str(array, indent)

    try:
        node = t.grad_fn
    except RuntimeError:                # a stale view's history: PyTorch prints it as <Invalid>
        node = _INVALID
    if node is not None:
        suffixes.append(f"grad_fn=<{type(node).__name__}>")     # the class name, as PyTorch prints it
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    if forward_grad.state.level >= 0:
        tangent = forward_grad.tangent(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent!r}")

    result = _add_suffixes(prefix + text, suffixes, indent)
    if is_parameter and not plain:
        result = f"Parameter({result})"
    return "Parameter containing:\n" + result if is_parameter else result
