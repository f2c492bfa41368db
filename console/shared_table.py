"""A per-cluster snapshot of a list too big to build inside a request (every topic, every group), shared by every
web and worker process through Redis.

Building one costs seconds on a big cluster, so no request builds it: a background job rebuilds each cluster's
snapshot, one process at a time per cluster (a Redis lock), and pages only read it. A page that finds none (or one
much older than its job should allow) starts a rebuild in a background thread of its process, under the same lock,
and says the list is being built.

A change made through the console (a topic created, a group deleted...) is written at once as a per-row entry
beside the snapshot, keyed by the row's key; readers lay those entries over the snapshot until a snapshot taken
after them replaces them.

Per request a reader fetches only a small stamp (the snapshot's taken_at) and the changes; the blob is fetched and
decoded once per process per stamp.

Without Redis, each process keeps its own snapshots, built the same way in a background thread, and pages say so.

topics/table.py and offsets/group_table.py are the two tables; each says what a row is and how it is encoded.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import redis
from django.conf import settings

from console.gc_pause import cycle_collector_paused
# Snapshot, connection_version and LocalStore are this module's face too.
from console.shared_table_stores import (  # noqa: F401
    CHANGE_GRACE_S, Changes, LocalStore, RedisStore, Snapshot, StoreDown, connection_version, forget_redis_clients,
    redis_client, redis_failed,
)
from console.timing import timed

log = logging.getLogger(__name__)

_REQUEST_EVERY_S = 1.0  # a process starts at most one background rebuild per table and cluster this often
_DUE_SLACK_S = 1.0  # beat's runs drift by a little: a snapshot due within this much is rebuilt on this run


_tables: list[SharedTable] = []


def forget_redis_state() -> None:
    """For tests and benchmarks: ask Redis again at once, and drop every table's decoded copies."""
    forget_redis_clients()
    for table in list(_tables):
        table._forget_process_state()


