"""The type of every group as the lag sweeps list it, kept so that a group's move from the classic to the consumer
protocol (or back) has a time. Kafka keeps no such history: a converted group simply has the other type.

Each sweep lists every group of every type once (offsets/lag/observe.py); only a listing that named the types (Kafka's
own ListGroups, not librdkafka's fallback) is compared with what was seen before. A sweep writes only the groups that
are new, changed or gone, so a cluster of 50,000 steady groups costs one read of their stored types. These are
observations of the cluster, not changes to it: no audit event."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from console.bulk_sql import insert_rows
from gateway.kafka.types import GroupListing
from offsets.models import GROUP_ID_MAX_STORED, GroupTypeChange, GroupTypeSeen, LagSweep

WRITE_BATCH = 2000


@dataclass(frozen=True)
class TypeDiff:
    new: dict[str, tuple[str, bool]]  # group -> (type, simple)
    changed: dict[str, tuple[str, str, bool]]  # group -> (type before, type now, simple)
    gone: list[str]
    simple_now: dict[str, bool]  # same type, but offsets-only became a group with members, or back: no move


def type_diff(known: dict[str, tuple[str, bool]], listings: list[GroupListing]) -> TypeDiff:
    """Pure: what a listing changes in `known` (group -> (type, simple)). Groups without a type (listed by
    librdkafka only) and ids too long to store are left out, and so are not counted as gone either."""
    new, changed, flipped, listed = {}, {}, {}, set()
    for g in listings:
        if not g.group_type or len(g.group_id) > GROUP_ID_MAX_STORED:
            continue
        listed.add(g.group_id)
        now = (g.group_type, bool(g.simple))
        before = known.get(g.group_id)
        if before is None:
            new[g.group_id] = now
        elif before[0] != now[0]:
            changed[g.group_id] = (before[0], now[0], now[1])
        elif before[1] != now[1]:
            flipped[g.group_id] = now[1]
    return TypeDiff(new, changed, sorted(g for g in known if g not in listed), flipped)


def group_types_observe(*, cluster: str, listings: list[GroupListing], at: datetime) -> TypeDiff:
    """Stores what changed since the last listing with types, and records each change of type with the window
    it happened in. Returns the difference."""
    known = {group: (kind, simple) for group, kind, simple in
             GroupTypeSeen.objects.filter(cluster=cluster).values_list("group", "group_type", "simple").iterator(5000)}
    diff = type_diff(known, listings)
    previous = LagSweep.objects.filter(cluster=cluster).values_list("types_seen_at", flat=True).first()
    fields = ("cluster", "group", "group_type", "simple", "since")
    with transaction.atomic():
        rows = [(cluster, group, kind, simple, at) for group, (kind, simple) in diff.new.items()]
        rows += [(cluster, group, after, simple, at) for group, (_, after, simple) in diff.changed.items()]
        for start in range(0, len(rows), WRITE_BATCH):
            insert_rows(GroupTypeSeen, fields, rows[start:start + WRITE_BATCH], conflict=("cluster", "group"),
                        update=("group_type", "simple", "since"))
        GroupTypeChange.objects.bulk_create(
            [GroupTypeChange(cluster=cluster, group=group, before=before, after=after, at=at,
                             previous_sweep_at=previous) for group, (before, after, _) in diff.changed.items()],
            batch_size=WRITE_BATCH)
        for simple in (True, False):
            GroupTypeSeen.objects.filter(cluster=cluster, group__in=[g for g, s in diff.simple_now.items()
                                                                     if s == simple]).update(simple=simple)
        for start in range(0, len(diff.gone), WRITE_BATCH):
            GroupTypeSeen.objects.filter(cluster=cluster, group__in=diff.gone[start:start + WRITE_BATCH]).delete()
        LagSweep.objects.update_or_create(cluster=cluster, defaults={"types_seen_at": at})
    return diff
