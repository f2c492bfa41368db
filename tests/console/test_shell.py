"""The shell's one grammar (console/shell.py), first on every command's parser (no database, no broker), then on
the real broker: --cluster and the other shared options give the same result before or after the subcommand, a
flag in the wrong place or an unknown one is a one-line error that changes nothing, and --format json is JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from argparse import SUPPRESS, _HelpAction, _SubParsersAction, _VersionAction
from io import StringIO

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class

from console.paths import PROJECT_DIR
from console.shell import (
    BEFORE, MSG_AFTER_SUBCOMMAND, MSG_GIVEN_TWICE, MSG_NOT_FOR_SUBCOMMAND, MSG_OTHER_SUBCOMMAND, MSG_REQUIRED,
    MSG_UNRECOGNIZED, Subcommands,
)

SHARED_FLAGS = {"--cluster", "--format", "--actor", "--reason", "--yes"}
CONSOLE_APPS = {"console", "offsets", "topics", "records", "replication", "access", "transactions", "alerts",
                "sparkjobs", "config_as_code", "api"}
SAMPLES = {"cluster": "prod", "format": "json", "actor": "ada", "reason": "why not"}


def _console_commands() -> dict[str, object]:
    """Every management command of the console's own apps (not Django's or a library's), with its parser."""
    return {name: load_command_class(app, name).create_parser("manage.py", name)
            for name, app in sorted(get_commands().items()) if app.split(".")[0] in CONSOLE_APPS}


COMMANDS = _console_commands()
WITH_SUBCOMMANDS = {name: parser for name, parser in COMMANDS.items()
                    if any(isinstance(a, _SubParsersAction) for a in parser._actions)}


def _sample(action) -> str:
    if action.choices:
        choices = list(action.choices)
        return "json" if "json" in choices else str(choices[0])
    return "1" if action.type in (int, float) else "x"


def _minimal(parser, but: str = "") -> list[str]:
    """The arguments a subcommand cannot go without (but the shared option `but`), with a value each accepts."""
    args = []
    for dest, shared in parser.shared.items():
        if shared.required and dest != but:
            args += [shared.action.option_strings[0], SAMPLES.get(dest, _sample(shared.action))]
    for action in parser._actions:
        if isinstance(action, (_HelpAction, _VersionAction)) or (action.option_strings and not action.required):
            continue
        if action.option_strings:
            args += [action.option_strings[0]] + ([] if action.nargs == 0 else [_sample(action)])
        else:
            args.append(_sample(action))
    for group in parser._mutually_exclusive_groups:
        if group.required:
            action = group._group_actions[0]
            args += [action.option_strings[0]] + ([] if action.nargs == 0 else [_sample(action)])
    return args


def _shared_cases():
    for command, parser in WITH_SUBCOMMANDS.items():
        for subcommand, sub in parser.subcommands.choices.items():
            for dest, shared in sub.shared.items():
                yield pytest.param(command, subcommand, dest, id=f"{command}-{subcommand}-{dest}")


def _parse(command: str, *args: str) -> dict:
    return vars(COMMANDS[command].parse_args(list(args)))


def _error(command: str, *args: str) -> str:
    with pytest.raises(CommandError) as raised:
        COMMANDS[command].parse_args(list(args))
    return str(raised.value).removeprefix("Error: ")


def test_every_command_with_subcommands_is_on_the_one_base():
    assert set(WITH_SUBCOMMANDS) >= {"groups", "topics", "messages", "transactions", "acls", "users", "replication",
                                     "alerts", "clusters", "roles"}
    for command, parser in WITH_SUBCOMMANDS.items():
        assert isinstance(parser.subcommands, Subcommands), command
        for subcommand, sub in parser.subcommands.choices.items():
            # A shared option declared around the base would be taken after the subcommand only.
            for action in sub._actions:
                if SHARED_FLAGS & set(action.option_strings):
                    assert sub.shared.get(action.dest, None) is not None and action.default is SUPPRESS, \
                        f"{command} {subcommand} {action.option_strings}"
            if "format" in sub.shared:
                assert {"table", "json"} <= set(sub.shared["format"].action.choices), f"{command} {subcommand}"
    for command, parser in COMMANDS.items():
        for action in parser._actions:
            if "--format" in action.option_strings and not action.dest.startswith(BEFORE):
                assert {"table", "json"} <= set(action.choices), command


