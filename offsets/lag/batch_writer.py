"""Where a sweep's batches are written. On PostgreSQL, by a thread of its own on a connection of its own: the server
stores one batch of samples and statuses while this process reads and judges the next (a 50,000-group sweep spent
about a third of its storing time waiting for the server). On SQLite, or inside a caller's transaction (whose
rows another connection would not see, nor roll back), each batch is written in place, as before."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import DEFAULT_DB_ALIAS, connection, connections

WRITES_AHEAD = 2  # batches handed over and not yet written: bounds the rows held in memory


class BatchWriter:
    def __init__(self) -> None:
        overlapped = connection.vendor == "postgresql" and not connection.in_atomic_block
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lag-writer") if overlapped else None
        self._pending: deque[Future] = deque()

    def write(self, work: Callable[[], None]) -> None:
        """Runs `work` (one batch's transaction) now, or hands it to the writer thread; a failed write is raised
        by the next call or by close()."""
        if self._pool is None:
            work()
            return
        while len(self._pending) >= WRITES_AHEAD:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(work))

    def close(self) -> None:
        """Waits for every batch handed over; the writer thread's connection is closed in that thread. Closing
        again does nothing."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._pending.clear()
            pool.submit(lambda: connections[DEFAULT_DB_ALIAS].close())  # the writer thread's own connection
            pool.shutdown(wait=True)
