"""The groups list at 50,000 groups, in one process (Django's test client), against `kafka-consumer-groups --list`
in the same run.

    flock /tmp/console-suite.lock .venv/bin/python bench/groups_list.py [--groups 50000] [--repeat 20]

Seeds a fresh broker as bench/lag_scale.py does (N groups with 4 committed partitions each), runs one lag sweep so
every group has a stored status, then times: the rebuild of the shared groups list (what the sweep's task and beat
run, never a request), the page cold (the list in Redis, not yet decoded by this process) and warm, a search, the
"worst status first" order and a far page; and, as the "before" figure, the work a request did before the shared list
(both ListGroups, every group's status, then the page's groups), timed as one function call in the same run.
Writes bench/RESULTS.md (section groups-list-<groups>).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, check, kafka_tool_ms, machine, parse_args, summary, timed, tool_runs, write_section)
from bench.lag_scale import seed  # noqa: E402

GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parse_args(parser, smoke={"groups": 40, "repeat": 2})
    far_page = max(1, min(250, (args.groups + 99) // 100))

    from devstack.kafka import free_port
    from devstack.redis import RedisNode

    redis_node = RedisNode(home=Path(tempfile.mkdtemp(prefix="bench-groups-list-redis-")), port=free_port())
    redis_node.start()
    os.environ["REDIS_URL"] = redis_node.url
    try:
        with bench_stack("groups-list", offsets_partitions=50):
            import redis

            from console import shared_table
            from console.clusters.models import Cluster
            from offsets.group_table import entries, filter_entries
            from offsets.lag.sampler import lag_sample
            from offsets.lag.selectors import group_status_briefs, group_statuses
            from offsets.selectors import group_rows, group_snapshot_refresh, groups_of_every_type

            bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
            Cluster.objects.update_or_create(name="local", defaults={"bootstrap_servers": bootstrap})
            seed_s = seed(bootstrap, args.groups, max(1, args.groups // 50), 2)
            print(f"seeded {args.groups} groups in {seed_s:.0f} s", flush=True)
            sweep = lag_sample(cluster="local")  # untimed: every group gets a status to filter and order on
            print(f"swept: {sweep}", flush=True)
            _, get = bench_client()

            def before_this_change():
                every, _ = groups_of_every_type("local")
                chosen = filter_entries(entries(every, group_status_briefs("local")))
                page = group_rows("local", [e.listing() for e in chosen[:100]])
                group_statuses("local", groups=[r.group_id for r in page])

            def cold():  # a web process that has not decoded the current list: it is in Redis
                shared_table.forget_redis_state()

            before_this_change()  # untimed: starts the client process and the JVM behind the Java ListGroups
            every, problem = groups_of_every_type("local")
            listed = sum(1 for g in every if g.group_id.startswith("lagscale-group-"))
            check(not problem and listed >= args.groups, f"ListGroups found {listed} of {args.groups} groups "
                                                         f"({problem or 'no problem said'})")
            rebuild = timed(lambda: group_snapshot_refresh("local", wait_s=60), 3)
            blob = redis.Redis.from_url(redis_node.url).get("console:groups:snapshot:local") or b""
            list_url = "/clusters/local/groups/"
            get(list_url)
            rows = {
                "rebuild of the shared list (the sweep's task or beat: both ListGroups, every status)": rebuild,
                "list page, cold (list in Redis, not yet decoded by this process)":
                    timed(lambda: get(list_url), max(5, args.repeat // 2), before=cold),
                "list page, warm": timed(lambda: get(list_url), args.repeat),
                "search (`?q=group-0421`), warm": timed(lambda: get(f"{list_url}?q=group-0421"), args.repeat),
                "worst status first, warm": timed(lambda: get(f"{list_url}?sort=status"), args.repeat),
                f"page {far_page}, warm": timed(lambda: get(f"{list_url}?page={far_page}"), args.repeat),
                "before this change: one request's work (both ListGroups, every status, the page's groups)":
                    timed(before_this_change, 5),
            }
            listing = timed(lambda: kafka_tool_ms(GROUP_COMMAND, "--list"), tool_runs())
    finally:
        redis_node.stop()
        shutil.rmtree(redis_node.home, ignore_errors=True)

    warm = rows["list page, warm"]
    cold_samples = rows["list page, cold (list in Redis, not yet decoded by this process)"]
    before = rows["before this change: one request's work (both ListGroups, every status, the page's groups)"]
    lines = [
        f"## Groups list at {args.groups:,} groups ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/groups_list.py --groups {args.groups} "
        f"--repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1, 50 `__consumer_offsets` partitions), a local "
        f"Redis, one process (Django's test client, the cluster's shared Kafka client process as in production).",
        f"Data: {args.groups:,} groups with 4 committed partitions each on {max(1, args.groups // 50):,} topics "
        f"(seeded in {seed_s:.0f} s), one lag sweep before timing. The shared list in Redis: "
        f"{len(blob) / 1024:.0f} KiB (zlib-compressed JSON).",
        "",
        "| what | time |",
        "|---|---|",
        *[f"| console: {name} | {summary(samples)} |" for name, samples in rows.items()],
        f"| Kafka `kafka-consumer-groups --list` (JVM start included) | {summary(listing)} |",
        "",
        f"List page warm p95 {p95(warm):.0f} ms (bound: 300 ms); cold median {statistics.median(cold_samples):.0f} ms "
        f"against `--list` {statistics.median(listing):.0f} ms (ratio {statistics.median(cold_samples) / statistics.median(listing):.2f}); "
        f"warm median {statistics.median(before) / statistics.median(warm):.0f}x faster than a request's work before.",
        "",
        "Pages read the one list per cluster (offsets/group_table.py over console/shared_table.py): a small Redis "
        "read per request to see that it did not change, the blob fetched and decoded once per process per "
        "snapshot (cold), filtered, ordered and paged in memory; then, for the 100 groups shown only, one "
        "DescribeGroups, their OffsetFetch and one ListOffsets round, and their statuses from the database. The "
        "list itself is rebuilt by the lag sweep's task after each sweep and by beat when the sweep did not.",
    ]
    write_section(f"groups-list-{args.groups}", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
