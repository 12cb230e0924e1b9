"""``save`` and ``load``: checkpoints in formats that cannot run code when they are read.

* ``save(obj, "model.pt")`` (any name but ``*.safetensors``, or a file object) writes PyTorch's own zip
  format (``data.pkl`` + raw storages) using only the pickle globals that ``torch.load(...,
  weights_only=True)`` accepts: a file PyTorch loads, as it is, with its defaults.
* ``save(obj, "model.safetensors")`` writes a **safetensors** file (a little-endian header length, a JSON
  header, the raw tensor bytes). A flat ``{name: tensor}`` dict such as a ``state_dict()`` is an ordinary
  safetensors file (``safetensors.torch.load_file`` reads it); anything else made of tensors, numbers,
  strings, None and lists/tuples/dicts of them (an optimizer's state dict, a training checkpoint) is recorded
  as JSON in the header's ``__metadata__``. ``format=`` chooses either explicitly.
* NumPy arrays and scalars, numbers, strings, bytes and plain containers are data too: ``torch.save`` pickles a
  NumPy array by naming NumPy's ``_reconstruct`` (so PyTorch's default ``weights_only=True`` refuses the file, and
  ``weights_only=False`` reads it); both formats of ours keep them, and ``load`` reads PyTorch's without running
  NumPy's pickle code (``_numpy_pickles.py``).
* ``load(f)`` reads either of ours, and PyTorch ``.pt``/``.pth`` files written by ``torch.save`` (the zip
  format), without PyTorch and without running the pickle's code: our own pickle machine
  (``_weights_only_unpickler.py``) resolves only a short list of names (``_rebuild_tensor_v2``, the storage
  types, ``OrderedDict``, dtypes, ...) to functions of ours that build arrays, and lets the file change only
  objects it built; any other name (``os.system``, a model class) is refused before anything is called.
* A whole object (``torch.save(model, f)``) is pickled as ``torch.save`` pickles it: its class by name and its state.
  Loading it needs its classes allowlisted, as PyTorch's default does (``safe_globals``, ``_safe_globals.py``): the
  reader then makes bare instances of those classes and gives them their state, and calls nothing else. Its classes
  are gradiente's (``gradiente.nn.modules.linear.Linear``), so PyTorch cannot load such a file: to move a model to
  PyTorch, save its ``state_dict()``.
* ``save`` to a path writes a temporary file beside it and renames it, so a failed save leaves no partial file.
* Every damaged or hostile file raises one error that names the file and says what is wrong.
"""
import contextlib
import copyreg
import io
import json
import os
import pickle
import secrets
import stat
import struct
import sys
import types
import zipfile
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from ._numpy_pickles import NUMPY_BUILDERS, NUMPY_CONSTRUCTORS, NUMPY_GLOBALS, is_numpy_data, write_numpy
from ._safe_globals import add_safe_globals, allowed_by_name, clear_safe_globals, get_safe_globals, safe_globals
from ._weights_only_unpickler import WeightsUnpickler, refused
from .core import dtype as dt
from .core.meta import is_meta, meta_array
from .core.size import Size
from .core.tensor import Tensor, device

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

# the tables below hold bfloat16's NumPy type, which is imported on first use (core/dtype.py): saving or loading is
# that use
dt.load_bfloat16()

_ST_DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
              "F16": np.float16, "I32": np.int32, "U32": np.uint32, "F32": np.float32, "F64": np.float64,
              "I64": np.int64, "U64": np.uint64, "C64": np.complex64, "BF16": dt.BFLOAT16}
_ST_NAMES = {np.dtype(v): k for k, v in _ST_DTYPES.items()}
_STRUCTURE_KEY = "gradiente.structure"
_MAX_DEPTH = 200                 # nesting of a saved structure (a checkpoint is a few levels deep)

_STORAGE_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
                   "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
                   "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
                   "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
                   "BFloat16Storage": dt.BFLOAT16}
_STORAGE_NAMES = {np.dtype(v): k for k, v in _STORAGE_DTYPES.items()}


def _little_endian_bytes(array):
    """The array's bytes as both formats store them, little-endian. (bfloat16, an extension type NumPy cannot
    byte-swap, is swapped as the 16-bit integers that hold its bits.)"""
    if array.dtype == dt.BFLOAT16:
        array = array.view(np.uint16)
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _from_little_endian(raw, dtype, count):
    """A new, writable array of ``count`` elements of ``dtype`` read from little-endian bytes."""
    holder = np.dtype(np.uint16) if dtype == dt.BFLOAT16 else np.dtype(dtype)
    array = np.frombuffer(bytearray(raw), dtype=holder.newbyteorder("<"), count=count)
    array = array.astype(holder, copy=False)
    return array.view(dt.BFLOAT16) if dtype == dt.BFLOAT16 else array


