"""Padding layers: ``F.pad`` with a fixed amount and mode, as modules (``nn.ZeroPad2d(1)`` in a
``Sequential``). ``padding`` is stored as PyTorch stores it: a tuple, ``(left, right)`` for 1d,
``(left, right, top, bottom)`` for 2d, and ``(left, right, top, bottom, front, back)`` for 3d; an int pads
every side by that amount."""
from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


class _PadNd(Module):
    """``F.pad(input, self.padding, mode)``; subclasses set the mode and how many dimensions are padded."""
    __constants__ = ["padding"]
    mode = "constant"
    dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self.dims, "padding")(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with ``value``: ``padding`` is an int or (left, right)."""
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dimensions with ``value``: ``padding`` is an int or (left, right, top, bottom)."""
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dimensions with ``value``: ``padding`` is an int or (left, right, top, bottom, front,
    back)."""
    dims = 3


class _ZeroPad:
    """Constant padding with 0.0, shown without the value (PyTorch's ``ZeroPad2d((1, 1, 1, 1))``)."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dimension with zeros: ``padding`` is an int or (left, right)."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last 2 dimensions with zeros: ``padding`` is an int or (left, right, top, bottom)."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last 3 dimensions with zeros: ``padding`` is an int or (left, right, top, bottom, front, back)."""


class ReflectionPad1d(_PadNd):
    """Pads the last dimension with the input reflected at its border (the edge not repeated): ``padding`` is an int
    or (left, right)."""
    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pads the last 2 dimensions with the input reflected at its border (the edge not repeated): ``padding`` is an
    int or (left, right, top, bottom)."""
    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pads the last 3 dimensions with the input reflected at its border (the edge not repeated): ``padding`` is an
    int or (left, right, top, bottom, front, back)."""
    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pads the last dimension by repeating the edge values: ``padding`` is an int or (left, right)."""
    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pads the last 2 dimensions by repeating the edge values: ``padding`` is an int or (left, right, top,
    bottom)."""
    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pads the last 3 dimensions by repeating the edge values: ``padding`` is an int or (left, right, top, bottom,
    front, back)."""
    mode, dims = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        # PyTorch's circular layers check the input's rank themselves, with a ValueError of their own.
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, self.mode)


class CircularPad1d(_CircularPadNd):
    """Pads the last dimension circularly (values wrap around from the other side): ``padding`` is an int or (left,
    right)."""
    dims = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dimensions circularly (values wrap around from the other side): ``padding`` is an int or
    (left, right, top, bottom)."""
    dims = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dimensions circularly (values wrap around from the other side): ``padding`` is an int or
    (left, right, top, bottom, front, back)."""
    dims = 3
