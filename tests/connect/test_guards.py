"""connect/guards.py against the session's real worker and broker: each attack of issue 55 (row 4, and row 5's
Connect part) reproduced through the pages or the services, refused, audited, and nothing created, read, written
or changed; what an admin may still do."""

from __future__ import annotations

import time
import uuid

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils.html import escape

from connect import services
from connect.guards import (
    MSG_CREATES, MSG_MASKED_ELSEWHERE, MSG_MASKED_PATTERN, MSG_MASKED_READ, MSG_MISSING_TOPICS,
    MSG_WITNESS_CONNECTOR,
)
from connect.masking import MASK, mask_config
from connect.models import ConnectCluster
from connect.operator_rules import MSG_OUTSIDE
from connect.topic_flow import MIRROR_SOURCE
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from console.errors import PermissionRefused
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import LATEST, ClusterConnection, PartitionRef
from masking.models import MaskRule
from tests.connect.conftest import FILE_SINK, FILE_SOURCE

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
NAME = "guarded"


def create_on_page(web, plugin: str, config: dict[str, str], *, name: str = NAME):
    extra = "".join(f"{key}={value}\n" for key, value in config.items())
    return web.post(reverse("connect:create", args=["local", "local"]),
                    {"plugin": plugin, "cfg:name": name, "extra": extra, "reason": "try"})


def admin_create(admin, config: dict[str, str], *, name: str = NAME, connect: str = "local", cluster: str = "local"):
    return services.connector_create(actor=Actor(user=admin, source="web"), cluster=cluster, connect=connect,
                                     name=name, config=config, reason="admin")


def end_offset(bootstrap: str, topic: str) -> int:
    ref = PartitionRef(topic, 0)
    return KafkaAdmin(ClusterConnection("check", bootstrap), timeout=10).list_offsets([ref], LATEST)[ref].offset


def topic_exists(bootstrap: str, topic: str) -> bool:
    return topic in KafkaAdmin(ClusterConnection("check", bootstrap), timeout=10).describe_topics(
        [topic], skip_missing=True)


def refused_once(message: str) -> AuditEvent:
    row = AuditEvent.objects.get(outcome="refused")
    assert row.error == message and not AuditEvent.objects.filter(outcome="success").exists()
    return row


@pytest.fixture
def outside(tmp_path_factory):
    """A folder outside the one the Connect cluster names for operators' files, holding a secret."""
    folder = tmp_path_factory.mktemp("outside")
    (folder / "secrets.env").write_text("SECRET_KEY=must-never-reach-a-topic\n")
    return folder


# -- (a) FileStream outside the folder an admin named ----------------------------------------------------------------

@pytest.mark.parametrize("where", ["project env", "outside", "dot-dot"])
def test_a_filestream_source_outside_the_folder_is_not_created_and_reads_nothing(
        connect_operator, connect_rest, topic_factory, kafka_node, outside, tmp_path, where):
    topic = topic_factory("stolen")
    path = {"project env": str(settings.BASE_DIR / ".env"), "outside": str(outside / "secrets.env"),
            "dot-dot": f"{tmp_path}/../{outside.name}/secrets.env"}[where]
    refused = create_on_page(connect_operator, FILE_SOURCE, {"topic": topic, "file": path})

    message = MSG_OUTSIDE.format(key="file", connect="local", folders=str(tmp_path), value=path)
    assert refused.status_code == 403 and escape(message) in refused.content.decode()
    assert NAME not in connect_rest("GET", "connectors")[1]
    refused_once(message)
    time.sleep(2)  # a connector, had one started, reads its file within a second
    assert end_offset(kafka_node.bootstrap, topic) == 0


def test_a_filestream_sink_outside_the_folder_writes_no_file(connect_operator, connect_rest, topic_factory, produce,
                                                             outside, tmp_path):
    topic = topic_factory("exported")
    produce(topic, [(0, None, b"record", None)])
    target = outside / "planted.pth"
    refused = create_on_page(connect_operator, FILE_SINK, {"topics": topic, "file": str(target)})

    assert refused.status_code == 403
    refused_once(MSG_OUTSIDE.format(key="file", connect="local", folders=str(tmp_path), value=str(target)))
    time.sleep(2)
    assert not target.exists() and NAME not in connect_rest("GET", "connectors")[1]


def test_filestream_is_for_admins_only_where_no_folder_is_named(connect_operator, connect_cluster, connect_rest,
                                                                topic_factory, tmp_path, admin):
    ConnectCluster.objects.filter(pk=connect_cluster.pk).update(file_dirs=[])
    topic = topic_factory("nofolder")
    config = {"topics": topic, "file": str(tmp_path / "out.txt")}
    assert create_on_page(connect_operator, FILE_SINK, config).status_code == 403
    assert NAME not in connect_rest("GET", "connectors")[1]
    admin_create(admin, {"connector.class": FILE_SINK, **config})  # an admin is not bound by the allowlist
    assert NAME in connect_rest("GET", "connectors")[1]


