import json
import threading

import pytest
from django.core.management import CommandError, call_command

from console.clusters.models import Cluster
from console.clusters.selectors import cluster_connection

pytestmark = pytest.mark.django_db


def test_local_cluster_is_seeded_and_points_at_the_session_broker(kafka_node):
    assert Cluster.objects.get(name="local").bootstrap_servers == kafka_node.bootstrap


def test_migrate_seeds_the_local_cluster_from_the_settings(settings):
    from django.core.management.sql import emit_post_migrate_signal

    Cluster.objects.filter(name="local").delete()
    settings.KAFKA_BOOTSTRAP_SERVERS = "127.0.0.1:19092,127.0.0.1:19094"

    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")

    assert Cluster.objects.get(name="local").bootstrap_servers == "127.0.0.1:19092,127.0.0.1:19094"


def test_secret_values_are_refused_in_client_config(admin):
    with pytest.raises(CommandError, match="'sasl.password' is a secret"):
        call_command("clusters", "add", "--name", "leaky", "--bootstrap-servers", "k:9092",
                     "--config", "sasl.password=hunter2", "--actor", "ada", "--reason", "x")
    assert not Cluster.objects.filter(name="leaky").exists()


def test_secrets_are_read_from_the_environment_when_connecting(monkeypatch):
    cluster = Cluster.objects.create(name="sasl", bootstrap_servers="k:9092",
                                     client_config={"sasl.username": "console"},
                                     secret_env={"sasl.password": "CONSOLE_SECRET_SASL_CLUSTER_PASSWORD"})
    monkeypatch.setenv("CONSOLE_SECRET_SASL_CLUSTER_PASSWORD", "s3cret")

    assert cluster_connection(cluster).config == {"sasl.username": "console", "sasl.password": "s3cret"}


def test_missing_secret_env_is_a_clear_error_on_the_page(client_for, viewer):
    Cluster.objects.create(name="nosecret", bootstrap_servers="k:9092", secret_env={"sasl.password": "CONSOLE_SECRET_UNSET_VAR_X"})

    response = client_for(viewer).get("/clusters/nosecret/")

    assert response.status_code == 400
    assert "needs the environment variable CONSOLE_SECRET_UNSET_VAR_X for sasl.password" in response.content.decode()


def test_clusters_page_shows_health_of_each_cluster(client_for, viewer):
    Cluster.objects.create(name="gone", bootstrap_servers="127.0.0.1:1")

    body = client_for(viewer).get("/clusters/").content.decode()

    assert "local" in body and "gone" in body
    assert body.count('<span class="status status-OK">up</span>') == 1
    assert body.count('<span class="status status-ERR">down</span>') == 1
    # The down cluster's error is said once, short, with the whole text behind "details".
    assert body.count('<details class="error-detail">') == 1 and "not running while the cluster is down" in body


def test_cluster_detail_lists_brokers_and_controller(client_for, viewer, kafka_node):
    body = client_for(viewer).get("/clusters/local/").content.decode()

    assert f"<td>{kafka_node.port}</td>" in body and "Controller" in body


def test_unknown_cluster_is_a_404_with_its_name(client_for, viewer):
    response = client_for(viewer).get("/clusters/nope/")

    assert response.status_code == 404 and "no cluster named &#x27;nope&#x27;" in response.content.decode()


def test_unreachable_cluster_page_answers_within_five_seconds(client_for, viewer):
    import time

    Cluster.objects.create(name="down", bootstrap_servers="127.0.0.1:1")
    client = client_for(viewer)

    started = time.monotonic()
    response = client.get("/clusters/down/")

    assert time.monotonic() - started < 5
    assert response.status_code == 503 and "did not answer" in response.content.decode()


def test_unreachable_cluster_htmx_request_gets_the_error_partial(client_for, viewer):
    Cluster.objects.create(name="down2", bootstrap_servers="127.0.0.1:1")

    response = client_for(viewer).get("/clusters/down2/", headers={"HX-Request": "true"})

    assert response.status_code == 503
    assert response.headers["HX-Retarget"] == "#flash" and 'role="alert"' in response.content.decode()


def test_clusters_list_command_json(capsys):
    call_command("clusters", "list", "--format", "json")

    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["name"] == "local" and listed[0]["reachable"] is True and listed[0]["brokers"] == 1


def test_groups_page_of_an_unreachable_cluster_is_an_error_not_an_empty_list(client_for, viewer):
    import time

    Cluster.objects.create(name="down3", bootstrap_servers="127.0.0.1:1")
    started = time.monotonic()
    response = client_for(viewer).get("/clusters/down3/groups/")
    assert time.monotonic() - started < 5
    assert response.status_code == 503 and "did not answer" in response.content.decode()
    assert "No groups match" not in response.content.decode()


def test_stop_clients_stops_this_hosts_client_processes_and_the_next_call_starts_one(local_cluster, settings,
                                                                                      tmp_path, capsys):
    from pathlib import Path

    from console.clusters.selectors import cluster_admin
    from gateway.kafka.sandbox import child_pids, stop_all

    # Shared-table rebuilds an earlier test left in flight in this process would start client processes of their
    # own in this test's folder (CI saw one for another cluster between the two stop-clients): they end first.
    for thread in threading.enumerate():
        if "-table-" in thread.name:
            thread.join(60)
    # A folder of this test's own, so the session's client processes are left alone.
    settings.KAFKA_CLIENT_SOCKET_DIR = str(tmp_path / "clients")
    stop_all()
    try:
        cluster_admin("local").describe_cluster()
        pid = child_pids()["local"]

        call_command("clusters", "stop-clients")

        assert f"Stopped 1 Kafka client process ({pid})." in capsys.readouterr().out
        status = Path(f"/proc/{pid}/status")
        assert not status.exists() or "zombie" in status.read_text().lower()
        call_command("clusters", "stop-clients")
        assert "No Kafka client process was running." in capsys.readouterr().out
        cluster_admin("local").describe_cluster()
        assert child_pids()["local"] != pid
    finally:
        call_command("clusters", "stop-clients")
        stop_all()
