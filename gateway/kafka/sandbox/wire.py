"""How a caller and a client process talk: length-prefixed pickles over the Unix socket (a peer is only heard once
it sent the host's token: see gateway.kafka.sandbox.child), and the requests that are not KafkaAdmin methods."""

from __future__ import annotations

import pickle
import socket
import struct
import threading
from collections.abc import Iterator

HEADER = struct.Struct("!I")
FORGET = "__forget__"  # drops cached clients and fail-fast marks, as gateway.kafka.reset.forget_clients() does
STOP = "__stop__"  # retires the client process at once: its calls in flight end with it
# The answer id of the notice sent before an idle stop: requests a peer still awaits then were never run, so it
# may send them again to a fresh process.
IDLE_NOTICE = 0


def read_message(stream) -> object | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return pickle.loads(payload)


def read_messages(stream) -> Iterator[object]:
    """Messages until the stream ends or one is torn (its sender died mid-write)."""
    while True:
        try:
            message = read_message(stream)
        except Exception:  # a torn message from a dying peer
            return
        if message is None:
            return
        yield message


class _Frames:
    """Takes a pickle frame by frame (about 64 KiB each, pickle's framing). Each write is a call into Python, where
    the interpreter may hand the GIL to a thread waiting for it: one pickle.dumps of a big answer made of tuples,
    strings and numbers (300,000 partitions' offsets) holds it for the whole dump, 0.4 s here, and a page's small
    call served by the same client process would wait that long to even start."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)


def encode_message(message: object) -> bytes:
    frames = _Frames()
    pickle.Pickler(frames, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
    payload = b"".join(frames.parts)
    return HEADER.pack(len(payload)) + payload


def send_message(sock: socket.socket, lock: threading.Lock, message: object) -> None:
    data = encode_message(message)
    with lock:
        sock.sendall(data)
