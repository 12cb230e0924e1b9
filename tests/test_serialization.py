"""Checkpoints: save/load round trips (the format follows the file name: PyTorch's zip format, safetensors for
``*.safetensors``), PyTorch files loaded without running their pickle code, files PyTorch loads with its
defaults, and malicious or corrupt files refused with nothing run."""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.Flatten(), lib.nn.Linear(8, 3))


def _equal_state(a, b):
    assert list(a) == list(b)
    for k in a:
        assert np.array_equal(a[k].numpy(), b[k].numpy()) and a[k].dtype is b[k].dtype, k


@pytest.mark.parametrize("fmt", ["safetensors", "torch"])
def test_state_dict_round_trip(tmp_path, fmt):
    model = _model(gradiente)
    model(gradiente.randn(2, 1, 4, 4))                      # non-trivial running statistics
    path = tmp_path / "model.pt"
    gradiente.save(model.state_dict(), path, format=fmt)
    loaded = gradiente.load(path)
    assert isinstance(loaded, OrderedDict)
    _equal_state(loaded, model.state_dict())
    fresh = _model(gradiente)
    assert repr(fresh.load_state_dict(loaded)) == "<All keys matched successfully>"
    _equal_state(fresh.state_dict(), model.state_dict())


@pytest.mark.parametrize("fmt", ["safetensors", "torch"])
def test_nested_checkpoint_round_trip(fmt):
    w = gradiente.nn.Parameter(gradiente.randn(3))
    opt = gradiente.optim.Adam([w], lr=0.01)
    w.grad = gradiente.ones(3)
    opt.step()
    checkpoint = {"epoch": 7, "loss": 0.125, "name": "run-1", "flags": [True, None], "shape": (2, 3),
                  "optimizer": opt.state_dict(), "weights": [w, w.detach()], "ints": gradiente.arange(4)}
    buffer = io.BytesIO()
    gradiente.save(checkpoint, buffer, format=fmt)
    buffer.seek(0)
    back = gradiente.load(buffer)
    assert back["epoch"] == 7 and back["loss"] == 0.125 and back["name"] == "run-1"
    assert back["flags"] == [True, None] and back["shape"] == (2, 3)
    assert back["optimizer"]["param_groups"] == opt.state_dict()["param_groups"]
    assert back["optimizer"]["state"][0]["step"].tolist() == 1.0
    assert back["optimizer"]["state"][0]["step"].shape == ()
    assert isinstance(back["weights"][0], gradiente.nn.Parameter) and back["weights"][0].requires_grad
    assert back["weights"][0].tolist() == w.tolist() and back["ints"].dtype is gradiente.int64
    restored = gradiente.optim.Adam([gradiente.nn.Parameter(w.detach().clone())])
    restored.load_state_dict(back["optimizer"])


def test_the_format_follows_the_file_name_and_torch_load_reads_the_default(tmp_path):
    """A training checkpoint saved as ``ckpt.pt`` is PyTorch's zip format: real ``torch.load`` reads it with its
    default ``weights_only=True``, and the model and its optimizer keep training on PyTorch; and back."""
    model = gradiente.nn.Linear(3, 2)
    opt = gradiente.optim.Adam(model.parameters(), lr=0.01)
    model(gradiente.ones(4, 3)).pow(2).sum().backward()
    opt.step()
    gradiente.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, tmp_path / "ckpt.pt")
    gradiente.save({"w": gradiente.ones(2)}, tmp_path / "w.safetensors")
    with open(tmp_path / "ckpt.pt", "rb") as fh:
        assert fh.read(4) == b"PK\x03\x04"
    with open(tmp_path / "w.safetensors", "rb") as fh:
        assert fh.read(16)[8:9] == b"{"

    loaded = torch.load(tmp_path / "ckpt.pt")
    theirs = torch.nn.Linear(3, 2)
    theirs.load_state_dict(loaded["model"])
    their_opt = torch.optim.Adam(theirs.parameters(), lr=0.01)
    their_opt.load_state_dict(loaded["opt"])
    assert loaded["epoch"] == 3
    assert np.array_equal(theirs.weight.detach().numpy(), model.weight.detach().numpy())
    for _ in range(2):                              # one more step on each side: the same numbers
        their_opt.zero_grad()
        theirs(torch.ones(4, 3)).pow(2).sum().backward()
        their_opt.step()
        opt.zero_grad()
        model(gradiente.ones(4, 3)).pow(2).sum().backward()
        opt.step()
    np.testing.assert_allclose(theirs.weight.detach().numpy(), model.weight.detach().numpy(), rtol=1e-6)

    torch.save({"model": theirs.state_dict(), "opt": their_opt.state_dict()}, tmp_path / "back.pt")
    back = gradiente.load(tmp_path / "back.pt")
    again = gradiente.optim.Adam(gradiente.nn.Linear(3, 2).parameters(), lr=0.01)
    again.load_state_dict(back["opt"])
    assert back["opt"]["state"][0]["step"].item() == 3.0