@pytest.mark.parametrize("command,subcommand,dest", list(_shared_cases()))
def test_a_shared_option_means_the_same_before_or_after_the_subcommand(command, subcommand, dest):
    sub = COMMANDS[command].subcommands.choices[subcommand]
    shared = sub.shared[dest]
    option = shared.action.option_strings[0]
    given = [option] if shared.action.nargs == 0 else [option, SAMPLES.get(dest, _sample(shared.action))]
    before = _parse(command, *given, subcommand, *_minimal(sub, but=dest))
    after = _parse(command, subcommand, *_minimal(sub, but=dest), *given)
    assert before == after
    assert after[dest] == (True if shared.action.nargs == 0 else given[1])
    # Left out, the subcommand's own default, never another subcommand's.
    if not shared.required:
        assert _parse(command, subcommand, *_minimal(sub))[dest] == shared.default


def test_the_issues_example_and_djangos_own_options_after_the_subcommand():
    assert _parse("groups", "describe", "G", "--cluster", "prod")["cluster"] == "prod"
    assert _parse("groups", "--cluster", "prod", "describe", "G")["cluster"] == "prod"
    assert _parse("groups", "describe", "G")["cluster"] == "local"
    parsed = _parse("groups", "describe", "G", "--traceback", "-v", "2")
    assert parsed["traceback"] is True and parsed["verbosity"] == 2
    assert _parse("topics", "--clus", "prod", "-v2", "list")["cluster"] == "prod"  # argparse's own shorthands
    assert _parse("transactions", "list", "--cluster=prod")["cluster"] == "prod"


def test_a_flag_in_the_wrong_place_or_an_unknown_one_is_one_clear_error():
    assert _error("groups", "--cluster", "a", "describe", "G", "--cluster", "b") == MSG_GIVEN_TWICE.format(
        option="--cluster", subcommand="describe")
    assert _error("groups", "--yes", "list") == MSG_NOT_FOR_SUBCOMMAND.format(
        option="--yes", command="manage.py groups", subcommand="list")
    assert _error("alerts", "--cluster", "prod", "list") == MSG_NOT_FOR_SUBCOMMAND.format(
        option="--cluster", command="manage.py alerts", subcommand="list")
    assert _error("topics", "--partitions", "3", "create", "--topic", "t") == MSG_AFTER_SUBCOMMAND.format(
        option="--partitions", command="manage.py topics", owners="create|add-partitions")
    assert _error("groups", "--members", "describe", "G") == MSG_AFTER_SUBCOMMAND.format(
        option="--members", command="manage.py groups", owners="describe")
    assert _error("groups", "list", "--members") == MSG_OTHER_SUBCOMMAND.format(
        option="--members", command="manage.py groups", owners="describe", subcommand="list")
    assert _error("groups", "list", "--bogus") == MSG_UNRECOGNIZED.format(arguments="--bogus")
    assert _error("groups", "--bogus", "list") == MSG_UNRECOGNIZED.format(arguments="--bogus")
    assert _error("groups", "--format", "yaml", "list").startswith("argument --format: invalid choice: 'yaml'")
    assert _error("topics", "create", "--topic", "t", "--partitions", "1") == MSG_REQUIRED.format(option="--actor")


