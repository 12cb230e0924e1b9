"""CRC-32C (Castagnoli), the checksum that frames every TFRecord, computed with a 256-entry table.

Why by hand: the standard library's ``zlib.crc32`` and ``binascii.crc32`` use the other common polynomial
(CRC-32/ISO-HDLC, 0xEDB88320 reflected), and TensorBoard checks each record against CRC-32C (0x82F63B78
reflected); no module of the standard library offers it. The table method is the textbook one: the CRC of a
byte depends only on that byte xor the low byte of the running CRC, so the 256 possible results are computed
once and each byte of data then costs one lookup, one shift and one xor.
"""

__all__ = ["crc32c", "masked_crc32c"]

_POLYNOMIAL = 0x82F63B78   # CRC-32C's polynomial, bit-reversed (the CRC is computed low bit first)


def _table_entry(byte):
    crc = byte
    for _ in range(8):
        crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
    return crc


_TABLE = tuple(_table_entry(byte) for byte in range(256))


def crc32c(data):
    """The CRC-32C of ``data`` (bytes)."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The CRC rotated right by 15 bits plus a constant, as TFRecord stores it: a CRC computed over data that
    itself holds CRCs is then less likely to collide (TensorFlow's ``crc32c::Mask``)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
