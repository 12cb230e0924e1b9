"""Devices as a CPU-only build of PyTorch has them.

gradiente computes on the CPU, with NumPy. A program written for PyTorch still names other devices
(``device = "cuda" if torch.cuda.is_available() else "cpu"``), so ``device`` objects of every PyTorch type exist,
parse and print as PyTorch's do, and every function that takes ``device=`` asks ``check_device`` what to do
with one: nothing for the CPU, and for any other device the very error a CPU-only PyTorch raises there (an
``AssertionError: Torch not compiled with CUDA enabled`` for ``"cuda"``, a ``NotImplementedError`` naming the
missing kernel for ``"mps"``, ...). That one function is the only place that decides, so ``zeros``, ``tensor``,
``randn``, ``Tensor.to`` and ``nn.Linear(..., device=...)`` cannot disagree.

The ``"meta"`` device is the one other device gradiente has: its tensors have a shape and a dtype and no data
(``core/meta.py``). ``check_device`` answers ``True`` for it, and each factory then makes a meta array in place
of computing values.

The default device (``torch.set_default_device``, ``with torch.device(...):``) lives here too, because the
factory functions of the core read it.
"""
import numbers
import operator
import re
import warnings
from typing import Any

__all__ = ["device", "check_device", "default_device", "set_default_device", "COPY"]

# The device types PyTorch knows, in the order its error message lists them (c10/core/DeviceType.cpp).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")

# PyTorch parses a device string with this expression: a name, then optionally ':' and an index written
# without a sign or a leading zero (c10/core/Device.cpp).
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."

_NOT_PASSED: Any = object()   # tells ``device('cuda:0', None)`` (an error in PyTorch) from ``device('cuda:0')``


def _type_name(obj):
    return "torch.device" if isinstance(obj, device) else type(obj).__name__