# -- (b) an edit that moves a masked secret to another destination ---------------------------------------------------

@pytest.fixture
def with_secret(connect_cluster, connect_rest, topic_factory, tmp_path):
    """A running connector with a password, a destination URL and a URL with credentials, which operators may edit
    (FileStreamSink ignores settings it does not know; a database sink declares these itself)."""
    ConnectCluster.objects.filter(pk=connect_cluster.pk).update(operator_settings=["connection.*", "backup.*"])
    topic = topic_factory("db")
    config = {"connector.class": FILE_SINK, "topics": topic, "file": str(tmp_path / "db.txt"),
              "connection.url": "https://db.internal.example/orders", "connection.password": "hunter2-db",
              "backup.url": "https://alice:s3cr3t-backup@backup.internal.example/x"}
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": config})[0] == 201
    connect_rest.wait_state(NAME, "RUNNING")
    return {**config, "name": NAME}  # as Connect answers it


def _edit_text(config: dict[str, str], **changes: str) -> str:
    shown = {**mask_config(config), **changes}
    return "".join(f"{key}={value}\n" for key, value in shown.items())


def test_moving_the_destination_of_a_masked_password_needs_the_password_again(with_secret, connect_operator,
                                                                              connect_rest):
    url = reverse("connect:edit", args=["local", "local", NAME])
    moved = _edit_text(with_secret, **{"connection.url": "https://attacker.example/collect"})
    refused = connect_operator.post(url, {"config": moved, "step": "apply", "reason": "move"})

    assert refused.status_code == 400 and "Give them again in this edit" in refused.content.decode()
    assert connect_rest("GET", "connectors", NAME)[1]["config"] == with_secret
    row = refused_once(services.MSG_SECRET_AGAIN.format(moved="connection.url",
                                                        kept="backup.url, connection.password"))
    assert "hunter2-db" not in str(row.params) and "s3cr3t-backup" not in str(row.params)

    again = _edit_text(with_secret, **{"connection.url": "https://new-db.example/orders",
                                       "connection.password": "the-new-db-password",
                                       "backup.url": "https://bob:other@backup.internal.example/x"})
    assert connect_operator.post(url, {"config": again, "step": "apply", "reason": "moved"}).status_code == 302
    stored = connect_rest.read("connectors", NAME, until=lambda info: "new-db" in info["config"]["connection.url"])
    assert stored["config"]["connection.password"] == "the-new-db-password"


def test_a_url_whose_masked_credentials_are_kept_cannot_change_host(with_secret, connect_operator, connect_rest):
    url = reverse("connect:edit", args=["local", "local", NAME])
    moved = _edit_text(with_secret, **{"backup.url": f"https://{MASK}@attacker.example/x"})
    refused = connect_operator.post(url, {"config": moved, "step": "apply", "reason": "move"})

    assert refused.status_code == 400
    refused_once(services.MSG_PARTIAL_MASK.format(keys="backup.url"))
    assert connect_rest("GET", "connectors", NAME)[1]["config"] == with_secret


def test_the_shell_refuses_the_same_move(with_secret, operator, connect_rest):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="Give them again in this edit"):
        call_command("connect", "edit", NAME, "--config", "connection.url=https://attacker.example/", "--yes",
                     "--actor", operator.username, "--reason", "move")
    assert connect_rest("GET", "connectors", NAME)[1]["config"] == with_secret


def test_an_edit_that_keeps_the_destination_keeps_the_masked_secrets(with_secret, connect_operator, connect_rest):
    url = reverse("connect:edit", args=["local", "local", NAME])
    text = _edit_text(with_secret, **{"tasks.max": "2"})
    assert connect_operator.post(url, {"config": text, "step": "apply", "reason": "two"}).status_code == 302
    stored = connect_rest.read("connectors", NAME, until=lambda info: info["config"].get("tasks.max") == "2")
    assert {k: v for k, v in stored["config"].items() if k != "tasks.max"} == with_secret


# -- (c) masked topics, topic creation, the witness ------------------------------------------------------------------

