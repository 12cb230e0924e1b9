"""Hostile and damaged checkpoints (issue 13, "Security"): crafted pickles that try to change objects the process
already holds are refused in PyTorch's words and change nothing; hostile safetensors headers and random damage
give one clear error naming the file; a save that fails midway leaves no partial file."""
import io
import os
import pickle
import random
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import gradiente
from gradiente import serialization
from gradiente.core import dtype as dt

torch = pytest.importorskip("torch")


# --- crafted pickles -------------------------------------------------------------------------------------

def _text(value):
    raw = value.encode()
    return b"X" + len(raw).to_bytes(4, "little") + raw


def _checkpoint(path, pickle_bytes):
    """A zip checkpoint laid out as torch.save lays one out, holding ``pickle_bytes`` as its data.pkl."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle_bytes)
        archive.writestr("archive/byteorder", b"little")
        archive.writestr("archive/version", b"3\n")
    return path


def _build(global_name, attribute, value_ops):
    """``GLOBAL global_name; BUILD (None, {attribute: value})``: pickle's ``setattr`` on an object the process
    already holds, the attack of issue 13."""
    module, name = global_name.rsplit(".", 1)
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"N}(" + _text(attribute) + value_ops + b"u\x86b.")


ATTACKS = {
    # float32 made an integer type: tensor([1, 2]) * 2.5 would give [2, 5]
    "dtype_category": _build("torch.float32", "_category", b"K\x01"),
    # the cached FloatStorage made bfloat16: a later, legitimate [1, 2, 3, 4] would load as [0, 1, 0, 2]
    "storage_type": _build("torch.FloatStorage", "dtype", _text("bfloat16")),
    # Size.numel replaced for every Size in the process
    "size_numel": _build("torch.Size", "numel", b"K\x00"),
}


def _process_state():
    """What an attack would change: every dtype's fields, the storage types the reader shares, Size's and
    OrderedDict's attributes."""
    dtypes = [(d, [getattr(d, slot) for slot in dt.dtype.__slots__]) for d in dt.ALL_DTYPES]
    storages = {k: tuple(v) for k, v in serialization._SAFE_GLOBALS.items() if type(v) is serialization._StorageType}
    return (dtypes, storages, dict(vars(gradiente.Size)), dict(vars(OrderedDict)))


def _assert_process_intact(tmp_path):
    assert (gradiente.tensor([1, 2]) * 2.5).tolist() == [2.5, 5.0]
    torch.save(torch.tensor([1.0, 2.0, 3.0, 4.0]), tmp_path / "legit.pt")
    assert gradiente.load(tmp_path / "legit.pt").tolist() == [1.0, 2.0, 3.0, 4.0]
    assert gradiente.Size([2, 3]).numel() == 6


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_poisoning_a_shared_object_is_refused_and_changes_nothing(tmp_path, attack):
    path = _checkpoint(tmp_path / f"{attack}.pt", ATTACKS[attack])
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(path)
    assert str(theirs.value).startswith("Weights only load failed")
    assert "Can only build Tensor, Parameter, OrderedDict" in str(theirs.value)

    before = _process_state()
    with pytest.raises(pickle.UnpicklingError, match=r"^Weights only load failed\. .*Can only build Tensor, "
                                                     r"Parameter, OrderedDict"):
        gradiente.load(path)
    assert _process_state() == before
    _assert_process_intact(tmp_path)


def test_the_attacks_do_change_an_unguarded_process(tmp_path):
    """The crafted files are real attacks: Python's own Unpickler, given the same names, applies them."""
    names = serialization._SAFE_GLOBALS

    class Plain(pickle.Unpickler):
        def find_class(self, module, name):
            return names[(module, name)]

    size_numel = gradiente.Size.numel
    try:
        Plain(io.BytesIO(ATTACKS["size_numel"])).load()
        assert gradiente.Size.numel == 0
    finally:
        gradiente.Size.numel = size_numel


OTHER_WRITES = {
    "setitem_into_a_dtype": b"\x80\x02ctorch\nfloat32\n" + _text("k") + b"K\x01s.",
    "append_to_a_size": b"\x80\x02ctorch\nSize\n)\x85R" + b"K\x01a.",
    "call_a_dtype": b"\x80\x02ctorch\nfloat32\n)R.",
    "newobj_of_a_storage_type": b"\x80\x02ctorch\nFloatStorage\n)\x81.",
    "build_a_memoized_global": b"\x80\x02ctorch\nSize\nq\x00h\x00N}(" + _text("numel") + b"K\x00u\x86b.",
    "build_an_OrderedDict_method": b"\x80\x02ccollections\nOrderedDict\n)R}(" + _text("keys") + b"K\x00ub.",
    "code_by_name": b"\x80\x02cos\nsystem\n" + _text("true") + b"\x85R.",
    "inst_opcode": b"(ios\nsystem\n" + _text("true") + b".",
}


