"""A protocol-buffer encoder small enough to read in one sitting: the few wire types TensorBoard's messages use.

A protobuf message is a run of fields, each a *key* (``field_number << 3 | wire_type``, written as a varint)
followed by its value. Four wire types cover every message an event file holds:

* 0, varint: integers, enums and bools, seven bits a byte, low bits first, the top bit set on every byte but the
  last. A negative integer is its 64-bit two's complement (ten bytes), as protobuf writes ``int32``/``int64``.
* 1, fixed64: a ``double``, 8 bytes little-endian.
* 2, length-delimited: a varint length, then that many bytes: strings (UTF-8), ``bytes``, nested messages and
  *packed* repeated numbers (every element back to back under one key).
* 5, fixed32: a ``float``, 4 bytes little-endian.

Proto3 leaves out a singular scalar field that holds its default (0, 0.0, "" or b""), so a reader sees the
default either way; a field of a ``oneof`` or a message field has presence and is written even when it holds
the default: callers say so with ``keep_default=True``. Fields are written in field-number order, as protobuf's
own serializer writes them, so that equal messages give equal bytes.

Why by hand: PyTorch's ``torch.utils.tensorboard`` needs the ``tensorboard`` and ``protobuf`` packages for
this; gradiente writes the same bytes with nothing but the standard library.
"""
import struct

__all__ = ["varint", "field_varint", "field_double", "field_float", "field_bytes", "field_string",
           "field_message", "field_packed_doubles", "field_packed_floats", "field_packed_varints", "message"]

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5
_UINT64 = (1 << 64) - 1


def varint(value):
    """``value`` as a base-128 varint; a negative integer as its 64-bit two's complement."""
    value = int(value) & _UINT64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number, wire_type):
    return varint(number << 3 | wire_type)


def field_varint(number, value, keep_default=False):
    """An integer, enum or bool field."""
    if not value and not keep_default:
        return b""
    return _key(number, _VARINT) + varint(value)


def _is_default_float(packed):
    # -0.0 is not the default: protobuf compares the bits, so a negative zero is written
    return not any(packed)


def field_double(number, value, keep_default=False):
    """A ``double`` field (fixed64)."""
    packed = struct.pack("<d", value)
    if _is_default_float(packed) and not keep_default:
        return b""
    return _key(number, _FIXED64) + packed


def field_float(number, value, keep_default=False):
    """A ``float`` field (fixed32): the value rounded to single precision."""
    packed = struct.pack("<f", value)
    if _is_default_float(packed) and not keep_default:
        return b""
    return _key(number, _FIXED32) + packed


def field_bytes(number, data, keep_default=False):
    """A ``bytes`` field."""
    if not data and not keep_default:
        return b""
    return _key(number, _LENGTH_DELIMITED) + varint(len(data)) + bytes(data)


def field_string(number, text, keep_default=False):
    """A ``string`` field, UTF-8 encoded."""
    return field_bytes(number, text.encode("utf-8"), keep_default)


def field_message(number, encoded):
    """A nested message, already encoded; written even when empty (a message field has presence)."""
    return field_bytes(number, encoded, keep_default=True)


def field_packed_doubles(number, values):
    """A packed ``repeated double`` field; nothing when there are no values."""
    values = list(values)
    return field_bytes(number, struct.pack(f"<{len(values)}d", *values))


def field_packed_floats(number, values):
    """A packed ``repeated float`` field; nothing when there are no values."""
    values = list(values)
    return field_bytes(number, struct.pack(f"<{len(values)}f", *values))


def field_packed_varints(number, values):
    """A packed repeated integer, enum or bool field; nothing when there are no values."""
    return field_bytes(number, b"".join(varint(v) for v in values))


def message(*fields):
    """The encoded message made of ``fields`` (each already encoded, in field-number order)."""
    return b"".join(fields)
