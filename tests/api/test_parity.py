"""Every endpoint's answer equals what the shell's --format json prints for the same state, on the session broker:
clusters, brokers, topics (paged by cursor) and their configs, records read and searched, groups of every kind
(paged) with their offsets, members, state, lag history and rebalance history, a reset's preview, transactions,
ACLs, SCRAM users, quotas, alerts, masking rules and topic policies; and the writes (topic, configs, partitions,
records, ACLs) answer what the shell does and are audited as the token's."""

from __future__ import annotations

import io
import time
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.accounts.roles import Role
from console.audit.models import AuditEvent
from tests.api.conftest import shell_json
from topics.selectors import topic_snapshot_refresh

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

TIMING = ("seconds", "records_per_s")


def without_timing(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in TIMING}


def test_clusters_and_brokers(api_as, viewer, local_cluster):
    api = api_as(viewer)
    assert api.get("/clusters").json() == shell_json("clusters", "list")
    assert api.get("/clusters/local/brokers").json() == shell_json("replication", "brokers", "--cluster", "local")


def test_topics_listed_by_cursor_and_described(api_as, viewer, local_cluster, topic_factory, produce, redis_node):
    prefix = f"api-{uuid.uuid4().hex[:6]}"
    topics = [topic_factory(prefix, partitions=p) for p in (1, 2, 3)]
    produce(topics[1], [(1, b"k", b"v", None)] * 3)
    topic_snapshot_refresh("local", wait_s=30)  # the lists read the shared table, which beat rebuilds
    api = api_as(viewer)
    listed = api.pages("/clusters/local/topics", {"search": prefix}, limit=2)
    assert listed == shell_json("topics", "list", "--search", prefix)
    assert [t["name"] for t in listed] == sorted(topics)
    first = api.get("/clusters/local/topics", {"search": prefix, "limit": 2}).json()
    assert len(first["items"]) == 2 and first["total"] == 3 and first["next_cursor"]
    # Sizes on disk come from a snapshot built in the background after the first read: wait for it, so that both
    # reads below see the same state.
    deadline = time.monotonic() + 30
    while any(p["sizes"] is None for p in shell_json("topics", "describe", "--topic", topics[1])["partitions"]):
        assert time.monotonic() < deadline, "sizes on disk never became known"
        time.sleep(0.5)
    described = api.get(f"/clusters/local/topics/{topics[1]}").json()
    assert described == shell_json("topics", "describe", "--topic", topics[1])
    assert [p["messages"] for p in described["partitions"]] == [0, 3]


def test_records_read_and_searched(api_as, viewer, local_cluster, topic_factory, produce):
    topic = topic_factory("api-rec", partitions=2)
    produce(topic, [(0, b"a", b'{"n": 1}', None), (1, b"b", b"plain refund", [("h", b"x")]), (0, b"c", b"refund", None)])
    api = api_as(viewer)
    read = api.get(f"/clusters/local/topics/{topic}/records", {"limit": 10}).json()
    shell = shell_json("messages", "read", "--topic", topic, "--limit", "10")
    assert read["records"] == shell[:-1] and len(read["records"]) == 3
    assert without_timing(read["summary"]) == without_timing(shell[-1]["summary"])
    found = api.post(f"/clusters/local/topics/{topic}/records/search", {"value": "refund", "limit": 10}).json()
    shell = shell_json("messages", "search", "--topic", topic, "--value", "refund", "--limit", "10")
    assert found["records"] == shell[:-1] and {r["key"] for r in found["records"]} == {"b", "c"}
    assert without_timing(found["summary"]) == without_timing(shell[-1]["summary"])
    from_one = api.get(f"/clusters/local/topics/{topic}/records", {"partitions": "1", "from": "0"}).json()
    assert [r["key"] for r in from_one["records"]] == ["b"]