@pytest.mark.parametrize("case", sorted(OTHER_WRITES))
def test_other_writes_and_calls_are_refused(tmp_path, case):
    path = _checkpoint(tmp_path / f"{case}.pt", OTHER_WRITES[case])
    if case == "build_an_OrderedDict_method":
        # torch lets the file shadow a method of the OrderedDict it made (that object's ``keys`` becomes 0);
        # we refuse it, on purpose: a state dict whose methods are data is not one a program can use.
        assert torch.load(path).keys == 0
    elif case in ("call_a_dtype", "newobj_of_a_storage_type"):
        with pytest.raises(TypeError):      # torch lets the call through to Python, which refuses it
            torch.load(path)
    else:
        with pytest.raises(pickle.UnpicklingError, match=r"^Weights only load failed"):
            torch.load(path)
    before = _process_state()
    with pytest.raises(pickle.UnpicklingError, match=r"^Weights only load failed\. "):
        gradiente.load(path)
    assert _process_state() == before
    _assert_process_intact(tmp_path)


# --- crafted NumPy pickles: the reconstructors of arrays and scalars are allowed, nothing else of NumPy's ----------

class _Reduce:
    """Pickles as ``fn(*args)``, then ``BUILD state`` when a state is given: how a crafted file is written."""

    def __init__(self, fn, args, state=None):
        self.fn, self.args, self.state = fn, args, state

    def __reduce__(self):
        return (self.fn, self.args) if self.state is None else (self.fn, self.args, self.state)


_RECONSTRUCT, _SCALAR = np._core.multiarray._reconstruct, np._core.multiarray.scalar


def _array(state):
    return _Reduce(_RECONSTRUCT, (np.ndarray, (0,), b"b"), state)


NUMPY_ATTACKS = {
    # other NumPy functions, named as the reconstructors are
    "numpy_load": _Reduce(np.load, ("/etc/passwd",)),
    "numpy_frombuffer": _Reduce(np.frombuffer, (b"\x00" * 8,)),
    "numpy_testing_runstring": _Reduce(np.testing._private.utils.runstring, ("x = 1", {})),
    # an object array: its items are pickles themselves (so anything)
    "object_dtype": _array((1, (1,), np.dtype(object), False, [1])),
    "object_dtype_by_code": _Reduce(np.dtype, ("O8", False, True)),
    # a dtype state that is not a simple dtype's (names, fields, subarray)
    "dtype_fields_state": _Reduce(np.dtype, ("i8", False, True), (3, "<", None, ("evil",), None, -1, -1, 0)),
    # _reconstruct of another class, or with other arguments
    "reconstruct_other_class": _Reduce(_RECONSTRUCT, (OrderedDict, (0,), b"b")),
    "reconstruct_huge": _Reduce(_RECONSTRUCT, (np.ndarray, (10 ** 12,), b"b")),
    # data that does not fit the shape (a short buffer read past its end, or a huge allocation)
    "short_data": _array((1, (1000,), np.dtype("<i8"), False, b"\x00" * 8)),
    "negative_shape": _array((1, (-1,), np.dtype("<i8"), False, b"")),
    "scalar_short_data": _Reduce(_SCALAR, (np.dtype("<f8"), b"\x00")),
    # bytes(n): the protocol-2 spelling of b'' with an argument that allocates
    "bytes_of_a_size": _Reduce(bytes, (10 ** 12,)),
}


def _numpy_process_state():
    return [(np.dtype(code).str, np.dtype(code).byteorder, np.dtype(code).isnative) for code in ("i8", "f4", "?")]


@pytest.mark.parametrize("case", sorted(NUMPY_ATTACKS))
def test_crafted_numpy_pickles_are_refused(tmp_path, case):
    path = _checkpoint(tmp_path / f"{case}.pt", pickle.dumps(NUMPY_ATTACKS[case], protocol=2))
    with pytest.raises(pickle.UnpicklingError, match=r"^Weights only load failed"):
        torch.load(path)
    before, numpy_before = _process_state(), _numpy_process_state()
    with pytest.raises(pickle.UnpicklingError,
                       match=r"(?s)^Weights only load failed\. .*(refused|Unsupported global|Can only)"):
        gradiente.load(path)
    assert _process_state() == before and _numpy_process_state() == numpy_before
    _assert_process_intact(tmp_path)


