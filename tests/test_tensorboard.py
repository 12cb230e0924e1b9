"""gradiente.utils.tensorboard against PyTorch's torch.utils.tensorboard: the same calls write, into two
directories, event files that TensorBoard's own reader (which checks every record's CRC) reads back as the same
events, field by field, in the same directory layout."""
import io
import os
import re
import socket
import subprocess
import sys

import numpy as np
import pytest
import torch as ref

pytest.importorskip("tensorboard")
from google.protobuf import text_format
from PIL import Image
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub import errors as tb_errors
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import PyRecordReader_New
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from torch.utils.tensorboard import SummaryWriter as RefWriter

import gradiente as torch
from gradiente.utils.tensorboard import SummaryWriter

EVENT_FILE = re.compile(rf"events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}\.{os.getpid()}\.\d+")


def read_records(path):
    """Every record of an event file, through TensorBoard's record reader, which raises on a bad CRC."""
    reader = PyRecordReader_New(path)
    records = []
    while True:
        try:
            reader.GetNext()
        except tb_errors.OutOfRangeError:
            return records
        records.append(reader.record())


def comparable(raw):
    """An Event, with what may differ set aside: the wall time (unless the caller gave it: the tests give times
    before 2001), the writer's name, a PNG's bytes (compared as decoded pixels) and the hparams plugin's map
    order."""
    event = event_pb2.Event.FromString(raw)
    if event.wall_time > 1e9:
        event.ClearField("wall_time")
    event.ClearField("source_metadata")
    for value in event.summary.value:
        if value.HasField("image"):
            picture = Image.open(io.BytesIO(value.image.encoded_image_string))
            value.image.encoded_image_string = picture.mode.encode() + np.asarray(picture).tobytes()
        if value.metadata.plugin_data.plugin_name == "hparams":
            content = HParamsPluginData.FromString(value.metadata.plugin_data.content)
            value.metadata.plugin_data.content = content.SerializeToString(deterministic=True)
    return event


def event_file_order(name):
    parts = name.split(".")   # events.out.tfevents.<time>.<host, maybe dotted>.<pid>.<counter>
    return int(parts[3]), int(parts[-1])


def layout(root):
    """{directory relative to root: [the events of its event file]}, checking each file's name."""
    runs = {}
    for directory, _dirs, files in os.walk(root):
        events = [f for f in files if f.startswith("events.")]
        # in the order they were made: by time, then by the process's file counter
        for name in sorted(events, key=lambda f: event_file_order(f.removesuffix(".sfx"))):
            assert EVENT_FILE.fullmatch(name.removesuffix(".sfx")), name
            runs.setdefault(os.path.relpath(directory, root), []).append(read_records(os.path.join(directory, name)))
    return runs


def assert_same_events(ours_dir, ref_dir):
    ours, theirs = layout(ours_dir), layout(ref_dir)
    assert sorted(ours) == sorted(theirs)
    for run in ours:
        assert len(ours[run]) == len(theirs[run]), run
        for our_file, their_file in zip(ours[run], theirs[run]):
            assert len(our_file) == len(their_file), run
            for our_raw, their_raw in zip(our_file, their_file):
                ours_text = text_format.MessageToString(comparable(our_raw))
                assert ours_text == text_format.MessageToString(comparable(their_raw))
    return ours


def run_both(tmp_path, log, **writer_kwargs):
    """Calls ``log(lib, writer)`` with gradiente and with PyTorch, each writing under its own directory."""
    for lib, writer_class, name in ((torch, SummaryWriter, "ours"), (ref, RefWriter, "ref")):
        with writer_class(str(tmp_path / name), **writer_kwargs) as writer:
            log(lib, writer)
    return str(tmp_path / "ours"), str(tmp_path / "ref")


