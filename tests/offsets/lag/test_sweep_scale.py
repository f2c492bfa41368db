"""A sweep over many groups, with the gateway's windows and the sweep's own calls made small so a few hundred groups
cross every boundary a cluster of 50,000 would; and a sweep whose budget runs out. Against the real broker."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from gateway.kafka.librdkafka import base, client, ops_offsets
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import ClusterConnection, PartitionRef
from offsets.lag import observe, sampler
from offsets.lag.sampler import lag_sample
from offsets.models import GroupLagStatus, LagSample, LagSweep

pytestmark = pytest.mark.kafka

T1 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def commit_many(kafka_node, commit, commits: dict[str, dict[tuple[str, int], int]]) -> None:
    """Admin commits (no consumer): quick enough for hundreds of groups. The first goes through a real consumer,
    which waits out a group coordinator still loading on a fresh broker."""
    (first, offsets), *others = commits.items()
    commit(first, offsets)
    gateway = KafkaAdmin(ClusterConnection("seed", kafka_node.bootstrap), timeout=10)
    for group, offsets in others:
        gateway.alter_group_offsets(group, {PartitionRef(t, p): o for (t, p), o in offsets.items()})


def test_a_sweep_over_hundreds_of_groups_in_small_windows_stores_every_group(local_cluster, kafka_node,
                                                                           topic_factory, produce, commit, monkeypatch,
                                                                           settings, client_for, viewer):
    settings.KAFKA_CLIENT_ISOLATION = False  # the lowered constants and the spies apply in this process
    wide, narrow = topic_factory("scale-wide", partitions=4), topic_factory("scale-narrow", partitions=2)
    produce(wide, [(p, None, b"x", None) for p in range(4) for _ in range(10)])
    produce(narrow, [(p, None, b"x", None) for p in range(2) for _ in range(5)])
    prefix = f"scale-{uuid.uuid4().hex[:6]}"
    groups = {f"{prefix}-{i:03d}": i for i in range(300)}
    commits = {}
    for group, i in groups.items():
        commits[group] = {(wide, p): i % 10 for p in range(4)}
        if i % 2:
            commits[group].update({(narrow, 0): 1, (narrow, 1): 2})
    commit_many(kafka_node, commit, commits)

    monkeypatch.setattr(base, "MAX_IN_FLIGHT", 16)
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 64)
    monkeypatch.setattr(observe, "SWEEP_PARTITIONS_PER_CALL", 5)
    monkeypatch.setattr(sampler, "STORE_BATCH", 37)
    monkeypatch.setattr(ops_offsets, "OFFSETS_WINDOW", 3)
    monkeypatch.setattr(ops_offsets, "OFFSETS_WINDOWS_IN_FLIGHT", 2)
    # The sweep's own librdkafka client: the background lane's (ClusterConnection.lane).
    librdkafka = client.admin_client(observe.background_lane(observe.cluster_admin("local")).connection)
    batches: list[int] = []
    per_group_fetches = 0
    largest_offsets_request = 0
    real_batch, real_fetch = KafkaAdmin.group_offsets_batched, librdkafka.list_consumer_group_offsets
    real_list_offsets = librdkafka.list_offsets

    def watched_batch(self, group_ids):
        batches.append(len(group_ids))
        return real_batch(self, group_ids)

    def watched_fetch(requests, **kwargs):
        nonlocal per_group_fetches
        per_group_fetches += 1
        return real_fetch(requests, **kwargs)

    def watched_list_offsets(partitions, **kwargs):
        nonlocal largest_offsets_request
        largest_offsets_request = max(largest_offsets_request, len(partitions))
        return real_list_offsets(partitions, **kwargs)

    monkeypatch.setattr(KafkaAdmin, "group_offsets_batched", watched_batch)
    monkeypatch.setattr(librdkafka, "list_consumer_group_offsets", watched_fetch)
    monkeypatch.setattr(librdkafka, "list_offsets", watched_list_offsets)

    result = lag_sample(cluster="local", now=T1, budget_s=600)

    assert result.skipped == 0 and result.groups >= 300 and result.partitions >= 300 * 4 + 150 * 2
    # OffsetFetch: a multi-group request per batch of at most SWEEP_GROUPS_PER_CALL groups, none per group.
    # Streams groups other tests of the session left on the broker are asked through their own call.
    streams = sum(1 for g in result.listed.listings if g.group_type == "streams")
    assert sum(batches) >= result.groups - streams and max(batches) <= 64 and len(batches) >= 300 // 64
    assert per_group_fetches == 0
    assert 0 < largest_offsets_request <= 3
    rows = {(r.group, r.topic): r for r in LagSample.objects.filter(group__startswith=prefix, step=0, time=T1)}
    assert len(rows) == 300 + 150
    for group, i in groups.items():
        w = rows[group, wide]
        assert (w.lag, w.committed, w.end, w.partitions) == (4 * (10 - i % 10), 4 * (i % 10), 40, 4)
        if i % 2:
            n = rows[group, narrow]
            assert (n.lag, n.committed, n.end, n.partitions) == (7, 3, 10, 2)
        else:
            assert (group, narrow) not in rows
    statuses = GroupLagStatus.objects.filter(cluster="local", group__startswith=prefix)
    assert statuses.count() == 300 and {s.sampled_at for s in statuses} == {T1}
    sweep = LagSweep.objects.get(cluster="local")
    assert (sweep.groups, sweep.skipped_groups, sweep.skipped_reason) == (result.groups, 0, "")

    # A second sweep updates the same status rows in place (their windows grow) and drops a group that is gone.
    GroupLagStatus.objects.create(cluster="local", group=f"{prefix}-deleted-meanwhile", totals=[3])
    lag_sample(cluster="local", now=T1 + timedelta(seconds=30), budget_s=600)
    statuses = GroupLagStatus.objects.filter(cluster="local", group__startswith=prefix)
    assert statuses.count() == 300
    assert all(len(s.lag_window.times) == 2 for s in statuses)
    page = client_for(viewer).get("/clusters/local/groups/").content.decode()
    assert 'id="sampler-skipped"' not in page


def test_a_sweep_out_of_time_samples_the_most_lagging_groups_first_and_says_what_it_skipped(
        local_cluster, kafka_node, topic_factory, produce, commit, monkeypatch, settings, client_for, viewer):
    topic = topic_factory("scale-deadline", partitions=4)
    produce(topic, [(p, None, b"x", None) for p in range(4) for _ in range(5000)])
    prefix = f"deadline-{uuid.uuid4().hex[:6]}"
    # Lag 20,000 down to 17,000: far more than any other test's group on the session's broker.
    hot = {f"{prefix}-hot-{i}": 250 * i for i in range(4)}
    quiet = [f"{prefix}-quiet-{i:02d}" for i in range(20)]
    commit_many(kafka_node, commit, {**{g: {(topic, p): at for p in range(4)} for g, at in hot.items()},
                             **{g: {(topic, p): 5000 for p in range(4)} for g in quiet}})
    first = lag_sample(cluster="local", now=T1, budget_s=600)
    assert first.skipped == 0

    # No budget at all: the sweep still makes its first call, of SWEEP_GROUPS_PER_CALL groups, and stops there.
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", len(hot))
    produce(topic, [(0, None, b"x", None)] * 7)
    second = lag_sample(cluster="local", now=T1 + timedelta(seconds=30), budget_s=0)

    assert second.skipped == second.groups - len(hot) and second.skipped >= len(quiet)
    sampled_now = set(LagSample.objects.filter(cluster="local", step=0, time=T1 + timedelta(seconds=30))
                      .values_list("group", flat=True))
    assert sampled_now == set(hot)
    lags = dict(LagSample.objects.filter(group__in=hot, time=T1 + timedelta(seconds=30)).values_list("group", "lag"))
    assert lags == {g: 20_007 - 4 * at for g, at in hot.items()}
    statuses = {s.group: s for s in GroupLagStatus.objects.filter(cluster="local", group__startswith=prefix)}
    assert len(statuses) == len(hot) + len(quiet)  # the skipped keep their status from the sweep before
    assert {g for g, s in statuses.items() if s.sampled_at == T1 + timedelta(seconds=30)} == set(hot)
    assert all(statuses[g].sampled_at == T1 and len(statuses[g].lag_window.times) == 1 for g in quiet)

    sweep = LagSweep.objects.get(cluster="local")
    assert sweep.last_ok_at == T1 + timedelta(seconds=30) and sweep.last_error == ""
    assert sweep.skipped_groups == second.skipped
    assert sweep.skipped_reason == sampler.MSG_SKIPPED_BUDGET.format(skipped=second.skipped, listed=second.groups,
                                                                     budget=0)
    assert sweep.skipped_sample and not set(sweep.skipped_sample) & set(hot)
    assert len(sweep.skipped_sample) == min(second.skipped, sampler.SKIPPED_NAMES_KEPT)
    page = client_for(viewer).get("/clusters/local/groups/").content.decode()
    assert f"{second.skipped:,} of {second.groups:,} groups not sampled" in page

    # The next sweep with time enough samples everyone again and clears the note.
    third = lag_sample(cluster="local", now=T1 + timedelta(seconds=60), budget_s=600)
    assert third.skipped == 0
    assert LagSweep.objects.get(cluster="local").skipped_groups == 0
    assert all(len(s.lag_window.times) == 2 for s in GroupLagStatus.objects.filter(group__in=quiet))


def test_a_batch_is_stored_while_the_next_is_asked(local_cluster, kafka_node, topic_factory, produce, commit,
                                                   monkeypatch, settings):
    """Storing overlaps asking: the second batch's OffsetFetch waits until the first batch is stored, which can
    only happen if the first batch was handed over before the asking went on (otherwise the wait runs out)."""
    settings.KAFKA_CLIENT_ISOLATION = False  # the spies apply in this process
    topic = topic_factory("overlap", partitions=2)
    produce(topic, [(p, None, b"x", None) for p in range(2) for _ in range(3)])
    prefix = f"overlap-{uuid.uuid4().hex[:6]}"
    groups = [f"{prefix}-{i:03d}" for i in range(120)]
    commit_many(kafka_node, commit, {g: {(topic, 0): 1, (topic, 1): 2} for g in groups})
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 50)
    first_stored = threading.Event()
    events: list[str] = []
    real_batch, real_store = KafkaAdmin.group_offsets_batched, sampler._store_batch

    def watched_batch(self, group_ids):
        if events:  # every batch after the first waits for the first to be stored
            events.append(f"waited {first_stored.wait(20)}")
        events.append("ask")
        return real_batch(self, group_ids)

    def watched_store(*args, **kwargs):
        first_stored.set()
        return real_store(*args, **kwargs)

    monkeypatch.setattr(KafkaAdmin, "group_offsets_batched", watched_batch)
    monkeypatch.setattr(sampler, "_store_batch", watched_store)
    result = lag_sample(cluster="local", now=T1 + timedelta(hours=1), budget_s=600)

    assert result.skipped == 0 and events[0] == "ask" and "waited False" not in events
    assert events.count("ask") >= result.groups // 50
    stored = LagSample.objects.filter(group__in=groups, time=T1 + timedelta(hours=1), topic=topic)
    assert sorted(stored.values_list("lag", flat=True)) == [3] * len(groups)


def test_a_batch_on_known_partitions_is_handed_over_before_an_earlier_one_still_looked_up(
        local_cluster, kafka_node, topic_factory, produce, commit, monkeypatch, settings):
    """Against the broker's real OffsetFetch and ListOffsets: the a-groups read topic `shared`, the b-groups
    topic `other`, the c-groups `shared` again (the a batch's lookup is held until the c batch is fetched). The c batch goes to storing before the
    b batch, with the offsets Kafka has. Only the listing is narrowed to this test's groups (the session's broker
    holds other tests' groups, which would mix into the batches)."""
    settings.KAFKA_CLIENT_ISOLATION = False  # the spies apply in this process
    shared, other = topic_factory("early-shared", partitions=2), topic_factory("early-other", partitions=2)
    produce(shared, [(p, None, b"x", None) for p in range(2) for _ in range(6)])
    produce(other, [(p, None, b"x", None) for p in range(2) for _ in range(4)])
    prefix = f"early-{uuid.uuid4().hex[:6]}"
    groups = {f"{prefix}-{kind}{i}": (other if kind == "b" else shared) for kind in "abc" for i in range(4)}
    commit_many(kafka_node, commit, {g: {(topic, 0): 1, (topic, 1): 2} for g, topic in groups.items()})
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 4)
    admin = observe.background_lane(observe.cluster_admin("local"))
    real_listing, real_lookup = KafkaAdmin.list_groups_of_every_type, KafkaAdmin.list_offsets_many
    real_batch = KafkaAdmin.group_offsets_batched
    c_fetched = threading.Event()

    def own_groups(self):
        return [g for g in real_listing(self) if g.group_id.startswith(prefix)]

    def watched_batch(self, group_ids):
        answer = real_batch(self, group_ids)
        if group_ids[0][-2] == "c":
            c_fetched.set()
        return answer

    def held_back(self, refs, ats, strict=True):
        if any(ref.topic == shared for ref in refs):
            # The a batch's lookup ends only once the c batch's OffsetFetch has come back (and its future is
            # done), so the c batch is there to go ahead of b, whose topic nobody has looked up yet.
            assert c_fetched.wait(30)
            time.sleep(0.2)
        return real_lookup(self, refs, ats, strict=strict)

    monkeypatch.setattr(KafkaAdmin, "list_groups_of_every_type", own_groups)
    monkeypatch.setattr(KafkaAdmin, "group_offsets_batched", watched_batch)
    monkeypatch.setattr(KafkaAdmin, "list_offsets_many", held_back)
    parts: list = []
    observe.ask(admin, {}, 600, parts.append)

    batches = [p for p in parts if isinstance(p, observe.Asked)]
    assert [b.groups[0][-2] for b in batches] == ["a", "c", "b"]
    assert parts[-1].skipped == []
    for batch in batches:
        for group in batch.groups:
            topic = groups[group]
            committed = batch.committed[group]
            assert committed == {PartitionRef(topic, 0): 1, PartitionRef(topic, 1): 2}
            ends = 6 if topic == shared else 4
            assert [batch.ends[ref] for ref in committed] == [ends, ends]
