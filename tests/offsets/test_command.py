"""`manage.py reset_offsets`: dry run by default, execute with actor and reason, refusals on stderr, revert."""

import io

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef
from tests.offsets.conftest import wait_for_state

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _run(*args) -> str:
    out = io.StringIO()
    call_command("reset_offsets", "--cluster", "local", *args, stdout=out)
    return out.getvalue()


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def test_dry_run_is_the_default_and_changes_nothing(seeded, local_cluster):
    out = _run("--group", seeded["group"], "--all-topics", "--to-latest")

    assert "nothing changed" in out and "--if-unchanged" in out
    assert _committed(seeded["group"]) == {PartitionRef(seeded["topic"], 0): 8, PartitionRef(seeded["topic"], 1): 2}


def test_execute_then_revert_from_the_shell(seeded, operator, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    fingerprint = _run("--group", group, "--all-topics", "--to-latest").split("--if-unchanged ")[1].strip()

    out = _run("--group", group, "--all-topics", "--to-latest", "--execute", "--if-unchanged", fingerprint,
               "--actor", "otto", "--reason", "skip backlog", "--export")
    assert sorted(out.splitlines()) == [f"{topic},0,20", f"{topic},1,5"]
    assert _committed(group) == {PartitionRef(topic, 0): 20, PartitionRef(topic, 1): 5}

    seq = AuditEvent.objects.get(outcome="success").seq
    _run("--group", group, "--revert", str(seq), "--execute", "--actor", "otto", "--reason", "undo")
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    sources = set(AuditEvent.objects.values_list("source", flat=True))
    assert sources == {"cli"}


def test_active_group_refusal_exits_nonzero_with_the_reason(seeded, operator, live_consumer, local_cluster):
    group = seeded["group"]
    live_consumer(group, seeded["topic"])
    wait_for_state(group, {"Stable"})

    with pytest.raises(CommandError, match="is inactive, but the current state is Stable"):
        _run("--group", group, "--all-topics", "--to-earliest", "--execute", "--actor", "otto", "--reason", "r")
    with pytest.raises(CommandError, match="is inactive"):
        _run("--group", group, "--all-topics", "--to-earliest")


def test_viewer_cannot_execute_and_bad_input_is_named(seeded, viewer, local_cluster):
    group = seeded["group"]

    with pytest.raises(CommandError, match="needs the operator role; vera has viewer"):
        _run("--group", group, "--all-topics", "--to-earliest", "--execute", "--actor", "vera", "--reason", "r")
    with pytest.raises(CommandError, match="One of the reset scopes should be defined"):
        _run("--group", group, "--to-earliest")
    with pytest.raises(CommandError, match="Invalid topic arg"):
        _run("--group", group, "--topic", "a:b:c", "--to-earliest")
    with pytest.raises(CommandError, match="--actor is required"):
        _run("--group", group, "--all-topics", "--to-earliest", "--execute", "--reason", "r")
    assert not AuditEvent.objects.exists()
