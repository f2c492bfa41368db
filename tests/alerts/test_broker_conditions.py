"""Broker-health rule kinds (alerts/broker_conditions.py): pure, no servers."""

from __future__ import annotations

from types import SimpleNamespace

from alerts.broker_conditions import BrokerFacts, broker_firing


def _rule(kind: str, threshold: int | None = None):
    return SimpleNamespace(kind=kind, threshold=threshold)


def _facts(*brokers):
    return tuple(BrokerFacts("c", i, values, answered) for i, values, answered in brokers)


def test_under_replicated_counts_what_the_answering_brokers_report_and_names_the_silent_one():
    facts = _facts((1, {"under_replicated": 2}, True), (2, {"under_replicated": 1}, True), (3, {}, False))
    assert broker_firing(_rule("under_replicated"), facts, ["c"]) == {
        ("c", ""): "3 partitions are under-replicated in cluster c (broker 3 gave no figures)"}
    assert broker_firing(_rule("under_replicated", 3), facts, ["c"]) == {}
    assert broker_firing(_rule("under_replicated"), _facts((1, {"under_replicated": 0}, True)), ["c"]) == {}


def test_nothing_is_concluded_from_a_cluster_whose_brokers_all_went_quiet():
    assert broker_firing(_rule("under_replicated"), _facts((1, {}, False)), ["c"]) == {}
    assert broker_firing(_rule("no_controller"), _facts((1, {}, False)), ["c"]) == {}


def test_no_controller_only_when_every_broker_answered():
    quiet = _facts((1, {"active_controllers": 0}, True), (2, {"active_controllers": 0}, True))
    assert broker_firing(_rule("no_controller"), quiet, ["c"]) == {
        ("c", ""): "no broker of cluster c is the active controller"}
    partial = _facts((1, {"active_controllers": 0}, True), (2, {}, False))
    assert broker_firing(_rule("no_controller"), partial, ["c"]) == {}


def test_offline_is_the_controllers_count():
    facts = _facts((1, {"offline_partitions": 0}, True), (2, {"offline_partitions": 4}, True))
    assert broker_firing(_rule("offline"), facts, ["c"]) == {("c", ""): "4 partitions of cluster c are offline (no leader)"}


def test_idle_and_latency_are_per_broker():
    facts = _facts((1, {"request_idle_pct": 12.5, "network_idle_pct": 80.0, "produce_p99_ms": 900.0}, True),
                   (2, {"request_idle_pct": 95.0, "network_idle_pct": 95.0, "produce_p99_ms": 3.0}, True))
    assert broker_firing(_rule("idle", 20), facts, ["c"]) == {
        ("c", "broker 1"): "broker 1 of cluster c: request handlers idle 12.5 % (rule: below 20 %)"}
    assert broker_firing(_rule("p99_latency", 500), facts, ["c"]) == {
        ("c", "broker 1"): "broker 1 of cluster c: Produce p99 900 ms (rule: above 500 ms)"}
    assert broker_firing(_rule("idle", 20), facts, ["other"]) == {}


def test_retention_fires_per_partition_of_the_matching_topics_with_its_fullest_replica():
    shares = {1: {"orders": {"0": 95, "1": 40}, "audit": {"0": 99}}, 2: {"orders": {"0": 97}}, 3: {"orders": {"2": 99}}}
    facts = tuple(BrokerFacts("c", b, {}, b != 3, s) for b, s in shares.items())
    rule = SimpleNamespace(kind="retention", threshold=None, group_pattern="ord*")
    assert broker_firing(rule, facts, ["c"]) == {  # 90 % by default; broker 3 gave no figures lately
        ("c", "orders-0"): "partition orders-0 of cluster c is at 97 % of its retention.bytes on broker 2 "
                           "(rule: 90 % or more)"}
    everything = SimpleNamespace(kind="retention", threshold=40, group_pattern="*")
    assert set(broker_firing(everything, facts, ["c"])) == {("c", "orders-0"), ("c", "orders-1"), ("c", "audit-0")}
    assert broker_firing(SimpleNamespace(kind="retention", threshold=100, group_pattern="*"), facts, ["c"]) == {}
