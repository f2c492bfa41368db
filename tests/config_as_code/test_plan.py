"""Planning a file against a cluster's state (config_as_code/plan.py): pure, both sides given."""

from __future__ import annotations

from config_as_code.document import KIND, ClusterConfig, MaskSpec, QuotaSpec, ScramSpec, TopicSpec, parse_document
from config_as_code.plan import (
    MSG_FEWER_PARTITIONS, MSG_MASKED_NEW, MSG_NO_PASSWORD, MSG_OTHER_CLUSTER, MSG_REPLICATION, MSG_RESERVED_TOPIC,
    config_plan,
)

HEAD = f"kind: {KIND}\nversion: 1\n"
STATE = ClusterConfig(
    cluster="local",
    topics={"orders": TopicSpec(3, 1, {"retention.ms": "1000"}), "old": TopicSpec(1, 1, {})},
    acls=frozenset({("User:a", "TOPIC", "orders", "LITERAL", "READ", "ALLOW", "*")}),
    quotas={"user=a": QuotaSpec("a", None, {"producer_byte_rate": 10.0})},
    scram_users={"a": ScramSpec(("SCRAM-SHA-512",))},
    topic_policies={},
    masking_rules=(MaskSpec("x.*", "key", "", "redact", "", 4, ("viewer",), id=7),),
    connectors={"local": {"s": {"connector.class": "C", "db.password": "********"}}},
)


def plan(text: str, *, deletes: bool = False, state: ClusterConfig = STATE):
    desired = parse_document(HEAD + text)
    return config_plan(desired, state.only(desired.sections), text=HEAD + text, cluster="local",
                       allow_deletes=deletes, reserved_topic="_kafka_console_audit")


SAME = """
topics:
  orders: {partitions: 3, replication_factor: 1, configs: {retention.ms: "1000"}}
  old: {partitions: 1}
acls: [{principal: "User:a", resource_type: TOPIC, resource_name: orders, operation: READ}]
quotas: [{user: a, values: {producer_byte_rate: 10}}]
scram_users: {a: {mechanisms: [SCRAM-SHA-512]}}
masking_rules: [{topic_pattern: "x.*", selector: key, action: redact, roles: [viewer]}]
connectors: {local: {s: {connector.class: C, db.password: "********"}}}
"""


def test_the_state_written_as_a_file_plans_no_change():
    found = plan(SAME, deletes=True)
    assert found.changes == () and found.problems == ()
    assert found.counts() == {"create": 0, "change": 0, "delete": 0, "skipped": 0}


def test_an_edited_file_plans_exactly_its_edits():
    edited = SAME.replace('retention.ms: "1000"', 'retention.ms: "2000", cleanup.policy: compact').replace(
        "old: {partitions: 1}", "old: {partitions: 2}\n  new: {partitions: 4}")
    found = plan(edited)
    assert [(c.section, c.action, c.key) for c in found.changes] == [
        ("topics", "create", "new"), ("topics", "change", "old"), ("topics", "change", "orders")]
    orders = found.changes[2]
    assert orders.before == {"configs": {"cleanup.policy": None, "retention.ms": "1000"}}
    assert orders.after == {"configs": {"cleanup.policy": "compact", "retention.ms": "2000"}}
    assert found.changes[1].after == {"partitions": 2} and found.changes[0].after["partitions"] == 4


def test_deletes_are_shown_always_and_applied_only_when_asked():
    lean = "topics:\n  orders: {partitions: 3, replication_factor: 1, configs: {retention.ms: '1000'}}\nacls: []\n"
    kept = plan(lean)
    assert [(c.key, c.skipped) for c in kept.changes] == [("old", True), (
        "User:a ALLOW READ on TOPIC:orders (LITERAL, host *)", True)]
    assert kept.applicable == () and kept.counts()["skipped"] == 2
    applied = plan(lean, deletes=True)
    assert [c.action for c in applied.applicable] == ["delete", "delete"]
    assert kept.fingerprint != applied.fingerprint  # deletes on is another plan


def test_what_apply_cannot_do_is_a_problem():
    found = plan("""
topics:
  orders: {partitions: 2, replication_factor: 3}
  _kafka_console_audit: {partitions: 1}
scram_users: {a: {mechanisms: [SCRAM-SHA-512, SCRAM-SHA-256]}}
connectors: {local: {t: {connector.class: C, db.password: "********"}}, elsewhere: {u: {connector.class: C}}}
""")
    texts = " | ".join(found.problems)
    assert MSG_FEWER_PARTITIONS.format(now=3, wanted=2) in texts
    assert MSG_REPLICATION.format(now=1, wanted=3) not in texts  # one problem per topic: the first
    assert MSG_RESERVED_TOPIC in texts and MSG_NO_PASSWORD in texts
    assert MSG_MASKED_NEW.format(keys="db.password") in texts
    assert "No Connect cluster 'elsewhere'" in texts


def test_a_file_for_another_cluster_is_a_problem():
    assert plan("cluster: prod\ntopics: {}\n").problems[0] == MSG_OTHER_CLUSTER.format(file="prod", cluster="local")


def test_the_fingerprint_moves_with_the_cluster_and_the_file_not_with_anything_else():
    first = plan(SAME)
    assert plan(SAME).fingerprint == first.fingerprint
    moved = ClusterConfig(**{**STATE.__dict__, "topics": {**STATE.topics, "orders": TopicSpec(4, 1, {})}})
    assert plan(SAME, state=moved).fingerprint != first.fingerprint
    assert plan(SAME + "\n# a comment\n").fingerprint != first.fingerprint
    # a section the file does not name is not read, so it cannot move the fingerprint
    other = ClusterConfig(**{**STATE.__dict__, "topic_policies": {"p": {"name_pattern": "x"}}})
    assert plan(SAME, state=other).fingerprint == first.fingerprint


def test_a_masking_rule_changed_is_one_deleted_and_one_created():
    found = plan('masking_rules: [{topic_pattern: "x.*", selector: key, action: hash, roles: [viewer]}]',
                 deletes=True)
    assert [(c.action, c.before and c.before["id"]) for c in found.changes] == [("create", None), ("delete", 7)]


def test_a_connector_keeps_a_masked_secret_and_changes_only_what_differs():
    found = plan('connectors: {local: {s: {connector.class: C, db.password: "********", tasks.max: "2"}}}')
    (change,) = found.changes
    assert (change.action, change.key, change.before, change.after) == ("change", "local/s", {"tasks.max": None},
                                                                        {"tasks.max": "2"})