def test_a_sink_of_a_masked_topic_is_refused_for_operators(connect_operator, connect_rest, topic_factory, tmp_path,
                                                           admin):
    topic = topic_factory("cards")
    MaskRule.objects.create(cluster="local", topic_pattern=topic, selector="jsonpath", target="$.card")
    sink = {"topics": topic, "file": str(tmp_path / "cards.txt")}
    refused = create_on_page(connect_operator, FILE_SINK, sink)
    assert refused.status_code == 403
    refused_once(MSG_MASKED_READ.format(name=NAME, topic=topic))
    by_pattern = create_on_page(connect_operator, FILE_SINK, {"topics.regex": "card.*", "file": sink["file"]})
    assert by_pattern.status_code == 403
    assert escape(MSG_MASKED_PATTERN.format(name=NAME, cluster="local")) in by_pattern.content.decode()
    assert NAME not in connect_rest("GET", "connectors")[1] and not (tmp_path / "cards.txt").exists()
    admin_create(admin, {"connector.class": FILE_SINK, **sink})  # the rules are an admin's to lift
    assert NAME in connect_rest("GET", "connectors")[1]


def test_mirror_maker_over_a_masked_topic_is_refused_for_operators_even_where_allowed(
        connect_operator, connect_cluster, connect_rest, topic_factory, kafka_node):
    ConnectCluster.objects.filter(pk=connect_cluster.pk).update(operator_plugins=[FILE_SINK, MIRROR_SOURCE])
    topic = topic_factory("secret-orders")
    MaskRule.objects.create(cluster="local", topic_pattern=topic, selector="key")
    mirror = {"source.cluster.alias": "here", "target.cluster.alias": "there", "topics": topic,
              "source.cluster.bootstrap.servers": kafka_node.bootstrap,
              "target.cluster.bootstrap.servers": kafka_node.bootstrap}
    refused = create_on_page(connect_operator, MIRROR_SOURCE, mirror)

    assert refused.status_code == 403
    refused_once(MSG_MASKED_ELSEWHERE.format(name=NAME, cluster="local"))
    MaskRule.objects.all().delete()
    still = create_on_page(connect_operator, MIRROR_SOURCE, mirror)
    assert still.status_code == 403 and "creating topics is for admins" in still.content.decode()
    time.sleep(2)
    assert NAME not in connect_rest("GET", "connectors")[1]
    assert not topic_exists(kafka_node.bootstrap, f"here.{topic}")