def test_safetensors_file_is_standard(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    model = _model(gradiente)
    path = tmp_path / "model.safetensors"
    gradiente.save(model.state_dict(), path)
    tensors = safetensors_torch.load_file(str(path))
    assert sorted(tensors) == sorted(model.state_dict())
    assert np.array_equal(tensors["3.weight"].numpy(), model[3].weight.detach().numpy())
    safetensors_torch.save_file({"a": torch.arange(6.0).reshape(2, 3)}, str(tmp_path / "other.safetensors"))
    assert gradiente.load(tmp_path / "other.safetensors")["a"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_torch_checkpoint_loads_without_running_pickle_code(tmp_path):
    t_model = _model(torch)
    t_model(torch.randn(2, 1, 4, 4))
    path = tmp_path / "torch_model.pth"
    torch.save(t_model.state_dict(), path)
    loaded = gradiente.load(path)
    g_model = _model(gradiente)
    g_model.load_state_dict(loaded)
    for (name, g), (_, t) in zip(g_model.state_dict().items(), t_model.state_dict().items()):
        assert np.array_equal(g.numpy(), t.numpy()), name
    x = np.random.RandomState(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    g_model.eval()
    t_model.eval()
    np.testing.assert_allclose(g_model(gradiente.from_numpy(x)).detach().numpy(),
                               t_model(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_torch_checkpoint_features(tmp_path):
    base = torch.arange(12.0).reshape(3, 4)
    torch.save({"view": base.t(), "base": base, "param": torch.nn.Parameter(torch.ones(2)),
                "size": torch.Size([2, 3]), "dtype": torch.float64, "bytes": b"\x00\xff", "half": torch.ones(2).half(),
                "bf16": torch.tensor([1.5, -2.0], dtype=torch.bfloat16), "empty": torch.zeros(0, 3),
                "scalar": torch.tensor(3)}, tmp_path / "f.pt")
    out = gradiente.load(tmp_path / "f.pt")
    assert out["view"].tolist() == base.t().tolist() and out["base"].tolist() == base.tolist()
    out["base"][0, 1] = 100.0                               # views keep sharing their storage, as in PyTorch
    assert out["view"][1, 0].item() == 100.0
    assert isinstance(out["param"], gradiente.nn.Parameter) and out["param"].requires_grad
    assert out["size"] == (2, 3) and out["dtype"] is gradiente.float64 and out["bytes"] == b"\x00\xff"
    assert out["half"].dtype is gradiente.float16 and out["bf16"].tolist() == [1.5, -2.0]
    assert out["bf16"].dtype is gradiente.bfloat16                  # once widened to float32 on load
    assert out["empty"].shape == (0, 3) and out["scalar"].item() == 3 and out["scalar"].shape == ()


def test_export_is_loaded_by_torch(tmp_path):
    g_model = _model(gradiente)
    g_model(gradiente.randn(2, 1, 4, 4))
    path = tmp_path / "export.pt"
    gradiente.save(g_model.state_dict(), path, format="torch")
    state = torch.load(path, weights_only=True)
    t_model = _model(torch)
    assert repr(t_model.load_state_dict(state)) == "<All keys matched successfully>"
    for (name, g), (_, t) in zip(g_model.state_dict().items(), t_model.state_dict().items()):
        assert np.array_equal(g.numpy(), t.numpy()), name
    gradiente.save({"p": gradiente.nn.Parameter(gradiente.ones(2)), "n": [1, 2.5, "x", None], "i": 2 ** 40},
                   path, format="torch")
    other = torch.load(path, weights_only=True)
    assert isinstance(other["p"], torch.nn.Parameter) and other["n"] == [1, 2.5, "x", None] and other["i"] == 2 ** 40


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _with_pickle(path, payload, out):
    """A copy of the torch checkpoint at ``path`` whose data.pkl is ``payload``."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            target.writestr(name, payload if name.endswith("data.pkl") else source.read(name))


def test_malicious_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    torch.save({"w": torch.ones(2)}, tmp_path / "clean.pt")
    _with_pickle(tmp_path / "clean.pt", pickle.dumps({"w": _Evil(marker)}, protocol=2), tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError,
                       match=r"Unsupported global: GLOBAL (posix|os|nt)\.system was not an allowed global"):
        gradiente.load(tmp_path / "evil.pt")
    assert not marker.exists()

    # a whole pickled model: refused in PyTorch's words, which offer weights_only=False (it loads in both)
    torch.save(torch.nn.Linear(2, 2), tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError) as ours:
        gradiente.load(tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(tmp_path / "whole.pt")
    assert str(ours.value) == str(theirs.value)
    assert isinstance(gradiente.load(tmp_path / "whole.pt", weights_only=False), gradiente.nn.Linear)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "bad_offsets", "bad_zip", "plain_pickle"])
def test_corrupt_files_fail_clearly(tmp_path, damage):
    good = io.BytesIO()
    gradiente.save({"a": gradiente.ones(4)}, good, format="safetensors")
    data = good.getvalue()
    if damage == "truncated":
        data = data[:-3]
    elif damage == "garbage":
        data = b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!"
    elif damage == "bad_offsets":
        data = data.replace(b'"data_offsets":[0,16]', b'"data_offsets":[0,99]')
    elif damage == "bad_zip":
        data = b"PK\x03\x04" + b"\x00" * 40
    else:
        data = pickle.dumps({"a": 1}, protocol=2)
    with pytest.raises(RuntimeError, match=r"gradiente\.load: not a valid checkpoint file"):
        gradiente.load(io.BytesIO(data))


def test_unsupported_objects_are_refused():
    """What pickle cannot write, neither can torch.save: PyTorch's exceptions and words."""
    def local_class_instance(lib):
        class Local(lib.nn.Module):
            pass
        return Local()

    for make in (lambda lib: (x for x in range(2)), local_class_instance, lambda lib: (lambda x: x)):
        errors = []
        for lib in (gradiente, torch):
            with pytest.raises(Exception) as caught:
                lib.save(make(lib), io.BytesIO())
            errors.append((type(caught.value), str(caught.value).split(" at 0x")[0]))
        assert errors[0] == errors[1]
    with pytest.raises(TypeError, match="format='safetensors'"):
        gradiente.save(gradiente.nn.Linear(2, 2), io.BytesIO(), format="safetensors")


# --- checkpoints of plain data (issue 16 item 7): NumPy arrays and scalars, numbers, containers ---------------------

def _plain_data():
    return {"array": np.arange(6).reshape(2, 3), "half": np.ones((2, 2), dtype=np.float16),
            "big_endian": np.array([1.5, -2.5], dtype=">f4"),
            "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
            "strided": np.arange(10)[::3], "empty": np.zeros((0, 3)), "zero_d": np.array(3.0),
            "strings": np.array(["ab", "c"]), "complex": np.array([1 + 2j], dtype=np.complex64),
            "bools": np.array([True, False]), "f32": np.float32(1.5), "i64": np.int64(-7), "flag": np.bool_(True),
            "f64": np.float64(2.5), "text": np.str_("xy"), "numbers": [1, 2.5, 3j, -(2 ** 70)],
            "plain": ("x", None, True, b"\x00\xff", b""), "nested": {"k": [np.arange(3), {"deep": np.float32(2)}]}}


def _assert_same_data(ours, theirs):
    """Equal values of equal types, recursively (arrays: values, dtype and shape)."""
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _assert_same_data(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same_data(a, b)
    elif isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and np.array_equal(ours, theirs)
        assert ours.flags.writeable
    else:
        assert ours == theirs and (not isinstance(theirs, np.generic) or ours.dtype == theirs.dtype)


def test_torch_saved_plain_data_loads_as_torch_loads_it(tmp_path):
    path = tmp_path / "data.pt"
    torch.save(_plain_data(), path)
    reference = torch.load(path, weights_only=False)
    _assert_same_data(gradiente.load(path), reference)
    # weights_only=False is accepted and means the same safe reader
    _assert_same_data(gradiente.load(path, weights_only=False), reference)


def test_our_plain_data_loads_in_torch(tmp_path):
    """What torch reads back from our file is what it reads back from its own (NumPy's protocol-2 pickles give a
    big-endian array back in native order, the values unchanged)."""
    ours, theirs = tmp_path / "ours.pt", tmp_path / "theirs.pt"
    gradiente.save(_plain_data(), ours)
    torch.save(_plain_data(), theirs)
    reference = torch.load(theirs, weights_only=False)
    _assert_same_data(torch.load(ours, weights_only=False), reference)
    _assert_same_data(gradiente.load(ours), reference)


@pytest.mark.parametrize("obj", [np.arange(3), np.float32(1.5)], ids=["array", "scalar"])
def test_torchs_default_refuses_numpy_in_ours_as_in_its_own(tmp_path, obj):
    """PyTorch's weights_only=True refuses NumPy's reconstructors in any file; ours are refused alike, and, with the
    names allowlisted as PyTorch's message suggests, read."""
    messages = []
    for lib in (torch, gradiente):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(obj, path)
        with pytest.raises(pickle.UnpicklingError) as info:
            torch.load(path)
        messages.append(str(info.value).split("WeightsUnpickler error: ")[1].split(" was not")[0])
    assert messages[0] == messages[1]
    numpy_names = [np._core.multiarray._reconstruct, np._core.multiarray.scalar, np.ndarray, np.dtype,
                   type(np.dtype(np.float32)), type(np.dtype(np.int64))]
    with torch.serialization.safe_globals(numpy_names):
        _assert_same_data(torch.load(tmp_path / "gradiente.pt"), obj)


def test_plain_data_in_safetensors(tmp_path):
    data = {"w": gradiente.ones(2), "array": np.arange(6, dtype=np.float32).reshape(2, 3), "zero_d": np.array(2.5),
            "scalar": np.int32(4), "numbers": [1, 2.5], "half": np.float16(0.5)}
    path = tmp_path / "data.safetensors"
    gradiente.save(data, path)
    loaded = gradiente.load(path)
    _assert_same_data({k: v for k, v in loaded.items() if k != "w"}, {k: v for k, v in data.items() if k != "w"})
    assert loaded["w"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="safetensors cannot store NumPy arrays of dtype <U1"):
        gradiente.save({"s": np.array(["a"])}, tmp_path / "s.safetensors")


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")      # np.matrix's own warning
def test_object_arrays_and_subclasses_are_refused_when_saving():
    for bad in (np.array([1, "a"], dtype=object), np.ma.masked_array([1, 2]), np.matrix([[1, 2]])):
        with pytest.raises(TypeError, match="NumPy arrays and scalars \\(of numbers, bools or strings\\)"):
            gradiente.save({"x": bad}, io.BytesIO())