def _contiguous(array):
    """A C-contiguous copy when needed (``np.ascontiguousarray`` would turn a 0-d array into 1-d)."""
    return array if array.flags.c_contiguous else array.copy(order="C")


def _open(f, mode):
    """A binary file object for a path or an already open file (which the caller then owns)."""
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True
    return f, False


# --- safetensors ---------------------------------------------------------------------------------------

class _Flattener:
    """Walks an object: tensors get names (shared tensors one name), the rest becomes JSON."""

    def __init__(self):
        self.tensors = {}          # name -> array
        self._names = {}           # id(tensor) -> name

    def name_for(self, tensor, path):
        name = self._names.get(id(tensor))
        if name is None:
            name = path or "tensor"
            while name in self.tensors:
                name += "_"
            self._names[id(tensor)] = name
            self.tensors[name] = _contiguous(tensor._data)
        return name

    def encode(self, obj, path):
        if is_numpy_data(obj):
            return self.encode_numpy(obj, path)
        if isinstance(obj, Tensor):
            entry = {"tensor": self.name_for(obj, path)}
            if type(obj).__name__ == "Parameter":
                entry["parameter"] = True
            if obj._requires_grad:
                entry["requires_grad"] = True
            return entry
        if obj is None or isinstance(obj, (bool, str)):
            return {"v": obj}
        if isinstance(obj, int):
            return {"int": str(obj)} if abs(obj) >= 2 ** 53 else {"v": obj}
        if isinstance(obj, float):
            return {"float": repr(obj)}
        if isinstance(obj, dt.dtype):
            return {"dtype": obj._name}
        if isinstance(obj, Size):
            return {"size": list(obj)}
        if isinstance(obj, (list, tuple)):
            kind = "tuple" if isinstance(obj, tuple) else "list"
            return {kind: [self.encode(v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(obj)]}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"gradiente.save: dict keys must be strings or ints, got {type(k).__name__}")
                items.append([k, self.encode(v, f"{path}.{k}" if path else str(k))])
            return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
        raise TypeError(f"gradiente.save(format='safetensors') cannot store an object of type {type(obj).__name__}: "
                        "only tensors, NumPy arrays and scalars, numbers, strings, bytes, None, and lists, tuples "
                        "and dicts of them (PyTorch's format, format='torch', also stores whole objects such as a "
                        "model).")

    def encode_numpy(self, obj, path):
        """A NumPy array as a tensor of the file marked as an array; a NumPy scalar as its dtype and bytes."""
        if isinstance(obj, np.generic):
            return {"numpy_scalar": [obj.dtype.str, obj.tobytes().hex()]}
        if obj.dtype not in _ST_NAMES:
            raise TypeError(f"gradiente.save: safetensors cannot store NumPy arrays of dtype {obj.dtype}")
        name = path or "array"
        while name in self.tensors:
            name += "_"
        self.tensors[name] = np.ascontiguousarray(obj) if obj.ndim else obj.copy()
        return {"ndarray": name}


def _numpy_scalar_entry(value):
    """The NumPy scalar a ``{"numpy_scalar": [dtype, hex bytes]}`` entry describes, checked."""
    if not (type(value) is list and len(value) == 2 and all(type(v) is str for v in value)):
        raise _corrupt("a NumPy scalar entry is not [dtype, bytes]")
    code, raw = value
    try:
        dtype, data = np.dtype(code), bytes.fromhex(raw)
    except (TypeError, ValueError):
        raise _corrupt(f"a NumPy scalar entry cannot be read: {value!r:.80}") from None
    if dtype.kind not in "biufcSU" or dtype.fields is not None or len(data) != dtype.itemsize:
        raise _corrupt(f"a NumPy scalar entry cannot be read: {value!r:.80}")
    return np.frombuffer(data, dtype=dtype)[0]


