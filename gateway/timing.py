"""The time a request spends in each phase (Kafka calls, queries, shared tables), added up for its Server-Timing
header. The accumulator is here, in the lowest layer, because the gateway's calls add to it; console/timing.py
opens it for each request and writes the header."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context

_spent: ContextVar[dict[str, list[float]] | None] = ContextVar("console_server_timing", default=None)
_adding = threading.Lock()  # a request's own threads (in_request) add to the same phases


@contextmanager
def timed(phase: str) -> Iterator[None]:
    """Adds the time inside the block to `phase` of the current request (nothing outside a request)."""
    spent = _spent.get()
    if spent is None:
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        took = time.perf_counter() - started
        with _adding:
            entry = spent.setdefault(phase, [0.0, 0])
            entry[0] += took
            entry[1] += 1


def in_request(fn: Callable) -> Callable:
    """`fn`, to run on another thread yet count for the request that hands it over (its Kafka calls above all)."""
    context = copy_context()
    return lambda *args, **kwargs: context.run(fn, *args, **kwargs)


