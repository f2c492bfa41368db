"""Topic pages against the real broker: roles enforced in the views, previews, errors shown as partials."""

import uuid

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import TOPIC

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _cluster(local_cluster):
    return local_cluster


def test_topic_list_shows_counts_and_search_narrows_it(client_for, viewer, topic_factory, produce):
    name = topic_factory("listed", partitions=2)
    produce(name, [(0, None, b"a", None), (1, None, b"b", None), (1, None, b"c", None)])
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh("local", wait_s=30)
    client = client_for(viewer)

    body = client.get(f"/clusters/local/topics/?q={name}").content.decode()
    assert name in body and "<td>3</td>" in body  # 3 messages


def test_topics_deleted_behind_the_consoles_back_leave_the_list_answering(client_for, viewer, kafka_node,
                                                                          topic_factory):
    """The table is a snapshot; a topic another client deletes after it was taken must not turn the list into a
    404 (it used to, until the snapshot was rebuilt). One the list never showed is left off at once (Kafka is
    asked for its configs and does not know it); one it showed keeps its row, with the configs it had, until the
    next snapshot, as a topic created meanwhile waits for it to appear."""
    from confluent_kafka.admin import AdminClient

    from topics.selectors import topic_snapshot_refresh

    prefix = f"churn-{uuid.uuid4().hex[:4]}"
    kept = topic_factory(f"{prefix}-kept")
    shown = [topic_factory(f"{prefix}-shown") for _ in range(2)]
    unseen = [topic_factory(f"{prefix}-unseen") for _ in range(2)]
    topic_snapshot_refresh("local", wait_s=30)
    client = client_for(viewer)
    body = client.get(f"/clusters/local/topics/?q={prefix}-shown").content.decode()
    assert all(name in body for name in shown)
    outsider = AdminClient({"bootstrap.servers": kafka_node.bootstrap})
    for future in outsider.delete_topics(shown + unseen, operation_timeout=10).values():
        future.result(timeout=15)
    for sort in ("name", "messages", "partitions"):
        for query in (f"{prefix}-unseen", f"{prefix}-shown", prefix):
            response = client.get(f"/clusters/local/topics/?q={query}&sort={sort}")
            assert response.status_code == 200
        assert not any(name in response.content.decode() for name in unseen) and kept in response.content.decode()

    topic_snapshot_refresh("local", wait_s=30)  # what beat does next
    body = client.get(f"/clusters/local/topics/?q={prefix}-").content.decode()
    assert kept in body and not any(name in body for name in shown + unseen)


def test_internal_topics_are_hidden_unless_asked_for(client_for, viewer, kafka_node, topic_factory, produce):
    from confluent_kafka import Consumer, TopicPartition

    name = topic_factory("commit")
    produce(name, [(0, None, b"x", None)])
    consumer = Consumer({"bootstrap.servers": kafka_node.bootstrap, "group.id": f"g-{name}"})
    consumer.commit(offsets=[TopicPartition(name, 0, 1)], asynchronous=False)  # creates __consumer_offsets
    consumer.close()
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh("local", wait_s=30)
    client = client_for(viewer)

    assert "__consumer_offsets" not in client.get("/clusters/local/topics/?q=offsets").content.decode()
    assert "__consumer_offsets" in client.get("/clusters/local/topics/?q=offsets&internal=1").content.decode()


def test_bad_regex_is_reported(client_for, viewer):
    response = client_for(viewer).get("/clusters/local/topics/?q=a(&regex=1", headers={"HX-Request": "true"})

    assert response.status_code == 400 and "does not compile" in response.content.decode()


def test_topic_detail_shows_partitions_offsets_and_config_sources(client_for, viewer, topic_factory, produce):
    name = topic_factory("detail", partitions=2, configs={"retention.ms": "86400000"})
    produce(name, [(0, b"k", b"v", None)] * 3)

    client = client_for(viewer)
    overview = client.get(f"/clusters/local/topics/{name}/").content.decode()
    partitions = client.get(f"/clusters/local/topics/{name}/", {"tab": "partitions"}).content.decode()
    configuration = client.get(f"/clusters/local/topics/{name}/", {"tab": "configuration"}).content.decode()

    assert '<span class="value">2</span><span class="label">Partitions</span>' in overview
    assert '<td class="num">0</td><td class="num">3</td>' in partitions  # partition 0: start 0, end 3
    # Human units shown, the raw value on hover: the topic's override and the broker default.
    assert "topic override" in configuration
    assert '<span title="86400000">1 day</span>' in configuration and '<span title="604800000">7 days</span>' in configuration


def test_unknown_topic_is_a_404_naming_it(client_for, viewer):
    response = client_for(viewer).get("/clusters/local/topics/nope-nope/")

    assert response.status_code == 404 and "nope-nope" in response.content.decode()