def test_scalars_every_kind_of_value(tmp_path):
    def log(lib, w):
        w.add_scalar("Loss/train", 2.5, 0)
        w.add_scalar("Loss/train", lib.tensor(1.25), 1)
        w.add_scalar("Loss/test", lib.tensor([0.75]), 2, walltime=1234.5)
        w.add_scalar("count", 7, None)
        w.add_scalar("np", np.float32(0.1), 3)
        w.add_scalar("array", np.array([[3.0]]), 4)
        w.add_scalar("zeros", 0.0, 5)
        w.add_scalar("zeros", -0.0, 6)
        w.add_scalar("odd", float("nan"), 7)
        w.add_scalar("odd", float("-inf"), 8)
        w.add_scalar("big step", 1.0, 2**40)
        w.add_scalar("new", 0.1, 9, new_style=True)
        w.add_scalar("new64", 0.1, 10, new_style=True, double_precision=True)
        w.add_scalar("new0", 0.0, 11, new_style=True)
        w.add_scalar("bf16", lib.tensor(1.5, dtype=lib.bfloat16), 12)
        w.flush()
    runs = assert_same_events(*run_both(tmp_path, log))
    assert len(runs["."][0]) == 16


def test_scalar_errors_match(tmp_path):
    for lib, writer_class, name in ((torch, SummaryWriter, "ours"), (ref, RefWriter, "ref")):
        with writer_class(str(tmp_path / name)) as w:
            with pytest.raises(AssertionError) as info:
                w.add_scalar("x", lib.tensor([1.0, 2.0, 3.0]), 0)
            with pytest.raises(NotImplementedError) as not_a_value:
                w.add_scalar("x", [1.0], 0)
            if lib is torch:
                ours = (str(info.value), str(not_a_value.value))
            else:
                assert ours == (str(info.value), str(not_a_value.value))


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    def log(lib, w):
        for step in range(3):
            w.add_scalars("run_14h/a", {"xsinx": step * np.sin(step), "xcosx": lib.tensor(step * 0.5)}, step)
        w.add_scalar("plain", 1.0, 0)
    ours = assert_same_events(*run_both(tmp_path, log))
    assert sorted(ours) == [".", "run_14h_a_xcosx", "run_14h_a_xsinx"]


def test_histograms(tmp_path):
    rng = np.random.default_rng(0)
    data = rng.normal(size=1000)

    def log(lib, w):
        w.add_histogram("tf bins", lib.tensor(data, dtype=lib.float32), 0)
        w.add_histogram("tf bins", data * 3 + 1, 1)
        w.add_histogram("one value", lib.tensor([2.0, 2.0]), 2)
        w.add_histogram("ints", lib.arange(20), 3)
        for step, bins in enumerate(["auto", "fd", "sturges", 7, [-3.0, 0.0, 1.0, 3.0]]):
            w.add_histogram(f"numpy {step}", data, 4 + step, bins=bins)
        w.add_histogram("merged", data, 10, bins=50, max_bins=7)
        w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 17.0, [1.0, 2.0, 3.0], [1, 2, 3], global_step=11)
    assert_same_events(*run_both(tmp_path, log))


def test_histogram_errors_match(tmp_path):
    for lib, writer_class, name in ((torch, SummaryWriter, "ours"), (ref, RefWriter, "ref")):
        with writer_class(str(tmp_path / name)) as w:
            with pytest.raises(ValueError) as empty:
                w.add_histogram("empty", lib.tensor([]), 0)
            with pytest.raises(ValueError) as raw:
                w.add_histogram_raw("raw", 0, 1, 1, 1, 1, [1.0, 2.0], [1], 0)
            messages = (str(empty.value), str(raw.value))
            if lib is torch:
                ours = messages
            else:
                assert ours == messages


def test_text_and_tensors(tmp_path):
    def log(lib, w):
        w.add_text("lstm", "This is an **lstm**", 0)
        w.add_text("unicode", "αβγ ✓", 1)
        w.add_tensor("f32", lib.tensor([[1.5, -2.0], [0.25, 3.0]]), 2)
        w.add_tensor("f64", lib.tensor([0.1, -0.0], dtype=lib.float64), 3)
        w.add_tensor("i64", lib.tensor([-5, 2**40]), 4)
        w.add_tensor("i32", lib.tensor([-5, 7], dtype=lib.int32), 5)
        w.add_tensor("u8", lib.tensor([0, 255], dtype=lib.uint8), 6)
        w.add_tensor("f16", lib.tensor([1.5, -2.0], dtype=lib.float16), 7)
        w.add_tensor("bool", lib.tensor([True, False, True]), 8)
        w.add_tensor("c64", lib.tensor([1 + 2j, -3j], dtype=lib.complex64), 9)
    assert_same_events(*run_both(tmp_path, log))


