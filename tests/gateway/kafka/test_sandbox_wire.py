"""The client processes' wire format (gateway/kafka/sandbox/wire.py): a big answer's pickling gives the GIL up along
the way, so a page's small call served by the same client process is not held up for the whole of it; and what is
sent reads back as it was."""

from __future__ import annotations

import io
import threading
import time

from gateway.kafka.sandbox.wire import encode_message, read_message, read_messages
from gateway.kafka.types import PartitionRef


def _sweep_answer(partitions: int, ref=PartitionRef) -> dict:
    """The shape of a lag sweep's answer: offsets by partition."""
    return {ref(f"topic-{i // 4:05d}", i % 4): (i, i + 7) for i in range(partitions)}


def test_what_is_sent_reads_back_as_it_was():
    answer = _sweep_answer(50_000)
    stream = io.BytesIO(encode_message((7, True, answer)) + encode_message((8, False, None)))
    assert list(read_messages(stream)) == [(7, True, answer), (8, False, None)]
    assert read_message(io.BytesIO(b"")) is None


def test_pickling_a_big_answer_lets_another_thread_run_meanwhile():
    """Another thread asks for the GIL every millisecond while a big answer of plain tuples is pickled (objects of
    our own classes call into Python as they are pickled; tuples, strings and numbers do not): with one pickle.dumps
    it got none until the dump ended (half a second here), framed it gets it at every 64 KiB written."""
    answer = _sweep_answer(300_000, ref=lambda topic, partition: (topic, partition))
    ticks: list[float] = []
    stop = threading.Event()

    def ticker() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    time.sleep(0.02)
    started = time.perf_counter()
    encode_message(answer)
    ended = time.perf_counter()
    stop.set()
    thread.join()
    during = [tick for tick in ticks if started <= tick <= ended]
    gaps = [b - a for a, b in zip([started, *during], [*during, ended])]
    assert ended - started > 0.05  # big enough for the test to mean something
    assert max(gaps) < (ended - started) / 3, \
        f"the ticker waited {max(gaps) * 1000:.0f} ms of the {(ended - started) * 1000:.0f} ms pickling took"
