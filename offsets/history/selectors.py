"""Reads of recorded rebalance history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from offsets.history.timeline import timeline
from offsets.models import GroupGeneration, RecorderStatus


def group_timeline(cluster: str, group: str):
    rows = GroupGeneration.objects.filter(cluster=cluster, group=group).order_by("time", "id")
    return timeline([{"generation": r.generation, "protocol": r.protocol, "time_ms": int(r.time.timestamp() * 1000),
                      "members": r.members, "sampled": r.sampled,
                      "settled_ms": None if r.settled_at is None else int(r.settled_at.timestamp() * 1000)}
                     for r in rows])


def group_history(cluster: str, group: str) -> list[dict]:
    """The JSON shape of `manage.py group_history`."""
    history = []
    for e in group_timeline(cluster, group):
        history.append({
            ("generation" if e.protocol == "classic" else "epoch"): e.generation,
            "time": datetime.fromtimestamp(e.time_ms / 1000, UTC).isoformat(timespec="milliseconds"),
            "protocol": e.protocol,
            "members": [{"member_id": m["member_id"], "client_id": m["client_id"], "host": m["host"],
                         "instance_id": m.get("instance_id"), "assignment": m["assignment"]} for m in e.members],
            "joined": e.joined, "left": e.left, "moved": len(e.moved), "sampled": e.sampled, "burst": e.burst,
            "settled_in_s": e.settle_s,
        })
    return history


@dataclass(frozen=True)
class RecorderHealth:
    """What a page says about the completeness of a cluster's rebalance history."""

    state: str  # recording, sampling, waiting, stopped, or "none" when no recorder ever reported
    text: str
    ok: bool


STALE_AFTER_S = 60


def recorder_health(cluster: str, *, now: datetime | None = None) -> RecorderHealth:
    now = now or datetime.now(UTC)
    status = RecorderStatus.objects.filter(cluster=cluster).first()
    if status is None:
        return RecorderHealth("none", "No recorder has reported for this cluster yet (manage.py record_groups "
                                      "records every registered cluster).", ok=False)
    silent_s = (now - status.updated_at).total_seconds()
    if status.state in (RecorderStatus.RECORDING, RecorderStatus.SAMPLING) and silent_s > STALE_AFTER_S:
        return RecorderHealth("stopped", f"The recorder last reported {duration_words(silent_s)} ago; it may have "
                                         f"stopped.", ok=False)
    if status.state in (RecorderStatus.RECORDING, RecorderStatus.SAMPLING) and status.recorded_up_to:
        behind = duration_words(max(0.0, (now - status.recorded_up_to).total_seconds()))
        text = f"History recorded up to {behind} ago."
        if status.detail:
            text += f" {status.detail}"
        return RecorderHealth(status.state, text, ok=status.state == RecorderStatus.RECORDING)
    return RecorderHealth(status.state, status.detail or f"Recorder {status.state}.", ok=False)


def duration_words(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{seconds // 60} min"
    if seconds < 48 * 3600:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"
