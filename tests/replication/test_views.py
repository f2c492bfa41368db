"""The replication page on the single local broker: what it shows, and the refusals that change nothing."""

from __future__ import annotations

import pytest

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
HX = {"HX-Request": "true"}


def test_page_and_previews_refuse_what_cannot_be_done(local_cluster, topic_factory, client_for, viewer, admin):
    topic = topic_factory(partitions=2)
    page = client_for(viewer).get("/clusters/local/replication/").content.decode()
    assert "Leaders that are not preferred (0)" in page and "Reassign a topic" not in page

    client = client_for(admin)
    assert "Reassign a topic" in client.get("/clusters/local/replication/").content.decode()
    preview = client.post("/clusters/local/replication/reassign/preview/",
                          {"topic": topic, "assignment": "0=1;1=1"}, headers=HX)
    assert preview.status_code == 400 and "nothing to move" in preview.content.decode()
    unknown = client.post("/clusters/local/replication/reassign/preview/",
                          {"topic": topic, "assignment": "0=7"}, headers=HX)
    assert unknown.status_code == 400 and "Broker 7 is not one of the cluster&#x27;s brokers (1)" in unknown.content.decode()
    both = client.post("/clusters/local/replication/reassign/preview/",
                       {"topic": topic, "assignment": "0=1", "replication_factor": 1}, headers=HX)
    assert both.status_code == 400 and "either an assignment or a replication factor" in both.content.decode()
    too_many = client.post("/clusters/local/replication/reassign/preview/",
                           {"topic": topic, "replication_factor": 2}, headers=HX)
    assert too_many.status_code == 400 and "between 1 and the 1 live brokers" in too_many.content.decode()
    elect = client.post("/clusters/local/replication/elect/", {"topic": topic, "reason": "r"}, headers=HX)
    assert elect.status_code == 400 and "already led by its preferred replica" in elect.content.decode()
    cancel = client.post("/clusters/local/replication/reassign/cancel/", {"topic": topic, "reason": "r"}, headers=HX)
    assert cancel.status_code == 400 and "No reassignment" in cancel.content.decode()
    assert AuditEvent.objects.count() == 0

    brokers = client.get("/clusters/local/brokers/").content.decode()
    assert "Active controller (KRaft quorum leader): 1" in brokers and "DOWN" not in brokers
