"""The session's Connect worker: Kafka 4.3.1's own ConnectDistributed from Maven Central's jars, answering behind
basic authentication with the FileStream and MirrorMaker 2 plugins installed; and make run's, behind basic
authentication too, with the password make writes to .env."""

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
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.types import ClusterConnection

    topics = KafkaAdmin(ClusterConnection("t", kafka_node.bootstrap), timeout=10).list_topics()
    names = {t.name for t in topics}
    assert {"_connect-configs", "_connect-offsets", "_connect-status"} <= names


@pytest.mark.slow
def test_make_runs_connect_process_asks_for_its_password_and_stops_on_sigterm(kafka_node, tmp_path):
    """The Procfile's `connect` process as make run starts it (its own internal topics need a fresh cluster, so
    this one has a group and topics of its own through a copy of the module's defaults): its REST API answers 401
    without the password make writes to .env, and the console's client, given it, works."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    from gateway.kafka_connect import ConnectClient, ConnectEndpoint
    from devstack.connect import LOCAL_PASSWORD_ENV, LOCAL_USER
    from devstack.kafka import free_ports

    port, password = free_ports(1)[0], "make-run-connect-password"
    process = subprocess.Popen([sys.executable, "-m", "devstack.connect", "run", "--port", str(port),
                                "--bootstrap", kafka_node.bootstrap, "--home", str(tmp_path / "connect")],
                               env={**os.environ, LOCAL_PASSWORD_ENV: password},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = ConnectClient(ConnectEndpoint(name="local", url=f"http://127.0.0.1:{port}", username=LOCAL_USER,
                                           password=password, unreachable_backoff=0))
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                client.worker_info()
                break
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError("the connect process's worker did not answer within 120 s") from None
                time.sleep(0.5)
        assert "org.apache.kafka.connect.file.FileStreamSinkConnector" in {p.class_name for p in client.plugins()}
        for path in ("connectors", "connector-plugins", ""):
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=10)
            assert caught.value.code == 401, path
        home = tmp_path / "connect"
        for secret_file in ("rest-users.properties", "worker.properties"):
            assert (home / secret_file).stat().st_mode & 0o077 == 0
        assert (home / "files").is_dir() and password not in " ".join(process.args)
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert f"Kafka Connect starting on http://127.0.0.1:{port}" in output


def test_make_runs_connect_process_refuses_to_start_without_its_password(tmp_path):
    import os
    import subprocess
    import sys

    from devstack.connect import LOCAL_PASSWORD_ENV, MSG_NO_PASSWORD

    environment = {k: v for k, v in os.environ.items() if k != LOCAL_PASSWORD_ENV}
    done = subprocess.run([sys.executable, "-m", "devstack.connect", "run", "--port", "1", "--bootstrap",
                           "127.0.0.1:1", "--home", str(tmp_path / "connect")], env=environment,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and MSG_NO_PASSWORD in done.stderr
    assert not (tmp_path / "connect").exists()


def test_make_writes_connects_password_to_the_env_file_once(tmp_path):
    import shutil
    import subprocess

    from devstack.connect import LOCAL_PASSWORD_ENV
    from console.paths import PROJECT_DIR

    shutil.copy(PROJECT_DIR / "Makefile", tmp_path / "Makefile")
    (tmp_path / ".env").write_text("SECRET_KEY=dev-x\n")
    for _ in range(2):
        done = subprocess.run(["make", "-s", ".data/.connect-password"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 0, done.stderr
        (tmp_path / ".data" / ".connect-password").unlink()  # the stamp only; .env must keep its one password
    lines = [line for line in (tmp_path / ".env").read_text().splitlines() if line.startswith(LOCAL_PASSWORD_ENV)]
    assert len(lines) == 1 and len(lines[0].split("=", 1)[1]) == 48
    assert (tmp_path / ".env").stat().st_mode & 0o777 == 0o600


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
