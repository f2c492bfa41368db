"""/metrics gains connector and task states, from what beat's observer stored (a scrape never asks Connect)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from connect.observe import connectors_observe
from tests.connect.conftest import FILE_SINK

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
TOKEN = "connect-scrape-token"
NAME = "metered ☃"


def scrape(client, settings) -> dict[str, dict[frozenset, float]]:
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    samples: dict[str, dict[frozenset, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return samples


def test_connector_and_task_states_are_scraped_as_last_observed(connect_cluster, connect_rest, topic_factory,
                                                                tmp_path, client, settings, connect_worker):
    config = {"connector.class": FILE_SINK, "topics": topic_factory("m"), "file": str(tmp_path / "o.txt")}
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": config})[0] == 201
    connect_rest.wait_state(NAME, "RUNNING")
    assert connectors_observe().errors == {}
    labels = {"cluster": "local", "connect": "local", "connector": NAME}
    samples = scrape(client, settings)
    state = samples["kafka_console_connector_state"]
    assert state[frozenset({**labels, "type": "sink", "state": "RUNNING"}.items())] == 1.0
    assert state[frozenset({**labels, "type": "sink", "state": "FAILED"}.items())] == 0.0
    assert samples["kafka_console_connector_tasks"][frozenset({**labels, "state": "RUNNING"}.items())] == 1.0
    assert samples["kafka_console_connector_task_state"][frozenset({**labels, "task": "0",
                                                                    "state": "RUNNING"}.items())] == 1.0
    observed = samples["kafka_console_connect_last_observed_timestamp_seconds"]
    assert observed[frozenset({"cluster": "local", "connect": "local"}.items())] > 0

    # The worker stops answering: the scrape still answers at once, with the failing look said.
    connect_cluster.url = "http://127.0.0.1:1"
    connect_cluster.save(update_fields=["url"])
    assert connectors_observe().errors
    samples = scrape(client, settings)
    assert samples["kafka_console_connect_observe_failing"][frozenset({"cluster": "local", "connect": "local"}
                                                                      .items())] == 1.0
    assert samples["kafka_console_connector_state"][frozenset({**labels, "type": "sink", "state": "RUNNING"}
                                                              .items())] == 1.0