def test_build_on_numpys_own_objects_is_refused(tmp_path):
    """BUILD may fill an array or a dtype the file made, never NumPy's ndarray class or a dtype NumPy shares."""
    crafted = {"ndarray_class": b"\x80\x02cnumpy\nndarray\nN}(" + _text("evil") + b"K\x01u\x86b.",
               "reconstruct_function": b"\x80\x02cnumpy._core.multiarray\n_reconstruct\nN}(" + _text("x")
               + b"K\x01u\x86b."}
    for name, data in crafted.items():
        path = _checkpoint(tmp_path / f"{name}.pt", data)
        with pytest.raises(pickle.UnpicklingError, match=r"Can only build"):
            gradiente.load(path)
    assert not hasattr(np.ndarray, "evil")


def test_legitimate_numpy_pickles_still_load(tmp_path):
    """The same reader loads what torch.save writes for arrays and scalars (both NumPy 1 and 2 module names)."""
    data = {"a": np.arange(4.0).reshape(2, 2), "s": np.float32(3.5)}
    path = tmp_path / "ok.pt"
    torch.save(data, path)
    loaded = gradiente.load(path)
    assert np.array_equal(loaded["a"], data["a"]) and loaded["s"] == data["s"]
    raw = zipfile.ZipFile(path).read("ok/data.pkl").replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    old = gradiente.load(_checkpoint(tmp_path / "numpy1.pt", raw))
    assert np.array_equal(old["a"], data["a"]) and old["s"] == data["s"]


def test_a_state_dict_keeps_its_metadata(tmp_path):
    """BUILD on an OrderedDict the file made itself is what torch.save writes for a state_dict's _metadata."""
    state = torch.nn.Linear(2, 3).state_dict()
    torch.save(state, tmp_path / "linear.pt")
    loaded = gradiente.load(tmp_path / "linear.pt")
    assert list(loaded) == ["weight", "bias"] and loaded._metadata == state._metadata


def test_protocol_4_pickles_load(tmp_path):
    """A file made by a newer pickler (FRAME, MEMOIZE, SHORT_BINUNICODE, bytes, sets) is read as data."""
    value = {"a": [1, 2.5, "x", None, True], "b": (b"\x00\xff", frozenset({3})), "c": {4, 5}, "d": -2 ** 70}
    path = _checkpoint(tmp_path / "p4.pt", pickle.dumps(value, protocol=4))
    assert gradiente.load(path) == value


# --- hostile safetensors headers -------------------------------------------------------------------------

def _safetensors(header_bytes, body=b""):
    return len(header_bytes).to_bytes(8, "little") + header_bytes + body


def _structured(structure, tensors='"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'):
    import json
    meta = json.dumps({"gradiente.structure": structure if isinstance(structure, str) else json.dumps(structure)})
    return _safetensors(("{" + tensors + ',"__metadata__":' + meta + "}").encode(), b"\x00" * 8)


