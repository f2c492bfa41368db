"""Two workers of one Connect cluster, where the point is how tasks move: the connector's page names each task's
worker, and when a worker leaves, its tasks come back on the other while the console keeps answering (a 409 during
the rebalance is retried, never shown)."""

from __future__ import annotations

import os
import time

import pytest
from django.urls import reverse

from connect import selectors
from devstack.kafka import free_ports
from tests.connect.conftest import FILE_SINK
from tests.fixtures.connect import CONNECT_PASSWORD_ENV, CONNECT_USER

pytestmark = [pytest.mark.kafka, pytest.mark.django_db, pytest.mark.slow]
NAME = "spread sink"


@pytest.fixture
def second_worker(connect_worker, kafka_node, tmp_path):
    from devstack.connect import ConnectWorker

    worker = ConnectWorker(home=tmp_path / "second", bootstrap=kafka_node.bootstrap, port=free_ports(1)[0],
                           group_id=connect_worker.group_id, topic_prefix=connect_worker.topic_prefix,
                           basic_auth={CONNECT_USER: os.environ[CONNECT_PASSWORD_ENV]},
                           secrets_dir=connect_worker.secrets_dir, rebalance_delay_ms=2000)
    worker.start()
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


def test_tasks_move_to_the_remaining_worker_and_the_page_says_where(connect_cluster, connect_rest, second_worker,
                                                                   connect_worker, topic_factory, tmp_path, viewer,
                                                                   client_for):
    topic = topic_factory("spread", partitions=2)
    config = {"connector.class": FILE_SINK, "topics": topic, "file": str(tmp_path / "o.txt"), "tasks.max": "2"}
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": config})[0] == 201

    second = f"127.0.0.1:{second_worker.port}"

    def on_second():
        # Connect balances connectors and tasks over all it runs: connectors other tests left on the first worker
        # may send both tasks to the second. What matters is that the second runs some of them.
        status = connect_rest("GET", "connectors", NAME, "status")[1] or {}
        running = [t for t in status.get("tasks", []) if t["state"] == "RUNNING"]
        workers = {t["worker_id"] for t in running}
        return len(running) == 2 and second in workers and workers

    workers = connect_rest.wait(on_second, timeout=90, what="both tasks running, some on the second worker")
    page = client_for(viewer).get(reverse("connect:connector", args=["local", "local", NAME])).content.decode()
    assert all(worker in page for worker in workers)

    second_worker.stop()
    first = f"127.0.0.1:{connect_worker.port}"
    deadline = time.monotonic() + 90
    while True:  # the console's own reads, all through the rebalance: none may fail
        detail = selectors.connector_detail("local", "local", NAME)
        if [t.worker_id for t in detail.status.tasks if t.state == "RUNNING"] == [first, first]:
            break
        assert time.monotonic() < deadline, f"tasks still at {detail.status.tasks}"
        time.sleep(0.5)
