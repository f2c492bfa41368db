"""Topic policies against the real broker: a topic breaking a policy is refused with the rule's message (create,
config change, partition change; page, shell and services), an admin's override is audited, and the report lists
the topics that break today's policies."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import TopicNotFound
from gateway.kafka.types import TOPIC
from tests.fixtures.clusters import forget_shared_table
from topics import services, table
from topics.policies import selectors
from topics.policies.rules import parse_config_rule
from topics.policies.services import OVERRIDE_ACTION, PolicyRefused, topic_policy_save

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def actor(admin, local_cluster):
    return Actor(user=admin, source="web", remote_addr="127.0.0.1")


@pytest.fixture
def prefix():
    return f"pol{uuid.uuid4().hex[:6]}"


@pytest.fixture
def policy(actor, prefix):
    return topic_policy_save(actor=actor, cluster="local", name="prod rules", reason="platform standards", values={
        "applies_to": f"^{prefix}\\.", "name_pattern": f"{prefix}\\.[a-z]+", "name_message": "lower-case names only",
        "min_partitions": 2, "max_partitions": 4, "partitions_message": "2 to 4 partitions, for now",
        "config_rules": [parse_config_rule("retention.ms <= 3600000: an hour at most on this cluster"),
                         parse_config_rule("cleanup.policy in delete: no compaction here")]})


def _exists(name: str) -> bool:
    try:
        cluster_admin("local").describe_topics([name])
        return True
    except TopicNotFound:
        return False


def test_create_breaking_a_policy_is_refused_with_the_rules_message_and_an_admin_may_override(actor, policy, prefix):
    name = f"{prefix}.orders"
    with pytest.raises(PolicyRefused) as refused:
        services.topic_create(actor=actor, cluster="local", name=name, partitions=1, replication_factor=1,
                              configs={"retention.ms": "86400000"}, reason="try")
    assert "Policy 'prod rules': 2 to 4 partitions, for now (partitions is 1)" in refused.value.message
    assert "an hour at most on this cluster (retention.ms is 86400000)" in refused.value.message
    assert not _exists(name)
    refusal = AuditEvent.objects.filter(action="topic.create", outcome="refused").last()
    assert refusal.target == f"topic:{name}" and len(refusal.params["policy_violations"]) == 2

    services.topic_create(actor=actor, cluster="local", name=name, partitions=1, replication_factor=1,
                          configs={"retention.ms": "86400000"}, reason="a one-off for the migration",
                          policy_override=True)
    assert _exists(name)
    override = AuditEvent.objects.get(action=OVERRIDE_ACTION)
    assert override.reason == "a one-off for the migration" and override.params["action"] == "topic.create"
    assert AuditEvent.objects.filter(action="topic.create", outcome="success").last().params["policy_overridden"]


def test_config_and_partition_changes_are_checked_against_the_keys_they_touch(actor, policy, prefix, topic_factory):
    name = f"{prefix}.pay"
    services.topic_create(actor=actor, cluster="local", name=name, partitions=2, replication_factor=1,
                          configs={"retention.ms": "600000"}, reason="new")
    with pytest.raises(PolicyRefused, match="an hour at most on this cluster"):
        services.topic_configs_alter(actor=actor, cluster="local", topic=name, set_values={"retention.ms": "7200000"},
                                     delete=[], reason="longer")
    with pytest.raises(PolicyRefused, match="no compaction here"):
        services.topic_configs_alter(actor=actor, cluster="local", topic=name,
                                     set_values={"cleanup.policy": "compact"}, delete=[], reason="compact")
    # Removing the override falls back to the broker's 7 days: that breaks the rule too.
    with pytest.raises(PolicyRefused, match=r"retention.ms is 604800000"):
        services.topic_configs_alter(actor=actor, cluster="local", topic=name, set_values={}, delete=["retention.ms"],
                                     reason="default")
    # A key no rule names changes freely.
    services.topic_configs_alter(actor=actor, cluster="local", topic=name, set_values={"segment.ms": "600000"},
                                 delete=[], reason="roll")
    with pytest.raises(PolicyRefused, match="2 to 4 partitions, for now"):
        services.topic_partitions_add(actor=actor, cluster="local", topic=name, new_total=5, reason="scale")
    services.topic_partitions_add(actor=actor, cluster="local", topic=name, new_total=3, reason="scale")
    configs = cluster_admin("local").describe_configs(TOPIC, [name])[name]
    assert configs["retention.ms"].value == "600000" and configs["segment.ms"].value == "600000"
    assert cluster_admin("local").describe_topics([name])[name].partition_count == 3


def test_the_report_lists_the_topics_that_break_todays_policies(actor, policy, prefix, topic_factory, admin,
                                                                 viewer, client_for):
    admin_client = cluster_admin("local")
    broken = f"{prefix}.legacy"
    fine = f"{prefix}.fine"
    admin_client.create_topic(broken, partitions=1, replication_factor=1, configs={"cleanup.policy": "compact"})
    admin_client.create_topic(fine, partitions=2, replication_factor=1, configs={"retention.ms": "60000"})
    forget_shared_table(table.TABLE)
    call_command("topic_policies", "report", "--format", "json")  # builds the shared table, as the shell does
    from topics.selectors import topic_table

    report = {row.topic: row for row in selectors.policy_report("local", topic_table("local"))}
    assert fine not in report
    assert [v.message for v in report[broken].violations] == [
        "2 to 4 partitions, for now", "an hour at most on this cluster", "no compaction here"]

    detail = client_for(viewer).get(reverse("topics:detail", args=["local", broken])).content.decode()
    assert "policy-violations" in detail and "no compaction here" in detail
    page = client_for(viewer).get(reverse("topic-policies:report", args=["local"]))
    assert page.status_code == 200
    text = page.content.decode()
    assert broken in text and "no compaction here" in text and f">{fine}<" not in text
    forget_shared_table(table.TABLE)


def test_shell_and_page_refuse_alike(admin, policy, prefix, client_for, capsys, viewer):
    name = f"{prefix}.shell"
    with pytest.raises(CommandError, match="2 to 4 partitions, for now"):
        call_command("topics", "create", "--topic", name, "--partitions", "9", "--config", "retention.ms=60000",
                     "--actor", "ada", "--reason", "try")
    response = client_for(admin).post(reverse("topics:create", args=["local"]), {
        "name": name, "partitions": 1, "replication_factor": 1, "configs": "retention.ms=60000", "reason": "try"},
        HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "2 to 4 partitions, for now" in response.content.decode()
    assert not _exists(name)
    assert "prod rules" in client_for(admin).get(reverse("topics:create", args=["local"])).content.decode()
    call_command("topics", "create", "--topic", name, "--partitions", "9", "--config", "retention.ms=60000",
                 "--actor", "ada", "--reason", "load test", "--override-policy")
    assert _exists(name)

    call_command("topic_policies", "create", "--name", "small", "--applies-to", f"^{prefix}\\.small",
                 "--max-partitions", "1", "--config-rule", "min.insync.replicas >= 1", "--actor", "ada",
                 "--reason", "r")
    capsys.readouterr()
    call_command("topic_policies", "list", "--format", "json")
    assert {p["name"] for p in json.loads(capsys.readouterr().out)} == {"prod rules", "small"}
    with pytest.raises(CommandError, match="admin role"):
        call_command("topic_policies", "delete", "--name", "small", "--actor", viewer.username, "--reason", "r")
    with pytest.raises(CommandError, match="does not compile"):
        call_command("topic_policies", "update", "--name", "small", "--name-pattern", "(a)\\1", "--actor", "ada",
                     "--reason", "r")
    call_command("topic_policies", "delete", "--name", "small", "--actor", "ada", "--reason", "r")
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="topic.policy.")].count(
        "topic.policy.create") == 2

    # Viewers see the policies, not the form; they cannot post one.
    assert client_for(viewer).post(reverse("topic-policies:create", args=["local"]), {"name": "x"}).status_code == 403


def test_policy_pages_render_for_admins_and_viewers(policy, admin, viewer, client_for, prefix):
    admin_page = client_for(admin).get(reverse("topic-policies:list", args=["local"])).content.decode()
    assert "an hour at most on this cluster" in admin_page and "Save policy" in admin_page
    edit = client_for(admin).get(reverse("topic-policies:edit", args=["local", "prod rules"])).content.decode()
    assert "retention.ms &lt;= 3600000: an hour at most on this cluster" in edit
    saved = client_for(admin).post(reverse("topic-policies:edit", args=["local", "prod rules"]), {
        "name": "prod rules", "applies_to": f"^{prefix}\\.", "max_partitions": 8, "reason": "looser"})
    assert saved.status_code == 302
    assert AuditEvent.objects.get(action="topic.policy.update").before["max_partitions"] == 4
    viewer_page = client_for(viewer).get(reverse("topic-policies:list", args=["local"])).content.decode()
    assert "prod rules" in viewer_page and "Save policy" not in viewer_page
    assert client_for(viewer).get(reverse("topic-policies:edit", args=["local", "prod rules"])).status_code == 403
