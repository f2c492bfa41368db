"""What each registered cluster costs in memory on `make run`'s kind of stack: the console's processes by kind with 1,
6 and 20 clusters registered (all on the same broker), and the cost per added cluster.

    flock /tmp/console-suite.lock .venv/bin/python bench/clusters_memory.py [--clusters 1,6,20]

Started here, on free ports in a temporary folder (as bench/scale.py's `--stack run`): one broker (or the one
KAFKA_BOOTSTRAP_SERVERS names), Redis, SQLite, and the console's processes as the Procfile starts them, each under
devstack.keep_running so that /health knows their pids: the web process (devstack/web.py: gunicorn, its default
workers), a Celery worker (--concurrency 2), beat (a lag sweep every --sweep-every s) and the group recorder. For each
count, the clusters missing are registered (`local`, seeded by migrate, is the first), a logged-in session opens each
cluster's topics, groups and transactions pages once (the last starts the host's Java Admin JVM), a lag sweep of
every cluster is waited for, then --settle s; then /health (with the metrics token) gives the memory of the console's
processes by kind (console/footprint.py: PSS and RSS from /proc). The cost per added cluster is the difference in the
PSS total between the largest and the smallest count, divided by the clusters added. Writes bench/RESULTS.md (section
clusters-memory).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import check, machine, parse_args, write_section  # noqa: E402
from bench.scale_stack import PASSWORD, PYTHON, USERNAME, Stack, login, manage, wait_until  # noqa: E402

MIB = 1024 * 1024
KINDS = ("web", "worker", "beat", "recorder", "client", "jvm")
PAGES = ("topics", "groups", "transactions")


def supervised(stack: Stack, name: str, command: list[str], env: dict[str, str]):
    """A console process as `make run` starts it: under keep_running, whose status file names its pid."""
    return stack.spawn(name, [PYTHON, "-m", "devstack.keep_running", name, "--", *command], env)


def seed(bootstrap: str) -> None:
    """A few topics and a group with committed offsets, so the pages and the lag sweep have something to read."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [f"memory-{i}" for i in range(3)]
    for future in admin.create_topics([NewTopic(name, 2, 1) for name in names]).values():
        try:
            future.result(30)
        except Exception as exc:  # noqa: BLE001 - a rerun on a shared broker finds them there
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "memory-group", "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(name, p, 0) for name in names for p in range(2)], asynchronous=False)
    consumer.close()


