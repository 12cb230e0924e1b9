"""Whole models in checkpoints: ``torch.save(model, f)`` and loading it back with its classes allowlisted
(``torch.serialization.safe_globals``), as pytorch/examples' word_language_model and super_resolution do. Each
behaviour is compared with PyTorch's; loading still runs nothing but the allowlisted classes' ``__new__`` and
``__setstate__``."""
import io
import pickle

import numpy as np
import pytest
import torch

import gradiente


def _net_class(lib):
    class Net(lib.nn.Module):
        def __init__(self, tied=False):
            super().__init__()
            self.encoder = lib.nn.Embedding(10, 4)
            self.rnn = lib.nn.LSTM(4, 4)
            self.drop = lib.nn.Dropout(0.0)
            self.decoder = lib.nn.Linear(4, 10)
            if tied:
                self.decoder.weight = self.encoder.weight
            self.register_buffer("steps", lib.zeros(()))

        def forward(self, tokens):
            out, _ = self.rnn(self.drop(self.encoder(tokens)))
            return self.decoder(out)
    return Net


# module-level names, so that the files can name the classes (a local class cannot be pickled)
GradienteNet = _net_class(gradiente)
GradienteNet.__qualname__ = "GradienteNet"
TorchNet = _net_class(torch)
TorchNet.__qualname__ = "TorchNet"


def _allowlist(lib, net_class):
    m = lib.nn.modules
    return [net_class, m.sparse.Embedding, m.rnn.LSTM, m.dropout.Dropout, m.linear.Linear]


def _round_trip(lib, net_class, tied=False):
    lib.manual_seed(0)
    model = net_class(tied)
    buffer = io.BytesIO()
    lib.save(model, buffer)
    buffer.seek(0)
    before = lib.serialization.get_safe_globals()
    with lib.serialization.safe_globals(_allowlist(lib, net_class)):
        loaded = lib.load(buffer)
    assert set(lib.serialization.get_safe_globals()) == set(before)    # the block's entries are gone after it
    return model, loaded


@pytest.mark.parametrize("tied", [False, True])
def test_a_saved_model_loads_with_its_classes_allowlisted(tied):
    tokens = [[1, 2], [3, 4], [5, 6]]
    results = []
    for lib, net_class in ((gradiente, GradienteNet), (torch, TorchNet)):
        model, loaded = _round_trip(lib, net_class, tied)
        assert type(loaded) is net_class and loaded is not model
        out = loaded(lib.tensor(tokens))
        assert lib.equal(out, model(lib.tensor(tokens)))
        assert (loaded.decoder.weight is loaded.encoder.weight) == tied    # one Parameter, still one
        assert [name for name, _ in loaded.named_parameters()] == [name for name, _ in model.named_parameters()]
        results.append((str(loaded), out.detach().numpy()))
    assert results[0][0].replace("GradienteNet", "Net") == results[1][0].replace("TorchNet", "Net")
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6, atol=1e-6)


def test_a_saved_model_trains_on_after_loading():
    model, loaded = _round_trip(gradiente, GradienteNet)
    optimizer = gradiente.optim.SGD(loaded.parameters(), lr=0.1)
    loss = loaded(gradiente.tensor([[1, 2]])).sum()
    loss.backward()
    optimizer.step()
    assert not gradiente.equal(loaded.decoder.weight, model.decoder.weight)


def test_without_the_allowlist_the_class_is_refused_in_pytorchs_words():
    messages = []
    for lib, net_class in ((gradiente, GradienteNet), (torch, TorchNet)):
        buffer = io.BytesIO()
        lib.save(net_class(), buffer)
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError) as caught:
            lib.load(buffer)
        line = next(part for part in str(caught.value).split("\n") if "Unsupported global" in part)
        line = line[line.index("WeightsUnpickler error"):line.index("trust this class/function.") + 26]
        messages.append(line.replace(net_class.__qualname__, "Net"))
    assert messages[0] == messages[1]


def test_loading_builds_instances_without_calling_init():
    """Loading makes a bare instance of each allowlisted class and gives it its state, as pickle (and PyTorch's
    weights-only loader) does: the class's __init__ never runs."""
    calls = []
    for lib, net_class in ((gradiente, GradienteNet), (torch, TorchNet)):
        buffer = io.BytesIO()
        lib.save(net_class(), buffer)
        buffer.seek(0)
        original = net_class.__init__
        net_class.__init__ = lambda self, *a, name=lib.__name__, **k: calls.append(name)
        try:
            with lib.serialization.safe_globals(_allowlist(lib, net_class)):
                lib.load(buffer)
        finally:
            net_class.__init__ = original
    assert calls == []


def test_the_allowlist_functions_behave_as_pytorchs():
    seen = []
    for lib in (gradiente, torch):
        serialization = lib.serialization
        defaults = serialization.get_safe_globals()       # (PyTorch registers a few of its own)
        serialization.clear_safe_globals()
        serialization.add_safe_globals([GradienteNet, (TorchNet, "some.module.Net")])
        entries = serialization.get_safe_globals()
        with serialization.safe_globals([int]):
            during = len(serialization.get_safe_globals())
        after = len(serialization.get_safe_globals())
        serialization.clear_safe_globals()
        seen.append((sorted(map(repr, entries)), during, after, serialization.get_safe_globals()))
        serialization.add_safe_globals(defaults)
    assert seen[0] == seen[1]


