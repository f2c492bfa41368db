"""Partitions as a share of their retention.bytes (KIP-1257, Kafka 4.3), on the broker of its own that checks
retention every second: a partition filled past the threshold makes a `retention` rule fire through its webhook,
the topic page shows the share the broker reports (and "no limit" for a topic without one), and raising
retention.bytes resolves the alert. (tests/gateway/kafka/test_ops_jmx.py compares the share with Kafka's JmxTool.)"""

from __future__ import annotations

import uuid

import pytest

from alerts.evaluation import alerts_evaluate
from alerts.models import Alert, AlertRule
from alerts.services import alert_rule_create
from brokers.conf import LOCAL_JMX_PASSWORD_ENV, LOCAL_JMX_USER
from brokers.models import BrokerState
from brokers.sampler import broker_metrics_sample_all
from brokers.services import metrics_source_set
from console.audit.actor import Actor
from console.clusters.models import Cluster
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import TOPIC, ClusterConnection
from tests.fixtures.kafka import fill_partition, retention_share_when

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

LIMIT = 4 * 1024 * 1024
SEGMENT = 1024 * 1024  # the smallest segment.bytes Kafka 4 accepts


def test_a_partition_past_the_threshold_fires_shows_on_its_topic_and_resolves(jbod_kafka, admin, viewer, client_for,
                                                                               webhook):
    Cluster.objects.update_or_create(name="jbod", defaults={"bootstrap_servers": jbod_kafka.bootstrap})
    actor = Actor(user=admin, source="cli")
    metrics_source_set(actor=actor, cluster="jbod", jmx=f"1=127.0.0.1:{jbod_kafka.jmx_port}", username=LOCAL_JMX_USER,
                       password_env=LOCAL_JMX_PASSWORD_ENV, reason="test")
    prefix = f"full-{uuid.uuid4().hex[:6]}"
    rule = alert_rule_create(actor=actor, name="full-partitions", kind="retention", cluster="jbod",
                             group_pattern=f"{prefix}*", webhook="oncall")
    assert (rule.threshold, rule.condition) == (90, "a partition at 90 % or more of its retention.bytes")

    kafka = KafkaAdmin(ClusterConnection("jbod-test", jbod_kafka.bootstrap), timeout=10)
    limited, unlimited = f"{prefix}-limited", f"{prefix}-unlimited"
    kafka.create_topic(limited, partitions=2, replication_factor=1,
                       configs={"retention.bytes": str(LIMIT), "segment.bytes": str(SEGMENT)})
    kafka.create_topic(unlimited, partitions=1, replication_factor=1, configs={"segment.bytes": str(SEGMENT)})
    # About 3.9 MB of 4 MiB: past 90 %, and less than a segment past the limit, so retention deletes nothing.
    fill_partition(jbod_kafka, limited, 0, 3900)
    fill_partition(jbod_kafka, unlimited, 0, 3900)
    share = retention_share_when(jbod_kafka, limited, 0, lambda s: s >= 90, "90 % or more")
    assert share < 110

    broker_metrics_sample_all()
    stored = BrokerState.objects.get(cluster="jbod", broker=1).retention_shares
    assert stored[limited] == {"0": share}  # partition 1 is empty: 0 %, not read; no limit: 0 %, not read
    assert unlimited not in stored

    page = client_for(viewer).get(f"/clusters/jbod/topics/{limited}/?tab=partitions").content.decode()
    cells = page.split('class="num retention-share"')[1:]
    assert len(cells) == 2 and f">{share} %<" in cells[0] and ">0 %<" in cells[1]
    assert 'class="warn"' in cells[0] and "broker 1: " in cells[0]
    no_limit = client_for(viewer).get(f"/clusters/jbod/topics/{unlimited}/?tab=partitions").content.decode()
    assert ">no limit<" in no_limit.split('class="num retention-share"')[1]

    fired = alerts_evaluate()
    assert (fired.opened, fired.fired, fired.sent) == (1, 1, 1)
    alert = Alert.objects.get(rule__name="full-partitions")
    assert alert.group == f"{limited}-0" and f"is at {share} % of its retention.bytes" in alert.reason
    assert alert.path == f"/clusters/jbod/topics/{limited}/?tab=partitions"
    message = webhook.received[0]
    assert message["alert"]["state"] == "firing" and message["alert"]["link"].endswith(alert.path)
    assert f"[FIRING] full-partitions: partition {limited}-0 of cluster jbod" in message["text"]
    assert alerts_evaluate().fired == 0  # still full: the same alert, nothing sent twice

    kafka.alter_configs(TOPIC, limited, set_values={"retention.bytes": str(100 * LIMIT)}, delete=[])
    retention_share_when(jbod_kafka, limited, 0, lambda s: s < 90, "below 90 %")
    broker_metrics_sample_all()
    resolved = alerts_evaluate()
    assert resolved.resolved == 1
    assert [m["alert"]["state"] for m in webhook.received] == ["firing", "resolved"]
    assert Alert.objects.get(rule__name="full-partitions").state == Alert.RESOLVED
    AlertRule.objects.filter(name="full-partitions").delete()
