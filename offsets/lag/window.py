"""A group's lag window: the last few samples of every partition it committed on, as compact columns.

A sweep at 50,000 groups reads, extends and writes 50,000 windows of about 40 points each. As nested JSON lists that
was 31 MB decoded into millions of small lists and ints every sweep (seconds of a 30-second interval); here a
window is three flat lists (times, partition keys, and three integers per point) that travel as one zlib-packed
array, so decoding and encoding are a few C calls per group and the status logic slices columns instead of
walking tuples.

Pure: no Kafka, no database.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

# A point is (committed, end, last stable offset). Offsets are never negative, so -1 can mean "none": a missing
# point (the group was not sampled then, or did not commit there yet) has committed -1; a point taken before the
# last stable offset was asked for has stable -1.
NONE = -1
WIDTH = 3
_HEADER = struct.Struct("<BHI")  # format, points per series, partitions
_FORMAT = 1


@dataclass(frozen=True)
class LagWindow:
    times: tuple[float, ...] = ()
    keys: tuple[str, ...] = ()  # "topic-partition"
    # For keys[k], sample i: values[(k * len(times) + i) * WIDTH:...+WIDTH] = committed, end, stable.
    values: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.keys)

    def series(self, k: int) -> list[int]:
        """The flat points of keys[k], oldest first (WIDTH integers each)."""
        span = len(self.times) * WIDTH
        return list(self.values[k * span:(k + 1) * span])

    def columns(self, k: int) -> tuple[list[float], list[int], list[int], list[int]]:
        """(times, committed, ends, stables) of keys[k]'s points that are there, oldest first."""
        flat = self.series(k)
        committed, ends, stables = flat[0::WIDTH], flat[1::WIDTH], flat[2::WIDTH]
        if NONE not in committed:
            return list(self.times), committed, ends, stables
        present = [i for i, c in enumerate(committed) if c != NONE]
        return ([self.times[i] for i in present], [committed[i] for i in present], [ends[i] for i in present],
                [stables[i] for i in present])

    def newest(self) -> Iterator[tuple[str, int, int]]:
        """(key, committed, end) of each partition sampled at the newest time."""
        span = len(self.times) * WIDTH
        for k, key in enumerate(self.keys):
            at = (k + 1) * span - WIDTH
            if self.values[at] != NONE:
                yield key, self.values[at], self.values[at + 1]

    def as_dict(self) -> dict:
        """A readable form: {"times": [...], "partitions": {key: [[committed, end(, stable)] or None, ...]}}."""
        partitions = {}
        for k, key in enumerate(self.keys):
            flat = self.series(k)
            partitions[key] = [None if flat[i] == NONE else
                               flat[i:i + 2] if flat[i + 2] == NONE else flat[i:i + 3]
                               for i in range(0, len(flat), WIDTH)]
        return {"times": list(self.times), "partitions": partitions}

    @classmethod
    def from_dict(cls, window: dict) -> LagWindow:
        """From the readable form (and the JSON windows stored before this one)."""
        times = tuple(float(t) for t in window.get("times", []))
        keys, values = [], []
        for key, series in window.get("partitions", {}).items():
            padded = [None] * (len(times) - len(series)) + list(series)[-len(times):] if times else []
            keys.append(key)
            for point in padded:
                if point is None:
                    values += (NONE, NONE, NONE)
                else:
                    stable = point[2] if len(point) > 2 and point[2] is not None else NONE
                    values += (int(point[0]), int(point[1]), int(stable))
        return cls(times, tuple(keys), values)

    def to_bytes(self) -> bytes:
        return self.pack(self.times, self.keys, self.values)

    @staticmethod
    def pack(times, keys, values) -> bytes:
        """The stored form of a window from its times, keys and flat values (lists, or numpy arrays of them)."""
        return LagWindow.pack_raw(_packed(times, "d", "<f8"), len(times), keys, _packed(values, "q", "<i8"))

    @staticmethod
    def pack_raw(times: bytes, width: int, keys, values: bytes) -> bytes:
        keys_text = "\n".join(keys).encode()  # Kafka topic names hold no newline ([a-zA-Z0-9._-])
        body = b"".join((_HEADER.pack(_FORMAT, width, len(keys)), times, struct.pack("<I", len(keys_text)),
                         keys_text, values))
        # Most points repeat the one before (an idle group), so even the fastest level shrinks a window severalfold.
        return zlib.compress(body, 1)

    @classmethod
    def from_bytes(cls, blob: bytes | memoryview | None) -> LagWindow:
        if not blob:
            return cls()
        body = zlib.decompress(blob)
        form, width, count = _HEADER.unpack_from(body)
        if form != _FORMAT:
            return cls()  # a window of a later format is dropped, not misread: the next samples rebuild it
        at = _HEADER.size
        times = array("d")
        times.frombytes(body[at:at + 8 * width])
        at += 8 * width
        (size,) = struct.unpack_from("<I", body, at)
        at += 4
        keys = tuple(body[at:at + size].decode().split("\n")) if count else ()
        values = array("q")
        values.frombytes(body[at + size:])
        return cls(tuple(times), keys, values.tolist())

    def append(self, time_s: float, observed: dict[str, tuple], size: int) -> LagWindow:
        """The window with one more sample, keeping the newest `size`: a partition observed now gets its point,
        one not observed a missing point, one missing from the whole window is dropped, and one seen for the first
        time is padded with missing points before this one."""
        width = len(self.times)
        drop = max(0, width + 1 - size) * WIDTH  # leading values of each series that fall out of the window
        span = width * WIDTH
        keys: list[str] = []
        values: list[int] = []
        for k, key in enumerate(self.keys):
            series = self.values[k * span + drop:(k + 1) * span]
            point = observed.get(key)
            if point is None:
                if series[0::WIDTH].count(NONE) * WIDTH == len(series):
                    continue  # nothing left of it in the window
                series = list(series) + [NONE, NONE, NONE]
            else:
                series = list(series) + [point[0], point[1], NONE if len(point) < 3 or point[2] is None else point[2]]
            keys.append(key)
            values += series
        new_width = min(width + 1, size)
        padding = [NONE] * ((new_width - 1) * WIDTH)
        known = set(self.keys)
        for key, point in observed.items():
            if key not in known:
                keys.append(key)
                values += padding
                values += (point[0], point[1], NONE if len(point) < 3 or point[2] is None else point[2])
        times = (*self.times, float(time_s))[-size:]
        return LagWindow(times, tuple(keys), values)

    def totals(self) -> list[int | None]:
        """Total lag at each sample (None where no partition had a point), for a sparkline."""
        width = len(self.times)
        totals: list[int | None] = [None] * width
        span = width * WIDTH
        for k in range(len(self.keys)):
            flat = self.values[k * span:(k + 1) * span]
            for i, at in enumerate(range(0, span, WIDTH)):
                if flat[at] != NONE:
                    totals[i] = (totals[i] or 0) + max(0, flat[at + 1] - flat[at])
        return totals


def _packed(values, code: str, dtype: str) -> bytes:
    if hasattr(values, "astype"):  # a numpy array
        return values.astype(dtype, copy=False).tobytes()
    return array(code, values).tobytes()
