"""A page's small Kafka calls while the background lane works: with the background lane in a client process of its
own (KAFKA_BACKGROUND_CLIENT_PROCESS on) and sharing the pages' process (off), in the same run.

    .venv/bin/python bench/lanes.py [--topics 2500] [--groups 20000] [--phase-s 40] [--rounds 2]

Seeds a fresh broker (bench_stack) with topics of 4 partitions and groups committing on them. Then, phase after
phase, a second process plays the Celery worker: lag sweeps (offsets.lag.sampler.lag_sample) and topic table
rebuilds (topics.listing.topic_snapshot_refresh) back to back, through the background lane, with the setting on
or off. Meanwhile this process plays a page every 100 ms through the pages' lane (describe one topic, its offsets,
one group and its committed offsets: what the topic and group pages ask) and times each. A phase with no
background work gives the floor. Phases alternate, so drift over the run falls on both settings alike. Writes
bench/RESULTS.md (section lanes-<topics>x<groups>).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import bench_stack, check, machine, parse_args, summary, write_section  # noqa: E402
from bench.lag_scale import PARTITIONS_PER_TOPIC, seed  # noqa: E402

PAGE_EVERY_S = 0.1
OWN, SHARED, IDLE = "own process", "shared process", "no background work"


def background(seconds: float) -> None:
    """The worker's part: sweeps and rebuilds back to back until `seconds` have passed; prints what it did."""
    import django

    django.setup()
    from offsets.lag.sampler import lag_sample
    from topics.listing import topic_snapshot_refresh

    sweeps, rebuilds, until = [], [], time.monotonic() + seconds
    while time.monotonic() < until:
        started = time.monotonic()
        lag_sample(cluster="local")
        sweeps.append(time.monotonic() - started)
        started = time.monotonic()
        topic_snapshot_refresh("local", wait_s=60.0)
        rebuilds.append(time.monotonic() - started)
    print(f"{len(sweeps)} {sum(sweeps):.1f} {len(rebuilds)} {sum(rebuilds):.1f}", flush=True)


def page_loads(seconds: float, topics: list[str], groups: list[str]) -> list[float]:
    """What a topic page and a group page ask Kafka, every PAGE_EVERY_S; milliseconds of each."""
    from console.clusters.selectors import cluster_admin
    from gateway.kafka.types import EARLIEST, LATEST, PartitionRef

    admin = cluster_admin("local")
    samples, i, until = [], 0, time.monotonic() + seconds
    while time.monotonic() < until:
        topic, group = topics[i % len(topics)], groups[i % len(groups)]
        started = time.perf_counter()
        admin.describe_topics([topic])
        admin.list_offsets_many([PartitionRef(topic, p) for p in range(PARTITIONS_PER_TOPIC)], [EARLIEST, LATEST])
        admin.describe_groups([group])
        admin.group_offsets(group)
        samples.append((time.perf_counter() - started) * 1000)
        i += 1
        time.sleep(max(0.0, PAGE_EVERY_S - (time.perf_counter() - started)))
    return samples


def phase(mode: str, seconds: float, topics: list[str], groups: list[str]) -> tuple[list[float], str]:
    if mode == IDLE:
        return page_loads(seconds, topics, groups), ""
    env = {**os.environ, "KAFKA_BACKGROUND_CLIENT_PROCESS": "1" if mode == OWN else "0"}
    worker = subprocess.Popen([sys.executable, __file__, "--background", str(seconds)], env=env,
                              stdout=subprocess.PIPE, text=True)
    time.sleep(2.0)  # its Django start, so that the pages are timed against the work itself
    samples = page_loads(seconds - 2.0, topics, groups)
    out, _ = worker.communicate(timeout=seconds + 300)
    check(worker.returncode == 0, f"the background process failed ({worker.returncode})")
    sweeps, sweep_s, rebuilds, rebuild_s = out.split()
    check(int(sweeps) >= 1 and int(rebuilds) >= 1 and samples, f"{mode}: {sweeps} sweeps, {rebuilds} rebuilds, "
                                                               f"{len(samples)} page loads")
    return samples, f"{sweeps} sweeps ({float(sweep_s) / max(1, int(sweeps)):.1f} s each), {rebuilds} rebuilds " \
                    f"({float(rebuild_s) / max(1, int(rebuilds)):.1f} s each)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=2500)
    parser.add_argument("--groups", type=int, default=20_000)
    parser.add_argument("--records", type=int, default=2)
    parser.add_argument("--phase-s", type=float, default=40.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--background", type=float, help=argparse.SUPPRESS)
    args = parse_args(parser, smoke={"topics": 7, "groups": 26, "phase_s": 4.0, "rounds": 1})
    if args.background is not None:
        background(args.background)
        return

    with bench_stack("lanes", offsets_partitions=6):
        from console.clusters.models import Cluster

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        Cluster.objects.update_or_create(name="local", defaults={"bootstrap_servers": bootstrap})
        seed_s = seed(bootstrap, args.groups, args.topics, args.records)
        print(f"seeded in {seed_s:.0f} s", flush=True)
        topics = [f"lagscale-{i:04d}" for i in range(0, args.topics, 7)]
        groups = [f"lagscale-group-{g:05d}" for g in range(0, args.groups, 13)]
        page_loads(3.0, topics, groups)  # the pages' client process and clients, warm
        samples = {mode: [] for mode in (IDLE, SHARED, OWN)}
        work = {SHARED: [], OWN: []}
        started = time.monotonic()
        for _ in range(args.rounds):
            for mode in (IDLE, SHARED, OWN):
                found, did = phase(mode, args.phase_s, topics, groups)
                samples[mode] += found
                if did:
                    work[mode].append(did)
                print(mode, summary(found), did, flush=True)
        took = time.monotonic() - started

    def p99(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]

    rows = [f"| {mode} | {summary(samples[mode])} | {p99(samples[mode]):.0f} ms | {max(samples[mode]):.0f} ms | "
            f"{'; '.join(work.get(mode, [])) or '—'} |" for mode in (IDLE, SHARED, OWN)]
    ratio = p99(samples[OWN]) / p99(samples[SHARED])
    lines = [
        f"## A page's calls while the background lane works ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/lanes.py --topics {args.topics} "
        f"--groups {args.groups} --records {args.records} --phase-s {args.phase_s:g} --rounds {args.rounds}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1), 6 `__consumer_offsets` partitions.",
        f"Data: {args.topics:,} topics × {PARTITIONS_PER_TOPIC} partitions, {args.groups:,} groups committing on the "
        f"4 partitions of one topic each (seeded in {seed_s:.0f} s). {args.rounds} rounds of three {args.phase_s:g} s "
        f"phases ({took / 60:.1f} min).",
        "",
        "One page load: DescribeTopics of one topic, its earliest and latest offsets, DescribeGroups and the "
        "committed offsets of one group, through the pages' lane, every 100 ms. Background work: a second process "
        "running lag sweeps and topic table rebuilds back to back, through the background lane.",
        "",
        "| background lane | page load | p99 | max | background work done |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"Ratio of p99s, own process / shared process: **{ratio:.2f}**.",
    ]
    write_section(f"lanes-{args.topics}x{args.groups}", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