def _decode(node, tensors, depth=0):
    """The object that ``_Flattener.encode`` described, checked entry by entry: the structure comes from the file,
    so every entry is validated before it is used."""
    from .nn.parameter import Parameter
    if depth > _MAX_DEPTH:
        raise _corrupt(f"the structure is nested more than {_MAX_DEPTH} levels deep")
    if type(node) is not dict or not node:
        raise _corrupt(f"an entry of the structure is {type(node).__name__}, not an object")
    if "tensor" in node:
        t = tensors.get(node["tensor"]) if type(node["tensor"]) is str else None
        if t is None:
            raise _corrupt(f"the structure names a tensor the file does not hold: {node['tensor']!r}")
        requires_grad = node.get("requires_grad", False)
        if type(requires_grad) is not bool or (requires_grad and not (t.is_floating_point() or t.is_complex())):
            raise _corrupt(f"tensor {node['tensor']!r} has an invalid requires_grad entry")
        if node.get("parameter"):
            return Parameter(t, requires_grad=requires_grad)
        if requires_grad:
            t.requires_grad_(True)
        return t
    (kind, value), = list(node.items())[:1]
    if kind == "ndarray":
        t = tensors.get(value) if type(value) is str else None
        if t is None:
            raise _corrupt(f"the structure names an array the file does not hold: {value!r}")
        return t._data
    if kind == "numpy_scalar":
        return _numpy_scalar_entry(value)
    if kind == "v" and (value is None or type(value) in (bool, str, int, float)):
        return value
    if kind == "int" and type(value) is str and value.lstrip("-").isdigit() and len(value) < 4000:
        return int(value)
    if kind == "float" and type(value) is str:
        try:
            return float(value)
        except ValueError:
            pass
    if kind == "dtype" and type(value) is str and value in dt.BY_NAME:
        return dt.BY_NAME[value]
    if kind == "size" and type(value) is list and all(type(v) is int and v >= 0 for v in value):
        return Size(value)
    if kind in ("list", "tuple") and type(value) is list:
        items = [_decode(v, tensors, depth + 1) for v in value]
        return items if kind == "list" else tuple(items)
    if kind in ("dict", "odict") and type(value) is list:
        if not all(type(kv) is list and len(kv) == 2 and type(kv[0]) in (str, int) for kv in value):
            raise _corrupt("a dict of the structure is not a list of [key, value] pairs")
        return (OrderedDict if kind == "odict" else dict)((k, _decode(v, tensors, depth + 1)) for k, v in value)
    raise _corrupt(f"an entry of the structure is not understood: {json.dumps(node)[:80]}")


def _unsupported(obj):
    """The error for an object neither format stores: NumPy data of a kind a file cannot hold as data (object
    arrays, masked arrays, matrices), or, as pickle says it, an object that pickles in a way of its own (a
    generator, a lock, a file...)."""
    if isinstance(obj, (np.ndarray, np.generic)):
        return TypeError(f"gradiente.save cannot store an object of type {type(obj).__name__}: only tensors, NumPy "
                         "arrays and scalars (of numbers, bools or strings), numbers, strings, bytes, None, "
                         "containers of them, and objects that pickle as their class and state (a model).")
    return TypeError(f"cannot pickle '{type(obj).__name__}' object")