def _invalid_arguments(args, kwargs):
    """PyTorch's message for a call that matches neither ``device(device)`` nor ``device(type, index)``."""
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    if kwargs:
        got += ", "
        why = "\n      didn't match because some of the keywords were incorrect: " + ", ".join(kwargs)
    elif len(args) == 1:
        why = f"\n      didn't match because some of the arguments have invalid types: (!{_type_name(args[0])}!)"
    else:
        why = ""
    return TypeError(f"device() received an invalid combination of arguments - got ({got}), but expected one "
                     f"of:\n * (torch.device device){why}\n * (str type, int index = -1)\n")


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _parse(text):
    """``'cuda:1'`` -> ``('cuda', 1)``, with PyTorch's messages for strings it refuses."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    name, index = match.groups()
    if name not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                           f"{text}")
    if name == "mkldnn":
        warnings.warn("'mkldnn' is no longer used as device type. So torch.device('mkldnn') will be deprecated "
                      "and removed in the future. Please use other valid device types instead.", UserWarning,
                      stacklevel=4)
    return name, None if index is None else int(index)


def _positional(args, kwargs):
    """``device(type='cuda', index=1)`` and ``device('cuda', index=1)`` as ``device('cuda', 1)``."""
    if "type" in kwargs and not args:
        args, kwargs = (kwargs["type"],), {k: v for k, v in kwargs.items() if k != "type"}
    if "index" in kwargs and len(args) == 1 and isinstance(args[0], str):
        args, kwargs = args + (kwargs["index"],), {k: v for k, v in kwargs.items() if k != "index"}
    return args, kwargs


class device:
    """Where a tensor lives: ``device('cuda')``, ``device('cuda:1')``, ``device('cuda', 1)``, ``device('cpu')``.

    Any PyTorch device type makes a device object; only the CPU can hold a tensor (see ``check_device``). A bare
    integer means "this index of the current accelerator", and a CPU-only build has none, so it raises.
    Used as a context manager, a device is the default device of the factory functions inside the block.
    """

    __slots__ = ("_type", "_index")
    __module__ = "gradiente"

    def __init__(self, *args, **kwargs):
        args, kwargs = _positional(args, kwargs)
        if kwargs or not 1 <= len(args) <= 2:
            raise _invalid_arguments(args, kwargs)
        type_, index = args[0], args[1] if len(args) == 2 else _NOT_PASSED
        if isinstance(type_, device) and index is _NOT_PASSED:
            self._type, self._index = type_.type, type_.index
            return
        if _is_int(type_) and index is _NOT_PASSED:
            # PyTorch reads device(0) as index 0 of the current accelerator, which a CPU-only build lacks.
            raise RuntimeError("Device index must not be negative" if type_ < 0 else _NO_ACCELERATOR)
        if not isinstance(type_, str):
            if len(args) == 2:
                raise TypeError(f"device(): argument 'type' (position 1) must be str, not {_type_name(type_)}")
            raise _invalid_arguments(args, kwargs)
        if index is not _NOT_PASSED and index is not None and not _is_int(index):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not {_type_name(index)}")
        name, parsed_index = _parse(type_)
        if index is not _NOT_PASSED:
            if parsed_index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: "
                                   f"{type_}")
            parsed_index = None if index is None else operator.index(index)  # an integer, checked above
        if parsed_index is not None and parsed_index < 0:
            raise RuntimeError("Device index must not be negative")
        self._type, self._index = name, parsed_index

    # Read-only, as PyTorch's are: a device is a value, shared freely (every tensor's ``.device`` is one object).
    @property
    def type(self):
        return self._type

    @property
    def index(self):
        return self._index

    def __setattr__(self, name, value):
        if name in ("type", "index"):
            raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")
        object.__setattr__(self, name, value)

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other):
        # PyTorch compares devices with devices only: device('cpu') == 'cpu' is False.
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self):
        return hash((self._type, self._index))

    def _refuse_order(self, other):
        raise TypeError("comparison not implemented")

    __lt__ = __le__ = __gt__ = __ge__ = _refuse_order

    def __reduce__(self):
        return (device, (self._type,) if self._index is None else (self._type, self._index))

    def __enter__(self):
        _context_stack.append(self)
        return self

    def __exit__(self, *exc_info):
        if not _context_stack:
            raise RuntimeError("trying to pop from empty mode stack")
        _context_stack.pop()


CPU = device("cpu")

# --- the default device ----------------------------------------------------------------------------------------
# ``set_default_device`` sets the first; each ``with device(...)`` block pushes onto the second, which wins.
_default = [CPU]
_context_stack: "list[device]" = []


def set_default_device(device_):
    """``torch.set_default_device``: checked as a device, used by the next factory call (which raises there
    if it is not the CPU, as PyTorch does). ``None`` restores the CPU."""
    _default[0] = CPU if device_ is None else device(device_)


def default_device():
    """The device a factory function uses when given none."""
    return _context_stack[-1] if _context_stack else _default[0]


# --- what a CPU-only PyTorch does with a device that is not the CPU -------------------------------------------------

COPY = "copy"   # the ``kernel`` of functions that copy existing data to the device (``tensor``, ``to``)

_NOT_COMPILED = {"cuda": "Torch not compiled with CUDA enabled", "xpu": "Torch not compiled with XPU enabled",
                 "mtia": "Torch not compiled with MTIA enabled. Ensure you have `import "
                         "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                         "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!"}
# Devices with a dispatch key of their own but no kernels in a CPU-only build, by that key's name.
_DISPATCH_KEYS = {"ipu": "IPU", "hip": "HIP", "ve": "VE", "fpga": "FPGA", "maia": "MAIA", "xla": "XLA",
                  "lazy": "Lazy", "vulkan": "Vulkan", "mps": "MPS"}
_CAFFE2_TYPES = ("mkldnn", "opengl", "opencl", "ideep")
_PYTHON_MODULE_TYPES = ("hpu", "privateuseone")   # PyTorch imports torch.<type> for them, which does not exist


def _no_kernel(kernel, key):
    return NotImplementedError(
        f"Could not run '{kernel}' with arguments from the '{key}' backend. This could be because the operator "
        "doesn't exist for this backend, or was omitted during the selective/custom build process (if using "
        "custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        f"https://fburl.com/ptmfixes for possible resolutions. '{kernel}' is only available for these backends: "
        "[CPU].")


def unavailable(dev, kernel="aten::empty.memory_format"):
    """The exception a CPU-only PyTorch raises when ``kernel`` would make a tensor on ``dev`` (a device that is
    not the CPU); ``kernel=COPY`` for copying data there (``tensor``, ``as_tensor``, ``Tensor.to``)."""
    kind = dev.type
    if kind in _NOT_COMPILED:
        # CUDA, XPU and MTIA initialise lazily, from Python, which asserts that the build has them.
        return AssertionError(_NOT_COMPILED[kind])
    if kind == "meta":
        return NotImplementedError(
            "gradiente has no meta tensors: a tensor always holds its values in a NumPy array, so there is no "
            "tensor with a shape and no data. Make the tensor on the CPU.")
    if kind in _PYTHON_MODULE_TYPES:
        return ModuleNotFoundError(f"No module named 'gradiente.{kind}'")
    if kernel == COPY and kind != "lazy":
        return RuntimeError(f"PyTorch is not linked with support for {kind} devices")
    if kind in _CAFFE2_TYPES:
        return RuntimeError(f"This is a grandfathered Caffe2 device type {kind}, it shouldn't ever convert to a "
                            "DispatchKey.  File a bug describing what you were doing if you think this is in error.")
    return _no_kernel("aten::empty.memory_format" if kernel == COPY else kernel, _DISPATCH_KEYS[kind])


def as_device(value, fname):
    """A ``device=`` argument as a device object; ``None`` is the default device. Anything but a device, a
    string or an integer is PyTorch's TypeError naming the function."""
    if value is None:
        return default_device()
    if isinstance(value, device):
        return value
    if isinstance(value, str) or _is_int(value):
        return device(value)
    raise TypeError(f"{fname}(): argument 'device' must be torch.device, not {type(value).__name__}")


def check_device(value, fname, kernel="aten::empty.memory_format"):
    """Every ``device=`` argument comes here: returns quietly for the CPU (``None`` meaning the default device)
    and raises what a CPU-only PyTorch raises for any other, except ``"meta"``, for which it returns ``True``:
    the caller makes a meta array (``core/meta.py``). ``kernel`` is the ATen kernel PyTorch would run
    there, which its message names: ``aten::empty.memory_format`` for the factories, ``aten::empty_strided``
    for the ``*_like`` ones, ``COPY`` for functions that copy existing data to the device."""
    if value is None and not _context_stack and _default[0] is CPU:
        return False        # the everyday call, answered without a lookup
    dev = as_device(value, fname)
    if dev.type == "meta":
        return True
    if dev.type != "cpu":
        raise unavailable(dev, kernel)
    return False
