import re
import uuid
from datetime import UTC, datetime, timedelta

import hypothesis
import pytest
from hypothesis import strategies as st

from console.clusters.models import Cluster
from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.sandbox import stop_host_processes
from offsets.lag.priority import previous_sample
from offsets.lag.sampler import (_previous_samples, lag_prune, lag_rollup, lag_sample, lag_sample_all,
                                 lag_sweep_claim, lag_sweep_release)
from offsets.models import GroupCommitStat, GroupLagStatus, LagSample, LagSweep
from offsets.selectors import group_snapshot_refresh
from tests.offsets.conftest import wait_for_state

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def sweep_at(seconds: float):
    return lag_sample(cluster="local", now=T0 + timedelta(seconds=seconds))


def group_name(kind: str) -> str:
    return f"lag-{kind}-{uuid.uuid4().hex[:8]}"


@pytest.mark.kafka
def test_a_sweep_stores_exact_lag_per_group_and_topic(local_cluster, topic_factory, produce, commit):
    orders, audit = topic_factory("orders", partitions=2), topic_factory("audit")
    produce(orders, [(0, None, b"x", None)] * 10 + [(1, None, b"x", None)] * 4)
    produce(audit, [(0, None, b"x", None)] * 5)
    group = group_name("exact")
    commit(group, {(orders, 0): 3, (orders, 1): 4, (audit, 0): 0})

    result = sweep_at(0)

    rows = {r.topic: r for r in LagSample.objects.filter(group=group, step=0)}
    assert (rows[orders].lag, rows[orders].committed, rows[orders].end, rows[orders].partitions) == (7, 7, 14, 2)
    assert (rows[audit].lag, rows[audit].committed, rows[audit].end, rows[audit].partitions) == (5, 0, 5, 1)
    assert result.groups >= 1 and result.partitions >= 3
    status = GroupLagStatus.objects.get(cluster="local", group=group)
    assert status.status == "" and status.reason == "collecting samples"
    # committed, log end, last stable offset
    assert status.lag_window.as_dict()["partitions"] == {f"{orders}-0": [[3, 10, 10]], f"{orders}-1": [[4, 4, 4]],
                                           f"{audit}-0": [[0, 5, 5]]}
    assert status.totals == [12]
    sweep = LagSweep.objects.get(cluster="local")
    assert sweep.last_ok_at == T0 and sweep.last_error == ""


@pytest.mark.kafka
def test_statuses_from_successive_sweeps(local_cluster, topic_factory, produce, commit, live_consumer, client_for,
                                         viewer):
    topic = topic_factory("status")
    produce(topic, [(0, None, b"x", None)] * 20)
    ok, warn, stop, err = (group_name(k) for k in ("ok", "warn", "stop", "err"))
    commit(ok, {(topic, 0): 20})
    commit(warn, {(topic, 0): 5})
    commit(stop, {(topic, 0): 2})
    commit(err, {(topic, 0): 1})
    live_consumer(err, topic)  # polls and never commits: a member whose committed offset does not move
    wait_for_state(err, {"Stable"})

    for i in range(3):
        sweep_at(30 * i)
        produce(topic, [(0, None, b"x", None)] * 10)  # the topic grows by 10 between sweeps
        commit(warn, {(topic, 0): 5 + 3 * (i + 1)})  # warn commits, but only 3 of every 10
        commit(ok, {(topic, 0): 20 + 10 * (i + 1)})  # ok keeps up

    statuses = {s.group: s for s in GroupLagStatus.objects.filter(group__in=[ok, warn, stop, err])}
    assert {g: s.status for g, s in statuses.items()} == {ok: "OK", warn: "WARN", stop: "STOP", err: "ERR"}
    assert statuses[warn].reason == f"{topic}-0: lag grew from 15 to 29 over 60 s while committing"
    assert statuses[stop].reason == f"{topic}-0: no members, committed offset 2 with lag 38"
    assert statuses[err].reason == f"{topic}-0: committed offset 1 has not moved for 60 s with lag 39"
    assert statuses[err].partition_status == {f"{topic}-0": "ERR"}

    group_snapshot_refresh("local", wait_s=30)  # what the sweep's task does after each sweep
    page = client_for(viewer).get("/clusters/local/groups/", {"q": "lag-"}).content.decode()
    for group, status in ((ok, "OK"), (warn, "WARN"), (stop, "STOP"), (err, "ERR")):
        row = re.search(rf'<tr data-group="{group}">(.*?)</tr>', page, re.S).group(1)
        assert f'<span class="status status-{status}"' in row
    only_err = client_for(viewer).get("/clusters/local/groups/", {"q": "lag-", "status": "ERR"}).content.decode()
    assert err in only_err and stop not in only_err and ok not in only_err
    worst_first = client_for(viewer).get("/clusters/local/groups/", {"q": "lag-", "sort": "status"}).content.decode()
    assert worst_first.index(err) < worst_first.index(stop) < worst_first.index(warn) < worst_first.index(ok)


