"""``EventFileWriter``: one event file, ``events.out.tfevents.<time>.<host>.<pid>.<counter><suffix>``, named as
TensorBoard's writer names it, that starts with the ``file_version`` event.

Intended difference from TensorBoard's writer: no background thread. TensorBoard hands each event to a thread
that writes it and flushes the file every ``flush_secs``; here events wait in a list and are written when
``max_queue`` of them are waiting, when ``flush_secs`` have passed at the time of an ``add_event``, on ``flush()``
and ``close()``, and when the writer is garbage collected or the program exits (a program that never calls
``close`` loses nothing). The file's bytes are the same; only the moment they reach the disk can differ.
"""
import itertools
import os
import socket
import threading
import time
import weakref

from . import messages
from .record_writer import RecordWriter

__all__ = ["EventFileWriter"]

#: the name of this writer, stored in the first event (TensorBoard stores its own module's name there)
WRITER_NAME = "gradiente.utils.tensorboard"

# one counter for every file this process opens, so two writers created in the same second get distinct names
_file_counter = itertools.count()
_counter_lock = threading.Lock()


def _next_file_number():
    with _counter_lock:
        return next(_file_counter)


def _write_pending(record_writer, pending):
    for data in pending:
        record_writer.write(data)
    pending.clear()
    record_writer.flush()


def _close(record_writer, pending):
    if not record_writer.closed:
        _write_pending(record_writer, pending)
        record_writer.close()


class EventFileWriter:
    """Writes serialized ``Event`` messages, framed as TFRecords, to a new event file in ``logdir``."""

    def __init__(self, logdir, max_queue_size=10, flush_secs=120, filename_suffix=""):
        self._logdir = logdir
        os.makedirs(logdir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{_next_file_number()}")
        self._file_name = os.path.join(logdir, name) + filename_suffix
        self._records = RecordWriter(open(self._file_name, "wb"))  # noqa: SIM115 - closed by close() or at exit
        self._pending = []
        self._max_queue_size = max_queue_size
        self._flush_secs = flush_secs
        self._last_flush = time.time()
        self._closer = weakref.finalize(self, _close, self._records, self._pending)
        self.add_event(messages.event(wall_time=time.time(), file_version="brain.Event:2",
                                      source_writer=WRITER_NAME))
        self.flush()

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        """Queues ``event``, an encoded ``Event`` message (bytes)."""
        if not isinstance(event, bytes):
            raise TypeError(f"Expected an encoded Event (bytes),  but got {type(event)}")
        if self._records.closed:
            raise OSError("Writer is closed")
        self._pending.append(event)
        if len(self._pending) >= self._max_queue_size or time.time() - self._last_flush >= self._flush_secs:
            self.flush()

    def flush(self):
        """Writes every queued event to the file and flushes it to the operating system."""
        if self._records.closed:
            raise OSError("Writer is closed")
        _write_pending(self._records, self._pending)
        self._last_flush = time.time()

    def close(self):
        """Writes what is queued and closes the file; a second call does nothing."""
        self._closer()
