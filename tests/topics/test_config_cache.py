"""The topic list's configs: asked from Kafka once per topic and TOPIC_LIST_CONFIGS_S, shared through Redis; the
console's own changes show at once, another client's once the entry has expired; without Redis, Kafka every time."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka.admin import ConfigResource, ConfigEntry, AlterConfigOpType

from console.audit.actor import Actor
from topics import config_cache, table
from topics.selectors import topic_snapshot_refresh
from topics.services import topic_configs_alter
from tests.fixtures.clusters import forget_shared_table

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def described(monkeypatch):
    """The topic names of every DescribeConfigs this process makes, through the real gateway methods."""
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.isolated import IsolatedKafkaAdmin

    asked: list[str] = []
    for cls in (KafkaAdmin, IsolatedKafkaAdmin):
        def spy(self, kind, names, *args, _real=cls.describe_configs, **kwargs):
            asked.extend(names)
            return _real(self, kind, names, *args, **kwargs)

        monkeypatch.setattr(cls, "describe_configs", spy)
    return asked


@pytest.fixture
def fresh_table():
    forget_shared_table(table.TABLE)
    yield
    forget_shared_table(table.TABLE)


def _retention_shown(client, name: str) -> str:
    body = client.get("/clusters/local/topics/", {"q": name}).content.decode()
    assert f'/topics/{name}/"' in body
    return body.split(f'/topics/{name}/"')[1].split('<td title="')[1].split(' ms"')[0]


@pytest.fixture
def day_retention_topic(redis_node, local_cluster, fresh_table, topic_factory, client_for, viewer, settings):
    """make(prefix, configs_s): a topic kept one day, in a fresh shared table, the list's configs lasting
    `configs_s`; returns a viewer's client and the topic's name."""
    def make(prefix: str, configs_s: float):
        settings.TOPIC_LIST_CONFIGS_S = configs_s
        name = topic_factory(prefix, configs={"retention.ms": "86400000"})
        assert topic_snapshot_refresh("local") is not None
        return client_for(viewer), name

    return make


def test_asked_once_then_shared_and_the_consoles_own_change_shows_at_once(day_retention_topic, described):
    client, name = day_retention_topic("cfg-cache", 300)

    assert _retention_shown(client, name) == "86400000"
    assert name in described
    described.clear()
    assert _retention_shown(client, name) == "86400000"
    assert described == []  # the second load asked Kafka for no configs
    assert config_cache.read("local", [name]) == {name: ("delete", "86400000", "-1")}

    topic_configs_alter(actor=Actor.system(), cluster="local", topic=name, set_values={"retention.ms": "7200000"},
                        delete=[], reason="test")
    assert _retention_shown(client, name) == "7200000"


def test_another_clients_change_shows_once_the_entry_expires(day_retention_topic, outsider, settings):
    client, name = day_retention_topic("cfg-expiry", 4)
    assert _retention_shown(client, name) == "86400000"
    written = time.monotonic()

    resource = ConfigResource("topic", name, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    for future in outsider.incremental_alter_configs([resource]).values():
        future.result(timeout=15)

    shown = _retention_shown(client, name)
    if time.monotonic() - written < settings.TOPIC_LIST_CONFIGS_S:
        assert shown == "86400000"  # still the shared entry
    deadline = time.monotonic() + 30
    while _retention_shown(client, name) != "3600000":
        assert time.monotonic() < deadline, "another client's change never showed"
        time.sleep(0.5)


def test_without_redis_every_list_asks_kafka(local_cluster, fresh_table, topic_factory, described, client_for,
                                             viewer, settings):
    from devstack.kafka import free_port

    settings.REDIS_URL = f"redis://:nobody@127.0.0.1:{free_port()}/0"  # nothing listens there
    table.forget_redis_state()
    name = topic_factory(f"cfg-no-redis-{uuid.uuid4().hex[:4]}", configs={"retention.ms": "86400000"})
    topic_snapshot_refresh("local")

    for _ in range(2):
        described.clear()
        assert _retention_shown(client_for(viewer), name) == "86400000"
        assert name in described
    assert config_cache.read("local", [name]) == {}