def test_a_misplaced_flag_from_a_real_command_line_is_one_line_and_exit_2():
    run = subprocess.run([sys.executable, "manage.py", "groups", "--yes", "list"], cwd=PROJECT_DIR,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [
        "manage.py groups: error: " + MSG_NOT_FOR_SUBCOMMAND.format(option="--yes", command="manage.py groups",
                                                                   subcommand="list")
        + " (see manage.py groups --help)"]


# On the real broker.

def _out(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _json(*args: str):
    """The command's JSON: one document, or one per line (messages)."""
    text = _out(*args)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines()]


def _steady(value):
    """Leaves out what changes from one run to the next: a scan's duration and rate, and sizes on disk, which come
    from the Java bridge within a time budget (null while its JVM still starts on a busy machine)."""
    if isinstance(value, list):
        return [_steady(v) for v in value]
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in ("seconds", "records_per_s", "sizes")}
    return value


@pytest.fixture
def twin(db, kafka_node, local_cluster, topic_factory, produce, commit):
    """A second registered name for the session broker, a topic with records and a group with commits."""
    from console.clusters.models import Cluster
    from topics.selectors import topic_snapshot_refresh

    name = f"twin-{uuid.uuid4().hex[:6]}"
    Cluster.objects.create(name=name, bootstrap_servers=kafka_node.bootstrap)
    topic = topic_factory("shell", partitions=2)
    produce(topic, [(p, b"k", b'{"n": 1}', None) for p in (0, 1)] * 3)
    group = f"shell-group-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 2, (topic, 1): 1})
    topic_snapshot_refresh(name, wait_s=30)
    return name, topic, group


READS_ON_A_CLUSTER = [
    ("groups", "list"), ("groups", "describe", "{group}"), ("topics", "list", "--search", "{topic}"),
    ("topics", "describe", "--topic", "{topic}"), ("transactions", "list"), ("acls", "list"), ("users", "quotas"),
    ("replication", "brokers"), ("messages", "read", "--topic", "{topic}"),
]


@pytest.mark.kafka
@pytest.mark.django_db
def test_cluster_before_and_after_the_subcommand_give_the_same_answer(twin):
    name, topic, group = twin
    for command, subcommand, *rest in READS_ON_A_CLUSTER:
        rest = [arg.format(topic=topic, group=group) for arg in rest]
        before = _json(command, "--cluster", name, subcommand, *rest, "--format", "json")
        after = _json(command, subcommand, *rest, "--format", "json", "--cluster", name)
        assert _steady(before) == _steady(after), command
        assert _steady(_json(command, "--format", "json", "--cluster", name, subcommand, *rest)) == _steady(after)
        for args in ([command, "--cluster", "nope", subcommand, *rest],
                     [command, subcommand, *rest, "--cluster", "nope"]):
            with pytest.raises(CommandError, match="no cluster named 'nope'"):
                call_command(*args)
    # What the group and the topic hold, so the equalities above compared something.
    described = _json("groups", "describe", group, "--cluster", name, "--format", "json")
    assert sorted((r["partition"], r["current_offset"]) for r in described) == [(0, 2), (1, 1)]
    assert len([r for r in _json("messages", "read", "--topic", topic, "--cluster", name, "--format", "json")
                if "summary" not in r]) == 6