def _write_safetensors(obj, fh):
    flat = _Flattener()
    structure = flat.encode(obj, "")
    header, offset, chunks = {}, 0, []
    for name, array in flat.tensors.items():
        if array.dtype not in _ST_NAMES:
            raise TypeError(f"gradiente.save: safetensors cannot store dtype {array.dtype}")
        data = _little_endian_bytes(array)
        header[name] = {"dtype": _ST_NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", _STRUCTURE_KEY: json.dumps(structure)}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)             # the data starts 8-byte aligned, as safetensors writes it
    fh.write(struct.pack("<Q", len(text)))
    fh.write(text)
    for chunk in chunks:
        fh.write(chunk)


def _read_safetensors(data):
    """The tensors of a safetensors file (and what ``save`` recorded around them), every header field checked:
    a damaged or hostile file raises ``_CorruptFile`` saying what is wrong, never a stray KeyError."""
    if len(data) < 8:
        raise _corrupt("the file is too short to be a checkpoint")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise _corrupt(f"the header length ({n} bytes) is larger than the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _corrupt(f"the header is not valid JSON ({e})") from None
    except RecursionError:
        raise _corrupt("the header is nested too deeply") from None
    if type(header) is not dict:
        raise _corrupt("the header is not a JSON object")
    body = memoryview(data)[8 + n:]
    metadata = header.pop("__metadata__", None) or {}
    if type(metadata) is not dict:
        raise _corrupt("the header's __metadata__ is not an object")
    tensors = {name: Tensor._make(_read_tensor(name, info, body)) for name, info in header.items()}
    structure = metadata.get(_STRUCTURE_KEY)
    if structure is None:               # a plain safetensors file (written by another tool): its tensors
        return OrderedDict(sorted(tensors.items()))
    if type(structure) is not str:
        raise _corrupt(f"the header's {_STRUCTURE_KEY} is not a string")
    try:
        return _decode(json.loads(structure), tensors)
    except json.JSONDecodeError as e:
        raise _corrupt(f"the structure recorded in the header cannot be read ({e})") from None
    except RecursionError:
        raise _corrupt("the structure recorded in the header is nested too deeply") from None


def _read_tensor(name, info, body):
    """One tensor's array, from its header entry ``{"dtype", "shape", "data_offsets"}``, checked."""
    if type(info) is not dict:
        raise _corrupt(f"the header entry of tensor {name!r} is not an object")
    dtype = _ST_DTYPES.get(info.get("dtype")) if type(info.get("dtype")) is str else None
    if dtype is None:
        raise _corrupt(f"tensor {name!r} has an unsupported or missing dtype {info.get('dtype')!r}")
    shape, offsets = info.get("shape"), info.get("data_offsets")
    if type(shape) is not list or not all(type(s) is int and s >= 0 for s in shape) or len(shape) > 64:
        raise _corrupt(f"tensor {name!r} has an invalid shape {shape!r}")
    if type(offsets) is not list or len(offsets) != 2 or not all(type(v) is int for v in offsets):
        raise _corrupt(f"tensor {name!r} has invalid data_offsets {offsets!r}")
    dtype = np.dtype(dtype)
    begin, end = offsets
    count = 1
    for s in shape:
        count *= s
    if not 0 <= begin <= end <= len(body) or end - begin != count * dtype.itemsize:
        raise _corrupt(f"the data offsets of tensor {name!r} ({begin}, {end}) do not match its shape {shape} and "
                       f"dtype {info['dtype']}, or reach past the end of the file")
    return _from_little_endian(body[begin:end], dtype, count).reshape(shape)


class _CorruptFile(RuntimeError):
    """A damaged or hostile file; ``load`` names the file and says what is wrong."""


def _corrupt(reason):
    return _CorruptFile(reason)


# --- PyTorch's zip format: reading ---------------------------------------------------------------------

class _StorageType(NamedTuple):
    """What a file's ``torch.FloatStorage`` (...) stands for: a name and its NumPy dtype. Immutable, since one
    instance serves every load."""
    name: str
    dtype: object


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    """Our ``torch._utils._rebuild_tensor_v2``: a strided view of the storage array, bounds-checked."""
    if type(storage) is not np.ndarray or type(storage_offset) is not int:
        raise _corrupt("a tensor is rebuilt from something that is not one of the file's storages")
    size, stride = tuple(_index(s) for s in size), tuple(_index(s) for s in stride)
    if len(size) != len(stride) or any(s < 0 for s in size + stride) or storage_offset < 0:
        raise _corrupt("a tensor has negative sizes, strides or offset")
    if all(size):
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.size:
            raise _corrupt("a tensor reaches past the end of its storage")
    base = storage[storage_offset:]
    array = np.lib.stride_tricks.as_strided(base, shape=size, strides=tuple(s * storage.itemsize for s in stride))
    t = Tensor._make(array if all(size) else np.zeros(size, dtype=storage.dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _index(value):
    if type(value) is not int:
        raise _corrupt(f"a tensor's size or stride is {type(value).__name__}, not int")
    return value


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad=False):
    """Our ``torch._utils._rebuild_meta_tensor_no_storage``: a meta tensor, which a file stores without data."""
    if not isinstance(dtype, dt.dtype) or type(requires_grad) is not bool:
        raise _corrupt("a meta tensor is rebuilt from something that is not a dtype")
    size, stride = tuple(_index(s) for s in size), tuple(_index(s) for s in stride)
    if len(size) != len(stride) or any(s < 0 for s in size + stride):
        raise _corrupt("a meta tensor has negative sizes or strides")
    t = Tensor._make(meta_array(size, dtype._np))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from .nn.parameter import Parameter
    if type(data) is not Tensor or type(requires_grad) is not bool:
        raise _corrupt("a Parameter is rebuilt from something that is not a tensor")
    return Parameter(data, requires_grad)


def _empty_bytes(*args):
    """``bytes()``, which protocol-2 pickles use for ``b''`` (no argument: ``bytes(n)`` could ask for any size)."""
    if args:
        raise refused("gradiente.load refused bytes called with arguments.")
    return b""


def _latin1_encode(text, encoding="latin1"):
    """``_codecs.encode``, which protocol-2 pickles use for ``bytes``; only to latin-1."""
    if not isinstance(text, str) or encoding != "latin1":
        raise refused("gradiente.load refused _codecs.encode with anything but (str, 'latin1').")
    return text.encode("latin1")


# The pickle globals a state-dict checkpoint uses, mapped to our own functions and classes. Those in
# _CONSTRUCTORS may be called by the file, and each returns a new object; the rest (dtypes, storage types) are
# shared values the file may only name.
_CONSTRUCTORS = (OrderedDict, _rebuild_tensor_v2, _rebuild_meta_tensor_no_storage, _rebuild_parameter, Size, device,
                 _latin1_encode, _empty_bytes, set, frozenset, complex, slice, range, bytearray, *NUMPY_CONSTRUCTORS)
_SAFE_GLOBALS = {("collections", "OrderedDict"): OrderedDict,
                 ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
                 ("torch._utils", "_rebuild_meta_tensor_no_storage"): _rebuild_meta_tensor_no_storage,
                 ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
                 ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
                 ("torch", "Size"): Size,
                 ("torch", "device"): device,
                 ("_codecs", "encode"): _latin1_encode,
                 ("__builtin__", "bytes"): _empty_bytes, ("builtins", "bytes"): _empty_bytes,
                 # protocol 2 names Python's builtins module __builtin__ (its Python 2 name), as torch.save writes
                 **{(module, cls.__name__): cls for module in ("builtins", "__builtin__")
                    for cls in (set, frozenset, complex, slice, range, bytearray)},
                 **{("torch", name): _StorageType(name, np_dtype) for name, np_dtype in _STORAGE_DTYPES.items()},
                 **{("torch", d._name): d for d in dt.ALL_DTYPES},
                 **NUMPY_GLOBALS}


#: PyTorch's words for a name the file may not use (``torch.load``'s ``_get_wo_message``). They hold here as they
#: stand: ``weights_only=False`` loads a whole pickled model too (rebuilt from its data, no code run).
_UNSAFE_GLOBAL_OPTIONS = (
    "This file can still be loaded, to do so you have two options, \033[1mdo those steps only if you trust the source "
    "of the checkpoint\033[0m. \n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
    "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.\n\t"
    "(2) Alternatively, to load with `weights_only=True` please check the recommended steps in the following error "
    "message.\n\t")
_LOAD_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
              "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _refused_global(module, name):
    """PyTorch's error for a name the file may not use (a whole pickled model's class, for one)."""
    full = name if module == "builtins" else f"{module}.{name}"
    return pickle.UnpicklingError(
        f"Weights only load failed. {_UNSAFE_GLOBAL_OPTIONS}WeightsUnpickler error: Unsupported global: GLOBAL {full} "
        f"was not an allowed global by default. Please use `torch.serialization.add_safe_globals([{full}])` or the "
        f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this global if you trust this "
        f"class/function.{_LOAD_DOCS}")


class _Storages:
    """The zip archive's storages, each read once and shared by the tensors that view it."""

    def __init__(self, read_record):
        self._read_record = read_record
        self._arrays = {}

    def __call__(self, pid):
        if not (type(pid) is tuple and len(pid) >= 5 and pid[0] == "storage" and type(pid[1]) is _StorageType):
            raise refused(f"WeightsUnpickler error: Only persistent_load of storage is allowed, but got {pid!r:.200}.")
        storage_type, key, numel = pid[1], str(pid[2]), int(pid[4])
        array = self._arrays.get(key)
        if array is None:
            raw = self._read_record(f"data/{key}")
            dtype = np.dtype(storage_type.dtype)
            array = _from_little_endian(raw, dtype, len(raw) // dtype.itemsize)
            if array.size < numel:
                raise _corrupt(f"storage {key} holds {array.size} elements, the pickle says {numel}")
            self._arrays[key] = array
        return array


def _module_class_of_this_process(module, name):
    """``weights_only=False``'s extension: the ``nn.Module`` subclass a file names (``__main__.Net``,
    ``torch.nn.modules.linear.Linear``, read as gradiente's), if a module this process has already imported defines
    it; None otherwise. Looked up in ``sys.modules`` and the classes' own namespaces only, so nothing is imported
    and no attribute hook runs."""
    from .nn.modules.module import Module
    candidates = [module]
    if module == "torch" or module.startswith("torch."):
        candidates.append("gradiente" + module[len("torch"):])
    for candidate in candidates:
        found = sys.modules.get(candidate)
        for part in name.split("."):
            found = vars(found).get(part) if found is not None else None
        if isinstance(found, type) and issubclass(found, Module):
            return found
    return None


def _read_torch_zip(fh, weights_only=None):
    try:
        archive = zipfile.ZipFile(fh)
    except Exception as e:      # BadZipFile mostly; a damaged directory can also fail to seek or decode
        raise _corrupt(f"a damaged zip archive ({type(e).__name__}: {e})") from None
    names = archive.namelist()
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if not pkl:
        raise _corrupt("no data.pkl in the zip archive (not a file written by torch.save)")
    prefix = pkl[0][:-len("data.pkl")]

    def read_record(name):
        try:
            return archive.read(prefix + name)
        except KeyError:
            raise _corrupt(f"the archive has no record {name}") from None
        except Exception as e:  # a bad CRC, a truncated or undecodable member
            raise _corrupt(f"the archive's record {name} is damaged ({type(e).__name__}: {e})") from None

    if prefix + "byteorder" in names and read_record("byteorder") != b"little":
        raise _corrupt("big-endian PyTorch checkpoints are not supported")

    unpickler = WeightsUnpickler(read_record("data.pkl"), _SAFE_GLOBALS, _CONSTRUCTORS, _Storages(read_record),
                                 _refused_global, NUMPY_BUILDERS, allowed_by_name(),
                                 _module_class_of_this_process if weights_only is False else None)
    try:
        return unpickler.load()
    except (pickle.UnpicklingError, _CorruptFile):
        raise
    except Exception as e:      # the machine builds only data: any other failure means a damaged pickle
        raise _corrupt(f"data.pkl could not be read ({type(e).__name__}: {e})") from None


# --- PyTorch's zip format: writing ---------------------------------------------------------------------

class _TorchPickler:
    """Writes pickle protocol 2 by hand, so that the globals named are PyTorch's (torch need not be
    importable here): tensors as ``torch._utils._rebuild_tensor_v2`` of a persistent storage id."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.storages = []                 # arrays, in key order
        self._keys = {}
        self._memo = {}                    # id -> (memo index, the object): a tensor or object written once

    def global_(self, module, name):
        self.out += b"c" + f"{module}\n{name}\n".encode("ascii")

    def save_bytes(self, raw):
        """``bytes`` as protocol 2 writes them: ``_codecs.encode(text, 'latin1')``, or ``bytes()`` when empty."""
        if not raw:
            self.global_("__builtin__", "bytes")
            self.out += b")R"
            return
        self.global_("_codecs", "encode")
        self.save(raw.decode("latin1"))
        self.save("latin1")
        self.out += b"\x86R"

    def remember(self, obj):
        """BINPUT: the object just written may be named again by its index (one object, not a copy, on loading)."""
        index = len(self._memo)
        self._memo[id(obj)] = (index, obj)
        self.out += b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)

    def recall(self, obj):
        """BINGET for an object written before: True if it was."""
        seen = self._memo.get(id(obj))
        if seen is None:
            return False
        index = seen[0]
        self.out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)
        return True

    def save(self, obj):
        out = self.out
        if is_numpy_data(obj):         # before float: np.float64 is a float, but torch.save keeps it NumPy's
            write_numpy(self, obj)
        elif obj is None:
            out += b"N"
        elif obj is True:
            out += b"\x88"
        elif obj is False:
            out += b"\x89"
        elif isinstance(obj, int):
            if 0 <= obj < 256:
                out += b"K" + bytes([obj])
            elif -2 ** 31 <= obj < 2 ** 31:
                out += b"J" + struct.pack("<i", obj)
            else:
                raw = obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
                out += b"\x8a" + bytes([len(raw)]) + raw
        elif isinstance(obj, float):
            out += b"G" + struct.pack(">d", obj)
        elif isinstance(obj, str):
            raw = obj.encode("utf-8", "surrogatepass")
            out += b"X" + struct.pack("<I", len(raw)) + raw
        elif isinstance(obj, bytes):
            self.save_bytes(obj)
        elif isinstance(obj, complex):
            self.global_("__builtin__", "complex")
            self.save((obj.real, obj.imag))
            out += b"R"
        elif isinstance(obj, Tensor):
            if not self.recall(obj):
                self.save_tensor(obj)
                self.remember(obj)
        elif isinstance(obj, dt.dtype):
            self.global_("torch", obj._name)
        elif isinstance(obj, (tuple, list)):
            if isinstance(obj, Size):
                self.global_("torch", "Size")
            out += b"(" if isinstance(obj, tuple) else b"]("
            for v in obj:
                self.save(v)
            out += b"t" if isinstance(obj, tuple) else b"e"
            if isinstance(obj, Size):
                out += b"\x85R"
        elif isinstance(obj, dict):
            if isinstance(obj, OrderedDict):
                self.global_("collections", "OrderedDict")
                out += b")R"
            else:
                out += b"}"
            if obj:
                out += b"("
                for k, v in obj.items():
                    self.save(k)
                    self.save(v)
                out += b"u"
        elif isinstance(obj, (set, frozenset)):
            # as protocol 2 writes them (and PyTorch's reader reads them): set(list of the items)
            self.global_("__builtin__", type(obj).__name__)
            self.save(list(obj))
            out += b"\x85R"
        elif isinstance(obj, device):
            self.global_("torch", "device")
            self.save(str(obj))
            out += b"\x85R"
        elif isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            self.global_(*_importable_name(obj))
        elif not self.recall(obj):
            self.save_object(obj, _state_of(obj))

    def save_object(self, obj, state):
        """An instance as pickle writes one (protocol 2): its class, a bare instance of it (NEWOBJ), then its
        state (BUILD); loading it takes the class allowlisted (``safe_globals``), as PyTorch's loader does."""
        self.global_(*_importable_name(type(obj)))
        self.out += b")\x81"
        self.remember(obj)                  # (before the state, which may lead back to the object itself)
        if state:
            self.save(state)
            self.out += b"b"

    def save_tensor(self, t):
        """A tensor as ``torch._utils._rebuild_tensor_v2`` of a storage (its data), or a meta tensor's shape; a
        Parameter wrapped in ``_rebuild_parameter``, as PyTorch pickles one."""
        is_param = type(t).__name__ == "Parameter"
        if is_param:
            self.global_("torch._utils", "_rebuild_parameter")
            self.out += b"("
        if is_meta(t._data):
            self._save_meta_tensor(t, is_param)
        else:
            self._save_tensor_data(t, is_param)
        if is_param:
            self.save(bool(t._requires_grad))
            self.global_("collections", "OrderedDict")
            self.out += b")RtR"

    def _save_tensor_data(self, t, is_param):
        array = _contiguous(t._data)
        if array.dtype not in _STORAGE_NAMES:
            raise TypeError(f"gradiente.save(format='torch'): unsupported dtype {array.dtype}")
        key = self._keys.get(id(t))
        if key is None:
            key = self._keys[id(t)] = str(len(self.storages))
            self.storages.append(array)
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("
        self.save("storage")
        self.global_("torch", _STORAGE_NAMES[array.dtype])
        self.save(key)
        self.save("cpu")
        self.save(array.size)
        self.out += b"tQ"
        self.save(0)
        self.save(tuple(array.shape))
        strides = tuple(int(np.prod(array.shape[i + 1:], dtype=np.int64)) for i in range(array.ndim))
        self.save(strides)
        self.save(bool(t._requires_grad) and not is_param)
        self.global_("collections", "OrderedDict")
        self.out += b")R"                          # backward hooks: an empty OrderedDict
        self.out += b"tR"

    def _save_meta_tensor(self, t, is_param):
        """A meta tensor has no data to store: PyTorch pickles it as its dtype, size, stride and requires_grad,
        rebuilt by ``torch._utils._rebuild_meta_tensor_no_storage``."""
        self.global_("torch._utils", "_rebuild_meta_tensor_no_storage")
        self.out += b"("
        self.save(t.dtype)
        self.save(tuple(t.shape))
        self.save(tuple(t.stride()))
        self.save(bool(t._requires_grad) and not is_param)
        self.out += b"tR"


def _importable_name(obj):
    """``(module, qualified name)`` of a class or function that a file may name, or pickle's error."""
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if module is None or name is None:
        raise _unsupported(obj)
    if "<locals>" in name:
        raise AttributeError(f"Can't pickle local object {name!r}")
    if "<lambda>" in name:
        raise pickle.PicklingError(f"Can't pickle {obj!r}: attribute lookup {name} on {module} failed")
    return module, name


def _state_of(obj):
    """The state ``obj`` pickles with when it pickles as its class and state, as a model does (nothing custom in
    its ``__reduce__``, and Python's own reduction a plain ``NEWOBJ``); else the error pickle gives (Python's
    reduction itself refuses generators, locks and the like)."""
    cls = type(obj)
    if cls.__reduce_ex__ is not object.__reduce_ex__ or cls.__reduce__ is not object.__reduce__:
        raise _unsupported(obj)
    reduced = obj.__reduce_ex__(2)
    if reduced[0] is not copyreg.__newobj__ or reduced[1] != (cls,) or any(reduced[3:]):
        raise _unsupported(obj)
    return reduced[2]


def _write_torch_zip(obj, fh, name="archive"):
    pickler = _TorchPickler()
    pickler.save(obj)
    pickler.out += b"."
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{name}/data.pkl", bytes(pickler.out))
        archive.writestr(f"{name}/.format_version", b"1")
        archive.writestr(f"{name}/byteorder", b"little")
        for key, array in enumerate(pickler.storages):
            archive.writestr(f"{name}/data/{key}", _little_endian_bytes(array))
        archive.writestr(f"{name}/version", b"3\n")


# --- public API ----------------------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format=None):
    """Save ``obj`` (tensors, state dicts, NumPy arrays and scalars, and lists/tuples/dicts of them, numbers,
    strings and bytes) to ``f``, a path or a binary file.

    The format follows the file's name: a path ending in ``.safetensors`` gets a safetensors file; any other
    path or file object gets PyTorch's zip format, which real ``torch.load`` reads with its default
    ``weights_only=True`` (so a model trained here keeps training on PyTorch); NumPy arrays and scalars are
    pickled as ``torch.save`` pickles them, which PyTorch's default refuses as it refuses its own such files
    (``torch.load(f, weights_only=False)`` reads them). ``format="torch"`` or
    ``"safetensors"`` chooses explicitly. A whole object (a model) is pickled in PyTorch's format as
    ``torch.save`` pickles it, its class by name and its state; ``load`` reads it back when its classes are
    allowlisted (``serialization.safe_globals``). PyTorch cannot read such a file (its classes are gradiente's):
    save ``model.state_dict()`` for that.
    """
    if format is None:
        name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "")
        format = "safetensors" if isinstance(name, str) and name.lower().endswith(".safetensors") else "torch"
    if format not in ("safetensors", "torch"):
        raise ValueError(f"format must be 'safetensors' or 'torch', got {format!r}")
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        _write_whole(f, lambda fh: _write(obj, fh, format, stem))
    else:
        _write(obj, f, format, "archive")


def _write(obj, fh, format, stem):
    if format == "torch":
        _write_torch_zip(obj, fh, stem)
    else:
        _write_safetensors(obj, fh)


def _write_whole(path, write):
    """Run ``write`` on a new file beside ``path``, then rename it to ``path``: a save that fails midway leaves
    the folder as it was (an older checkpoint of that name intact), and a reader never sees half a file. (No
    fsync: like ``torch.save``, this guards against failures of the save, not against power loss.)"""
    path = os.path.realpath(path) if os.path.islink(path) else os.fspath(path)
    folder, name = os.path.split(os.path.abspath(path))
    while True:
        temporary = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        if os.path.exists(path):                        # keep the permissions of the file it replaces
            os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what ``save`` wrote, a safetensors file, or a PyTorch zip checkpoint (``torch.save``'s default
    format since 1.6), from a path or a binary file.

    PyTorch checkpoints are read as PyTorch's ``weights_only=True`` reads them (``_weights_only_unpickler.py``):
    the file may name only tensors' rebuild functions, storages, dtypes, plain containers and NumPy's array and
    scalar reconstructors (``_numpy_pickles.py``), may call only constructors, and may change only objects it built
    itself; anything else raises ``pickle.UnpicklingError`` ("Weights only load failed. ...") with nothing run and
    nothing that existed before the call changed. ``weights_only=False`` is accepted and means the same safe reader:
    gradiente never runs code from a file, so a checkpoint of data (NumPy arrays included, which PyTorch's default
    refuses and loads with ``weights_only=False``) loads either way. A pickled object (a whole model) loads when
    its classes are allowlisted (``serialization.safe_globals``), as PyTorch's default asks, and, with
    ``weights_only=False`` (``torch.save(model, f)`` then ``torch.load(f, weights_only=False)``, as PyTorch's
    tutorials do), when its classes are ``nn.Module`` subclasses that the program has already defined or imported
    (the file's ``torch.nn...`` names read as gradiente's); either way the loader makes bare instances of them and
    gives them their state, and names nothing else. A damaged or
    malformed file raises one ``RuntimeError`` that names it and says what is wrong. ``map_location`` is accepted
    and ignored (everything is on the CPU).
    """
    fh, owned = _open(f, "rb")
    try:
        data = fh.read()
    finally:
        if owned:
            fh.close()
    try:
        if data[:4] == b"PK\x03\x04":
            return _read_torch_zip(io.BytesIO(data), weights_only)
        if data[:1] == b"\x80" and data[8:9] != b"{":     # (a safetensors header 128 bytes long starts so too)
            raise _corrupt("this is a pickle, or PyTorch's legacy (before 1.6) format, which gradiente does not "
                           "read; re-save it with a recent torch.save, or save it as safetensors")
        return _read_safetensors(data)
    except _CorruptFile as e:
        where = os.fspath(f) if owned else getattr(f, "name", None)
        where = repr(where) if isinstance(where, (str, bytes)) else f"a {type(f).__name__}"
        raise RuntimeError(f"gradiente.load: not a valid checkpoint file ({where}): {e}") from None
