"""Why a group lags, from what the console already knows: the last sweep's status and its reasons per partition,
the trend (consume against produce rate, time to catch up), where the lag sits now, the group's rebalances and the
changes made to it from the console. Each finding names its evidence; nothing is guessed beyond it. For the API
and the MCP server (an assistant answers "why is billing lagging?" from this)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.conf import settings

from console.audit.models import AuditEvent
from offsets.lag.group_state import group_lag_state
from offsets.lag.selectors import group_statuses
from offsets.lag.status import BLOCKED, ERR, STOP, WARN
from offsets.models import GroupGeneration
from offsets.serializers import group_describe_json

TOP_PARTITIONS = 10
SKEW_SHARE = 0.5  # one partition holding more than this share of a group's lag (over several partitions) is skew
REBALANCE_WINDOW = timedelta(hours=1)
FREQUENT_REBALANCES = 4  # in REBALANCE_WINDOW
CHANGES_WINDOW = timedelta(hours=24)

WHY_STATUS = {
    ERR: "Stalled: the committed offsets do not move while there is lag, yet the group is alive (it commits or has "
         "members). Typical causes: a record the consumer cannot process (a poison record), a stuck thread, a "
         "downstream call that hangs.",
    STOP: "Stopped: the committed offsets do not move and nobody commits; the consumers are not running.",
    WARN: "Falling behind: the group commits, but its lag never went down over the status window and ended higher.",
    BLOCKED: "Blocked: a read_committed consumer waits at the last stable offset for an open transaction to end; "
             "the producer of that transaction, not the consumer, holds it up.",
}


def _trend_json(trend) -> dict | None:
    if trend is None:
        return None
    return {"kind": trend.kind, "text": trend.text, "lag": trend.lag, "over_s": round(trend.over_s, 1),
            "consume_per_s": None if trend.consume_per_s is None else round(trend.consume_per_s, 3),
            "produce_per_s": round(trend.produce_per_s, 3),
            "catch_up_s": None if trend.catch_up_s is None else round(trend.catch_up_s)}


def group_lag_explanation(cluster: str, group: str, *, partitions_lag: dict[str, int] | None = None,
                          members: int | None = None, now: datetime | None = None) -> dict:
    """`partitions_lag` ("topic-partition" -> lag now) and `members`, when the caller read the group from Kafka
    (the API and MCP describe it first); without them, the last sweep's figures only."""
    now = now or datetime.now(UTC)
    status = group_statuses(cluster, group=group).get(group)
    # The same sentence the group page shows, judged with the status over the same samples: never two verdicts.
    trend = group_lag_state(cluster, group).trend
    findings: list[str] = []
    if status is None or not status.status:
        findings.append("No lag status yet: the lag sweep has not sampled this group often enough (it needs three "
                        f"samples, one every {settings.LAG_SAMPLE_INTERVAL_S} s).")
    elif status.status in WHY_STATUS:
        findings.append(WHY_STATUS[status.status])
    if trend is not None:
        findings.append(trend.text)
    lags = dict(partitions_lag or {})
    total = sum(v for v in lags.values() if v)
    top = sorted(((key, lag) for key, lag in lags.items() if lag), key=lambda item: (-item[1], item[0]))
    if len(lags) > 1 and top and total and top[0][1] / total > SKEW_SHARE:
        findings.append(f"Skew: partition {top[0][0]} holds {100 * top[0][1] / total:.0f}% of the lag ({top[0][1]:,} "
                        f"of {total:,}): a hot key, or a slow consumer of that partition.")
    if members == 0 and total:
        findings.append("The group has no members: nobody consumes, the lag only grows.")
    since = now - REBALANCE_WINDOW
    rebalances = list(GroupGeneration.objects.filter(cluster=cluster, group=group, time__gte=since)
                      .order_by("-time").values_list("time", "generation", "protocol")[:50])
    if len(rebalances) >= FREQUENT_REBALANCES:
        findings.append(f"{len(rebalances)} rebalances in the last hour: while the group rebalances nobody consumes. "
                        "Members leave and join (session or poll timeouts, restarts, scaling).")
    changes = list(AuditEvent.objects.filter(cluster=cluster, target=f"group:{group}", created_at__gte=now - CHANGES_WINDOW,
                                             outcome=AuditEvent.Outcome.SUCCESS).order_by("-seq")[:10])
    if changes:
        more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        findings.append(f"Changed from the console in the last 24 h: {changes[0].action} by {changes[0].actor_name} "
                        f"at {changes[0].created_at.isoformat(timespec='seconds')}{more}.")
    return {
        "group": group, "cluster": cluster,
        "status": status.status if status else "", "reason": status.reason if status else "not sampled yet",
        "sampled_at": status.sampled_at.isoformat() if status and status.sampled_at else None,
        "partition_status": dict(status.partitions) if status else {},
        "lag": total if partitions_lag is not None else (status.lag if status else None),
        "members": members, "trend": _trend_json(trend),
        "top_partitions": [{"partition": key, "lag": lag} for key, lag in top[:TOP_PARTITIONS]],
        "rebalances_last_hour": [{"time": t.isoformat(), "generation": g, "protocol": p} for t, g, p in rebalances],
        "console_changes": [{"seq": e.seq, "time": e.created_at.isoformat(), "action": e.action, "by": e.actor_name,
                             "reason": e.reason} for e in changes],
        "findings": findings,
    }


def group_lag_explain(cluster: str, group: str) -> dict:
    """The explanation with the group read from Kafka now: its lag per partition and its members."""
    rows = group_describe_json(cluster, group)
    lags = {f"{r['topic']}-{r['partition']}": r["lag"] for r in rows if r.get("lag") is not None} \
        if isinstance(rows, list) else {}
    state = group_describe_json(cluster, group, state=True)
    members = state.get("members") if isinstance(state.get("members"), int) else None
    return group_lag_explanation(cluster, group, partitions_lag=lags, members=members)
