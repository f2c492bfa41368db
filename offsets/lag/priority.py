"""The order a lag sweep asks for groups' offsets in (pure logic: the previous sweep's stored statuses in, group
ids out). A sweep that runs out of time stops where it is, so what comes first is what it has sampled:

1. groups that need watching: a status worse than OK, lag, or lag that moved between their last two samples;
   worst status first, then most lag, then most movement (the order of the groups page's "worst status first");
2. groups never sampled (new, or stored before anything was known of them): their lag is unknown;
3. quiet groups (caught up, not moving), least recently sampled first, so a cluster that never fits its budget
   still samples each of them in turn instead of starving the same ones every time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from offsets.lag.status import OK, SEVERITY

URGENT, UNKNOWN, QUIET = 0, 1, 2


@dataclass(frozen=True)
class PreviousSample:
    """What the previous sweeps left of one group: enough to rank it, without its window."""

    status: str
    lag: int | None  # total lag at the last sample
    change: int  # how much the total lag moved between the last two samples (0 when unknown)
    sampled_at: float | None  # epoch seconds of the last sample, None when not recorded


def previous_sample(status: str, totals: list[int | None], sampled_at: float | None) -> PreviousSample:
    """From a stored GroupLagStatus's status and totals (total lag at each sample of its window)."""
    known = [t for t in totals if t is not None]
    lag = known[-1] if known else None
    change = abs(known[-1] - known[-2]) if len(known) >= 2 else 0
    return PreviousSample(status=status, lag=lag, change=change, sampled_at=sampled_at)


def _tier(previous: PreviousSample | None) -> int:
    if previous is None or previous.lag is None:
        return UNKNOWN
    if SEVERITY.get(previous.status, 0) > SEVERITY[OK] or previous.lag > 0 or previous.change > 0:
        return URGENT
    return QUIET


def sweep_order(group_ids: Iterable[str], previous: dict[str, PreviousSample]) -> list[str]:
    """`group_ids`, most urgent first (see the module's docstring); ties keep the order they came in."""

    def key(indexed: tuple[int, str]) -> tuple:
        position, group_id = indexed
        seen = previous.get(group_id)
        tier = _tier(seen)
        if tier == URGENT:
            return (tier, -SEVERITY.get(seen.status, 0), -seen.lag, -seen.change, position)
        if tier == QUIET:
            return (tier, seen.sampled_at if seen.sampled_at is not None else float("-inf"), position)
        return (tier, position)

    return [group_id for _, group_id in sorted(enumerate(group_ids), key=key)]
