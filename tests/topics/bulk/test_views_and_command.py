"""The bulk pages and shell commands: the filter picks from the shared tables, the preview lists every change, the
typed phrase confirms, roles are checked in the views and commands."""

from __future__ import annotations

import html
import json
import re
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from tests.fixtures.clusters import forget_shared_table
from topics import table

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def three_topics(local_cluster):
    prefix = f"bv{uuid.uuid4().hex[:6]}"
    names = [f"{prefix}-{i}" for i in range(3)]
    admin = cluster_admin("local")
    for name in names:
        admin.create_topic(name, partitions=1, replication_factor=1, configs={})
    return prefix, names


def test_bulk_topics_page_previews_confirms_and_reports(three_topics, admin, operator, client_for):
    prefix, names = three_topics
    forget_shared_table(table.TABLE)
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh("local", wait_s=10)
    client = client_for(admin)
    page = client.get(reverse("bulk-topics:select", args=["local"]), {"q": prefix})
    assert page.status_code == 200 and all(f'value="{n}"' in page.content.decode() for n in names)

    preview = client.post(reverse("bulk-topics:preview", args=["local"]),
                          {"action": "partitions", "new_total": 2, "topic": names}, HTTP_HX_REQUEST="true")
    text = preview.content.decode()
    assert preview.status_code == 200 and "partitions 1 → 2" in text and "repartition 3 topics" in text

    wrong = client.post(reverse("bulk-topics:execute", args=["local"]), {
        "action": "partitions", "new_total": 2, "topic": names, "confirm": "yes", "reason": "scale"},
        HTTP_HX_REQUEST="true")
    assert wrong.status_code == 400 and "repartition 3 topics" in wrong.content.decode()
    done = client.post(reverse("bulk-topics:execute", args=["local"]), {
        "action": "partitions", "new_total": 2, "topic": names, "confirm": "repartition 3 topics",
        "reason": "scale"}, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and "Done: 3 topics" in done.content.decode()
    assert {t.partition_count for t in cluster_admin("local").describe_topics(names).values()} == {2}
    # The topic list shows the new counts at once, without a rebuild.
    listed = client.get(reverse("bulk-topics:select", args=["local"]), {"q": prefix}).content.decode()
    assert listed.count("2 partitions, RF 1") == 3

    operator_client = client_for(operator)
    assert operator_client.post(reverse("bulk-topics:preview", args=["local"]),
                                {"action": "delete", "topic": names}).status_code == 403
    forget_shared_table(table.TABLE)


def test_bulk_topics_command_dry_run_then_yes(three_topics, admin, viewer, capsys):
    prefix, names = three_topics
    call_command("bulk_topics", "delete", "--topic", names[0], "--topic", names[1], "--format", "json")
    preview = json.loads(capsys.readouterr().out)
    assert preview["phrase"] == "delete 2 topics" and [c["topic"] for c in preview["changes"]] == names[:2]
    assert not AuditEvent.objects.exists()
    with pytest.raises(CommandError, match="admin role"):
        call_command("bulk_topics", "delete", "--topic", names[0], "--yes", "--actor", viewer.username,
                     "--reason", "r")
    call_command("bulk_topics", "delete", "--topic", names[0], "--topic", names[1], "--yes", "--actor", "ada",
                 "--reason", "cleanup")
    assert "Done: 2 topic(s); failed: 0" in capsys.readouterr().out
    from tests.topics.bulk.test_services import _still_listed

    assert not _still_listed(names[:2])
    assert names[2] in {t.name for t in cluster_admin("local").list_topics()}
    assert AuditEvent.objects.filter(action="topic.delete", outcome="success").count() == 2


def test_bulk_groups_roles_and_command(admin, operator, client_for, commit, topic_factory, capsys):
    topic = topic_factory("bgv")
    groups = [f"bgv-{uuid.uuid4().hex[:6]}-{i}" for i in range(2)]
    for group in groups:
        commit(group, {(topic, 0): 0})
    client = client_for(operator)
    preview = client.post(reverse("bulk-groups:preview", args=["local"]), {
        "action": "reset", "topics": topic, "strategy": "to-latest", "group": groups}, HTTP_HX_REQUEST="true")
    assert preview.status_code == 200 and "reset 2 groups" in preview.content.decode()
    assert client.post(reverse("bulk-groups:preview", args=["local"]), {
        "action": "delete", "group": groups}).status_code == 403
    fingerprints = re.search(r'name="fingerprints" value="([^"]*)"', preview.content.decode()).group(1)
    done = client.post(reverse("bulk-groups:execute", args=["local"]), {
        "action": "reset", "topics": topic, "strategy": "to-latest", "group": groups, "confirm": "reset 2 groups",
        "reason": "skip the backlog", "fingerprints": html.unescape(fingerprints)}, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and "Done: 2 groups" in done.content.decode()
    assert AuditEvent.objects.filter(action="group.offsets.reset", outcome="success").count() == 2

    call_command("bulk_groups", "delete", "--group", groups[0], "--group", groups[1], "--yes", "--actor", "ada",
                 "--reason", "stale")
    assert "Done: 2 group(s); failed: 0" in capsys.readouterr().out
    assert AuditEvent.objects.filter(action="group.bulk.delete", outcome="success").exists()
    with pytest.raises(CommandError, match="No group of cluster 'local' matches --search 'no-such-"):
        call_command("bulk_groups", "delete", "--search", f"no-such-{uuid.uuid4().hex}")


def test_bulk_group_page_renders_for_operators(operator, viewer, client_for, local_cluster):
    from offsets import group_table

    forget_shared_table(group_table.TABLE)
    page = client_for(operator).get(reverse("bulk-groups:select", args=["local"]), {"q": "x"})
    assert page.status_code == 200 and "Bulk group actions" in page.content.decode()
    assert client_for(viewer).get(reverse("bulk-groups:select", args=["local"])).status_code == 403
    forget_shared_table(group_table.TABLE)
