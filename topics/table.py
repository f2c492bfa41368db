"""The topic table of a cluster, served stale-while-revalidate.

Building it costs one Metadata request and two ListOffsets rounds over every partition: about 0.7 s at 6,000
partitions and 3.4 s at 15,000 on the benchmark machine. So each web process keeps its last snapshot; a
request that finds it older than TOPIC_LIST_CACHE_S gets it at once while one background thread rebuilds it.
Only a process's first request, or the first after a change made through the console, waits for a build.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from console.kafka.admin import KafkaAdmin
from console.kafka.errors import KafkaGatewayError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    rows: list
    taken_at: float  # time.time() when the build started
    complete: bool  # False when some partitions' offsets could not be read

    @property
    def age_s(self) -> float:
        return max(0.0, time.time() - self.taken_at)


_snapshots: dict[str, tuple[str, Snapshot]] = {}  # cluster -> (the settings it was built with, snapshot)
_refreshing: set[str] = set()
_lock = threading.Lock()


def snapshot(cluster: str, admin: Callable[[], KafkaAdmin], build: Callable[[KafkaAdmin], Snapshot], *,
             version: str = "") -> Snapshot:
    """The current snapshot, built now if there is none (or the cluster's settings changed since: `version`);
    a stale or incomplete one triggers a background rebuild."""
    with _lock:
        built_with, current = _snapshots.get(cluster, ("", None))
    if current is None or built_with != version:
        fresh = build(admin())
        with _lock:
            _snapshots[cluster] = (version, fresh)
        return fresh
    max_age = settings.TOPIC_LIST_CACHE_S if current.complete else 2.0
    if current.age_s > max_age:
        _refresh_in_background(cluster, admin(), build, version)
    return current


def _refresh_in_background(cluster: str, admin: KafkaAdmin, build: Callable[[KafkaAdmin], Snapshot],
                           version: str) -> None:
    with _lock:
        if cluster in _refreshing:
            return
        _refreshing.add(cluster)

    def run() -> None:
        try:
            fresh = build(admin)
            with _lock:
                _snapshots[cluster] = (version, fresh)
        except KafkaGatewayError as exc:  # keep serving the last snapshot; the next request tries again
            log.warning("Refreshing the topic table of %s failed: %s", cluster, exc.message)
        finally:
            with _lock:
                _refreshing.discard(cluster)

    threading.Thread(target=run, name=f"topic-table-{cluster}", daemon=True).start()


def invalidate(cluster: str) -> None:
    with _lock:
        _snapshots.pop(cluster, None)


def wait_for_refresh(cluster: str, timeout: float = 30.0) -> None:
    """For tests and benchmarks: until no background rebuild of `cluster` is running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _lock:
            if cluster not in _refreshing:
                return
        time.sleep(0.02)
