"""Done-when of issue 33: a MirrorMaker 2 source connector, created through the page on the session's worker,
mirrors a topic of the local cluster to the secured one (SASL_SSL with SCRAM, the CA's PEM file), its password
reaching the worker only through a config provider reference, which the pages show as written. By an admin: it
creates topics, reads another cluster's and writes to another cluster (issue 55; tests/connect/test_guards.py
shows operators refused)."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from connect.masking import MASK
from console.audit.models import AuditEvent
from tests.connect.conftest import read_values
from tests.fixtures.connect import CONNECT_SECRETS_DIR
from tests.fixtures.secured_kafka import SECURED_PASSWORD_ENV

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
MIRROR = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
NAME = "mirror local → secured"


@pytest.fixture
def connect_admin(admin, client_for, connect_cluster):
    return client_for(admin)


def test_mirror_maker_2_copies_a_topic_to_the_secured_cluster(connect_admin, connect_rest, secured_kafka,
                                                              kafka_node, topic_factory, produce):
    topic = topic_factory("mirrored")
    values = [f"m-{i}" for i in range(5)]
    produce(topic, [(0, None, v.encode(), None) for v in values])
    password = os.environ[SECURED_PASSWORD_ENV]
    secrets_file = CONNECT_SECRETS_DIR / "secured.properties"
    secrets_file.write_text(f"password={password}\n")
    jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="console" '
            f'password="${{file:{secrets_file}:password}}";')
    secured = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas,
               "ssl.truststore.type": "PEM", "ssl.truststore.location": str(secured_kafka.security.tls.ca)}
    settings = {"source.cluster.alias": "local", "target.cluster.alias": "secured",
                "source.cluster.bootstrap.servers": kafka_node.bootstrap,
                "target.cluster.bootstrap.servers": secured_kafka.security.sasl_ssl_bootstrap,
                **{f"target.cluster.{k}": v for k, v in secured.items()},
                # The worker writes to its own cluster unless told otherwise: the mirrored records go to the target.
                "producer.override.bootstrap.servers": secured_kafka.security.sasl_ssl_bootstrap,
                **{f"producer.override.{k}": v for k, v in secured.items()},
                "topics": topic, "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
                "sync.topic.acls.enabled": "false", "refresh.topics.interval.seconds": "2",
                "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    extra = "".join(f"{key}={value}\n" for key, value in settings.items())
    created = connect_admin.post(reverse("connect:create", args=["local", "local"]), {
        "plugin": MIRROR, "cfg:name": NAME, "cfg:tasks.max": "1", "extra": extra, "reason": "mirror to secured"})
    assert created.status_code == 302, created.content.decode()[-2000:]
    connect_rest.wait_state(NAME, "RUNNING", timeout=90)

    mirrored = read_values(secured_kafka.security.sasl_ssl_bootstrap, f"local.{topic}", at_least=5, timeout=90,
                           config={"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                   "sasl.username": "console", "sasl.password": password,
                                   "ssl.ca.location": str(secured_kafka.security.tls.ca)})
    assert mirrored == values

    page = connect_admin.get(reverse("connect:connector", args=["local", "local", NAME])).content.decode()
    assert MASK in page and password not in page
    assert str(secured_kafka.security.tls.ca) in page
    assert all(password not in str([e.params, e.before, e.after]) for e in AuditEvent.objects.all())
    stored = AuditEvent.objects.get(action="connector.create", outcome="success")
    assert stored.params["config"]["target.cluster.sasl.jaas.config"] == MASK
