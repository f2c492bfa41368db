"""The topic table of a cluster: one snapshot per cluster, shared by every web and worker process through Redis.

Building it costs one Metadata request and two ListOffsets rounds over every partition (seconds at 40,000
partitions), so no request builds it: a Celery beat entry rebuilds each cluster's snapshot every
TOPIC_SNAPSHOT_INTERVAL_S (topics.tasks), one process at a time per cluster (a Redis lock), and pages only read
it. A page that finds none (or one much older than beat should allow) starts a rebuild in a background thread of
its process, under the same lock, and says the list is being built.

A change made through the console (create, delete, purge...) is written at once as a per-topic entry beside the
snapshot; readers lay those entries over the snapshot until a snapshot taken after them replaces them.

Without Redis, each process keeps its own snapshot here, built the same way in a background thread, and the page
says so.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import astuple, dataclass, fields

import redis
from django.conf import settings

from topics.configdocs import human_value

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the encoded row layout changes; older blobs are then ignored (and rebuilt)
# A snapshot whose build started shortly after a change may still have seen the cluster's metadata from before it.
CHANGE_GRACE_S = 2.0
REDIS_RETRY_S = 5.0  # after Redis failed, this process uses its own snapshots for this long before asking again
_REQUEST_EVERY_S = 1.0  # a process starts at most one background rebuild per cluster this often


@dataclass(frozen=True)
class TopicRow:
    name: str
    partitions: int
    replication_factor: int
    under_replicated: int
    offline: int
    messages: int | None  # None when some partition's offsets could not be read (offline, or the broker was slow)
    internal: bool
    cleanup_policy: str | None = None
    retention_ms: str | None = None
    retention_bytes: str | None = None
    size_bytes: int | None = None  # on disk, every replica (topics.disk); None until known

    @property
    def retention_human(self) -> str:
        return human_value("retention.ms", self.retention_ms)


_STORED = [f.name for f in fields(TopicRow)][:7]  # what the snapshot keeps; configs and sizes are read per page


def _row_out(row: TopicRow) -> list:
    return list(astuple(row)[:len(_STORED)])


def _row_in(values: list) -> TopicRow:
    return TopicRow(*values)


@dataclass(frozen=True)
class Snapshot:
    rows: list[TopicRow]
    taken_at: float  # time.time() when the build started
    complete: bool  # False when some partitions' offsets could not be read
    shared: bool = True  # False: this process's own snapshot, because Redis did not answer

    @property
    def age_s(self) -> float:
        return max(0.0, time.time() - self.taken_at)


def encode(snapshot: Snapshot, version: str) -> bytes:
    """One zlib-compressed JSON document: a row per topic as a list (about 20 bytes a topic once compressed)."""
    document = {"format": FORMAT, "version": version, "taken_at": snapshot.taken_at, "complete": snapshot.complete,
                "rows": [_row_out(r) for r in snapshot.rows]}
    return zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)


def decode(blob: bytes) -> tuple[str, Snapshot] | None:
    """(version, snapshot), or None for a blob of another format."""
    document = json.loads(zlib.decompress(blob))
    if document.get("format") != FORMAT:
        return None
    rows = [_row_in(values) for values in document["rows"]]
    return document["version"], Snapshot(rows=rows, taken_at=document["taken_at"], complete=document["complete"])


def with_changes(snapshot: Snapshot, changes: dict[str, tuple[float, TopicRow | None]]) -> Snapshot:
    """Pure: the snapshot with the console's own later changes laid over it (None: the topic was deleted)."""
    recent = {name: row for name, (at, row) in changes.items() if at > snapshot.taken_at - CHANGE_GRACE_S}
    if not recent:
        return snapshot
    rows = {r.name: r for r in snapshot.rows}
    for name, row in recent.items():
        if row is None:
            rows.pop(name, None)
        else:
            rows[name] = row
    return Snapshot(rows=sorted(rows.values(), key=lambda r: r.name), taken_at=snapshot.taken_at,
                    complete=snapshot.complete and all(r.messages is not None for r in recent.values() if r),
                    shared=snapshot.shared)


