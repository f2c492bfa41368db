"""What the Celery worker reads of every group after each lag sweep, on PostgreSQL: the alert rules' facts, the
groups list's status briefs (each group's status and newest total lag) and the next sweep's order (each group's last
two totals), the way they read them now (the newest totals taken in SQL, alerts reading only the groups a rule
could hold for) against reading every group's whole `totals` and parsing it in Python, as before, in the same run.
Kafka is not involved.

    flock /tmp/console-suite.lock .venv/bin/python bench/after_sweep_reads.py [--groups 50000] [--repeat 5]

Statuses are made up: full windows (LAG_STATUS_WINDOW totals per group), one group in 50 ERR, one in 20 lagging
above the lag rule's threshold. Writes bench/RESULTS.md (section after-sweep-reads-<groups>).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import check, machine, parse_args, write_section  # noqa: E402
from bench.scale_stack import django_on_postgres  # noqa: E402

THRESHOLD = 10_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parse_args(parser, smoke={"groups": 500, "repeat": 1})

    with django_on_postgres("bench-after-sweep-"):
        rows = _timed(args.groups, args.repeat)

    lines = [
        f"## Reads after each lag sweep at {args.groups:,} groups, PostgreSQL ({datetime.now(UTC):%Y-%m-%d})", "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/after_sweep_reads.py --groups {args.groups} "
        f"--repeat {args.repeat}`", "", machine(), "",
        f"Data: {args.groups:,} group statuses with full windows; a status rule (ERR, STOP: 1 group in 50) and a lag "
        f"rule (above {THRESHOLD:,}: 1 group in 20). Time of this process (the Celery worker's share), median of "
        f"{args.repeat}.", "",
        "| read | now | before (every group's totals parsed in Python) | ratio |", "|---|---|---|---|",
        *[f"| {name} | {now:.0f} ms | {before:.0f} ms | {before / now:.1f}× |" for name, now, before in rows], "",
    ]
    print("\n".join(lines))
    write_section(f"after-sweep-reads-{args.groups}", "\n".join(lines))


def _timed(groups: int, repeat: int) -> list[tuple[str, float, float]]:
    from django.conf import settings
    from django.db import transaction

    from alerts.conditions import GroupFacts
    from alerts.facts import facts_gather
    from alerts.models import AlertRule
    from console.bulk_sql import insert_rows
    from offsets.lag.priority import previous_sample
    from offsets.lag.sampler import _previous_samples
    from offsets.lag.selectors import GroupStatusBrief, group_status_briefs
    from offsets.models import GroupLagStatus

    size = settings.LAG_STATUS_WINDOW
    rng = random.Random(7)
    rows = []
    for g in range(groups):
        lagging = g % 20 == 0
        base = THRESHOLD * 2 if lagging else rng.randrange(0, 50)
        totals = [base + rng.randrange(0, 10) for _ in range(size)]
        rows.append(("bench", f"group-{g:06d}", "ERR" if g % 50 == 0 else "OK", f"reason {g}", b"", {}, totals))
    with transaction.atomic():
        insert_rows(GroupLagStatus, ("cluster", "group", "status", "reason", "window", "partition_status", "totals"),
                    rows, conflict=("cluster", "group"))
    now = datetime.now(UTC)
    rules = [AlertRule(name="stalled", kind="status", statuses=["ERR", "STOP"]),
             AlertRule(name="lagging", kind="lag", threshold=THRESHOLD)]

    def facts_before():
        return tuple(GroupFacts(c, g, s, r, t[-1] if t else None) for c, g, s, r, t in GroupLagStatus.objects
                     .values_list("cluster", "group", "status", "reason", "totals").iterator(2000))

    def briefs_before():
        return {g: GroupStatusBrief(s, t[-1] if t else None) for g, s, t in
                GroupLagStatus.objects.filter(cluster="bench").values_list("group", "status", "totals").iterator(5000)}

    def order_before():
        return {g: previous_sample(s, t or [], at.timestamp() if at else None) for g, s, t, at in
                GroupLagStatus.objects.filter(cluster="bench").values_list("group", "status", "totals", "sampled_at")
                .iterator(5000)}

    def held(facts) -> set:  # the groups a rule holds for, read either way
        return {(f.cluster, f.group) for f in (facts.groups if hasattr(facts, "groups") else facts)
                if f.status in ("ERR", "STOP") or (f.lag or 0) > THRESHOLD}

    made_to_hold = sum(1 for g in range(groups) if g % 50 == 0 or g % 20 == 0)
    # Each way's answer, and whether the two agree (the reads now must give what the reads before gave).
    pairs = [("alert facts", lambda: facts_gather(rules, now), facts_before,
              lambda new, old: held(new) == held(old) and len(held(old)) == made_to_hold),
             ("groups list's status briefs", lambda: group_status_briefs("bench"), briefs_before,
              lambda new, old: new == old and len(new) == groups),
             ("next sweep's order (each group's last two totals)", lambda: _previous_samples("bench"), order_before,
              lambda new, old: new == old and len(new) == groups)]
    found = []
    for name, now_way, old_way, agree in pairs:
        times: dict[str, list[float]] = {"now": [], "before": []}
        answers = {}
        for _ in range(repeat):
            for key, run in (("now", now_way), ("before", old_way)):
                started = time.perf_counter()
                answers[key] = run()
                times[key].append((time.perf_counter() - started) * 1000)
        check(agree(answers["now"], answers["before"]), f"{name}: the reads now and before give different answers")
        found.append((name, statistics.median(times["now"]), statistics.median(times["before"])))
    return found


if __name__ == "__main__":
    main()
