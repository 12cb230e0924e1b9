"""``save`` and ``load``: checkpoints in formats that cannot run code when they are read.

* ``save(obj, f)`` writes a **safetensors** file (a little-endian header length, a JSON header, the raw
  tensor bytes). A flat ``{name: tensor}`` dict such as a ``state_dict()`` is an ordinary safetensors
  file (``safetensors.torch.load_file`` reads it); anything else made of tensors, numbers, strings, None
  and lists/tuples/dicts of them (an optimizer's state dict, a training checkpoint) is recorded as JSON in
  the header's ``__metadata__``.
* ``save(obj, f, format="torch")`` writes PyTorch's own zip format (``data.pkl`` + raw storages) using only
  the pickle globals that ``torch.load(..., weights_only=True)`` accepts: a file PyTorch loads.
* ``load(f)`` reads either of ours, and PyTorch ``.pt``/``.pth`` files written by ``torch.save`` (the zip
  format), without PyTorch and without running the pickle's code: the unpickler resolves only a short list
  of names (``_rebuild_tensor_v2``, the storage types, ``OrderedDict``, dtypes, ...) to functions of ours
  that build arrays; any other name (``os.system``, a model class) is refused before anything is called.
"""
import io
import json
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from .core import dtype as dt
from .core.size import Size
from .core.tensor import Tensor, device

__all__ = ["save", "load"]

_ST_DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
              "F16": np.float16, "I32": np.int32, "U32": np.uint32, "F32": np.float32, "F64": np.float64,
              "I64": np.int64, "U64": np.uint64, "C64": np.complex64}
_ST_NAMES = {np.dtype(v): k for k, v in _ST_DTYPES.items()}
_STRUCTURE_KEY = "gradiente.structure"

_STORAGE_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
                   "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
                   "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
                   "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
                   "BFloat16Storage": "bfloat16"}
_STORAGE_NAMES = {np.dtype(v): k for k, v in _STORAGE_DTYPES.items() if v != "bfloat16"}


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
        raise TypeError(f"gradiente.save cannot store an object of type {type(obj).__name__}: only tensors, "
                        "numbers, strings, None, and lists, tuples and dicts of them. (Save a model's "
                        "state_dict(), not the model: a file holding arbitrary objects could run code when loaded.)")


def _decode(node, tensors):
    from .nn.parameter import Parameter
    if "tensor" in node:
        t = tensors[node["tensor"]]
        if node.get("parameter"):
            return Parameter(t, requires_grad=node.get("requires_grad", False))
        if node.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if "v" in node:
        return node["v"]
    if "int" in node:
        return int(node["int"])
    if "float" in node:
        return float(node["float"])
    if "dtype" in node:
        return dt.BY_NAME[node["dtype"]]
    if "size" in node:
        return Size(node["size"])
    if "list" in node:
        return [_decode(v, tensors) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors) for v in node["tuple"])
    if "dict" in node or "odict" in node:
        cls = OrderedDict if "odict" in node else dict
        return cls((k, _decode(v, tensors)) for k, v in node.get("dict", node.get("odict")))
    raise ValueError(f"gradiente.load: unknown entry in the file's structure: {sorted(node)}")


