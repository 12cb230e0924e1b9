"""A PNG encoder over the standard library's ``zlib``: enough for TensorBoard's images (8-bit RGB or RGBA).

A PNG file is a signature and a run of chunks (length, type, data, CRC-32 of type and data): ``IHDR`` (size,
bit depth, colour type), ``IDAT`` (the pixel rows, each prefixed by a filter byte, zlib-compressed) and
``IEND``. Every row uses filter 0 (none): the file is larger than one that picks a filter per row, as Pillow
does, but decodes to the same pixels, which is what TensorBoard shows. (PNG's chunk checksum is the ordinary
CRC-32 of ``zlib.crc32``, unlike TFRecord's CRC-32C.)
"""
import struct
import zlib

import numpy as np

__all__ = ["encode_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}   # channels -> PNG colour type: grey, grey+alpha, RGB, RGBA


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(pixels):
    """The PNG file of ``pixels``, a ``uint8`` array of shape (height, width, channels), 1 to 4 channels."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    height, width, channels = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, width * channels)], axis=1)
    return (_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + _chunk(b"IEND", b""))