@pytest.mark.kafka
def test_recent_commits_seen_by_the_recorder_tell_stop_from_err(local_cluster, topic_factory, produce, commit,
                                                                 live_consumer):
    topic = topic_factory("stopped")
    produce(topic, [(0, None, b"x", None)] * 10)
    quiet, busy = group_name("quiet"), group_name("busy")
    for group in (quiet, busy):
        commit(group, {(topic, 0): 1})
        live_consumer(group, topic)
    wait_for_state(quiet, {"Stable"})
    wait_for_state(busy, {"Stable"})
    # The recorder saw `busy` commit (the same offset) just now, and `quiet` last an hour ago.
    GroupCommitStat.objects.create(cluster="local", group=busy, last_commit_at=T0 + timedelta(seconds=55))
    GroupCommitStat.objects.create(cluster="local", group=quiet, last_commit_at=T0 - timedelta(hours=1))
    for i in range(3):
        sweep_at(30 * i)
    statuses = dict(GroupLagStatus.objects.filter(group__in=[quiet, busy]).values_list("group", "status"))
    assert statuses == {busy: "ERR", quiet: "STOP"}
    assert "no commit for 61 min" in GroupLagStatus.objects.get(group=quiet).reason


@pytest.mark.kafka
def test_a_sweep_makes_the_same_few_calls_whatever_the_number_of_groups(local_cluster, topic_factory, produce,
                                                                          commit, monkeypatch, settings):
    from confluent_kafka.admin import AdminClient

    from gateway.kafka.admin import KafkaAdmin

    settings.KAFKA_CLIENT_ISOLATION = False  # the spies count calls made in this process

    topic = topic_factory("batch", partitions=4)
    produce(topic, [(p, None, b"x", None) for p in range(4)] * 3)
    groups = [group_name("batch") for _ in range(12)]
    for group in groups:
        commit(group, {(topic, p): 1 for p in range(4)})
    calls: dict[str, int] = {}
    for owner, name in ((AdminClient, "list_consumer_groups"), (AdminClient, "list_consumer_group_offsets"),
                        (AdminClient, "list_offsets"), (AdminClient, "describe_consumer_groups"),
                        (KafkaAdmin, "group_offsets_batched"), (KafkaAdmin, "list_groups_of_every_type")):
        original = getattr(owner, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):  # counts, then asks the real broker
            calls[_name] = calls.get(_name, 0) + 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(owner, name, spy)
    result = sweep_at(0)
    # One ListGroups of every type (the Java Admin's; librdkafka's is only its fallback); OffsetFetch for every
    # group in one call (the Java Admin's multi-group request, one per coordinator); ListOffsets twice, sent
    # together: the log end and read_committed's last stable offset.
    assert calls["list_groups_of_every_type"] == 1 and "list_consumer_groups" not in calls
    assert calls["list_offsets"] == 2
    assert calls["group_offsets_batched"] == 1 and result.groups >= 12
    assert "list_consumer_group_offsets" not in calls
    assert "describe_consumer_groups" not in calls
    assert LagSample.objects.filter(group__in=groups, step=0, lag=8, partitions=4).count() == 12


@pytest.mark.kafka
def test_a_down_cluster_fails_within_seconds_is_noted_and_does_not_stop_the_others(local_cluster, client_for,
                                                                                     viewer):
    import time

    Cluster.objects.create(name="down", bootstrap_servers="127.0.0.1:1")
    started = time.monotonic()
    outcome = lag_sample_all()
    assert time.monotonic() - started < 15
    assert outcome["down"].startswith("failed: ") and "groups" in outcome["local"]
    sweep = LagSweep.objects.get(cluster="down")
    assert sweep.last_ok_at is None and sweep.last_error
    with pytest.raises(ClusterUnavailable):
        lag_sample(cluster="down")
    page = client_for(viewer).get("/clusters/local/groups/").content.decode()
    assert "Lag status from the sample at" in page


