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

import hashlib
import json
import logging
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

from console.gc_pause import cycle_collector_paused

log = logging.getLogger(__name__)

# A snapshot whose build started shortly after a change may still have seen the cluster from before it.
CHANGE_GRACE_S = 2.0
REDIS_RETRY_S = 5.0  # after Redis failed, this process uses its own snapshots for this long before asking again
_REQUEST_EVERY_S = 1.0  # a process starts at most one background rebuild per table and cluster this often


@dataclass(frozen=True)
class Snapshot:
    rows: list
    taken_at: float  # time.time() when the build started
    complete: bool  # False when part of the cluster could not be read
    shared: bool = True  # False: this process's own snapshot, because Redis did not answer
    note: str = ""  # what the build could not read, for the page to say

    @property
    def age_s(self) -> float:
        return max(0.0, time.time() - self.taken_at)


def connection_version(connection) -> str:
    """Which connection a snapshot was built with (a moved cluster must not show its old brokers' rows); a hash,
    because the settings may hold secrets and the snapshot sits in Redis."""
    settings_text = repr((connection.bootstrap_servers, sorted(connection.config.items())))
    return hashlib.sha256(settings_text.encode()).hexdigest()[:16]


class StoreDown(Exception):
    """Redis did not answer: the caller switches to the process's own store."""


# Drops the console's per-row changes that a snapshot written now already contains.
_PRUNE = """
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local ok, entry = pcall(cjson.decode, entries[i + 1])
  if not ok or tonumber(entry['at']) < tonumber(ARGV[1]) then redis.call('HDEL', KEYS[1], entries[i]) end
end
return 0
"""

Changes = dict[str, tuple[float, Any]]  # row key -> (when, row or None for a row removed)


