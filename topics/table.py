"""The topic table of a cluster: one snapshot per cluster, shared by every web and worker process (see
console/shared_table.py for how it is stored, locked, overlaid with the console's own changes and served without
Redis).

Building it costs one Metadata request, the topic ids, and the log ends of every partition (the log starts only of
the partitions topics/log_starts.py does not remember; seconds at 40,000 partitions), so no request builds it: a
Celery beat entry rebuilds each cluster's snapshot every TOPIC_SNAPSHOT_INTERVAL_S (topics.tasks), and pages only
read it. A topic created, changed or deleted through the console is laid over it at once
(topics.selectors.topic_snapshot_note).
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

from console import shared_table
from console.shared_table import LocalStore, Snapshot  # noqa: F401 - part of this module's face
from topics.configdocs import human_value

FORMAT = 1  # bump when the encoded row layout changes; older blobs are then ignored (and rebuilt)


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


TABLE = shared_table.SharedTable(
    "topics", format=FORMAT, row_out=_row_out, row_in=_row_in, key=lambda row: row.name,
    row_complete=lambda row: row.messages is not None,
    interval_setting="TOPIC_SNAPSHOT_INTERVAL_S", lock_setting="TOPIC_SNAPSHOT_LOCK_S")

encode = TABLE.encode
decode = TABLE.decode
with_changes = TABLE.with_changes
read = TABLE.read
note_change = TABLE.note_change
changed_since = TABLE.changed_since
refresh = TABLE.refresh
refresh_in_background = TABLE.refresh_in_background
stale_after = TABLE.stale_after
invalidate = TABLE.invalidate
wait_for_refresh = TABLE.wait_for_refresh
forget_redis_state = shared_table.forget_redis_state