def test_topics_kafka_would_create_are_refused_for_operators_and_allowed_for_admins(
        connect_operator, connect_cluster, connect_rest, topic_factory, kafka_node, tmp_path, admin):
    ConnectCluster.objects.filter(pk=connect_cluster.pk).update(operator_settings=["topic.creation.*"])
    lines = tmp_path / "lines.txt"
    lines.write_text("one\n")
    missing = f"never-created-{uuid.uuid4().hex[:8]}"
    source = {"topic": missing, "file": str(lines)}
    refused = create_on_page(connect_operator, FILE_SOURCE, source)
    assert refused.status_code == 403
    refused_once(MSG_MISSING_TOPICS.format(name=NAME, cluster="local", topics=repr(missing)))
    creating = {**source, "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}
    refused = create_on_page(connect_operator, FILE_SOURCE, creating)
    assert refused.status_code == 403 and escape(MSG_CREATES.format(
        name=NAME, why="topic.creation.default.partitions asks Connect to create topics")) in refused.content.decode()
    dlq = create_on_page(connect_operator, FILE_SINK, {"topics": topic_factory("in"), "file": str(tmp_path / "o"),
                                                       "errors.tolerance": "all",
                                                       "errors.deadletterqueue.topic.name": missing})
    assert dlq.status_code == 403
    time.sleep(2)
    assert not topic_exists(kafka_node.bootstrap, missing)
    assert NAME not in connect_rest("GET", "connectors")[1]

    admin_create(admin, {"connector.class": FILE_SOURCE, **creating})
    connect_rest.wait(lambda: topic_exists(kafka_node.bootstrap, missing), what="Connect creating the admin's topic")


@pytest.fixture
def witness_topic(settings, local_cluster, kafka_node) -> str:
    """The witness on the `local` cluster, under a topic name of this test's own."""
    settings.AUDIT_WITNESS_ENABLED, settings.AUDIT_WITNESS_CLUSTER = True, "local"
    settings.AUDIT_WITNESS_TOPIC = f"audit-witness-{uuid.uuid4().hex[:10]}"
    KafkaAdmin(ClusterConnection("setup", kafka_node.bootstrap), timeout=10).create_topic(
        settings.AUDIT_WITNESS_TOPIC, partitions=1, replication_factor=1, configs={})
    return settings.AUDIT_WITNESS_TOPIC


@pytest.fixture
def twin(connect_cluster, kafka_node, connect_worker):
    """A second registration of the session's brokers, `twin`, with the same worker registered beside it."""
    Cluster.objects.create(name="twin", bootstrap_servers=kafka_node.bootstrap.replace("127.0.0.1", "localhost"))
    return ConnectCluster.objects.create(cluster="twin", name="twin", url=connect_worker.url,
                                         username=connect_cluster.username, password_env=connect_cluster.password_env)


def test_no_connector_writes_the_witness_topic_not_even_an_admins_nor_through_a_second_registration(
        witness_topic, twin, admin, connect_rest, kafka_node, tmp_path, topic_factory):
    (tmp_path / "forged.txt").write_text('{"seq": 1, "forged": true}\n')
    source = {"connector.class": FILE_SOURCE, "topic": witness_topic, "file": str(tmp_path / "forged.txt")}
    attempts = [("local", "local", source),
                ("twin", "twin", source),
                ("local", "local", {"connector.class": FILE_SINK, "topics": topic_factory("in"),
                                    "file": str(tmp_path / "o.txt"), "errors.tolerance": "all",
                                    "errors.deadletterqueue.topic.name": witness_topic}),
                ("local", "local", {**source, "topic": "harmless", "transforms": "to",
                                    "transforms.to.type": "org.apache.kafka.connect.transforms.RegexRouter",
                                    "transforms.to.regex": ".*", "transforms.to.replacement": witness_topic})]
    for cluster, connect, config in attempts:
        with pytest.raises(PermissionRefused) as refused:
            admin_create(admin, config, cluster=cluster, connect=connect)
        assert refused.value.message.startswith(f"Connector '{NAME}' may write topic '{witness_topic}'"), config
    assert refused.value.message == MSG_WITNESS_CONNECTOR.format(
        name=NAME, topic=witness_topic, cluster="local",
        how="transformation to may route records to any topic")
    assert AuditEvent.objects.filter(outcome="refused").count() == len(attempts)
    assert not AuditEvent.objects.filter(outcome="success").exists()
    time.sleep(2)
    assert connect_rest("GET", "connectors")[1] == [] and end_offset(kafka_node.bootstrap, witness_topic) == 0


def test_an_operators_source_into_the_witness_is_refused_and_other_topics_are_not(
        witness_topic, connect_operator, connect_rest, topic_factory, tmp_path):
    (tmp_path / "lines.txt").write_text("one\n")
    lines = str(tmp_path / "lines.txt")
    refused = create_on_page(connect_operator, FILE_SOURCE, {"topic": witness_topic, "file": lines})
    assert refused.status_code == 403 and "the audit witness on cluster" in refused.content.decode()
    allowed = create_on_page(connect_operator, FILE_SOURCE, {"topic": topic_factory("lines"), "file": lines})
    assert allowed.status_code == 302
    assert NAME in connect_rest("GET", "connectors")[1]


# -- (d) secrets recognised by the shape of their value ----------------------------------------------------------------

def test_url_credentials_and_header_secrets_reach_neither_viewers_nor_the_audit_log(
        connect_cluster, admin, viewer, client_for, connect_rest, topic_factory, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    secrets = ("s3cr3t-in-url", "tok-in-header-42", "query-secret-7")
    admin_create(admin, {"connector.class": FILE_SINK, "topics": topic_factory("hooks"),
                         "file": str(tmp_path / "hooks.txt"),
                         "webhook.url": f"https://alice:{secrets[0]}@hooks.example/in",
                         "http.headers": f"Content-Type: application/json|Authorization: Bearer {secrets[1]}",
                         "api.endpoint": f"https://api.example/v1?user=a&password={secrets[2]}"})
    assert connect_rest("GET", "connectors", NAME)[1]["config"]["webhook.url"].count(secrets[0]) == 1

    page = client_for(viewer).get(reverse("connect:connector", args=["local", "local", NAME])).content.decode()
    assert "hooks.example" in page and MASK in page
    described = StringIO()
    call_command("connect", "describe", NAME, "--format", "json", stdout=described)
    listed = StringIO()
    call_command("connect", "list", "--format", "json", stdout=listed)
    audit = str([(e.params, e.before, e.after, e.error) for e in AuditEvent.objects.all()])
    for secret in secrets:
        for shown in (page, described.getvalue(), listed.getvalue(), audit):
            assert secret not in shown


def test_a_sink_of_a_topic_that_does_not_exist_is_refused_for_operators(connect_operator, connect_rest, kafka_node,
                                                                         tmp_path):
    missing = f"not-there-{uuid.uuid4().hex[:8]}"
    refused = create_on_page(connect_operator, FILE_SINK, {"topics": missing, "file": str(tmp_path / "o.txt")})
    assert refused.status_code == 403
    refused_once(MSG_MISSING_TOPICS.format(name=NAME, cluster="local", topics=repr(missing)))
    assert not topic_exists(kafka_node.bootstrap, missing) and NAME not in connect_rest("GET", "connectors")[1]
