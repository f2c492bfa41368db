"""How many bytes a record takes on the broker when it is written alone, pure: the size the broker holds against
a topic's `max.message.bytes`. Kafka's record batch format v2: a 61-byte batch header, then the record as a
length-prefixed run of zig-zag varints and bytes (KIP-98's DefaultRecord)."""

from __future__ import annotations

BATCH_OVERHEAD = 61  # base offset, length, leader epoch, magic, CRC, attributes, deltas, times, producer, count


def varint_size(value: int) -> int:
    """Bytes of a zig-zag varint."""
    encoded = (value << 1) ^ (value >> 63)
    size = 1
    while encoded >= 0x80:
        encoded >>= 7
        size += 1
    return size


def _sized(data: bytes | None) -> int:
    return varint_size(-1) if data is None else varint_size(len(data)) + len(data)


def record_batch_bytes(key: bytes | None, value: bytes | None,
                       headers: tuple[tuple[str, bytes | None], ...] = ()) -> int:
    """The size of a batch holding only this record (timestamp and offset deltas 0)."""
    body = 1 + varint_size(0) + varint_size(0) + _sized(key) + _sized(value) + varint_size(len(headers))
    for name, data in headers:
        body += _sized(name.encode("utf-8")) + _sized(data)
    return BATCH_OVERHEAD + varint_size(body) + body
