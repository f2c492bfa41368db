"""`manage.py connect`: every subcommand's JSON equals what Connect's REST API answers for the same state, changes
need --yes, an operator and a reason where the pages need them, and refusals are one line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from console.audit.models import AuditEvent
from tests.connect.conftest import FILE_SINK, FILE_SOURCE

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
NAME = "shell sink ☃ #1"


def run(*args, **options) -> str:
    out = StringIO()
    call_command("connect", *args, stdout=out, **options)
    return out.getvalue()


def run_json(*args, **options):
    return json.loads(run(*args, "--format", "json", **options))


@pytest.fixture
def connection_settings(connect_cluster):
    """The FileStreamSink here carries a password it ignores, as a database sink would declare one."""
    from connect.models import ConnectCluster

    ConnectCluster.objects.filter(pk=connect_cluster.pk).update(operator_settings=["connection.*"])


@pytest.fixture
def sink(connect_cluster, connect_rest, topic_factory, tmp_path):
    topic = topic_factory("shell")
    config = {"connector.class": FILE_SINK, "topics": topic, "file": str(tmp_path / "out.txt"), "tasks.max": "1"}
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": config})[0] == 201
    connect_rest.wait_state(NAME, "RUNNING")
    return topic, config


def test_reads_print_what_the_rest_api_answers(sink, connect_rest):
    expanded = connect_rest("GET", "connectors", query="expand=info&expand=status")[1]
    assert run_json("list") == expanded
    assert run_json("describe", NAME) == {"info": connect_rest("GET", "connectors", NAME)[1],
                                          "status": connect_rest("GET", "connectors", NAME, "status")[1]}
    assert run_json("plugins") == connect_rest("GET", "connector-plugins")[1]
    assert run_json("offsets", NAME) == connect_rest("GET", "connectors", NAME, "offsets")[1]
    assert run_json("list", "--match", "shell sink") == {NAME: expanded[NAME]}
    assert run_json("list", "--state", "PAUSED") == {}
    table = run("list")
    assert NAME in table and "RUNNING" in table


def test_changes_print_the_state_connect_then_reports(sink, connect_rest, operator, admin, tmp_path):
    topic, config = sink
    assert "Would pause 1 connector(s); nothing changed" in run("pause", NAME)
    assert connect_rest.state(NAME) == "RUNNING"
    paused = run_json("pause", NAME, "--yes", "--actor", operator.username)
    assert paused == connect_rest("GET", "connectors", NAME, "status")[1] and paused["connector"]["state"] == "PAUSED"
    assert run_json("resume", NAME, "--yes", "--actor", operator.username)["connector"]["state"] == "RUNNING"
    stopped = run_json("stop", NAME, "--yes", "--actor", operator.username)
    assert stopped == connect_rest("GET", "connectors", NAME, "status")[1] and stopped["connector"]["state"] == "STOPPED"

    dry = run("offsets", NAME, "--to-offset", "0", "--topic", topic)
    assert "Dry run: nothing changed" in dry
    fingerprint = dry.rsplit("--if-unchanged ", 1)[1].strip()
    after = run_json("offsets", NAME, "--to-earliest", "--topic", topic, "--yes", "--if-unchanged", fingerprint,
                     "--actor", operator.username, "--reason", "shell test")
    assert after == connect_rest("GET", "connectors", NAME, "offsets")[1]
    assert after["offsets"] == [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                                 "offset": {"kafka_offset": 0}}]
    event = AuditEvent.objects.filter(action="connector.offsets.alter", outcome="success").latest("seq")
    reverted = run_json("offsets", NAME, "--revert", str(event.seq), "--yes", "--actor", operator.username,
                        "--reason", "undo")
    assert reverted == connect_rest("GET", "connectors", NAME, "offsets")[1]

    edited = run_json("edit", NAME, "--config", "tasks.max=2", "--yes", "--actor", operator.username, "--reason", "x")
    assert edited["config"]["tasks.max"] == "2"
    connect_rest.read("connectors", NAME, until=lambda info: info == edited)
    created = run_json("create", "second one", "--config", f"connector.class={FILE_SOURCE}", "--config",
                       f"topic={topic}", "--config", f"file={tmp_path / 'nothing-here'}", "--yes", "--actor",
                       operator.username)
    assert created == connect_rest("GET", "connectors", "second one")[1]
    with pytest.raises(CommandError, match="This needs the admin role"):
        run("delete", "second one", "--yes", "--actor", operator.username, "--reason", "x")
    assert run_json("delete", "second one", "--yes", "--actor", admin.username, "--reason", "done") == \
        connect_rest("GET", "connectors")[1]


def test_refusals_are_one_line_and_change_nothing(sink, connect_rest, viewer, operator):
    with pytest.raises(CommandError, match="This needs the operator role"):
        run("stop", NAME, "--yes", "--actor", viewer.username)
    with pytest.raises(CommandError, match="Connect refused the configuration"):
        run("create", "bad", "--config", f"connector.class={FILE_SINK}", "--config", "tasks.max=many")
    with pytest.raises(CommandError, match="cannot be empty, start or end with a space"):
        run("create", "a/b", "--config", f"connector.class={FILE_SINK}", "--yes", "--actor", operator.username)
    with pytest.raises(CommandError, match="has no connector named 'nope'"):
        run("describe", "nope")
    with pytest.raises(CommandError, match="changes offsets only of a STOPPED connector"):
        run("offsets", NAME, "--reset", "--yes", "--actor", operator.username, "--reason", "x")
    assert connect_rest.state(NAME) == "RUNNING" and "bad" not in connect_rest("GET", "connectors")[1]
    assert AuditEvent.objects.filter(action="connector.offsets.reset", outcome="refused").count() == 1


def test_bulk_selects_by_filter_and_previews_first(sink, connect_rest, operator, topic_factory, tmp_path):
    topic, _ = sink
    other = {"connector.class": FILE_SINK, "topics": topic, "file": str(tmp_path / "b.txt")}
    assert connect_rest("POST", "connectors", body={"name": "shell sink two", "config": other})[0] == 201
    connect_rest.wait_state("shell sink two", "RUNNING")
    preview = run("pause", "--match", "shell sink")
    assert NAME in preview and "shell sink two" in preview and "Would pause 2 connector(s)" in preview
    with pytest.raises(CommandError, match="--reason is required"):
        run("pause", "--match", "shell sink", "--yes", "--actor", operator.username)
    paused = run_json("pause", "--match", "shell sink", "--yes", "--actor", operator.username, "--reason", "bulk")
    assert set(paused) == {NAME, "shell sink two"} and all(s["connector"]["state"] == "PAUSED" for s in paused.values())
    assert AuditEvent.objects.filter(action="connector.pause", outcome="success").count() == 2


def test_a_secret_is_given_in_a_private_file_or_on_standard_input_never_as_an_argument(
        connection_settings, connect_rest, operator, topic_factory, tmp_path):
    from connect.config_file import MSG_MODE, MSG_SECRET_ARGUMENT
    from connect.masking import MASK

    topic = topic_factory("secretive")
    password = "file-held-password-31"
    settings = (f"connector.class={FILE_SINK}\ntopics={topic}\nfile={tmp_path / 'o.txt'}\n"
                f"connection.password={password}\n")
    shared = tmp_path / "shared.properties"
    shared.write_text(settings)
    shared.chmod(0o644)
    argv = ["create", "from file", "--config-file", str(shared), "--yes", "--actor", operator.username]
    with pytest.raises(CommandError) as refused:
        run(*argv)
    assert str(refused.value) == MSG_MODE.format(path=shared, mode=0o644)
    with pytest.raises(CommandError) as refused:
        run("create", "from file", "--config", f"connector.class={FILE_SINK}", "--config",
            f"connection.password={password}", "--yes", "--actor", operator.username)
    assert str(refused.value) == MSG_SECRET_ARGUMENT.format(key="connection.password")
    assert "from file" not in connect_rest("GET", "connectors")[1]

    shared.chmod(0o600)
    created = run_json(*argv)
    assert password not in " ".join(argv)
    assert created["config"]["connection.password"] == MASK
    assert connect_rest("GET", "connectors", "from file")[1]["config"]["connection.password"] == password
    piped = run_json("create", "from stdin", "--config-file", "-", "--yes", "--actor", operator.username,
                     stdin=StringIO(settings.replace("o.txt", "p.txt")))
    assert piped["config"]["connection.password"] == MASK
    assert connect_rest("GET", "connectors", "from stdin")[1]["config"]["connection.password"] == password

    new_password = "rotated-password-32"
    (tmp_path / "rotate.properties").write_text(f"connection.password={new_password}\n")
    (tmp_path / "rotate.properties").chmod(0o600)
    run("edit", "from file", "--config-file", str(tmp_path / "rotate.properties"), "--yes", "--actor",
        operator.username, "--reason", "rotate")
    connect_rest.read("connectors", "from file",
                      until=lambda info: info["config"]["connection.password"] == new_password)
    audit = str([(e.params, e.before, e.after, e.error) for e in AuditEvent.objects.all()])
    assert password not in audit and new_password not in audit
