"""`manage.py changes` and the commands that ask for a request on a protected target, on the real broker."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from changes.models import ChangeRequest, Protection
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_protect_reset_approve_from_the_shell(group_with_commits, operator, second_operator, admin, local_cluster):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    said = run("changes", "protect", "--group-pattern", "fe/ #%*", "--approvals", "1", "--actor", "ada",
               "--reason", "prod")
    assert "is protected (the topics and groups its patterns match)" in said
    assert Protection.objects.get(cluster="local").group_patterns == ["fe/ #%*"]
    with pytest.raises(CommandError, match="nested repetition"):
        run("changes", "protect", "--group-pattern", "re:(x+)+", "--actor", "ada", "--reason", "prod")

    asked = run("reset_offsets", "--group", group, "--all-topics", "--to-latest", "--execute", "--actor", "otto",
                "--reason", "skip the poison records")

    change = ChangeRequest.objects.get()
    assert f"change request #{change.pk} waits" in asked and f"changes approve {change.pk}" in asked
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 4,
                                                                     PartitionRef(topic, 1): 6}
    listed = json.loads(run("changes", "list", "--format", "json"))
    assert [(c["id"], c["status"], c["target"]) for c in listed] == [(change.pk, "pending", f"group:{group}")]
    shown = run("changes", "show", str(change.pk))
    assert "Asked by otto" in shown and "skip the poison records" in shown and '"target": 10' in shown
    with pytest.raises(CommandError, match="your own"):
        run("changes", "approve", str(change.pk), "--actor", "otto")

    done = json.loads(run("changes", "approve", str(change.pk), "--actor", "olga", "--format", "json"))

    assert done["status"] == "executed" and done["approvals"][0]["by"] == "olga"
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 10,
                                                                     PartitionRef(topic, 1): 10}
    run("changes", "unprotect", "--actor", "ada", "--reason", "maintenance window")
    assert not Protection.objects.exists()


def test_reject_from_the_shell_and_a_topic_purge_asked_for(topic_factory, produce, admin, operator, local_cluster):
    topic = topic_factory("ledger")
    produce(topic, [(0, None, b"x", None)] * 4)
    run("changes", "protect", "--actor", "ada", "--reason", "prod")

    asked = json.loads(run("topics", "purge", "--topic", topic, "--offset", "2", "--actor", "ada", "--reason",
                           "bad batch", "--format", "json"))
    assert asked["status"] == "pending" and asked["plan"]["partitions"][0]["target"] == 2
    with pytest.raises(CommandError, match="admin role"):
        run("changes", "reject", str(asked["id"]), "--actor", "otto", "--reason", "no")
    run("changes", "reject", str(asked["id"]), "--actor", "ada", "--reason", "withdrawn: wrong topic")

    assert ChangeRequest.objects.get().status == "rejected"
    assert run("changes", "list").count("\n") == 1  # the header: nothing pending
