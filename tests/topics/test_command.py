"""`manage.py topics` against the real broker: same services, errors on stderr with a non-zero exit."""

import json
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.paths import PROJECT_DIR
from gateway.kafka.types import TOPIC

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _cluster(local_cluster):
    return local_cluster


def _run(*args):
    call_command("topics", *args)


def test_create_describe_alter_partitions_purge_delete(admin, capsys, produce):
    _run("create", "--topic", "cli-orders", "--partitions", "2", "--config", "retention.ms=3600000",
         "--config", "cleanup.policy=delete", "--actor", "ada", "--reason", "cli test")
    produce("cli-orders", [(0, None, b"x", None)] * 5)
    _run("alter-config", "--topic", "cli-orders", "--add-config", "retention.ms=7200000,segment.ms=600000",
         "--actor", "ada", "--reason", "tune")
    _run("alter-config", "--topic", "cli-orders", "--delete-config", "segment.ms", "--actor", "ada", "--reason", "undo")
    _run("add-partitions", "--topic", "cli-orders", "--partitions", "3", "--actor", "ada", "--reason", "scale")
    _run("purge", "--topic", "cli-orders", "--partition", "0", "--offset", "2", "--actor", "ada", "--reason", "bad data")
    capsys.readouterr()

    _run("describe", "--topic", "cli-orders", "--format", "json")
    described = json.loads(capsys.readouterr().out)
    assert [(p["partition"], p["start"], p["end"]) for p in described["partitions"]] == [(0, 2, 5), (1, 0, 0), (2, 0, 0)]
    configs = {c["name"]: c for c in described["configs"]}
    assert configs["retention.ms"]["value"] == "7200000" and configs["segment.ms"]["source"] != "topic"

    _run("delete", "--topic", "cli-orders", "--yes", "--actor", "ada", "--reason", "done")
    assert "cli-orders" not in {t.name for t in cluster_admin("local").list_topics()}
    actions = list(AuditEvent.objects.filter(outcome="success").order_by("seq").values_list("action", "source"))
    assert actions == [("topic.create", "cli"), ("topic.config.alter", "cli"), ("topic.config.alter", "cli"),
                       ("topic.partitions.add", "cli"), ("topic.records.purge", "cli"), ("topic.delete", "cli")]


def test_list_json_filters_by_regex(capsys, topic_factory):
    name = topic_factory("cli-list")
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh("local", wait_s=30)

    _run("list", "--search", f"^{name}$", "--regex", "--format", "json")

    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == [name]


@pytest.mark.django_db(transaction=True)
def test_real_process_prints_the_brokers_error_naming_the_key_and_exits_nonzero(topic_factory, make_user):
    """Through a real process, what an on-call engineer sees in the shell."""
    import os

    from django.db import connection

    db = connection.settings_dict
    if not db["ENGINE"].endswith("sqlite3"):
        pytest.skip("the subprocess is pointed at the SQLite test database file")
    make_user("cli-admin", "admin")
    name = topic_factory("cli-bad")
    env = {**os.environ, "DJANGO_DEBUG": "1", "DATABASE_URL": f"sqlite:///{db['NAME']}"}

    result = subprocess.run(
        [sys.executable, "manage.py", "topics", "alter-config", "--topic", name, "--add-config", "retention.ms=later",
         "--actor", "cli-admin", "--reason", "x"],
        cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=60,
    )

    assert result.returncode == 1 and result.stdout == ""
    assert "Invalid value later for configuration retention.ms" in result.stderr
    assert cluster_admin("local").describe_configs(TOPIC, [name])[name]["retention.ms"].source != "topic"


def test_errors_are_command_errors_naming_what_was_wrong(admin, topic_factory):
    name = topic_factory("cli-err", partitions=2)

    with pytest.raises(CommandError, match="Invalid value later for configuration retention.ms"):
        _run("alter-config", "--topic", name, "--add-config", "retention.ms=later", "--actor", "ada", "--reason", "x")
    with pytest.raises(CommandError, match="would not be an increase"):
        _run("add-partitions", "--topic", name, "--partitions", "1", "--actor", "ada", "--reason", "x")
    with pytest.raises(CommandError, match="without --yes"):
        _run("delete", "--topic", name, "--actor", "ada", "--reason", "x")
    with pytest.raises(CommandError, match="Topic 'ghost' does not exist"):
        _run("describe", "--topic", "ghost")
    with pytest.raises(CommandError, match="already exists"):
        _run("create", "--topic", name, "--partitions", "1", "--actor", "ada", "--reason", "x")
    assert cluster_admin("local").describe_configs(TOPIC, [name])[name]["retention.ms"].source != "topic"


def test_operator_cannot_make_admin_changes(operator, topic_factory):
    name = topic_factory("cli-op")

    with pytest.raises(CommandError, match="needs the admin role; otto has operator"):
        _run("delete", "--topic", name, "--yes", "--actor", "otto", "--reason", "x")
    assert name in {t.name for t in cluster_admin("local").list_topics()}
