"""``RecordWriter``: frames each serialized event as a TFRecord, the container format of TensorBoard's event files.

One record is, all little-endian::

    uint64  length of the data
    uint32  masked CRC-32C of those 8 length bytes
    bytes   data
    uint32  masked CRC-32C of the data

The length has a checksum of its own so that a reader can tell a torn or corrupt length from a real one before it
trusts it to skip ahead.
"""
import struct

from .crc32c import masked_crc32c

__all__ = ["RecordWriter"]


def frame_record(data):
    """``data`` (bytes) framed as one TFRecord."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


class RecordWriter:
    """Writes TFRecords to ``writer``, an open binary file (anything with ``write``, ``flush`` and ``close``)."""

    def __init__(self, writer):
        self._writer = writer

    def write(self, data):
        self._writer.write(frame_record(data))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    @property
    def closed(self):
        return self._writer.closed
