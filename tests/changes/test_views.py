"""The pages on the real broker: the reset wizard asks for a request on a protected group, the request's page shows
the plan and who may decide, approvals go through the view's role checks with CSRF, and the protection card on
the cluster settings page takes hostile patterns and refuses unsafe ones at their field."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from changes.models import ChangeRequest, Protection
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def _carried(body: str) -> dict[str, list[str]]:
    form = body.split('id="reset-execute"')[1].split("</form>")[0]
    carried: dict[str, list[str]] = {}
    for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form):
        if name != "csrfmiddlewaretoken":
            carried.setdefault(html.unescape(name), []).append(html.unescape(value))
    return carried


def _ask_for_reset(client, group: str, topic: str):
    preview = client.post(reverse("offsets:reset", args=["local", group]),
                          {"scope": "chosen", "topic": topic, "strategy": "to-offset", "offset": "2"})
    body = preview.content.decode()
    assert preview.status_code == 200 and 'id="protected-note"' in body and "Ask for approval" in body
    execute = {**_carried(body), "reason": ["rewind after the bad deploy"], "confirm": [group]}
    return client.post(reverse("offsets:reset-execute", args=["local", group]), execute)


def test_a_reset_asked_on_a_protected_group_is_approved_by_another_operator(
        protect, group_with_commits, operator, second_operator, client_for):
    group, topic = group_with_commits["group"], group_with_commits["topic"]
    protect()
    client = client_for(operator)

    asked = _ask_for_reset(client, group, topic)

    change = ChangeRequest.objects.get()
    assert asked.status_code == 302 and asked.headers["Location"] == reverse("changes:detail", args=[change.pk])
    assert _committed(group) == {PartitionRef(topic, 0): 4, PartitionRef(topic, 1): 6}
    mine = client.get(asked.headers["Location"]).content.decode()
    assert html.escape(group) in mine and group not in mine  # the name's markup is text
    assert 'id="approve-form"' not in mine and "your own request" in mine and 'id="reject-form"' in mine
    assert client.post(reverse("changes:approve", args=[change.pk])).status_code == 403
    listing = client.get(reverse("changes:list")).content.decode()
    assert f'href="{reverse("changes:detail", args=[change.pk])}"' in listing and "0 of 1" in listing

    other = client_for(second_operator)
    theirs = other.get(reverse("changes:detail", args=[change.pk])).content.decode()
    assert 'id="approve-form"' in theirs and "Approve and execute" in theirs
    assert 'id="break-glass-form"' not in theirs  # operators do not break the glass
    done = other.post(reverse("changes:approve", args=[change.pk]), {"reason": "looked at the plan"})

    assert done.status_code == 302
    assert _committed(group) == {PartitionRef(topic, 0): 2, PartitionRef(topic, 1): 2}
    change.refresh_from_db()
    assert change.status == "executed"
    page = other.get(reverse("changes:detail", args=[change.pk])).content.decode()
    assert "group.offsets.reset" in page and 'id="change-trail"' in page and 'id="approve-form"' not in page


def test_approving_needs_the_csrf_token(protect, group_with_commits, operator, second_operator, actor_of):
    from changes.actions.offsets import RESET, reset_kwargs
    from changes.services import change_request_create
    from offsets.kinds import CONSUMER
    from offsets.resets.planning import ALL_TOPICS, ToEarliest

    protect()
    change = change_request_create(actor=actor_of(operator), action=RESET, cluster="local", reason="r",
                                   kwargs=reset_kwargs(group=group_with_commits["group"], kind=CONSUMER,
                                                       scope=ALL_TOPICS, strategy=ToEarliest()))
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(second_operator)
    assert strict.post(reverse("changes:approve", args=[change.pk])).status_code == 403
    change.refresh_from_db()
    assert change.status == "pending" and not change.approvals.exists()


def test_the_protection_card_on_the_cluster_settings_page(client_for, admin, operator, local_cluster):
    client = client_for(admin)
    settings_page = client.get(reverse("clusters:edit", args=["local"])).content.decode()
    assert f'hx-get="{reverse("protection:edit", args=["local"])}"' in settings_page
    as_operator = Client()
    as_operator.force_login(operator)
    assert as_operator.get(reverse("protection:edit", args=["local"])).status_code == 403

    hostile = "pay/ments #1 %'\"<b>ü*\nre:orders-(eu|us)"
    saved = client.post(reverse("protection:edit", args=["local"]),
                        {"topic_patterns": hostile, "group_patterns": "", "reason": "prod"})
    assert saved.status_code == 302
    protection = Protection.objects.get(cluster="local")
    assert not protection.whole_cluster
    assert protection.topic_patterns == ["pay/ments #1 %'\"<b>ü*", "re:orders-(eu|us)"]
    card = client.get(reverse("protection:edit", args=["local"]), headers={"HX-Request": "true"}).content.decode()
    assert 'id="protection-card"' in card and "<html" not in card
    assert "&lt;b&gt;" in card and "<b>" not in card

    refused = client.post(reverse("protection:edit", args=["local"]),
                          {"group_patterns": "re:(a+)+", "reason": "prod"}, headers={"HX-Request": "true"})
    assert refused.status_code == 400 and "nested repetition" in refused.content.decode()
    assert Protection.objects.get(cluster="local").group_patterns == []


def test_a_topic_delete_on_a_protected_topic_asks_instead(protect, topic_factory, admin, client_for):
    topic = topic_factory("orders-eu")
    protect(whole_cluster=False, topic_patterns=["orders-*"])
    client = client_for(admin)

    asked = client.post(reverse("topics:delete", args=["local", topic]), {"confirm": topic, "reason": "retired"})

    change = ChangeRequest.objects.get()
    assert asked.status_code == 302 and change.action == "topic.delete" and change.target == f"topic:{topic}"
    assert cluster_admin("local").describe_topics([topic])[topic].partition_count == 1
    page = client.get(reverse("changes:detail", args=[change.pk])).content.decode()
    assert "topic_id" in page and 'id="break-glass-form"' in page
