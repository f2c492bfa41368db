"""A lag sweep's storing alone, on PostgreSQL: what offsets/lag/sampler.py writes for N groups (4 committed
partitions each) once their status windows are full, written in place and by the writer thread
(offsets/lag/batch_writer.py). Kafka is not asked: each sweep's answers are made up (lag moving a little every
sweep), so the figures are the database's and this process's share of a sweep, not the brokers'.

    flock /tmp/console-suite.lock .venv/bin/python bench/lag_storing.py [--groups 50000] [--sweeps 14]

A PostgreSQL from Debian's binaries (devstack/postgres.sh) is started in a temporary folder and stopped at
the end. The first LAG_STATUS_WINDOW sweeps fill the windows (not timed); the rest alternate between the two ways.
Writes bench/RESULTS.md (section lag-storing-<groups>).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import check, machine, parse_args, write_section  # noqa: E402
from bench.scale_stack import django_on_postgres  # noqa: E402

PARTITIONS = 4
TOPICS = 10_000
ASKED_PER_CALL = 2_000  # groups a sweep hands over at a time (observe.SWEEP_GROUPS_PER_CALL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=50_000)
    parser.add_argument("--sweeps", type=int, default=14, help="sweeps in all, the window's first ones untimed")
    args = parse_args(parser, smoke={"groups": 300, "sweeps": 12})

    with django_on_postgres("bench-lag-storing-"):
        from django.conf import settings

        from offsets.models import GroupLagStatus

        timed = _sweeps(args.groups, args.sweeps, settings.LAG_STATUS_WINDOW)
        statuses = GroupLagStatus.objects.filter(cluster="bench").values_list("totals", flat=True)
        full = sum(1 for totals in statuses if len(totals) == settings.LAG_STATUS_WINDOW)
        check(len(statuses) == full == args.groups, f"{len(statuses)} statuses stored for {args.groups} groups, "
                                                    f"{full} with a full window")
        check(all(timed.values()), f"--sweeps {args.sweeps} leaves no timed sweep of each way after the "
                                   f"{settings.LAG_STATUS_WINDOW} that fill the windows")

    lines = [
        f"## A lag sweep's storing at {args.groups:,} groups, PostgreSQL ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/lag_storing.py --groups {args.groups} "
        f"--sweeps {args.sweeps}`",
        "",
        f"Machine: {machine()}. PostgreSQL (Debian) on the same machine, nothing else running.",
        f"Data: {args.groups:,} groups × {PARTITIONS} committed partitions, status windows full; the answers Kafka "
        "would give are made up, so these are the storing's own times (samples, windows, statuses).",
        "",
        "| written | median | fastest | slowest | sweeps |",
        "|---|---|---|---|---|",
        *[f"| {way} | {statistics.median(times):.2f} s | {min(times):.2f} s | {max(times):.2f} s | {len(times)} |"
          for way, times in timed.items()],
    ]
    write_section(f"lag-storing-{args.groups}", "\n".join(lines))
    print("\n".join(lines))


def _sweeps(groups: int, sweeps: int, window: int) -> dict[str, list[float]]:
    from gateway.kafka.types import GroupListing, PartitionRef
    from offsets.lag import sampler
    from offsets.lag.batch_writer import BatchWriter
    from offsets.lag.observe import Asked

    class InPlace(BatchWriter):
        def __init__(self) -> None:
            super().__init__()
            self.close()  # no thread: each batch is written by the caller, as on SQLite

    listings = [GroupListing(f"bench-group-{g:06d}", "Empty", "consumer", group_type="classic")
                for g in range(groups)]
    refs = [[PartitionRef(f"bench-topic-{g % TOPICS:05d}", p) for p in range(PARTITIONS)] for g in range(groups)]
    start = datetime.now(UTC) - timedelta(hours=1)
    timed: dict[str, list[float]] = {"in place": [], "by the writer thread": []}
    for sweep in range(sweeps):
        ends = {ref: 1_000 + sweep for group_refs in refs for ref in group_refs}
        way = "in place" if sweep % 2 else "by the writer thread"
        writer = InPlace() if way == "in place" else BatchWriter()
        began = time.perf_counter()
        for first in range(0, groups, ASKED_PER_CALL):
            batch = listings[first:first + ASKED_PER_CALL]
            answer = Asked(groups=[g.group_id for g in batch],
                           committed={g.group_id: {ref: 500 + sweep // 2 for ref in refs[first + i]}
                                      for i, g in enumerate(batch)}, ends=ends, stables={})
            for at in range(0, len(batch), sampler.STORE_BATCH):
                sampler._store_batch("bench", start + timedelta(seconds=30 * sweep),
                                     batch[at:at + sampler.STORE_BATCH], answer, {}, window, writer)
        writer.close()
        spent = time.perf_counter() - began
        print(f"sweep {sweep}: {way}, {spent:.2f} s", flush=True)
        if sweep >= window:
            timed[way].append(spent)
    return timed


if __name__ == "__main__":
    main()