class SharedTable:
    """One kind of snapshot: `name` names its Redis keys (console:<name>:snapshot:<cluster>...); a row is stored as
    the list `row_out` makes and read back with `row_in`; `key` names a row in the console's changes. `FORMAT` is
    bumped when the stored row layout changes, so older blobs are ignored (and rebuilt). `interval_setting` names
    the setting of how often its background job rebuilds it; `lock_setting` how long the rebuild lock lasts."""

    def __init__(self, name: str, *, format: int, row_out: Callable[[Any], list], row_in: Callable[[list], Any],
                 key: Callable[[Any], str], interval_setting: str, lock_setting: str,
                 row_complete: Callable[[Any], bool] = lambda row: True) -> None:
        self.name, self.format = name, format
        self.row_out, self.row_in, self.key, self.row_complete = row_out, row_in, key, row_complete
        self._interval_setting, self._lock_setting = interval_setting, lock_setting
        self._local = LocalStore(self)
        self._redis_stores: dict[str, RedisStore] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._last_request: dict[str, float] = {}
        self._threads_lock = threading.Lock()
        _tables.append(self)

    def interval_s(self) -> float:
        return getattr(settings, self._interval_setting)

    def lock_s(self) -> float:
        return getattr(settings, self._lock_setting)

    # --- encoding (pure) --------------------------------------------------------------------------------------

    def encode(self, snapshot: Snapshot, version: str) -> bytes:
        """One zlib-compressed JSON document, a row as a list (a few tens of bytes a row once compressed)."""
        document = {"format": self.format, "version": version, "taken_at": snapshot.taken_at,
                    "complete": snapshot.complete, "note": snapshot.note, "build_s": snapshot.build_s,
                    "rows": [self.row_out(r) for r in snapshot.rows]}
        return zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)

    def decode(self, blob: bytes) -> tuple[str, Snapshot] | None:
        """(version, snapshot), or None for a blob of another format."""
        # Tens of thousands of short-lived lists and rows, none in a reference cycle: without pausing the cycle
        # collector, its passes over them took about as long as the decoding itself.
        with cycle_collector_paused():
            document = json.loads(zlib.decompress(blob))
            if document.get("format") != self.format:
                return None
            rows = [self.row_in(values) for values in document["rows"]]
        return document["version"], Snapshot(rows=rows, taken_at=document["taken_at"],
                                             complete=document["complete"], note=document.get("note", ""),
                                             build_s=document.get("build_s", 0.0))

    def with_changes(self, snapshot: Snapshot, changes: Changes) -> Snapshot:
        """Pure: the snapshot with the console's own later changes laid over it (None: the row was removed)."""
        recent = {key: row for key, (at, row) in changes.items() if at > snapshot.taken_at - CHANGE_GRACE_S}
        if not recent:
            return snapshot
        rows = {self.key(r): r for r in snapshot.rows}
        for key, row in recent.items():
            if row is None:
                rows.pop(key, None)
            else:
                rows[key] = row
        complete = snapshot.complete and all(self.row_complete(r) for r in recent.values() if r is not None)
        return Snapshot(rows=sorted(rows.values(), key=self.key), taken_at=snapshot.taken_at, complete=complete,
                        shared=snapshot.shared, note=snapshot.note, build_s=snapshot.build_s)

    def change_out(self, at: float, row: Any | None) -> str:
        return json.dumps({"at": at, "row": None if row is None else self.row_out(row)}, separators=(",", ":"))

    def change_in(self, text: bytes | str) -> tuple[float, Any | None]:
        entry = json.loads(text)
        return entry["at"], None if entry["row"] is None else self.row_in(entry["row"])

    # --- stores -----------------------------------------------------------------------------------------------

    def _redis_store(self) -> RedisStore | None:
        url = settings.REDIS_URL
        client = redis_client(url)
        if client is None:
            return None
        store = self._redis_stores.get(url)
        if store is None or store.client is not client:
            store = self._redis_stores[url] = RedisStore(self, client)
        return store

    def _with_store(self, action: Callable[[RedisStore | LocalStore], Any]):
        """Runs `action` on Redis, or on this process's store when Redis is down (now or lately)."""
        store = self._redis_store()
        if store is not None:
            try:
                return action(store)
            except StoreDown as exc:
                redis_failed(exc)
        return action(self._local)

    def read(self, cluster: str, version: str) -> Snapshot | None:
        """The cluster's snapshot with the console's later changes, or None when there is none for these
        settings (`version`: which connection it was built with)."""
        with timed("table"):
            self._hand_over_own(cluster, version)
            found = self._read(cluster)
        if found is None or found[0] != version:
            return None
        return found[1]

    def _read(self, cluster: str) -> tuple[str, Snapshot] | None:
        store = self._redis_store()
        if store is not None:
            try:
                return store.read(cluster)
            except StoreDown as exc:
                redis_failed(exc)
        self._keep_last_shared(cluster)
        return self._local.read(cluster)

    def _keep_last_shared(self, cluster: str) -> None:
        """Redis did not answer (on a loaded machine, a read past its timeout): until this process has a snapshot of
        its own, its pages read the shared one it last decoded rather than none ("being built"). Once Redis answers
        again it is dropped, as any own snapshot no newer than the shared one is (_hand_over_own)."""
        if self._local.stamp(cluster) is not None:
            return
        store = self._redis_stores.get(settings.REDIS_URL)
        last = store.last_decoded(cluster) if store is not None else None
        if last is not None:
            self._local.write(cluster, last[0], replace(last[1], shared=False))

    def _hand_over_own(self, cluster: str, version: str) -> None:
        """A snapshot this process built while Redis did not answer goes to Redis once it answers again, unless the
        shared one is newer: reading the older shared one again would hide rows this process's own snapshot holds
        until the next rebuild."""
        stamp = self._local.stamp(cluster)
        if stamp is None:
            return
        store = self._redis_store()
        if store is None:  # still away: this process's own snapshot is the one pages read
            return
        own = self._local.read(cluster) if stamp[0] == version else None
        try:
            if own is not None:
                store.write_if_newer(cluster, version, replace(own[1], shared=True))
        except StoreDown as exc:
            redis_failed(exc)
            return
        self._local.forget(cluster)

    def note_change(self, cluster: str, key: str, row: Any | None) -> None:
        """A row created or changed (the row) or removed (None) through the console, visible to every reader now."""
        self._with_store(lambda store: store.note_change(cluster, key, row))

    def changed_since(self, cluster: str, since: float) -> set[str]:
        """The keys of the rows the console changed at `since` or later (those not yet pruned by a snapshot taken
        after them)."""
        changes = self._with_store(lambda store: store.changes(cluster))
        return {key for key, (at, _) in changes.items() if at >= since}

    def refresh(self, cluster: str, version: str, build: Callable[[], Snapshot], *,
                wait_s: float = 0.0) -> Snapshot | None:
        """Builds and stores the cluster's snapshot; None (nothing done) when another process or thread is already
        building it (and, with `wait_s`, still was after that long)."""

        def run(store: RedisStore | LocalStore) -> Snapshot | None:
            try:
                lock = store.lock(cluster)
                if not lock.acquire(blocking=wait_s > 0, blocking_timeout=wait_s):
                    return None
            except redis.RedisError as exc:
                raise StoreDown(str(exc)) from exc
            try:
                started = time.monotonic()
                fresh = replace(build(), build_s=time.monotonic() - started)
                # A build that outlived its lock (a cluster that answered slowly for minutes) must not replace a
                # snapshot taken after it began.
                try:
                    store.write_if_newer(cluster, version, fresh)
                except StoreDown as exc:  # built at some cost: serve it from this process rather than build again
                    redis_failed(exc)
                    self._local.write_if_newer(cluster, version, fresh)
                return fresh
            finally:
                try:
                    lock.release()
                except redis.RedisError:  # expired (a very slow build) or Redis went away: it expires on its own
                    pass

        return self._with_store(run)

    def refresh_in_background(self, cluster: str, version: str, build: Callable[[], Snapshot]) -> None:
        """Starts a rebuild in a thread of this process unless one runs or was started within the last second."""
        with self._threads_lock:
            running = self._threads.get(cluster)
            if (running is not None and running.is_alive()) or \
                    time.monotonic() - self._last_request.get(cluster, -_REQUEST_EVERY_S) < _REQUEST_EVERY_S:
                return
            self._last_request[cluster] = time.monotonic()

            def run() -> None:
                try:
                    self.refresh(cluster, version, build)
                except Exception as exc:  # noqa: BLE001 - a background rebuild must never take the process down
                    log.warning("Rebuilding the %s table of %s failed: %s", self.name, cluster,
                                getattr(exc, "message", exc))

            thread = threading.Thread(target=run, name=f"{self.name}-table-{cluster}", daemon=True)
            self._threads[cluster] = thread
            thread.start()

    def due_after(self, snapshot: Snapshot) -> float:
        """How old the cluster's snapshot is let grow before its background job rebuilds it: the table's interval,
        or REBUILD_SHARE's inverse times its last build, whichever is longer. On a big cluster a rebuild takes
        seconds of the brokers' and the client process's time; this keeps a table's rebuilds to a bounded share of
        the machine whatever the cluster's size (the pages say how old the list is)."""
        if not snapshot.complete:  # part of the cluster could not be read: try again at the usual pace
            return self.interval_s()
        return max(self.interval_s(), snapshot.build_s / settings.SNAPSHOT_REBUILD_SHARE)

    def due(self, cluster: str, version: str) -> bool:
        """Whether the background job should rebuild the cluster's snapshot now."""
        found = self.read(cluster, version)
        return found is None or found.age_s >= self.due_after(found) - _DUE_SLACK_S

    def stale_after(self, snapshot: Snapshot) -> float:
        """How old a snapshot may be before a page starts a rebuild itself: the background job keeps shared ones
        fresh, so only a missed run (no worker, no beat) counts; this process's own snapshot has nobody else to
        rebuild it."""
        interval = self.due_after(snapshot)
        if not snapshot.shared:
            return interval if snapshot.complete else min(interval, 2.0)
        return 3 * interval if snapshot.complete else interval

    def invalidate(self, cluster: str) -> None:
        """Forgets the cluster's snapshot everywhere (Redis and this process)."""
        self._local.forget(cluster)
        store = self._redis_store()
        if store is not None:
            try:
                store.forget(cluster)
            except StoreDown as exc:
                redis_failed(exc)

    def wait_for_refresh(self, cluster: str, timeout: float = 60.0) -> None:
        """For tests and benchmarks: until this process's background rebuild of `cluster` (if any) has finished."""
        with self._threads_lock:
            thread = self._threads.get(cluster)
        if thread is not None:
            thread.join(timeout)

    def _forget_process_state(self) -> None:
        self._redis_stores.clear()
        with self._threads_lock:
            self._last_request.clear()