HOSTILE = {
    "empty file": (b"", "too short"),
    "header longer than the file": (b"\xff" * 8 + b"{}", "header length"),
    "header not JSON": (_safetensors(b"{nope"), "not valid JSON"),
    "header not UTF-8": (_safetensors(b'{"\xff":1}'), "not valid JSON"),
    "header a list": (_safetensors(b"[1, 2]"), "not a JSON object"),
    "header nested a million deep": (_safetensors(b"[" * 100000 + b"]" * 100000), "nested too deeply"),
    "metadata a list": (_safetensors(b'{"__metadata__":[1]}'), "__metadata__ is not an object"),
    "entry not an object": (_safetensors(b'{"t":3}'), "is not an object"),
    "dtype missing": (_safetensors(b'{"t":{"shape":[1],"data_offsets":[0,4]}}'), "dtype"),
    "dtype unhashable": (_safetensors(b'{"t":{"dtype":[1],"shape":[1],"data_offsets":[0,4]}}'), "dtype"),
    "dtype unknown": (_safetensors(b'{"t":{"dtype":"F128","shape":[1],"data_offsets":[0,4]}}'), "dtype"),
    "shape negative": (_safetensors(b'{"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}'), "invalid shape"),
    "shape of floats": (_safetensors(b'{"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}'), "invalid shape"),
    "shape of booleans": (_safetensors(b'{"t":{"dtype":"F32","shape":[true],"data_offsets":[0,4]}}'),
                          "invalid shape"),
    "shape overflowing int64": (_safetensors(b'{"t":{"dtype":"F32","shape":[4294967296,4294967296],'
                                             b'"data_offsets":[0,0]}}'), "do not match"),
    "offsets past the end": (_safetensors(b'{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'),
                             "reach past the end"),
    "offsets reversed": (_safetensors(b'{"t":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}', b"\x00" * 4),
                         "do not match"),
    "offsets not a pair": (_safetensors(b'{"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}}'), "data_offsets"),
    "structure not JSON": (_structured("{oops"), "cannot be read"),
    "structure not a string": (_safetensors(b'{"__metadata__":{"gradiente.structure":5}}'), "not a string"),
    "structure nested a million deep": (_structured("[" * 100000 + "]" * 100000), "nested too"),
    "structure nested 300 deep": (_structured('{"list":[' * 300 + '{"v":1}' + "]}" * 300), "nested more"),
    "structure nested 10,000 deep": (_structured('{"list":[' * 10000 + '{"v":1}' + "]}" * 10000), "nested too"),
    "structure names a missing tensor": (_structured({"tensor": "missing"}), "does not hold"),
    "structure unknown entry": (_structured({"pickle": "os.system"}), "not understood"),
    "structure an int of a million digits": (_structured({"int": "9" * 1000000}), "not understood"),
    "structure a bad float": (_structured({"float": "one"}), "not understood"),
    "structure unknown dtype": (_structured({"dtype": "float128"}), "not understood"),
    "structure a negative size": (_structured({"size": [-1]}), "not understood"),
    "structure dict of non-pairs": (_structured({"dict": [[1, 2, 3]]}), "[key, value] pairs"),
    "structure dict with list keys": (_structured({"dict": [[[1], {"v": 1}]]}), "[key, value] pairs"),
    "structure requires_grad on ints": (_structured({"tensor": "t", "requires_grad": True},
                                                    '"t":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}'),
                                        "requires_grad"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_safetensors_header_gives_one_clear_error(tmp_path, case):
    data, what = HOSTILE[case]
    path = tmp_path / "hostile.safetensors"
    path.write_bytes(data)
    with pytest.raises(RuntimeError) as info:
        gradiente.load(path)
    message = str(info.value)
    assert type(info.value) is RuntimeError
    assert message.startswith(f"gradiente.load: not a valid checkpoint file ({str(path)!r}): ")
    assert what in message


def test_a_header_length_that_looks_like_a_pickle(tmp_path):
    """A header of 128 bytes (or 384, ...) starts the file with 0x80, pickle's first byte: still safetensors."""
    for length in (120, 128, 136):
        value = {"k": "x" * length}
        buffer = io.BytesIO()
        gradiente.save(value, buffer, format="safetensors")
        assert gradiente.load(io.BytesIO(buffer.getvalue())) == value


def test_an_open_file_is_named_too(tmp_path):
    with pytest.raises(RuntimeError, match=r"not a valid checkpoint file \(a BytesIO\): the file is too short"):
        gradiente.load(io.BytesIO(b"\x01"))
    (tmp_path / "x.safetensors").write_bytes(b"\x01")
    with open(tmp_path / "x.safetensors", "rb") as fh, pytest.raises(RuntimeError, match=r"x\.safetensors'\)"):
        gradiente.load(fh)


# --- random damage -----------------------------------------------------------------------------------------

def _valid_checkpoint(fmt):
    w = gradiente.nn.Parameter(gradiente.arange(6.0).reshape(2, 3))
    checkpoint = {"model": OrderedDict([("w", w), ("b", gradiente.zeros(3, dtype=gradiente.float64))]),
                  "step": 12, "lr": 0.5, "name": "run", "shape": gradiente.Size([2, 3]), "ids": gradiente.arange(4),
                  "history": [(1, 0.25), (2, None)], "dtype": gradiente.float16}
    buffer = io.BytesIO()
    gradiente.save(checkpoint, buffer, format=fmt)
    return buffer.getvalue()


def _damaged(data, rng):
    """A copy of ``data`` with a few random bits flipped, or cut short, or both."""
    damaged = bytearray(data)
    kind = rng.random()
    if kind < 0.7:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(damaged) * 8)
            damaged[i // 8] ^= 1 << (i % 8)
    if kind >= 0.6:
        del damaged[rng.randrange(len(damaged)):]
    return bytes(damaged)


@pytest.mark.parametrize("fmt,cases", [("safetensors", 400), ("torch", 150)])
def test_bit_flips_and_truncations_load_or_fail_clearly(tmp_path, fmt, cases):
    """Every damaged copy either loads (a flip inside tensor data is not detectable) or raises one
    RuntimeError naming the file; never a stray KeyError, JSONDecodeError, RecursionError or ValueError."""
    rng = random.Random(13)
    data = _valid_checkpoint(fmt)
    path = tmp_path / f"damaged.{fmt}"
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(cases):
        path.write_bytes(_damaged(data, rng))
        try:
            gradiente.load(path)
            outcomes["loaded"] += 1
        except RuntimeError as e:
            assert type(e) is RuntimeError and str(e).startswith(f"gradiente.load: not a valid checkpoint file "
                                                                 f"({str(path)!r}): "), e
            outcomes["refused"] += 1
        except pickle.UnpicklingError as e:      # a flipped name in data.pkl: refused before it is used
            assert fmt == "torch" and str(e).startswith("Weights only load failed. "), e
            outcomes["refused"] += 1
    assert outcomes["refused"] > cases // 3, outcomes     # the damage was real, and was noticed
    assert gradiente.load(io.BytesIO(data))["step"] == 12  # and the intact file still loads


def test_damage_inside_a_pickle_with_a_valid_zip_fails_clearly(tmp_path):
    """Flips and cuts in data.pkl itself, re-zipped so that the CRC holds: the pickle machine meets every kind of
    malformed instruction stream and answers each with a refusal or a damaged-file error."""
    source = io.BytesIO()
    torch.save({"m": torch.nn.Linear(3, 2).state_dict(), "s": torch.Size([2]), "d": torch.float16, "b": b"ab",
                "l": [1, 2.5, None], "p": torch.nn.Parameter(torch.ones(2))}, source)
    archive = zipfile.ZipFile(source)
    names = archive.namelist()
    pickle_name = next(n for n in names if n.endswith("data.pkl"))
    rng = random.Random(13)
    outcomes = {"loaded": 0, "refused": 0, "damaged": 0}
    for _ in range(300):
        data = _damaged(archive.read(pickle_name), rng)
        path = tmp_path / "flipped.pt"
        with zipfile.ZipFile(path, "w") as target:
            for name in names:
                target.writestr(name, data if name == pickle_name else archive.read(name))
        try:
            gradiente.load(path)
            outcomes["loaded"] += 1
        except pickle.UnpicklingError as e:
            assert str(e).startswith("Weights only load failed. "), e
            outcomes["refused"] += 1
        except RuntimeError as e:
            assert type(e) is RuntimeError and f"not a valid checkpoint file ({str(path)!r}): " in str(e), e
            outcomes["damaged"] += 1
    assert outcomes["refused"] > 30 and outcomes["damaged"] > 30, outcomes


# --- saving --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["safetensors", "torch"])
def test_a_save_that_fails_midway_leaves_the_old_file(tmp_path, fmt):
    path = tmp_path / "model.pt"
    gradiente.save({"w": gradiente.ones(3)}, path, format=fmt)
    old = path.read_bytes()
    with pytest.raises(TypeError, match=r"cannot (store an object of type|pickle) '?generator"):
        gradiente.save({"w": gradiente.zeros(3), "x": [gradiente.zeros(2), (n for n in ())]}, path, format=fmt)
    assert os.listdir(tmp_path) == ["model.pt"] and path.read_bytes() == old
    assert gradiente.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_a_write_that_fails_midway_leaves_no_partial_file(tmp_path, monkeypatch):
    """The torch format writes record after record; the disk filling up after the first leaves nothing."""
    real_writestr = zipfile.ZipFile.writestr
    calls = []

    def writestr(self, name, data, *args, **kwargs):
        calls.append(name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_writestr(self, name, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", writestr)
    with pytest.raises(OSError, match="No space left"):
        gradiente.save({"w": gradiente.ones(1000)}, tmp_path / "new.pt", format="torch")
    assert os.listdir(tmp_path) == []


def test_save_keeps_permissions_and_writes_through_a_link(tmp_path):
    target = tmp_path / "real.safetensors"
    gradiente.save({"w": gradiente.ones(2)}, target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.safetensors"
    link.symlink_to(target)
    gradiente.save({"w": gradiente.zeros(2)}, link)
    assert link.is_symlink() and (target.stat().st_mode & 0o777) == 0o640
    assert np.array_equal(gradiente.load(target)["w"].numpy(), np.zeros(2, dtype=np.float32))
