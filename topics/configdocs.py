"""What the common configs mean, how to show their values to people, and where their defaults come from."""

from __future__ import annotations

EXPLANATIONS = {
    "retention.ms": "How long records are kept before deletion (-1: forever). Applies with cleanup.policy=delete.",
    "retention.bytes": "Largest size a partition may reach before old segments are deleted (-1: no limit).",
    "cleanup.policy": "delete: drop old segments by time/size; compact: keep the latest record per key; or both.",
    "segment.bytes": "Size of one log segment file; retention and compaction work on whole closed segments.",
    "segment.ms": "Time after which a segment is rolled even if not full, so retention can act on it.",
    "min.insync.replicas": "Replicas that must acknowledge a write with acks=all, or the producer gets an error.",
    "max.message.bytes": "Largest record batch the broker accepts for this topic (after compression).",
    "compression.type": "Compression kept on disk: producer keeps what producers sent; or a fixed codec.",
    "min.cleanable.dirty.ratio": "Share of uncompacted log that triggers compaction; lower compacts more often.",
    "delete.retention.ms": "How long tombstones stay visible on compacted topics so consumers see deletes.",
    "unclean.leader.election.enable": "Lets an out-of-sync replica become leader: availability at the cost of data loss.",
}

# Topic config -> broker configs it inherits from, in priority order (Kafka's LogConfig synonyms).
BROKER_SYNONYMS = {
    "cleanup.policy": ["log.cleanup.policy"],
    "compression.type": ["compression.type"],
    "delete.retention.ms": ["log.cleaner.delete.retention.ms"],
    "file.delete.delay.ms": ["log.segment.delete.delay.ms"],
    "flush.messages": ["log.flush.interval.messages"],
    "flush.ms": ["log.flush.interval.ms"],
    "index.interval.bytes": ["log.index.interval.bytes"],
    "local.retention.bytes": ["log.local.retention.bytes"],
    "local.retention.ms": ["log.local.retention.ms"],
    "max.compaction.lag.ms": ["log.cleaner.max.compaction.lag.ms"],
    "max.message.bytes": ["message.max.bytes"],
    "message.timestamp.type": ["log.message.timestamp.type"],
    "message.timestamp.after.max.ms": ["log.message.timestamp.after.max.ms"],
    "message.timestamp.before.max.ms": ["log.message.timestamp.before.max.ms"],
    "min.cleanable.dirty.ratio": ["log.cleaner.min.cleanable.ratio"],
    "min.compaction.lag.ms": ["log.cleaner.min.compaction.lag.ms"],
    "min.insync.replicas": ["min.insync.replicas"],
    "preallocate": ["log.preallocate"],
    "retention.bytes": ["log.retention.bytes"],
    "retention.ms": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
    "segment.bytes": ["log.segment.bytes"],
    "segment.index.bytes": ["log.index.size.max.bytes"],
    "segment.jitter.ms": ["log.roll.jitter.ms", "log.roll.jitter.hours"],
    "segment.ms": ["log.roll.ms", "log.roll.hours"],
    "unclean.leader.election.enable": ["unclean.leader.election.enable"],
}
_UNIT_TO_MS = {".minutes": 60_000, ".hours": 3_600_000}
LONG_MAX = 2**63 - 1  # Kafka's "no limit" for many time and size settings


def broker_default(topic_key: str, broker_values: dict[str, str | None]) -> str | None:
    """The value a topic config takes without an override, from the broker's effective configuration."""
    for name in BROKER_SYNONYMS.get(topic_key, []):
        value = broker_values.get(name)
        if value is None:
            continue
        for suffix, factor in _UNIT_TO_MS.items():
            if name.endswith(suffix) and topic_key.endswith(".ms"):
                return str(int(value) * factor)
        return value
    return None


def _plural(n: float, unit: str) -> str:
    text = f"{n:g}"
    return f"{text} {unit}" if text == "1" else f"{text} {unit}s"


def human_duration_ms(value: str | None) -> str:
    try:
        ms = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if ms < 0 or ms == LONG_MAX:
        return "forever"
    for size, unit in ((86_400_000, "day"), (3_600_000, "hour"), (60_000, "minute"), (1000, "second")):
        if ms >= size:
            amount = ms / size
            return _plural(amount, unit) if round(amount, 1) == amount else "≈" + _plural(round(amount, 1), unit)
    return f"{ms} ms"


def human_bytes(value: str | None) -> str:
    try:
        size = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if size < 0 or size == LONG_MAX:
        return "unlimited"
    for factor, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= factor:
            amount = size / factor
            return f"{amount:g} {unit}" if round(amount, 2) == amount else f"≈{amount:.2f} {unit}"
    return f"{size} B"


def human_value(key: str, value: str | None) -> str:
    """7 days, 1 GiB...; empty when a plain number says it all."""
    if key.endswith(".ms") or key.endswith(".hours") or key.endswith(".minutes"):
        if key.endswith(".hours"):
            value = str(int(value) * 3_600_000) if value and value.lstrip("-").isdigit() else value
        elif key.endswith(".minutes"):
            value = str(int(value) * 60_000) if value and value.lstrip("-").isdigit() else value
        return human_duration_ms(value)
    if key.endswith(".bytes") or key in ("max.message.bytes", "message.max.bytes"):
        return human_bytes(value)
    return ""
