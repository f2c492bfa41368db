"""What a reset plan means per topic, for the line a person reads before the per-partition table."""

from __future__ import annotations

from dataclasses import dataclass

from offsets.resets.planning import ResetPlan


@dataclass(frozen=True)
class TopicTotals:
    topic: str
    partitions: int
    reread: int  # records the group will consume again
    skipped: int  # records the group will never consume
    unknown: int  # partitions without a committed offset (or whose offset is deleted): neither can be counted
    lag_now: int = 0  # over the partitions with a committed offset
    lag_after: int = 0  # over the partitions with a target (none for a deleted offset)


def plan_totals(plan: ResetPlan) -> list[TopicTotals]:
    """Per topic of the plan, in the plan's order: partitions, records re-read and skipped, lag now and after."""
    totals: dict[str, list[int]] = {}
    for row in plan.rows:
        counts = totals.setdefault(row.ref.topic, [0, 0, 0, 0, 0, 0])
        counts[0] += 1
        counts[4] += row.lag_now or 0
        counts[5] += row.lag_after or 0
        if row.records_to_reread is None:
            counts[3] += 1
            continue
        counts[1] += row.records_to_reread
        counts[2] += row.records_to_skip
    return [TopicTotals(topic, *counts) for topic, counts in totals.items()]
