"""Register, edit and remove clusters in the browser and the shell: admin only, audited, and every later
request uses the new settings without a restart."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from devstack.kafka import free_port
from offsets.models import GroupGeneration, LagSample, RecorderStatus

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _form(name: str, bootstrap: str, **extra) -> dict:
    return {"name": name, "bootstrap_servers": bootstrap, "client_config": "", "secret_env": "", "description": "",
            "reason": "lifecycle test", **extra}


def test_only_admins_register_edit_and_remove(client_for, viewer, operator):
    Cluster.objects.create(name="kept", bootstrap_servers="127.0.0.1:1")
    for user in (viewer, operator):
        client = client_for(user)
        assert client.post("/clusters/new/", _form("sneaky", "127.0.0.1:1")).status_code == 403
        assert client.post("/clusters/kept/edit/", _form("kept", "127.0.0.1:2")).status_code == 403
        assert client.post("/clusters/kept/remove/", {"confirm": "kept", "reason": "x"}).status_code == 403
    assert not Cluster.objects.filter(name="sneaky").exists()
    assert Cluster.objects.get(name="kept").bootstrap_servers == "127.0.0.1:1"


def test_register_then_edit_takes_effect_on_the_next_request(client_for, admin, kafka_node):
    client = client_for(admin)
    closed = f"127.0.0.1:{free_port()}"

    response = client.post("/clusters/new/", _form("moving", closed, description="will move"))
    assert response.status_code == 302
    assert client.get("/clusters/moving/topics/").status_code == 503

    response = client.post("/clusters/moving/edit/", _form("moving", kafka_node.bootstrap))
    assert response.status_code == 302
    assert client.get("/clusters/moving/topics/").status_code == 200  # same process, new settings at once

    events = AuditEvent.objects.filter(action="cluster.register", target="cluster:moving", outcome="success")
    assert [e.after["bootstrap_servers"] for e in events.order_by("seq")] == [closed, kafka_node.bootstrap]
    assert events.order_by("seq").last().before["bootstrap_servers"] == closed


def test_a_taken_name_and_unsafe_settings_are_refused_with_a_message(client_for, admin):
    client = client_for(admin)
    assert "registered already" in client.post("/clusters/new/", _form("local", "x:1"), HTTP_HX_REQUEST="true").content.decode()
    body = client.post("/clusters/new/", _form("evil", "x:1", client_config="plugin.library.paths=/tmp/evil.so"),
                       HTTP_HX_REQUEST="true").content.decode()
    assert "would let the cluster&#x27;s settings run commands or load code" in body
    with pytest.raises(CommandError, match="sasl.kerberos.kinit.cmd"):
        call_command("clusters", "add", "--name", "evil", "--bootstrap-servers", "x:1",
                     "--config", "sasl.kerberos.kinit.cmd=touch /tmp/pwned", "--actor", admin.username, "--reason", "x")
    assert not Cluster.objects.filter(name="evil").exists()


def _history_of(cluster: str) -> None:
    now = datetime.now(UTC)
    GroupGeneration.objects.create(cluster=cluster, group="g", protocol="classic", generation=1, time=now,
                                   members=[], sampled=False)
    LagSample.objects.create(cluster=cluster, group="g", topic="t", step=0, time=now, lag=1, lag_max=1,
                             committed=1, end=2, partitions=1)
    RecorderStatus.objects.create(cluster=cluster, state="recording", updated_at=now)


def test_removal_says_what_goes_before_and_keeps_the_audit(client_for, admin):
    Cluster.objects.create(name="retired", bootstrap_servers="127.0.0.1:1")
    _history_of("retired")
    _history_of("local")
    client = client_for(admin)

    preview = client.get("/clusters/retired/remove/").content.decode()
    assert "1 rebalance history rows" in preview and "1 lag samples" in preview and "Audit events" in preview

    wrong = client.post("/clusters/retired/remove/", {"confirm": "nope", "reason": "x"}, HTTP_HX_REQUEST="true")
    assert "Type the cluster" in wrong.content.decode() and Cluster.objects.filter(name="retired").exists()

    assert client.post("/clusters/retired/remove/", {"confirm": "retired", "reason": "decommissioned"}).status_code == 302
    assert not Cluster.objects.filter(name="retired").exists()
    assert not GroupGeneration.objects.filter(cluster="retired").exists()
    assert not LagSample.objects.filter(cluster="retired").exists()
    assert GroupGeneration.objects.filter(cluster="local").exists()  # nobody else's data goes
    event = AuditEvent.objects.get(action="cluster.remove", outcome="success")
    assert event.after["deleted"]["rebalance history rows"] == 1 and event.reason == "decommissioned"


def test_shell_remove_previews_without_yes_and_removes_with_it(admin, capsys):
    Cluster.objects.create(name="old", bootstrap_servers="127.0.0.1:1")
    _history_of("old")

    call_command("clusters", "remove", "--name", "old", "--actor", admin.username, "--reason", "gone")
    out = capsys.readouterr().out
    assert "would delete: 1 rebalance history rows, 1 lag samples" in out and "--yes" in out
    assert Cluster.objects.filter(name="old").exists()

    call_command("clusters", "remove", "--name", "old", "--yes", "--actor", admin.username, "--reason", "gone")
    assert not Cluster.objects.filter(name="old").exists()
    assert AuditEvent.objects.filter(action="cluster.remove", actor_name=admin.username).count() == 2  # intent, success

    with pytest.raises(CommandError, match="no cluster named 'old'"):
        call_command("clusters", "remove", "--name", "old", "--yes", "--actor", admin.username, "--reason", "again")
