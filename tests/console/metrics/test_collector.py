"""What /metrics reports, against rows the console's own code wrote: a real lag sweep and the real recorder on the
session broker, audit_record, and model rows where only the database matters."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.audit.actor import Actor
from console.audit.services import audit_record
from offsets.history.recorder import OFFSETS_TOPIC, record_from_topic
from offsets.lag.sampler import lag_sample
from offsets.lag.window import LagWindow
from offsets.models import GroupGeneration, GroupLagStatus, LagSample, LagSweep, RecorderPosition, RecorderStatus
from sparkjobs.models import ReplayJob

pytestmark = pytest.mark.django_db

T1 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
T2 = T1 + timedelta(seconds=30)


@pytest.mark.kafka
def test_lag_status_and_partitions_after_a_real_sweep(local_cluster, seeded, commit, scrape):
    topic = seeded["topic"]
    # Every character a label value must escape or carry: quote, backslash, new line, non-ASCII.
    hostile = f'we"ird \\ group\nline two \u00fcn\u00efc\u00f8d\u00e9-\u7fa4\u7ec4-{uuid.uuid4().hex[:6]}'
    commit(hostile, {(topic, 0): 8, (topic, 1): 2})  # the seeded group's commits, under a hostile id

    result = lag_sample(cluster="local")
    plain, detailed = scrape(), scrape("?partitions=1")

    # seeded: p0 holds offsets 0..19 (log end 20) committed at 8; p1 ends at 5, committed at 2; p2 no commit.
    expected = {"0": 20 - 8, "1": 5 - 2}
    for group in (seeded["group"], hostile):
        lag = plain.value("kafka_console_group_lag", cluster="local", group=group, topic=topic)
        assert lag == sum(expected.values())
        assert plain.value("kafka_console_group_status", cluster="local", group=group) == 0  # one sample: collecting
        partitions = detailed.series("kafka_console_group_partition_lag", cluster="local", group=group, topic=topic)
        assert {dict(k)["partition"]: v for k, v in partitions.items()} == expected
    assert "kafka_console_group_partition_lag" not in plain.families
    sweep = LagSweep.objects.get(cluster="local")
    assert plain.value("kafka_console_lag_sampler_last_success_timestamp_seconds", cluster="local") == \
        sweep.last_ok_at.timestamp()
    assert plain.value("kafka_console_lag_sampler_duration_seconds", cluster="local") == result.duration_ms / 1000
    assert plain.value("kafka_console_lag_sampler_groups", cluster="local") == result.groups


def _offsets_topic_ends(bootstrap: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ends-{uuid.uuid4().hex}"})
    try:
        partitions = consumer.list_topics(OFFSETS_TOPIC, timeout=10).topics[OFFSETS_TOPIC].partitions
        return {p: consumer.get_watermark_offsets(TopicPartition(OFFSETS_TOPIC, p), timeout=10)[1] for p in partitions}
    finally:
        consumer.close()


@pytest.mark.kafka
def test_recorder_behind_the_log_end(local_cluster, seeded, kafka_node, scrape):
    def noted() -> bool:
        return RecorderStatus.objects.filter(cluster="local", behind_records__isnull=False).exists()

    # One record per poll, stopped after the first time the recorder compared its positions with the ends.
    record_from_topic("local", should_stop=noted, batch_size=1)

    read = dict(RecorderPosition.objects.filter(cluster="local").values_list("partition", "next_offset"))
    ends = _offsets_topic_ends(kafka_node.bootstrap)
    behind = sum(end - read.get(p, 0) for p, end in ends.items())
    assert behind > 0  # the seeded group's commits at least
    assert RecorderStatus.objects.get(cluster="local").behind_records == behind
    assert scrape().value("kafka_console_recorder_behind_records", cluster="local") == behind

    record_from_topic("local", should_stop=lambda: False, until_caught_up=True)

    after = scrape()
    assert after.value("kafka_console_recorder_behind_records", cluster="local") == 0
    assert 0 <= after.value("kafka_console_recorder_behind_seconds", cluster="local") < 60
    states = after.series("kafka_console_recorder_state", cluster="local")
    assert {dict(k)["state"]: v for k, v in states.items() if v} == {"recording": 1}


def _samples(cluster: str, at: datetime, lags: dict[tuple[str, str], int]) -> None:
    LagSample.objects.bulk_create([
        LagSample(cluster=cluster, group=g, topic=t, step=0, time=at, lag=lag, lag_max=lag, committed=0, end=lag,
                  partitions=1) for (g, t), lag in lags.items()])


def test_lag_comes_from_each_clusters_newest_sweep_only(scrape):
    _samples("east", T1, {("gone", "a"): 7, ("orders", "a"): 1, ("orders", "b"): 2})
    _samples("east", T2, {("orders", "a"): 10, ("orders", "b"): 20})
    _samples("west", T1, {("orders", "a"): 3})
    LagSample.objects.create(cluster="east", group="orders", topic="a", step=300, time=T2, lag=55, lag_max=55,
                             committed=0, end=55, partitions=1)  # a rollup bucket at the same time: not a sample
    LagSweep.objects.create(cluster="east", last_ok_at=T2, duration_ms=1500, last_error_at=T1)
    LagSweep.objects.create(cluster="west", last_ok_at=T1)

    lag = scrape().series("kafka_console_group_lag")

    assert {tuple(sorted(k)): v for k, v in lag.items()} == {
        (("cluster", "east"), ("group", "orders"), ("topic", "a")): 10,
        (("cluster", "east"), ("group", "orders"), ("topic", "b")): 20,
        (("cluster", "west"), ("group", "orders"), ("topic", "a")): 3,
    }


def test_status_severity_matches_its_help(scrape):
    statuses = {"": "collecting", "OK": "OK", "WARN": "WARN", "BLOCKED": "BLOCKED", "STOP": "STOP", "ERR": "ERR"}
    GroupLagStatus.objects.bulk_create([GroupLagStatus(cluster="east", group=f"g-{name}", status=status)
                                        for status, name in statuses.items()])

    result = scrape()

    documented = {name: float(n) for n, name in re.findall(
        r"(\d+) (\w+)", result.families["kafka_console_group_status"].documentation)}
    values = {name: result.value("kafka_console_group_status", cluster="east", group=f"g-{name}")
              for name in statuses.values()}
    assert values == documented
    # Worse is higher, so `max by (cluster)` finds the group to look at.
    assert values["collecting"] < values["OK"] < values["WARN"] < values["STOP"] < values["ERR"]


def test_rebalances_count_generations_of_listed_groups(scrape):
    GroupLagStatus.objects.create(cluster="east", group="listed")
    for generation in range(1, 4):
        GroupGeneration.objects.create(cluster="east", group="listed", protocol="classic", generation=generation,
                                       time=T1 + timedelta(seconds=generation))
    GroupGeneration.objects.create(cluster="east", group="listed", protocol="classic", generation=1, time=T2,
                                   sampled=True)
    GroupGeneration.objects.create(cluster="east", group="deleted-long-ago", protocol="classic", generation=1, time=T1)

    rebalances = scrape().series("kafka_console_group_rebalances_total")

    assert {dict(k)["group"]: v for k, v in rebalances.items()} == {"listed": 4}


def test_audit_events_by_action_and_outcome(scrape):
    actor = Actor.system()
    for outcome in ("intent", "success", "intent", "failure"):
        audit_record(actor=actor, action="metrics.test", outcome=outcome, target="group:x")

    first = scrape().series("kafka_console_audit_events_total", action="metrics.test")
    # Counted again from the events appended since: the totals go on from the first scrape's.
    audit_record(actor=actor, action="metrics.test", outcome="success", target="group:x")
    audit_record(actor=actor, action="metrics.other", outcome="refused", target="group:x")
    second = scrape().series("kafka_console_audit_events_total")

    assert {dict(k)["outcome"]: v for k, v in first.items()} == {"intent": 2, "success": 1, "failure": 1}
    assert {(dict(k)["action"], dict(k)["outcome"]): v for k, v in second.items()} == {
        ("metrics.test", "intent"): 2, ("metrics.test", "success"): 2, ("metrics.test", "failure"): 1,
        ("metrics.other", "refused"): 1}


def test_replay_jobs_by_state(scrape):
    for state in ("running", "running", "failed", "succeeded", "succeeded", "succeeded"):
        ReplayJob.objects.create(cluster="local", topic="t", start_spec="earliest", end_spec="latest", ranges={},
                                 planned_records=0, sink="jsonl", state=state)

    jobs = scrape().series("kafka_console_replay_jobs")

    assert {dict(k)["state"]: v for k, v in jobs.items()} == {
        "queued": 0, "running": 2, "succeeded": 3, "failed": 1, "cancelled": 0}


def test_queries_do_not_grow_with_groups(scrape):
    def queries_for(groups: int) -> int:
        cluster = f"c{groups}"
        _samples(cluster, T2, {(f"g{i}", t): i for i in range(groups) for t in ("a", "b")})
        GroupLagStatus.objects.bulk_create([GroupLagStatus(cluster=cluster, group=f"g{i}", status="OK",
                                                           window=LagWindow.from_dict(
                                                               {"times": [1], "partitions": {"a-0": [[0, i]]}}
                                                           ).to_bytes())
                                            for i in range(groups)])
        GroupGeneration.objects.bulk_create([GroupGeneration(cluster=cluster, group=f"g{i}", protocol="classic",
                                                             generation=1, time=T1) for i in range(groups)])
        LagSweep.objects.create(cluster=cluster, last_ok_at=T2)
        with CaptureQueriesContext(connection) as queries:
            result = scrape("?partitions=1")
        assert len(result.series("kafka_console_group_partition_lag", cluster=cluster)) == groups
        return len(queries)

    scrape()  # the audit counts are kept between scrapes: start from a kept count in both
    assert queries_for(3) == queries_for(60)
