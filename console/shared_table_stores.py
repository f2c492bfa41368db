"""Where console/shared_table.py keeps its snapshots: Redis, shared by every process (the blob, its stamp, the
console's per-row changes and the refresh lock), or this process's own store while Redis does not answer."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

from console.redis_retry import console_retry
from console.timing import timed

log = logging.getLogger("console.shared_table")

# A snapshot whose build started shortly after a change may still have seen the cluster from before it.
CHANGE_GRACE_S = 2.0
REDIS_RETRY_S = 5.0  # after Redis failed, this process uses its own snapshots for this long before asking again
# A process decodes each new snapshot of a cluster it read lately in a thread of its own, looking for one this often,
# so that the page which first meets it does not wait for the decoding (a tenth of a second at 50,000 groups).
WARM_INTERVAL_S = 1.0
WARM_KEEP_S = 600.0  # a cluster this process has not read for this long is no longer decoded ahead, nor held


@dataclass(frozen=True)
class Snapshot:
    rows: list
    taken_at: float  # time.time() when the build started
    complete: bool  # False when part of the cluster could not be read
    shared: bool = True  # False: this process's own snapshot, because Redis did not answer
    note: str = ""  # what the build could not read, for the page to say
    build_s: float = 0.0  # how long building it took: a big cluster's tables are rebuilt less often

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

    def __init__(self, table, client: redis.Redis) -> None:  # table: the SharedTable stored
        self.table, self.client = table, client
        self._decoded: dict[str, tuple[bytes, tuple[str, Snapshot]]] = {}  # cluster -> (stamp, decoded blob)
        self._read_at: dict[str, float] = {}  # cluster -> when a caller of this process last read it (monotonic)
        self._decoding = threading.Lock()  # one decoding at a time: the warmer's and a request's are never doubled
        self._warmer_pid: int | None = None

    def _keys(self, cluster: str) -> tuple[str, str, str, str]:
        base = f"console:{self.table.name}:snapshot:{cluster}"
        return base, f"{base}:stamp", f"{base}:changes", f"{base}:lock"

    def read(self, cluster: str) -> tuple[str, Snapshot] | None:
        blob_key, stamp_key, changes_key, _ = self._keys(cluster)
        try:
            stamp, changes = self.client.pipeline(transaction=True).get(stamp_key).hgetall(changes_key).execute()
            if stamp is None:
                return None
            self._read_at[cluster] = time.monotonic()
            self._keep_warm()
            cached = self._decoded.get(cluster)
            if cached is None or cached[0] != stamp:
                cached = self._decode(cluster, stamp)
                if cached is None:
                    return None
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc
        version, snapshot = cached[1]
        return version, self.table.with_changes(snapshot, self._changes_in(changes))

    def last_decoded(self, cluster: str) -> tuple[str, Snapshot] | None:
        """The cluster's snapshot as this process last decoded it from Redis, without asking Redis."""
        cached = self._decoded.get(cluster)
        return None if cached is None else cached[1]

    def _decode(self, cluster: str, stamp: bytes) -> tuple[bytes, tuple[str, Snapshot]] | None:
        """The cluster's current blob, decoded once per stamp in this process: a caller that finds the warmer
        decoding the stamp it saw waits for that rather than decoding it again."""
        blob_key, stamp_key, _, _ = self._keys(cluster)
        with timed("decode"), self._decoding:
            cached = self._decoded.get(cluster)
            if cached is not None and cached[0] == stamp:
                return cached
            blob, stamp = self.client.pipeline(transaction=True).get(blob_key).get(stamp_key).execute()
            decoded = self.table.decode(blob) if blob is not None else None
            if decoded is None:
                return None
            cached = self._decoded[cluster] = (stamp, decoded)
            return cached

    def _keep_warm(self) -> None:
        if self._warmer_pid == os.getpid():
            return
        self._warmer_pid = os.getpid()  # a forked child has no thread of its parent's: it starts its own
        threading.Thread(target=self._warm, name=f"warm-{self.table.name}", daemon=True).start()

    def _warm(self) -> None:
        while True:
            time.sleep(WARM_INTERVAL_S)
            try:
                self._warm_once(time.monotonic())
            except Exception as exc:  # Redis down or a torn blob: requests read as they would without the warmer
                log.debug("Shared %s table not decoded ahead: %s", self.table.name, exc)

    def _warm_once(self, now: float) -> None:
        for cluster, at in list(self._read_at.items()):
            if now - at > WARM_KEEP_S:  # nobody here reads it any more: neither decoded ahead nor held
                self._read_at.pop(cluster, None)
                self._decoded.pop(cluster, None)
                continue
            stamp = self.client.get(self._keys(cluster)[1])
            cached = self._decoded.get(cluster)
            if stamp is not None and (cached is None or cached[0] != stamp):
                self._decode(cluster, stamp)

    def write(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        try:
            pipe = self.client.pipeline(transaction=True)
            self._queue_write(pipe, cluster, version, snapshot)
            pipe.execute()
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def _queue_write(self, pipe, cluster: str, version: str, snapshot: Snapshot) -> None:
        blob_key, stamp_key, changes_key, _ = self._keys(cluster)
        pipe.set(blob_key, self.table.encode(snapshot, version)).set(stamp_key, repr(snapshot.taken_at))
        pipe.eval(_PRUNE, 1, changes_key, snapshot.taken_at - CHANGE_GRACE_S)

    def write_if_newer(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        """Writes the snapshot unless the one stored was taken at the same time or later (checked and written in one
        transaction: a rebuild stored meanwhile by another process wins)."""
        _, stamp_key, _, _ = self._keys(cluster)
        try:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.watch(stamp_key)
                stamp = pipe.get(stamp_key)
                if stamp is not None and float(stamp) >= snapshot.taken_at:
                    return
                pipe.multi()
                self._queue_write(pipe, cluster, version, snapshot)
                pipe.execute()
        except redis.WatchError:
            return
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def note_change(self, cluster: str, key: str, row: Any | None) -> None:
        try:
            self.client.hset(self._keys(cluster)[2], key, self.table.change_out(time.time(), row))
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def changes(self, cluster: str) -> Changes:
        try:
            return self._changes_in(self.client.hgetall(self._keys(cluster)[2]))
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def _changes_in(self, stored: dict[bytes, bytes]) -> Changes:
        return {key.decode(): self.table.change_in(text) for key, text in stored.items()}

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

    def __init__(self, table) -> None:  # table: the SharedTable stored
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
        own = Snapshot(snapshot.rows, snapshot.taken_at, snapshot.complete, shared=False, note=snapshot.note,
                       build_s=snapshot.build_s)
        return version, self.table.with_changes(own, changes)

    def stamp(self, cluster: str) -> tuple[str, float] | None:
        """The version and taken_at of the cluster's snapshot, without laying the changes over it."""
        with self._guard:
            found = self._snapshots.get(cluster)
        return None if found is None else (found[0], found[1].taken_at)

    def write(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        with self._guard:
            self._snapshots[cluster] = (version, snapshot)
            keep = snapshot.taken_at - CHANGE_GRACE_S
            self._changes[cluster] = {k: c for k, c in self._changes.get(cluster, {}).items() if c[0] >= keep}

    def write_if_newer(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        with self._guard:
            found = self._snapshots.get(cluster)
            if found is not None and found[1].taken_at >= snapshot.taken_at:
                return
        self.write(cluster, version, snapshot)

    def note_change(self, cluster: str, key: str, row: Any | None) -> None:
        with self._guard:
            self._changes.setdefault(cluster, {})[key] = (time.time(), row)

    def changes(self, cluster: str) -> Changes:
        with self._guard:
            return dict(self._changes.get(cluster, {}))

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


def redis_client(url: str) -> redis.Redis | None:
    with _clients_lock:
        if time.monotonic() < _redis_down_until.get(url, 0.0):
            return None
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=2.0,
                                                           retry=console_retry())
        return client


def redis_failed(exc: Exception) -> None:
    log.warning("Redis did not answer (%s): lists use this process's own snapshots for %.0f s", exc, REDIS_RETRY_S)
    with _clients_lock:
        _redis_down_until[settings.REDIS_URL] = time.monotonic() + REDIS_RETRY_S


def forget_redis_clients() -> None:
    with _clients_lock:
        _redis_down_until.clear()
        _clients.clear()