def _change_out(at: float, row: TopicRow | None) -> str:
    return json.dumps({"at": at, "row": None if row is None else _row_out(row)}, separators=(",", ":"))


def _change_in(text: bytes | str) -> tuple[float, TopicRow | None]:
    entry = json.loads(text)
    return entry["at"], None if entry["row"] is None else _row_in(entry["row"])


class StoreDown(Exception):
    """Redis did not answer: the caller switches to the process's own store."""


# Drops the console's per-topic changes that a snapshot written now already contains.
_PRUNE = """
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local ok, entry = pcall(cjson.decode, entries[i + 1])
  if not ok or tonumber(entry['at']) < tonumber(ARGV[1]) then redis.call('HDEL', KEYS[1], entries[i]) end
end
return 0
"""


class RedisStore:
    """The shared store: per cluster, the blob, a stamp (its taken_at, read on every request instead of the blob),
    the console's per-topic changes (a hash) and the refresh lock."""

    shared = True

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=2.0)
        self._decoded: dict[str, tuple[bytes, tuple[str, Snapshot]]] = {}  # cluster -> (stamp, decoded blob)

    @staticmethod
    def _keys(cluster: str) -> tuple[str, str, str, str]:
        base = f"console:topics:snapshot:{cluster}"
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
                decoded = decode(blob) if blob is not None else None
                if decoded is None:
                    return None
                cached = (stamp, decoded)
                self._decoded[cluster] = cached
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc
        version, snapshot = cached[1]
        return version, with_changes(snapshot, {name.decode(): _change_in(text) for name, text in changes.items()})

    def write(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        blob_key, stamp_key, changes_key, _ = self._keys(cluster)
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.set(blob_key, encode(snapshot, version)).set(stamp_key, repr(snapshot.taken_at))
            pipe.eval(_PRUNE, 1, changes_key, snapshot.taken_at - CHANGE_GRACE_S)
            pipe.execute()
        except redis.RedisError as exc:
            raise StoreDown(str(exc)) from exc

    def note_change(self, cluster: str, topic: str, row: TopicRow | None) -> None:
        try:
            self.client.hset(self._keys(cluster)[2], topic, _change_out(time.time(), row))
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
        return self.client.lock(self._keys(cluster)[3], timeout=settings.TOPIC_SNAPSHOT_LOCK_S, blocking=False)


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
    """This process's own snapshots: what pages read while Redis is down."""

    shared = False

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._snapshots: dict[str, tuple[str, Snapshot]] = {}
        self._changes: dict[str, dict[str, tuple[float, TopicRow | None]]] = {}
        self._building: set[str] = set()

    def read(self, cluster: str) -> tuple[str, Snapshot] | None:
        with self._guard:
            found = self._snapshots.get(cluster)
            changes = dict(self._changes.get(cluster, {}))
        if found is None:
            return None
        version, snapshot = found
        return version, with_changes(Snapshot(snapshot.rows, snapshot.taken_at, snapshot.complete, shared=False),
                                     changes)

    def write(self, cluster: str, version: str, snapshot: Snapshot) -> None:
        with self._guard:
            self._snapshots[cluster] = (version, snapshot)
            keep = snapshot.taken_at - CHANGE_GRACE_S
            self._changes[cluster] = {n: c for n, c in self._changes.get(cluster, {}).items() if c[0] >= keep}

    def note_change(self, cluster: str, topic: str, row: TopicRow | None) -> None:
        with self._guard:
            self._changes.setdefault(cluster, {})[topic] = (time.time(), row)

    def forget(self, cluster: str) -> None:
        with self._guard:
            self._snapshots.pop(cluster, None)
            self._changes.pop(cluster, None)

    def lock(self, cluster: str) -> _LocalLock:
        return _LocalLock(self._building, self._guard, cluster)


_local = LocalStore()
_redis_stores: dict[str, RedisStore] = {}
_redis_down_until: dict[str, float] = {}  # Redis URL -> monotonic time before which it is not asked again
_stores_lock = threading.Lock()


def _redis_store() -> RedisStore | None:
    url = settings.REDIS_URL
    with _stores_lock:
        if time.monotonic() < _redis_down_until.get(url, 0.0):
            return None
        store = _redis_stores.get(url)
        if store is None:
            store = _redis_stores[url] = RedisStore(url)
        return store


def _redis_failed(exc: Exception) -> None:
    log.warning("Redis did not answer (%s): topic lists use this process's own snapshots for %.0f s", exc,
                REDIS_RETRY_S)
    with _stores_lock:
        _redis_down_until[settings.REDIS_URL] = time.monotonic() + REDIS_RETRY_S


def _with_store(action: Callable[[RedisStore | LocalStore], object]):
    """Runs `action` on Redis, or on this process's store when Redis is down (now or lately)."""
    store = _redis_store()
    if store is not None:
        try:
            return action(store)
        except StoreDown as exc:
            _redis_failed(exc)
    return action(_local)


def read(cluster: str, version: str) -> Snapshot | None:
    """The cluster's snapshot with the console's later changes, or None when there is none for these settings."""
    found = _with_store(lambda store: store.read(cluster))
    if found is None or found[0] != version:
        return None
    return found[1]


def note_change(cluster: str, topic: str, row: TopicRow | None) -> None:
    """A topic created, changed (its row) or deleted (None) through the console, visible to every reader now."""
    _with_store(lambda store: store.note_change(cluster, topic, row))


def refresh(cluster: str, version: str, build: Callable[[], Snapshot], *, wait_s: float = 0.0) -> Snapshot | None:
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
                _local.write(cluster, version, fresh)
            return fresh
        finally:
            try:
                lock.release()
            except redis.RedisError:  # expired (a very slow build) or Redis went away: it expires on its own
                pass

    return _with_store(run)


_threads: dict[str, threading.Thread] = {}
_last_request: dict[str, float] = {}
_threads_lock = threading.Lock()


def refresh_in_background(cluster: str, version: str, build: Callable[[], Snapshot]) -> None:
    """Starts a rebuild in a thread of this process unless one runs or was started within the last second."""
    with _threads_lock:
        running = _threads.get(cluster)
        if (running is not None and running.is_alive()) or \
                time.monotonic() - _last_request.get(cluster, -_REQUEST_EVERY_S) < _REQUEST_EVERY_S:
            return
        _last_request[cluster] = time.monotonic()

        def run() -> None:
            try:
                refresh(cluster, version, build)
            except Exception as exc:  # noqa: BLE001 - a background rebuild must never take the process down
                log.warning("Rebuilding the topic table of %s failed: %s", cluster, getattr(exc, "message", exc))

        thread = threading.Thread(target=run, name=f"topic-table-{cluster}", daemon=True)
        _threads[cluster] = thread
        thread.start()


def stale_after(snapshot: Snapshot) -> float:
    """How old a snapshot may be before a page starts a rebuild itself: beat keeps shared ones fresh, so only a
    missed beat (no worker, no beat) counts; this process's own snapshot has nobody else to rebuild it."""
    interval = settings.TOPIC_SNAPSHOT_INTERVAL_S
    if not snapshot.shared:
        return interval if snapshot.complete else min(interval, 2.0)
    return 3 * interval if snapshot.complete else interval


def invalidate(cluster: str) -> None:
    """Forgets the cluster's snapshot everywhere (Redis and this process)."""
    _local.forget(cluster)
    store = _redis_store()
    if store is not None:
        try:
            store.forget(cluster)
        except StoreDown as exc:
            _redis_failed(exc)


def wait_for_refresh(cluster: str, timeout: float = 60.0) -> None:
    """For tests and benchmarks: until this process's background rebuild of `cluster` (if any) has finished."""
    with _threads_lock:
        thread = _threads.get(cluster)
    if thread is not None:
        thread.join(timeout)


def forget_redis_state() -> None:
    """For tests: ask Redis again at once, and drop decoded copies."""
    with _stores_lock:
        _redis_down_until.clear()
        _redis_stores.clear()
    with _threads_lock:
        _last_request.clear()