def memory(base: str, token: str) -> dict:
    import requests

    answer = requests.get(f"{base}/health", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return answer.json()["memory"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", default="1,6,20", help="cluster counts to measure, ascending")
    parser.add_argument("--sweep-every", type=int, default=10, help="seconds between lag sweeps")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds between a count's sweep and its reading")
    args = parse_args(parser, smoke={"clusters": "1,2", "sweep_every": 3, "settle": 1.0})
    counts = [int(n) for n in args.clusters.split(",")]
    check(counts == sorted(set(counts)) and counts[0] >= 1, f"--clusters must ascend from 1 or more: {args.clusters}")

    from devstack.kafka import KafkaNode, free_port
    from devstack.redis import RedisNode

    work = Path(tempfile.mkdtemp(prefix="bench-clusters-memory-"))
    stack = Stack(work)
    redis_node = RedisNode(home=work / "redis", port=free_port())
    node = None
    readings: dict[int, dict] = {}
    started = time.monotonic()
    try:
        bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
        if not bootstrap:
            node = KafkaNode(home=work / "kafka", port=free_port(), controller_port=free_port(),
                             heap=("-Xms512m", "-Xmx1g"))
            node.start(stdout=open(work / "broker.log", "w"))
            node.wait_ready()
            bootstrap = node.bootstrap
        redis_node.start()
        seed(bootstrap)
        port, token = free_port(), secrets.token_urlsafe(24)
        env = {**os.environ, "DJANGO_ENV_FILE": "", "DJANGO_DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(40),
               "AUDIT_HASH_KEY": secrets.token_urlsafe(40), "DATABASE_URL": f"sqlite:///{work / 'console.sqlite3'}",
               "REDIS_URL": redis_node.url, "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
               "DJANGO_SECURE_COOKIES": "false", "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "CONSOLE_METRICS_TOKEN": token,
               "REPLAY_OUTPUT_DIR": str(work / "replays"), "REPLAY_DRIVER_PRESTART": "false",
               "PROCESS_STATUS_DIR": str(work / "processes"), "LOG_LEVEL": "WARNING",
               "KAFKA_CLIENT_SOCKET_DIR": str(stack.client_dir), "LAG_SAMPLE_INTERVAL_S": str(args.sweep_every),
               "DJANGO_SUPERUSER_USERNAME": USERNAME, "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
               "DJANGO_SUPERUSER_EMAIL": "bench@example.invalid", "DJANGO_SETTINGS_MODULE": "console.settings"}
        os.environ.update({k: v for k, v in env.items() if k != "DJANGO_SUPERUSER_PASSWORD"})
        import django

        django.setup()
        from console.clusters.models import Cluster
        from offsets.models import LagSweep

        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput")
        manage(env, "createsuperuser", "--noinput")
        from devstack.web import command as web_command

        supervised(stack, "web", web_command(f"127.0.0.1:{port}"), env)
        supervised(stack, "worker", [PYTHON, "-m", "celery", "-A", "console", "worker", "--concurrency=2",
                                     "--loglevel=WARNING", f"--hostname=memory-bench-{os.getpid()}@%h"], env)
        supervised(stack, "beat", [PYTHON, "-m", "celery", "-A", "console", "beat", "--loglevel=WARNING",
                                   "--schedule", str(work / "celerybeat-schedule")], env)
        supervised(stack, "recorder", [PYTHON, "manage.py", "record_groups"], env)
        base = f"http://127.0.0.1:{port}"
        wait_until("the web process", lambda: _answers(base), 120, stack)
        session = login(base)
        for count in counts:
            for i in range(Cluster.objects.count() + 1, count + 1):
                Cluster.objects.create(name=f"memory-{i:02d}", bootstrap_servers=bootstrap)
            names = list(Cluster.objects.order_by("name").values_list("name", flat=True))
            check(len(names) == count, f"{len(names)} clusters registered, {count} wanted")
            for name in names:
                for page in PAGES:
                    answer = session.get(f"{base}/clusters/{name}/{page}/", timeout=120)
                    check(answer.status_code == 200, f"{page} of {name}: {answer.status_code}")
            stage = datetime.now(UTC)

            def swept() -> bool:
                done = LagSweep.objects.filter(cluster__in=names, last_ok_at__gt=stage).count()
                return done == len(names)
            wait_until(f"a lag sweep of {count} clusters", swept, 300, stack)
            time.sleep(args.settle)
            readings[count] = memory(base, token)
            kinds = readings[count]["kinds"]
            print(count, {kind: f"{figures['pss_bytes'] / MIB:.0f} MiB x{figures['processes']}"
                          for kind, figures in kinds.items()}, flush=True)
            clients = kinds.get("client", {}).get("clusters", {})
            check(sorted(clients) == sorted(names), f"client processes for {sorted(clients)}, clusters {names}")
            check(kinds.get("jvm", {}).get("processes") == 1, f"Java Admin JVMs: {kinds.get('jvm')}")
            stack.check_alive()
    finally:
        from gateway.kafka.sandbox import stop_host_processes

        try:
            stop_host_processes()  # the bench's folder (KAFKA_CLIENT_SOCKET_DIR above): its own client processes
        except Exception as exc:  # noqa: BLE001 - the servers below are stopped whatever happened here
            print(f"stopping the client processes: {exc}", flush=True)
        stack.stop()
        redis_node.stop()
        if node is not None:
            node.stop()
        shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - started
    report(args, counts, readings, took)


def _answers(base: str) -> bool:
    import requests

    try:
        return requests.get(f"{base}/health/live", timeout=5).status_code == 200
    except requests.RequestException:
        return False


LIMIT_MIB = 60  # issue 62: what each registered cluster may add to the host's console processes


def report(args, counts: list[int], readings: dict[int, dict], took: float) -> None:
    def cell(count: int, kind: str) -> str:
        figures = readings[count]["kinds"].get(kind)
        if not figures:
            return "—"
        return f"{figures['pss_bytes'] / MIB:.0f} / {figures['rss_bytes'] / MIB:.0f} ({figures['processes']})"

    def total(count: int, measure: str, *, without: str = "") -> float:
        kinds = readings[count]["kinds"]
        return sum(figures[measure] for kind, figures in kinds.items() if kind != without) / MIB

    low, high = counts[0], counts[-1]
    added = max(1, high - low)

    def per_cluster(measure: str, *, without: str = "") -> float:
        return (total(high, measure, without=without) - total(low, measure, without=without)) / added

    pss_each, rss_each = per_cluster("pss_bytes"), per_cluster("rss_bytes")
    recorder_share = pss_each - per_cluster("pss_bytes", without="recorder")
    clients = readings[high]["kinds"].get("client", {})
    client_each = clients.get("pss_bytes", 0) / MIB / max(1, len(clients.get("clusters", {})))
    rows = [f"| {kind} | " + " | ".join(cell(count, kind) for count in counts) + " |"
            for kind in KINDS if any(kind in readings[count]["kinds"] for count in counts)]
    verdict = "under" if pss_each < LIMIT_MIB else "**over**"
    lines = [
        f"## Memory per registered cluster ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/clusters_memory.py --clusters {args.clusters} "
        f"--sweep-every {args.sweep_every} --settle {args.settle:g}`",
        "",
        f"Machine: {machine()}. One local KRaft broker (Kafka 4.3.1); every cluster registered points at it. "
        f"Run took {took / 60:.1f} min.",
        "",
        "Each count: the missing clusters registered, each cluster's topics, groups and transactions pages opened "
        "once, a lag sweep of every cluster waited for; then /health's memory report, from /proc, in MiB: PSS / RSS "
        "(processes). RSS counts each shared page (a forked worker's with its parent, the libraries every client "
        "process maps) in every process; PSS divides it among them, so PSS sums to what the host pays.",
        "",
        "| kind | " + " | ".join(f"{count} cluster{'s' if count > 1 else ''}" for count in counts) + " |",
        "|---|" + "---|" * len(counts),
        *rows,
        "| total | " + " | ".join(f"{total(count, 'pss_bytes'):.0f} / {total(count, 'rss_bytes'):.0f}"
                                 for count in counts) + " |",
        "",
        f"Cost per added cluster ({low} → {high}): **{pss_each:.0f} MiB** PSS ({verdict} the {LIMIT_MIB} MiB "
        f"aimed at), {rss_each:.0f} MiB RSS; of the PSS, the group recorder's thread {recorder_share:.0f} MiB and a "
        f"cluster's client process at {high} clusters {client_each:.0f} MiB.",
    ]
    check(total(high, "pss_bytes") >= total(low, "pss_bytes") * 0.5, "the totals make no sense")
    write_section("clusters-memory", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