def _write_safetensors(obj, fh):
    flat = _Flattener()
    structure = flat.encode(obj, "")
    header, offset, chunks = {}, 0, []
    for name, array in flat.tensors.items():
        if array.dtype not in _ST_NAMES:
            raise TypeError(f"gradiente.save: safetensors cannot store dtype {array.dtype}")
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
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
    if len(data) < 8:
        raise _corrupt("the file is too short")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise _corrupt("the header length is larger than the file")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _corrupt(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _corrupt("the header is not a JSON object")
    body = memoryview(data)[8 + n:]
    metadata = header.pop("__metadata__", None) or {}
    tensors = {}
    for name, info in header.items():
        try:
            dtype = np.dtype(_ST_DTYPES[info["dtype"]]).newbyteorder("<")
            shape = tuple(int(s) for s in info["shape"])
            begin, end = (int(v) for v in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise _corrupt(f"bad header entry for tensor {name!r}") from None
        count = int(np.prod(shape, dtype=np.int64))
        if not 0 <= begin <= end <= len(body) or end - begin != count * dtype.itemsize:
            raise _corrupt(f"the data offsets of tensor {name!r} do not match its shape and dtype")
        array = np.frombuffer(body[begin:end], dtype=dtype).astype(dtype.newbyteorder("="))
        tensors[name] = Tensor._make(array.reshape(shape))
    structure = metadata.get(_STRUCTURE_KEY)
    if structure is None:               # a plain safetensors file (written by another tool): its tensors
        return OrderedDict(sorted(tensors.items()))
    return _decode(json.loads(structure), tensors)


def _corrupt(reason):
    return RuntimeError(f"gradiente.load: not a valid checkpoint file: {reason}")


# --- PyTorch's zip format: reading ---------------------------------------------------------------------

class _StorageType:
    def __init__(self, name):
        self.name = name
        self.dtype = _STORAGE_DTYPES[name]


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    """Our ``torch._utils._rebuild_tensor_v2``: a strided view of the storage array, bounds-checked."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
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


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _latin1_encode(text, encoding="latin1"):
    """``_codecs.encode``, which protocol-2 pickles use for ``bytes``; only to latin-1."""
    if not isinstance(text, str) or encoding != "latin1":
        raise pickle.UnpicklingError("gradiente.load: refused _codecs.encode with anything but (str, 'latin1')")
    return text.encode("latin1")


def _torch_names():
    """The pickle globals a state-dict checkpoint uses, mapped to our own safe functions and classes."""
    names = {("collections", "OrderedDict"): OrderedDict,
             ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
             ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
             ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
             ("torch", "Size"): Size,
             ("torch", "device"): device,
             ("_codecs", "encode"): _latin1_encode,
             ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex,
             ("builtins", "slice"): slice, ("builtins", "range"): range, ("builtins", "bytearray"): bytearray,
             ("__builtin__", "set"): set}
    names.update({("torch", name): _StorageType(name) for name in _STORAGE_DTYPES})
    names.update({("torch", d._name): d for d in dt.ALL_DTYPES})
    return names


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves only the names in ``_torch_names``; storages come from the zip archive's records."""

    _allowed = None

    def __init__(self, fh, read_record):
        super().__init__(fh)
        self._read_record = read_record
        self._storages = {}
        if _RestrictedUnpickler._allowed is None:
            _RestrictedUnpickler._allowed = _torch_names()

    def find_class(self, module, name):
        found = self._allowed.get((module, name))
        if found is not None:
            return found
        hint = ""
        if module.startswith("torch.nn") or module == "__main__" or ("." in module and module.split(".")[0] != "torch"):
            hint = (" The file seems to hold a whole pickled object (for example a model saved with "
                    "torch.save(model, ...)); gradiente loads tensors and state dicts only: in PyTorch, save "
                    "model.state_dict() instead and load it with model.load_state_dict(...).")
        raise pickle.UnpicklingError(f"gradiente.load refused to load the global '{module}.{name}': a checkpoint may "
                                     f"only refer to tensors, storages and plain containers, and nothing in the "
                                     f"file was run.{hint}")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"gradiente.load: unsupported persistent id {pid!r}")
        storage_type, key, numel = pid[1], str(pid[2]), int(pid[4])
        array = self._storages.get(key)
        if array is None:
            raw = self._read_record(f"data/{key}")
            if storage_type.dtype == "bfloat16":        # NumPy has no bfloat16: widen to float32
                bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
                array = bits.view(np.float32)
            else:
                array = np.frombuffer(bytearray(raw), dtype=np.dtype(storage_type.dtype).newbyteorder("<"))
                array = array.astype(array.dtype.newbyteorder("="), copy=False)
            if array.size < numel:
                raise _corrupt(f"storage {key} holds {array.size} elements, the pickle says {numel}")
            self._storages[key] = array
        return array


def _read_torch_zip(fh):
    try:
        archive = zipfile.ZipFile(fh)
    except zipfile.BadZipFile as e:
        raise _corrupt(f"a damaged zip archive ({e})") from None
    names = archive.namelist()
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if not pkl:
        raise _corrupt("no data.pkl in the zip archive (not a file written by torch.save)")
    prefix = pkl[0][:-len("data.pkl")]
    if prefix + "byteorder" in names and archive.read(prefix + "byteorder") != b"little":
        raise _corrupt("big-endian PyTorch checkpoints are not supported")

    def read_record(name):
        try:
            return archive.read(prefix + name)
        except KeyError:
            raise _corrupt(f"the archive has no record {name}") from None

    try:
        return _RestrictedUnpickler(io.BytesIO(archive.read(pkl[0])), read_record).load()
    except pickle.UnpicklingError:
        raise
    except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError, struct.error) as e:
        raise _corrupt(f"data.pkl could not be read ({type(e).__name__}: {e})") from None


