"""Reads of recorded rebalance history."""

from __future__ import annotations

from datetime import UTC, datetime

from offsets.history import timeline
from offsets.models import GroupGeneration


def group_timeline(cluster: str, group: str):
    rows = GroupGeneration.objects.filter(cluster=cluster, group=group).order_by("time", "id")
    return timeline([{"generation": r.generation, "protocol": r.protocol, "time_ms": int(r.time.timestamp() * 1000),
                      "members": r.members, "sampled": r.sampled} for r in rows])


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
        })
    return history
