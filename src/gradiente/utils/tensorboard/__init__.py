"""``gradiente.utils.tensorboard``, as ``torch.utils.tensorboard``: ``SummaryWriter`` writes TensorBoard event
files (``tensorboard --logdir runs`` shows them).

Unlike PyTorch's module, which wraps the ``tensorboard`` package and raises ``ImportError`` without it, this one
needs nothing outside the standard library and NumPy (matplotlib only for ``add_figure``): it encodes the
protobuf messages and frames the records itself. Reading order: ``protobuf.py`` (the wire format),
``messages.py`` (TensorBoard's messages), ``crc32c.py`` and ``record_writer.py`` (the TFRecord framing),
``event_file.py`` (one event file), ``summary.py`` (values to summaries, with ``images.py``, ``png.py`` and
``embedding.py``), and ``writer.py`` (``SummaryWriter``).
"""
from .record_writer import RecordWriter
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
