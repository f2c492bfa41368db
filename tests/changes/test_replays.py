"""Four-eyes replays into a topic, on the real broker: into a protected topic the shell and the API ask for a
request (its range pinned to the offsets resolved when asked) and queue nothing; the service refuses outside a
request; the requester cannot approve; another operator's approval submits the replay exactly as asked. Spark is
not started: the job is recorded and queued by replay_submit, which the replay tests of sparkjobs/ run through."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from changes.guard import ChangeRequestRequired
from changes.models import ChangeRequest
from changes.services import change_request_approve
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.errors import PermissionRefused
from sparkjobs.models import ReplayJob
from sparkjobs.services import replay_submit

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def source_and_destination(topic_factory, produce):
    """A 2-partition source with 5 records on each partition, and an empty destination topic."""
    source = topic_factory("fe-replay-src", partitions=2)
    produce(source, [(p, None, f"r{i}".encode(), None) for p in (0, 1) for i in range(5)])
    return source, topic_factory("fe-replay-dest")


def test_a_replay_into_a_protected_topic_is_asked_then_submitted_as_asked(
        protect, source_and_destination, produce, operator, second_operator, actor_of):
    source, destination = source_and_destination
    protect(whole_cluster=False, topic_patterns=[destination])
    out = StringIO()

    call_command("replay", "--topic", source, "--start", "earliest", "--sink", f"topic:{destination}", "--actor",
                 operator.username, "--reason", "refill the new consumer's topic", stdout=out)

    request = ChangeRequest.objects.get()
    assert f"changes approve {request.pk}" in out.getvalue()
    assert (request.action, request.target, request.cluster) == ("replay.run", f"topic:{destination}", "local")
    assert request.kwargs["start"] == "offsets:0=0,1=0" and request.kwargs["end"] == "offsets:0=5,1=5"
    assert request.plan["planned_records"] == 10 and request.kwargs["asked"] == {"start": "earliest",
                                                                                 "end": "latest"}
    assert not ReplayJob.objects.exists()

    # Reached another way (a script, an MCP tool), the service refuses, audited, and queues nothing.
    with pytest.raises(ChangeRequestRequired):
        replay_submit(actor=actor_of(operator), cluster="local", topic=source, partitions=None, start="earliest",
                      end="latest", sink="topic", sink_topic=destination, reason="sneak")
    assert AuditEvent.objects.filter(action="replay.run", outcome="refused", target=f"topic:{destination}").exists()
    assert not ReplayJob.objects.exists()

    with pytest.raises(PermissionRefused):
        change_request_approve(actor=actor_of(operator), request_id=request.pk, reason="mine")

    # Records written while the request waits are not part of what was asked.
    produce(source, [(0, None, b"later", None)])
    change_request_approve(actor=actor_of(second_operator), request_id=request.pk, reason="plan checked")

    request.refresh_from_db()
    job = ReplayJob.objects.get()
    assert request.status == "executed" and request.result["job"] == job.pk
    assert job.ranges == {"0": [0, 5], "1": [0, 5]} and job.planned_records == 10
    assert (job.sink, job.sink_topic, job.topic, job.created_by) == ("topic", destination, source, second_operator)


def test_a_replay_into_a_topic_the_patterns_leave_out_is_submitted_at_once(
        protect, source_and_destination, topic_factory, operator, actor_of):
    source, destination = source_and_destination
    protect(whole_cluster=False, topic_patterns=[destination])
    elsewhere = topic_factory("fe-replay-free")

    job = replay_submit(actor=actor_of(operator), cluster="local", topic=source, partitions=None, start="earliest",
                        end="latest", sink="topic", sink_topic=elsewhere, reason="not protected")

    assert job.sink_topic == elsewhere and not ChangeRequest.objects.exists()


def test_the_api_answers_202_with_the_request(protect, source_and_destination, operator, client):
    from console.tokens.services import token_create
    from tests.api.conftest import Api

    source, destination = source_and_destination
    protect()
    _, secret = token_create(actor=Actor(user=operator, source="web"), name="ops", role=Role.OPERATOR,
                             expires_days=1)

    answer = Api(client, secret).post("/clusters/local/replays", {
        "topic": source, "start": "earliest", "sink": "topic", "sink_topic": destination, "reason": "refill"})

    assert answer.status_code == 202, answer.content
    assert answer.json()["id"] == ChangeRequest.objects.get().pk and not ReplayJob.objects.exists()
