"""Four-eyes changes on the real broker: a change on a protected target becomes a request and changes nothing;
the requester cannot approve it; another person's approval runs exactly the previewed plan; a plan that moved is
refused as stale; break-glass is audited and reaches the webhook; requests expire."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from changes import services, states
from changes.actions.offsets import RESET, reset_kwargs
from changes.actions.topics import CONFIG, DELETE, PURGE, config_kwargs, purge_kwargs
from changes.guard import ChangeRequestRequired
from changes.models import ChangeRequest
from changes.selectors import change_audit_trail
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, PermissionRefused
from gateway.kafka.errors import TopicNotFound
from gateway.kafka.types import TOPIC, PartitionRef
from offsets.kinds import CONSUMER
from offsets.resets import services as resets
from offsets.resets.planning import ALL_TOPICS, ToEarliest, ToLatest
from topics import services as topic_services

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def _reset_request(actor, group, strategy=None, reason="replay the last day"):
    kwargs = reset_kwargs(group=group, kind=CONSUMER, scope=ALL_TOPICS, strategy=strategy or ToEarliest())
    return services.change_request_create(actor=actor, action=RESET, cluster="local", kwargs=kwargs, reason=reason)


def test_a_reset_on_a_protected_cluster_becomes_a_request_and_changes_nothing(
        protect, group_with_commits, operator, actor_of):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    protect()
    before = _committed(group)

    with pytest.raises(ChangeRequestRequired, match="is protected"):
        resets.group_offsets_reset(actor=actor_of(operator), cluster="local", group=group, scope=ALL_TOPICS,
                                   strategy=ToEarliest(), reason="straight", confirm=group)
    change = _reset_request(actor_of(operator), group)

    assert _committed(group) == before == {PartitionRef(topic, 0): 4, PartitionRef(topic, 1): 6}
    assert change.status == states.PENDING and change.requested_by == operator
    assert change.target == f"group:{group}" and change.approvals_required == 1
    assert [(r["partition"], r["current"], r["target"]) for r in change.plan["partitions"]] == [(0, 4, 0), (1, 6, 0)]
    assert change.expires_at - change.requested_at == timedelta(hours=24)
    refused = AuditEvent.objects.get(action="group.offsets.reset")
    assert refused.outcome == "refused" and "is protected" in refused.error


def test_the_requester_cannot_approve_and_another_operator_runs_exactly_the_plan(
        protect, group_with_commits, operator, second_operator, actor_of):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    protect()
    change = _reset_request(actor_of(operator), group)

    with pytest.raises(PermissionRefused, match="your own"):
        services.change_request_approve(actor=actor_of(operator), request_id=change.pk)
    assert _committed(group) == {PartitionRef(topic, 0): 4, PartitionRef(topic, 1): 6}

    done = services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk, reason="checked")

    planned = {PartitionRef(r["topic"], r["partition"]): r["target"] for r in change.plan["partitions"]}
    assert done.status == states.EXECUTED and _committed(group) == planned
    trail = change_audit_trail(done)
    assert [(e.action, e.outcome, e.actor_name) for e in trail] == [
        ("change.request", "intent", "otto"), ("change.request", "success", "otto"),
        ("change.approve", "refused", "otto"),
        ("change.approve", "intent", "olga"), ("change.approve", "success", "olga"),
        ("group.offsets.reset", "intent", "olga"), ("group.offsets.reset", "success", "olga")]
    reset = trail[-1]
    assert reset.params["change_set"] == str(change.correlation_id)
    assert f"change request #{change.pk} by otto, approved by olga" in reset.reason
    assert reset.after == {topic: {"0": 0, "1": 0}}


def test_a_plan_made_stale_by_a_commit_in_between_is_refused(
        protect, group_with_commits, operator, second_operator, actor_of, commit):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    protect()
    change = _reset_request(actor_of(operator), group)
    commit(group, {(topic, 0): 7})  # the group moved on since the request

    with pytest.raises(Conflict, match="is stale"):
        services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk)

    change.refresh_from_db()
    assert change.status == states.STALE and "ask for it again" in change.error
    assert _committed(group) == {PartitionRef(topic, 0): 7, PartitionRef(topic, 1): 6}
    assert not AuditEvent.objects.filter(action="group.offsets.reset", outcome="intent").exists()
    with pytest.raises(Conflict, match="is stale: only a pending request"):
        services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk)


def test_a_to_latest_plan_whose_log_end_moved_is_stale(
        protect, group_with_commits, operator, second_operator, actor_of, produce):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    protect()
    change = _reset_request(actor_of(operator), group, strategy=ToLatest())
    produce(topic, [(0, None, b"late", None)])

    with pytest.raises(Conflict, match="is stale"):
        services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk)
    assert _committed(group) == {PartitionRef(topic, 0): 4, PartitionRef(topic, 1): 6}


def test_break_glass_runs_without_approval_is_audited_and_alerted(
        protect, group_with_commits, operator, admin, actor_of, webhook):
    group = group_with_commits["group"]
    protect(webhook="changes")
    change = _reset_request(actor_of(operator), group)
    assert [m["event"] for m in webhook.received] == ["requested"]

    with pytest.raises(PermissionRefused):
        services.change_request_break_glass(actor=actor_of(operator), request_id=change.pk, reason="outage")
    done = services.change_request_break_glass(actor=actor_of(admin), request_id=change.pk,
                                               reason="INC-42: the consumer is down, replay now")

    assert done.status == states.EXECUTED and done.break_glass
    assert set(_committed(group).values()) == {0}
    glass = AuditEvent.objects.filter(action="change.break_glass").order_by("seq")
    assert [(e.outcome, e.actor_name) for e in glass] == [("intent", "ada"), ("success", "ada")]
    assert glass.last().reason == "INC-42: the consumer is down, replay now"
    reset = AuditEvent.objects.get(action="group.offsets.reset", outcome="success")
    assert reset.reason.startswith("BREAK-GLASS: INC-42") and reset.actor_name == "ada"
    message = webhook.received[-1]
    assert message["event"] == "break-glass" and "BREAK-GLASS" in message["text"]
    assert message["change_request"]["id"] == change.pk and message["change_request"]["status"] == "executed"


def test_requests_expire_and_can_no_longer_be_approved(
        protect, group_with_commits, operator, second_operator, actor_of, settings):
    settings.CHANGE_REQUEST_TTL_HOURS = 2
    group = group_with_commits["group"]
    protect()
    change = _reset_request(actor_of(operator), group)
    assert change.expires_at - change.requested_at == timedelta(hours=2)
    ChangeRequest.objects.filter(pk=change.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert services.change_requests_expire() == 1
    change.refresh_from_db()
    assert change.status == states.EXPIRED
    with pytest.raises(Conflict, match="is expired"):
        services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk)
    assert AuditEvent.objects.get(action="change.expire").params["change_set"] == str(change.correlation_id)
    assert services.change_requests_expire() == 0


def test_two_approvals_when_the_protection_asks_for_two(
        protect, group_with_commits, operator, second_operator, admin, actor_of):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    protect(approvals=2)
    change = _reset_request(actor_of(operator), group)

    first = services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk)
    assert first.status == states.PENDING and _committed(group)[PartitionRef(topic, 0)] == 4
    with pytest.raises(PermissionRefused, match="already"):
        services.change_request_approve(actor=actor_of(second_operator), request_id=change.pk)
    done = services.change_request_approve(actor=actor_of(admin), request_id=change.pk)
    assert done.status == states.EXECUTED and set(_committed(group).values()) == {0}


def test_a_rejected_request_changes_nothing(protect, group_with_commits, operator, viewer, second_operator,
                                            actor_of):
    group = group_with_commits["group"]
    protect()
    change = _reset_request(actor_of(operator), group)
    with pytest.raises(PermissionRefused):
        services.change_request_reject(actor=actor_of(viewer), request_id=change.pk, reason="no")

    services.change_request_reject(actor=actor_of(second_operator), request_id=change.pk, reason="not today")

    change.refresh_from_db()
    assert change.status == states.REJECTED and change.decided_by_name == "olga"
    assert set(_committed(group).values()) == {4, 6}


def test_topic_patterns_protect_only_the_topics_they_match(protect, topic_factory, produce, admin, make_user,
                                                           actor_of):
    protected = topic_factory("payments.eu")  # the factory adds a suffix: the pattern ends in *
    free = topic_factory("scratch")
    protect(whole_cluster=False, topic_patterns=["payments.eu-*", "re:audit-\\d+"])
    produce(protected, [(0, None, b"x", None)] * 5)

    topic_services.topic_delete(actor=actor_of(admin), cluster="local", topic=free, confirm=free, reason="tidy")
    with pytest.raises(ChangeRequestRequired):
        topic_services.topic_delete(actor=actor_of(admin), cluster="local", topic=protected, confirm=protected)
    purge = services.change_request_create(actor=actor_of(admin), action=PURGE, cluster="local",
                                           kwargs=purge_kwargs(topic=protected, partitions=None, before=3),
                                           reason="drop the bad batch")
    config = services.change_request_create(
        actor=actor_of(admin), action=CONFIG, cluster="local", reason="keep a week",
        kwargs=config_kwargs(topic=protected, set_values={"retention.ms": "604800000"}, delete=[]))
    delete = services.change_request_create(actor=actor_of(admin), action=DELETE, cluster="local",
                                            kwargs={"topic": protected}, reason="gone")

    other_admin = actor_of(make_user("adele", "admin"))
    assert services.change_request_approve(actor=other_admin, request_id=purge.pk).status == "executed"
    assert topic_services.topic_purge_preview(cluster="local", topic=protected)[0].log_start == 3
    assert services.change_request_approve(actor=other_admin, request_id=config.pk).status == "executed"
    configs = cluster_admin("local").describe_configs(TOPIC, [protected])[protected]
    assert configs["retention.ms"].value == "604800000"
    assert services.change_request_approve(actor=other_admin, request_id=delete.pk).status == "executed"
    with pytest.raises(TopicNotFound):
        cluster_admin("local").describe_topics([protected])


def test_acl_changes_on_a_protected_cluster_are_asked_for(protect, admin, make_user, actor_of, topic_factory):
    from access import selectors as access_selectors
    from access import services as access_services
    from access.bindings import bindings_for
    from changes.actions.access import CREATE, DELETE, acl_kwargs
    from gateway.kafka.types import AclQuery

    topic = topic_factory("acl-fe")
    principal = f"User:fe-{topic[-6:]}"
    entries = bindings_for(principal=principal, resource_type="TOPIC", resource_name=topic, pattern_type="LITERAL",
                           operations=["READ", "DESCRIBE"], permission="ALLOW", host="*")
    protect(whole_cluster=False, topic_patterns=["nothing-matches-*"])  # ACLs follow any protection of the cluster
    with pytest.raises(ChangeRequestRequired):
        access_services.acls_create(actor=actor_of(admin), cluster="local", entries=entries, reason="grant")

    asked = services.change_request_create(actor=actor_of(admin), action=CREATE, cluster="local",
                                           kwargs=acl_kwargs(entries), reason="the reader needs it")
    assert access_selectors.acls_list("local", AclQuery(principal=principal)) == []
    other = actor_of(make_user("adele", "admin"))
    assert services.change_request_approve(actor=other, request_id=asked.pk).status == "executed"
    assert sorted(access_selectors.acls_list("local", AclQuery(principal=principal))) == sorted(entries)

    removal = services.change_request_create(actor=actor_of(admin), action=DELETE, cluster="local",
                                             kwargs=acl_kwargs(entries), reason="revoke")
    assert services.change_request_approve(actor=other, request_id=removal.pk).status == "executed"
    assert access_selectors.acls_list("local", AclQuery(principal=principal)) == []
