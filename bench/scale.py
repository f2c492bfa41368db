"""A big cluster served as in production: N topics x 4 partitions and M consumer groups on three brokers, the
console under gunicorn with PostgreSQL, Redis, a Celery worker and beat, measured over HTTP while another client
creates and deletes topics behind the console's back.

    flock /tmp/console-suite.lock .venv/bin/python bench/scale.py [--topics 10000] [--groups 50000] [--loads 200]
    flock /tmp/console-suite.lock .venv/bin/python bench/scale.py --topics 500 --groups 2000 --loads 60 --cold 2
    flock /tmp/console-suite.lock .venv/bin/python bench/scale.py --stack run --topics 4000 --groups 50000

`--stack run` measures `make run`'s own kind of stack instead: one broker, SQLite, and the web process as
devstack/web.py starts it (gunicorn, its default workers and threads, DEBUG off).

Everything is started here, on free ports in a temporary folder, and stopped at the end: a three-node KRaft
cluster (devstack.kafka.KafkaCluster: each node broker and controller, replication factor 1 for the
bench topics, 6 `__consumer_offsets` partitions as `KAFKA_BROKERS=3 make run` has), a Redis
(devstack.redis), a PostgreSQL from Debian's binaries (devstack/postgres.sh), then
`manage.py migrate`, `collectstatic` and `createsuperuser`, gunicorn (--workers, DEBUG off, SECRET_KEY,
AUDIT_HASH_KEY, DATABASE_URL, REDIS_URL, DJANGO_ALLOWED_HOSTS, CONSOLE_METRICS_TOKEN; the `local` cluster
registered by migrate from KAFKA_BOOTSTRAP_SERVERS), a Celery worker (--concurrency 2) and beat with the
production schedule (topic table every 15 s, lag sweep every 30 s).

Seeding: the topics in batches of 250 CreateTopics, `--records` records on every partition, then each group
g commits the 4 partitions of topic g % N with admin offset commits, 500 in flight (bench/lag_scale.py).
Measured, once beat has built the shared topic table and a lag sweep has finished: `--loads` page loads (a
logged-in session, one after the other) cycling over the topic list, a substring search, a topic page, the
groups list, a group page and /metrics, while a thread creates a topic and deletes an older one every second
with its own admin client. A topic list or search is "cold" when the gunicorn worker that answered it (from
the access log) had not read the current table yet (beat rewrote it since), "warm" when it had; `--cold` more
topic list loads follow the mix, each right after beat wrote a new table. Then Kafka's `kafka-topics --list`
and `kafka-consumer-groups --list` (JVM start included), the last lag sweep (its LagSweep row) and the RSS of
each gunicorn worker and of the Kafka client processes the console started (from /proc). The bench's own JVMs
(JmxTool, Kafka's CLI) start in the gap right after a lag sweep (scale_stack.between_sweeps), so that the sweeps
timed are slowed by the console's load and not by the bench's measuring.
Writes bench/RESULTS.md (section scale-<topics>x<groups>).

What a broker of such a cluster needs (the nodes here get them; `KAFKA_BROKERS=3 make run` likewise):
- open files: Kafka keeps each partition's active segment open (its index files are mapped, not held), plus
  sockets and jars, so about one descriptor per partition and 2,000 more. The hard limit here is 20,000 and
  cannot be raised without root, so 40,000 partitions need three brokers (about 13,400 each); each broker
  raises its soft limit to the hard one (raise_open_file_limit) and says in its log when the folders on
  disk may need more;
- memory maps: two per partition (offset and time index), under `vm.max_map_count` (65,530 by default);
- heap: `--heap` per broker (default 1g; 3 GB for the three), enough for 13,000 partitions' metadata and
  the group coordinators' 50,000 groups;
- `__consumer_offsets` with several partitions (6 here), so group coordinators spread over the brokers.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import broker_profile, broker_requests  # noqa: E402
from bench import common  # noqa: E402
from bench.common import ROOT, check, kafka_tool_ms, machine, parse_args, write_section  # noqa: E402
from console.timing import PHASES  # noqa: E402
from console.timing import parse as parse_timing  # noqa: E402
from bench.scale_stack import (  # noqa: E402
    PARTITIONS, PASSWORD, PYTHON, USERNAME, Churn, CpuMeter, Profiles, ServedBy, Stack, between_sweeps, children,
    group_name, login, manage, p95, plain_text, process_memory, redis_stamp, row, seed, start_postgres, stop_postgres,
    table_build_s, topic_name, wait_until,
)

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
SWEEP_TOOK = re.compile(r"the sweep took ([0-9.]+) s")
PAGES = ("topic list", "topic search", "topic page", "groups list", "group page", "metrics")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", choices=["production", "run"], default="production",
                        help="production: three brokers, PostgreSQL; run: make run's one broker and SQLite")
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=50_000)
    parser.add_argument("--records", type=int, default=2, help="records on every partition")
    parser.add_argument("--loads", type=int, default=200, help="page loads in the mix")
    parser.add_argument("--cold", type=int, default=5, help="more cold topic list loads after the mix")
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--heap", default="1g", help="each broker's -Xmx")
    parser.add_argument("--churn-interval", type=float, default=1.0)
    parser.add_argument("--cli-repeat", type=int, default=3)
    parser.add_argument("--idle", type=float, default=30.0,
                        help="seconds of the brokers' own CPU measured after seeding, before the console starts")
    parser.add_argument("--broker-profile", type=Path, default=None,
                        help="a folder for a Java Flight Recording of each broker during the mix, summarised by thread "
                             "and Kafka method")
    parser.add_argument("--profile", type=Path, default=None,
                        help="a folder for py-spy profiles of web, worker and client processes during the mix")
    parser.add_argument("--sweep-every", type=int, default=None,
                        help="seconds between lag sweeps (LAG_SAMPLE_INTERVAL_S; default: the console's)")
    parser.add_argument("--table-every", type=float, default=None,
                        help="seconds between topic table rebuilds (TOPIC_SNAPSHOT_INTERVAL_S; default: the console's)")
    args = parse_args(parser, smoke={"topics": 20, "groups": 40, "loads": 12, "cold": 1, "idle": 1.0,
                                     "cli_repeat": 1, "heap": "512m", "sweep_every": 2, "table_every": 2.0})

    from devstack.kafka import DEV_CLUSTER_OFFSETS_PARTITIONS, KafkaCluster, free_port
    from devstack.redis import RedisNode

    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    stack = Stack(work)
    redis_node = RedisNode(home=work / "redis", port=free_port())
    run_stack = args.stack == "run"
    brokers = 1 if run_stack else 3
    cluster = KafkaCluster(work / "kafka", size=brokers, heap=("-Xms512m", f"-Xmx{args.heap}"),
                           offsets_partitions=DEV_CLUSTER_OFFSETS_PARTITIONS)
    postgres_dir = work / "postgres"
    started_all = time.perf_counter()
    os.environ["KAFKA_CLIENT_SOCKET_DIR"] = str(stack.client_dir)  # this process's own clients too (wait_ready)
    try:
        database_url = (f"sqlite:///{work / 'console.sqlite3'}" if run_stack else start_postgres(postgres_dir))
        redis_node.start()
        cluster.start()  # raises the soft open-file limit to the hard one for each node, as make run does
        cluster.wait_ready(timeout=180)
        port, token = free_port(), secrets.token_urlsafe(24)
        env = {**os.environ, "DJANGO_ENV_FILE": "", "DJANGO_DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(40),
               "AUDIT_HASH_KEY": secrets.token_urlsafe(40), "DATABASE_URL": database_url, "REDIS_URL": redis_node.url,
               "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "DJANGO_SECURE_COOKIES": "false",
               "KAFKA_BOOTSTRAP_SERVERS": cluster.bootstrap, "CONSOLE_METRICS_TOKEN": token,
               "REPLAY_OUTPUT_DIR": str(work / "replays"), "REPLAY_DRIVER_PRESTART": "false",
               "PROCESS_STATUS_DIR": str(work / "processes"), "LOG_LEVEL": "WARNING",
               "KAFKA_CLIENT_SOCKET_DIR": str(stack.client_dir),
               "DJANGO_SUPERUSER_USERNAME": USERNAME, "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
               "DJANGO_SUPERUSER_EMAIL": "bench@example.invalid", "DJANGO_SETTINGS_MODULE": "console.settings",
               **({"LAG_SAMPLE_INTERVAL_S": f"{args.sweep_every:g}"} if args.sweep_every else {}),
               **({"TOPIC_SNAPSHOT_INTERVAL_S": f"{args.table_every:g}"} if args.table_every else {})}
        os.environ.update({k: v for k, v in env.items() if k not in ("DJANGO_SUPERUSER_PASSWORD",)})
        import django

        django.setup()
        from offsets.models import LagSweep

        seeded = seed(cluster.bootstrap, args.topics, args.groups, args.records)
        print(f"seeded: {seeded}", flush=True)
        # The floor under every figure below: what the brokers spend holding this much data with no client at all.
        idle = CpuMeter({}, {str(work / "kafka").encode(): "brokers"})
        idle.start()
        time.sleep(args.idle)
        idle_wall, idle_spent = idle.stop()
        print(f"brokers alone: {idle_spent.get('brokers', 0) / idle_wall:.0%} of a core", flush=True)
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput")
        manage(env, "createsuperuser", "--noinput")
        access_log = work / "access.log"
        access_log.touch()
        if run_stack:  # the web process exactly as make run starts it, its access log where this bench reads it
            os.environ["WEB_WORKERS"] = str(args.web_workers)
            from devstack.web import command as web_command

            web_argv = web_command(f"127.0.0.1:{port}")
            web_argv = web_argv[:web_argv.index("--access-logfile")]  # this bench's own access log instead
        else:
            web_argv = [str(ROOT / ".venv" / "bin" / "gunicorn"), "console.wsgi:application",
                        "--bind", f"127.0.0.1:{port}", "--workers", str(args.web_workers), "--timeout", "30"]
        gunicorn = stack.spawn("gunicorn", [*web_argv, "--no-control-socket", "--access-logfile", str(access_log),
                                            "--access-logformat", "%(p)s %(s)s %(U)s"],
                               {**env, "WEB_WORKERS": str(args.web_workers)})
        worker = stack.spawn("worker", [PYTHON, "-m", "celery", "-A", "console", "worker", "--concurrency=2",
                               "--loglevel=WARNING", f"--hostname=scale-bench-{os.getpid()}@%h"],
                    {**env, "LAG_SWEEP_LOG_LEVEL": "DEBUG", "TOPIC_SNAPSHOT_LOG_LEVEL": "DEBUG"})
        beat = stack.spawn("beat", [PYTHON, "-m", "celery", "-A", "console", "beat", "--loglevel=WARNING",
                             "--schedule", str(work / "celerybeat-schedule")], env)
        base = f"http://127.0.0.1:{port}"
        import redis

        redis_client = redis.Redis.from_url(redis_node.url)
        table_wait = wait_until("the shared topic table", lambda: redis_stamp(redis_client) is not None, 300, stack)
        first_build_s = table_build_s(redis_client)  # nothing remembered yet: every log start asked

        def sweep_done() -> bool:
            sweep = LagSweep.objects.filter(cluster="local").first()
            return sweep is not None and sweep.last_ok_at is not None and sweep.groups >= args.groups
        sweep_wait = wait_until("a complete lag sweep", sweep_done, 300, stack)
        session = login(base)
        print(f"table after {table_wait:.0f} s, first sweep done {sweep_wait:.0f} s later", flush=True)

        rng = random.Random(31)
        urls = {
            "topic list": lambda: "/clusters/local/topics/",
            "topic search": lambda: f"/clusters/local/topics/?q=scale-{rng.randrange(args.topics // 100 or 1):03d}",
            "topic page": lambda: f"/clusters/local/topics/{topic_name(rng.randrange(args.topics))}/",
            "groups list": lambda: "/clusters/local/groups/",
            "group page": lambda: f"/clusters/local/groups/{group_name(rng.randrange(args.groups))}/",
            "metrics": lambda: "/metrics",
        }
        samples: dict[str, list[float]] = defaultdict(list)
        timings: dict[str, list[tuple[float, dict[str, float]]]] = defaultdict(list)  # page -> (ms, Server-Timing)
        statuses: dict[int, int] = defaultdict(int)
        failures: list[str] = []
        building = 0
        served = ServedBy(access_log)
        served.next_pid(), served.next_pid()  # the login page and the login
        decoded: dict[str, bytes | None] = {}  # web worker -> the table stamp it last read

        def load(kind: str, label: str | None = None) -> None:
            nonlocal building
            url = urls[kind]()
            headers = {"Authorization": f"Bearer {token}"} if kind == "metrics" else {}
            stamp = redis_stamp(redis_client)
            started = time.perf_counter()
            answer = session.get(base + url, headers=headers, timeout=60, allow_redirects=False)
            elapsed = (time.perf_counter() - started) * 1000
            worker = served.next_pid()
            if kind in ("topic list", "topic search"):
                # Cold: the worker that answered had not decoded this table yet (first read since beat wrote it).
                label = label or f"{kind}, {'warm' if decoded.get(worker) == stamp else 'cold'}"
                decoded[worker] = stamp
            statuses[answer.status_code] += 1
            if answer.status_code != 200:
                failures.append(f"{answer.status_code} {url}: {plain_text(answer.text)[-300:]}")
            elif "being built" in answer.text:
                building += 1
            samples[label or kind].append(elapsed)
            timings[kind].append((elapsed, parse_timing(answer.headers.get("Server-Timing", ""))))

        jmx_urls = [node.jmx_url for node in cluster.nodes]
        between_sweeps(stack)
        broker_before = broker_requests.read(jmx_urls)
        broker_pids = [node.process.pid for node in cluster.nodes]
        if args.broker_profile:
            broker_profile.start(broker_pids, args.broker_profile)
        churn = Churn(cluster.bootstrap, args.churn_interval)
        churn.start()
        meter = CpuMeter({gunicorn.pid: "web (gunicorn)", worker.pid: "Celery worker", beat.pid: "Celery beat",
                          os.getpid(): "this bench (pages, churn)",
                          **{pid: "Kafka client processes" for pid in stack.client_pids()}},
                         {str(work / "kafka").encode(): "brokers", str(postgres_dir).encode(): "PostgreSQL",
                          str(work / "redis").encode(): "Redis"})
        meter.start()
        profiles = Profiles(args.profile)
        profiles.start({"web": gunicorn.pid, "worker": worker.pid,
                        **{f"client-{pid}": pid for pid in stack.client_pids()}})
        mix_started = time.perf_counter()
        later_builds_s: list[float | None] = []  # the tables beat wrote during the cold loads, log starts remembered
        for i in range(args.loads):
            load(PAGES[i % len(PAGES)])
        for _ in range(args.cold):
            before = redis_stamp(redis_client)
            wait_until("a new topic table", lambda: redis_stamp(redis_client) != before, 120, stack)
            load("topic list")
            later_builds_s.append(table_build_s(redis_client))
        mix_s = time.perf_counter() - mix_started
        cpu_wall, cpu_spent = meter.stop()
        between_sweeps(stack)  # so the brokers' totals include up to one sweep after the mix
        broker_spent = broker_requests.spent(broker_before, broker_requests.read(jmx_urls))
        if args.broker_profile:
            broker_profile.stop(broker_pids)
        profile_lines = profiles.stop()
        churn.stopping.set()
        churn.join(60)

        workers = children(gunicorn.pid)
        web_memory = {pid: process_memory(pid) for pid in workers}
        client_memory = {pid: process_memory(pid) for pid in stack.client_pids()}
        sweep = LagSweep.objects.get(cluster="local")
        os.environ["KAFKA_BOOTSTRAP_SERVERS"] = cluster.bootstrap
        between_sweeps(stack)
        topics_list = [kafka_tool_ms(TOPIC_COMMAND, "--list") for _ in range(args.cli_repeat)]
        between_sweeps(stack)
        groups_list = [kafka_tool_ms(GROUP_COMMAND, "--list") for _ in range(args.cli_repeat)]
        stack.check_alive()
    finally:
        stack.stop()
        cluster.stop(kill=True)
        redis_node.stop()
        if not run_stack:
            stop_postgres(postgres_dir)
        total_s = time.perf_counter() - started_all
        worker_log = work / "worker.log"
        sweeps_s: list[float] = []  # every sweep of the run, as offsets/lag/sampler.py logs it once stored
        if worker_log.exists():  # how the sweeps went, batch by batch (offsets/lag/observe.py logs each)
            for line in worker_log.read_text(errors="replace").splitlines():
                if "Lag sweep of" in line or "Lag sample of" in line or "Topic table of" in line:
                    print(line[-300:], flush=True)
                took = SWEEP_TOOK.search(line)
                if took:
                    sweeps_s.append(float(took.group(1)))
        shutil.rmtree(work, ignore_errors=True)

    bad = sum(n for code, n in statuses.items() if code >= 500 or code == 404)
    check(sum(len(found) for found in samples.values()) == sum(statuses.values()) == args.loads + args.cold,
          f"{sum(statuses.values())} page loads answered of {args.loads + args.cold}")
    # A full run reports failed pages against the bounds; at a smoke run's size any is a fault.
    check(not common.SMOKE or not failures, f"pages failed: {' / '.join(failures[:3])}")
    lists = {"topic list": [*samples["topic list, warm"], *samples["topic list, cold"]],
             "groups list": samples["groups list"]}
    cli = {"topic list": statistics.median(topics_list), "groups list": statistics.median(groups_list)}
    worst_web = max(hwm for _, hwm in web_memory.values())
    page_p95 = max(p95(samples["topic page"]), p95(samples["group page"]))
    # No warm topic list load (every one the first of its worker since beat's last table) leaves the bound unmet.
    warm_p95 = max(p95(samples["topic list, warm"]) if samples["topic list, warm"] else math.inf,
                   p95(samples["groups list"]))
    slower = [f"{k} max {max(v):.0f} ms vs `--list` {cli[k]:.0f} ms" for k, v in lists.items() if max(v) > cli[k]]
    sweep_s = max([sweep.duration_ms / 1000, *sweeps_s])  # the slowest sweep of the run
    sweep_failed = bool(sweep.last_error_at and sweep.last_ok_at and sweep.last_error_at > sweep.last_ok_at)

    def verdict(ok: bool) -> str:
        return "**met**" if ok else "**not met**"

    size = f"{args.topics}x{args.groups}" + ("-run" if run_stack else "")
    stack_text = (f"`make run`'s kind of stack: one KRaft node (Kafka 4.3.1, -Xmx{args.heap}, "
                  f"{DEV_CLUSTER_OFFSETS_PARTITIONS} `__consumer_offsets` partitions), SQLite, Redis, the web process "
                  f"as devstack/web.py starts it (gunicorn, {args.web_workers} workers with threads), a "
                  f"Celery worker (concurrency 2) and beat, DEBUG off; all on this machine." if run_stack else
                  f"Three KRaft nodes (Kafka 4.3.1, each broker and controller, -Xmx{args.heap}, "
                  f"{DEV_CLUSTER_OFFSETS_PARTITIONS} `__consumer_offsets` partitions), PostgreSQL (Debian), Redis, "
                  f"gunicorn with {args.web_workers} sync workers, a Celery worker (concurrency 2) and beat, DEBUG off; "
                  f"all on this machine.")
    lines = [
        f"## Big cluster: {args.topics:,} topics × {PARTITIONS} partitions, {args.groups:,} groups "
        f"({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/scale.py{' --stack run' if run_stack else ''} "
        f"--topics {args.topics} --groups {args.groups} "
        f"--records {args.records} --loads {args.loads} --cold {args.cold} --web-workers {args.web_workers} "
        f"--heap {args.heap} --idle {args.idle:g} --cli-repeat {args.cli_repeat}"
        f"{f' --broker-profile {args.broker_profile}' if args.broker_profile else ''}"
        f"{f' --sweep-every {args.sweep_every}' if args.sweep_every else ''}"
        f"{f' --table-every {args.table_every:g}' if args.table_every else ''}`",
        "",
        f"Machine: {machine()}. {stack_text}",
        f"Data: {args.topics:,} topics × {PARTITIONS} = {args.topics * PARTITIONS:,} partitions (replication factor 1, "
        f"about {args.topics * PARTITIONS // brokers:,} a broker; created and led in {seeded['topics']:.0f} s), "
        f"{args.records} records on each ({seeded['records']:.0f} s), {args.groups:,} groups committing 4 partitions "
        f"each ({args.groups * PARTITIONS:,} committed partitions, {seeded['groups']:.0f} s). The whole run took "
        f"{total_s / 60:.1f} min; the first shared topic table was in Redis {table_wait:.0f} s after the console "
        f"started, the first complete lag sweep {sweep_wait:.0f} s after that.",
        f"During the {args.loads} mixed loads and {args.cold} extra cold ones ({mix_s:.0f} s) another client created "
        f"{churn.created} topics and deleted {churn.deleted} ({len(churn.errors)} errors"
        f"{': ' + churn.errors[0] if churn.errors else ''}).",
        "",
        "| page (over HTTP, a logged-in session) | median | p95 | max | n |",
        "|---|---|---|---|---|",
        *[f"| {name} {row(samples[name])}" for name in
          ("topic list, cold", "topic list, warm", "topic search, cold", "topic search, warm", "topic page",
           "groups list", "group page", "metrics")],
        f"| Kafka `kafka-topics --list` (JVM start included) {row(topics_list)}",
        f"| Kafka `kafka-consumer-groups --list` (JVM start included) {row(groups_list)}",
        "",
        f"Answers: {', '.join(f'{n} × {code}' for code, n in sorted(statuses.items()))}"
        f"{f'; {building} said the table was being built' if building else ''}."
        + (f" First failures: {' / '.join(failures[:3])}" if failures else ""),
        f"Last lag sweep (LagSweep row): {sweep.duration_ms / 1000:.1f} s for {sweep.groups:,} groups and {sweep.partitions:,} "
        f"partitions, {sweep.skipped_groups:,} skipped{' (' + sweep.skipped_reason + ')' if sweep.skipped_groups else ''}"
        f"; last error: {sweep.last_error[:200] if sweep.last_error else 'none'}. Every sweep of the run (the "
        f"worker's log): {', '.join(f'{s:.1f}' for s in sweeps_s) or 'none logged'} s.",
        f"Building the shared topic table (beat, topics/listing.py): the first {_seconds(first_build_s)} (every log "
        f"start asked), then, log starts remembered (topics/log_starts.py): "
        f"{', '.join(_seconds(s) for s in later_builds_s) or 'none seen'}.",
        f"CPU during the mix ({cpu_wall:.0f} s of wall time, {os.cpu_count()} cores): "
        + ", ".join(f"{part} {spent:.0f} s ({spent / cpu_wall:.0%} of a core)" for part, spent in cpu_spent.items())
        + f"; the brokers alone, before the console started: {idle_spent.get('brokers', 0) / idle_wall:.0%} of a "
        "core.",
        "Memory of each gunicorn worker (RSS now / peak): "
        + ", ".join(f"{rss:.0f} / {hwm:.0f} MiB" for rss, hwm in web_memory.values())
        + "; the Kafka client processes the web and Celery workers started: "
        + (", ".join(f"{rss:.0f} / {hwm:.0f} MiB" for rss, hwm in client_memory.values()) or "none") + ".",
        "",
        "Where the two slowest loads of each page spent their time, from the console's Server-Timing header "
        "(`app` is the request inside Django, `cpu` the CPU time its thread had, `runqueue` how long it waited, "
        "runnable, for a CPU; the rest of a load is gunicorn and the network; ms):",
        "",
        f"| page | load | app | cpu | runqueue | {' | '.join(PHASES)} |",
        "|---|---|---|---|---|" + "---|" * len(PHASES),
        *[f"| {kind} | {ms:.0f} ms | {phases.get('app', 0):.0f} | {phases.get('cpu', 0):.0f} | "
          f"{phases.get('runqueue', 0):.0f} | "
          + " | ".join(f"{phases[p]:.0f}" if p in phases else "—" for p in PHASES) + " |"
          for kind in PAGES for ms, phases in sorted(timings[kind], key=lambda t: t[0])[-2:]],
        "",
        f"What the brokers' request threads did during the mix (Kafka's RequestMetrics through JmxTool, summed over "
        f"the {brokers} broker(s), read in the gap after a lag sweep, so the last reading includes up to one sweep after "
        f"the mix; `in threads` is LocalTimeMs, `waiting` RequestQueueTimeMs; the eight busiest):",
        "",
        "| request | requests | in threads | waiting |",
        "|---|---|---|---|",
        *[f"| {request} | {count:,} | {local / 1000:.1f} s | {queued / 1000:.1f} s |"
          for request, count, local, queued in broker_spent[:8]],
        "",
        *([f"Where the brokers' Java threads ran during the mix (Java Flight Recorder's execution samples, the "
           f"three brokers together; garbage collection is not sampled; `--broker-profile {args.broker_profile}`):",
           "", *broker_profile.summarise(args.broker_profile), ""] if args.broker_profile else []),
        "Against the issue's \"Done when\":",
        f"- no 5xx and no 404 across the page loads while topics were created and deleted: {bad} "
        f"→ {verdict(bad == 0)}",
        f"- topic and group lists p95 under 300 ms warm: topic list {_p95_text(samples['topic list, warm'])}, "
        f"groups list {p95(samples['groups list']):.0f} ms → {verdict(warm_p95 < 300)}",
        f"- lists never slower than Kafka's `--list` in the same run (cold JVM, medians {cli['topic list']:.0f} and "
        f"{cli['groups list']:.0f} ms): " + ("; ".join(slower) if slower else "every list load was faster")
        + f" → {verdict(not slower)}",
        f"- a group or topic page p95 under 200 ms: topic page {p95(samples['topic page']):.0f} ms, group page "
        f"{p95(samples['group page']):.0f} ms → {verdict(page_p95 < 200)}",
        f"- the lag sweep under 15 s and never losing its client process: slowest {sweep_s:.1f} s"
        f"{', the last sweep failed after the last success' if sweep_failed else ''} "
        f"→ {verdict(sweep_s < 15 and not sweep_failed)}",
        "- the recorder at 0.9 of a raw consumer: not measured by this bench (see bench/recorder.py's section)",
        f"- memory per web worker under 300 MB: peak {worst_web:.0f} MiB → {verdict(worst_web * 1.048576 < 300)}",
    ]
    write_section(f"scale-{size}", "\n".join(lines))
    print("\n".join(lines))
    if profile_lines:
        print("\n".join(["Profiles (py-spy, during the mix):", *profile_lines]))


def _p95_text(samples: list[float]) -> str:
    return f"{p95(samples):.0f} ms" if samples else "no load measured"


def _seconds(value: float | None) -> str:
    return "not known" if value is None else f"{value:.1f} s"


if __name__ == "__main__":
    main()