def test_groups_of_every_kind_paged_and_described(api_as, viewer, local_cluster, topic_factory, produce, commit):
    topic = topic_factory("api-grp", partitions=2)
    produce(topic, [(0, None, b"x", None)] * 5 + [(1, None, b"x", None)] * 3)
    groups = [f"api-g{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
    for i, group in enumerate(groups):
        commit(group, {(topic, 0): i, (topic, 1): 1})
    api = api_as(viewer)
    assert api.pages("/clusters/local/groups", {"all_types": True}, limit=7) == shell_json(
        "groups", "list", "--all-types")
    assert api.pages("/clusters/local/groups", limit=50) == shell_json("groups", "list")
    group = groups[1]
    for view, flag in (("offsets", ()), ("members", ("--members",)), ("state", ("--state",))):
        answer = api.get(f"/clusters/local/groups/{group}", {"view": view}).json()
        assert answer == shell_json("groups", "describe", group, *flag), view
    rows = api.get(f"/clusters/local/groups/{group}").json()
    assert [(r["partition"], r["lag"]) for r in rows] == [(0, 4), (1, 2)]
    assert api.get(f"/clusters/local/groups/{group}/lag").json() == shell_json("lag_history", group)
    assert api.get(f"/clusters/local/groups/{group}/history").json() == shell_json("group_history", group)
    missing = api.get("/clusters/local/groups/no-such-group-here")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/problem+json"


def test_a_group_whose_name_holds_a_slash(api_as, viewer, local_cluster, topic_factory, commit):
    topic = topic_factory("api-slash")
    group = f"team/eu west~{uuid.uuid4().hex[:4]}"
    commit(group, {(topic, 0): 0})
    from console.urlnames import escape_name

    answer = api_as(viewer).get(f"/clusters/local/groups/{escape_name(group)}")
    assert answer.status_code == 200 and answer.json()[0]["group"] == group


def test_a_reset_preview_is_the_dry_run(api_as, viewer, local_cluster, topic_factory, produce, commit):
    topic = topic_factory("api-prev", partitions=2)
    produce(topic, [(0, None, b"x", None)] * 6)
    group = f"api-prev-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 5})
    api = api_as(viewer)
    body = {"scope": {"topics": [topic]}, "strategy": {"name": "shift-by", "value": "-3"}}
    # Kafka's own refusal (no committed offset to shift on partition 1), word for word as the shell says it
    refused = api.post(f"/clusters/local/groups/{group}/reset/preview", body)
    with pytest.raises(CommandError) as shell_refused:
        shell_json("reset_offsets", "--group", group, "--topic", topic, "--shift-by", "-3")
    assert refused.status_code == 400 and refused.json()["detail"] == str(shell_refused.value)
    body["scope"] = {"topics": [f"{topic}:0"]}
    preview = api.post(f"/clusters/local/groups/{group}/reset/preview", body).json()
    assert preview == shell_json("reset_offsets", "--group", group, "--topic", f"{topic}:0", "--shift-by", "-3")
    assert [(p["partition"], p["current"], p["target"], p["records_to_reread"]) for p in preview["partitions"]] == [
        (0, 5, 2, 3)]
    assert preview["allowed"] and preview["refusal"] is None and len(preview["fingerprint"]) == 16


def test_transactions_acls_users_quotas_alerts_masking_and_policies(api_as, admin, local_cluster):
    api = api_as(admin, role=Role.ADMIN)
    settle = {"PrepareAbort": "CompleteAbort", "PrepareCommit": "CompleteCommit"}

    def settled(rows):
        return sorted(({**r, "state": settle.get(r["state"], r["state"])} for r in rows),
                      key=lambda r: r["transactional_id"])

    assert settled(api.get("/clusters/local/transactions").json()) == settled(shell_json("transactions", "list"))
    principal = f"User:api-{uuid.uuid4().hex[:6]}"
    call_command("acls", "add", "--principal", principal, "--resource-type", "TOPIC", "--resource-name", "orders",
                 "--operation", "READ", "--confirm", "--actor", "ada", "--reason", "test", stdout=io.StringIO())
    assert api.get("/clusters/local/acls", {"principal": principal}).json() == shell_json(
        "acls", "list", "--principal", principal)
    assert api.get("/clusters/local/acls").json() == shell_json("acls", "list")
    assert api.get("/clusters/local/users").json() == shell_json("users", "list")
    assert api.get("/clusters/local/quotas").json() == shell_json("users", "quotas")
    assert api.get("/alerts").json() == shell_json("alerts", "list")
    assert api.get("/clusters/local/masking-rules").json() == shell_json("masking", "list")
    assert api.get("/clusters/local/topic-policies").json() == shell_json("topic_policies", "list")


def test_writes_answer_as_the_shell_and_are_audited_as_the_token(api_as, admin, local_cluster):
    api = api_as(admin, role=Role.ADMIN, name="ci")
    name = f"api-new-{uuid.uuid4().hex[:6]}"
    made = api.post("/clusters/local/topics", {"name": name, "partitions": 1, "configs": {"retention.ms": "60000"},
                                               "reason": "from CI"})
    assert made.status_code == 201 and made.json() == {"topic": name, "created": True}
    changed = api.patch(f"/clusters/local/topics/{name}/configs", {"set": {"retention.ms": "120000"},
                                                                  "reason": "longer"})
    assert changed.json()["retention.ms"]["value"] == "120000"
    assert api.post(f"/clusters/local/topics/{name}/partitions", {"partitions": 2, "reason": "x"}).json() == {
        "topic": name, "partitions": 2}
    written = api.post(f"/clusters/local/topics/{name}/records", {"key": "k", "value": "v", "partition": 1,
                                                                   "reason": "a test record"})
    assert written.status_code == 201 and (written.json()["partition"], written.json()["offset"]) == (1, 0)
    read = api.get(f"/clusters/local/topics/{name}/records").json()["records"]
    assert [(r["partition"], r["key"], r["value"]) for r in read] == [(1, "k", "v")]
    acl = {"principal": "User:ci-reader", "resource_type": "TOPIC", "resource_name": name, "operations": ["READ"],
           "reason": "CI reads"}
    assert api.post("/clusters/local/acls", acl).json() == shell_json("acls", "list", "--resource-type", "TOPIC",
                                                                      "--resource-name", name,
                                                                      "--pattern-type", "LITERAL")
    refused = api.delete(f"/clusters/local/topics/{name}", {"confirm": "not-it", "reason": "x"})
    assert refused.status_code == 400 and refused.json()["type"] == "about:blank"
    assert api.delete(f"/clusters/local/topics/{name}", {"confirm": name, "reason": "done"}).json()["deleted"]
    rows = AuditEvent.objects.filter(cluster="local", outcome="success", source="api")
    assert {r.action for r in rows} >= {"topic.create", "topic.config.alter", "topic.partitions.add",
                                        "record.produce", "acl.create", "topic.delete"}
    assert {(r.source, r.actor_id, r.params["token"]["name"]) for r in rows} == {("api", admin.pk, "ci")}
    assert all(r.actor_name.startswith("ada (token #") for r in rows)
