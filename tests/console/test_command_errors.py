"""Every management command, run as a person runs it (a new process), answers bad arguments, an unknown cluster
and a cluster that is down with one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import CommandError, call_command

from devstack.kafka import free_port
from console.paths import PROJECT_DIR
from tests.fixtures.celery import celery_env

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ACT = ["--actor", "ada", "--reason", "test"]
BAD_ARGUMENTS = [
    ["clusters", "frobnicate"],
    ["clusters", "add", "--name", "x"],
    ["topics", "list", "--format", "xml"],
    ["topics", "create", "--topic", "t", "--partitions", "many", *ACT],
    ["groups", "describe"],
    ["groups", "list", "--format", "yaml"],
    ["reset_offsets", "--group", "g", "--all-topics"],
    ["reset_offsets", "--group", "g", "--all-topics", "--to-datetime", "yesterday"],
    ["lag_history", "g", "--range", "forever"],
    ["group_history"],
    ["replay", "--topic", "t"],
    ["audit_verify", "--nonsense"],
    ["transactions", "frobnicate"],
    ["transactions", "abort", "--topic", "t", "--start-offset", "x"],
    ["acls", "add", "--principal", "User:a"],
    ["users", "set-password", "--user", "a", "--mechanism", "MD5", *ACT],
    ["replication", "reassign", "--topic", "t"],
    ["messages", "search", "--topic", "t", "--value-regex", "(unclosed"],
    ["messages", "read", "--topic", "t", "--from", "last tuesday"],
    ["messages", "produce", "--topic", "t", "--value", "x"],
]
ON_A_CLUSTER = [
    ["topics", "list"],
    ["topics", "describe", "--topic", "orders"],
    ["topics", "create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1", *ACT],
    ["topics", "alter-config", "--topic", "orders", "--add-config", "retention.ms=1000", *ACT],
    ["topics", "add-partitions", "--topic", "orders", "--partitions", "4", *ACT],
    ["topics", "purge", "--topic", "orders", "--partition", "0", "--offset", "1", *ACT],
    ["topics", "delete", "--topic", "orders", "--yes", *ACT],
    ["groups", "list"],
    ["groups", "describe", "billing"],
    ["groups", "delete", "billing", "--yes", *ACT],
    ["groups", "delete-offsets", "billing", "--topic", "orders", "--yes", *ACT],
    ["reset_offsets", "--group", "billing", "--all-topics", "--to-earliest"],
    ["record_groups", "--until-caught-up"],
    ["replay", "--topic", "orders", "--start", "earliest", "--end", "latest", "--sink", "files:parquet", *ACT],
    ["transactions", "list"],
    ["transactions", "find-hanging", "--topic", "orders"],
    ["acls", "list"],
    ["users", "list"],
    ["replication", "brokers"],
    ["messages", "read", "--topic", "orders"],
    ["messages", "produce", "--topic", "orders", "--value", "x", *ACT],
]


# Families whose down-cluster answer is also checked in a process of its own: a plain read, the recorder (its own
# consumer) and a replay (its planning reads offsets).
NEW_PROCESS_FAMILIES = ("topics", "record_groups", "replay")


def _run(env: dict, args: list[str]) -> tuple[list[str], subprocess.CompletedProcess]:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=PROJECT_DIR, env=env, capture_output=True,
                            text=True, timeout=60)
    return args, result


def _with_cluster(args: list[str], cluster: str) -> list[str]:
    # --cluster goes before or after a subcommand (tests/console/test_shell.py): last, as a person adds it.
    return [*args, "--cluster", cluster]


def test_bad_arguments_unknown_clusters_and_a_down_cluster_get_one_line(redis_node, kafka_node, admin):
    from console.clusters.models import Cluster

    Cluster.objects.create(name="down", bootstrap_servers=f"127.0.0.1:{free_port()}")
    env = celery_env(redis_node, kafka_node)
    # A new process for what only a process shows (argparse's exit status, a down cluster's wait), for a few bad
    # arguments; the rest, and every unknown cluster, take the same error paths inside the command (argparse's
    # errors become CommandError there), so they run in this process: a Django start each would cost a minute.
    runs = [*BAD_ARGUMENTS[:3]]
    # One command of each family against the down cluster: a few in new processes (each waits out a request
    # timeout there), the others in this one, where the first waits it out and the rest meet the down cluster's
    # back-off, which is the same one line; every command against an unknown cluster below.
    first_of_each = {args[0]: args for args in reversed(ON_A_CLUSTER)}
    runs += [_with_cluster(args, "down") for args in first_of_each.values() if args[0] in NEW_PROCESS_FAMILIES]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda args: _run(env, args), runs))
    # These read what the console stored, so a down cluster is no error for them; an unknown one is.
    in_process = [_with_cluster(args, "nope")
                  for args in [*ON_A_CLUSTER, ["group_history", "billing"], ["lag_history", "billing"]]]
    in_process += [_with_cluster(args, "down") for args in first_of_each.values()
                   if args[0] not in NEW_PROCESS_FAMILIES]
    for args in [*BAD_ARGUMENTS[3:], *in_process]:
        try:
            call_command(*args)
        except CommandError as exc:
            message = str(exc)
        else:
            message = "no error"
        results.append((args, subprocess.CompletedProcess(args, 1, "", message + "\n")))

    problems = []
    for args, result in results:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        if result.returncode == 0 or len(lines) != 1 or "Traceback" in result.stderr:
            problems.append(f"{' '.join(args)} -> exit {result.returncode}, stderr: {result.stderr[-600:]!r}")
        elif "nope" in args and "no cluster named 'nope'" not in lines[0]:
            problems.append(f"{' '.join(args)} -> {lines[0]}")
        elif "down" in args and "did not answer" not in lines[0] and "down" not in lines[0]:
            problems.append(f"{' '.join(args)} -> {lines[0]}")
    assert problems == [], "\n".join(problems)