def test_images(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.random((3, 5, 7))
    batch = rng.random((10, 1, 4, 3)).astype(np.float32)
    rgba = rng.random((4, 3, 2))

    def log(lib, w):
        w.add_image("chw", lib.tensor(chw), 0)
        w.add_image("clipped", lib.tensor(chw * 2 - 0.5), 1)
        w.add_image("hwc uint8", (chw.transpose(1, 2, 0) * 255).astype(np.uint8), 2, dataformats="HWC")
        w.add_image("hw", chw[0], 3, dataformats="HW")
        w.add_image("wh", lib.tensor(chw[0]), 4, dataformats="WH")
        w.add_image("rgba", rgba, 5)
        w.add_images("batch", lib.tensor(batch), 6)
        w.add_images("batch nhwc", batch.transpose(0, 2, 3, 1), 7, dataformats="NHWC")
    assert_same_events(*run_both(tmp_path, log))


def test_image_format_errors_match(tmp_path):
    for lib, writer_class, name in ((torch, SummaryWriter, "ours"), (ref, RefWriter, "ref")):
        with writer_class(str(tmp_path / name)) as w:
            with pytest.raises(AssertionError) as twice:
                w.add_image("x", np.zeros((2, 2)), 0, dataformats="HH")
            with pytest.raises(AssertionError) as wrong_rank:
                w.add_image("x", lib.zeros(2, 2), 0)
            messages = (str(twice.value), str(wrong_rank.value))
            if lib is torch:
                ours = messages
            else:
                assert ours == messages


def test_figures(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()         # (figures another test left open are not this test's)

    def log(lib, w):
        figure = plt.figure(figsize=(1.0, 0.8), dpi=40)
        plt.plot([0, 1, 2], [1, 0, 1])
        w.add_figure("one", figure, 0)
        figures = []
        for k in range(2):
            figures.append(plt.figure(figsize=(0.6, 0.5), dpi=40))
            plt.plot([0, 1], [k, 1 - k])
        w.add_figure("two", figures, 1)
    assert_same_events(*run_both(tmp_path, log))
    assert plt.get_fignums() == open_before          # add_figure closed the figures it drew


def test_hparams_runs_and_values(tmp_path):
    def log(lib, w):
        w.add_hparams({"lr": 0.1, "bsize": 4, "optim": "adam", "nesterov": True, "none": None,
                       "t": lib.tensor([0.5])},
                      {"hparam/accuracy": 0.9, "hparam/loss": lib.tensor(0.25)}, run_name="run0")
        w.add_hparams({"lr": 0.01, "optim": "sgd"}, {"hparam/accuracy": 0.8},
                      hparam_domain_discrete={"lr": [0.1, 0.01], "optim": ["adam", "sgd"]}, run_name="run1",
                      global_step=3)
    ours = assert_same_events(*run_both(tmp_path, log))
    assert sorted(ours) == [".", "run0", "run1"]


def test_hparams_default_run_name_is_the_time(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0})
    (run,) = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
    assert re.fullmatch(r"\d+\.\d+", run)


def test_hparams_errors_match(tmp_path):
    calls = [lambda w: w.add_hparams([("lr", 0.1)], {}),
             lambda w: w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": [1]}),
             lambda w: w.add_hparams({"lr": [0.1]}, {})]
    for lib, writer_class, name in ((torch, SummaryWriter, "ours"), (ref, RefWriter, "ref")):
        with writer_class(str(tmp_path / name)) as w:
            errors = []
            for call in calls:
                with pytest.raises((TypeError, ValueError)) as info:
                    call(w)
                errors.append((type(info.value), str(info.value)))
            if lib is torch:
                ours = errors
            else:
                assert ours == errors


def test_purge_step_suffix_and_reopening_after_close(tmp_path):
    def log(lib, w):
        w.add_scalar("a", 1.0, 5)
        w.close()
        w.add_scalar("a", 2.0, 6)   # a new event file, as PyTorch opens one
    ours_dir, ref_dir = run_both(tmp_path, log, purge_step=5, filename_suffix=".sfx")
    ours = assert_same_events(ours_dir, ref_dir)
    assert len(ours["."]) == 2
    assert all(name.endswith(".sfx") for name in os.listdir(ours_dir))


def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ours = SummaryWriter(comment="_lr0.1")
    theirs = RefWriter(comment="_lr0.1")
    ours.close()
    theirs.close()
    pattern = rf"runs/[A-Z][a-z]{{2}}\d{{2}}_\d{{2}}-\d{{2}}-\d{{2}}_{re.escape(socket.gethostname())}_lr0\.1"
    assert re.fullmatch(pattern, ours.get_logdir())
    assert re.fullmatch(pattern, theirs.get_logdir())
    assert os.path.isdir(ours.get_logdir())


def test_embedding_files(tmp_path):
    rng = np.random.default_rng(2)
    mat = rng.normal(size=(5, 3)).astype(np.float32)
    images = rng.random((5, 3, 4, 6)).astype(np.float32)

    def log(lib, w):
        w.add_embedding(lib.tensor(mat), metadata=[f"p{i}" for i in range(5)], label_img=lib.tensor(images))
        w.add_embedding(mat, metadata=[[i, i % 2] for i in range(5)], metadata_header=["n", "parity"],
                        global_step=3, tag="a/b%c")
        w.add_embedding(mat, tag="plain", global_step=4)
    ours_dir, ref_dir = run_both(tmp_path, log)
    for directory, _dirs, files in os.walk(ref_dir):
        for name in files:
            if name.startswith("events."):
                continue
            theirs = os.path.join(directory, name)
            ours = os.path.join(ours_dir, os.path.relpath(theirs, ref_dir))
            if name.endswith(".png"):
                assert np.array_equal(np.asarray(Image.open(ours)), np.asarray(Image.open(theirs)))
            else:
                with open(ours, "rb") as a, open(theirs, "rb") as b:
                    assert a.read() == b.read(), name
    assert os.path.isdir(os.path.join(ours_dir, "00003", "a%2fb%25c"))


def test_add_graph_says_why_it_is_missing(tmp_path):
    with SummaryWriter(str(tmp_path)) as w, pytest.raises(NotImplementedError, match=r"gradiente\.viz"):
        w.add_graph(torch.nn.Linear(2, 1), torch.zeros(1, 2))


def test_tensorboards_loader_reads_our_file_and_checks_its_crcs(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("loss", 0.5, 1)
    (name,) = os.listdir(tmp_path)
    path = str(tmp_path / name)
    events = list(EventFileLoader(path).Load())
    assert events[0].file_version == "brain.Event:2"
    # the loader turns an old-style simple_value into the scalars plugin's tensor as it reads
    assert events[1].summary.value[0].tensor.float_val == [0.5]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[-6] ^= 1   # one bit of the last event's data
    with open(path, "wb") as f:
        f.write(data)
    with pytest.raises(tb_errors.DataLossError, match="crc32"):
        read_records(path)


def test_events_wait_in_the_queue_until_flushed(tmp_path):
    w = SummaryWriter(str(tmp_path), max_queue=3)
    (name,) = os.listdir(tmp_path)
    path = str(tmp_path / name)
    w.add_scalar("a", 1.0, 0)
    w.add_scalar("a", 2.0, 1)
    assert len(read_records(path)) == 1
    w.add_scalar("a", 3.0, 2)   # the third fills the queue
    assert len(read_records(path)) == 4
    w.add_scalar("a", 4.0, 3)
    del w                       # nothing lost when the writer goes away unclosed
    assert len(read_records(path)) == 5


def test_no_tensorboard_or_protobuf_at_runtime(tmp_path):
    code = ("import sys, gradiente\n"
            "from gradiente.utils.tensorboard import SummaryWriter\n"
            f"w = SummaryWriter({str(tmp_path)!r})\n"
            "w.add_scalar('x', gradiente.tensor(1.0), 0); w.add_image('i', gradiente.rand(3, 2, 2), 0)\n"
            "w.add_histogram('h', gradiente.randn(10), 0); w.close()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorboard', 'google', 'PIL', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