class RedisStore:
    """The shared store of one table: per cluster, the blob, a stamp (its taken_at, read on every request instead
    of the blob), the console's per-row changes (a hash) and the refresh lock."""

    shared = True

    def __init__(self, table: SharedTable, client: redis.Redis) -> None:
        self.table, self.client = table, client
        self._decoded: dict[str, tuple[bytes, tuple[str, Snapshot]]] = {}  # cluster -> (stamp, decoded blob)

    def _keys(self, cluster: str) -> tuple[str, str, str, str]:
        base = f"console:{self.table.name}:snapshot:{cluster}"
        return base, f"{base}:stamp", f"{base}:changes", f"{base}:lock"

    def read(self, cluster: str) -> tuple[str, Snapshot] | None:
        blob_key, stamp_key, changes_key, _ = self._keys(cluster)
        try:
            stamp, changes = self.client.pipeline(transaction=True).get(stamp_key).hgetall(changes_key).execute()
            if stamp is None:
                return None
            cached = self._decoded.get(cluster)
            if cached is None or cached[0] != stamp:
                blob, stamp = self.client.pipeline(transaction=True).get(blob_key).get(stamp_key).execute()
                decoded = self.table.decode(blob) if blob is not None else None
                if decoded is None:
                    return None
                cached = (stamp, decoded)
                self._decoded[cluster] = cached
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc
        version, snapshot = cached[1]
        return version, self.table.with_changes(
            snapshot, {key.decode(): self.table.change_in(text) for key, text in changes.items()})

    def write(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        blob_key, stamp_key, changes_key, _ = self._keys(cluster)
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.set(blob_key, self.table.encode(snapshot, version)).set(stamp_key, repr(snapshot.taken_at))
            pipe.eval(_PRUNE, 1, changes_key, snapshot.taken_at - CHANGE_GRACE_S)
            pipe.execute()
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def note_change(self, cluster: str, key: str, row: Any | None) -> None:
        try:
            self.client.hset(self._keys(cluster)[2], key, self.table.change_out(time.time(), row))
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def forget(self, cluster: str) -> None:
        try:
            self.client.delete(*self._keys(cluster)[:3])
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc
        self._decoded.pop(cluster, None)

    def lock(self, cluster: str):
        """Held by the one process rebuilding the cluster's snapshot; it expires on its own if that process dies."""
        return self.client.lock(self._keys(cluster)[3], timeout=self.table.lock_s(), blocking=False)


class _LocalLock:
    def __init__(self, held: set[str], guard: threading.Lock, cluster: str) -> None:
        self.held, self.guard, self.cluster = held, guard, cluster

    def acquire(self, blocking: bool = False, blocking_timeout: float = 0.0) -> bool:
        deadline = time.monotonic() + (blocking_timeout if blocking else 0.0)
        while True:
            with self.guard:
                if self.cluster not in self.held:
                    self.held.add(self.cluster)
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def release(self) -> None:
        with self.guard:
            self.held.discard(self.cluster)


class LocalStore:
    """This process's own snapshots of one table: what pages read while Redis is down."""

    shared = False

    def __init__(self, table: SharedTable) -> None:
        self.table = table
        self._guard = threading.Lock()
        self._snapshots: dict[str, tuple[str, Snapshot]] = {}
        self._changes: dict[str, Changes] = {}
        self._building: set[str] = set()

    def read(self, cluster: str) -> tuple[str, Snapshot] | None:
        with self._guard:
            found = self._snapshots.get(cluster)
            changes = dict(self._changes.get(cluster, {}))
        if found is None:
            return None
        version, snapshot = found
        own = Snapshot(snapshot.rows, snapshot.taken_at, snapshot.complete, shared=False, note=snapshot.note)
        return version, self.table.with_changes(own, changes)

    def write(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        with self._guard:
            self._snapshots[cluster] = (version, snapshot)
            keep = snapshot.taken_at - CHANGE_GRACE_S
            self._changes[cluster] = {k: c for k, c in self._changes.get(cluster, {}).items() if c[0] >= keep}

    def note_change(self, cluster: str, key: str, row: Any | None) -> None:
        with self._guard:
            self._changes.setdefault(cluster, {})[key] = (time.time(), row)

    def forget(self, cluster: str) -> None:
        with self._guard:
            self._snapshots.pop(cluster, None)
            self._changes.pop(cluster, None)

    def lock(self, cluster: str) -> _LocalLock:
        return _LocalLock(self._building, self._guard, cluster)


# Redis is shared by every table: one client per URL, and when it fails every table uses its own store for a while.
_clients: dict[str, redis.Redis] = {}
_redis_down_until: dict[str, float] = {}  # Redis URL -> monotonic time before which it is not asked again
_clients_lock = threading.Lock()
_tables: list[SharedTable] = []


def _redis_client(url: str) -> redis.Redis | None:
    with _clients_lock:
        if time.monotonic() < _redis_down_until.get(url, 0.0):
            return None
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=2.0)
        return client


def _redis_failed(exc: Exception) -> None:
    log.warning("Redis did not answer (%s): lists use this process's own snapshots for %.0f s", exc, REDIS_RETRY_S)
    with _clients_lock:
        _redis_down_until[settings.REDIS_URL] = time.monotonic() + REDIS_RETRY_S


def forget_redis_state() -> None:
    """For tests and benchmarks: ask Redis again at once, and drop every table's decoded copies."""
    with _clients_lock:
        _redis_down_until.clear()
        _clients.clear()
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
                    "complete": snapshot.complete, "note": snapshot.note,
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
                                             complete=document["complete"], note=document.get("note", ""))

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
                        shared=snapshot.shared, note=snapshot.note)

    def change_out(self, at: float, row: Any | None) -> str:
        return json.dumps({"at": at, "row": None if row is None else self.row_out(row)}, separators=(",", ":"))

    def change_in(self, text: bytes | str) -> tuple[float, Any | None]:
        entry = json.loads(text)
        return entry["at"], None if entry["row"] is None else self.row_in(entry["row"])

    # --- stores -----------------------------------------------------------------------------------------------

    def _redis_store(self) -> RedisStore | None:
        url = settings.REDIS_URL
        client = _redis_client(url)
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
                _redis_failed(exc)
        return action(self._local)

    def read(self, cluster: str, version: str) -> Snapshot | None:
        """The cluster's snapshot with the console's later changes, or None when there is none for these
        settings (`version`: which connection it was built with)."""
        found = self._with_store(lambda store: store.read(cluster))
        if found is None or found[0] != version:
            return None
        return found[1]

    def note_change(self, cluster: str, key: str, row: Any | None) -> None:
        """A row created or changed (the row) or removed (None) through the console, visible to every reader now."""
        self._with_store(lambda store: store.note_change(cluster, key, row))

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
                fresh = build()
                try:
                    store.write(cluster, version, fresh)
                except StoreDown as exc:  # built at some cost: serve it from this process rather than build again
                    _redis_failed(exc)
                    self._local.write(cluster, version, fresh)
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

    def stale_after(self, snapshot: Snapshot) -> float:
        """How old a snapshot may be before a page starts a rebuild itself: the background job keeps shared ones
        fresh, so only a missed run (no worker, no beat) counts; this process's own snapshot has nobody else to
        rebuild it."""
        interval = self.interval_s()
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
                _redis_failed(exc)

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