@pytest.mark.django_db
def test_only_one_sweep_of_a_cluster_runs_at_a_time(settings):
    assert lag_sweep_claim("c1", T0)
    assert not lag_sweep_claim("c1", T0 + timedelta(seconds=1))
    assert lag_sweep_claim("c2", T0 + timedelta(seconds=1))  # each cluster on its own
    assert not lag_sweep_claim("c1", T0 + timedelta(seconds=settings.LAG_SWEEP_CLAIM_S - 1))
    # A claim that old is a sweep whose worker died: the next sweep takes it over.
    later = T0 + timedelta(seconds=settings.LAG_SWEEP_CLAIM_S + 1)
    assert lag_sweep_claim("c1", later)
    lag_sweep_release(["c1"], T0)  # the old sweep, ending after all, leaves the new one's claim alone
    assert LagSweep.objects.get(cluster="c1").running_since == later
    lag_sweep_release(["c1"], later)
    assert LagSweep.objects.get(cluster="c1").running_since is None
    assert lag_sweep_claim("c1", later + timedelta(seconds=1))


@pytest.mark.kafka
def test_a_cluster_whose_sweep_is_still_running_is_not_swept_again(local_cluster, topic_factory, produce, commit):
    topic = topic_factory("claimed")
    produce(topic, [(0, None, b"x", None)] * 3)
    group = group_name("claimed")
    commit(group, {(topic, 0): 1})
    running_since = datetime.now(UTC) - timedelta(seconds=5)
    LagSweep.objects.update_or_create(cluster="local", defaults={"running_since": running_since})

    outcome = lag_sample_all()

    assert outcome["local"].startswith("skipped: the sweep that started at "), outcome
    assert not LagSample.objects.filter(group=group).exists()
    assert LagSweep.objects.get(cluster="local").running_since == running_since

    LagSweep.objects.filter(cluster="local").update(running_since=datetime.now(UTC) - timedelta(hours=1))
    outcome = lag_sample_all()

    assert "groups" in outcome["local"], outcome
    assert LagSample.objects.get(group=group, topic=topic, step=0).lag == 2
    assert LagSweep.objects.get(cluster="local").running_since is None


def raw(group, topic, at, lag, committed, end):
    return LagSample(cluster="c1", group=group, topic=topic, step=0, time=at, lag=lag, lag_max=lag,
                     committed=committed, end=end, partitions=1)


@pytest.mark.django_db
def test_rollup_keeps_last_values_and_peaks_per_bucket_and_is_idempotent():
    # Two hours of samples every 30 s; lag is i % 50 except one spike of 5,000 at 12:07:30.
    samples = []
    for i in range(240):
        at = T0 + timedelta(seconds=30 * i)
        lag = 5000 if i == 15 else i % 50
        samples.append(raw("g", "t", at, lag, committed=i * 10, end=i * 10 + lag))
    LagSample.objects.bulk_create(samples)
    now = T0 + timedelta(hours=2, minutes=2)

    written = lag_rollup(cluster="c1", now=now)

    five = list(LagSample.objects.filter(step=300).order_by("time"))
    assert len(five) == 24 and written == 24 + 2
    assert five[1].time == T0 + timedelta(minutes=5)
    assert (five[1].lag_max, five[1].lag, five[1].committed) == (5000, 19, 190)
    hourly = list(LagSample.objects.filter(step=3600).order_by("time"))
    assert [h.time for h in hourly] == [T0, T0 + timedelta(hours=1)]
    assert hourly[0].lag_max == 5000 and hourly[0].lag == 119 % 50 and hourly[1].lag_max == 49
    assert LagSweep.objects.get(cluster="c1").rolled_until == {"300": (T0 + timedelta(hours=2)).timestamp(),
                                                                "3600": (T0 + timedelta(hours=2)).timestamp()}
    # Nothing new: nothing rolled; re-rolling everything (positions lost) rewrites the same buckets.
    assert lag_rollup(cluster="c1", now=now) == 0
    LagSweep.objects.filter(cluster="c1").update(rolled_until={})
    lag_rollup(cluster="c1", now=now)
    assert LagSample.objects.filter(step=300).count() == 24 and LagSample.objects.filter(step=3600).count() == 2
    assert LagSample.objects.get(step=300, time=T0 + timedelta(minutes=5)).lag_max == 5000


@pytest.mark.django_db
@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(windows=st.lists(st.tuples(st.sampled_from(["", "OK", "WARN", "ERR", "STOP"]),
                                             st.lists(st.one_of(st.none(), st.integers(0, 2**53)), max_size=5),
                                             st.booleans()), max_size=10))
def test_the_next_sweeps_order_reads_what_parsing_every_window_gave(windows):
    """The database takes each group's last two totals; the ranks are those of the whole lists parsed in Python,
    nulls (failed samples) and short lists included."""
    GroupLagStatus.objects.all().delete()
    GroupLagStatus.objects.bulk_create(
        GroupLagStatus(cluster="local", group=f"g{i} '\"<%#/>\u00e9", status=status, totals=totals,
                       sampled_at=T0 + timedelta(seconds=i) if sampled else None)
        for i, (status, totals, sampled) in enumerate(windows))
    GroupLagStatus.objects.create(cluster="other", group="g0 '\"<%#/>\u00e9", status="ERR", totals=[1, 2])

    parsed = {group: previous_sample(status, totals or [], at.timestamp() if at else None)
              for group, status, totals, at in
              GroupLagStatus.objects.filter(cluster="local").values_list("group", "status", "totals", "sampled_at")}

    assert _previous_samples("local") == parsed


