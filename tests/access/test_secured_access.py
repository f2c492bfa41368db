"""On the SASL_SSL cluster, through the console only: a user it creates can log in, sees nothing until an ACL it
adds grants DESCRIBE on one topic, and cannot log in once its credential is deleted. Quotas come through the
secured Java client too."""

from __future__ import annotations

import time
import uuid

import pytest
from django.core.management import call_command

from console.clusters.models import Cluster
from tests.fixtures.secured_kafka import secured_settings

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _visible_topics(node, user: str, password: str) -> set[str] | Exception:
    """The topics `user` may describe, as a SCRAM login over TLS sees them, or the error its login got."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    client = AdminClient({"bootstrap.servers": node.security.sasl_ssl_bootstrap, "security.protocol": "SASL_SSL",
                          "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password,
                          "ssl.ca.location": str(node.security.tls.ca)})
    try:
        return set(client.list_topics(timeout=8).topics)
    except KafkaException as exc:
        return exc


def test_a_user_and_its_acl_made_here_work_on_the_broker(secured_kafka, admin, capsys, monkeypatch):
    Cluster.objects.create(name="secured", **secured_settings(secured_kafka))
    user, password = f"reader-{uuid.uuid4().hex[:6]}", "pw-" + uuid.uuid4().hex
    topic = f"visible-{uuid.uuid4().hex[:6]}"
    secured_kafka.run_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", secured_kafka.bootstrap,
                           "--create", "--topic", topic, "--partitions", "1")
    monkeypatch.setenv("READER_PASSWORD", password)
    acting = ["--actor", admin.username, "--reason", "end-to-end"]

    call_command("users", "--cluster", "secured", "set-password", "--user", user, "--password-env",
                 "READER_PASSWORD", *acting)
    assert _visible_topics(secured_kafka, user, password) == set()  # logged in, allowed nothing

    call_command("acls", "--cluster", "secured", "add", "--principal", f"User:{user}", "--resource-type", "TOPIC",
                 "--resource-name", topic, "--operation", "DESCRIBE", "--confirm", *acting)
    deadline = time.monotonic() + 15  # the broker applies ACLs from its metadata log a moment later
    while (seen := _visible_topics(secured_kafka, user, password)) != {topic} and time.monotonic() < deadline:
        time.sleep(0.5)
    assert seen == {topic}

    call_command("users", "--cluster", "secured", "delete", "--user", user, "--mechanism", "SCRAM-SHA-512",
                 "--confirm", user, *acting)
    deadline = time.monotonic() + 15
    # (each refused login waits out list_topics' timeout: the last answer is the one asserted, not asked again)
    while not isinstance(seen := _visible_topics(secured_kafka, user, password), Exception) \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    assert isinstance(seen, Exception)
    capsys.readouterr()

    result = secured_kafka.run_tool("kafka.admin.ConfigCommand", "--bootstrap-server", secured_kafka.bootstrap,
                                    "--alter", "--add-config", "consumer_byte_rate=4096", "--entity-type", "users",
                                    "--entity-name", user)
    assert result.returncode == 0, result.stderr
    call_command("users", "--cluster", "secured", "quotas")  # the Java client with the translated SASL_SSL settings
    assert f"Quota configs for user-principal '{user}' are consumer_byte_rate=4096.0" in capsys.readouterr().out