# --- PyTorch's zip format: writing ---------------------------------------------------------------------

class _TorchPickler:
    """Writes pickle protocol 2 by hand, so that the globals named are PyTorch's (torch need not be
    importable here): tensors as ``torch._utils._rebuild_tensor_v2`` of a persistent storage id."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.storages = []                 # arrays, in key order
        self._keys = {}

    def global_(self, module, name):
        self.out += b"c" + f"{module}\n{name}\n".encode("ascii")

    def save(self, obj):
        out = self.out
        if obj is None:
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
            raw = obj.encode("utf-8")
            out += b"X" + struct.pack("<I", len(raw)) + raw
        elif isinstance(obj, Tensor):
            self.save_tensor(obj)
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
        else:
            raise TypeError(f"gradiente.save(format='torch') cannot store an object of type {type(obj).__name__}: "
                            "only tensors, numbers, strings, None, and lists, tuples and dicts of them")

    def save_tensor(self, t):
        array = _contiguous(t._data)
        if array.dtype not in _STORAGE_NAMES:
            raise TypeError(f"gradiente.save(format='torch'): unsupported dtype {array.dtype}")
        key = self._keys.get(id(t))
        if key is None:
            key = self._keys[id(t)] = str(len(self.storages))
            self.storages.append(array)
        is_param = type(t).__name__ == "Parameter"
        if is_param:
            self.global_("torch._utils", "_rebuild_parameter")
            self.out += b"("
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
        if is_param:
            self.save(bool(t._requires_grad))
            self.global_("collections", "OrderedDict")
            self.out += b")RtR"


def _write_torch_zip(obj, fh, name="archive"):
    pickler = _TorchPickler()
    pickler.save(obj)
    pickler.out += b"."
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{name}/data.pkl", bytes(pickler.out))
        archive.writestr(f"{name}/.format_version", b"1")
        archive.writestr(f"{name}/byteorder", b"little")
        for key, array in enumerate(pickler.storages):
            archive.writestr(f"{name}/data/{key}", array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())
        archive.writestr(f"{name}/version", b"3\n")


# --- public API ----------------------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format="safetensors"):
    """Save ``obj`` (tensors, state dicts, and lists/tuples/dicts of tensors, numbers and strings) to ``f``, a
    path or a binary file.

    Intended difference from PyTorch: the default format is safetensors, not pickle, so loading never runs
    code, and arbitrary Python objects (a whole ``nn.Module``) cannot be saved: save ``model.state_dict()``.
    ``format="torch"`` writes PyTorch's zip format, for ``torch.load``.
    """
    if format not in ("safetensors", "torch"):
        raise ValueError(f"format must be 'safetensors' or 'torch', got {format!r}")
    fh, owned = _open(f, "wb")
    try:
        if format == "torch":
            stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] if owned else "archive"
            _write_torch_zip(obj, fh, stem or "archive")
        else:
            _write_safetensors(obj, fh)
    finally:
        if owned:
            fh.close()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what ``save`` wrote, a safetensors file, or a PyTorch zip checkpoint (``torch.save``'s default
    format since 1.6), from a path or a binary file.

    PyTorch checkpoints are read with a restricted unpickler: only tensors, storages, dtypes and plain
    containers can be built, so a malicious file fails with ``pickle.UnpicklingError`` and runs nothing
    (whatever ``weights_only`` says). ``map_location`` is accepted and ignored (everything is on the CPU).
    """
    fh, owned = _open(f, "rb")
    try:
        data = fh.read()
    finally:
        if owned:
            fh.close()
    if data[:4] == b"PK\x03\x04":
        return _read_torch_zip(io.BytesIO(data))
    if data[:2] == b"\x80\x02" or data[:1] == b"\x80":
        raise _corrupt("this is a pickle, or PyTorch's legacy (before 1.6) format, which gradiente does not read; "
                       "re-save it with a recent torch.save, or save it as safetensors")
    return _read_safetensors(data)