def test_an_entry_may_give_the_name_the_file_uses():
    buffer = io.BytesIO()
    gradiente.save({"model": GradienteNet()}, buffer)
    raw = buffer.getvalue()
    assert b"GradienteNet" in raw
    buffer.seek(0)
    with gradiente.serialization.safe_globals([*_allowlist(gradiente, GradienteNet)[1:],
                                               (GradienteNet, f"{GradienteNet.__module__}.GradienteNet")]):
        loaded = gradiente.load(buffer)
    assert type(loaded["model"]) is GradienteNet


def test_sets_devices_and_functions_round_trip():
    data = {"set": {1, 2, 3}, "frozen": frozenset({"a"}), "device": gradiente.device("cpu"),
            "activation": gradiente.nn.functional.relu}
    buffer = io.BytesIO()
    gradiente.save(data, buffer)
    buffer.seek(0)
    with gradiente.serialization.safe_globals([gradiente.nn.functional.relu]):
        loaded = gradiente.load(buffer)
    assert loaded["set"] == {1, 2, 3} and loaded["frozen"] == frozenset({"a"})
    assert loaded["device"] == gradiente.device("cpu") and loaded["activation"] is gradiente.nn.functional.relu


class NotAModule:
    """A class this process has that is no nn.Module: weights_only=False still refuses to build it."""


def _saved(lib, obj):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_weights_only_false_loads_a_whole_model_of_classes_the_program_has():
    """PyTorch's "save and load the model" tutorial: ``torch.save(model, f)``, then ``torch.load(f,
    weights_only=False)``, with no allowlist. gradiente builds the model's classes, found among those the program
    already has, as bare instances given their state, and the loaded model computes what the saved one does."""
    tokens = [[1, 2], [3, 4]]
    for lib, net_class in ((gradiente, GradienteNet), (torch, TorchNet)):
        lib.manual_seed(0)
        model = net_class(tied=True)
        loaded = lib.load(_saved(lib, model), weights_only=False)
        assert type(loaded) is net_class and loaded is not model
        assert loaded.decoder.weight is loaded.encoder.weight
        assert lib.equal(loaded(lib.tensor(tokens)), model(lib.tensor(tokens)))


def test_weights_only_false_reads_pytorchs_whole_model_with_gradientes_classes():
    """A whole model written by real PyTorch names ``torch.nn.modules...`` classes: they are read as gradiente's
    (and the program's own class by its name, here this test module's ``TorchNet``, looked up, never imported)."""
    torch.manual_seed(0)
    model = TorchNet()
    buffer = _saved(torch, model)
    saved_class = TorchNet
    try:
        globals()["TorchNet"] = GradienteNet        # the name the file gives now finds gradiente's class
        loaded = gradiente.load(buffer, weights_only=False)
    finally:
        globals()["TorchNet"] = saved_class
    assert type(loaded) is GradienteNet
    assert type(loaded.decoder) is gradiente.nn.Linear and type(loaded.rnn) is gradiente.nn.LSTM
    out = loaded(gradiente.tensor([[1, 2]]))
    np.testing.assert_allclose(out.detach().numpy(), model(torch.tensor([[1, 2]])).detach().numpy(), rtol=1e-6,
                               atol=1e-6)


def test_weights_only_false_still_builds_no_other_class_and_imports_nothing():
    import sys
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        gradiente.load(_saved(gradiente, {"thing": NotAModule()}), weights_only=False)
    # a Module subclass the file says lives in a module this process has not imported: refused, not imported
    Elsewhere = type("Elsewhere", (gradiente.nn.Module,), {"__module__": "weights_only_false_never_imports_me"})
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        gradiente.load(_saved(gradiente, Elsewhere()), weights_only=False)
    assert "weights_only_false_never_imports_me" not in sys.modules
    # without weights_only=False, the program's classes still need the allowlist, as in PyTorch
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        gradiente.load(_saved(gradiente, GradienteNet()))


@pytest.mark.parametrize("writer", ["gradiente", "torch"])
def test_meta_tensors_are_saved_without_data_as_pytorch_saves_them(writer):
    """A model built on the meta device saves its tensors' dtype, shape and strides only
    (``torch._utils._rebuild_meta_tensor_no_storage``); each library reads the other's file."""
    libs = {"gradiente": gradiente, "torch": torch}
    lib = libs[writer]
    model = lib.nn.Linear(3, 2, device="meta", dtype=lib.float64)
    data = {"state": model.state_dict(), "param": model.weight,
            "grad": lib.zeros(4, device="meta", requires_grad=True)}
    raw = _saved(lib, data).getvalue()
    for reader in libs.values():
        loaded = reader.load(io.BytesIO(raw))
        for key, t in (("weight", loaded["state"]["weight"]), ("bias", loaded["state"]["bias"])):
            assert t.is_meta and t.dtype == reader.float64 and t.shape == model.state_dict()[key].shape
        assert type(loaded["param"]) is reader.nn.Parameter and loaded["param"].requires_grad
        assert loaded["grad"].is_meta and loaded["grad"].requires_grad and loaded["grad"].shape == (4,)
        assert repr(loaded["grad"]) == "tensor(..., device='meta', size=(4,), requires_grad=True)"