@pytest.mark.django_db
def test_prune_applies_each_steps_retention(settings):
    settings.LAG_RETENTION_S = {0: 3600, 300: 86400, 3600: 30 * 86400}
    now = T0
    for step, age in ((0, timedelta(minutes=59)), (0, timedelta(minutes=61)), (300, timedelta(hours=23)),
                      (300, timedelta(hours=25)), (3600, timedelta(days=29)), (3600, timedelta(days=31))):
        LagSample.objects.create(cluster="c1", group="g", topic="t", step=step, time=now - age, lag=1, lag_max=1,
                                 committed=0, end=1, partitions=1)
    assert lag_prune(now=now) == 3
    kept = sorted((s.step, now - s.time) for s in LagSample.objects.all())
    assert kept == [(0, timedelta(minutes=59)), (300, timedelta(hours=23)), (3600, timedelta(days=29))]


@pytest.mark.kafka
def test_a_group_id_too_long_to_store_does_not_stop_the_sweep_or_the_pages(local_cluster, topic_factory, produce,
                                                                            commit, client_for, operator):
    from console.errors import ConsoleError
    from offsets.resets import services
    from offsets.models import GROUP_ID_MAX_STORED
    from offsets.resets.planning import ToEarliest, TopicScope

    topic = topic_factory("long-id", partitions=1)
    produce(topic, [(0, None, b"x", None)] * 3)
    long_id = "long-" + "ü" * (GROUP_ID_MAX_STORED + 100)
    short = group_name("beside-long")
    commit(long_id, {(topic, 0): 1})
    commit(short, {(topic, 0): 1})

    result = sweep_at(0)

    assert result.groups >= 1 and LagSample.objects.filter(group=short).exists()
    assert not LagSample.objects.filter(group__startswith="long-üü").exists()
    group_snapshot_refresh("local", wait_s=30)
    page = client_for(operator).get("/clusters/local/groups/?q=long-").content.decode()
    assert "long-üü" in page
    from console.audit.actor import Actor

    with pytest.raises(ConsoleError, match="can be read here but not changed"):
        services.group_offsets_reset(actor=Actor(user=operator, source="cli"), cluster="local", group=long_id,
                                     scope=[TopicScope(topic)], strategy=ToEarliest(), reason="x", confirm=long_id)


@pytest.mark.kafka
def test_without_kafkas_java_clients_a_sweep_asks_group_by_group(kafka_node, db, topic_factory, produce, commit,
                                                                 monkeypatch, settings, tmp_path, caplog):
    """The multi-group OffsetFetch goes through the Java Admin; a host without Kafka's Java clients still gets
    every group sampled, through librdkafka's request per group."""
    missing = str(tmp_path / "no-kafka-libs")
    monkeypatch.setenv("KAFKA_TOOLS_LIBS", missing)  # the cluster's client process, started below, reads it
    settings.KAFKA_TOOLS_LIBS = missing
    # A socket folder of the test's own: in the session's, the host's Java Admin JVM, started by earlier tests with
    # the libraries, would answer, and this host would not be one without Kafka's Java clients.
    sockets = str(tmp_path / "clients")
    monkeypatch.setenv("KAFKA_CLIENT_SOCKET_DIR", sockets)
    settings.KAFKA_CLIENT_SOCKET_DIR = sockets
    Cluster.objects.create(name=f"no-java-{uuid.uuid4().hex[:6]}", bootstrap_servers=kafka_node.bootstrap)
    name = Cluster.objects.latest("id").name
    topic = topic_factory("nojava", partitions=2)
    produce(topic, [(p, None, b"x", None) for p in range(2)] * 5)
    groups = [group_name("nojava") for _ in range(3)]
    for i, group in enumerate(groups):
        commit(group, {(topic, 0): i, (topic, 1): 1})
    try:
        with caplog.at_level("INFO", logger="offsets.lag.observe"):
            result = lag_sample(cluster=name, now=T0)
    finally:
        stop_host_processes()
    assert result.skipped == 0
    lags = dict(LagSample.objects.filter(cluster=name, group__in=groups, topic=topic).values_list("group", "lag"))
    assert lags == {group: (5 - i) + 4 for i, group in enumerate(groups)}
    assert "asking group by group" in caplog.text and "not installed here" in caplog.text
