"""The session's Connect worker: Kafka 4.3.1's own ConnectDistributed from Maven Central's jars, answering behind
basic authentication with the FileStream and MirrorMaker 2 plugins installed."""

import pytest

pytestmark = pytest.mark.kafka

EXPECTED_PLUGINS = {
    "org.apache.kafka.connect.file.FileStreamSinkConnector": "sink",
    "org.apache.kafka.connect.file.FileStreamSourceConnector": "source",
    "org.apache.kafka.connect.mirror.MirrorSourceConnector": "source",
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector": "source",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector": "source",
}


def test_the_worker_answers_and_lists_the_file_and_mirror_plugins(connect_rest, kafka_node):
    status, root = connect_rest("GET", "")
    assert status == 200 and root["version"] == "4.3.1"
    status, plugins = connect_rest("GET", "connector-plugins")
    assert status == 200
    found = {p["class"]: p["type"] for p in plugins}
    assert {name: found.get(name) for name in EXPECTED_PLUGINS} == EXPECTED_PLUGINS
    assert all(p["version"] == "4.3.1" for p in plugins if p["class"] in EXPECTED_PLUGINS)


def test_the_worker_refuses_callers_without_its_credentials(connect_worker):
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{connect_worker.url}/connectors", timeout=10)
    assert caught.value.code == 401


def test_its_internal_topics_live_on_the_session_broker(connect_worker, kafka_node):
    from console.kafka.admin import KafkaAdmin
    from console.kafka.types import ClusterConnection

    topics = KafkaAdmin(ClusterConnection("t", kafka_node.bootstrap), timeout=10).list_topics()
    names = {t.name for t in topics}
    assert {"_connect-configs", "_connect-offsets", "_connect-status"} <= names


@pytest.mark.slow
def test_make_runs_connect_process_starts_a_worker_and_stops_on_sigterm(kafka_node, tmp_path):
    """The Procfile's `connect` process as make run starts it (its own internal topics need a fresh cluster, so
    this one has a group and topics of its own through a copy of the module's defaults)."""
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    from console.devstack.kafka import free_port

    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "console.devstack.connect", "run", "--port", str(port),
                                "--bootstrap", kafka_node.bootstrap, "--home", str(tmp_path / "connect")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError("the connect process's worker did not answer /health within 120 s")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/connector-plugins", timeout=5) as response:
            assert b"FileStreamSinkConnector" in response.read()
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert f"Kafka Connect starting on http://127.0.0.1:{port}" in output


@pytest.mark.django_db
def test_the_workers_own_group_is_not_a_consumer_group_on_the_groups_pages(connect_worker, local_cluster, client_for,
                                                                           viewer):
    """Connect's workers coordinate through a classic group of protocol "connect": like `kafka-consumer-groups
    --list`, the console's one ListGroups of every type leaves it out, so the groups list never asks the
    consumer-group calls about it (they refuse it as not a consumer group)."""
    from offsets.selectors import group_snapshot_refresh, groups_of_every_type

    listings, problem = groups_of_every_type("local")
    assert problem == "" and connect_worker.group_id not in {g.group_id for g in listings}
    group_snapshot_refresh("local")
    page = client_for(viewer).get("/clusters/local/groups/")
    assert page.status_code == 200 and "not a consumer group" not in page.content.decode()