@pytest.mark.kafka
@pytest.mark.django_db
def test_actor_reason_and_yes_before_the_subcommand_act_as_after_and_the_role_is_checked(twin, admin, viewer):
    from console.audit.models import AuditEvent

    name, topic, group = twin
    with pytest.raises(CommandError, match="needs the admin role"):
        call_command("groups", "--cluster", name, "--actor", viewer.username, "--reason", "r", "--yes",
                     "delete-offsets", group, "--topic", f"{topic}:0")
    assert not AuditEvent.objects.filter(target=f"group:{group}").exists()
    said = _out("groups", "--cluster", name, "--actor", admin.username, "--reason", "tidy", "--yes",
                "delete-offsets", group, "--topic", f"{topic}:0")
    assert said.startswith(f"Deleted group '{group}''s committed offsets: {topic}-0@2")
    event = AuditEvent.objects.get(target=f"group:{group}", outcome="success")
    assert (event.actor_name, event.reason, event.source) == (admin.username, "tidy", "cli")
    described = _json("groups", "describe", group, "--format", "json", "--cluster", name)
    assert [(r["partition"], r["current_offset"]) for r in described] == [(1, 1)]  # partition 0's is gone


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_flag_in_the_wrong_place_or_an_unknown_flag_changes_nothing(twin, admin):
    from console.audit.models import AuditEvent
    from console.clusters.selectors import cluster_admin

    name, topic, group = twin
    new = f"shell-new-{uuid.uuid4().hex[:6]}"
    act = ["--actor", admin.username, "--reason", "test"]
    attempts = [
        ["topics", "--partitions", "2", "create", "--topic", new, *act],
        ["topics", "create", "--topic", new, "--partitions", "2", "--replicas", "1", *act],
        ["topics", "--yes", "create", "--topic", new, "--partitions", "2", *act],
        ["topics", "--cluster", name, "create", "--topic", new, "--partitions", "2", "--cluster", name, *act],
        ["topics", "--cluster", name, "delete", "--topic", topic, "--yes", "--cluster", name, *act],
        ["groups", "--cluster", name, "delete", group, "--yes", "--members", *act],
        ["groups", "--topic", topic, "delete-offsets", group, "--yes", *act],
    ]
    for args in attempts:
        with pytest.raises(CommandError) as raised:
            call_command(*args)
        assert len(str(raised.value).splitlines()) == 1, args
    topics = {t.name for t in cluster_admin(name).list_topics()}
    assert topic in topics and new not in topics
    assert _json("groups", "describe", group, "--format", "json", "--cluster", name)[0]["group"] == group
    assert not AuditEvent.objects.exists()


@pytest.mark.kafka
@pytest.mark.django_db
def test_format_json_parses_wherever_it_exists(twin, admin, operator):
    name, topic, group = twin
    act = ["--actor", admin.username, "--reason", "json"]
    made = f"shell-json-{uuid.uuid4().hex[:6]}"
    runs = [
        ["groups", "list"], ["groups", "list", "--all-types"], ["groups", "describe", group],
        ["groups", "describe", group, "--members"], ["groups", "describe", group, "--state"],
        ["topics", "list"], ["topics", "describe", "--topic", topic],
        ["topics", "create", "--topic", made, "--partitions", "1", *act],
        ["topics", "alter-config", "--topic", made, "--add-config", "retention.ms=3600000", *act],
        ["topics", "add-partitions", "--topic", made, "--partitions", "2", *act],
        ["topics", "purge", "--topic", topic, "--partition", "0", "--dry-run", *act],
        ["topics", "delete", "--topic", made, "--yes", *act],
        ["messages", "read", "--topic", topic], ["messages", "search", "--topic", topic, "--key", "k"],
        ["messages", "produce", "--topic", topic, "--value", "{}", "--actor", operator.username, "--reason", "json"],
        ["transactions", "list"], ["transactions", "find-hanging", "--topic", topic],
        ["transactions", "describe-producers", "--topic", topic, "--partition", "0"],
        ["acls", "list"], ["acls", "add", "--principal", "User:shell", "--resource-type", "TOPIC",
                           "--resource-name", topic, "--operation", "READ"],
        ["acls", "remove", "--principal", "User:shell"],
        ["users", "list"], ["users", "quotas"], ["replication", "brokers"],
        ["clusters", "list"], ["roles", "list"], ["alerts", "list"],
        ["group_history", group], ["lag_history", group],
    ]
    clustered = {"groups", "topics", "messages", "transactions", "acls", "users", "replication", "group_history",
                 "lag_history"}
    for args in runs:
        where = ["--cluster", name] if args[0] in clustered else []
        parsed = _json(*args, *where, "--format", "json")
        assert parsed is not None, args
    # The same JSON with --format before the subcommand.
    assert _json("topics", "--format", "json", "--cluster", name, "describe", "--topic", topic)["name"] == topic
    assert _json("roles", "--format", "json", "list") == _json("roles", "list", "--format", "json")