@pytest.mark.parametrize("who", ["viewer", "operator"])
def test_admin_changes_are_refused_to_viewers_and_operators(request, client_for, topic_factory, who):
    user = request.getfixturevalue(who)
    name = topic_factory("guarded")
    client = client_for(user)
    posts = {
        "/clusters/local/topics/new/": {"name": "x-new", "partitions": 1, "replication_factor": 1, "reason": "r"},
        f"/clusters/local/topics/{name}/configs/apply/": {"set_values": "retention.ms=1000", "reason": "r"},
        f"/clusters/local/topics/{name}/partitions/": {"new_total": 3, "understood": "on", "reason": "r"},
        f"/clusters/local/topics/{name}/delete/": {"confirm": name, "reason": "r"},
        f"/clusters/local/topics/{name}/purge/": {"reason": "r"},
        "/clusters/local/brokers/1/configs/apply/": {"set_values": "log.cleaner.backoff.ms=1", "reason": "r"},
    }

    statuses = {url: client.post(url, data).status_code for url, data in posts.items()}

    assert set(statuses.values()) == {403}
    assert cluster_admin("local").describe_topics([name])[name].partition_count == 1
    assert cluster_admin("local").describe_configs(TOPIC, [name])[name]["retention.ms"].source != "topic"
    assert not AuditEvent.objects.exists()


def test_config_preview_shows_the_diff_and_apply_changes_it(client_for, admin, topic_factory):
    name = topic_factory("edit", configs={"segment.ms": "3600000"})
    client = client_for(admin)
    form = {"set_values": "retention.ms=7200000", "delete": "segment.ms", "reason": "tune"}

    preview = client.post(f"/clusters/local/topics/{name}/configs/preview/", form, headers={"HX-Request": "true"})
    body = preview.content.decode()
    assert "7200000" in body and "3600000" in body and "inherited" in body and "604800000" in body
    assert cluster_admin("local").describe_configs(TOPIC, [name])[name]["segment.ms"].value == "3600000"

    applied = client.post(f"/clusters/local/topics/{name}/configs/apply/", form, headers={"HX-Request": "true"})
    assert applied.status_code == 200 and applied.headers["HX-Redirect"].endswith(f"/topics/{name}/")
    assert cluster_admin("local").describe_configs(TOPIC, [name])[name]["retention.ms"].value == "7200000"


def test_broker_message_is_shown_for_an_invalid_config(client_for, admin, topic_factory):
    name = topic_factory("badcfg")

    response = client_for(admin).post(f"/clusters/local/topics/{name}/configs/apply/",
                                      {"set_values": "retention.ms=soon", "reason": "r"}, headers={"HX-Request": "true"})

    assert response.status_code == 400
    assert "Invalid value soon for configuration retention.ms" in response.content.decode()


def test_reason_is_required_for_changes(client_for, admin, topic_factory):
    name = topic_factory("noreason")

    response = client_for(admin).post(f"/clusters/local/topics/{name}/delete/", {"confirm": name})

    assert response.status_code == 400 and "reason" in response.content.decode()
    assert name in {t.name for t in cluster_admin("local").list_topics()}


def test_purge_preview_counts_records(client_for, admin, topic_factory, produce):
    name = topic_factory("purge", partitions=2)
    produce(name, [(0, None, b"x", None)] * 6)

    body = client_for(admin).post(f"/clusters/local/topics/{name}/purge/preview/",
                                  {"partitions": "0", "before_offset": "4", "reason": "r"}).content.decode()

    assert "4 records would be deleted" in body


def test_browse_messages_decodes_json_text_hex_and_headers(client_for, viewer, kafka_node, topic_factory, produce):
    name = topic_factory("browse")
    produce(name, [(0, b"k1", b'{"order": 7}', [("trace", b"abc")]), (0, b"k2", b"plain text", None),
                   (0, None, b"\xff\xfe\x00", None), (0, b"k4", None, None)])

    body = client_for(viewer).get(f"/clusters/local/topics/{name}/messages/?partition=0&offset=0").content.decode()

    assert "&quot;order&quot;: 7" in body and "plain text" in body and "ff fe 00" in body
    assert "tombstone" in body and "<td><code>trace</code></td><td><code>abc</code></td>" in body
    from confluent_kafka.admin import AdminClient

    # 30 s, like the suite's other raw-client calls: a new client's first ListGroups once took over 10 s on a
    # loaded 2-core CI machine (it waits for metadata and a connection to every broker first).
    listed = AdminClient({"bootstrap.servers": kafka_node.bootstrap}).list_consumer_groups().result(30)
    assert not [g.group_id for g in listed.valid if g.group_id.startswith("console-browse")]  # nothing joined or committed


def test_browse_from_a_timestamp_and_unknown_partition(client_for, viewer, topic_factory, produce):
    name = topic_factory("browse-ts")
    produce(name, [(0, None, b"old", None)])
    client = client_for(viewer)

    future = client.get(f"/clusters/local/topics/{name}/messages/?partition=0&since=2999-01-01T00:00:00").content.decode()
    assert "No records in this range." in future
    missing = client.get(f"/clusters/local/topics/{name}/messages/?partition=9")
    # Refused at its field, on the page itself with the topic's partitions to choose from: not a dead end.
    assert missing.status_code == 400 and "has no partition 9" in missing.content.decode()
    assert '<option value="0">Partition 0</option>' in missing.content.decode()


def test_brokers_page_and_broker_configs(client_for, viewer):
    client = client_for(viewer)

    assert "configs" in client.get("/clusters/local/brokers/").content.decode()
    body = client.get("/clusters/local/brokers/1/?q=log.retention.hours&show=all").content.decode()
    assert "log.retention.hours" in body and "(7 days)" in body and "read-only" in body
    # It opens on the configs set for the broker (the test broker's server.properties): no Kafka default among them.
    opened = client.get("/clusters/local/brokers/1/").content.decode()
    assert "<code>offsets.topic.num.partitions</code>" in opened and "<code>log.retention.hours</code>" not in opened
    assert "Show all" in opened
